"""`ihbench sid`: semantic interruption detection: FIR, IRL, APT."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import count, data_source, key_value, milliseconds, path, model_name, url
    from ihbench.sid.run_sid import TOLERANCE
    from ihbench.sid.sweep import DEFAULT_TIMEOUTS, thresholds_type, timeouts_type

    sid = add("sid", help="semantic interruption detection: FIR, IRL, APT")
    sid.add_argument("--data", type=data_source(),
                     required=True, help="dataset directory with sid_* configs, or a SID-Bench folder")
    sid.add_argument("--config", type=model_name(), default="sid_en", help="sid_en, sid_zh, sid_noise, ... (default sid_en)")
    sid.add_argument("--out", required=True, type=path("folder"),
                     help="run folder for predictions.jsonl, summary.json and plots")
    source = sid.add_mutually_exclusive_group(required=True)
    source.add_argument("--detector", help="silero-vad, energy, audio-llm or smart-turn")
    source.add_argument("--predictions", type=path("file"), help="score a prediction file in SID's jsonl format")
    sid.add_argument("--hop", type=milliseconds(min=1), help="audio-llm: ms between growing prefixes")
    sid.add_argument("--model", help="audio-llm: loader name (see `ihbench models`)")
    sid.add_argument("--model-path", type=model_name(), help="audio-llm: model path")
    sid.add_argument("--base-url", action="append", type=url(),
                     help="audio-llm with --model openai: server URL, e.g. http://gpu-node:8000/v1 (vLLM), as `ihbench "
                          "run --base-url`")
    sid.add_argument("--option", action="append", type=key_value(), metavar="KEY=VALUE",
                     help="detector options, each detector its own (silero-vad and smart-turn: threshold, ...; energy: "
                          "margin_db, floor_dbfs, frame_ms, ...); with audio-llm also the loader's options, as "
                          "`ihbench run --option` (api_key_env, timeout, ...); a key another detector has is refused, "
                          "naming this one's")
    sid.add_argument("--limit", type=count(), help="first N clips")
    sid.add_argument("--clips", type=model_name(), metavar="GLOB",
                     help="only the clips whose file name matches GLOB (e.g. '*flite-slt*')")
    sid.add_argument("--thresholds", type=thresholds_type(), metavar="T1,T2,...",
                     help="smart-turn: sweep these thresholds and the VAD-only timeouts; FIR against APT in sweep.png, "
                          "the operating point beside silero-vad and energy in report.md")
    sid.add_argument("--timeouts", type=timeouts_type(), metavar="S1,S2,...",
                     help="smart-turn sweep: VAD-only silence timeouts in seconds (default "
                          f"{','.join(f'{t:g}' for t in DEFAULT_TIMEOUTS)})")
    sid.add_argument("--tune-on", dest="tune_config", type=model_name(), metavar="CONFIG",
                     help="smart-turn sweep: choose the operating point on this config (default --config with "
                          "--tune-clips); never on the clips it is reported on")
    sid.add_argument("--tune-clips", type=model_name(), metavar="GLOB", help="smart-turn sweep: the tuning clips")
    sid.add_argument("--tune-data", type=path("folder", exists=True), metavar="DIR",
                     help="smart-turn sweep: the dataset of --tune-on (default --data)")
    sid.add_argument("--tolerance", type=TOLERANCE, default=0.05,
                     help="seconds around the true break that count as exact (default 0.05, as SID-Bench)")
    # a detector's clips are recorded one by one (`sid.progress`); a sweep or a prediction file is scored at once
    sid.set_defaults(func=main, resumes=lambda args: bool(args.detector) and not args.thresholds)
    return sid


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.outputs import check_output_path
    from ihbench.cli.common import INCOMPLETE, set_by_flag
    from ihbench.dataset.errors import UsageError
    from ihbench.sid.run_sid import SidClipsFailed, run_sid

    check_output_path(args.out, "--out", may_be=("sid",))
    if args.detector is not None:  # named before an --out of earlier results is compared with it (battery 66, M2:
        from ihbench.sid.detectors import DETECTORS  # '' ended in a traceback there)

        DETECTORS.get(args.detector)
    llm_flags = [flag for flag, value in (("--hop", args.hop), ("--model", args.model),
                                          ("--model-path", args.model_path), ("--base-url", args.base_url))
                 if value is not None]
    if llm_flags and args.detector != "audio-llm":
        raise UsageError(f"{llm_flags[0]}: only for --detector audio-llm"
                         + (f", not {args.detector}" if args.detector else " (a prediction file has no model)"))
    if args.detector == "audio-llm" and not (args.model and args.model_path) and "loader" not in dict(args.option or ()):
        raise UsageError("--detector audio-llm needs --model (a loader, see `ihbench models`) and --model-path")
    options = dict(args.option or ())
    if args.hop is not None:
        options["hop_ms"] = args.hop
    if args.model:
        set_by_flag(options, "loader", "--model", args.model)
        set_by_flag(options, "model_path", "--model-path", args.model_path)
    if args.detector == "audio-llm":
        options = _loader_options(options, args.base_url)
    _refuse_replacing_another(args, options.get("model_path"))
    try:
        summary = run_sid(args.data, args.config, args.out, detector=args.detector, predictions_file=args.predictions,
                          options=options, limit=args.limit, tolerance=args.tolerance, progress=not args.quiet,
                          clips=args.clips, thresholds=args.thresholds, timeouts=_timeouts(args),
                          tune_data=args.tune_data, tune_config=args.tune_config, tune_clips=args.tune_clips)
    except SidClipsFailed as failure:  # the item-failure exit, as run and judge: 1, with what failed
        print(f"ihbench sid: error: {failure}", file=sys.stderr)
        return INCOMPLETE
    for definition, score in summary["scores"].items():
        irl = "–" if score["irl"] is None else f"{_figure(score['irl'])} s"
        fir = "–" if score["fir"] is None else _figure(score["fir"])
        print(f"{definition:9s} FIR {fir}  IRL {irl}  APT {_figure(score['apt'])} s  ({score['n_clips']} clip(s))")
    if summary["real_time_factor"] is not None:
        print(f"real-time factor {summary['real_time_factor']:.4f}; model calls per clip "
              f"{summary['model_calls_per_clip']:.2f}")
    if "operating_point" in summary:
        print(f"operating point: {summary['operating_point']['chosen_by']}; threshold "
              f"{summary['operating_point']['smart_turn']['threshold']:g}")
        print(f"wrote {args.out}/predictions.jsonl, summary.json, timing_errors.png, sweep.png, report.md")
        return 0
    print(f"wrote {args.out}/predictions.jsonl, summary.json, timing_errors.png")
    return 0


def _refuse_replacing_another(args: argparse.Namespace, model_path) -> None:
    """An --out holding another detector's (or model's, config's, data's) results is not replaced
    without a word; scoring the same again into it is (a rerun)."""
    from ihbench.dataset.argtypes import NoSuchHomeError, expand_home
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.outputs import folder_kind
    from ihbench.summaries import SummaryError, read_summary

    if folder_kind(args.out) != "sid" or not (Path(args.out) / "summary.json").exists():
        return  # not a sid output, or one stopped before its summary: written again
    try:
        earlier = read_summary(Path(args.out) / "summary.json")
    except SummaryError:
        return  # a damaged summary is replaced: it holds no results anyone could read

    def place(value) -> Optional[str]:
        if value is None:
            return None
        try:
            path = expand_home(value)
        except NoSuchHomeError:
            return str(value)
        return str(path.resolve()) if path.exists() else str(value)

    def identity(detector, predictions, model, config, data) -> tuple:
        scored = ("detector", detector) if detector else ("prediction file", place(predictions))
        return (*scored, model, config, place(data))

    detector = earlier.detector or {}
    then = identity(detector.get("detector"), detector.get("predictions_file"),
                    (detector.get("model") or {}).get("model_path"), earlier.config, earlier.data)
    earlier_clips, now_clips = earlier.extra.get("clips"), getattr(args, "clips", None)
    if then == identity(args.detector, args.predictions, model_path, args.config, args.data) and \
            earlier_clips != now_clips:  # another selection of clips would replace these results without a word
        raise UsageError(f"--out: {args.out} holds the results on the clips {earlier_clips or 'all'}; this command "
                         f"scores {now_clips or 'all the clips'} and would replace them: give another --out (or the "
                         "same --clips)")
    if then != identity(args.detector, args.predictions, model_path, args.config, args.data):
        model = f" ({then[2]})" if then[2] else ""
        raise UsageError(f"--out: {args.out} holds the results of the {then[0]} {then[1]}{model} on {then[3]} of "
                         f"{earlier.data}; this command would replace them with another's: give another --out (or "
                         "remove that folder first)")


def _loader_options(options: dict, base_url) -> dict:
    """audio-llm's model is reached the way `ihbench run` reaches it: --base-url, and --option KEY=VALUE
    for the loader's own options (api_key_env, timeout, ...), gathered into the detector's
    `loader_options` and checked now, naming the flag the user typed (the loader's hints name
    --base-url, which sid then has)."""
    from ihbench.cli.common import servers, set_by_flag
    from ihbench.dataset.argtypes import check_all
    from ihbench.dataset.errors import UnknownNameError, UsageError
    from ihbench.loaders import check_options, get
    from ihbench.sid.detectors import AudioLLMDetector

    loader = options.get("loader")
    given = options.get("loader_options", {})
    if not isinstance(loader, str) or not isinstance(given, dict):
        return options  # named by the detector's own check, in its words
    try:
        accepted = set(get(loader).option_names())
    except UnknownNameError:  # an unknown loader: the detector's check names it with the known ones
        return options
    check_all(AudioLLMDetector.option_types, options)  # the detector's own values first (hop_ms=0), as before
    options = dict(options)
    loader_options = dict(given)
    for key in [key for key in options if key in accepted]:
        loader_options[key] = options.pop(key)
    set_by_flag(loader_options, "base_url", "--base-url", servers(base_url))
    from_json = {key for key in given if loader_options[key] is given[key]}  # not replaced by a flag
    try:
        options["loader_options"] = check_options(loader, loader_options,
                                                  flags={"base_url": "--base-url"} if base_url else None)
    except UsageError as error:  # a value from the JSON of --option loader_options is named inside it
        if any(str(error).startswith(f"--option {key}:") for key in from_json):
            raise UsageError(f"--option loader_options: {error}") from None
        raise
    return options


def _timeouts(args: argparse.Namespace):
    """The default timeouts only for a sweep: alone, --timeouts is refused as a flag without one."""
    from ihbench.sid.sweep import DEFAULT_TIMEOUTS

    if args.timeouts is None and args.thresholds is not None:
        return list(DEFAULT_TIMEOUTS)
    return args.timeouts


def _figure(value: float) -> str:
    """Three decimals, as SID-Bench prints them; a figure too large for that (never from clips whose
    times were checked on reading) in a few significant digits rather than a line of them."""
    return f"{value:.3f}" if abs(value) < 1e6 else f"{value:.4g}"
