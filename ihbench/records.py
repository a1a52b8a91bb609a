"""The run directory's records as types: what a line of responses.jsonl or judgments.jsonl holds.

Each record knows its own shape: `from_json` checks a line read back (a damaged or hand-edited
one is refused with the reason, and never counts as done) and fills in what older versions of the
toolkit did not write, so no reader needs `.get(field, legacy)` branches; `to_json` is what the
writer appends. A field added later gets a default here and a new `RECORD_FORMAT`.

Versions: 1, records written before `format_version` existed; 2, each record carries `item_hash`,
the `EvalItem.content_hash` of the item it answers or judges; 3, a judgment also carries
`response_hash`, the `ResponseRecord.digest` of the answer it judged (an item that failed and was
answered on a later run, or was answered again, is then judged again rather than scored twice);
4, a response also carries `audio_turns`, how many user turns the model heard as audio (the others
as transcripts: `--history-audio`), so answers to different hearings are never compared unawares;
5, each record carries `check`, a hash of what it holds (an answer: `ResponseRecord.digest`; a
verdict: `_verdict_check`), so a line edited by hand is refused as damaged, never scored.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Optional

from ihbench.dataset.characters import name_problem
from ihbench.dataset.argtypes import LONGEST_NAME
from ihbench.dataset.checks.deficiency import deficiency_problem
from ihbench.dataset.checks.words import has_words
from ihbench.dataset.redaction import credential_in, quoted

RECORD_FORMAT = 5
#: the first format whose records carry a check of what they hold (`ResponseRecord.digest`, `_verdict_check`)
CHECKED_FORMAT = 5
AXES = ("tf", "rq")
TF_VERDICTS = ("model", "baseline", "tie")
OUTCOMES = ("judged", "judge_error")


class RecordError(ValueError):
    """Why a line cannot be used; the reader reports it with the file and line."""


def failed_on_data_audio(error: Optional[str]) -> bool:
    """A failure on the data's own audio (a clip damaged or silent, `loaders.base`'s DamagedAudioError and
    EmptyAudioError), as a record's error says it: a rerun fails it again until the dataset is mended."""
    return (error or "").startswith(("DamagedAudioError", "EmptyAudioError"))


def _check(data: dict, name: str, kinds, *, optional: bool = False) -> Any:
    if name not in data:
        if optional:
            return None
        raise RecordError(f"missing field {name!r}")
    value = data[name]
    if value is None and optional:
        return None
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, bool) and bool not in kinds:
        raise RecordError(f"field {name!r} must be {kinds[0].__name__}, got {value!r}")
    if not isinstance(value, kinds):
        raise RecordError(f"field {name!r} has the wrong type ({type(value).__name__})")
    return value


def _check_format_version(data: dict) -> None:
    """`format_version` may be absent (written before it existed) but never null: every writer that
    has it writes a number, and a null one read as format 1 would check the record by the wrong rules."""
    if "format_version" in data and data["format_version"] is None:
        raise RecordError("field 'format_version' is null; ihbench writes a number there (edited by hand?)")
    _check(data, "format_version", int, optional=True)


def _check_as_the_command_line(data: dict) -> None:
    """run.json's settings within what `ihbench run` can write (battery 45, R8: judge and report read
    `epochs` 10**30, `history_audio` "last:0", `types` [] or `loader_options` "x" without a word, and
    planned and labelled by them). The command line's own types check them."""
    from ihbench.dataset.argtypes import ArgumentValueError, epochs, history_audio

    if "epochs" in data and data["epochs"] is None:
        raise RecordError("field 'epochs' is null; the run always writes how many (edited by hand?)")
    if data.get("epochs") is not None:
        try:
            epochs().check("field 'epochs'", data["epochs"])
        except ArgumentValueError as error:
            raise RecordError(f"{error} (edited by hand?)") from None
    heard = data.get("history_audio")
    if heard is not None:  # every user turn as audio ("all") is written as null
        try:
            fits = isinstance(heard, str) and heard != "all" and history_audio().convert(heard)
        except ArgumentValueError:
            fits = False
        if not fits:
            raise RecordError(f"field 'history_audio' must be auto or last:K with K >= 1, got {json.dumps(heard)[:40]} "
                              "(edited by hand?)")
    if data.get("types") == []:
        raise RecordError("field 'types' is []; the run writes the types it chose, or null for all (edited by hand?)")
    endpoint = data.get("endpoint")
    if endpoint is not None and not (isinstance(endpoint, str) or (isinstance(endpoint, list) and endpoint
                                                                    and all(isinstance(e, str) for e in endpoint))):
        raise RecordError(f"field 'endpoint' must be a server's address or a list of them, got "
                          f"{json.dumps(endpoint)[:40]} (edited by hand?)")
    options = data.get("loader_options")  # `model` of another type is refused with the other fields' types
    if options is not None and not isinstance(options, dict):
        raise RecordError(f"field 'loader_options' must be an object, got {json.dumps(options)[:40]} (edited by hand?)")
    if data.get("format_version") == RUN_INFO_FORMAT and "model" in data and data["model"] is None:
        raise RecordError("field 'model' is null; the run always writes the loader's description (edited by hand?)")


