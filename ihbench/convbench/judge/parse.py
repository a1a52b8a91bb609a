"""The judge's answer for one window, checked: every judged turn once, every value of its type.

An answer that misses a turn, judges one twice or gives a value of the wrong type is refused with
a message written for the judge (`ask_structured` sends it back when re-asking); one that stays
unusable is a `judge_error` for the conversation, never a failure of the model.
"""
from __future__ import annotations

from typing import Sequence

from ihbench.llm import InvalidAnswer, extract_json

from .prompt import CAUSES, STATUSES

_BOOLS = ("instruction_following", "kb_grounding")
_NULLABLE = ("tool_use_correct", "ambiguity_handling", "state_tracking", "honest_about_missing")


class InvalidConvJudgment(InvalidAnswer):
    pass


def parse_window(text: str, judged: Sequence[int]) -> dict:
    """{"turns": {turn: verdict dict}, "function_calls": [...], "notes": str}."""
    data = extract_json(text)
    rows = data.get("turns")
    if not isinstance(rows, list):
        raise InvalidAnswer('"turns" must be a list with one entry per judged turn')
    verdicts: dict[int, dict] = {}
    for position, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("turn"), int) or isinstance(row.get("turn"), bool):
            raise InvalidAnswer(f'turns[{position}]: needs an integer "turn"')
        turn = row["turn"]
        if turn not in judged:
            continue  # a context turn judged anyway: ignored, not an error
        if turn in verdicts:
            raise InvalidAnswer(f"turn {turn} is judged twice; give exactly one entry per turn")
        verdicts[turn] = _verdict(row, turn)
    missing = [t for t in judged if t not in verdicts]
    if missing:
        shown = ", ".join(str(t) for t in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise InvalidAnswer(f"no judgment for turn(s) {shown}; judge every turn from {judged[0]} to {judged[-1]}")
    calls = data.get("function_calls", [])
    if not isinstance(calls, list):
        raise InvalidAnswer('"function_calls" must be a list')
    tracking = [_call(call, position) for position, call in enumerate(calls)]
    notes = data.get("notes", "")
    notes = _bounded(notes if isinstance(notes, str) else str(notes), '"notes"', MAX_NOTES)
    return {"turns": verdicts, "function_calls": tracking, "notes": notes}


#: the most characters of a judge's free text kept: its window's notes are copied into every turn
#: record of the window (a 3 MB answer made a 15 MB judgments.jsonl); a judge past these runs away
MAX_NOTES = 20_000
MAX_REASONING = 8_000


def _bounded(text: str, what: str, limit: int) -> str:
    if len(text) > limit:
        raise InvalidAnswer(f"{what} is {len(text):,} characters long; write at most {limit:,}")
    return text


def _verdict(row: dict, turn: int) -> dict:
    verdict, defaulted = {}, []
    for name in _BOOLS:
        value = row.get(name)
        if value is None:  # the reference's rule: a missing answer on an always-scored dimension is a fail;
            value = False  # kept (its numbers), and said: each such score is listed, and counted by the report
            defaulted.append(name)
        if not isinstance(value, bool):
            raise InvalidAnswer(f"turn {turn}: {name} must be true or false, got {value!r}")
        verdict[name] = value
    for name in _NULLABLE:
        value = row.get(name)
        if value is not None and not isinstance(value, bool):
            raise InvalidAnswer(f"turn {turn}: {name} must be true, false or null, got {value!r}")
        verdict[name] = value
    cause = row.get("missed_call_cause") or "none"
    if cause not in CAUSES:
        raise InvalidAnswer(f"turn {turn}: missed_call_cause must be one of {', '.join(CAUSES)}, got {cause!r}")
    verdict["missed_call_cause"] = cause
    cascade = row.get("cascade_from")
    if cascade is not None and (not isinstance(cascade, int) or isinstance(cascade, bool) or cascade >= turn):
        raise InvalidAnswer(f"turn {turn}: cascade_from must be an earlier turn number or null, got {cascade!r}")
    verdict["cascade_from"] = cascade
    reasoning = row.get("reasoning", "")
    verdict["reasoning"] = _bounded(reasoning if isinstance(reasoning, str) else str(reasoning),
                                    f'turn {turn}: "reasoning"', MAX_REASONING)
    if defaulted:
        verdict["defaulted"] = defaulted
    return verdict


def _call(call, position: int) -> dict:
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise InvalidAnswer(f'function_calls[{position}]: needs a "name"')
    status = call.get("status")
    if status not in STATUSES:
        raise InvalidAnswer(f"function_calls[{position}]: status must be one of {', '.join(STATUSES)}, got {status!r}")
    turns = {}
    for name in ("expected_turn", "actual_turn"):
        value = call.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidAnswer(f"function_calls[{position}]: {name} must be a turn number or null, got {value!r}")
        turns[name] = value
    return {"name": call["name"], **turns, "status": status}
