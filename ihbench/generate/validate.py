"""Strict checks of each agent's answer. A failed check raises `InvalidAnswer` with a message
written for the agent: it is sent back verbatim when re-asking, so it says what to change.
"""
from __future__ import annotations

import copy
import re
from typing import Any, Optional

from ihbench.dataset.schema import INTERRUPTION_TYPES
from ihbench.dataset.sources import SourceTurn
from ihbench.dataset.verify import (
    MAX_RQ,
    MIN_RQ,
    PLACEHOLDER_PATTERNS,
    _check_cut,
    max_chars,
    repeats_the_message,
    has_visible,
)
from ihbench.llm import InvalidAnswer, extract_json

from .prompts import CHECKS, EDITABLE_FIELDS

_STAGE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_INTERRUPTION_TALK = re.compile(r"\binterrupt|\bcut (?:in|off)\b|\btalk(?:s|ed|ing)? over\b|\bbarge", re.IGNORECASE)
MIN_STAGES, MAX_STAGES = 4, 7
MIN_WORDS_TO_CUT = 12


#: an agent's answer field -> the document field it becomes, whose length limit it keeps
_BECOMES = {"message": "assistant", "utterance": "user", "response": "baseline"}


def text(data: dict, name: str, where: str = "", *, limit: Optional[int] = None) -> str:
    """A non-empty string (invisible characters do not count) without placeholders, within the length
    limit `ihbench verify` holds its field to."""
    value = data.get(name) if isinstance(data, dict) else None
    if not isinstance(value, str) or not has_visible(value):
        raise InvalidAnswer(f"{where}{name} must be a non-empty string (visible characters, not only spaces or "
                            "zero-width ones)")
    limit = limit or max_chars(_BECOMES.get(name, name))
    if len(value) > limit:
        raise InvalidAnswer(f"{where}{name} is {len(value):,} characters long; write at most {limit:,}")
    no_placeholders(value, f"{where}{name}")
    return value.strip()


def texts(data: dict, name: str, where: str = "", *, minimum: int = 1) -> list[str]:
    values = data.get(name) if isinstance(data, dict) else None
    if not isinstance(values, list) or len(values) < minimum:
        raise InvalidAnswer(f"{where}{name} must be a list of at least {minimum} string(s)")
    return [text({f"{name}[{i}]": v}, f"{name}[{i}]", where, limit=max_chars(name)).strip()
            for i, v in enumerate(values)]


def no_placeholders(value: str, where: str) -> None:
    for pattern in PLACEHOLDER_PATTERNS:
        match = pattern.search(value)
        if match:
            raise InvalidAnswer(f"{where} contains the placeholder {match.group(0)!r}; use a concrete value")


def answer(raw: str) -> dict:
    return extract_json(raw)


# --- prerequisites ------------------------------------------------------------------------

def _stage(entry: Any, i: int) -> dict:
    where = f"knowledge_base.workflow_stages[{i}]."
    if not isinstance(entry, dict):
        raise InvalidAnswer(f"{where[:-1]} must be an object")
    name = text(entry, "name", where)
    if not _STAGE_NAME.match(name):
        raise InvalidAnswer(f"{where}name {name!r} must be snake_case")
    return {"name": name, "description": text(entry, "description", where),
            "skip_conditions": texts(entry, "skip_conditions", where),
            "failure_handling": text(entry, "failure_handling", where),
            "termination_conditions": texts(entry, "termination_conditions", where)}


