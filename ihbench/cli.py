"""`ihbench` command line: thin wrappers over the packages, one function per subcommand."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence


def _verify(args: argparse.Namespace) -> int:
    from ihbench_dataset.verify import verify_paths

    report = verify_paths(args.paths or None, check_audio=not args.no_audio)
    for note in report.notes:
        print(f"note: {note}")
    for problem in report.problems:
        print(problem, file=sys.stderr)
    points = sum(len(c.interrupted_turns) for c in report.conversations)
    status = "OK" if report.ok else f"{len(report.problems)} problem(s)"
    print(f"{status}: {len(report.conversations)} conversation(s), {points} interruption point(s) checked")
    return 0 if report.ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ihbench", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    verify = commands.add_parser("verify", help="check in-house conversation sources")
    verify.add_argument("paths", nargs="*", help="JSON files or folders (default: the shipped dev set)")
    verify.add_argument("--no-audio", action="store_true", help="skip checking referenced recordings")
    verify.set_defaults(func=_verify)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from ihbench_dataset.audio import AudioError
    from ihbench_dataset.load import DataSourceError
    from ihbench_dataset.sources import SourceError
    from ihbench_dataset.wide import SchemaError

    try:
        return args.func(args)
    except (SourceError, SchemaError, DataSourceError, AudioError) as error:
        print(f"ihbench {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