def _known(cls, data: dict) -> tuple[dict, dict]:
    """The fields the type has; anything else a newer writer added is kept in `extra`."""
    names = {f.name for f in fields(cls)} - {"extra"}
    return {k: v for k, v in data.items() if k in names}, {k: v for k, v in data.items() if k not in names}


def _to_json(record) -> dict:
    data = asdict(record)
    extra = data.pop("extra")
    return {**data, **extra}


@dataclass(frozen=True)
class ResponseRecord:
    """One answer of the model under test to one (item, epoch), or the item failure that stopped it."""

    id: str
    epoch: int
    response: Optional[str]
    error: Optional[str]
    seed: Optional[int] = None
    latency_s: Optional[float] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    modality: Optional[str] = None
    conversation_id: Optional[str] = None
    interruption_type: Optional[str] = None
    depth: Optional[int] = None
    #: a thinking model's reasoning, kept apart from `response`: judges never see it
    reasoning: Optional[str] = None
    item_hash: Optional[str] = None
    #: user turns heard as audio (0 in text modality; format 4 on; None: not known, or no input was built)
    audio_turns: Optional[int] = None
    #: the model that answered, `loader:model_path` as run.json has them (None: written before it was
    #: kept): a line copied from another model's run is not this run's answer (`RunDir.responses`)
    model: Optional[str] = None
    #: `settings_digest` of the generation settings it was drawn with (None: before it was kept)
    generation: Optional[str] = None
    format_version: int = 1
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return self.id, self.epoch

    @property
    def answered(self) -> bool:
        """An answer with words; an error is no answer, and neither is an empty one or one without a letter or digit
        that shows (only invisible characters, punctuation or U+FFFD: `checks.words.has_words`; the loaders record it as
        `EmptyReplyError`): the next `ihbench run` tries the item again, the judge skips it and counts
        it as failed, and nothing scores it."""
        return self.error is None and self.response is not None and has_words(self.response)

    @property
    def on_data_audio(self) -> bool:
        return failed_on_data_audio(self.error)

    @property
    def digest(self) -> str:
        """Names this answer in the judgments of it."""
        payload = json.dumps([self.id, self.epoch, self.item_hash, self.response, self.error], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    @staticmethod
    def empty_answer(data) -> bool:
        """A line that records an answer with no text and no error (an older version wrote the empty
        answer of a local model as one; hand-edited lines): refused by `from_json`."""
        return isinstance(data, dict) and data.get("error") is None and isinstance(data.get("response"), str) \
            and not has_words(data["response"])

    @classmethod
    def from_json(cls, data: dict) -> "ResponseRecord":
        _check(data, "id", str)
        epoch = _check(data, "epoch", int)
        response = _check(data, "response", str, optional=True)
        error = _check(data, "error", str, optional=True)
        _check(data, "item_hash", str, optional=True)
        _check_format_version(data)
        if epoch < 0:
            raise RecordError(f"field 'epoch' must be >= 0, got {epoch}")
        if response is None and error is None:
            raise RecordError("neither a response nor an error")
        if cls.empty_answer(data):
            raise RecordError("field 'response' is empty" + (" (only invisible characters)" if response.strip() else "")
                              + " and there is no error: an answer with no text is an item failure "
                              "(EmptyReplyError), not an answer to judge")
        _check(data, "model", str, optional=True)
        _check(data, "generation", str, optional=True)
        turns = _check(data, "audio_turns", int, optional=True)
        if turns is not None and turns < 0:
            raise RecordError(f"field 'audio_turns' must be >= 0, got {turns}")
        check = _checked(data)
        known, extra = _known(cls, {k: v for k, v in data.items() if k != "check"})
        missing = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING
                   and f.name not in known and f.name != "format_version"]
        if missing:  # a key deleted by hand ended in a TypeError traceback (battery 63, J9)
            raise RecordError(f"field {missing[0]!r} is missing")
        record = cls(**{"format_version": 1, **known}, extra=extra)
        if check is not None and check != record.digest:
            raise RecordError("changed since it was written (its answer no longer matches the check written with "
                              "it): an answer not made by the model is none; left out, and answered again")
        return record

    def to_json(self) -> dict:
        """From format 5 with `check` (its `digest`), which an answer or error edited by hand no longer
        matches; records of earlier formats read back as they were written."""
        data = _to_json(self)
        for name in ("audio_turns", "model", "generation"):  # records of earlier versions read back as written
            if data[name] is None:
                data.pop(name)
        return {**data, "check": self.digest} if self.format_version >= CHECKED_FORMAT else data


