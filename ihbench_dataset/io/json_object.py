"""A JSON file read whole as the object it must be (run.json, build_info.json, summary.json, a model
folder's configs, ...): whatever is wrong with it (bytes, JSON, its top-level type) said in one line
naming the file, with the caller's error class and what to do about it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Union


class DuplicateKeyError(ValueError):
    """What JSON allows but a file a user writes must not hold: a key given twice in one object (the
    parser keeps the last silently, dropping what the user wrote first: a stage, a fact, a goal), or a
    lone surrogate escape ("\\ud800"), which decodes to no character and fails the first write of it."""


def unique_keys(pairs: list) -> dict:
    """`object_pairs_hook` for every JSON a user writes or edits: a key given twice is refused, and so
    is a string holding a lone surrogate (in a key, a value, or a list of values)."""
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(f"the key {key!r} is given twice in one object (JSON keeps only the last)")
        _refuse_lone_surrogates(key, key)
        _refuse_lone_surrogates(value, key)
        seen[key] = value
    return seen


def _refuse_lone_surrogates(value, key: str) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise DuplicateKeyError(f"the value of {key!r} holds a lone surrogate escape "
                                    f"({value[error.start]!r}), which is no character; remove it") from None
    elif isinstance(value, list):
        for item in value:
            _refuse_lone_surrogates(item, key)


def read_json_object(path: Union[str, Path], error: type[Exception], *, hint: str = "") -> dict:
    suffix = f"; {hint}" if hint else ""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")  # a Windows editor's BOM is not part of the JSON
    except UnicodeDecodeError as problem:
        raise error(f"{path}: not UTF-8 text (byte {problem.start}){suffix}") from None
    except OSError as problem:
        raise error(f"{path}: cannot be read ({problem.strerror or problem}){suffix}") from None
    try:
        value = json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as problem:
        raise error(f"{path}: not valid JSON ({problem.msg} at line {problem.lineno} column {problem.colno})"
                    f"{suffix}") from None
    except DuplicateKeyError as problem:
        raise error(f"{path}: {problem}{suffix}") from None
    if not isinstance(value, dict):
        raise error(f"{path}: not a JSON object (a {type(value).__name__}){suffix}")
    return value