def _probabilities(value: Any, where: str) -> dict:
    if not isinstance(value, dict) or set(value) != set(INTERRUPTION_TYPES):
        raise InvalidAnswer(f"{where} needs exactly the keys {', '.join(INTERRUPTION_TYPES)}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in value.values()):
        raise InvalidAnswer(f"{where}: every probability must be a number >= 0")
    total = sum(value.values())
    if abs(total - 1.0) > 0.05:
        raise InvalidAnswer(f"{where} sum to {total:.3f}; they must sum to 1")
    rounded = {t: round(value[t] / total, 2) for t in INTERRUPTION_TYPES}
    largest = max(rounded, key=rounded.get)  # the rounding remainder goes to the largest: an exact 1.0
    rounded[largest] = round(rounded[largest] + 1.0 - sum(rounded.values()), 2)
    return rounded


def prerequisites(raw: str, n_intents: int, stage_names: Optional[list[str]]) -> dict:
    data = answer(raw)
    kb = data.get("knowledge_base")
    if not isinstance(kb, dict):
        raise InvalidAnswer("knowledge_base must be an object")
    stages = kb.get("workflow_stages")
    if not isinstance(stages, list):
        raise InvalidAnswer("knowledge_base.workflow_stages must be a list")
    stages = [_stage(entry, i) for i, entry in enumerate(stages)]
    names = [s["name"] for s in stages]
    if stage_names is not None and names != stage_names:
        raise InvalidAnswer(f"knowledge_base.workflow_stages must be exactly the given stages, in order: "
                              f"{', '.join(stage_names)} (got {', '.join(names) or 'none'})")
    if stage_names is None and not MIN_STAGES <= len(stages) <= MAX_STAGES:
        raise InvalidAnswer(f"knowledge_base.workflow_stages: {len(stages)} stages; write {MIN_STAGES}-{MAX_STAGES}")
    if len(set(names)) != len(names):
        raise InvalidAnswer("knowledge_base.workflow_stages: stage names repeat")
    user_data = kb.get("user_data")
    if not isinstance(user_data, list) or len(user_data) < 3:
        raise InvalidAnswer("knowledge_base.user_data must list at least 3 facts about the caller")
    user_data = [{"field": text(e, "field", f"knowledge_base.user_data[{i}]."),
                  "value": text(e, "value", f"knowledge_base.user_data[{i}].")} for i, e in enumerate(user_data)]
    voice = data.get("caller_voice")
    if voice not in ("male", "female"):
        raise InvalidAnswer(f"caller_voice must be \"male\" or \"female\", got {voice!r}")
    intents = data.get("intents")
    if not isinstance(intents, list) or len(intents) != n_intents:
        count = len(intents) if isinstance(intents, list) else 0
        raise InvalidAnswer(f"intents: expected exactly {n_intents}, got {count}")
    checked = []
    for i, intent in enumerate(intents):
        where = f"intents[{i}]."
        if not isinstance(intent, dict):
            raise InvalidAnswer(f"{where[:-1]} must be an object")
        checked.append({"profile": text(intent, "profile", where),
                        "interruption_probabilities": _probabilities(intent.get("interruption_probabilities"),
                                                                     f"{where}interruption_probabilities"),
                        "hidden_info": texts(intent, "hidden_info", where)})
    return {"domain_description": text(data, "domain_description"), "caller_voice": voice,
            "knowledge_base": {"workflow_stages": stages, "guidelines": texts(kb, "guidelines", "knowledge_base."),
                               "user_data": user_data},
            "intents": checked}


def system_message(raw: str) -> str:
    message = text(answer(raw), "system_message")
    if len(message.split()) < 40:
        raise InvalidAnswer("system_message is too short: write the agent's complete operating instructions")
    talk = _INTERRUPTION_TALK.search(message)
    if talk:
        raise InvalidAnswer(f"system_message mentions {talk.group(0)!r}: say nothing about interruptions")
    return message


# --- one round ------------------------------------------------------------------------------

def plan(raw: str, stage_names: list[str], round_number: int, min_rounds: int, max_rounds: int) -> dict:
    data = answer(raw)
    stage = text(data, "stage")
    if stage not in stage_names:
        raise InvalidAnswer(f"stage {stage!r} is not a workflow stage; use one of {', '.join(stage_names)}")
    interrupt, end = data.get("interrupt"), data.get("end")
    if not isinstance(interrupt, bool) or not isinstance(end, bool):
        raise InvalidAnswer("interrupt and end must be true or false")
    kind = data.get("type")
    if interrupt and kind not in INTERRUPTION_TYPES:
        raise InvalidAnswer(f"type {kind!r} is not an interruption type; use one of {', '.join(INTERRUPTION_TYPES)}")
    if end and round_number < min_rounds:
        raise InvalidAnswer(f"end is true at round {round_number}; the call needs at least {min_rounds} rounds, "
                              "so keep it going")
    cut_hint = data.get("cut_hint") if isinstance(data.get("cut_hint"), str) else ""
    return {"stage": stage, "assistant_action": text(data, "assistant_action"), "user_action": text(data, "user_action"),
            "interrupt": interrupt, "type": kind if interrupt else None, "cut_hint": cut_hint.strip(),
            "end": end or round_number >= max_rounds}


def assistant_message(raw: str, *, to_be_cut: bool) -> str:
    message = text(answer(raw), "message")
    if to_be_cut and len(message.split()) < MIN_WORDS_TO_CUT:
        raise InvalidAnswer(f"the message has {len(message.split())} words; this round's action needs at least "
                              f"{MIN_WORDS_TO_CUT}")
    return message


def utterance(raw: str) -> str:
    return text(answer(raw), "utterance")


def normalize_cut(delivered: str, message: str) -> str:
    """Forgive the usual ways of marking a cut ("...", "—", trailing space); nothing else."""
    cut = delivered.rstrip()
    for mark in ("...", "…", "—", "--", "-"):
        if not message.startswith(cut) and cut.endswith(mark):
            cut = cut[: -len(mark)].rstrip()
    return cut


def check_cut(delivered: str, message: str, where: str = "delivered") -> None:
    turn = SourceTurn(index=0, stage="-", assistant=message, user="-", delivered=delivered)
    problems = _check_cut(turn)  # the very rule `ihbench verify` applies
    if problems:
        raise InvalidAnswer(f"{where} {problems[0][1]} (it must be the exact beginning of the agent's message, "
                              "cut inside a sentence with at least three words on each side)")


def interruption(raw: str, message: str) -> dict:
    data = answer(raw)
    delivered = normalize_cut(text(data, "delivered"), message)
    check_cut(delivered, message)
    return {"delivered": delivered, "utterance": text(data, "utterance")}


def rubric(raw: str) -> dict:
    data = answer(raw)
    criteria = texts(data, "rq_rubrics")
    if not MIN_RQ <= len(criteria) <= MAX_RQ:
        raise InvalidAnswer(f"rq_rubrics has {len(criteria)} criteria; write {MIN_RQ}-{MAX_RQ}")
    return {"tf_rubric": text(data, "tf_rubric"), "rq_rubrics": criteria}


def baseline(raw: str, message: str = "", delivered: str = "") -> str:
    """The blind baseline; one that says the interrupted `message` again from the `delivered` words is
    asked again (the rule `ihbench verify` applies)."""
    response = text(answer(raw), "response")
    if message and repeats_the_message(response, message, delivered):
        raise InvalidAnswer("response says your interrupted message again from what the caller already heard; "
                            "answer what the caller said and go on from where you were cut off")
    return response


# --- verifier and modifier --------------------------------------------------------------------

_INTERRUPTION_FIELDS = ("delivered", "type", "tf_rubric", "rq_rubrics")


def _turn_number(entry: dict, where: str, turns: list[dict]) -> int:
    turn = entry.get("turn")
    if not isinstance(turn, int) or isinstance(turn, bool) or not 1 <= turn <= len(turns):
        raise InvalidAnswer(f"{where}turn must be a turn number from 1 to {len(turns)}")
    return turn


def findings(raw: str, turns: list[dict]) -> list[dict]:
    data = answer(raw)
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise InvalidAnswer("findings must be a list (empty when the call is clean)")
    checked = []
    for i, entry in enumerate(entries):
        where = f"findings[{i}]."
        if not isinstance(entry, dict):
            raise InvalidAnswer(f"{where[:-1]} must be an object")
        turn, field, check = _turn_number(entry, where, turns), entry.get("field"), entry.get("check")
        if field not in EDITABLE_FIELDS or check not in CHECKS:
            raise InvalidAnswer(f"{where}field must be one of {', '.join(EDITABLE_FIELDS)} and check one of "
                                  f"{', '.join(CHECKS)}")
        if field in _INTERRUPTION_FIELDS and "interruption" not in turns[turn - 1]:
            raise InvalidAnswer(f"{where}turn {turn} has no interruption, so it has no {field}")
        if not isinstance(entry.get("fixable"), bool):
            raise InvalidAnswer(f"{where}fixable must be true or false")
        checked.append({"turn": turn, "field": field, "check": check, "problem": text(entry, "problem", where),
                        "fixable": entry["fixable"]})
    return checked


def apply_edits(turns: list[dict], edits: list[dict]) -> list[dict]:
    changed = copy.deepcopy(turns)
    for edit in edits:
        turn = changed[edit["turn"] - 1]
        if edit["field"] in ("assistant", "user", "stage", "delivered"):
            turn[edit["field"]] = edit["text"]
        elif edit["field"] == "rq_rubrics":
            turn["interruption"]["rq_rubrics"] = edit["criteria"]
        else:
            turn["interruption"][edit["field"]] = edit["text"]
    return changed


def edits(raw: str, turns: list[dict], stage_names: list[str]) -> list[dict]:
    data = answer(raw)
    entries = data.get("edits")
    if not isinstance(entries, list) or not entries:
        raise InvalidAnswer("edits must be a non-empty list: every finding needs a change")
    checked = []
    for i, entry in enumerate(entries):
        where = f"edits[{i}]."
        if not isinstance(entry, dict):
            raise InvalidAnswer(f"{where[:-1]} must be an object")
        turn, field = _turn_number(entry, where, turns), entry.get("field")
        if field not in EDITABLE_FIELDS:
            raise InvalidAnswer(f"{where}field must be one of {', '.join(EDITABLE_FIELDS)}")
        if field in _INTERRUPTION_FIELDS and "interruption" not in turns[turn - 1]:
            raise InvalidAnswer(f"{where}turn {turn} has no interruption, so it has no {field}")
        edit = {"turn": turn, "field": field, "text": "", "criteria": []}
        if field == "rq_rubrics":
            edit["criteria"] = texts(entry, "criteria", where, minimum=MIN_RQ)
            if len(edit["criteria"]) > MAX_RQ:
                raise InvalidAnswer(f"{where}criteria: at most {MAX_RQ}")
        else:
            edit["text"] = text(entry, "text", where)
        if field == "type" and edit["text"] not in INTERRUPTION_TYPES:
            raise InvalidAnswer(f"{where}text must be one of {', '.join(INTERRUPTION_TYPES)} for the type")
        if field == "stage" and edit["text"] not in stage_names:
            raise InvalidAnswer(f"{where}text must be one of the stages {', '.join(stage_names)}")
        checked.append(edit)
    for number, turn in enumerate(apply_edits(turns, checked), start=1):  # the result must stay well-formed
        if "interruption" in turn:
            check_cut(turn["delivered"], turn["assistant"], f"after the edits, turn {number}: delivered")
    return checked
