"""What a tool call returns during a ConversationBench run: the benchmark's scripted results, given
out the way the reference harness gives them, so a model meets the same world in our runs as in
theirs. Two modes, named as the reference's versions:

- `positional` (the original harness): every call succeeds (`{"status": "success"}`) unless the turn
  scripts a result; a scripted dict answers every call of the turn whatever its name or arguments;
  a scripted list is handed out in order to the turn's calls (duplicates aside), then the default.
  A call made a turn early gets that turn's result, never the one scripted for its own turn.
- `matched` (the successor): a call is matched to the turn's expected calls by name and canonical
  arguments; the first unused match gets its scripted result (or success); a wrong name or wrong
  arguments get an error payload naming what was expected; a turn that expects no call answers
  every call with `not_available`.

In both, the same call (name and canonical arguments) twice in one turn is a duplicate: it gets
`{"status": "duplicate_skipped"}`, is recorded with `is_duplicate`, and is kept out of the model's
history. Everything resets at the start of each turn.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

MODES = ("positional", "matched")
SUCCESS = {"status": "success"}
DUPLICATE = {"status": "duplicate_skipped"}
NOT_AVAILABLE = {"status": "not_available", "message": "do not call more functions; answer by speech"}
END_SESSION = "end_session"
_CLOCK = re.compile(r"^(\d):(\d\d)$")


def canonical(arguments: Any) -> Any:
    """Arguments compared the successor's way: keys sorted, strings stripped, H:MM as HH:MM, lists of
    product ids sorted."""
    if isinstance(arguments, dict):
        return {key: (sorted(canonical(v) for v in value) if key == "product_ids" and isinstance(value, list)
                      else canonical(value)) for key, value in sorted(arguments.items())}
    if isinstance(arguments, list):
        return [canonical(value) for value in arguments]
    if isinstance(arguments, str):
        text = arguments.strip()
        clock = _CLOCK.match(text)
        return f"0{clock.group(1)}:{clock.group(2)}" if clock else text
    return arguments


def call_key(name: str, arguments: Any) -> str:
    return json.dumps([name, canonical(arguments)], sort_keys=True, ensure_ascii=False)


@dataclass
class TurnTools:
    """The tool results of one turn, in one mode; a new one for every turn."""

    mode: str
    expected: list[dict]  # the turn's required calls [{"name", "args"}]
    scripted: Any  # the turn's function_call_response: None, a dict, or a list
    flexible_args: list[str] = field(default_factory=list)
    _seen: set = field(default_factory=set)
    _handed: int = 0  # positional: scripted results handed out so far
    _used: set = field(default_factory=set)  # matched: expected calls already matched

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"tool results mode {self.mode!r}; expected one of {MODES}")  # checked by the CLI

    def answer(self, name: str, arguments: Any) -> tuple[dict, bool]:
        """(result, is_duplicate) of one call."""
        key = call_key(name, arguments)
        if key in self._seen:
            return dict(DUPLICATE), True
        self._seen.add(key)
        return (self._positional() if self.mode == "positional" else self._matched(name, arguments)), False

    def _positional(self) -> dict:
        if isinstance(self.scripted, dict):
            return dict(self.scripted)
        if isinstance(self.scripted, list) and self._handed < len(self.scripted):
            self._handed += 1
            return dict(self.scripted[self._handed - 1])
        return dict(SUCCESS)

    def _matched(self, name: str, arguments: Any) -> dict:
        if not self.expected:
            return dict(NOT_AVAILABLE)
        responses = self.scripted if isinstance(self.scripted, list) else [self.scripted] * len(self.expected)
        named = [i for i, call in enumerate(self.expected) if call["name"] == name and i not in self._used]
        for index in named:
            if self._same_arguments(self.expected[index]["args"], arguments):
                self._used.add(index)
                return dict(responses[index] or SUCCESS)
        if not named:
            first = next((c for i, c in enumerate(self.expected) if i not in self._used), self.expected[0])
            return {"status": "error", "error_code": "UNEXPECTED_TOOL_CALL",
                    "message": f"{name} was not expected here", "expected_function": first["name"],
                    "expected_args": first["args"]}
        expected = self.expected[named[0]]
        return {"status": "error", "error_code": "ARG_MISMATCH",
                "message": f"the arguments of {name} do not match", "expected_function": name,
                "expected_args": expected["args"]}

    def _same_arguments(self, expected: dict, given: Any) -> bool:
        if not isinstance(given, dict):
            return False
        flexible = set(self.flexible_args)
        if any(not str(given.get(key, "")).strip() for key in flexible if key in expected):
            return False  # a flexible argument is not compared, but it must be given
        strict = {key: value for key, value in expected.items() if key not in flexible}
        return canonical(strict) == canonical({key: value for key, value in given.items() if key not in flexible})


def is_end_session(name: str) -> bool:
    return name == END_SESSION


def tool_message_content(result: Optional[dict]) -> str:
    """What the model reads back: the result as JSON (pipecat sends "COMPLETED" for an empty one)."""
    return json.dumps(result, ensure_ascii=False) if result else "COMPLETED"
