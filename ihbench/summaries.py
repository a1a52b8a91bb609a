"""The four kinds of summary.json as types: what each command writes and what its readers read.

    kind "sid"              `ihbench sid`: FIR, IRL and APT under both SID-Bench definitions   SidSummary
    kind "turns"            `ihbench turns`: timing figures, statistics, agreement             TurnsSummary
    kind "ihbench"          `ihbench report` of IHBench runs: the scores of each run           ReportSummary
    kind "cross_benchmark"  `ihbench report` across benchmarks: one table per model           CrossSummary

Each type knows its shape as the run records of `records.py` do: `from_json` checks a summary
read back and refuses a damaged one naming the field (`read_summary` adds the file), fills in what
older versions did not write and keeps fields it does not know in `extra`; `to_json` is what the
command writes, in the order it always had. Parts a reader only shows, never computes with (turn
statistics and agreement, a report's per-run scores, a cross report's table) stay JSON objects.

Versions (`SUMMARY_FORMAT`): 1, every summary so far; a file without `format_version` reads as 1.
Turns summaries (`TURNS_FORMAT`): 2 when a barge-in the AI talks over stopped counting as a yield
(`timing.talk_overs` counts them; stop latency and turn-over rate are over yields only, speech
boundaries measured on frame energy). A version-1 turns summary reads with `talk_overs` None (not
counted then) and is written back without it.
Two kinds were once written without `kind`: `ihbench sid` summaries and single-benchmark
reports. `summary_kind` is the one place that recognises them.
"""
from __future__ import annotations

import hashlib
import json
import math

from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar, Optional, Sequence, Union

from ihbench.dataset.characters import name_problem
from ihbench.dataset.errors import UsageError
from ihbench.dataset.redaction import quoted

SUMMARY_FORMAT = 1
TURNS_FORMAT = 2
SID_DEFINITIONS = ("notebook", "readme")
#: a field the writer leaves out when it has no value (to_json does not invent it)
_OMITTED_WHEN_NONE = {"omit_none": True}
#: the values a figure can take: a share of events, a time that only ever grows from 0 (an edited or
#: damaged summary outside them would put impossible scores in a report's tables)
_SHARE = {"range": (0.0, 1.0)}
_SECONDS = {"range": (0.0, None)}


class SummaryError(ValueError):
    """Why a summary cannot be read as its kind, naming the field; `read_summary` adds the file. From a
    writer's own summary it is a bug, and keeps its traceback."""


class SummaryFileError(UsageError):
    """A summary.json that cannot be read: the file and why."""


class UnknownSummaryKind(SummaryFileError):
    """A summary.json of a kind no type here reads; `kind` is None when it names none."""

    def __init__(self, message: str, kind: Any):
        super().__init__(message)
        self.kind = kind


