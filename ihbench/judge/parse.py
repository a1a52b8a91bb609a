"""From a judge's text to a verdict: tolerant of fences and chatter (`ihbench.llm.extract_json`),
strict about content."""
from __future__ import annotations

import re

from ihbench.llm import InvalidAnswer, extract_json


class InvalidJudgment(InvalidAnswer):
    """A judge (or reviewer) answered, but not with a usable verdict: the name judge records and
    review reports give an answer that stayed unusable after the re-ask."""


# A deficiency that only says the loser is shorter / less detailed is a preference for length.
_LENGTH_WORDS = re.compile(r"\b(more|less|not enough|insufficient|lacks?|lacking)?\s*(detail(ed|s)?|thorough(ness)?|"
                           r"longer|shorter|length|brief|briefer|verbose|concise|wordy|elaborat\w*)\b")
_FILLER_WORDS = set("""a an the it its is was be response this that answer than other one b a's
    as much so too not very quite less more and or of in on""".split())


def check_deficiency(text: str) -> str:
    if not isinstance(text, str) or len(text.split()) < 3:
        raise InvalidJudgment("loser_deficiency must name a concrete deficiency in a few words")
    remainder = _LENGTH_WORDS.sub(" ", text.lower())
    content = [w for w in re.findall(r"[a-z']+", remainder) if w not in _FILLER_WORDS]
    if len(content) < 3:
        raise InvalidJudgment(f"loser_deficiency {text!r} only complains about length or detail; "
                              "name what the losing response gets wrong or omits for the task")
    return text.strip()


def parse_tf(text: str) -> dict:
    data = extract_json(text)
    winner = str(data.get("winner", "")).strip().upper().removeprefix("RESPONSE ").strip()
    if winner not in ("A", "B"):
        raise InvalidJudgment(f"winner must be \"A\" or \"B\", got {data.get('winner')!r}")
    return {"winner": winner, "loser_deficiency": check_deficiency(data.get("loser_deficiency")),
            "reasoning": str(data.get("reasoning", "")).strip()}


def parse_rq(text: str, n_criteria: int) -> dict:
    data = extract_json(text)
    entries = data.get("criteria")
    if not isinstance(entries, list) or len(entries) != n_criteria:
        count = len(entries) if isinstance(entries, list) else 0
        raise InvalidJudgment(f"expected exactly {n_criteria} criteria verdicts, got {count}")
    verdicts, reasons = [], []
    for position, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise InvalidJudgment(f"criterion {position}: expected an object")
        met = entry.get("met")
        if isinstance(met, str) and met.strip().lower() in ("true", "false", "met", "not met", "yes", "no"):
            met = met.strip().lower() in ("true", "met", "yes")
        if not isinstance(met, bool):
            raise InvalidJudgment(f"criterion {position}: 'met' must be true or false, got {entry.get('met')!r}")
        reason = str(entry.get("reason", "")).strip()
        if not reason:
            raise InvalidJudgment(f"criterion {position}: a reason is required")
        verdicts.append(met)
        reasons.append(reason)
    return {"criteria": verdicts, "reasons": reasons, "passed": all(verdicts)}
