"""A barge-in run read as interruption points: what `ihbench judge` and `ihbench report` score.

Each placed cut is an `EvalItem` (the call up to it, the model's cut message as heard, the caller's
interjection, the rubric and the live blind baseline), and the model's next message is its answer,
as a `ResponseRecord` of epoch 0: the same judges then score it, RQ per type and TF against the
live baseline, with the same metric modules and intervals as a static run. `RunDir.load` hands
these over for a run whose run.json says it is a barge-in run, so neither command needs a branch.
Items are built from the transcripts (judges read text), so their digests never depend on audio.
Rounds played on an older version of a conversation (`records.conversation_hash`: the suite changed
since) are left out, said in one warning, until `ihbench barge-in` plays them again.
"""
from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from pathlib import Path

from typing import Optional

from ihbench.dataset.io import read_json_object
from ihbench.records import RECORD_FORMAT, RecordError, ResponseRecord, RunInfo, read_typed

from .records import RoundChecks, RoundRecord, conversation_hash, round_format, round_redone

log = logging.getLogger("ihbench")

RECORDS = "barge_in.jsonl"
FAILED_ROUNDS = "failed_rounds"  # set on the loaded RunInfo's extra, never written to run.json
#: {conversation: why some of its records are not scored} (loaded extra too): what judgments of
#: points the run no longer has are of, said instead of calling them another run's
HELD_BACK = "held_back"
_SAID: set = set()  # (file, size, mtime, torn lines, stale conversations) already warned of in this process


def is_barge_in(info: RunInfo) -> bool:
    return isinstance(info.extra.get("barge_in"), dict)


def rounds(path: Path) -> dict[tuple[str, int], RoundRecord]:
    """The durable rounds of a run folder (`records.durable`): a conversation being played, or
    killed while it was, shows only what it had when its last playing closed."""
    return read_rounds(path)[0]


def read_rounds(path: Path, conversations: Optional[set] = None) -> tuple[dict[tuple[str, int], RoundRecord],
                                                                         dict[str, str], list[int]]:
    """(the durable rounds, {conversation: why it is held back}, the line numbers of a last line cut
    off mid-way). A damaged line is said by the reader (`read_records`). A conversation is held back
    (left out of judge and report, whole) while the next `ihbench barge-in` would play it again from
    a round before its last: its last playing has records but no closing one (killed, or its closing
    line cut off), or a round is missing among those it kept (its line damaged). A damaged line that
    leaves nothing missing (a line copied again by hand) holds nothing back; a conversation that
    stopped on a failed round keeps its points before it, and the failure is counted. `conversations`:
    the ids of the run's conversations, where the caller has them (a damaged line naming another is
    then said to lead to nothing)."""
    damaged: list = []
    torn: list[int] = []
    info = _run_info(path)
    checks = RoundChecks(info, conversations)
    read_typed(Path(path) / RECORDS, RoundRecord, redone=round_redone, damaged=damaged, torn=torn,
               oldest=round_format(info, Path(path) / "run.json"), fits=checks.fits, then=checks.then)
    playings = checks.playings
    lines: dict[str, str] = {}  # the first damaged line naming each conversation
    for line, record, problem in damaged:
        cid = record.get("conversation_id") if isinstance(record, dict) else None
        if isinstance(cid, str):
            lines.setdefault(cid, f"line {line} of {RECORDS} is damaged ({problem})")
    why: dict[str, str] = {}
    cut = f" (line {torn[0]} is cut off mid-line)" if torn else ""
    for cid in playings.unclosed():
        why[cid] = f"its last playing has no closing record in {RECORDS}{cut}"
    for cid in playings.conversations():
        number = playings.missing(cid)
        if number is not None and cid not in why:
            why[cid] = lines.get(cid) or f"its round {number} is missing (a damaged line of {RECORDS})"
    return playings.durable(), why, torn


def _run_info(path: Path) -> Optional[RunInfo]:
    """run.json, or None when it cannot be read (the command reading the run names that)."""
    try:
        return RunInfo.from_json(read_json_object(Path(path) / "run.json", RecordError))
    except (RecordError, OSError):
        return None


def current_rounds(run_path: Path, conversations: list) -> tuple[dict[tuple[str, int], RoundRecord], dict[str, str]]:
    """(the durable rounds of the suite's conversations as they are now, {conversation: why some of
    its records are not scored}): a conversation whose rounds were played on another version of it
    is left out, with one warning for them all, as is a last line cut off mid-way."""
    hashes = {c.conversation_id: conversation_hash(c) for c in conversations}
    latest, why, torn = read_rounds(run_path, set(hashes))
    stale = sorted({cid for (cid, _), r in latest.items() if cid in hashes and r.data_hash != hashes[cid]})
    records = Path(run_path) / RECORDS
    state = (str(records.resolve()), *((records.stat().st_size, records.stat().st_mtime_ns) if records.exists() else ()))
    if (*state, tuple(torn), tuple(stale)) not in _SAID:  # a report reads the rounds more than once: said once
        _SAID.add((*state, tuple(torn), tuple(stale)))
        _say(run_path, torn, stale)
    why.update((cid, "it was played on an older version of the suite") for cid in stale)
    why = {cid: reason for cid, reason in why.items() if cid in hashes}  # a line naming no conversation of the suite
    # held back means left out whole until it is played again: scoring the rounds it kept would
    # contradict what judge and report say of it
    return {key: r for key, r in latest.items() if key[0] in hashes and key[0] not in why}, why


