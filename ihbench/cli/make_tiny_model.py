"""`ihbench make-tiny-model`: a random-weight model of a real architecture, for smoke tests."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import path, seed

    tiny = add("make-tiny-model", help="random-weight model of a real architecture, for smoke tests")
    from ihbench.loaders.tiny import FAMILIES as TINY_FAMILIES

    tiny.add_argument("family", choices=TINY_FAMILIES, metavar="FAMILY",
                      help=f"model family: {', '.join(TINY_FAMILIES)} (gemma4-unified is the 12B, run with --model gemma4)")
    tiny.add_argument("--out", required=True, type=path("folder"),
                      help="folder to write the model, tokenizer and processor to (a model this command made "
                           "there before is made again with the same FAMILY and --seed; another is refused)")
    tiny.add_argument("--seed", type=seed(), default=0, help="seed of the random weights (default 0)")
    tiny.set_defaults(func=main)
    return tiny


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.outputs import check_output_path
    from ihbench.loaders.tiny import make_tiny_model

    check_output_path(args.out, "--out", may_be=("tiny-model",))  # its own earlier model is replaced
    path = make_tiny_model(args.family, args.out, seed=args.seed)
    print(f"tiny random-weight {args.family} written to {path}")
    return 0

