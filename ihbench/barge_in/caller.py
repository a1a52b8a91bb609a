"""What the pipeline's planner and caller are given about a suite's conversation: the knowledge base
(workflow stages, the caller's own data) and the caller's intent (profile, interruption profile,
hidden information), in the generation pipeline's shape.

The in-house dev set and generated suites hold these in that very shape, and they are used as they
are. The official `bosonai/IHBench` rows hold a `knowledge_base` and a `user_intent` struct of
their own shape (stage names without their rules, the caller's data as text, no interruption
profile), or none at all. Such a conversation is still played, not refused: each part that is
missing or of another shape is filled by one stated rule (`RULES`) from what the row does hold (its
goal, its stage names, its caller's data, its own interruption points, and the caller's scripted
lines, `user_turn_N_transcript`, as what the caller knows). The rules applied are recorded per
conversation in run.json (`barge_in.caller`) and enter the conversation's version
(`records.conversation_hash`), so a rule changed in a later toolkit plays those conversations again.
What no rule can fill (a stage list that is not stage names, a repeated stage) is refused up front,
in one line naming the conversation and the field.

Why these rules: the planner needs stage names to plan by and an interruption profile to weigh its
seeded suggestion (the suite's own point is the suggestion either way); the caller needs facts to
answer from, and the live leak check counts what the caller knows as heard. The scripted lines are
the only first-hand record of what this caller knows: they are the caller's facts and hidden
information when the row has none. The leak check then also lets through a word the scripted caller
said (as it would a word of the caller's own data).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ihbench.dataset.errors import UsageError
from ihbench.dataset.schema import INTERRUPTION_TYPES, canonical_interruption_type

#: the version of the rules below: part of the version of each conversation that uses one
FALLBACK_VERSION = "1"
#: the stage of a call whose suite names none
ONE_STAGE = "call"
RULES = {
    "stage_names": "knowledge_base.workflow_stages: the suite's stage names (knowledge_base.{key}), without "
                   "descriptions or conditions",
    "one_stage": f"knowledge_base.workflow_stages: one stage, {ONE_STAGE!r}, for the whole call (the suite names "
                 "no stages)",
    "facts_text": "knowledge_base.user_data: the suite's knowledge_base.user_data ({shape}), then the caller's "
                  "scripted lines of the suite (user_turn_N_transcript), one fact each",
    "facts_scripted": "knowledge_base.user_data: the caller's scripted lines of the suite (user_turn_N_transcript), "
                      "one fact each",
    "profile_goal": "user_intent.profile: a caller calling about the suite's goal (the suite gives no profile)",
    "hidden_text": "user_intent.hidden_info: the suite's user_intent.hidden_info text as one item",
    "hidden_scripted": "user_intent.hidden_info: the caller's scripted lines of the suite (user_turn_N_transcript)",
    "probabilities_points": "user_intent.interruption_probabilities: the shares of the conversation's own "
                            "interruption points by type",
    "probabilities_spelling": "user_intent.interruption_probabilities: the suite's, with its type spellings mapped "
                              "and scaled to sum to 1",
}


@dataclass(frozen=True)
class Caller:
    prereq: dict  # the pipeline's prerequisites: domain, goal, knowledge_base, system_message
    intent: dict  # profile, interruption_probabilities, hidden_info
    fallbacks: tuple = ()  # the rules applied (`RULES`' texts), in field order; empty: the suite's own
    problem: Optional[str] = None  # what no rule can fill (`caller` refuses it)


def caller(conversation, source: str) -> Caller:
    """The conversation's caller, or one line naming the source, the conversation and the field."""
    found = derive(conversation)
    if found.problem:
        raise UsageError(f"{source}: conversation {conversation.conversation_id}: {found.problem}; barge-in's planner "
                         "plays the call by its stages")
    return found


