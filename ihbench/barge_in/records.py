"""The records of a barge-in run: one line of `barge_in.jsonl` per (conversation, round) and attempt.

A round is the model's message and the caller's answer to it. A round that was a target of the
planner carries its cut (time, word, heard part) and the reply's word timings, or the reason the
cut could not be placed; a placed cut carries the interjection (and the refused ones), and the
rubric and blind baseline written right after it. The model's answer to the cut is the next
round's `reply`. Every agent answer of the round is logged in `calls`.

A conversation's rounds are durable together, not one by one (an fsync per round cost more than
the orchestration's own work): rounds are written as they come (flushed, not synced), and the
last record of a playing, the one that ends the conversation or stops it on a failed round
(`status` "error"), carries `closes` and is synced, which makes the rounds before it durable.
`durable` reads the file that way: the rounds of a conversation count up to its latest closing
record, the later records of a key replace the earlier ones, and rounds after a conversation's
last closing record (a playing killed or cut off by a crash) do not count: the next run plays that
conversation again from its last closing record (from its start, when it has none), and its new
records supersede them. A failed round is played again by the next run, from there. A resumed
conversation rebuilds its state from its durable played rounds only, so it continues with exactly
the call it had. Records of format 1 were synced one by one: each counts on its own. Every playing
starts where the durable rounds stop: a record that starts one anywhere else (a line copied to the
end after its conversation ended) was written by no run, and is named and left out by every reader
alike (`Playings.out_of_place`). A conversation is held back (left out of judge and report, played
again by the next run) only while the next run would play something of it (`Playings.complete`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, Optional

from ihbench.records import RecordError

BARGE_IN_RECORD_FORMAT = 3  # 2: rounds durable per conversation (`closes`); 3: with `check`
#: the first format whose records carry a check of all they hold: a cut, a word time, a clock or a
#: reply edited by hand makes the line damaged (left out, and played again), never scored
CHECKED_ROUND_FORMAT = 3
STATUSES = ("played", "error")


@dataclass(frozen=True)
class RoundRecord:
    conversation_id: str
    round: int  # 1-based: the suite's turn number
    status: str
    seed: int
    data_hash: str  # `conversation_hash` of the suite's conversation: its version, as this round read it
    stage: Optional[str] = None
    plan: Optional[dict] = None  # the pipeline planner's answer
    target: Optional[str] = None  # the suite's interruption type for this round, if any
    reply: Optional[str] = None  # the model's whole message
    latency_s: Optional[float] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    reasoning: Optional[str] = None
    #: the reply may have been cut by --max-new-tokens: kept and scored, counted in the run's note
    ended_at_budget: bool = False
    #: the model that played it, `loader:model_path` as run.json has them (None: before it was kept)
    model: Optional[str] = None
    audio_turns: Optional[int] = None  # user turns the model heard as audio for this reply
    modality: Optional[str] = None  # the run's --modality (None: before it was kept)
    #: the reply on the clock: [word, first char, last char, start s, end s, sentence] per word
    words: Optional[list] = None
    duration_s: Optional[float] = None
    clock: Optional[str] = None  # how the words were timed (`clock.MEASURED`, or the estimate and why)
    cut: Optional[dict] = None  # {time_s, word, heard, sentence} or {reason} (planned, not placed)
    user: Optional[str] = None  # the caller's answer: the interjection after a cut
    refused: list = field(default_factory=list)  # interjections refused for leaking the unheard part
    rubric: Optional[dict] = None  # {tf_rubric, rq_rubrics}
    baseline: Optional[str] = None
    end: bool = False  # the planner ended the call with this round
    closes: bool = False  # the last record of a playing (synced): the rounds before it are durable
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
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**data, "check": _round_check(data)} if self.format_version >= CHECKED_ROUND_FORMAT else data

    @classmethod
    def from_json(cls, data: Any) -> "RoundRecord":
        if not isinstance(data, dict):
            raise RecordError("not a JSON object")
        for name, kind in (("conversation_id", str), ("round", int), ("status", str), ("seed", int),
                           ("data_hash", str)):
            if not isinstance(data.get(name), kind) or isinstance(data.get(name), bool):
                raise RecordError(f"field {name!r} missing or not {kind.__name__}")
        version = data.get("format_version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise RecordError(f"field 'format_version' must be a whole number from 1, got {version!r}")
        if version > BARGE_IN_RECORD_FORMAT:
            raise RecordError(f"field 'format_version' is {version}: written by a newer ihbench (this one reads up to "
                              f"{BARGE_IN_RECORD_FORMAT}); upgrade ihbench to read it")
        if version >= CHECKED_ROUND_FORMAT and data.get("check") != _round_check(data):
            raise RecordError("changed since it was written (what it holds no longer matches the check written with "
                              "it: edited by hand?)")
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


def round_redone(record: dict, number: int, good: list) -> bool:
    """A damaged line whose round was played again later (a good record of its conversation and round
    on a later line) is no longer missing: the replay stands in for it."""
    key = (record.get("conversation_id"), record.get("round"))
    return isinstance(key[0], str) and any(line > number and (r.get("conversation_id"), r.get("round")) == key
                                           for line, r in good)


def round_format(info, run_json) -> Optional[int]:
    """The round format the run began with (run.json's `barge_in.round_format`; None before it was
    kept): every record older than it was edited by hand. Any other value than a format this ihbench
    writes is refused, naming the file: a later format (or a text) left every round out, and each
    resume played them all again and appended them once more."""
    from ihbench.dataset.errors import UsageError

    settings = info.extra.get("barge_in") if info else None
    value = settings.get("round_format") if isinstance(settings, dict) else None
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= BARGE_IN_RECORD_FORMAT:
        newer = " (written by a newer ihbench? upgrade it)" if isinstance(value, int) and \
            not isinstance(value, bool) and value > BARGE_IN_RECORD_FORMAT else " (edited by hand?)"
        raise UsageError(f"{run_json}: field 'barge_in.round_format' must be a whole number from 1 to "
                         f"{BARGE_IN_RECORD_FORMAT}, got {value!r}{newer}; restore it")
    return value


class RoundChecks:
    """The checks of a run's rounds, in file order (`fits`, for `read_typed`), against the run that
    holds them (`info`: its run.json, or None), and what becomes of a line refused (`then`). A round
    played by another model, or drawn with another --seed, was copied from another barge-in run and
    is not this model's answer; a round no playing of the run would have written where it stands
    (`Playings.out_of_place`) was not written by a run. `playings` holds the rounds accepted."""

    def __init__(self, info, conversations: Optional[set] = None) -> None:
        self.info = info
        self.conversations = conversations  # the ids of the run's conversations, where the reader has them
        self.playings = Playings()

    def fits(self, record: "RoundRecord") -> Optional[str]:
        from ihbench.dataset.schema import item_id
        from ihbench.records import copied_from_another_run
        from ihbench.seeds import record_seed

        # a round the run has already played itself stays as it is: nothing is played again for the line
        then = ", and the line can be removed (the run played that round itself)" if self.playings.played(record) \
            else ", and played again"
        problem = copied_from_another_run(
            self.info, model=record.model, modality=record.modality, seed=record.seed, verb="played", noun="a round",
            drawn=lambda seed: record_seed(seed, item_id(record.conversation_id, record.round), 0),
            then=then) or self.playings.out_of_place(record)
        if problem is None:
            self.playings.add(record)
        return problem

    def then(self, record) -> str:
        """A damaged line changes nothing in a conversation whose rounds are whole without it: said so,
        not "played again" (nothing would be); else its conversation is played again from there."""
        cid = record.get("conversation_id") if isinstance(record, dict) else None  # a line not an object: none
        if self.playings.complete(cid):
            return "; left out: its conversation is whole without it, and nothing is played again (the line can " \
                   "be removed)"
        if not isinstance(cid, str):
            return "; left out: it names no conversation (a round of one missing because of it is played again " \
                   "by `ihbench barge-in`; the line can be removed)"
        if self.conversations is not None and cid not in self.conversations:
            return f"; left out: {cid!r} is no conversation of this run, so nothing is played for it (the line can " \
                   "be removed)"
        return "; left out, and `ihbench barge-in` plays its conversation again from there"


def _round_check(data: dict) -> str:
    payload = json.dumps({k: v for k, v in data.items() if k != "check"}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class Playings:
    """A run's rounds read in file order, the way its writer wrote them (see the module's docstring):
    each playing of a conversation starts where the durable rounds so far stop (its first round not
    played; round 1 on another version of the suite) and goes on round after round until its closing
    record. A record that starts a playing anywhere else (a line copied by hand after its conversation
    ended) was not written by a run: resume, judge and report would each make something else of it."""

    def __init__(self) -> None:
        self._kept: dict[str, dict[int, RoundRecord]] = {}  # the durable rounds, by conversation
        self._pending: dict[str, dict[int, RoundRecord]] = {}  # a playing not closed yet
        self._ended: dict[str, bool] = {}  # the latest closing record was played: the conversation ended

    def add(self, record: RoundRecord) -> None:
        cid = record.conversation_id
        kept = self._kept.setdefault(cid, {})
        if record.format_version < 2:  # synced on its own
            kept[record.round] = record
            return
        rounds = self._pending.setdefault(cid, {})
        if rounds and not _continues(rounds, record):
            rounds.clear()  # a playing killed before it closed, played again: the new one supersedes it
        rounds[record.round] = record
        if record.closes:
            for number in [number for number in kept if number > record.round]:
                del kept[number]  # an earlier playing that went further: this one ends the conversation here
            kept.update((number, r) for number, r in rounds.items() if number <= record.round)
            self._pending[cid] = {}
            self._ended[cid] = record.played

    def out_of_place(self, record: RoundRecord) -> Optional[str]:
        """Why no playing of the run wrote this record where it stands, or None."""
        cid = record.conversation_id
        rounds = self._pending.get(cid)
        if record.format_version < 2 or (rounds and _continues(rounds, record)):
            return None
        kept = self._kept.get(cid) or {}
        copied = "not written by `ihbench barge-in` (a line copied or edited by hand?); left out, and the line can be " \
                 "removed"
        if not kept or record.data_hash not in {r.data_hash for r in kept.values()}:
            if record.round == 1:  # its first playing, or one on another version of the suite
                return None
            return (f"round {record.round} of {cid} starts a playing of it, and a first playing (or one on another "
                    f"version of the suite) starts at round 1: {copied}")
        first = next(number for number in range(1, len(kept) + 2)
                     if number not in kept or not kept[number].played)
        if first > max(kept) and self._ended.get(cid):
            return (f"round {record.round} of {cid} again, after the conversation ended at round {max(kept)} with every "
                    f"round played: {copied}")
        if record.round != first:
            return (f"round {record.round} of {cid} starts a playing of it, and the run plays it again from round "
                    f"{first} (its first round not played): {copied}")
        return None

    def complete(self, cid) -> bool:
        """The conversation ended and every one of its rounds is kept, played: the next run plays
        nothing of it."""
        kept = self._kept.get(cid) if isinstance(cid, str) else None
        if not kept or self._pending.get(cid) or not self._ended.get(cid):
            return False
        return all(number in kept and kept[number].played for number in range(1, max(kept) + 1))

    def missing(self, cid: str) -> Optional[int]:
        """The first round missing among the kept ones (its line damaged): the next run plays the
        conversation again from there."""
        kept = self._kept.get(cid) or {}
        return next((number for number in range(1, max(kept, default=0) + 1) if number not in kept), None)

    def conversations(self) -> list[str]:
        return list(self._kept)

    def played(self, record: RoundRecord) -> bool:
        """The record's round is among the durable rounds, played."""
        kept = (self._kept.get(record.conversation_id) or {}).get(record.round)
        return kept is not None and kept.played

    def durable(self) -> dict[tuple[str, int], RoundRecord]:
        return {(cid, number): r for cid, kept in self._kept.items() for number, r in sorted(kept.items())}

    def unclosed(self) -> list[str]:
        return sorted(cid for cid, rounds in self._pending.items() if rounds)


