"""Numbers in a text, written or spoken, as one canonical form, so "$45", "45 dollars" and
"forty-five dollars" are the same fact, and "six three five eight" is the code 6358.

The dev set writes agent turns for text-to-speech (numbers as words, codes digit by digit) while
knowledge bases and system prompts use digits: a grounding check that compared spellings would
flag every amount. Values are compared as decimals ("4.10" is "4.1"); codes spoken digit by digit
are compared as digit strings (a code is grounded by any known digit run that contains it: "ending
in zero four one seven" is part of "63-900417").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Optional

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_UNITS["oh"] = 0  # "oh one two seven"
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i >= 2}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
# Ordinals from "third" up: "first" and "second" are as often "at first" and "a second" as dates.
_ORDINALS = {"third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
             "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15, "sixteenth": 16,
             "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
             "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70, "eightieth": 80, "ninetieth": 90,
             "hundredth": 100, "thousandth": 1000}
ORDINAL_WORDS = tuple(_ORDINALS)
_LOW_ORDINALS = {"first": "one", "second": "two"}  # only inside "twenty-first", read as its units
_NUMBER_WORDS = set(_UNITS) | set(_TENS) | set(_SCALES) | set(_ORDINALS) | {"point", "and", "a"}
_TOKEN = re.compile(r"\$?\d[\d,]*(?:\.\d+)?(?:st|nd|rd|th)?|[A-Za-z]+(?:-[A-Za-z]+)*|[^\sA-Za-z\d]")


@dataclass(frozen=True)
class Quantity:
    value: str  # a canonical decimal ("18426.4") or, for a code spoken digit by digit, its digits
    digits: bool  # a code (compared as a digit run), not a value
    start: int  # character span in the text
    end: int
    #: other values the same words may stand for: "one forty-nine" is 149 or 1.49, "nine twelve" 9:12
    alternatives: tuple = ()

    @property
    def values(self) -> tuple:
        return (self.value, *self.alternatives)


def canonical(number: Decimal) -> str:
    text = format(number.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def quantities(text: str) -> list[Quantity]:
    """Every number in `text`: digits ("$18,426.40", "3rd", "919-555-0127" as runs) and words
    ("eighteen thousand four hundred twenty-six", "six point four nine", "twenty-fifth",
    "nineteen eighty-eight", "six three five eight")."""
    found: list[Quantity] = []
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    i = 0
    while i < len(tokens):
        token, start, end = tokens[i]
        if token[0].isdigit() or (token[0] == "$" and len(token) > 1):
            digits = re.sub(r"(?:st|nd|rd|th)$", "", token.lstrip("$")).replace(",", "").rstrip(".")
            try:
                value = Decimal(digits)
            except InvalidOperation:
                i += 1
                continue
            # a digit run with a leading zero ("0417") is a code; so is one split by hyphens (phones)
            code = len(digits) > 1 and digits[0] == "0" and "." not in digits
            found.append(Quantity(digits if code else canonical(value), code, start, end))
            i += 1
            continue
        if token[0].isupper() and i and tokens[i - 1][0][0] not in ".?!:\"“":  # "Fiber Five Hundred": a name
            i += 1
            continue
        j, parsed = _spoken(tokens, i)
        if parsed:
            found.extend(parsed)
            i = j
        else:
            i += 1
    return _amounts(found, text)


_DOLLARS_AND = re.compile(r"\s*dollars?,?\s+and\s+$", re.IGNORECASE)
_CENTS = re.compile(r"\s*cents?\b", re.IGNORECASE)


def _amounts(found: list[Quantity], text: str) -> list[Quantity]:
    """ "Four hundred twelve dollars and eighty-seven cents" is one amount, 412.87."""
    merged: list[Quantity] = []
    for q in found:
        previous = merged[-1] if merged else None
        if (previous and not previous.digits and not q.digits and previous.value.isdigit() and q.value.isdigit()
                and int(q.value) < 100 and _DOLLARS_AND.fullmatch(text[previous.end:q.start])
                and _CENTS.match(text[q.end:])):
            value = canonical(Decimal(previous.value) + Decimal(q.value) / 100)
            merged[-1] = Quantity(value, False, previous.start, q.end + _CENTS.match(text[q.end:]).end())
        else:
            merged.append(q)
    return merged


def _words(tokens, i):
    """The run of number words from token i (hyphenated words split: "twenty-six")."""
    run = []
    while i < len(tokens):
        token, start, end = tokens[i]
        if run and token[:1].isupper():  # "forty-one twenty Six Forks Road": a name ends the number
            break
        parts = token.lower().split("-")
        if len(parts) == 2 and parts[0] in _TENS and parts[1] in _LOW_ORDINALS:  # "twenty-second"
            parts = [parts[0], _LOW_ORDINALS[parts[1]]]
        if not all(p in _NUMBER_WORDS for p in parts):
            break
        run.append((parts, start, end))
        i += 1
    while run and run[-1][0][-1] in ("and", "a", "point"):  # "... dollars and", "a", a dangling "point"
        run.pop()
        i -= 1
    return run, i


def _spoken(tokens, i):
    run, j = _words(tokens, i)
    if not run or all(parts[0] in ("and", "a", "point") for parts, _, _ in run):
        return i + 1, []
    words = [(w, s, e) for parts, s, e in run for w in parts]
    if words and words[0][0] in ("and", "a") and (len(words) < 2 or words[1][0] not in _SCALES):
        return i + 1, []  # "and", "a" alone open no number ("a hundred" does)
    if all(w in _UNITS for w, _, _ in words) and len(words) >= 3 or (
            len(words) == 2 and all(w in _UNITS and _UNITS[w] < 10 for w, _, _ in words) and words[0][0] != "one"):
        # a code read digit by digit: "six three five eight two two four one", "oh four"
        if all(_UNITS[w] < 10 for w, _, _ in words):
            return j, [Quantity("".join(str(_UNITS[w]) for w, _, _ in words), True, words[0][1], words[-1][2])]
    groups, group, adjacent = [], [], []
    for word in words:
        if group and not _continues([w for w, _, _ in group], word[0]):
            groups.append(group)
            group = []
            adjacent.append(word[0] not in ("and", "a"))
        if word[0] not in ("and", "a") or group:
            group.append(word)
    groups.append(group)
    found = []
    for index, group in enumerate(groups):
        value = _group_values(group)
        if not value:
            continue
        previous = found[-1] if found and index and adjacent[index - 1] else None
        pair = _pair(previous, value[0], group) if previous else None
        if pair:
            found[-1] = pair
        else:
            found.append(value[0])
    return j, found


def _pair(first: Quantity, second: Quantity, words) -> Quantity:
    """Numbers read in pairs, as people say prices, addresses, years and times: "three eighteen"
    (318 or 3.18), "twenty-two oh seven" (2207), "nineteen eighty-eight", "nine twelve" (9:12)."""
    names = [w for w, _, _ in words]
    if "point" in names or any(w in _SCALES for w in names):
        return None
    tail = int(second.value) if second.value.isdigit() else -1
    if not (10 <= tail <= 99 or (names[0] == "oh" and len(names) == 2)):  # "oh seven" is the tail 07
        return None
    wholes = [v for v in first.values if v.isdigit() and 1 <= int(v) <= 9999]
    if not wholes:
        return None
    values = [str(int(w) * 100 + tail) for w in wholes] + [canonical(Decimal(w) + Decimal(tail) / 100) for w in wholes]
    return Quantity(values[0], False, first.start, second.end, tuple(dict.fromkeys(values[1:])))


def _kind(word: str) -> str:
    if word in _SCALES:
        return "scale"
    if word in ("and", "a", "point"):
        return word
    value = _UNITS.get(word, _TENS.get(word, _ORDINALS.get(word)))
    if word in _ORDINALS:
        return "ordinal" if value < 10 or value % 10 == 0 and value < 100 else "ordinal-big"
    return "unit" if value < 10 else "teen" if value < 20 else "tens"


def _continues(group: list[str], word: str) -> bool:
    """Whether `word` goes on the number `group` has started ("twenty" + "six", "four hundred" +
    "twelve"), or opens another ("twelve" then "eighty-seven" in "four hundred twelve eighty-seven")."""
    last, kind = group[-1], _kind(word)
    if group == ["oh"]:
        return kind == "unit" and word not in ("zero", "oh")
    if "point" in group:
        return kind == "unit" or word == "zero"
    previous = _kind(last)
    if previous in ("ordinal", "ordinal-big"):
        return False
    if kind == "point":
        return previous in ("unit", "teen", "tens", "scale")
    if kind in ("and", "a"):
        return previous == "scale"
    if kind == "scale":
        bigger = [_SCALES[w] for w in group if w in _SCALES]
        return previous in ("unit", "teen", "tens") or (previous == "scale" and _SCALES[word] > _SCALES[last]) \
            or (previous == "a" and len(group) == 1) if not bigger or _SCALES[word] > max(bigger) or \
            (_SCALES[word] == 100 and previous != "scale" and max(bigger) >= 1000) else False
    if previous == "tens":
        return kind in ("unit", "ordinal") and _UNITS.get(word, _ORDINALS.get(word, 0)) < 10 and word != "zero"
    return previous in ("scale", "and")


def _group_values(group):
    if not group:
        return []
    words = [w for w, _, _ in group if w not in ("and", "a")] or ["one"]
    if words == ["one"] and group[0][0] == "a":
        return []
    total, current, decimals = 0, 0, None
    for word in words:
        if word == "point":
            decimals = ""
        elif decimals is not None:
            decimals += str(_UNITS[word])
        elif word in _SCALES:
            current = max(current, 1) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0
        else:
            current += _UNITS.get(word, _TENS.get(word, _ORDINALS.get(word, 0)))
    value = Decimal(total + current) + (Decimal("0." + decimals) if decimals else 0)
    return [Quantity(canonical(value), False, group[0][1], group[-1][2])]


def digit_runs(text: str, found: Optional[list] = None) -> list[str]:
    """The digits of every written number or code, read across separators ("919-555-0127" is
    9195550127), and every code spoken digit by digit: what a code the agent reads out may be part of."""
    runs = [re.sub(r"\D", "", m) for m in re.findall(r"\d[\d\s().:-]*\d|\d", text)]
    return runs + [q.value for q in (quantities(text) if found is None else found) if q.digits]
