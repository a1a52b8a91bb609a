"""Judge prompts, written in-house and versioned.

Every judgment records `PROMPT_VERSION` and a hash of the template text; a test pins the hash,
so a prompt edit without a version bump fails CI (scores from two prompts must never mix).
"""
from __future__ import annotations

import hashlib

from ihbench.dataset.schema import EvalItem

PROMPT_VERSION = "2026-11-22.1"

_CONTEXT = """You are reviewing a customer-service voice call. The assistant follows a fixed workflow
described in its operating instructions. Partway through an assistant message the user cut in;
the assistant's message was cut off at that point, so the user heard only the part shown.

## Assistant's operating instructions
{system_prompt}

## Conversation so far (transcribed speech)
{transcript}
"""

TF_SYSTEM = """You compare two candidate next turns of a voice assistant that was just interrupted.
Judge only task fulfillment: which response better accomplishes what the assistant must do next,
as stated by the criterion. Pick exactly one winner. Then name one concrete deficiency of the
losing response: something it gets wrong, omits or does that hurts the task (for example: re-reads
what the user already heard, ignores the correction, asks for data the user already gave, skips a
required step). "Less detail", "longer" or "shorter" are not deficiencies. Answer with JSON only."""

TF_USER = _CONTEXT + """
## What the assistant must do next (criterion)
{criterion}

## Response A
{response_a}

## Response B
{response_b}

Return JSON: {{"winner": "A" or "B", "loser_deficiency": "<one concrete deficiency of the loser>",
"reasoning": "<one or two sentences>"}}"""

RQ_SYSTEM = """You check one next turn of a voice assistant that was just interrupted against a list of
recovery criteria. Decide each criterion independently: met or not met, with a short reason that
points at the response's words. Be strict: a criterion that is only partly satisfied is not met.
Answer with JSON only."""

RQ_USER = _CONTEXT + """
## The assistant's next response
{response}

## Criteria
{criteria}

Return JSON: {{"criteria": [{{"index": <criterion number>, "met": true or false, "reason": "<short reason>"}},
...]}} with exactly one entry per criterion, in order."""

TF_SCHEMA = {
    "type": "object",
    "properties": {
        "winner": {"type": "string", "enum": ["A", "B"]},
        "loser_deficiency": {"type": "string"},
        "reasoning": {"type": "string"},
    },
    "required": ["winner", "loser_deficiency", "reasoning"],
    "additionalProperties": False,
}

RQ_SCHEMA = {
    "type": "object",
    "properties": {
        "criteria": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"index": {"type": "integer"}, "met": {"type": "boolean"}, "reason": {"type": "string"}},
                "required": ["index", "met", "reason"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["criteria"],
    "additionalProperties": False,
}


def prompt_hash() -> str:
    """Short hash of everything that shapes a verdict: templates, schemas and the version."""
    text = "\x1f".join([PROMPT_VERSION, _CONTEXT, TF_SYSTEM, TF_USER, RQ_SYSTEM, RQ_USER, repr(TF_SCHEMA), repr(RQ_SCHEMA)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def transcript(item: EvalItem) -> str:
    lines = []
    for message in item.history:
        speaker = "Assistant" if message.role == "assistant" else "User"
        lines.append(f"{speaker}: {message.text}")
    lines.append(f"Assistant (cut off here by the user): {item.interrupted.delivered} —")
    lines.append(f"User (interrupting, {item.interruption_type.replace('_', ' ')}): {item.interruption.transcript}")
    return "\n".join(lines)


def tf_messages(item: EvalItem, response_a: str, response_b: str) -> list[dict]:
    user = TF_USER.format(system_prompt=item.system_prompt, transcript=transcript(item), criterion=item.rubric.tf,
                          response_a=response_a, response_b=response_b)
    return [{"role": "system", "content": TF_SYSTEM}, {"role": "user", "content": user}]


def rq_messages(item: EvalItem, response: str) -> list[dict]:
    criteria = "\n".join(f"{n}. {criterion}" for n, criterion in enumerate(item.rubric.rq, start=1))
    user = RQ_USER.format(system_prompt=item.system_prompt, transcript=transcript(item), response=response,
                          criteria=criteria)
    return [{"role": "system", "content": RQ_SYSTEM}, {"role": "user", "content": user}]