def _dotted(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _object(value, name: str) -> dict:
    if not isinstance(value, dict):
        raise SummaryError(f"field {name} is missing or not an object")
    return value


def _number(value, name: str, *, count: bool = False):
    ok = (isinstance(value, int) and value >= 0) if count else isinstance(value, (int, float))
    if value is not None and (isinstance(value, bool) or not ok):
        raise SummaryError(f"field {name} must be {'a count' if count else 'a number'} or null, got {value!r}")
    return value


def _present(data: dict, where: str, names) -> dict:
    for name in names:
        if name not in data:
            raise SummaryError(f"field {_dotted(where, name)} is missing")
    return data


def _check(value, name: str, annotation: str) -> None:
    """`value` is what the field's annotation asks of JSON (null always passes): a str, an int >= 0
    (every int here is a count or a version), a number, an object or a list. Fields of a nested
    type are checked by that type."""
    bare = annotation[len("Optional["):-1] if annotation.startswith("Optional[") else annotation
    expected = bare.split("[")[0]
    if value is None or expected not in ("str", "int", "float", "dict", "list"):
        return
    if expected in ("int", "float"):
        _number(value, name, count=expected == "int")
    elif expected == "str" and not isinstance(value, str):
        raise SummaryError(f"field {name} must be a string, got {value!r}")
    elif expected in ("dict", "list") and not isinstance(value, {"dict": dict, "list": list}[expected]):
        wanted = "an object" if expected == "dict" else "a list"
        raise SummaryError(f"field {name} must be {wanted}, got {type(value).__name__}")


def _in_range(value, name: str, bounds) -> None:
    if bounds is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    low, high = bounds
    if not math.isfinite(value) or value < low or (high is not None and value > high):
        allowed = f"from {low:g} to {high:g}" if high is not None else f"{low:g} or more"
        raise SummaryError(f"field {name} must be a number {allowed} or null, got {value!r}")


def _fields(cls, data: dict, where: str) -> dict:
    """The constructor's arguments from `data`: each field checked against its annotation (one without
    a default must be there, even as null); what the type does not know (a newer writer's fields) kept
    in `extra`. A null where the field has a default is the default; a summary without
    format_version is version 1, and its kind is the type's, not a field."""
    own = {f.name: f for f in fields(cls) if f.name not in ("extra", "kind")}
    _present(data, where, [name for name, f in own.items()
                           if f.default is MISSING and f.default_factory is MISSING])
    for name, f in own.items():
        _check(data.get(name), _dotted(where, name), f.type)
        _in_range(data.get(name), _dotted(where, name), f.metadata.get("range"))
    newest = own["format_version"].default if "format_version" in own else None
    if isinstance(newest, int) and isinstance(data.get("format_version"), int) and data["format_version"] > newest:
        raise SummaryError(f"field {_dotted(where, 'format_version')} is {data['format_version']}: written by a newer "
                           f"ihbench (this one reads up to {newest}); upgrade ihbench to read it")
    has_default = {name for name, f in own.items() if f.default is not MISSING or f.default_factory is not MISSING}
    known = {k: v for k, v in data.items() if k in own and not (v is None and k in has_default)}
    if "format_version" in own:
        known["format_version"] = data.get("format_version") or 1
    return {**known, "extra": {k: v for k, v in data.items() if k not in own and k != "kind"}}


def _json(value):
    """A typed summary (or part of one) back to the JSON it was written as: fields in declaration
    order, a summary's kind and format_version first, unknown fields last."""
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json(item) for item in value]
    if not is_dataclass(value):
        return value
    data = {"kind": value.kind, "format_version": value.format_version} if hasattr(value, "kind") else {}
    for f in fields(value):
        item = getattr(value, f.name)
        if f.name in ("extra", "format_version") or (item is None and f.metadata.get("omit_none")):
            continue
        data[f.name] = _json(item)
    return {**data, **value.extra}


class _Figures:
    """Figures a table shows: numbers (an int a count: whole, >= 0) or null; a field without a
    default must be there, even as null."""

    @classmethod
    def from_json(cls, data, where: str):
        fields = _fields(cls, _object(data, where), where)
        low, high = fields.get("ci_low"), fields.get("ci_high")
        if low is not None and high is not None and low > high:  # no computation gives one: edited by hand
            raise SummaryError(f"field {_dotted(where, 'ci_low')}: {low} is above ci_high {high}; an interval runs "
                               "from low to high")
        return cls(**fields)


@dataclass(frozen=True, kw_only=True)
class SidScore(_Figures):
    """One definition's scores, as the apt metric module returned them: FIR, IRL (s), APT (s) and
    the counts behind them (counts missing from a hand-made file stay missing)."""

    fir: Optional[float] = field(metadata=_SHARE)
    irl: Optional[float] = field(metadata=_SECONDS)
    apt: Optional[float] = field(metadata=_SECONDS)
    definition: Optional[str] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    n_clips: int
    n_break: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    #: what the README's FIR averages over
    n_nonbreak: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    false_alarms: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    predictions_past_duration: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    false_alarms_nonbreak: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    early_detections: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    misses: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    #: the detections the README's IRL times
    hits_within_tolerance: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    #: the detections the notebook's IRL times
    late_hits: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    correct_rejections: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    extra: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True, kw_only=True)
class Latency(_Figures):
    """A mean over n events (seconds) with its median and 95 % bootstrap interval; null when n = 0,
    the interval null below n = 2."""

    mean: Optional[float]
    median: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    n: int
    extra: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True, kw_only=True)
class Rate(_Figures):
    """A share of n events with its 95 % Wilson interval; null when n = 0."""

    value: Optional[float] = field(metadata=_SHARE)
    ci_low: Optional[float] = field(metadata=_SHARE)
    ci_high: Optional[float] = field(metadata=_SHARE)
    n: int
    extra: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True, kw_only=True)
