"""The `ihbench turns` command: its options and the function the CLI calls."""
from __future__ import annotations

import argparse
import sys

from .common import notes


def add_parser(add) -> argparse.ArgumentParser:
    """`add(name, **kw)`: the CLI's subcommand factory (it adds the common options such as --quiet)."""
    from ihbench.dataset.argtypes import model_name, path

    p = add("turns", help="turn-taking events, statistics and timing from two-channel recordings (Talking Turns)")
    p.add_argument("audio", nargs="+", type=path("file"), metavar="AUDIO",
                   help="stereo files (channel 0 the AI system, channel 1 the user), or with --pair mono files "
                   "two by two (AI, user)")
    p.add_argument("--pair", action="store_true", help="AUDIO are mono files in pairs: the AI's, then the user's")
    p.add_argument("--swap", action="store_true", help="the user comes first (channel 0, or the first file of a pair)")
    p.add_argument("--transcripts", type=path("file"), metavar="FILE",
                   help="JSON lines with word timings per recording and channel, to find backchannels by word "
                   "(see the README); without it a short IPU inside the other's speech is a backchannel")
    p.add_argument("--judge-likelihoods", type=path("file"), metavar="FILE",
                   help="a turn-taking judge's likelihoods per 40 ms chunk (C, NA, I, BC, T): .npz keyed by "
                   "recording, .npy for one recording, or .jsonl; adds the five agreement metrics")
    p.add_argument("--judge", choices=("smart-turn",),
                   help="smart-turn: Smart Turn v3.2 (from pipecat-ai) judges the turn change at each pause: the "
                   "speak-up and convey-turn agreement; the other metrics are reported as not covered")
    p.add_argument("--model-name", type=model_name(), metavar="NAME", help="name of the AI system recorded, for `ihbench report` (default: none)")
    p.add_argument("--out", required=True, type=path("folder"), metavar="DIR",
                   help="output folder: summary.json and per recording events.json and timeline.png")
    p.set_defaults(func=main, resumes=True, stopped=_stopped)
    return p


def _stopped(args) -> str:
    """What a stopped `turns` kept: the recordings whose events.json it wrote (none, early on)."""
    from pathlib import Path

    done = len(list(Path(args.out).glob("*/events.json"))) if Path(args.out).is_dir() else 0
    if not done:
        return "no recording was finished, so nothing of them was written; the same command starts again"
    return f"the {done} recording(s) analysed are kept, and the same command goes on from there"


def _mean(figure: dict, unit: str = " s") -> str:
    if not figure["n"]:
        return "none"
    interval = "" if figure["ci_low"] is None else f" [{figure['ci_low']:.3f}, {figure['ci_high']:.3f}]"
    return f"mean {figure['mean']:.3f}{unit}{interval}, median {figure['median']:.3f}{unit} (n={figure['n']})"


def _refuse_replacing_another_model(args: argparse.Namespace) -> None:
    """An --out holding another AI system's turns results is not replaced without a word (as `ihbench
    sid` keeps another detector's); the same system's again is a rerun."""
    from pathlib import Path

    from ihbench.dataset.errors import UsageError
    from ihbench.summaries import SummaryError, SummaryFileError, read_summary

    path = Path(args.out) / "summary.json"
    if not path.is_file():
        return
    try:
        earlier = read_summary(path)
    except (SummaryError, SummaryFileError):
        return  # a damaged summary holds no results anyone could read
    if getattr(earlier, "kind", None) == "turns" and earlier.model_name != args.model_name:
        raise UsageError(f"--out: {args.out} holds the turns results of {earlier.model_name or 'an unnamed system'}; "
                         f"this command would replace them with {args.model_name or 'an unnamed system'}'s: give "
                         "another --out (or remove that folder first)")


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.outputs import check_output_path
    from ihbench.turns.run import agreement_lines, run_turns

    if args.judge and args.judge_likelihoods:
        raise UsageError("--judge and --judge-likelihoods: give one judge, not both")
    check_output_path(args.out, "--out", may_be=("turns",))
    _refuse_replacing_another_model(args)
    summary = run_turns(args.audio, args.out, pair=args.pair, swap=args.swap, transcripts=args.transcripts,
                        judge_likelihoods=args.judge_likelihoods, judge=args.judge, model_name=args.model_name,
                        progress=not args.quiet, command=["ihbench", *sys.argv[1:]])
    notes(args, summary["notes"])
    timing = summary["timing"]
    rate = timing["turn_over_rate"]
    print(f"{summary['recordings']} recording(s), {summary['duration_s'] / 60:.1f} min of audio "
          f"(real-time factor {summary['real_time_factor']:.3f})")
    print(f"response latency: {_mean(timing['response_latency_s'])}")
    print(f"stop latency after a user barge-in (yields only): {_mean(timing['stop_latency_s'])}")
    print("turn-over rate on user barge-ins: " + ("none" if not rate["n"] else
          f"{rate['value']:.3f} [{rate['ci_low']:.3f}, {rate['ci_high']:.3f}] (n={rate['n']})"))
    print(f"talk-overs (the AI kept speaking over a barge-in; no stop latency): {timing['talk_overs']}")
    if summary["agreement"]:
        for line in agreement_lines(summary["agreement"]):
            print(line)
    print(f"wrote {args.out}/summary.json and events.json + timeline.png per recording")
    return 0

