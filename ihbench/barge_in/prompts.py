"""The one prompt `ihbench barge-in` adds to the generation pipeline's: the caller cutting in on a
message of which they heard only the beginning.

The pipeline's own `user_interrupting` agent reads the whole planned message and chooses the cut;
here the cut is placed on the clock before the caller speaks, so the caller is shown only what was
heard. Every other agent (planner, user_normal, rubric, baseline) is the pipeline's, unchanged, with
its own prompt version. Versioned and hashed the same way (a test pins the hash).
"""
from __future__ import annotations

import hashlib

from ihbench.generate.prompts import AGENT_TAG, SPOKEN_STYLE, TYPE_DEFINITIONS, messages as _messages

PROMPT_VERSION = "2026-11-28.1"
AGENT = "user_barging_in"

SYSTEM_PROMPT = f"""{AGENT_TAG} {AGENT}
You are the caller on a customer-service phone call, and you cut into the agent while it is still
speaking. You heard only the words shown as heard_so_far; the agent is in the middle of a sentence.
Write what you say now, following the planner's action and the interruption type, in your own
voice. React only to what you heard and what you know yourself (your own data): you cannot know
how the agent's sentence would have gone on. You do not know the agent's internal workflow, stage
names or rules; never refer to them.

{TYPE_DEFINITIONS}

{SPOKEN_STYLE}
Answer with one JSON object only: {{"utterance": "..."}}."""

SCHEMA = {"type": "object", "properties": {"utterance": {"type": "string"}}, "required": ["utterance"],
          "additionalProperties": False}


def prompt_hash() -> str:
    """Short hash of what shapes the answer: the text, the schema and the version."""
    payload = "\x1f".join([PROMPT_VERSION, SYSTEM_PROMPT, repr(SCHEMA)])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def request(payload: dict, task: str) -> list[dict]:
    """The request, laid out as every pipeline agent's (system prompt, task, JSON input): the
    generation module lays out the agents it knows, so the system prompt is swapped in after."""
    laid_out = _messages("user_normal", payload, task)
    return [{"role": "system", "content": SYSTEM_PROMPT}, laid_out[1]]
