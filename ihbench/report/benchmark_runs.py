"""What each benchmark's run folder gives the cross-benchmark report, and whose model it is.

Three kinds of run are read, each exactly as its own command wrote it:

    ihbench   `ihbench run` + `ihbench judge`: run.json (TF, RQ come from the metric modules)
    sid       `ihbench sid`: summary.json of kind "sid" (`SidSummary`), FIR, IRL, APT under both
              SID-Bench definitions
    turns     `ihbench turns`: summary.json of kind "turns" (`TurnsSummary`), the judge-free timing figures

A folder with a run.json is an IHBench run; any other is what its summary.json's kind says
(`ihbench.summaries`, which also knows the SID summaries written before `kind` existed).

The report never re-scores SID or turn-taking: their commands already computed the figures, so
reading them keeps one implementation of each. Anything else is refused, naming the folder.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ihbench.dataset.errors import MissingFileError, UsageError
from ihbench.dataset.io.regular import check_regular

from ..convbench.judge.source import ConvSource, is_reference_run, open_source
from ..records import RunInfo
from ..rundir import RunDir
from ..summaries import SidSummary, TurnsSummary, UnknownSummaryKind, read_summary, unsealed_file

BENCHMARKS = {"ihbench": "IHBench", "sid": "SID-Bench", "turns": "turn-taking", "convbench": "ConversationBench"}
A_RUN = {"ihbench": "an IHBench run", "sid": "an SID run", "turns": "a turns run",
         "convbench": "a ConversationBench run"}  # for messages


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
    Metric("convbench_pass_rows", "ConvBench pass rows", "convbench", "higher"),
    Metric("convbench_tool_use", "ConvBench tool use", "convbench", "higher"),
    Metric("convbench_instruction_following", "ConvBench instruction following", "convbench", "higher"),
    Metric("convbench_kb_grounding", "ConvBench KB grounding", "convbench", "higher"),
    Metric("convbench_state_tracking", "ConvBench state tracking", "convbench", "higher"),
)


@dataclass(frozen=True)
class BenchmarkRun:
    path: Path
    kind: str
    recorded_name: Optional[str]  # the model name the run itself records, if any
    #: run.json of an IHBench run; the conversations of a ConversationBench run; summary.json of the others
    record: Union[RunInfo, ConvSource, SidSummary, TurnsSummary]


def read_run(path) -> BenchmarkRun:
    """The run in folder `path`: an IHBench run by its run.json (a summary.json beside it is an earlier
    report, never read), any other by the kind of its summary.json."""
    path = Path(path)
    if not path.is_dir():
        raise MissingFileError(f"{path}: no such run folder")
    run = RunDir(path)
    if run.exists():
        info = run.info()
        if info.convbench is not None:
            return BenchmarkRun(path, "convbench", info.model_label or None, open_source(path))
        return BenchmarkRun(path, "ihbench", info.model_label or None, info)
    if is_reference_run(path):  # the reference harness's folder, judged with --data/--config
        source = open_source(path)
        return BenchmarkRun(path, "convbench", source.model, source)
    if run.responses_path.is_file():  # its answers are here: an IHBench run whose run.json is gone, not a report
        raise MissingFileError(f"{run.info_path}: missing ({path} holds a run's "
                               f"{run.responses_path.name}); put it back: it records the model and data the answers "
                               "are of")
    # a summary.json that is a folder or a loop is a damaged output, said as such (battery 61, H17: "no summary.json")
    check_regular(run.summary_path, "the summary.json `ihbench sid` or `ihbench turns` writes", RunKindError)
    try:
        summary = read_summary(run.summary_path) if run.summary_path.is_file() else None
    except UnknownSummaryKind as error:
        if error.kind is not None:
            raise RunKindError(f"{path}: a run of unknown kind {error.kind!r} (summary.json); the report reads IHBench "
                               "runs (run.json), `ihbench sid` and `ihbench turns` output") from None
        summary = None
    if isinstance(summary, SidSummary):
        _check_predictions(path, summary)
    if isinstance(summary, TurnsSummary):
        problem = unsealed_file(summary, path)  # a recording's events gone or edited since the figures were made
        if problem:
            raise RunKindError(problem)
    if isinstance(summary, (SidSummary, TurnsSummary)):
        return BenchmarkRun(path, summary.kind, summary.model_label, summary)
    if summary is not None:  # a report's summary: ihbench's without its run.json, or a cross-benchmark one
        raise RunKindError(f"{path}: holds a report (summary.json of kind {summary.kind!r}), not a run; give the run "
                           "folders it reports on")
    raise RunKindError(f"{path}: not a run the report knows: no run.json (an IHBench run) and no summary.json written "
                       "by `ihbench sid` or `ihbench turns`")


def _check_predictions(path: Path, summary: SidSummary) -> None:
    """The predictions a SID summary scored, beside it: a file cut short (or of another selection) is
    refused, a missing one said, since the report reads the scores without scoring them again."""
    import logging

    from ihbench.dataset.io import json_lines

    file = path / "predictions.jsonl"
    if not file.is_file():
        problem = unsealed_file(summary, path)  # sealed: refused; written before seals were: said
        if problem:
            raise RunKindError(problem)
        logging.getLogger("ihbench").warning("%s: missing; the scores of %s are read from its summary.json unchecked",
                                             file, path)
        return
    rows = sum(1 for _ in json_lines(file, RunKindError))
    if summary.n_clips is not None and rows != summary.n_clips:
        raise RunKindError(f"{file}: {rows} prediction(s), but {path / 'summary.json'} scores {summary.n_clips} "
                           "clips: the files were edited or cut; `ihbench sid` writes them again")
    problem = unsealed_file(summary, path)
    if problem:
        raise RunKindError(problem)


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


def sid_cells(summary: SidSummary, definition: str) -> dict[str, dict]:
    """SID-Bench reports no interval for FIR, IRL or APT, so none is made up here. n is what each
    figure averages over: all clips (APT; FIR under the notebook rule), the non-break clips (the
    README's FIR), the detections it times (IRL: late hits, or hits within tolerance for the README)."""
    scores = summary.scores[definition]
    notebook = definition == "notebook"
    fir_n, fir_unit = (scores.n_clips, "clips") if notebook else (scores.n_nonbreak, "non-break clips")
    irl_n = scores.late_hits if notebook else scores.hits_within_tolerance
    return {"fir": _cell(scores.fir, n=fir_n, unit=fir_unit),
            "irl": _cell(scores.irl, n=irl_n, unit="detections"),
            "apt": _cell(scores.apt, n=scores.n_clips, unit="clips")}


def turns_cells(summary: TurnsSummary) -> dict[str, dict]:
    timing = summary.timing
    cells = {key: _cell(figure.mean, figure.ci_low, figure.ci_high, figure.n, median=figure.median, unit="events")
             for key, figure in (("response_latency_s", timing.response_latency_s),
                                 ("stop_latency_s", timing.stop_latency_s))}
    rate = timing.turn_over_rate
    # the barge-ins behind the rate: a talk-over is no yield (null from a summary that did not count them)
    cells["turn_over_rate"] = _cell(rate.value, rate.ci_low, rate.ci_high, rate.n, unit="events",
                                    talk_overs=timing.talk_overs)
    return cells


def convbench_cells(summary: dict) -> dict[str, dict]:
    """Pass rows and the core dimensions (applicable turns) of one ConversationBench run, as
    `summarize_convbench` computed them through the metric module; Wilson intervals, n in turns."""
    scores = summary.get("scores")
    cells = {}
    for key, source in (("convbench_pass_rows", None), ("convbench_tool_use", "tool_use_correct"),
                        ("convbench_instruction_following", "instruction_following"),
                        ("convbench_kb_grounding", "kb_grounding"), ("convbench_state_tracking", "state_tracking")):
        cell = None if not scores else scores["pass_rows"] if source is None else \
            scores["per_dimension"].get(source, {}).get("applicable")
        cells[key] = _cell() if not cell or cell.get("rate") is None else \
            _cell(cell["rate"], cell["ci_low"], cell["ci_high"], cell["n"], unit="turns")
    return cells
