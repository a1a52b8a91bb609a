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

__all__ = ["InvalidAnswer", "extract_json"]


class InvalidAnswer(ItemFailure, ValueError):
    """The LLM answered, but not usably; the message is fed back when re-asking."""


_DECODER = json.JSONDecoder()  # stateless: one for every answer


def extract_json(text: str) -> Any:
    """The first JSON object in `text`: bare, inside ``` fences, or surrounded by prose."""
    if text is None:
        raise InvalidAnswer("empty answer")
    stripped = text.strip()
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", stripped, re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(stripped)
    decoder = _DECODER
    for candidate in candidates:
        for start in [m.start() for m in re.finditer(r"\{", candidate)]:
            try:
                value, _ = decoder.raw_decode(candidate[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise InvalidAnswer("no JSON object found in the answer")
