"""Judge-free diagnostics of a response, computed on every run (no LLM needed).

They catch the failure modes the paper highlights before any judge is paid: re-delivering what
the user already heard, and, after a filler, restarting or acknowledging instead of continuing.
They are diagnostics beside the judged axes, not scores.
"""
from __future__ import annotations

import re
from typing import Optional

_WORD = re.compile(r"[a-z0-9']+")
ACKNOWLEDGEMENTS = ("mm-hm", "mm hm", "mhm", "uh-huh", "yes", "yeah", "yep", "right", "okay", "ok", "sure", "great",
                    "got it", "thanks", "thank you", "no problem", "of course", "as i was saying", "alright",
                    "all right", "perfect", "absolutely", "so as i was saying")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def redelivery_ratio(delivered: str, response: str, n: int = 4) -> Optional[float]:
    """Share of the delivered text's word n-grams that the response says again (0 = none)."""
    heard = words(delivered)
    if not heard:
        return None
    n = min(n, len(heard))
    reference = _ngrams(heard, n)
    return len(reference & _ngrams(words(response), n)) / len(reference)


def continues_remainder(undelivered: str, response: str, min_words: int = 2) -> bool:
    """Does the response open with the words that were cut off (the filler recovery)?"""
    rest, said = words(undelivered), words(response)
    shared = 0
    for a, b in zip(rest, said):
        if a != b:
            break
        shared += 1
    return shared >= min(min_words, len(rest))


def acknowledges(response: str) -> bool:
    """Does the response open by acknowledging the backchannel ("Yes, so...", "Great!")?"""
    opening = " ".join(words(response)[:4])
    return any(opening == a or opening.startswith(a + " ") for a in ACKNOWLEDGEMENTS)


def diagnose(item, response: Optional[str]) -> dict:
    if response is None:
        return {"redelivery_ratio": None, "filler_continues": None, "filler_acknowledges": None}
    is_filler = item.interruption_type == "filler"
    return {
        "redelivery_ratio": redelivery_ratio(item.interrupted.delivered, response),
        "filler_continues": continues_remainder(item.interrupted.undelivered, response) if is_filler else None,
        "filler_acknowledges": acknowledges(response) if is_filler else None,
    }
