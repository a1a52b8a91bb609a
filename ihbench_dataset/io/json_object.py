"""A JSON file read whole as the object it must be (run.json, build_info.json, summary.json, a model
folder's configs, ...): whatever is wrong with it (bytes, JSON, its top-level type) said in one line
naming the file, with the caller's error class and what to do about it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Union


class JsonContentError(ValueError):
    """What JSON allows but a file a user writes must not hold (`hand_written`)."""


class DuplicateKeyError(JsonContentError):
    """A key given twice in one object: the parser keeps the last silently, dropping what was written
    first (a stage, a fact, a goal; a judge's first verdict)."""

    def __init__(self, key):
        super().__init__(f"the key {key!r} is given twice in one object (JSON keeps only the last)")
        self.key = key


#: what a JSON text nested past the parser's recursion limit is called, wherever a file is parsed (json
#: raises RecursionError for it, which is no parse error and used to end in a traceback)
TOO_DEEP = "nested too deeply to be read (thousands of levels of [ or {; no file of the toolkit has that)"
#: Python reads no integer of more than 4,300 digits (a ValueError naming its own limit, from inside json)
TOO_LONG_NUMBER = "a number too long to read (thousands of digits; no file of the toolkit has one)"


def json_kind(value) -> str:
    """What a JSON value is, in JSON's words (null, not Python's NoneType): for messages about a file."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def unique_keys(pairs: list) -> dict:
    """`object_pairs_hook` refusing a key given twice (every JSON read from outside the toolkit)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set = set()
        raise DuplicateKeyError(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return value


def hand_written(pairs: list) -> dict:
    """`object_pairs_hook` for every JSON a user writes or edits: `unique_keys`, and no string holding a
    lone surrogate escape ("\\ud800", in a key, a value or a list of values), which decodes to no
    character and fails the first write of it."""
    value = unique_keys(pairs)
    for key, item in pairs:
        _refuse_lone_surrogates(key, key)
        _refuse_lone_surrogates(item, key)
    return value


def _refuse_lone_surrogates(value, key: str) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise JsonContentError(f"the value of {key!r} holds a lone surrogate escape "
                                   f"({value[error.start]!r}), which is no character; remove it") from None
    elif isinstance(value, list):
        for item in value:
            _refuse_lone_surrogates(item, key)


def json_problem(problem: json.JSONDecodeError, place: str = "line") -> str:
    """Python's JSON error and where it is (`place`: "line" for line and column, "column", or "character"), in
    words that read: "Unterminated string starting at" names its place itself (battery 56, C14: "starting at at
    line 6", or "starting at)" with no place)."""
    where = {"line": f"line {problem.lineno} column {problem.colno}", "column": f"column {problem.colno}",
             "character": f"character {problem.pos}"}[place]
    return f"{problem.msg}{' ' if problem.msg.endswith(' at') else ' at '}{where}"


def not_utf8(problem: UnicodeDecodeError) -> str:
    """A file's decoding failure, said with the byte and where it stands (battery 65, L4: "(byte 0)" read as a NUL
    byte, not as the offset of 0xff)."""
    return f"not UTF-8 text (byte 0x{problem.object[problem.start]:02x} at offset {problem.start})"


def read_json_object(path: Union[str, Path], error: type[Exception], *, hint: str = "") -> dict:
    from .regular import check_regular

    suffix = f"; {hint}" if hint else ""
    check_regular(path, "a JSON file", error)
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")  # a Windows editor's BOM is not part of the JSON
    except UnicodeDecodeError as problem:
        raise error(f"{path}: {not_utf8(problem)}{suffix}") from None
    except OSError as problem:
        raise error(f"{path}: cannot be read ({problem.strerror or problem}){suffix}") from None
    try:
        value = json.loads(text, object_pairs_hook=hand_written)
    except json.JSONDecodeError as problem:
        raise error(f"{path}: not valid JSON ({json_problem(problem)}){suffix}") from None
    except JsonContentError as problem:
        raise error(f"{path}: {problem}{suffix}") from None
    except RecursionError:
        raise error(f"{path}: {TOO_DEEP}{suffix}") from None
    except ValueError:  # after JSONDecodeError and the content checks: the interpreter's digit limit
        raise error(f"{path}: {TOO_LONG_NUMBER}{suffix}") from None
    if not isinstance(value, dict):
        raise error(f"{path}: not a JSON object ({json_kind(value)}){suffix}")
    return value