class TurnsTiming:
    """The judge-free timing figures of a turns run, pooled over its recordings."""

    response_latency_s: Latency
    stop_latency_s: Latency
    turn_over_rate: Rate
    #: barge-ins the AI talked over (None in a version-1 summary, which counted some of them as yields)
    talk_overs: Optional[int] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, data, where: str = "timing") -> "TurnsTiming":
        if not isinstance(data, dict):
            raise SummaryError(f"field {where} is missing or not an object (is this `ihbench turns` output?)")
        figures = {name: kind.from_json(data.get(name), _dotted(where, name))
                   for name, kind in (("response_latency_s", Latency), ("stop_latency_s", Latency),
                                      ("turn_over_rate", Rate))}
        return cls(**{**_fields(cls, data, where), **figures})


class _Summary:
    """What every summary type shares: its kind, checked on reading, and `to_json`."""

    kind: ClassVar[str]

    @classmethod
    def _of_kind(cls, data, where: str) -> dict:
        if not isinstance(data, dict):
            raise SummaryError(f"{where or 'the summary'} is not a JSON object")
        if data.get("kind") is not None and data["kind"] != cls.kind:
            raise SummaryError(f"field {_dotted(where, 'kind')} is {quoted(data['kind'])}, not {cls.kind!r}")
        name = data.get("model_name")  # a report names the run by it, on a line and in a table cell of its own
        if isinstance(name, str) and (name_problem(name) or not name.strip()):
            raise SummaryError(f"field {_dotted(where, 'model_name')} must be a non-empty name on one line, got "
                               f"{name!r}")
        for field, value in data.items():  # what a report copies of a run: refused as run.json's names are
            if field != "sealed":  # (battery 62, I15: model_name, detector; battery 63, J2: data, config; any)
                _refuse_credentials(value, _dotted(where, str(field)))
        return data

    def to_json(self) -> dict:
        return _json(self)


def _refuse_credentials(value, where: str, depth: int = 0) -> None:
    """A key, an environment secret's value or a URL's password anywhere in `value` (a record's names and settings,
    edited by hand or written before ihbench refused them), refused without echoing it; a part the writer hid
    (`<redacted>`) is no credential."""
    from ihbench.dataset.redaction import REDACTED, credential_in

    if isinstance(value, str):
        found = credential_in(value.replace(REDACTED, ""))
        if found:
            raise SummaryError(f"field {where} holds {found} (a credential; not shown), which every report would "
                               "copy: edited, or written before ihbench refused keys in names; replace it with a name")
    elif isinstance(value, dict) and depth < 50:
        for key, item in value.items():
            _refuse_credentials(str(key), f"{where} (a key)", depth + 1)
            _refuse_credentials(item, _dotted(where, str(key)), depth + 1)
    elif isinstance(value, list) and depth < 50:
        for index, item in enumerate(value):
            _refuse_credentials(item, f"{where}[{index}]", depth + 1)


@dataclass(frozen=True, kw_only=True)
class SidSummary(_Summary):
    """`ihbench sid`'s summary.json: a detector (or a prediction file) scored on an SID config."""

    kind: ClassVar[str] = "sid"

    data: Optional[str] = None
    config: Optional[str] = None
    #: the detector's own description ({"detector": name, options..., "model": the loader's, for
    #: audio-llm}), or {"predictions_file": path} when a prediction file was scored
    detector: dict = field(default_factory=dict)
    n_clips: Optional[int] = None
    tolerance: Optional[float] = None
    #: {"notebook": ..., "readme": ...}: SID-Bench's two definitions of FIR and IRL
    scores: dict[str, SidScore]
    model_calls: Optional[int] = None
    model_calls_per_clip: Optional[float] = None
    seconds: Optional[float] = None
    audio_seconds: Optional[float] = None
    real_time_factor: Optional[float] = None
    timing_errors: Optional[dict] = None
    #: a display name set by hand (`ihbench sid` writes none)
    model_name: Optional[str] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    #: the digests of its scores and of predictions.jsonl (`seal`)
    sealed: Optional[dict] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    format_version: int = SUMMARY_FORMAT
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, data, where: str = "") -> "SidSummary":
        data = cls._of_kind(data, where)
        scores = data.get("scores") if isinstance(data.get("scores"), dict) else {}
        _check_seal(data, where, "sid")
        parsed = {**scores, **{name: SidScore.from_json(scores.get(name), _dotted(where, f"scores.{name}"))
                               for name in SID_DEFINITIONS}}
        for name in SID_DEFINITIONS:
            _check_sid_counts(parsed[name], _dotted(where, f"scores.{name}"), name)
        detector = data.get("detector") or {}
        for name, annotation in (("detector", "str"), ("model", "dict")):
            _check(detector.get(name), _dotted(where, f"detector.{name}"), annotation)
        _check((detector.get("model") or {}).get("model_path"), _dotted(where, "detector.model.model_path"), "str")
        return cls(**{**_fields(cls, data, where), "scores": parsed})

    @property
    def model_label(self) -> Optional[str]:
        """A hand-set name; else the audio LLM an `audio-llm` detector ran; else the detector itself
        (silero-vad, energy). A scored prediction file records no model."""
        model = self.detector.get("model") or {}
        return self.model_name or model.get("model_path") or self.detector.get("detector") or None


