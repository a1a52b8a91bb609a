"""What each benchmark's run folder gives the cross-benchmark report, and whose model it is.

Three kinds of run are read, each exactly as its own command wrote it:

    ihbench   `ihbench run` + `ihbench judge`: run.json (TF, RQ come from the metric modules)
    sid       `ihbench sid`: summary.json with FIR, IRL, APT under both SID-Bench definitions
    turns     `ihbench turns`: summary.json with "kind": "turns" and the judge-free timing figures

The report never re-scores SID or turn-taking: their commands already computed the figures, so
reading them keeps one implementation of each. Anything else is refused, naming the folder.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import MissingFileError, UsageError

KINDS = ("ihbench", "sid", "turns")
BENCHMARKS = {"ihbench": "IHBench", "sid": "SID-Bench", "turns": "turn-taking"}
A_RUN = {"ihbench": "an IHBench run", "sid": "an SID run", "turns": "a turns run"}  # for messages
SID_DEFINITIONS = ("notebook", "readme")


class RunKindError(UsageError):
    """A folder the cross-benchmark report cannot read as any benchmark's run."""


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    kind: str  # which benchmark's run carries it
    better: Optional[str]  # "higher", "lower", or None when neither direction is better in itself


METRICS = (
    Metric("tf", "TF win rate", "ihbench", "higher"),
    Metric("rq", "RQ pass rate", "ihbench", "higher"),
    Metric("fir", "FIR", "sid", "lower"),
    Metric("irl", "IRL (s)", "sid", "lower"),
    Metric("apt", "APT (s)", "sid", "lower"),
    Metric("response_latency_s", "response latency (s, mean)", "turns", "lower"),
    Metric("stop_latency_s", "stop latency (s, mean)", "turns", "lower"),
    Metric("turn_over_rate", "turn-over rate", "turns", None),
)
TIMING_FIELDS = {"response_latency_s": ("mean", "median", "ci_low", "ci_high", "n"),
                 "stop_latency_s": ("mean", "median", "ci_low", "ci_high", "n"),
                 "turn_over_rate": ("value", "ci_low", "ci_high", "n")}


@dataclass(frozen=True)
class BenchmarkRun:
    path: Path
    kind: str
    recorded_name: Optional[str]  # the model name the run itself records, if any
    record: dict  # run.json of an IHBench run; summary.json of an SID or turns run


