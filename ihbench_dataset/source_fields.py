"""The fields a conversation source may hold (sources/FORMAT.md), so that a misspelled optional field
(`provenence`, `user_adio`) is named instead of silently dropped: the build would go on without the
recording or the review the author believes is there."""
from __future__ import annotations

import difflib
from typing import Iterator

#: the fields of each object, by its place in the file (`[]` for any list element). `provenance` is
#: free-form (strings about who wrote what); `interruption_probabilities` has its own check.
KNOWN_FIELDS: dict[str, frozenset] = {
    "": frozenset({"conversation_id", "domain", "goal", "knowledge_base", "system_message", "user_intent",
                   "user_voice", "turns", "provenance"}),
    "domain": frozenset({"name", "description"}),
    "knowledge_base": frozenset({"workflow_stages", "guidelines", "user_data"}),
    "knowledge_base.workflow_stages[]": frozenset({"name", "description", "skip_conditions", "failure_handling",
                                                   "termination_conditions"}),
    "knowledge_base.user_data[]": frozenset({"field", "value"}),
    "user_intent": frozenset({"profile", "interruption_probabilities", "hidden_info"}),
    "turns[]": frozenset({"stage", "assistant", "user", "delivered", "interruption", "accepted", "user_audio"}),
    "turns[].accepted[]": frozenset({"check", "text", "reason"}),
    "turns[].interruption": frozenset({"type", "tf_rubric", "rq_rubrics", "baseline", "baseline_rq_verdicts",
                                       "review"}),
    "turns[].interruption.baseline_rq_verdicts[]": frozenset({"met", "reason"}),
    "turns[].interruption.review": frozenset({"reviewer", "leakage", "user_knowledge", "type", "grounding",
                                              "finding", "resolution", "cut", "accepted"}),
    "turns[].interruption.review.accepted[]": frozenset({"check", "criterion", "reason"}),
}


def unknown_fields(document: dict) -> Iterator[tuple[str, str]]:
    """(field path as in the file, message) for every key the format does not have."""
    yield from _walk(document, "", "")


def _walk(value, place: str, shown: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{place}[]", f"{shown}[{i}]")
        return
    if not isinstance(value, dict) or place not in KNOWN_FIELDS:
        return
    known = KNOWN_FIELDS[place]
    for key, item in value.items():
        where = f"{shown}.{key}" if shown else key
        if key in known:
            yield from _walk(item, f"{place}.{key}" if place else key, where)
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
        hint = f"did you mean {close[0]!r}?" if close else f"expected one of {', '.join(sorted(known))}"
        yield where, f"unknown field (not in sources/FORMAT.md; it would be dropped without a word): {hint}"
