"""The rule a TF judge's `loser_deficiency` is held to, wherever a verdict is read: a judge's answer (`ihbench.judge`)
and a judgments line read back (`ihbench.records`). Here, below both: the judge's package stands above the records."""
from __future__ import annotations

import re
from typing import Optional


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
                r"shortcomings?|drawbacks?|downsides?|differences?|complaints?|shortfalls?|gaps?|omissions?|defects?|"
                r"défauts?|mängel|mangel|defectos?|difett[oi]|defeitos?|problèmes?|problemas?|problemi)")
_SAYS_NONE = [
    # battery 67, N1: praise, a fault not found, nothing done wrong, however it is worded (the deny list is the rule's
    # limit: a judge is re-asked on a refusal, so a wide one costs a call, a narrow one a verdict scored wrongly)
    re.compile(r".*\b(?:flawless|impeccable|faultless|spot\s+on|well\s+done|good\s+job|nicely\s+done|works\s+well|"
               r"everything\s+(?:right|well|correctly)|no\s+complaints?|all\s+right|alright|just\s+as\s+good|"
               r"(?:perfectly|totally|entirely|wholly|completely|quite|also)\s+(?:fine|acceptable|adequate|correct|"
               r"right|good|ok|okay|reasonable)|handled\s+(?:it\s+)?(?:perfectly|well))\b"),
    re.compile(r"\W*(?:nope|nil|nada|zero|none|nothing|equivalent|identical|comparable|same)\W*$"),
    re.compile(r"\W*(?:equivalent|identical|comparable|same)\b"),
    re.compile(r".*\b(?:anything|a\s+(?:single\s+)?thing)\s+(?:wrong|missing|amiss|incorrect|to\s+(?:criticiz|criticis|"
               r"fault|improve))"),
    re.compile(r".*(?:n't|\bnot|\bcannot)\s+(?:\w+\s+)?(?:find|see|spot|identify|notice)\s+(?:any\s+)?(?:anything|fault)"),
    re.compile(r".*\bnothing\s+(?:\w+\s+)?(?:incorrect|wrong|bad|amiss|missing|lacking|to\s+criticiz|to\s+criticis)"),
    re.compile(r".*\b(?:zero|aucune?|keine?|ningún|ninguna|ningun|nessun[ao]?|nenhum[a]?|geen|inga|brak)\s+(?:\w+\s+)?"
               + _FAULT_NOUNS + r"\b"),
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
    re.compile(r".*\b(?:is|are|was|were|looks?|seems?|sounds?|'s)\s+(?:\w+\s+){0,2}(?:fine|good|right|great|ok|okay|acceptable|"
               r"perfect|excellent|flawless|appropriate|adequate|reasonable|solid|correct|accurate|helpful)\b"),
    re.compile(r".*\b(?:fine|good|ok|okay|acceptable)\s+(?:too|as\s+well|as\s+is|also)\b"),
]
#: words that name nothing the loser does: made once, not on every verdict read
_NO_CLAIM = frozenset(_FILLER_WORDS | _VERDICT_WORDS)
#: words after which a deficiency is named, whatever came before them
_CONTRAST = re.compile(r"\b(?:but|yet|though|although|however|except|other\s+than|apart\s+from|besides|only)\b")


def _says_none(lowered: str) -> bool:
    lowered = _spelled(lowered.replace("\u2019", "'"))
    return not _CONTRAST.search(lowered) and any(pattern.match(lowered) for pattern in _SAYS_NONE)


_FAULT_WORDS = ("deficiency", "issues", "issue", "problem", "problems", "flaws", "mistakes", "errors", "weakness")


def _spelled(lowered: str) -> str:
    """A fault's noun as spelled with one letter wrong ("no deficency", "no isues": battery 67, N1), as it is meant."""
    def word(match: "re.Match") -> str:
        found = match.group(0)
        return next((right for right in _FAULT_WORDS if found != right and _one_edit(found, right)), found)

    return re.sub(r"[a-z]{5,}", word, lowered)


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by one letter added, removed or changed."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def deficiency_problem(text) -> Optional[str]:
    """Why `text` is no TF loser_deficiency, said as the judge is re-asked with it, or None. One word that names what
    the loser does counts ("rude"; the prompt's own examples are two or three: "ignores the correction"; battery 61,
    H4 and battery 62, I4: three were asked, and terse judges lost every TF item); length or detail words, and words
    that only rank it ("worse", "wrong"), do not, so "less detailed than A" is said as the preference for length it
    is; nor does one that says there is none (`_says_none`)."""
    if not isinstance(text, str) or not text.strip():
        return "loser_deficiency must name a concrete deficiency in a few words"
    lowered = text.lower()
    remainder = _LENGTH_WORDS.sub(" ", lowered)
    content = [w for w in re.findall(r"[a-z][a-z'/]+", remainder) if w not in _NO_CLAIM]
    if not content and _LENGTH_WORDS.search(lowered):
        return (f"loser_deficiency {text!r} only complains about length or detail; name what the losing response "
                "gets wrong or omits for the task")
    if not content or _says_none(lowered):
        return (f"loser_deficiency {text!r} names no concrete deficiency; name what the losing response gets wrong "
                "or omits for the task, in a few words")
    return None