def derive(c) -> Caller:
    """Never raises: a problem is returned in `problem` (the version of a conversation is computed
    for every conversation of a suite, played or not)."""
    kb, intent = dict(c.knowledge_base or {}), dict(c.user_intent or {})
    fallbacks: list[str] = []
    lines = [t.user_text for t in c.turns if (t.user_text or "").strip()]

    stages, problem = _stages(kb, fallbacks)
    for alias in ("stages", "workflow"):
        kb.pop(alias, None)  # given once, as workflow_stages
    kb["workflow_stages"] = stages
    kb["user_data"] = _facts(kb.get("user_data"), lines, fallbacks)

    profile = intent.get("profile")
    if not (isinstance(profile, str) and profile.strip()):
        profile = f"A caller calling about this: {c.goal}"
        fallbacks.append(RULES["profile_goal"])
    probabilities = _probabilities(intent.get("interruption_probabilities"), c, fallbacks)
    hidden = intent.get("hidden_info")
    if isinstance(hidden, str) and hidden.strip():
        hidden = [hidden.strip()]
        fallbacks.append(RULES["hidden_text"])
    elif not (isinstance(hidden, (list, tuple)) and any(isinstance(h, str) and h.strip() for h in hidden)):
        hidden = list(lines)
        fallbacks.append(RULES["hidden_scripted"])
    else:
        hidden = [h for h in hidden if isinstance(h, str) and h.strip()]
    prereq = {"domain": {"name": c.domain, "description": c.domain_description or ""}, "goal": c.goal,
              "knowledge_base": kb, "system_message": c.system_prompt}
    return Caller(prereq, {"profile": profile, "interruption_probabilities": probabilities, "hidden_info": hidden},
                  tuple(fallbacks), problem)


def _stages(kb: dict, fallbacks: list) -> tuple[list, Optional[str]]:
    for key in ("workflow_stages", "stages", "workflow"):
        value = kb.get(key)
        if value is None or value == [] or value == "":
            continue
        if not isinstance(value, (list, tuple)):
            return [{"name": ONE_STAGE}], f"knowledge_base.{key} is {type(value).__name__}, not a list of stages"
        stages, names_only = [], key != "workflow_stages"
        for index, entry in enumerate(value):
            if isinstance(entry, str) and entry.strip():
                stages.append({"name": entry.strip()})
                names_only = True
            elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str) and entry["name"].strip():
                stages.append(dict(entry))
            else:
                return [{"name": ONE_STAGE}], (f"knowledge_base.{key}[{index}] is neither a stage name nor an object "
                                               "with a name")
        names = [s["name"] for s in stages]
        repeated = next((n for n in names if names.count(n) > 1), None)
        if repeated:
            return stages, f"knowledge_base.{key} names the stage {repeated!r} twice"
        if names_only:
            fallbacks.append(RULES["stage_names"].format(key=key))
        return stages, None
    fallbacks.append(RULES["one_stage"])
    return [{"name": ONE_STAGE, "description": "The whole call."}], None


def _facts(value: Any, lines: list[str], fallbacks: list) -> list:
    """The pipeline's list of {field, value}, as it is; any other shape as facts, followed by the
    caller's scripted lines (what this caller said first-hand: names, numbers the suite's data may lack)."""
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(e, Mapping) and {"field", "value"} <= set(e) for e in value):
        return [dict(e) for e in value]  # the pipeline's own shape
    scripted = [{"field": f"said on the scripted call ({n})", "value": line} for n, line in enumerate(lines, start=1)]
    if isinstance(value, str) and value.strip():
        fallbacks.append(RULES["facts_text"].format(shape="text"))
        return [{"field": "the caller's data", "value": value.strip()}, *scripted]
    if isinstance(value, Mapping) and any(v not in (None, "") for v in value.values()):
        fallbacks.append(RULES["facts_text"].format(shape="fields"))
        return [{"field": str(k), "value": str(v)} for k, v in value.items() if v not in (None, "")] + scripted
    if isinstance(value, (list, tuple)) and any(isinstance(e, str) and e.strip() for e in value):
        fallbacks.append(RULES["facts_text"].format(shape="list"))
        return [{"field": f"fact {n}", "value": e.strip()}
                for n, e in enumerate((e for e in value if isinstance(e, str) and e.strip()), start=1)] + scripted
    fallbacks.append(RULES["facts_scripted"])
    return scripted


def _probabilities(value: Any, c, fallbacks: list) -> dict:
    if isinstance(value, Mapping) and set(value) == set(INTERRUPTION_TYPES):
        return dict(value)  # the pipeline's own shape
    if isinstance(value, Mapping):
        try:
            mapped = Counter()
            for kind, p in value.items():
                if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0:
                    raise ValueError(kind)
                mapped[canonical_interruption_type(kind)] += p
        except (UsageError, ValueError):
            mapped = None
        total = sum(mapped.values()) if mapped else 0
        if mapped and total > 0 and None not in mapped:
            fallbacks.append(RULES["probabilities_spelling"])
            return {kind: round(mapped[kind] / total, 4) for kind in INTERRUPTION_TYPES}
    fallbacks.append(RULES["probabilities_points"])
    points = Counter(t.interruption_type for t in c.turns if t.interruption_type)
    total = sum(points.values()) or 1
    return {kind: round(points[kind] / total, 4) for kind in INTERRUPTION_TYPES}
