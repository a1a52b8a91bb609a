"""The lexical half of the grounding check of the agent's own scripted turns: every number, time,
amount, date and percentage an agent turn says must be traceable to what the agent was given (the
system prompt, the knowledge base) or to what was said earlier in the call (either side).

Readers found scripted agent turns stating facts nobody gave the agent; a benchmark whose history
teaches the model invented facts, or whose criteria build on them, measures the script's error.
Numbers are what a lexical check can trace without false alarms: they are compared as values
(`numbers.py`), so the dev set's spoken "four hundred twelve dollars and eighty-seven cents" is the
knowledge base's "$412.87", and "three eighteen" is $318. Not traced: zero and one (ordinary words:
"one more thing"); the parts of a known value ("ninety-nine dollars" of "$99.66"), which is how
people read amounts; a value said as approximate ("about", "roughly") within 5 % of a known
one; small counts (two to ten) without a unit ("two things help"); written identifiers
("QZ-48213"). Arithmetic on known facts (a sum, a count of days) is flagged: a reader confirms it
and records why in the turn's `accepted` list (FORMAT.md). Facts that are not numbers, and procedures,
need the judge (`ihbench verify --judge-model`).
"""
from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Optional

from ..sources import SourceConversation, SourceTurn
from .numbers import ORDINAL_WORDS, Quantity, digit_runs, quantities
from .words import flatten

#: numbers too common as words to trace ("one more try", "no one", "zero fees")
ORDINARY = {"0", "1"}
#: a small count is a fact to trace only with a unit ("nine days", "two dollars"); bare, it is talk
#: ("two things help", "one account or two")
SMALL = {str(n) for n in range(2, 11)}
UNIT = re.compile(r"^[\s-]*(?:dollars?|cents?|percent|%|days?|nights?|weeks?|months?|years?|hours?|minutes?|"
                  r"business|calendar|a\.?m\.?|p\.?m\.?|o'clock|in the (?:morning|afternoon|evening))\b", re.IGNORECASE)
APPROXIMATE = re.compile(r"\b(?:about|roughly|around|nearly|almost|approximately|just over|just under|some)\s+"
                         r"(?:a\s+|an\s+)?$", re.IGNORECASE)
TOLERANCE = Decimal("0.05")


def given_texts(conversation: SourceConversation) -> list[str]:
    """What the agent is given before the call: its instructions and the knowledge base."""
    c = conversation
    return [c.system_message, c.domain.get("description", ""), flatten(c.knowledge_base)]


def said_before(conversation: SourceConversation, turn: SourceTurn) -> list[str]:
    """What the agent and the caller said before `turn`'s agent message (the agent's own earlier
    turns in full: it knows what it planned; whether that was grounded is its own turn's check)."""
    return [text for t in conversation.turns[: turn.index] for text in (t.assistant, t.user)]


@lru_cache(maxsize=1 << 14)  # a call's texts are read again at every later turn
def _numbers(text: str, parts: bool) -> tuple[frozenset, tuple]:
    values = set()
    found = quantities(text)
    for q in found:
        if q.digits:
            continue
        for value in q.values:
            values.add(value)
            if not parts:
                continue
            whole, _, fraction = value.partition(".")
            values.add(whole)
            if fraction:
                values.update({str(int(fraction)), str(int(fraction.ljust(2, "0")))})
    return frozenset(values), tuple(digit_runs(text, found))


class Known:
    """The numbers of some texts, with the parts a speaker may round or read a value to (`parts`)."""

    def __init__(self, *texts: str, parts: bool = True):
        self.values: set[str] = set(ORDINARY) if parts else set()
        self.runs: list[str] = []
        for text in texts:
            values, runs = _numbers(text, parts)
            self.values |= values
            self.runs += runs
        self.decimals = [Decimal(v) for v in self.values]

    def has(self, q: Quantity, approximate: bool = False) -> bool:
        if q.digits:
            return any(q.value in run for run in self.runs)
        if any(value in self.values for value in q.values):
            return True
        if any(len(value) >= 3 and value.isdigit() and any(value in run for run in self.runs) for value in q.values):
            return True  # a code or clock time read as a number: "nine twelve" of 9:12
        if approximate:
            value = Decimal(q.value)
            return any(abs(value - known) <= TOLERANCE * known for known in self.decimals if known > 1)
        return False


def unsupported_numbers(conversation: SourceConversation, turn: SourceTurn, known: Optional[Known] = None) -> list[str]:
    """The numbers of `turn`'s agent message (as written there) found nowhere the agent could have them from."""
    known = known or Known(*given_texts(conversation), *said_before(conversation, turn))
    text = turn.assistant
    return [text[q.start:q.end] for q in quantities(text) if traced(q, text)
            and not known.has(q, approximate=bool(APPROXIMATE.search(text[max(0, q.start - 30):q.start])))]


def traced(q: Quantity, text: str) -> bool:
    """Codes, values above ten, dates ("the fourth") and small counts with a unit ("nine days");
    not a written identifier (letters and digits in one token: "QZ-48213", "4C"), which names a
    record the agent's systems may issue during the call (an order or claim number) rather than
    state a fact: whether it is the knowledge base's is the judge's question."""
    if re.search(r"[A-Za-z][-/]?$", text[max(0, q.start - 2):q.start]) or re.match(r"[A-Za-z]", text[q.end:q.end + 1]):
        return False
    spoken = text[q.start:q.end].lower()
    ordinal = bool(re.search(r"(?:\d(?:st|nd|rd|th)|" + "|".join(ORDINAL_WORDS) + r")$", spoken))
    return q.digits or q.value not in SMALL or ordinal or bool(UNIT.match(text[q.end:]))
