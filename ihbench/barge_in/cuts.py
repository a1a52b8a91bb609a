"""Where the caller barges in: the suite's own interruption points as targets, the cut placed on
the model's own reply, seeded.

A conversation of the suite is replayed round by round; round N is a target when the suite's turn
N is an interruption, of the same type (so the on-policy points sit at the depths and types of
the static ones, and the two runs compare per type). The cut time falls inside a word of the
reply that continues a sentence, with at least three words heard and three unheard: the rule
`ihbench verify` holds every cut of the data to. A reply with no such place is a planned cut that
could not be placed, recorded with the reason; the caller then answers it whole.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional, Union

from ihbench.dataset.verify import MIN_WORDS_EACH_SIDE

from .clock import SENTENCE_END, Spoken

#: where inside the interrupted word the cut falls (never at its edges: a cut on a word boundary
#: would leave what was heard to rounding)
INSIDE_WORD = (0.2, 0.8)


@dataclass(frozen=True)
class Cut:
    time_s: float
    word: int  # index of the word being spoken at the cut (the first unheard one)
    heard: str  # the reply's characters up to the end of the last word heard
    sentence: int

    def to_json(self) -> dict:
        return {"time_s": round(self.time_s, 4), "word": self.word, "heard": self.heard, "sentence": self.sentence}


@dataclass(frozen=True)
class Unplaced:
    reason: str

    def to_json(self) -> dict:
        return {"reason": self.reason}


def targets(conversation) -> dict[int, str]:
    """Round number (1-based) -> interruption type, from the suite's conversation."""
    return {turn.number: turn.interruption_type for turn in conversation.turns if turn.interruption_type}


def place_cut(spoken: Spoken, seed: int) -> Union[Cut, Unplaced]:
    words = spoken.words
    if len(words) < 2 * MIN_WORDS_EACH_SIDE:
        return Unplaced(f"reply too short: {len(words)} word(s), a cut needs {MIN_WORDS_EACH_SIDE} heard and "
                        f"{MIN_WORDS_EACH_SIDE} unheard")
    places = [k for k in range(MIN_WORDS_EACH_SIDE, len(words) - MIN_WORDS_EACH_SIDE + 1)
              if words[k].end_s > words[k].start_s and not SENTENCE_END.search(words[k - 1].text)]
    if not places:
        return Unplaced("no place inside a sentence: every word boundary with three words on each side ends a "
                        "sentence")
    rng = random.Random(seed)
    k = rng.choice(places)
    word = words[k]
    time_s = word.start_s + rng.uniform(*INSIDE_WORD) * (word.end_s - word.start_s)
    return Cut(time_s=time_s, word=k, heard=spoken.heard_before(time_s), sentence=word.sentence)


def cut_from_json(data: Optional[dict]) -> Union[Cut, Unplaced, None]:
    if data is None:
        return None
    if "reason" in data:
        return Unplaced(data["reason"])
    return Cut(**data)
