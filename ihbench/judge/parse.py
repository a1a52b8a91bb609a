"""From a judge's text to a verdict: tolerant of fences and chatter (`ihbench.llm.extract_json`),
strict about content."""
from __future__ import annotations

from ihbench.dataset.checks.deficiency import deficiency_problem
from ihbench.llm import InvalidAnswer, extract_json


class InvalidJudgment(InvalidAnswer):
    """A judge (or reviewer) answered, but not with a usable verdict: the name judge records and
    review reports give an answer that stayed unusable after the re-ask."""


def check_deficiency(text: str) -> str:
    """`text`, or the judge re-asked with why it is no deficiency (`checks.deficiency.deficiency_problem`)."""
    problem = deficiency_problem(text)
    if problem:
        raise InvalidJudgment(problem)
    return text.strip()


def parse_tf(text: str) -> dict:
    data = extract_json(text)
    winner = str(data.get("winner", "")).strip().upper().removeprefix("RESPONSE ").strip()
    if winner not in ("A", "B"):
        raise InvalidJudgment(f"winner must be \"A\" or \"B\", got {data.get('winner')!r}")
    return {"winner": winner, "loser_deficiency": check_deficiency(data.get("loser_deficiency")),
            "reasoning": str(data.get("reasoning", "")).strip()}


def _by_index(entries: list, n_criteria: int) -> list:
    """The verdicts in criterion order. Numbered (as the prompt asks), every criterion must be answered
    once: three verdicts all numbered 1 answer one criterion, and the two never answered would count
    as met. Numbered by none, they are taken in order."""
    if all("index" not in entry for entry in entries):
        return entries
    numbers = []
    for position, entry in enumerate(entries, start=1):
        index = entry.get("index")
        if isinstance(index, str) and index.strip().isascii() and index.strip().isdigit():  # '²' is a digit
            index = int(index.strip())
        if isinstance(index, bool) or not isinstance(index, int):
            raise InvalidJudgment(f"verdict {position}: 'index' must be a criterion number, got {entry.get('index')!r}")
        numbers.append(index)
    if sorted(numbers) != list(range(1, n_criteria + 1)):
        missing = sorted(set(range(1, n_criteria + 1)) - set(numbers))
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        unknown = sorted(n for n in set(numbers) if not 1 <= n <= n_criteria)
        said = "; ".join(part for part in (f"criteria {missing} not answered" if missing else "",
                                           f"{twice} answered more than once" if twice else "",
                                           f"no criterion {unknown} (there are {n_criteria})" if unknown else "") if part)
        raise InvalidJudgment(f"criteria verdicts numbered {numbers}: {said}")
    return [entry for _, entry in sorted(zip(numbers, entries), key=lambda pair: pair[0])]


def parse_rq(text: str, n_criteria: int) -> dict:
    data = extract_json(text)
    entries = data.get("criteria")
    if not isinstance(entries, list) or len(entries) != n_criteria:
        count = len(entries) if isinstance(entries, list) else 0
        raise InvalidJudgment(f"expected exactly {n_criteria} criteria verdicts, got {count}")
    if any(not isinstance(entry, dict) for entry in entries):
        position = next(n for n, entry in enumerate(entries, start=1) if not isinstance(entry, dict))
        raise InvalidJudgment(f"criterion {position}: expected an object")
    entries = _by_index(entries, n_criteria)
    verdicts, reasons = [], []
    for position, entry in enumerate(entries, start=1):
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