def seal(summary: dict, folder: Path, figures: Sequence[str], files: Sequence[str]) -> dict:
    """`summary` (as written, JSON) with its seal: the digests of its `figures` (its fields the report
    reads) and of the `files` of `folder` they were computed from (predictions.jsonl, each recording's
    events.json). The report reads the figures without computing them again; the seal tells it they
    are still what the command wrote. A display name (`model_name`) may be set by hand, a figure not."""
    return {**summary, "sealed": {"figures": list(figures), "figures_sha256": _figures_digest(summary, figures),
                                  "files_sha256": {name: file_digest(Path(folder) / name) for name in files}}}


def _figures_digest(summary: dict, figures: Sequence[str]) -> str:
    part = {name: summary.get(name) for name in figures}
    return hashlib.sha256(json.dumps(part, sort_keys=True).encode("utf-8")).hexdigest()


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


#: the fields each command seals (`seal`), by the command that writes the summary
SEALED_FIGURES = {"sid": ["scores"], "turns": ["timing", "statistics", "agreement"], "report": ["runs"]}


def _cut(text: str, keep: int = 60) -> str:
    return text if len(text) <= keep else text[:keep] + "..."


def _check_seal(data: dict, where: str, command: str) -> None:
    """A summary written before seals were has no `sealed` field; one with the field has the whole seal
    its command writes (a seal emptied or nulled would otherwise pass any edit of the figures)."""
    if "sealed" not in data:
        return
    sealed = data["sealed"]
    if not (isinstance(sealed, dict) and sealed.get("figures") == SEALED_FIGURES[command]
            and isinstance(sealed.get("figures_sha256"), str) and isinstance(sealed.get("files_sha256"), dict)):
        raise SummaryError(f"field {_dotted(where, 'sealed')} is not the seal `ihbench {command}` writes (the figures "
                           f"{', '.join(SEALED_FIGURES[command])} and their digests), got "
                           f"{_cut(json.dumps(sealed))}; the file was edited by hand (`ihbench {command}` writes it "
                           "again)")
    figures = sealed["figures"]
    if sealed["figures_sha256"] != _figures_digest(data, figures):
        named = ", ".join(_dotted(where, name) for name in figures)
        raise SummaryError(f"field(s) {named}: not the figures `ihbench {command}` wrote (they differ from its seal, "
                           f"{_dotted(where, 'sealed.figures_sha256')}); the file was edited by hand (`ihbench "
                           f"{command}` writes it again)")


def unsealed_file(summary: "SidSummary | TurnsSummary", folder: Path) -> Optional[str]:
    """The first file the summary's figures were computed from that is gone or changed since, said in one
    line; None when all are as they were (or the summary has no seal: written before seals were)."""
    files = (summary.sealed or {}).get("files_sha256") or {}
    command = "sid" if summary.kind == "sid" else "turns"
    for name, digest in files.items():
        path = Path(folder) / name
        if not path.is_file():
            return (f"{path}: missing, while {Path(folder) / 'summary.json'} was computed from it; `ihbench {command}` "
                    "writes both again")
        if file_digest(path) != digest:
            return (f"{path}: not the file {Path(folder) / 'summary.json'} was computed from (it differs from the "
                    f"seal, sealed.files_sha256): edited or replaced since; `ihbench {command}` writes both again")
    return None


