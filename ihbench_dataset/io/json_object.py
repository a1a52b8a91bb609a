"""A JSON file read whole as the object it must be (run.json, build_info.json, summary.json, a model
folder's configs, ...): whatever is wrong with it (bytes, JSON, its top-level type) said in one line
naming the file, with the caller's error class and what to do about it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Union


class DuplicateKeyError(ValueError):
    """A JSON object naming one key twice: the parser keeps the last silently, dropping what the user
    wrote first (a stage, a fact, a goal)."""


def unique_keys(pairs: list) -> dict:
    """`object_pairs_hook` for every JSON a user writes or edits: a key given twice is refused."""
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(f"the key {key!r} is given twice in one object (JSON keeps only the last)")
        seen[key] = value
    return seen


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
