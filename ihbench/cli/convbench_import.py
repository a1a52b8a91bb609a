"""`ihbench convbench-import`: a ConversationBench-style benchmark added to a dataset directory."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import folder_name, path

    command = add("convbench-import", help="add a ConversationBench-style benchmark (published folder or Hub "
                                           "layout) to a dataset directory, without running any of its files")
    command.add_argument("source", type=path(exists=True),
                         help="benchmark folder (turns.py, tools.py, system.py, config.py, data/knowledge_base.txt), "
                              "or a Hub folder or file (metadata.jsonl, benchmark/turns.json)")
    command.add_argument("--out", required=True, type=path("folder"),
                         help="dataset directory (configs NAME and NAME_setup, split test)")
    command.add_argument("--name", help="config name (default: the benchmark's own name)")
    command.add_argument("--setup", type=path("folder", exists=True),
                         help="for a Hub layout: the benchmark folder giving the instruction, tools and mapping")
    command.add_argument("--speaker", type=folder_name(),
                         help="import real_audio/SPEAKER/ instead of audio/ (or that speaker's Hub rows, where they "
                              "have a speaker column); not with --text-only on a benchmark folder")
    command.add_argument("--text-only", action="store_true", help="import without audio (no audio folder needed)")
    command.set_defaults(func=main)
    return command


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.convbench import import_convbench
    from ihbench.dataset.outputs import check_output_path, refuse_inside_source

    refuse_inside_source(args.out, "--out", args.source, "benchmark")
    if args.setup is not None:  # read too: the user's benchmark checkout (battery 43, N1)
        refuse_inside_source(args.out, "--out", args.setup, "--setup benchmark")
    check_output_path(args.out, "--out", may_be=("dataset",))
    from ihbench.dataset.builddir import INFO, BuildDir
    from ihbench.dataset.errors import UsageError

    out = BuildDir(args.out)
    if out.is_build() and not out.holds_a_build():  # a file of that name alone is no dataset (battery 60, G4)
        raise UsageError(f"--out: {args.out}: its {INFO} is not a build's record, so it is no dataset to add to; "
                         "choose another --out")
    result = import_convbench(args.source, args.out, name=args.name, setup=args.setup, speaker=args.speaker,
                              text_only=args.text_only, progress=not args.quiet)
    print(f"imported {result['name']} ({result['turns']} turns, {result['tools']} tools, category mapping "
          f"{result['mapping_version']}, audio: {result['audio']}) into {result['out']} as configs {result['name']} "
          f"and {result['setup']}" + (f", replacing the {result['name']} it held ({result['replaced']})"
                                       if result["replaced"] else ""))
    return 0
