"""Words and strings of a source file, shared by `verify.py` and the content checks: stems that
match "deleted" with "delete", the distinctive words one must have heard (numbers, long words,
names), and every string of a parsed file with its field path."""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ..characters import shows_nothing

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")

# Long words a caller says without having heard them: not evidence of leakage.
ORDINARY_LONG_WORDS = set(
    """actually already another anything anyway because before between believe better
    certainly complicated confused could couldn't definitely different doesn't everything
    exactly explain explaining forget forgot getting happened honestly hundred important
    instead listen looking maybe minute minutes morning nothing number obviously okay
    perfect please possible probably question questions quickly really remember right
    seriously should something sorry still thanks thank thought thousand through today
    tomorrow tonight understand wanted whatever without wondering would wouldn't yesterday
    afternoon evening weekend monday tuesday wednesday thursday friday saturday sunday
    january february march april june july august september october november december""".split()
)


@lru_cache(maxsize=1 << 16)  # every point re-reads its whole history: the same words again and again
def stem(word: str) -> str:
    word = word.lower().replace("’", "'").removesuffix("'s").strip("'-")
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=1 << 12)
def stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in WORD.findall(text))


def distinctive(word: str, sentence_start: bool) -> bool:
    """Numbers, codes, long words and mid-sentence capitalised names: things one must have heard."""
    bare = word.strip("'’-")
    lower = bare.lower()
    if any(ch.isdigit() for ch in bare):
        return True
    if lower in ORDINARY_LONG_WORDS:
        return False
    if len(bare) >= 7:
        return True
    is_pronoun_i = lower == "i" or lower.startswith(("i'", "i’"))
    return bare[:1].isupper() and not sentence_start and not is_pronoun_i


def strings(value, field: str = ""):
    """Every string in a parsed JSON value (or a record of dataclasses: an item, a conversation), with its field path
    (`turns[3].interruption.baseline`); audio arrays and bytes are left unread."""
    import dataclasses

    if isinstance(value, str):
        yield field or "value", value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for inner in dataclasses.fields(value):
            yield from strings(getattr(value, inner.name), f"{field}.{inner.name}" if field else inner.name)
    elif isinstance(value, tuple):
        value = list(value)
        yield from strings(value, field)
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from strings(inner, f"{field}.{key}" if field else key)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from strings(inner, f"{field}[{index}]")


def flatten(value) -> str:
    return " ".join(text for _, text in strings(value))



def has_visible(text: str) -> bool:
    """Whether a reader can see anything in the text (not only spaces, zero-width, control or blank-looking
    characters: `characters.shows_nothing`): a field made only of those is empty, however it looks to `str.strip`.
    Stops at the first visible character (every reply and agent answer is checked)."""
    return not all(map(shows_nothing, text))


def has_words(text: str) -> bool:
    """Whether an answer says anything a listener would hear: a letter or a digit that shows (`has_visible` alone
    took an answer of only U+FFFD, the mark of bytes no one could decode, or of only `...`, for one: battery 64,
    K1). Punctuation, symbols and emoji beside a word are kept as written."""
    return any(unicodedata.category(character)[0] in "LN" and not shows_nothing(character) for character in text)
