"""Findings of the content checks, and the justifications that settle them.

A content check (a criterion a correct reply may fail, a number the agent was never given, two
verdicts that disagree) is a question for a reader, not always a defect: readers disagreed on
several. A reader who decides a finding is a false alarm records why, next to the data it is
about, and the finding falls silent; the reason stays in the file for the next reader:

- about a point's criteria: `turns[i].interruption.review.accepted`, entries
  `{"check": "restates_heard", "criterion": 1, "reason": "..."}` (`criterion`: the RQ index,
  0-based as in `rq_rubrics[1]`, or "tf");
- about the agent's own turn: `turns[i].accepted`, entries
  `{"check": "unsupported_number", "text": "six forty-five", "reason": "..."}` (`text`: the words
  the finding quotes) or `{"check": "ungrounded_turn", "reason": "..."}` (with an optional `text`:
  only the judge's claims that contain those words).

A justification that names an unknown check, sits in the wrong place, points at no criterion or
has an empty reason is itself a problem: a silenced finding must say why.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from ..sources import SourceConversation, SourceTurn
from .words import has_visible

#: check name -> where its justification lives ("point": the point's review; "turn": the turn)
CHECKS = {
    "quotes_unheard": "point",        # a criterion quotes words only in the unheard part
    "restates_heard": "point",        # a criterion demands a fact the caller already heard twice
    "inconsistent_verdict": "point",  # near-identical criteria and behaviour, opposite baseline verdicts
    "reference_fails": "point",       # judge: the agent's own continuation in the source fails the criterion
    "blind_reply_fails": "point",     # judge: a correct reply written blind from the model's context fails it
    "unsupported_number": "turn",     # a number in an agent turn found nowhere the agent could have it from
    "ungrounded_turn": "turn",        # judge: an agent turn states a fact or promise it was not given
}

Criterion = Union[int, str]  # an RQ index, or "tf"


@dataclass(frozen=True)
class Finding:
    check: str
    turn: SourceTurn
    field: str  # e.g. "turns[3].interruption.rq_rubrics[1]", "turns[5].assistant"
    message: str
    criterion: Optional[Criterion] = None  # point checks: which criterion
    text: Optional[str] = None  # unsupported_number: the words found
    #: another point (conversation, turn, criterion) whose justification settles this finding too
    partner: Optional[tuple] = None


def _entries(conversation: SourceConversation, turn: SourceTurn):
    """(field, entry, scope) for each justification recorded for `turn`."""
    raw = conversation.raw["turns"][turn.index]
    where = [(f"turns[{turn.index}].accepted", raw.get("accepted"), "turn")]
    if isinstance(raw.get("interruption"), dict) and isinstance(raw["interruption"].get("review"), dict):
        where.append((f"turns[{turn.index}].interruption.review.accepted",
                      raw["interruption"]["review"].get("accepted"), "point"))
    for field, entries, scope in where:
        if entries is None:
            continue
        if not isinstance(entries, list):
            yield field, None, scope
            continue
        for index, entry in enumerate(entries):
            yield f"{field}[{index}]", entry, scope


def invalid_justifications(conversation: SourceConversation) -> list[tuple[SourceTurn, str, str]]:
    """(turn, field, problem) for each justification that cannot settle anything."""
    problems = []
    for turn in conversation.turns:
        for field, entry, scope in _entries(conversation, turn):
            def bad(name, message):
                problems.append((turn, f"{field}.{name}" if name else field, message))
            if entry is None or not isinstance(entry, dict):
                bad("", "must be a list of {\"check\", \"reason\", ...} objects")
                continue
            check, reason = entry.get("check"), entry.get("reason")
            if check not in CHECKS:
                bad("check", f"unknown check {check!r}; expected one of {', '.join(CHECKS)}")
                continue
            if CHECKS[check] != scope:
                place = "the point's interruption.review.accepted" if CHECKS[check] == "point" else "the turn's accepted"
                bad("check", f"{check!r} is settled in {place}, not here")
            if not isinstance(reason, str) or not has_visible(reason):
                bad("reason", "is empty: a justification says why the finding is a false alarm")
            if CHECKS[check] == "point":
                criterion = entry.get("criterion")
                count = len(turn.interruption.rq_rubrics) if turn.interruption else 0
                if not (criterion == "tf" or (isinstance(criterion, int) and not isinstance(criterion, bool)
                                              and 0 <= criterion < count)):
                    bad("criterion", f"must be \"tf\" or an RQ index 0-{count - 1}, got {criterion!r}")
            if check == "unsupported_number" and not (isinstance(entry.get("text"), str) and entry["text"].strip()):
                bad("text", "is missing: name the words the finding quotes")
            unknown = set(entry) - {"check", "reason", "criterion", "text"}
            if unknown:
                bad(sorted(unknown)[0], "unknown key; a justification has check, reason, criterion or text")
    return problems


def justification(conversation: SourceConversation, turn: SourceTurn, check: str,
                  criterion: Optional[Criterion] = None, text: Optional[str] = None) -> Optional[str]:
    """The recorded reason that settles this finding, or None."""
    for _, entry, scope in _entries(conversation, turn):
        if not isinstance(entry, dict) or entry.get("check") != check or CHECKS.get(check) != scope:
            continue
        if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            continue
        if criterion is not None and entry.get("criterion") != criterion:
            continue
        if text is not None and "text" in entry:  # a number is named exactly; a judge's claim by words it contains
            wanted, found = str(entry["text"]).strip().lower(), text.strip().lower()
            if (wanted != found) if check == "unsupported_number" else (wanted not in found):
                continue
        return entry["reason"]
    return None


def unsettled(conversation: SourceConversation, findings: list[Finding]) -> list[Finding]:
    """The findings no justification settles (a pair's finding: a justification at either point)."""
    def settled(f: Finding) -> bool:
        if justification(conversation, f.turn, f.check, f.criterion, f.text):
            return True
        return bool(f.partner and justification(*f.partner[:2], f.check, f.partner[2]))
    return [f for f in findings if not settled(f)]

