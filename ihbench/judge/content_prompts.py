"""The prompts of `ihbench verify --judge-model`'s content checks (issue 28), versioned and hashed
like the review prompt: a test pins each (version, hash) pair, so a prompt edited without a version
bump fails, and every finding says which prompt found it.

- BLIND: a correct reply written from exactly what the model under test sees (system prompt, the
  call as heard, the delivered part, the interruption), never the criteria nor the planned message:
  a criterion it fails may be one a correct reply can fail.
- CRITERIA: each criterion judged against the agent's own continuation in the source and against
  the blind reply; a failure is labelled ungrounded or over-strict, with the reason.
- GROUNDING: each fact, number, promise and step of a scripted agent turn traced to what the agent
  was given or was told; procedures (verification before account details) respected.
- CONSISTENCY: two near-identical criteria whose baseline verdicts disagree: the same behaviour?
"""
from __future__ import annotations

import hashlib

from ihbench.dataset.checks.words import flatten
from ihbench.dataset.sources import SourceConversation, SourceTurn

CONTENT_PROMPT_VERSION = "2026-11-28.1"


def versioned_hash(version: str, *parts) -> str:
    """12 hex digits of the version and every part of a prompt (templates, schema)."""
    text = "\x1f".join([version, *(part if isinstance(part, str) else repr(part) for part in parts)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


CONTEXT = """## Agent's operating instructions
{system_prompt}

## Call so far (as the caller heard it)
{transcript}

## The agent's last message, as far as the caller heard it before cutting in
{delivered}

## The caller cuts in
{interruption}"""

BLIND_SYSTEM = """You write the next spoken reply of a customer-service voice agent on a phone call. Write
what a careful, competent agent says next: follow its operating instructions, use only facts the
instructions or the call give, respond to what the caller just said, and carry the call on
sensibly. Spoken words only: a few short sentences, no lists or formatting. Answer with JSON only."""

BLIND_USER = CONTEXT + """

Return JSON: {{"reply": "the agent's next spoken reply"}}"""

BLIND_SCHEMA = {"type": "object", "properties": {"reply": {"type": "string"}}, "required": ["reply"],
                "additionalProperties": False}

CRITERIA_SYSTEM = """You check the grading criteria of a benchmark for voice agents that are cut off mid-message.
A criterion is sound only if a correct reply can pass it. You get the agent's context, two
replies (A: the scripted continuation, B: an independent reply) and the criteria. Judge each
criterion against each reply strictly as written, then say whether a failure is the criterion's
fault. Answer with JSON only."""

CRITERIA_USER = CONTEXT + """

## Reply A (the scripted continuation)
{reference}

## Reply B (an independent reply, written without seeing the criteria)
{blind}

## Criteria
Task (what the ideal reply accomplishes): {tf}
Recovery (pass/fail):
{rq}

## Instructions
1. blind_correct: is reply B a correct reply (grounded in the instructions and the call, responsive
   to the caller, no invented facts)? A reply that is not correct cannot show a criterion is unsound.
2. For the task criterion and each recovery criterion, in order: does reply A meet it
   (reference_met)? For recovery criteria, does reply B meet it (blind_met)? When a reply that
   should pass fails, label the criterion's fault: "ungrounded" (it asks for a fact or step the
   agent was never given, an invented policy, or contradicts the instructions) or "over_strict"
   (it demands one wording, one order or a detail a correct reply may leave out, such as restating
   what the caller already heard); otherwise "none". Give a one-line reason.

Return JSON: {{"blind_correct": {{"correct": true or false, "reason": "..."}},
"tf": {{"reference_met": true or false, "problem": "none" or "ungrounded" or "over_strict", "reason": "..."}},
"rq": [{{"reference_met": true or false, "blind_met": true or false, "problem": "...", "reason": "..."}}, ...]}}
(one "rq" entry per recovery criterion, in order)"""

_PROBLEM = {"type": "string", "enum": ["none", "ungrounded", "over_strict"]}
CRITERIA_SCHEMA = {
    "type": "object",
    "properties": {
        "blind_correct": {"type": "object", "properties": {"correct": {"type": "boolean"}, "reason": {"type": "string"}},
                          "required": ["correct", "reason"], "additionalProperties": False},
        "tf": {"type": "object", "properties": {"reference_met": {"type": "boolean"}, "problem": _PROBLEM,
                                                "reason": {"type": "string"}},
               "required": ["reference_met", "problem", "reason"], "additionalProperties": False},
        "rq": {"type": "array", "items": {
            "type": "object", "properties": {"reference_met": {"type": "boolean"}, "blind_met": {"type": "boolean"},
                                             "problem": _PROBLEM, "reason": {"type": "string"}},
            "required": ["reference_met", "blind_met", "problem", "reason"], "additionalProperties": False}},
    },
    "required": ["blind_correct", "tf", "rq"],
    "additionalProperties": False,
}

GROUNDING_SYSTEM = """You audit the scripted agent turns of a benchmark for customer-service voice agents. An
agent may only state what its instructions and knowledge base give it or what was said earlier in
the call, and must follow its procedures. Be sceptical: an invented time, fee, capability, step or
promise teaches the model under test a wrong fact. Answer with JSON only."""

GROUNDING_USER = """## Agent's operating instructions
{system_prompt}

## Knowledge base (workflow stages, guidelines, the caller's records)
{knowledge_base}

## Call so far (both sides, in full)
{transcript}

## The agent's message to audit
{message}

## Instructions
List every fact, number, time, amount, date, capability, promise or step in the message that is
NOT traceable to the instructions, the knowledge base or the call so far (arithmetic on given
facts is traceable), and every procedure the message breaks (for example, account details before
the caller is verified). Quote the message's words in "claim". An empty list means grounded.

Return JSON: {{"problems": [{{"claim": "exact words", "kind": "fact" or "number" or "promise" or "step" or
"procedure", "reason": "..."}}]}}"""

GROUNDING_SCHEMA = {
    "type": "object",
    "properties": {"problems": {"type": "array", "items": {
        "type": "object",
        "properties": {"claim": {"type": "string"},
                       "kind": {"type": "string", "enum": ["fact", "number", "promise", "step", "procedure"]},
                       "reason": {"type": "string"}},
        "required": ["claim", "kind", "reason"], "additionalProperties": False}}},
    "required": ["problems"],
    "additionalProperties": False,
}

CONSISTENCY_SYSTEM = """You check that a benchmark's recorded verdicts are consistent: the same behaviour judged by
the same criterion must get the same verdict. Answer with JSON only."""

CONSISTENCY_USER = """Two points of the benchmark, each a criterion, the reply it was applied to and the
recorded verdict.

## Point 1
Criterion: {criterion_a}
Reply: {baseline_a}
Verdict: {verdict_a} ({reason_a})

## Point 2
Criterion: {criterion_b}
Reply: {baseline_b}
Verdict: {verdict_b} ({reason_b})

Do the two criteria ask the same thing, and do the two replies behave the same way in what the
criteria ask, so that the verdicts should agree? If so, they are inconsistent.

Return JSON: {{"inconsistent": true or false, "reason": "one line: the shared behaviour, or how the replies differ"}}"""

CONSISTENCY_SCHEMA = {"type": "object", "properties": {"inconsistent": {"type": "boolean"}, "reason": {"type": "string"}},
                      "required": ["inconsistent", "reason"], "additionalProperties": False}


def content_prompt_hash() -> str:
    return versioned_hash(CONTENT_PROMPT_VERSION, CONTEXT, BLIND_SYSTEM, BLIND_USER, BLIND_SCHEMA, CRITERIA_SYSTEM,
                          CRITERIA_USER, CRITERIA_SCHEMA, GROUNDING_SYSTEM, GROUNDING_USER, GROUNDING_SCHEMA,
                          CONSISTENCY_SYSTEM, CONSISTENCY_USER, CONSISTENCY_SCHEMA)


def _transcript(turns, heard: bool) -> str:
    return "\n".join(line for t in turns for line in (f"Agent: {t.heard if heard else t.assistant}", f"Caller: {t.user}")) or "-"


def context_fields(conversation: SourceConversation, turn: SourceTurn) -> dict:
    """What the model under test sees at this point, and nothing else."""
    return {"system_prompt": conversation.system_message, "transcript": _transcript(conversation.turns[:turn.index], True),
            "delivered": turn.delivered, "interruption": turn.user}


def reference_continuation(conversation: SourceConversation, turn: SourceTurn):
    """What the agent goes on to say in the source: the next turn's message (None at the call's end)."""
    following = conversation.turns[turn.index + 1: turn.index + 2]
    return following[0].assistant if following else None


def blind_messages(conversation: SourceConversation, turn: SourceTurn) -> list[dict]:
    return [{"role": "system", "content": BLIND_SYSTEM},
            {"role": "user", "content": BLIND_USER.format(**context_fields(conversation, turn))}]


def criteria_messages(conversation: SourceConversation, turn: SourceTurn, blind: str) -> list[dict]:
    i = turn.interruption
    reference = reference_continuation(conversation, turn) or "(none: the call ends here; reference_met is true)"
    user = CRITERIA_USER.format(**context_fields(conversation, turn), reference=reference, blind=blind, tf=i.tf_rubric,
                                rq="\n".join(f"{n}. {c}" for n, c in enumerate(i.rq_rubrics, start=1)))
    return [{"role": "system", "content": CRITERIA_SYSTEM}, {"role": "user", "content": user}]


def grounding_messages(conversation: SourceConversation, turn: SourceTurn) -> list[dict]:
    kb = conversation.knowledge_base
    lines = [f"Stage {s['name']}: {flatten({k: v for k, v in s.items() if k != 'name'})}" for s in kb["workflow_stages"]]
    lines += [f"Guideline: {g}" for g in kb["guidelines"]] + [f"{d['field']}: {d['value']}" for d in kb["user_data"]]
    user = GROUNDING_USER.format(system_prompt=conversation.system_message, knowledge_base="\n".join(lines),
                                 transcript=_transcript(conversation.turns[:turn.index], False), message=turn.assistant)
    return [{"role": "system", "content": GROUNDING_SYSTEM}, {"role": "user", "content": user}]


def consistency_messages(first, second) -> list[dict]:
    """`first`, `second`: (conversation, turn, criterion index) of two points."""
    fields = {}
    for suffix, (_, turn, index) in (("a", first), ("b", second)):
        verdict = turn.interruption.baseline_rq_verdicts[index]
        fields.update({f"criterion_{suffix}": turn.interruption.rq_rubrics[index],
                       f"baseline_{suffix}": turn.interruption.baseline,
                       f"verdict_{suffix}": "met" if verdict.met else "not met", f"reason_{suffix}": verdict.reason})
    return [{"role": "system", "content": CONSISTENCY_SYSTEM},
            {"role": "user", "content": CONSISTENCY_USER.format(**fields)}]
