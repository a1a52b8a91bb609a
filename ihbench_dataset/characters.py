"""Which characters a name may hold: one rule for a new path's parts, a model's or judge's name, a dataset given by
name, and the names read back from summaries and reports.

A name is shown in reports, typed again in shells and compared by eye. A character that shows nothing where it
stands (a zero-width space between two Latin letters, a Hangul filler, a right-to-left override) makes two names
look alike or one look reordered, so it is refused. The same characters spell words and emoji in other places,
and there they are part of the name (battery 60, G1; battery 61, H1, H12, H13): the zero-width joiner inside an
emoji sequence (👨‍👩‍👧) or between letters of a script that joins (Devanagari, Arabic), the non-joiner between such
letters (Persian's می‌خواهم), the tags of a subdivision flag, a variation selector after a symbol.
"""
from __future__ import annotations

import unicodedata
from typing import Optional

_ZWNJ, _ZWJ = "\u200c", "\u200d"
_FLAG, _CANCEL_TAG = "\U0001F3F4", "\U000E007F"
#: letters and symbols that draw as blank space: names that look empty or spaced (a Hangul filler, the Braille blank)
_BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")  # and Khmer's two inherent vowels,
#: which Unicode marks to be ignored in display (battery 63, J3)
#: what may stand between an emoji and the joiner: a variation selector, a skin tone
_EMOJI_TAIL = frozenset("\ufe0f") | frozenset(map(chr, range(0x1F3FB, 0x1F400)))
LINE_OR_CONTROL = "a line break, a tab, a control character or a space other than the plain one"
UNSEEN = "an invisible or direction-changing character"


def shows_nothing(character: str) -> bool:
    """A character that draws nothing wherever it stands: a control or format character, a space, a separator, a
    blank-looking letter (the Hangul filler), a variation selector or the grapheme joiner alone. A text of only these
    is empty (an answer of U+3164 was scored: battery 63, J5)."""
    code = ord(character)
    return unicodedata.category(character) in ("Cc", "Cf", "Zs", "Zl", "Zp") or character in _BLANK_LOOKING or \
        0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or code == 0x034F


def name_problem(text: str) -> Optional[str]:
    """What is wrong with the characters of a name, said as the refusal says it, or None."""
    for index, character in enumerate(text):
        kind = unicodedata.category(character)
        if kind == "Cc" or kind in ("Zl", "Zp") or (kind == "Zs" and character != " "):
            return LINE_OR_CONTROL
        if kind in ("Co", "Cn", "Cs"):
            return "a character no font shows (unassigned, private-use or a lone surrogate)"
        if unseen_at(text, index):
            return UNSEEN
    return None


def unseen_in(text: str) -> bool:
    """Whether `text` holds a character that shows nothing, or reorders, where it stands."""
    return any(unseen_at(text, index) for index in range(len(text)))


def unseen_at(text: str, index: int) -> bool:
    character = text[index]
    code = ord(character)
    if character in (_ZWJ, _ZWNJ):
        before, after = _before(text, index), _after(text, index)
        if character == _ZWJ and _pictograph(before) and _pictograph(after):
            return False
        return not (_joining_letter(before) and _joining_letter(after))
    if 0xE0020 <= code <= 0xE007F:  # a tag: only inside a subdivision flag, 🏴 + tags + the cancel tag
        return not _inside_a_flag(text, index)
    if character in _BLANK_LOOKING:
        return True
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or code == 0x034F:  # a variation selector (the
        # supplement's too: battery 62, I5), the grapheme joiner: after a symbol
        before = text[index - 1] if index else None  # or a letter of another script, not alone nor after Latin
        return before is None or before.isspace() or (before.isalpha() and _latin(before))  # a keycap's 1️⃣ is
    kind = unicodedata.category(character)
    return kind == "Cf" or kind in ("Zl", "Zp") or (kind == "Zs" and character != " ")


def _before(text: str, index: int) -> Optional[str]:
    index -= 1
    while index >= 0 and text[index] in _EMOJI_TAIL:
        index -= 1
    return text[index] if index >= 0 else None


def _after(text: str, index: int) -> Optional[str]:
    return text[index + 1] if index + 1 < len(text) else None


def _pictograph(character: Optional[str]) -> bool:
    return character is not None and (unicodedata.category(character) == "So" or 0x1F000 <= ord(character) <= 0x1FAFF)


def _latin(character: str) -> bool:
    return ord(character) < 0x0370 or unicodedata.name(character, "").startswith(("LATIN", "GREEK", "CYRILLIC"))


def _joining_letter(character: Optional[str]) -> bool:
    """A letter or mark of a script whose letters join or form conjuncts (not Latin, Greek or Cyrillic, where a
    joiner changes nothing one can see)."""
    return character is not None and unicodedata.category(character)[0] in "LM" and not _latin(character)


def _inside_a_flag(text: str, index: int) -> bool:
    start = index
    while start > 0 and 0xE0020 <= ord(text[start - 1]) <= 0xE007E:
        start -= 1
    end = index
    while end < len(text) and 0xE0020 <= ord(text[end]) <= 0xE007E:
        end += 1
    return start > 0 and text[start - 1] == _FLAG and end < len(text) and text[end] == _CANCEL_TAG


def escaped(text: str) -> str:
    """`text` quoted as a refusal shows it, every character that shows nothing or is no letter written as its code
    (`'mpa\\u3164b'`): quoted raw, a Hangul filler or a variation selector reads as nothing (battery 62, I6)."""
    def code(c: str) -> str:
        return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"

    def shown(i: int, c: str) -> str:
        if not (unseen_at(text, i) or (unicodedata.category(c)[0] in "CZ" and c != " ")):
            return c
        said = repr(c)[1:-1]  # as Python escapes it where it does (`\\n`, `\\u200d`), else its code
        return said if said != c else code(c)

    return "'" + "".join(shown(i, c) for i, c in enumerate(text)).replace("'", "\\'") + "'"
