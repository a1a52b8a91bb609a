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
#: words that carry no claim of their own: articles, pronouns, prepositions, forms of "be" and "have", quantifiers
_FILLER_WORDS = set("""a an the it its is was be response responses this that answer answers than other one b a's
    as much so too not very quite less more and or of in on at to for with by from about all any anything some
    something there they them their these those he she his her i we us you your are were been being has have had
    each every either neither nor no either's assistant model candidate agent baseline reply replies""".split())


#: words that rank the loser, or say it has no fault, without naming what it does: a verdict, not a deficiency
#: ("no deficiency", "both fine": battery 63, J4; "no problems at all", "neither has issues", "they are equivalent",
#: "tie", "no real difference": battery 64, K2)
_VERDICT_WORDS = set("""worse bad wrong poor poorer inferior weaker weak good better fine incorrect unhelpful lower
    none nothing n/a na unclear overall generally no deficiency deficiencies issue issues problem problems really
    equally both same similar okay ok acceptable equivalent equal identical comparable tie tied draw difference
    differences different distinguishable indistinguishable flaw flaws flawed fault faults mistake mistakes error
    errors concern concerns real notable significant major minor obvious apparent particular particularly clear
    found noted identified seen applicable great perfect excellent correct appropriate adequate reasonable nice
    well strong solid valid weakness weaknesses shortcoming shortcomings downside downsides drawback drawbacks
    complaint complaints note worth mention mentioning""".split())


#: a deficiency that says there is none, whatever words go with it, unless a contrast names one after ("nothing
#: wrong except it repeats the greeting"): one that opens so ("nothing stands out", "there is nothing missing", "both
#: handle it", "no deficiency worth noting": battery 65, L1), a fault denied anywhere ("it does nothing wrong", "hard to
#: fault"), the loser called fine ("it is perfectly fine", "the loser is fine too": battery 66, M1). "no greeting", a
#: thing the loser lacks, names one.
_FAULT_NOUNS = (r"(?:deficienc\w*|issues?|problems?|flaws?|faults?|mistakes?|errors?|concerns?|weakness\w*|"
                r"shortcomings?|drawbacks?|downsides?|differences?|complaints?)")
_SAYS_NONE = [
    re.compile(r"\W*(?:(?:there\s+(?:is|are|was|were)|there's|i\s+(?:see|found|find)|it\s+has|they\s+have)\s+)?"
               r"(?:(?:nothing|none|both|n/a|tie|equal|equally)\b|(?:no|not\s+any|without)\s+(?:\w+\s+){0,2}?"
               + _FAULT_NOUNS + r"\b)"),
    re.compile(r".*\b(?:nothing|no|not\s+any|hardly\s+any|without)\s+(?:\w+\s+){0,2}?(?:wrong|missing|amiss|"
               + _FAULT_NOUNS + r")\b"),
    re.compile(r".*\b(?:hard|difficult|impossible|can't|cannot|can\s+not)\s+(?:to\s+)?(?:fault|criticiz\w*|criticis\w*)"),
    # a fault found in none ("can't find a flaw", "there isn't a deficiency", "does not have any problems"), nothing
    # lacked ("doesn't lack anything", "lacks nothing"): battery 66, M1
    re.compile(r".*(?:\bnot|n't|\bno|\bwithout|\bnever)\s+(?:(?:find|see|have|has|had|spot|identify|notice|detect|"
               r"contain|show|make|made)\s+)?(?:(?:any|a|an|one|single|real|notable|significant|major|big|obvious|clear|"
               r"particular)\s+){0,2}" + _FAULT_NOUNS + r"\b"),
    re.compile(r".*\b(?:lacks?\s+(?:anything|nothing)|lacking\s+nothing|no\s+big\s+deal)\b"),
    re.compile(r".*\b(?:is|are|was|were|looks?|seems?|sounds?|'s)\s+(?:\w+\s+)?(?:fine|good|great|ok|okay|acceptable|"
               r"perfect|excellent|flawless|appropriate|adequate|reasonable|solid|correct|accurate|helpful)\b"),
    re.compile(r".*\b(?:fine|good|ok|okay|acceptable)\s+(?:too|as\s+well|as\s+is|also)\b"),
]
#: words after which a deficiency is named, whatever came before them
_CONTRAST = re.compile(r"\b(?:but|yet|though|although|however|except|other\s+than|apart\s+from|besides|only)\b")


def _says_none(lowered: str) -> bool:
    lowered = lowered.replace("\u2019", "'")
    return not _CONTRAST.search(lowered) and any(pattern.match(lowered) for pattern in _SAYS_NONE)


def check_deficiency(text: str) -> str:
    """One word that names what the loser does counts ("rude"; the prompt's own examples are two or three: "ignores
    the correction"; battery 61, H4 and battery 62, I4: three were asked, and terse judges lost every TF item);
    length or detail words, and words that only rank it ("worse", "wrong"), do not, so "less detailed than A" is
    said as the preference for length it is."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidJudgment("loser_deficiency must name a concrete deficiency in a few words")
    lowered = text.lower()
    remainder = _LENGTH_WORDS.sub(" ", lowered)
    content = [w for w in re.findall(r"[a-z][a-z'/]+", remainder) if w not in _FILLER_WORDS | _VERDICT_WORDS]
    if not content and _LENGTH_WORDS.search(lowered):
        raise InvalidJudgment(f"loser_deficiency {text!r} only complains about length or detail; "
                              "name what the losing response gets wrong or omits for the task")
    if not content or _says_none(lowered):
        raise InvalidJudgment(f"loser_deficiency {text!r} names no concrete deficiency; name what the losing "
                              "response gets wrong or omits for the task, in a few words")
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