def _check_sid_counts(score: SidScore, where: str, definition: str) -> None:
    """What a file's counts fix, checked against its figures: no computation gives a FIR its own false
    alarms contradict, so such a file was edited by hand (APT and IRL need the clips' times, which
    the counts do not hold; `ihbench sid` again writes them right)."""
    c = score
    problems = []
    if None not in (c.n_break, c.n_nonbreak) and c.n_break + c.n_nonbreak != c.n_clips:
        problems.append(f"n_break {c.n_break} + n_nonbreak {c.n_nonbreak} is not n_clips {c.n_clips}")
    outcomes = (c.false_alarms_nonbreak, c.early_detections, c.misses, c.hits_within_tolerance, c.late_hits,
                c.correct_rejections)
    if None not in outcomes and sum(outcomes) != c.n_clips:
        problems.append(f"its outcomes add up to {sum(outcomes)} clips, not n_clips {c.n_clips}")
    if None not in (c.false_alarms, c.false_alarms_nonbreak, c.early_detections) and \
            c.false_alarms != c.false_alarms_nonbreak + c.early_detections:
        problems.append(f"false_alarms {c.false_alarms} is not false_alarms_nonbreak + early_detections")
    if definition == "notebook" and c.false_alarms is not None and c.n_clips:
        expected, basis = c.false_alarms / c.n_clips, f"false_alarms {c.false_alarms} of n_clips {c.n_clips}"
    elif definition == "readme" and c.false_alarms_nonbreak is not None and c.n_nonbreak:
        expected, basis = c.false_alarms_nonbreak / c.n_nonbreak, \
            f"false_alarms_nonbreak {c.false_alarms_nonbreak} of n_nonbreak {c.n_nonbreak}"
    else:
        expected = None
    if expected is not None and c.fir is not None and abs(c.fir - expected) > 1e-9:
        problems.append(f"fir is {c.fir}, but {basis} give {expected:.6g}")
    if problems:
        raise SummaryError(f"field {where}: {problems[0]}; the file was edited by hand (`ihbench sid` writes it "
                           "again)")


@dataclass(frozen=True, kw_only=True)
class TurnsSummary(_Summary):
    """`ihbench turns`'s summary.json (its schema: `ihbench/turns/__init__.py`)."""

    kind: ClassVar[str] = "turns"

    model_name: Optional[str] = None
    recordings: Optional[int] = None
    timing: TurnsTiming
    #: Section 3.1 statistics: {"duration_s", "speakers": {"ai", "user"}, "both"}
    statistics: dict = field(default_factory=dict)
    #: the five agreement metrics and the single-label evaluation; None without a judge
    agreement: Optional[dict] = None
    duration_s: Optional[float] = None
    seconds: Optional[float] = None
    real_time_factor: Optional[float] = None
    channels: Optional[dict] = None
    vad: Optional[dict] = None
    transcripts: Optional[str] = None
    per_recording: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ihbench_version: Optional[str] = None
    command: Optional[list[str]] = None
    #: the digests of its timing, statistics and agreement and of each recording's events.json (`seal`)
    sealed: Optional[dict] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    format_version: int = TURNS_FORMAT
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, data, where: str = "") -> "TurnsSummary":
        data = cls._of_kind(data, where)
        _check_seal(data, where, "turns")
        timing = TurnsTiming.from_json(data.get("timing"), _dotted(where, "timing"))
        return cls(**{**_fields(cls, data, where), "timing": timing})

    @property
    def model_label(self) -> Optional[str]:
        return self.model_name or None


