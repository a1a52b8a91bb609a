"""The records of a ConversationBench run, one per (epoch, turn) and attempt, in `responses.jsonl`.

A record holds what the turn added to the history (`messages`), so a conversation resumed after a
kill continues with exactly the history it had; and what the judge and the reference's tools need
(text, calls with their results, timing, tokens). The last record of an (epoch, turn) counts: a
turn that failed (`status` "error") is tried again by the next run, and never judged or scored.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Optional

from ihbench.records import RecordError

CONVBENCH_RECORD_FORMAT = 2  # 2: with `check`, and the answering `model`
#: the first format whose records carry a check of all they hold: a turn edited by hand makes its line
#: damaged (left out, and played again), never judged as the model's
CHECKED_TURN_FORMAT = 2
#: answered: the model's turn; ended_session: it called end_session here; ended_early: a turn after
#: that, never played; error: the turn failed and the conversation stopped there (retried on rerun)
STATUSES = ("answered", "ended_session", "ended_early", "error")
DONE = ("answered", "ended_session", "ended_early")


def utc_stamp() -> str:
    """Now, as the reference's transcript writes its `ts`: UTC ISO 8601 with milliseconds and Z."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class TurnRecord:
    benchmark: str
    epoch: int
    turn: int
    status: str
    user_text: str
    seed: int
    benchmark_hash: str
    text: str = ""
    final_text: str = ""
    tool_calls: list = field(default_factory=list)
    messages: list = field(default_factory=list)
    rounds: int = 0
    round_cap_hit: bool = False
    latency_s: float = 0.0
    ttfb_s: Optional[float] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    reasoning: Optional[str] = None
    #: a request of the turn may have been cut by --max-new-tokens: kept and judged, counted in the run's note
    ended_at_budget: bool = False
    error: Optional[str] = None
    mode: str = "on_policy"  # or "rehydrated": the turn alone after the golden history
    modality: str = "audio"
    #: the model that answered, `loader:model_path` as run.json has them (None: before it was kept)
    model: Optional[str] = None
    time: str = ""
    format: int = CONVBENCH_RECORD_FORMAT

    @property
    def key(self) -> tuple[int, int]:
        return self.epoch, self.turn

    @property
    def done(self) -> bool:
        return self.status in DONE

    def to_json(self) -> dict:
        return _with_check(asdict(self), self.format >= CHECKED_TURN_FORMAT)

    @classmethod
    def from_json(cls, data: dict) -> "TurnRecord":
        record = _checked(cls, data, (("benchmark", str), ("epoch", int), ("turn", int), ("status", str),
                                      ("user_text", str), ("seed", int), ("benchmark_hash", str), ("tool_calls", list),
                                      ("messages", list)), "status", STATUSES)
        return _verified(record, data, CONVBENCH_RECORD_FORMAT, CHECKED_TURN_FORMAT, "played again")


def _verified(record, data: dict, newest: int, checked_from: int, redone: str):
    """`record` as read from `data`, refused when of a newer format, or of a checked one whose check
    no longer matches what the line holds (edited by hand)."""
    if not isinstance(record.format, int) or isinstance(record.format, bool) or record.format < 1:
        raise RecordError(f"field 'format' must be a whole number from 1, got {record.format!r}")
    if record.format > newest:
        raise RecordError(f"field 'format' is {record.format}: written by a newer ihbench (this one reads up to "
                          f"{newest}); upgrade ihbench to read it")
    if record.format >= checked_from and data.get("check") != _check_of(data):
        raise RecordError("changed since it was written (what it holds no longer matches the check written with "
                          f"it: edited by hand?); left out, and {redone}")
    return record


def _with_check(data: dict, checked: bool) -> dict:
    return {**data, "check": _check_of(data)} if checked else data


