"""What an LLM's text answer must be: tolerant of fences and chatter, strict about content.

A parse function turns the text into a value or raises `InvalidAnswer` with a message written
for the model: `ask_structured` sends it back verbatim when re-asking, so it says what to change.
An answer that stays unusable is an item failure (the item is recorded as failed, never scored).
"""
from __future__ import annotations

import json
import re
from typing import Any

from ihbench.dataset.errors import ItemFailure
from ihbench.dataset.io.json_object import DuplicateKeyError, unique_keys
from ihbench.loaders.clients import server_text

__all__ = ["InvalidAnswer", "extract_json"]


class InvalidAnswer(ItemFailure, ValueError):
    """The LLM answered, but not usably; the message is fed back when re-asking."""


#: stateless: one for every answer; a key given twice ("winner": "A", ..., "winner": "B") leaves which
#: verdict was meant unknown, and the answer is asked again
_DECODER = json.JSONDecoder(object_pairs_hook=unique_keys)


def extract_json(text: str) -> Any:
    """The first JSON object in `text`: bare, inside ``` fences, or surrounded by prose."""
    if text is None:
        raise InvalidAnswer("empty answer")
    stripped = text.strip()
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", stripped, re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(stripped)
    try:
        return _extracted(stripped, candidates)
    except RecursionError:  # JSON nested thousands deep: no answer a schema asks for, and asked again
        raise InvalidAnswer("the answer's JSON is nested too deeply") from None
    except DuplicateKeyError as twice:
        raise InvalidAnswer(f"the key {twice.key!r} is given twice in one object; give each key once") from None


def _extracted(stripped: str, candidates: list) -> Any:
    found = _objects(stripped)
    if len({json.dumps(value, sort_keys=True) for value in found}) > 1:  # which one did it mean?
        raise InvalidAnswer(f"the answer holds {len(found)} different JSON objects; give exactly one")
    for candidate in candidates:
        for value in _objects(candidate)[:1]:
            return _writable(value)
    raise InvalidAnswer("no JSON object found in the answer")


def _writable(value):
    """The answer with every string writable: a "\\ud800" escape inside the JSON a model wrote decodes
    to a lone surrogate, which no record can hold (`loaders.clients.server_text`)."""
    if isinstance(value, str):
        return server_text(value)
    if isinstance(value, list):
        return [_writable(item) for item in value]
    if isinstance(value, dict):
        return {server_text(key): _writable(item) for key, item in value.items()}
    return value


def _objects(text: str) -> list[dict]:
    """The JSON objects of `text` that are not inside one another, in order."""
    found, position = [], 0
    for match in re.finditer(r"\{", text):
        if match.start() < position:
            continue  # inside an object already read
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
            position = end
    return found
