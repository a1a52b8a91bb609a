"""The verifier and the modifier, in a bounded loop.

Each round collects the LLM verifier's findings and the lexical verifier's problems (the very
checks of `ihbench verify`, as fixable findings inside a turn). No finding: the call passes. Any
finding marked unfixable: the call is discarded. Otherwise the modifier edits, and the loop
repeats, at most `max_rounds` times; findings left after that discard the call too. Discarded
calls are counted and kept out of the suite, never patched by hand here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import agents as a
from .source import as_findings, lexical_problems, source_document
from .usage import Usage
from .validate import apply_edits


@dataclass
class Outcome:
    turns: list[dict]
    passed: bool
    rounds: int  # modify rounds used
    fixed: list[dict] = field(default_factory=list)  # findings the modifier resolved
    findings: list[dict] = field(default_factory=list)  # what discarded the call
    reason: str = ""


async def verify_and_fix(agents: a.Agents, usage: Usage, prereq: dict, intent: dict, conversation_id: str,
                         turns: list[dict], *, max_rounds: int = 3) -> Outcome:
    fixed: list[dict] = []
    for round_number in range(max_rounds + 1):
        lexical = as_findings(lexical_problems(source_document(prereq, intent, conversation_id, turns)))
        found = lexical + await a.verify(agents, usage, prereq, intent, turns)
        if not found:
            return Outcome(turns, True, round_number, fixed)
        unfixable = [f for f in found if not f["fixable"]]
        if unfixable:
            return Outcome(turns, False, round_number, fixed, unfixable,
                           f"{len(unfixable)} unfixable finding(s): {unfixable[0]['check']}: {unfixable[0]['problem']}")
        if round_number == max_rounds:
            return Outcome(turns, False, round_number, fixed, found,
                           f"{len(found)} finding(s) left after {max_rounds} modify round(s)")
        edits = await a.modify(agents, usage, prereq, intent, turns, found)
        turns = apply_edits(turns, edits)
        fixed.extend(found)
    raise AssertionError("unreachable")
