"""`ihbench sid`: semantic interruption detection: FIR, IRL, APT."""
from __future__ import annotations

import argparse
import sys


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import key_value, number, path, whole, model_name

    sid = add("sid", help="semantic interruption detection: FIR, IRL, APT")
    sid.add_argument("--data", required=True, help="dataset directory with sid_* configs, or a SID-Bench folder")
    sid.add_argument("--config", type=model_name(), default="sid_en", help="sid_en, sid_zh, sid_noise, ... (default sid_en)")
    sid.add_argument("--out", required=True, type=path("folder"),
                     help="run folder for predictions.jsonl, summary.json and plots")
    source = sid.add_mutually_exclusive_group(required=True)
    source.add_argument("--detector", help="silero-vad, energy or audio-llm")
    source.add_argument("--predictions", type=path("file"), help="score a prediction file in SID's jsonl format")
    sid.add_argument("--hop", type=whole(min=1), help="audio-llm: ms between growing prefixes")
    sid.add_argument("--model", help="audio-llm: loader name (see `ihbench models`)")
    sid.add_argument("--model-path", type=model_name(), help="audio-llm: model path")
    sid.add_argument("--option", action="append", type=key_value(), metavar="KEY=VALUE",
                     help="detector options (threshold, ...)")
    sid.add_argument("--limit", type=whole(min=1), help="first N clips")
    sid.add_argument("--tolerance", type=number(min=0), default=0.05,
                     help="seconds around the true break that count as exact (default 0.05, as SID-Bench)")
    sid.set_defaults(func=main)
    return sid


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.outputs import check_output_path
    from ihbench.cli.common import INCOMPLETE
    from ihbench.dataset.errors import UsageError
    from ihbench.sid.run_sid import SidClipsFailed, run_sid

    check_output_path(args.out, "--out", may_be=("sid",))
    llm_flags = [flag for flag, value in (("--hop", args.hop), ("--model", args.model),
                                          ("--model-path", args.model_path)) if value is not None]
    if llm_flags and args.detector != "audio-llm":
        raise UsageError(f"{llm_flags[0]}: only for --detector audio-llm"
                         + (f", not {args.detector}" if args.detector else " (a prediction file has no model)"))
    if args.detector == "audio-llm" and not (args.model and args.model_path) and "loader" not in dict(args.option or ()):
        raise UsageError("--detector audio-llm needs --model (a loader, see `ihbench models`) and --model-path")
    options = dict(args.option or ())
    if args.hop is not None:
        options["hop_ms"] = args.hop
    if args.model:
        options.update(loader=args.model, model_path=args.model_path)
    try:
        summary = run_sid(args.data, args.config, args.out, detector=args.detector, predictions_file=args.predictions,
                          options=options, limit=args.limit, tolerance=args.tolerance, progress=not args.quiet)
    except SidClipsFailed as failure:  # the item-failure exit, as run and judge: 1, with what failed
        print(f"ihbench sid: error: {failure}", file=sys.stderr)
        return INCOMPLETE
    for definition, score in summary["scores"].items():
        irl = "–" if score["irl"] is None else f"{_figure(score['irl'])} s"
        fir = "–" if score["fir"] is None else _figure(score["fir"])
        print(f"{definition:9s} FIR {fir}  IRL {irl}  APT {_figure(score['apt'])} s  ({score['n_clips']} clips)")
    if summary["real_time_factor"] is not None:
        print(f"real-time factor {summary['real_time_factor']:.4f}; model calls per clip "
              f"{summary['model_calls_per_clip']:.2f}")
    print(f"wrote {args.out}/predictions.jsonl, summary.json, timing_errors.png")
    return 0


def _figure(value: float) -> str:
    """Three decimals, as SID-Bench prints them; a figure too large for that (never from clips whose
    times were checked on reading) in a few significant digits rather than a line of them."""
    return f"{value:.3f}" if abs(value) < 1e6 else f"{value:.4g}"
