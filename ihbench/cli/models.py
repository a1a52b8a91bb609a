"""`ihbench models`: list the model loaders."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    models = add("models", help="list the model loaders")
    models.set_defaults(func=main)
    return models


def main(args: argparse.Namespace) -> int:
    from ihbench.loaders import available, get

    print(f"{'loader':18s} {'input':11s} {'installed':10s} runs via")
    for name in available():
        loader = get(name)
        missing = loader.missing()
        state = "yes" if not missing else "no: " + ", ".join(missing)
        print(f"{name:18s} {','.join(loader.modalities):11s} {state:10s} {loader.runs_via}")
    print("Models without a loader (e.g. MiMo-Audio) run through `openai` against a server that serves them.")
    return 0