def _load_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RunKindError(f"{path}: not valid JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(data, dict):
        raise RunKindError(f"{path}: expected a JSON object")
    return data


def _looks_like_sid(summary: dict) -> bool:
    """`ihbench sid` summaries carry no kind field: they are the ones scored under both definitions."""
    scores = summary.get("scores")
    return isinstance(scores, dict) and set(SID_DEFINITIONS) <= set(scores) and "n_clips" in summary


def read_run(path) -> BenchmarkRun:
    """The run in folder `path`, its kind told by what its command wrote there."""
    path = Path(path)
    if not path.is_dir():
        raise MissingFileError(f"{path}: no such run folder")
    summary_path = path / "summary.json"
    try:
        summary = _load_json(summary_path) if summary_path.is_file() else {}
    except RunKindError:
        if not (path / "run.json").is_file():
            raise
        summary = {}  # an IHBench run with a damaged earlier report: the report rewrites that, not reads it
    kind = summary.get("kind")
    if kind == "turns":
        check_turns_summary(summary, summary_path)
        return BenchmarkRun(path, "turns", _name(summary.get("model_name"), summary_path, "model_name"), summary)
    if kind == "sid" or (kind is None and _looks_like_sid(summary)):
        check_sid_summary(summary, summary_path)
        return BenchmarkRun(path, "sid", _sid_name(summary, summary_path), summary)
    if (path / "run.json").is_file():  # an IHBench run; its summary.json, if any, is an earlier report
        from ..rundir import RunDir

        info = RunDir(path).info()
        return BenchmarkRun(path, "ihbench", _name(info.model_label, path / "run.json", "model_name"), info.to_json())
    if kind is not None and kind != "ihbench":  # "ihbench": a report's summary left without its run.json
        raise RunKindError(f"{path}: a run of unknown kind {kind!r} (summary.json); the report reads IHBench runs "
                           "(run.json), `ihbench sid` and `ihbench turns` output")
    raise RunKindError(f"{path}: not a run the report knows: no run.json (an IHBench run) and no summary.json written "
                       "by `ihbench sid` or `ihbench turns`")


def _name(value, where: Path, field: str) -> Optional[str]:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RunKindError(f"{where}: field {field} must be a string, got {value!r}")
    return value


def _sid_name(summary: dict, where: Path) -> Optional[str]:
    """An explicit model_name; else the audio LLM an `audio-llm` detector ran; else the detector itself
    (silero-vad, energy). A scored prediction file records no model: it needs --model-name."""
    if summary.get("model_name") is not None:
        return _name(summary["model_name"], where, "model_name")
    detector = summary.get("detector") if isinstance(summary.get("detector"), dict) else {}
    model = detector.get("model") if isinstance(detector.get("model"), dict) else {}
    return _name(model.get("model_path") or detector.get("detector"), where, "detector")


def _number(value, where: Path, field: str, *, count: bool = False):
    ok = (isinstance(value, int) and value >= 0) if count else isinstance(value, (int, float))
    if value is not None and (isinstance(value, bool) or not ok):
        wanted = "a count" if count else "a number"
        raise RunKindError(f"{where}: field {field} must be {wanted} or null, got {value!r}")
    return value


def check_turns_summary(summary: dict, where: Path) -> None:
    timing = summary.get("timing")
    if not isinstance(timing, dict):
        raise RunKindError(f"{where}: field timing is missing or not an object (is this `ihbench turns` output?)")
    for figure, fields in TIMING_FIELDS.items():
        entry = timing.get(figure)
        if not isinstance(entry, dict):
            raise RunKindError(f"{where}: field timing.{figure} is missing or not an object")
        for field in fields:
            if field not in entry:
                raise RunKindError(f"{where}: field timing.{figure}.{field} is missing")
            _number(entry[field], where, f"timing.{figure}.{field}", count=field == "n")


def check_sid_summary(summary: dict, where: Path) -> None:
    scores = summary.get("scores")
    for definition in SID_DEFINITIONS:
        entry = scores.get(definition) if isinstance(scores, dict) else None
        if not isinstance(entry, dict):
            raise RunKindError(f"{where}: field scores.{definition} is missing or not an object")
        for field in ("fir", "irl", "apt", "n_clips"):
            if field not in entry:
                raise RunKindError(f"{where}: field scores.{definition}.{field} is missing")
            _number(entry[field], where, f"scores.{definition}.{field}", count=field == "n_clips")


def _cell(value=None, ci_low=None, ci_high=None, n=None, **extra) -> dict:
    return {"value": value, "ci_low": ci_low, "ci_high": ci_high, "n": n, **extra}


def ihbench_cells(run_summary: dict) -> dict[str, dict]:
    """TF and RQ of one IHBench run as `summarize_run` computed them through the metric modules."""
    cells = {}
    for key, field in (("tf", "tf_win_rate"), ("rq", "rq_pass_rate")):
        result = run_summary.get(field)
        cells[key] = _cell() if not result else _cell(result[field], result["ci_low"], result["ci_high"],
                                                      result["n_items"], unit="items")
    return cells


def sid_cells(summary: dict, definition: str) -> dict[str, dict]:
    """SID-Bench reports no interval for FIR, IRL or APT, so none is made up here. n is what each
    figure averages over: all clips (APT; FIR under the notebook rule), the non-break clips (the
    README's FIR), the detections it times (IRL: late hits, or hits within tolerance for the README)."""
    scores = summary["scores"][definition]
    notebook = definition == "notebook"
    fir_n, fir_unit = (scores["n_clips"], "clips") if notebook else (scores.get("n_nonbreak"), "non-break clips")
    irl_n = scores.get("late_hits" if notebook else "hits_within_tolerance")
    return {"fir": _cell(scores["fir"], n=fir_n, unit=fir_unit),
            "irl": _cell(scores["irl"], n=irl_n, unit="detections"),
            "apt": _cell(scores["apt"], n=scores["n_clips"], unit="clips")}


def turns_cells(summary: dict) -> dict[str, dict]:
    timing = summary["timing"]
    cells = {key: _cell(timing[key]["mean"], timing[key]["ci_low"], timing[key]["ci_high"], timing[key]["n"],
                        median=timing[key]["median"], unit="events")
             for key in ("response_latency_s", "stop_latency_s")}
    rate = timing["turn_over_rate"]
    cells["turn_over_rate"] = _cell(rate["value"], rate["ci_low"], rate["ci_high"], rate["n"], unit="events")
    return cells
