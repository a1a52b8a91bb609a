"""`ihbench set-baseline`: one epoch of a run's responses as the baselines of a copy of its dataset."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source, epoch, path

    rebase = add("set-baseline", help="make one epoch of a run's responses the baselines of a copy of its dataset")
    rebase.add_argument("run", type=path("folder"), help="run directory that covered every point of --data")
    rebase.add_argument("--data", type=data_source(), required=True, help="the built dataset folder the run used")
    rebase.add_argument("--out", required=True, type=path("folder"),
                        help="new dataset folder to write (must not exist)")
    rebase.add_argument("--epoch", type=epoch(), default=0, help="which epoch's responses to use (default 0)")
    rebase.set_defaults(func=main)
    return rebase


def main(args: argparse.Namespace) -> int:
    from ihbench.baselines import set_baseline
    from ihbench.dataset.outputs import check_output_path

    check_output_path(args.out, "--out")
    out = set_baseline(args.run, args.data, args.out, epoch=args.epoch)
    print(f"wrote {out}: the baselines are now epoch {args.epoch} of {args.run} (see its README.md)")
    return 0

