"""`ihbench sid-import`: SID-Bench (as downloaded) added to a dataset directory."""
from __future__ import annotations

import argparse

from .common import notes


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import path

    sid_import = add("sid-import", help="add SID-Bench (as downloaded) to a dataset directory")
    sid_import.add_argument("folder", type=path("folder"), help="SID-Bench folder (test_wavs/*.jsonl and WAV folders)")
    sid_import.add_argument("--out", required=True, type=path("folder"),
                            help="dataset directory (configs sid_en/zh/noise)")
    sid_import.set_defaults(func=main)
    return sid_import


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.outputs import check_output_path, refuse_inside_source
    from ihbench.dataset.sid import import_sid

    refuse_inside_source(args.out, "--out", args.folder, "SID-Bench folder")
    check_output_path(args.out, "--out", may_be=("dataset",))
    result = import_sid(args.folder, args.out, progress=not args.quiet)
    notes(args, result.get("notes", []))
    counts = ", ".join(f"{name} ({n} clip(s))" for name, n in result["configs"].items())
    replaced = result.get("replaced") or []
    print(f"imported {counts} into {result['out']}" +
          (f", replacing the {', '.join(replaced)} it held (imported before)" if replaced else ""))
    return 0

