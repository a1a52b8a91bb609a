"""From the pipeline's draft to a source file (`ihbench_dataset/sources/FORMAT.md`), and the
lexical verifier run on it: the exact checks `ihbench verify` applies, so nothing is written that
`ihbench verify` would refuse.
"""
from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Optional

from ihbench.dataset.sources import load_conversation
from ihbench.dataset.verify import check_conversation

from .prompts import EDITABLE_FIELDS

# Baselines are written after the verifier is done (from the final text); until then the lexical
# check sees this stand-in, so that "baseline is empty" is not reported for a field not due yet.
_PENDING_BASELINE = "pending"


def source_document(prereq: dict, intent: dict, conversation_id: str, turns: list[dict],
                    provenance: Optional[dict] = None) -> dict:
    document = {
        "conversation_id": conversation_id,
        "domain": prereq["domain"],
        "goal": prereq["goal"],
        "knowledge_base": prereq["knowledge_base"],
        "system_message": prereq["system_message"],
        "user_intent": intent,
        "user_voice": prereq["user_voice"],
        "turns": turns,
    }
    if provenance:
        document["provenance"] = provenance
    return document


def lexical_problems(document: dict) -> list:
    """`check_conversation` on the document, baselines not yet due: a list of `Problem`."""
    document = json.loads(json.dumps(document))
    for turn in document["turns"]:
        if "interruption" in turn and not turn["interruption"].get("baseline"):
            turn["interruption"]["baseline"] = _PENDING_BASELINE
    with tempfile.TemporaryDirectory(prefix="ihbench-generate-") as folder:
        path = Path(folder) / f"{document['conversation_id']}.json"  # the check wants id == file name
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        return check_conversation(load_conversation(path))


_TURN_FIELD = re.compile(r"^turns\[(\d+)\]\.(?:interruption\.)?([a-z_]+)")


def as_findings(problems: list) -> list[dict]:
    """Lexical problems in the verifier's finding shape. A problem inside a turn is fixable by an
    edit of that turn; one elsewhere (the knowledge base, the turn count) is not."""
    findings = []
    for problem in problems:
        match = _TURN_FIELD.match(problem.field)
        field = match.group(2) if match else problem.field
        findings.append({
            "turn": int(match.group(1)) + 1 if match else None,
            "field": field,
            "check": "lexical",
            "problem": problem.message,
            "fixable": bool(match) and field in EDITABLE_FIELDS,
        })
    return findings