@dataclass(frozen=True)
class JudgmentRecord:
    """One judge's verdict on one (item, epoch, axis), or the judge_error that stopped it (never a loss
    for the model: judged again on the next `ihbench judge`)."""

    id: str
    epoch: int
    axis: str
    outcome: str
    judge_model: str
    prompt_version: Optional[str] = None
    prompt_hash: Optional[str] = None
    verdict: Optional[str] = None
    #: rq: one pass/fail per criterion, with the judge's reason for each
    criteria: Optional[list[bool]] = None
    reasons: Optional[list[str]] = None
    #: tf: which side the model's response was shown on, the label that won, and why the loser lost
    order: Optional[str] = None
    winner_label: Optional[str] = None
    loser_deficiency: Optional[str] = None
    reasoning: Optional[str] = None
    reason: Optional[str] = None
    error: Optional[str] = None
    #: False: retrying cannot help (the data lacks what the axis needs); settled like a verdict
    retryable: Optional[bool] = None
    calls: Optional[int] = None
    cached: Optional[bool] = None
    latency_s: Optional[float] = None
    item_hash: Optional[str] = None
    #: the `ResponseRecord.digest` of the answer judged (format 3 on)
    response_hash: Optional[str] = None
    format_version: int = 1
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def key(self) -> tuple[str, int, str]:
        return self.id, self.epoch, self.axis

    @property
    def judged(self) -> bool:
        return self.outcome == "judged"

    @property
    def settled(self) -> bool:
        """Done for good: a verdict, or an error that retrying cannot fix."""
        return self.judged or self.retryable is False

    @classmethod
    def from_json(cls, data: dict) -> "JudgmentRecord":
        for name, kinds in (("id", str), ("epoch", int), ("axis", str), ("outcome", str), ("judge_model", str)):
            _check(data, name, kinds)
        _check(data, "item_hash", str, optional=True)
        _check(data, "response_hash", str, optional=True)
        _check_format_version(data)
        axis, outcome = data["axis"], data["outcome"]
        if axis not in AXES:
            raise RecordError(f"field 'axis' must be tf or rq, got {axis!r}")
        if outcome not in OUTCOMES:
            raise RecordError(f"field 'outcome' must be judged or judge_error, got {outcome!r}")
        if outcome == "judged":
            if axis == "tf" and data.get("verdict") not in TF_VERDICTS:
                raise RecordError(f"tf verdict must be one of {TF_VERDICTS}")
            if axis == "tf" and isinstance(data.get("loser_deficiency"), str):
                _check_deficiency(data["loser_deficiency"])
            if axis == "rq":
                if data.get("verdict") not in ("pass", "fail"):
                    raise RecordError("rq verdict must be pass or fail")
                criteria = data.get("criteria")
                if not isinstance(criteria, list) or not criteria or not all(isinstance(c, bool) for c in criteria):
                    raise RecordError("field 'criteria' must be a non-empty list of true/false")
                if (data["verdict"] == "pass") != all(criteria):
                    raise RecordError("verdict and criteria disagree")
        check = _checked(data)
        if check is not None and check != _verdict_check(data):
            raise RecordError("changed since it was written (its verdict no longer matches the check written with "
                              "it): a verdict not made by the judge is none; left out, and judged again")
        known, extra = _known(cls, {k: v for k, v in data.items() if k != "check"})
        return cls(**{"format_version": 1, **known}, extra=extra)

    def to_json(self) -> dict:
        """With `check`, which a verdict edited by hand no longer matches (records without one, written
        before it, are read as they are)."""
        data = _to_json(self)
        return {**data, "check": _verdict_check(data)} if self.format_version >= CHECKED_FORMAT else data