def _check_of(data: dict) -> str:
    payload = json.dumps({k: v for k, v in data.items() if k != "check"}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def of_the_run(info):
    """The check of each turn record against the run that holds it (`info`: its run.json): one
    answered by another model, or in another modality or with another --seed, was copied from another
    run; left out (said naming its line), and played again."""
    from ihbench.records import copied_from_another_run
    from ihbench.seeds import record_seed

    def fits(record: TurnRecord) -> Optional[str]:
        return copied_from_another_run(
            info, model=record.model, modality=record.modality, seed=record.seed, verb="answered", noun="a turn",
            drawn=lambda seed: record_seed(seed, f"{record.benchmark}/{record.turn}", record.epoch),
            then=", and played again")

    return fits


def _checked(cls, data, required, choice: str, choices):
    """A record of `cls` from a line read back: the `required` (name, type) fields present and typed,
    `choice` one of `choices`; keys a newer writer added are left out."""
    if not isinstance(data, dict):
        raise RecordError("not a record object")
    for name, kinds in required:
        if not isinstance(data.get(name), kinds) or isinstance(data.get(name), bool):
            raise RecordError(f"field {name!r} must be {kinds.__name__}, got {data.get(name)!r}")
    if data[choice] not in choices:
        raise RecordError(f"field {choice!r} must be one of {', '.join(choices)}, got {data[choice]!r}")
    known = {name for name in cls.__dataclass_fields__}
    return cls(**{key: value for key, value in data.items() if key in known})


CONV_JUDGMENT_FORMAT = 2  # 2: with `check` (a verdict edited by hand is judged again, never scored)
CHECKED_JUDGMENT_FORMAT = 2
JUDGE_OUTCOMES = ("judged", "judge_error")


@dataclass
class ConvJudgmentRecord:
    """One turn of one conversation (epoch) as the ConversationBench judge scored it, or the
    judge_error that stopped its conversation's judging (never a failure of the model; judged again
    by the next `ihbench judge`). The last record of an (epoch, turn) counts."""

    benchmark: str
    epoch: int
    turn: int
    outcome: str
    judge_model: str
    prompt_version: str
    prompt_hash: str
    conversation_hash: str  # the transcript judged: a conversation played again is judged again
    judge_context: list = field(default_factory=list)  # what the judge saw beyond the original's prompt
    scores: Optional[dict] = None  # final, after realignment: dimension -> True, False or None
    initial: Optional[dict] = None  # the judge's phase-1 verdict, as it answered
    reasoning: str = ""
    notes: list = field(default_factory=list)  # what realignment did to this turn
    normalised: list = field(default_factory=list)  # dimensions scored out of scope, set to null
    turn_taking_issues: list = field(default_factory=list)
    turn_taking_supported: bool = False
    turn_taking_reason: str = ""  # why turn_taking was not measured, or what measured it
    tracking: list = field(default_factory=list)  # the judge's function_calls entries naming this turn
    conversation_notes: str = ""
    mode: str = "on_policy"
    data: Optional[str] = None  # the benchmark judged against (a reference harness's folder does not name it)
    config: Optional[str] = None
    window: int = 0
    windows: int = 1
    request_tokens: Optional[int] = None  # the estimate the window plan used
    context_tokens: Optional[int] = None  # the judge's context the plan had to fit
    error: Optional[str] = None
    calls: int = 0
    cached: bool = False
    latency_s: float = 0.0
    time: str = ""
    format: int = CONV_JUDGMENT_FORMAT

    @property
    def key(self) -> tuple[int, int]:
        return self.epoch, self.turn

    @property
    def judged(self) -> bool:
        return self.outcome == "judged"

    def to_json(self) -> dict:
        return _with_check(asdict(self), self.format >= CHECKED_JUDGMENT_FORMAT)

    @classmethod
    def from_json(cls, data: dict) -> "ConvJudgmentRecord":
        record = _checked(cls, data, (("benchmark", str), ("epoch", int), ("turn", int), ("outcome", str),
                                      ("judge_model", str), ("prompt_hash", str), ("conversation_hash", str)),
                          "outcome", JUDGE_OUTCOMES)
        if record.judged and not isinstance(record.scores, dict):
            raise RecordError("a judged record needs its 'scores'")
        return _verified(record, data, CONV_JUDGMENT_FORMAT, CHECKED_JUDGMENT_FORMAT, "judged again")