@dataclass(frozen=True, kw_only=True)
class ReportSummary(_Summary):
    """`ihbench report`'s summary.json for IHBench runs: one entry per run as `summarize_run` wrote it
    (scores with CIs, per type and depth, judges, metric versions, diagnostics), and the comparisons."""

    kind: ClassVar[str] = "ihbench"

    runs: list[dict]
    modality_tost: list[dict] = field(default_factory=list)
    depth_slope_test: Optional[dict] = None
    #: why the runs' scores are not comparable (different data), or None
    mixed_data: Optional[str] = None
    #: comparisons left out, and why
    refused: list[str] = field(default_factory=list)
    #: a barge-in run beside the same model's static run: RQ per type, the difference with its interval
    barge_in_vs_static: Optional[list] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    #: the digest of its runs (`seal`): the Space's leaderboard lists them as they are, so an edited
    #: count or dev-set entry would be published as measured; None when written before seals were
    sealed: Optional[dict] = field(default=None, metadata=_OMITTED_WHEN_NONE)
    format_version: int = SUMMARY_FORMAT
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, data, where: str = "") -> "ReportSummary":
        data = cls._of_kind(data, where)
        _check_seal(data, where, "report")
        if not isinstance(data.get("runs"), list):
            raise SummaryError(f"field {_dotted(where, 'runs')} is missing or not a list")
        for index, run in enumerate(data["runs"]):  # what a reader of the scores needs, even from a hand-made file
            entry = _dotted(where, f"runs[{index}]")
            _present(_object(run, entry), entry, ("model", "modality", "tf_win_rate", "rq_pass_rate"))
            for name, annotation in (("model", "str"), ("modality", "str"), ("tf_win_rate", "dict"),
                                     ("rq_pass_rate", "dict")):
                _check(run[name], _dotted(entry, name), annotation)
            for rate in ("tf_win_rate", "rq_pass_rate"):
                if run[rate] is not None:
                    name, value = f"{entry}.{rate}.{rate}", _present(run[rate], f"{entry}.{rate}", (rate,))[rate]
                    _in_range(_number(value, name), name, _SHARE["range"])
            if not isinstance(run["model"], str) or not run["model"].strip() or name_problem(run["model"]):
                # every run is some model's: its row is named by it, on one line (as --model-name is checked)
                raise SummaryError(f"field {_dotted(entry, 'model')} must be a model's name on one line, got "
                                   f"{run['model']!r}")
            if run["modality"] not in ("audio", "text"):
                raise SummaryError(f"field {_dotted(entry, 'modality')} must be audio or text, got {run['modality']!r}")
            # what the Space's leaderboard shows beside the scores
            _number(run.get("n_items"), _dotted(entry, "n_items"), count=True)
            for name, annotation in (("dev_set", "dict"), ("data", "str")):
                _check(run.get(name), _dotted(entry, name), annotation)
        return cls(**_fields(cls, data, where))


@dataclass(frozen=True, kw_only=True)
class CrossSummary(_Summary):
    """The cross-benchmark report's summary.json: the metrics, one table per model, the rank
    correlations, the runs read, and the single-benchmark report of its IHBench runs."""

    kind: ClassVar[str] = "cross_benchmark"

    #: which SID-Bench definition the table shows
    sid_definition: str
    #: [{"key", "label", "benchmark", "better"}]
    metrics: list[dict]
    #: [{"model", "runs": {kind: folder}, "metrics": {key: {"value", "ci_low", "ci_high", "n", ...}}}]
    models: list[dict]
    correlations: dict
    #: [{"run", "kind", "model", "named_by", "details"}]
    runs: list[dict] = field(default_factory=list)
    ihbench: Optional[ReportSummary] = None
    format_version: int = SUMMARY_FORMAT
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, data, where: str = "") -> "CrossSummary":
        data = cls._of_kind(data, where)
        if data.get("sid_definition") not in SID_DEFINITIONS:
            raise SummaryError(f"field {_dotted(where, 'sid_definition')} must be one of "
                               f"{', '.join(SID_DEFINITIONS)}")
        known = _fields(cls, data, where)
        if known.get("ihbench") is not None:
            known["ihbench"] = ReportSummary.from_json(known["ihbench"], _dotted(where, "ihbench"))
        return cls(**known)


Summary = Union[SidSummary, TurnsSummary, ReportSummary, CrossSummary]
TYPES = {summary.kind: summary for summary in (SidSummary, TurnsSummary, ReportSummary, CrossSummary)}


def summary_kind(data: dict) -> Any:
    """The kind a summary says it is. Two kinds were written without one (format 1, before the
    field existed): an `ihbench sid` summary, the only one with scores under both SID-Bench
    definitions and a clip count; and a single-benchmark report, the only one with a runs list
    and no per-model table."""
    if "kind" in data:
        return data["kind"]
    scores = data.get("scores")
    if isinstance(scores, dict) and set(SID_DEFINITIONS) <= set(scores) and "n_clips" in data:
        return "sid"
    if isinstance(data.get("runs"), list) and "models" not in data:
        return "ihbench"
    return None


def read_summary(path) -> Summary:
    """summary.json at `path`, typed by its kind (`summary_kind`); a file that cannot be read as one is
    refused with the file and the reason."""
    from ihbench.dataset.io import read_json_object

    path = Path(path)
    data = read_json_object(path, SummaryFileError)
    kind = summary_kind(data)
    if not (isinstance(kind, str) and kind in TYPES):
        reason = "no kind field, and not a summary any version wrote" if kind is None else f"unknown kind {kind!r}"
        raise UnknownSummaryKind(f"{path}: {reason}", kind)
    try:
        return TYPES[kind].from_json(data)
    except SummaryError as error:
        raise SummaryFileError(f"{path}: {error}") from None