def _checked(data: dict) -> Optional[str]:
    """A record's `check` from format 5 on (required: a line of that format without one was edited);
    older formats had none, and one found on them is not theirs to verify."""
    version = data.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > RECORD_FORMAT:
        raise RecordError(f"field 'format_version' is {version}: written by a newer ihbench (this one reads up to "
                          f"{RECORD_FORMAT}); upgrade ihbench to read it")
    if isinstance(version, int) and not isinstance(version, bool) and version >= CHECKED_FORMAT:
        return _check(data, "check", str)
    return None


#: what a judgment's check covers: which answer it judges, and what it found
_VERDICT_FIELDS = ("id", "epoch", "axis", "outcome", "judge_model", "response_hash", "verdict", "criteria", "order",
                   "winner_label")


def _check_deficiency(text: str) -> None:
    """A TF verdict's deficiency held to the judge's own rule when read back (battery 64, K14: "rude" edited to "no
    issues" was scored; the line's check covers the verdict, not its words, and older judges accepted more)."""
    problem = deficiency_problem(text)
    if problem:
        raise RecordError(f"{problem}: not a verdict the judge accepts now; left out, and judged again")


def _verdict_check(data: dict) -> str:
    payload = json.dumps([data.get(name) for name in _VERDICT_FIELDS], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


#: run.json fields that define a run: resuming with any of them changed would mix two experiments.
#: The endpoint (an OpenAI-compatible server's URL; never its key) may point at another model.
RUN_IDENTITY = ("loader", "model_path", "data", "config", "split", "modality", "history_audio", "generation", "seed",
                "types", "endpoint", "loader_options", "convbench")
RUN_INFO_FORMAT = 2


#: in run.json's `model`: the loader was an object given from Python, so `model_path`/`loader` are the
#: caller's labels for it and need not repeat its own description (written by the command line, they must)
PASSED_IN = "passed_in"


def _as_said(name: str) -> str:
    """A model's name as a warning says it: as it is, or quoted and cut when it is long or holds a line break (an
    edited record or run.json: battery 55, B14, 800 KB of warnings)."""
    return name if not name_problem(name) and len(name) <= 300 else quoted(name)


def copied_from_another_run(info: Optional["RunInfo"], *, model: Optional[str], modality: Optional[str],
                            seed: Optional[int], drawn: Callable[[int], int], verb: str, noun: str,
                            then: str = "") -> Optional[str]:
    """Why a record (a response, a barge-in round, a ConversationBench turn) is not of the run that
    holds it, or None: made by another model (`loader:model_path`), in another modality, or drawn
    with another --seed (`drawn(run seed)`: the seed the run draws for this record). One rule for
    every record kind, said in each one's words (`verb`, `noun`, `then`: what happens to it next)."""
    copied = f"not {noun} of this run (copied from another run, or run.json another run's?); left out{then}"
    run_model = f"{info.loader}:{info.model_path}" if info and info.loader and info.model_path else None
    if run_model and model and model != run_model:
        return f"{verb} by {_as_said(model)}, and this run's model is {_as_said(run_model)}: {copied}"
    if info and info.modality and modality and modality != info.modality:
        return f"{verb} in {modality} modality, and this run's is {info.modality}: {copied}"
    if info and info.seed is not None and seed is not None and seed != drawn(info.seed):
        return f"its seed is not the one this run (--seed {info.seed}) draws for it: {copied}"
    return None


def settings_digest(generation: dict) -> str:
    """Names the generation settings (temperature, top-p, max new tokens, ...) an answer was drawn
    with, as run.json's `generation` holds them: an answer drawn otherwise is not this run's."""
    return hashlib.sha256(json.dumps(generation, sort_keys=True).encode("utf-8")).hexdigest()[:12]


def described(loader, passed_in: bool) -> dict:
    """The loader's description for run.json's `model`, marked when the loader was given from Python."""
    return {**loader.describe(), PASSED_IN: True} if passed_in else loader.describe()


def _modalities() -> tuple:
    from typing import get_args

    from ihbench.loaders.base import Modality

    return get_args(Modality)


def _check_choice(data: dict, name: str, choices, prefix: str = "") -> None:
    """A field the command line fills from a few words: any other value was edited by hand (a run
    cannot be resumed with it, nor its answers read as the run's)."""
    value = data.get(name)
    if value is not None and value not in choices:
        raise RecordError(f"field '{prefix}{name}' is {quoted(value)}, not one of {', '.join(choices)} (edited by hand?)")


def _check_generation(generation: Optional[dict]) -> None:
    """The settings the run was drawn with, checked as the command line checks them: a value no run
    can have was edited in, and every answer would otherwise be left out as drawn with other settings
    (as if copied from another run) rather than run.json named."""
    from ihbench.dataset.argtypes import ArgumentValueError
    from ihbench.loaders.base import GENERATION_TYPES

    for name, kind in GENERATION_TYPES.items():
        value = (generation or {}).get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RecordError(f"field 'generation.{name}' has the wrong type ({type(value).__name__}); the run writes "
                              "a number (edited by hand?)")
        try:
            kind.check(f"field 'generation.{name}'", value)
        except ArgumentValueError as error:
            raise RecordError(f"{error} (edited by hand?)") from None


@dataclass(frozen=True)
class RunInfo:
    """run.json: what was run (its identity, checked on resume), on what data, with which versions.

    Versions: 1, written before the field existed; 2, this shape, written with `format_version`.
    Every field but `data` may be missing from an old file and reads as None (or empty)."""

    data: str
    loader: Optional[str] = None
    model_path: Optional[str] = None
    config: Optional[str] = None
    split: Optional[str] = None
    modality: Optional[str] = None
    #: "last:K" when only the last K user turns were heard as audio; "auto": per item, the most recent
    #: that fit the model (each record's `audio_turns` says how many)
    history_audio: Optional[str] = None
    generation: Optional[dict] = None
    seed: Optional[int] = None
    types: Optional[list[str]] = None
    endpoint: Optional[str] = None
    #: a digest of the server's address as given (`endpoint_digest`): the endpoint above hides what looks like a
    #: key, and a resume compares the whole address by it (battery 50, W11)
    endpoint_digest: Optional[str] = None
    #: loader options that change answers (thinking, dtype, ...), not those that say how requests travel
    loader_options: Optional[dict] = None
    #: a digest of those options as given (`options_digest`), credentials aside: the options above hide what looks
    #: like a key, and a resume compares them whole by it (battery 57, D12)
    options_digest: Optional[str] = None
    epochs: Optional[int] = None
    limit: Optional[int] = None
    #: the points a caller handed the runner (the Space's picks, `run(items=...)`), in its order; None: the
    #: run selected them from the data by --types and --limit (`selection.run_selection`)
    item_ids: Optional[list[str]] = None
    #: the loader's own description of the model: path, revision, dtype, device, options
    model: dict = field(default_factory=dict)
    #: the generation settings the model ran with at the last start: the checkpoint's generation
    #: config with the run's over it (local), or what each request set (server)
    effective_generation: Optional[dict] = None
    #: digest of the items answered at the last start (each record carries its own item's digest)
    data_fingerprint: Optional[str] = None
    n_items: Optional[int] = None
    versions: dict = field(default_factory=dict)
    command: Optional[list[str]] = None
    created: Optional[str] = None
    #: a display name set by hand (the report's --model-name writes none; older tools did)
    model_name: Optional[str] = None
    #: a ConversationBench run's own settings (tool results mode, round cap, turns, rehydration, the
    #: benchmark's digest); None for an IHBench run
    convbench: Optional[dict] = None
    #: the record format the run began with (its first start's `RECORD_FORMAT`, kept on resume): a line of
    #: an older format in its files was not written by it (a check switched off by hand)
    record_format: Optional[int] = None
    format_version: int = 1
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, data: dict) -> "RunInfo":
        if not isinstance(data, dict) or "data" not in data:
            raise RecordError("not a run description (no 'data' field)")
        _check(data, "data", str)
        _check_format_version(data)
        for name, kinds in (("model", dict), ("versions", dict), ("generation", dict), ("seed", int),
                            ("model_path", str), ("model_name", str), ("config", str),
                            ("split", str), ("loader", str), ("endpoint_digest", str), ("options_digest", str)):
            _check(data, name, kinds, optional=True)
        for name in ("loader", "model_path", "config", "split"):  # each names something; no command writes ''
            if isinstance(data.get(name), str) and not data[name].strip():
                raise RecordError(f"field {name!r} is {quoted(data[name])}; the run writes a name there (edited by hand?)")
        for name in ("model_path", "model_name", "loader", "config", "split", "data"):  # copied into reports and records
            if isinstance(data.get(name), str) and len(data[name]) > LONGEST_NAME:  # the command line's own limit
                raise RecordError(f"field {name!r} is {len(data[name]):,} characters long (not shown), over the "
                                  f"{LONGEST_NAME:,} a name or path may have (edited by hand?)")
            found = credential_in(data.get(name)) if isinstance(data.get(name), str) else None
            if found:  # battery 54, A9: a run of an ihbench before the key rule, or edited: not copied on
                raise RecordError(f"field {name!r} holds {found} (a credential; not shown), which every report of the "
                                  "run would copy: written before ihbench refused keys in names, or edited; replace it "
                                  "with a name (in 'model' too, where it repeats)")
        for name, flag in (("model_path", "--model-path"), ("loader", "--model")):  # the loader's description repeats them
            described = _check(data.get("model") or {}, name, str, optional=True)
            passed_in = (data.get("model") or {}).get(PASSED_IN) is True  # labelled by the caller, not one flag
            if described is not None and data.get(name) is not None and described != data[name] and not passed_in:
                raise RecordError(f"field {name!r} is {quoted(data[name])} but 'model.{name}' is {quoted(described)}: the run writes "
                                  f"both from the same {flag} (edited by hand?)")
        for name, low in (("epochs", 1), ("limit", 1), ("n_items", 0), ("seed", 0), ("record_format", 1)):  # what the command line allows
            value = _check(data, name, int, optional=True)
            if value is not None and value < low:
                raise RecordError(f"field {name!r} must be >= {low}, got {value} (edited by hand?)")
        _check_as_the_command_line(data)
        version = data.get("format_version")
        if isinstance(version, int) and version < 1:  # versions count from 1
            raise RecordError(f"field 'format_version' must be from 1 to {RUN_INFO_FORMAT}, got {version} (edited by "
                              "hand?)")
        if isinstance(version, int) and version > RUN_INFO_FORMAT:
            raise RecordError(f"field 'format_version' is {version}: written by a newer ihbench (this one reads up to "
                              f"{RUN_INFO_FORMAT}); upgrade ihbench to read it")
        records = data.get("record_format")
        if isinstance(records, int) and records > RECORD_FORMAT:  # else every record would read as older, edited
            raise RecordError(f"field 'record_format' is {records}: written by a newer ihbench (this one writes "
                              f"records of format {RECORD_FORMAT}); upgrade ihbench to resume or read it")
        _check(data, "data_fingerprint", str, optional=True)
        types = _check(data, "types", list, optional=True)
        for kind in types or ():
            from ihbench.dataset.schema import canonical_interruption_type

            try:
                canonical_interruption_type(kind)
            except (ValueError, TypeError, AttributeError):
                raise RecordError(f"field 'types' holds {kind!r}, which is not an interruption type (edited by "
                                  "hand?)") from None
        if "barge_in" in data and not isinstance(data["barge_in"], dict):  # else read as a run of `ihbench run`
            raise RecordError(f"field 'barge_in' must be an object (the settings `ihbench barge-in` wrote), got "
                              f"{json.dumps(data['barge_in'])[:40]} (edited by hand?)")
        picked = _check(data, "item_ids", list, optional=True)
        if picked is not None and not all(isinstance(i, str) for i in picked):
            raise RecordError("field 'item_ids' must be a list of item ids (strings)")
        if data.get("format_version") == RUN_INFO_FORMAT:  # written whole by this format: a field gone was removed
            missing = [name for name in (*RUN_IDENTITY, "epochs") if name != "convbench" and name not in data]
            if missing:
                raise RecordError(f"field {missing[0]!r} is missing; the run always writes it (edited by hand?)")
        # every run of every format has named its modality (the first runner wrote it): its scores are labelled by it
        if "modality" not in data:
            raise RecordError("field 'modality' is missing; the run always writes it (edited by hand?)")
        if data["modality"] is None:
            raise RecordError("field 'modality' is null; the run always writes audio or text (edited by hand?)")
        _check_generation(data.get("generation"))
        _check_choice(data, "modality", _modalities())
        convbench = _check(data, "convbench", dict, optional=True)
        if convbench is not None:
            from ihbench.convbench.tool_results import MODES

            _check_choice(convbench, "tool_results", MODES, "convbench.")
            if data.get("config") is None:  # the benchmark the run played: every reader opens it by this name
                raise RecordError("field 'config' is missing or null; a ConversationBench run always names the config "
                                  "it played (edited by hand?)")
        known, extra = _known(cls, data)
        known = {k: v for k, v in known.items() if not (k in ("model", "versions") and v is None)}
        return cls(**{"format_version": 1, **known}, extra=extra)

    def to_json(self) -> dict:
        data = _to_json(self)
        if self.convbench is None:  # an IHBench run's run.json stays as it was before the field existed
            data.pop("convbench", None)
        if self.record_format is None:  # begun before the field existed
            data.pop("record_format", None)
        if self.effective_generation is None:
            data.pop("effective_generation", None)
        if self.item_ids is None:  # selected by --types and --limit: run.json as before the field existed
            data.pop("item_ids", None)
        if self.endpoint_digest is None:  # a local model's run, or one begun before the field existed
            data.pop("endpoint_digest", None)
        if self.options_digest is None:  # no option that changes answers, or begun before the field existed
            data.pop("options_digest", None)
        return data

    def identity(self) -> dict:
        return {key: getattr(self, key) for key in RUN_IDENTITY}

    @property
    def failed_unit(self) -> str:
        """What a failed item of the run is, as counted beside its scores: a barge-in run fails by round."""
        return "round(s)" if isinstance(self.extra.get("barge_in"), dict) else "response(s)"

    @property
    def retried_by(self) -> str:
        """What tries the run's failed items again, as said beside them."""
        if isinstance(self.extra.get("barge_in"), dict):
            return "`ihbench barge-in` with the same options"
        if self.item_ids is not None:  # no option selects the points the Space picked
            return "a new run of the same points (the Space picked them; `ihbench run` selects by --types and --limit)"
        return "`ihbench run` with the same options"

    @property
    def model_label(self) -> Optional[str]:
        """What the model is called in tables: a hand-set name, the loader's path, or the command's."""
        return self.model_name or self.model.get("model_path") or self.model_path


def read_typed(path: Path, record_type, repair: bool = False, *, redone=None, damaged: Optional[list] = None,
               torn: Optional[list] = None, oldest: Optional[int] = None, fits=None, then=None) -> list:
    """Typed records of a JSON-lines file, each line parsed once; a line that is not one is reported
    (file and line, by the reader, until `redone` says a later record stands in for it) and left out,
    and listed in `damaged` (see `read_records`). `oldest`: the run's `record_format`; a line of an
    older format was not written by the run (its check switched off by hand). `fits(record)`, called
    in file order, names why a well-formed record is still not the run's (None: it is); `then`: see
    `read_records`."""
    records = []

    def parse(data: dict) -> Optional[str]:
        try:
            record = record_type.from_json(data)
        except RecordError as error:
            return str(error)
        if oldest is not None and record.format_version < oldest:
            return (f"format_version {record.format_version}, older than every record of this run ({oldest}): not "
                    "written by it (edited by hand?); left out, and done again")
        problem = fits(record) if fits is not None else None
        if problem:
            return problem
        records.append(record)
        return None

    from ihbench.dataset.io import read_records

    read_records(path, repair=repair, check=parse, redone=redone, damaged=damaged, torn=torn, then=then)
    return records
