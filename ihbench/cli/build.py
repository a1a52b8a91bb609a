"""`ihbench build`: render audio and write the in-house dataset directory."""
from __future__ import annotations

import argparse
import sys

from .common import notes


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import noise_clips, path

    build = add("build", help="render audio and write the in-house dataset directory")
    build.add_argument("--sources", nargs="+", type=path(exists=True),
                       help="JSON files or folders (default: the shipped dev set)")
    build.add_argument("--out", required=True, type=path("folder"), help="dataset directory to (re)create")
    build.add_argument("--cache-dir", type=path("folder"),
                       help="cache of TTS renders, duplex mixes and finished configs "
                            "(default: $IHBENCH_CACHE/tts or ~/.cache/ihbench/tts)")
    build.add_argument("--no-sid", action="store_true", help="skip the SID-style configs")
    build.add_argument("--no-convbench", action="store_true",
                       help="skip the in-house ConversationBench-style benchmark (configs convbench_dev, _setup)")
    build.add_argument("--no-duplex", action="store_true",
                       help="skip the `duplex` config (two-channel recordings with turn-taking labels)")
    build.add_argument("--no-reuse", action="store_true",
                       help="make every config again even when its inputs and the code are unchanged "
                            "(by default finished configs are reused from <cache-dir>/configs)")
    build.add_argument("--sid-sources", type=path("file"), help="SID utterances JSON (default: the shipped one)")
    build.add_argument("--sid-noise-clips", type=noise_clips(),
                       help="seeded noise/silence clips (default 90)")
    build.set_defaults(func=main, resumes=True)
    return build


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.build import build
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.outputs import check_output_path

    if args.no_sid:  # options of the SID configs, with them left out: said, not ignored
        given = [flag for flag, value in (("--sid-sources", args.sid_sources), ("--sid-noise-clips",
                                                                                 args.sid_noise_clips)) if value is not None]
        if given:
            raise UsageError(f"{given[0]}: for the SID configs, which --no-sid leaves out; give one or the other")
    if args.sid_noise_clips is None:
        args.sid_noise_clips = 90
    check_output_path(args.out, "--out", may_be=("dataset",))
    result = build(args.out, args.sources or None, cache_dir=args.cache_dir, progress=not args.quiet,
                   sid=not args.no_sid, sid_sources=args.sid_sources, sid_noise_clips=args.sid_noise_clips,
                   duplex=not args.no_duplex, reuse=not args.no_reuse, convbench=[] if args.no_convbench else None)
    notes(args, result.notes)
    for replaced in result.replaced:  # not recorded in the build: said, even with --quiet
        print(f"ihbench build: warning: {replaced}", file=sys.stderr)
    s = result.statistics
    reused = f"; configs of {', '.join(result.reused)} unchanged, reused" if result.reused else ""
    print(f"built {result.out}: {s['conversations']} conversations, {s['interruption_points']} interruption points "
          f"({result.renders} clips rendered, {result.cache_hits} from cache{reused})")
    return 0

