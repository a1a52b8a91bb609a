"""The records of a barge-in run: one line of `barge_in.jsonl` per (conversation, round) and attempt.

A round is the model's message and the caller's answer to it. A round that was a target of the
planner carries its cut (time, word, heard part) and the reply's word timings, or the reason the
cut could not be placed; a placed cut carries the interjection (and the refused ones), and the
rubric and blind baseline written right after it. The model's answer to the cut is the next
round's `reply`. Every agent answer of the round is logged in `calls`.

The last record of a key counts: a round that failed (`status` "error") stops its conversation
and is played again by the next run. A resumed conversation rebuilds its state from its played
rounds only, so it continues with exactly the call it had.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Optional

from ihbench.records import RecordError

BARGE_IN_RECORD_FORMAT = 1
STATUSES = ("played", "error")


@dataclass(frozen=True)
class RoundRecord:
    conversation_id: str
    round: int  # 1-based: the suite's turn number
    status: str
    seed: int
    data_hash: str  # of the suite's conversation: a resume never continues on other data
    stage: Optional[str] = None
    plan: Optional[dict] = None  # the pipeline planner's answer
    target: Optional[str] = None  # the suite's interruption type for this round, if any
    reply: Optional[str] = None  # the model's whole message
    latency_s: Optional[float] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    reasoning: Optional[str] = None
    audio_turns: Optional[int] = None  # user turns the model heard as audio for this reply
    #: the reply on the clock: [word, first char, last char, start s, end s, sentence] per word
    words: Optional[list] = None
    duration_s: Optional[float] = None
    cut: Optional[dict] = None  # {time_s, word, heard, sentence} or {reason} (planned, not placed)
    user: Optional[str] = None  # the caller's answer: the interjection after a cut
    refused: list = field(default_factory=list)  # interjections refused for leaking the unheard part
    rubric: Optional[dict] = None  # {tf_rubric, rq_rubrics}
    baseline: Optional[str] = None
    end: bool = False  # the planner ended the call with this round
    calls: list = field(default_factory=list)
    error: Optional[str] = None
    time: str = ""
    format_version: int = BARGE_IN_RECORD_FORMAT

    @property
    def key(self) -> tuple[str, int]:
        return self.conversation_id, self.round

    @property
    def played(self) -> bool:
        return self.status == "played"

    @property
    def placed(self) -> bool:
        return self.cut is not None and "reason" not in self.cut

    def to_json(self) -> dict:
        """A shallow view, written out at once (`asdict` would deep-copy every word timing first)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Any) -> "RoundRecord":
        if not isinstance(data, dict):
            raise RecordError("not a JSON object")
        for name, kind in (("conversation_id", str), ("round", int), ("status", str), ("seed", int),
                           ("data_hash", str)):
            if not isinstance(data.get(name), kind) or isinstance(data.get(name), bool):
                raise RecordError(f"field {name!r} missing or not {kind.__name__}")
        if data["status"] not in STATUSES:
            raise RecordError(f"field 'status' must be one of {', '.join(STATUSES)}, got {data['status']!r}")
        if data["status"] == "played" and not isinstance(data.get("reply"), str):
            raise RecordError("a played round without the model's reply")
        cut = data.get("cut")
        if data["status"] == "played" and isinstance(cut, dict) and "reason" not in cut:
            if not isinstance(data.get("user"), str) or not isinstance(data.get("rubric"), dict):
                raise RecordError("a placed cut without its interjection or rubric")
            if not (data["reply"] or "").startswith(cut.get("heard") or "\x00"):
                raise RecordError("the heard part of the cut is not the beginning of the reply")
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