def _check_moved_suite(run_path: Path, data: str, conversations: list) -> None:
    """A barge-in run's suite given anew is the one it played: every conversation it played is in it, as
    it was (another dataset left every round out as "played on an older version", and said nothing of --data)."""
    from ihbench.dataset.errors import UsageError

    hashes = {c.conversation_id: conversation_hash(c) for c in conversations}
    latest, _, _ = read_rounds(run_path, set(hashes))
    for (cid, _), record in sorted(latest.items()):
        if hashes.get(cid) != record.data_hash:
            what = "is not in it" if cid not in hashes else "differs there from the one it played"
            raise UsageError(f"--data {data}: not the suite {run_path} played (its conversation {cid} {what}); "
                             "give the dataset the run used")


def _say(run_path: Path, torn: list[int], stale: list[str]) -> None:
    for line in torn:  # said by a reader: `ihbench barge-in` (the writer) cuts it and plays its conversation again
        log.warning("%s line %d: incomplete (cut mid-line: the run stopped while writing it, or the file was cut); "
                    "left out, with the rest of its conversation's last playing, until `ihbench barge-in` with the "
                    "same --out plays that conversation again", Path(run_path) / RECORDS, line)
    if stale:
        log.warning("%s: %d conversation(s) were played on an older version of the suite (%s) and are left out; "
                    "`ihbench barge-in` with the same --out plays them again", run_path, len(stale),
                    ", ".join(stale[:5]) + (", ..." if len(stale) > 5 else ""))


def load_points(run_path: Path, info: RunInfo, moved_to: Optional[str] = None) -> tuple[RunInfo, list[ResponseRecord],
                                                                                      dict]:
    """(run.json with n_items the points found, the model's answers to them, {item id: EvalItem}).
    `moved_to`: where the run's suite is now (`--data`), checked to hold what the run played."""
    from ihbench.dataset.load import load_conversations

    from .conversation import Call

    conversations = load_conversations(moved_to or info.data, split=info.split)
    if moved_to is not None:
        _check_moved_suite(run_path, moved_to, conversations)
    latest, held_back = current_rounds(run_path, conversations)
    played = {key[0] for key in latest}
    responses, items, failed = [], {}, 0
    for conversation in conversations:
        if conversation.conversation_id not in played:
            continue
        call = Call(conversation, "text", lambda text: b"")
        number = 1
        while (conversation.conversation_id, number) in latest:
            record = latest[(conversation.conversation_id, number)]
            answer = latest.get((conversation.conversation_id, number + 1))
            if not record.played:
                before = latest.get((conversation.conversation_id, number - 1))
                failed += not (before is not None and before.placed)  # else it is the failed answer's record
                break
            call.add(as_turn(record))
            if record.placed and answer is not None:
                item = call.item(number)
                items[item.id] = item
                responses.append(ResponseRecord(
                    id=item.id, epoch=0, response=answer.reply if answer.played else None,
                    error=None if answer.played else answer.error or "the round failed", seed=answer.seed,
                    latency_s=answer.latency_s, input_tokens=answer.input_tokens, output_tokens=answer.output_tokens,
                    modality=info.modality, conversation_id=item.conversation_id,
                    interruption_type=item.interruption_type, depth=item.depth, reasoning=answer.reasoning,
                    item_hash=item.content_hash, audio_turns=answer.audio_turns, format_version=RECORD_FORMAT))
            number += 1
    # a round that failed and answers no placed cut has no record of its own: its conversation
    # stopped there, and `ihbench barge-in` plays it again; counted as failed, never scored
    return dataclasses.replace(info, n_items=len(items), epochs=1,
                               extra={**info.extra, FAILED_ROUNDS: failed, HELD_BACK: held_back}), responses, items


def failed_rounds(info: RunInfo) -> int:
    """Rounds of a barge-in run that failed outside an answer to a cut (0 for any other run)."""
    return int(info.extra.get(FAILED_ROUNDS) or 0)


def cut_counts(run_path: Path, info: RunInfo) -> dict:
    """Planned cuts: placed, and those that could not be placed, by reason (the words of the reason
    before its colon: "reply too short", "no place inside a sentence"); over the rounds scored (the
    suite's current version)."""
    from ihbench.dataset.load import load_conversations

    latest, _ = current_rounds(run_path, load_conversations(info.data, split=info.split))
    played = [r for r in latest.values() if r.played and r.target]
    reasons = Counter(r.cut["reason"].split(":", 1)[0] for r in played if r.cut and not r.placed)
    # how each placed cut was timed (the words of its clock before the colon: "measured", "estimated",
    # "aligned", "spread"): a cut on words spread by estimate is said, never passed off as aligned
    clocks = Counter((r.clock or "unknown").split(":", 1)[0] for r in played if r.placed)
    return {"planned": len(played), "placed": sum(r.placed for r in played), "not_placed": sum(reasons.values()),
            "not_placed_by_reason": dict(sorted(reasons.items())), "placed_by_clock": dict(sorted(clocks.items())),
            "refused_interjections": sum(len(r.refused) for r in played)}


def as_turn(record: RoundRecord) -> dict:
    """A played round in the generation pipeline's shape, as its agents and the protocol read it."""
    turn = {"stage": record.stage, "assistant": record.reply, "user": record.user}
    if record.placed:
        turn["delivered"] = record.cut["heard"]
        turn["interruption"] = {"type": record.target, **record.rubric, "baseline": record.baseline}
    return turn