def _continues(rounds: dict[int, RoundRecord], record: RoundRecord) -> bool:
    """The record is a later round of the playing that wrote `rounds` (a damaged line between them
    leaves a gap, not a new playing)."""
    last = rounds[max(rounds)]
    return record.round > last.round and record.data_hash == last.data_hash


def _read(records: Iterable[RoundRecord]) -> Playings:
    playings = Playings()
    for record in records:
        playings.add(record)
    return playings


def durable(records: Iterable[RoundRecord]) -> dict[tuple[str, int], RoundRecord]:
    """The rounds that count: {(conversation, round): record}, each conversation's rounds up to its
    latest closing record (see the module's docstring)."""
    return _read(records).durable()


def unclosed(records: Iterable[RoundRecord]) -> list[str]:
    """Conversations whose last playing wrote rounds and no closing record (`durable` keeps none of them)."""
    return _read(records).unclosed()


def conversation_hash(c) -> str:
    """The version of a suite's conversation, as a barge-in run reads it: what the caller and the
    planner are given (goal, prompt, knowledge base, intent; for a caller filled by `caller.RULES`,
    the filled knowledge base and intent and the rules' version) and where the suite's points are.
    Rounds recorded under another hash were played on an older version of the suite: they are
    played again (`run`), and never scored (`points`)."""
    from .caller import FALLBACK_VERSION, derive

    payload = [c.conversation_id, c.domain, c.goal, c.system_prompt, c.knowledge_base, c.user_intent,
               [[t.number, t.interruption_type] for t in c.turns]]
    found = derive(c)
    if found.fallbacks:  # the caller filled by `caller.RULES` (the scripted lines, say): what it was given, and how
        payload.append([FALLBACK_VERSION, found.prereq["knowledge_base"], found.intent])
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]
