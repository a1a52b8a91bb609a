"""The generation pipeline's prompts, written in-house from the IHBench paper's description
(Sections 3.3-3.4, Appendix I) and versioned like the judge prompts.

Every generated conversation records `PROMPT_VERSION` and `prompt_hash()`; a test pins the
hash, so a prompt edit without a version bump fails CI (two suites made by different prompts
must never look alike). Each system prompt opens with `AGENT_TAG <name>` on its own line: the
one stable thing a log reader, or a scripted test server, needs to tell the agents apart.
Inputs travel as one JSON block, so no agent has to guess where a field starts or ends.
"""
from __future__ import annotations

import functools
import hashlib
import json

PROMPT_VERSION = "2026-12-04.1"  # inputs as compact JSON (2026-11-23.1: indented)
AGENT_TAG = "IHBench generation agent:"

TYPE_DEFINITIONS = """Interruption types (exact spellings):
- normal: a relevant, cooperative cut-in that volunteers a new detail or constraint, or asks a quick
  clarification. It is unsolicited: never simply the answer to a question the agent just asked.
- impatient: the caller wants to speed up, skip the explanation or get to the point.
- correction: the caller corrects something THEY said in an EARLIER turn (a value, a date, a choice).
  Not a correction of the agent, not a slip inside the same utterance.
- topic_switch: the caller abruptly brings up something unrelated to the current workflow stage.
- filler: a short backchannel with no content ("mm-hm", "yeah", "right", "okay").
- pushback: the caller resists, challenges, distrusts or disputes something the agent ACTUALLY said
  in the part the caller heard."""

SPOKEN_STYLE = """Everything said is spoken on a phone line: plain sentences, no lists, no markdown, no
emojis, numbers and codes written the way they are said or printed on a document. Use the concrete
values given; never invent placeholders such as [NAME], {account}, XXX or <date>."""

_PREREQUISITES = f"""{AGENT_TAG} prerequisites
You design the ground truth of a simulated customer-service phone call used to test voice agents.
Given a domain and a goal (and possibly the organisation's own workflow, knowledge and policies,
which you must keep), write:
- knowledge_base.workflow_stages: the ordered stages the agent walks through to reach the goal
  (snake_case names; each with a description, skip conditions, failure handling and termination
  conditions). When a workflow is given, return exactly its stages, same names, same order.
- knowledge_base.guidelines: the domain rules the agent must follow, with concrete numbers,
  deadlines, fees, phone numbers and form names.
- knowledge_base.user_data: concrete fictional facts about this caller (name, account or case
  numbers, amounts, dates, addresses) that the call will need. Never placeholders.
- caller_voice: "male" or "female", matching the caller's name.
- intents: the requested number of different callers' intents for this same call. Each has a
  behavioural profile (how this caller talks and what they care about), a probability for each of
  the six interruption types (summing to 1; prefer the challenging types, pushback and impatient,
  over the cooperative ones) and hidden information: facts the caller knows but reveals only when
  it becomes relevant.

{TYPE_DEFINITIONS}

Answer with one JSON object only."""

_SYSTEM_WRITER = f"""{AGENT_TAG} system_writer
You write the complete operating instructions of a voice agent on a company's phone line, from
the domain, the goal and the knowledge base. Describe the role and the tone, walk through the
workflow stages in order (what to do, when to skip, what to do on failure, when to stop), state
every guideline and the facts the agent may use, including what the records show about this
caller. Write for speech: short sentences, one question at a time, no lists or formatting in what
the agent says. Say nothing about being interrupted, cut off, talked over or how to react to it:
the call tests what the agent does on its own.
Answer with one JSON object only: {{"system_message": "..."}}."""

_PLANNER = f"""{AGENT_TAG} planner
You plan a simulated customer-service phone call one round at a time. A round is one agent
message followed by the caller's reply, which may cut into the agent's message. You see the whole
state: the workflow, the caller's intent, the call so far (with the full text of every cut-off
agent message) and a few seeded suggestions. Decide for the next round:
- stage: the workflow stage the agent is in during its message (a name from the workflow);
- assistant_action: what the agent does in its message, in one or two sentences. The agent follows
  its workflow and reacts to the caller's last words; give it substance (several sentences of
  explanation or questions) when the caller will cut in;
- user_action: what the caller does, in one or two sentences, true to the intent's profile; bring
  in hidden information when it becomes relevant;
- interrupt: whether the caller cuts into the agent's message; type: the interruption type, or
  null when there is no interruption. Follow the seeded suggestion when it fits naturally; choose
  another type or no interruption when it does not (a correction needs something the caller said
  earlier; pushback needs something the agent will say). Interruptions happen inside a stage, in
  the middle of the agent's explanation, not at clean boundaries;
- cut_hint: for an interruption, where in the agent's message the caller cuts in (for example
  "while the agent reads out the fee"), otherwise "";
- end: true only when this round brings the workflow to a terminal outcome, and not before the
  minimum number of rounds.
The caller never knows the agent's internal stage names, workflow order or knowledge base.

{TYPE_DEFINITIONS}

Answer with one JSON object only."""

_ASSISTANT_NORMAL = f"""{AGENT_TAG} assistant_normal
You are the voice agent described by the operating instructions in the input, on a live phone
call. Write your next message. If the call has not started, open it naturally and start the
workflow. Otherwise respond to what the caller said and move the workflow forward as the planner's
action says. Follow your operating instructions and use only facts from them or from the call.
{SPOKEN_STYLE}
Answer with one JSON object only: {{"message": "..."}}."""

_ASSISTANT_AFTER = f"""{AGENT_TAG} assistant_after_interruption
You are the voice agent described by the operating instructions in the input, on a live phone
call. The caller cut into your last message: they heard only the part shown as heard; the rest
was never said. Write your next message, recovering well for the kind of cut-in it was:
- a detail, constraint or quick question: address it, then resume the step you were in;
- impatience: skip what they want skipped and move on, without re-explaining it;
- a correction of something they said earlier: accept it without argument, use the new value and
  continue;
- an unrelated request: deal with it briefly and separately, then steer back to the workflow;
- a short backchannel ("mm-hm", "yeah"): continue exactly where you were cut off, without
  repeating, restarting or acknowledging it;
- resistance or doubt: de-escalate with empathy and offer the alternatives your instructions
  allow.
Say again anything unheard that the caller still needs; do not repeat what they heard.
{SPOKEN_STYLE}
Answer with one JSON object only: {{"message": "..."}}."""

_USER_NORMAL = f"""{AGENT_TAG} user_normal
You are the caller on a customer-service phone call. You heard the agent's whole last message.
Reply the way the planner's action describes, in your own voice: natural, usually short, and only
about what you heard and what you know yourself (your own data). You do not know the agent's
internal workflow, stage names or rules; never refer to them.
{SPOKEN_STYLE}
Answer with one JSON object only: {{"utterance": "..."}}."""

_USER_INTERRUPTING = f"""{AGENT_TAG} user_interrupting
You are the caller on a customer-service phone call, and you cut into the agent's message. You
are shown the agent's full planned message, but you hear only its beginning: choose the exact
point where you cut in and return that beginning, character for character, as "delivered". Cut
inside a sentence (the delivered part must not end at a full stop, question mark, exclamation mark
or colon), after at least three words, with at least three words left unsaid. Then write what you
say, following the planner's action and the interruption type. React only to the delivered part:
never use, hint at or answer anything from the part you did not hear. You do not know the agent's
internal workflow, stage names or rules.

{TYPE_DEFINITIONS}

{SPOKEN_STYLE}
Answer with one JSON object only: {{"delivered": "<exact beginning of the agent's message>",
"utterance": "..."}}."""

_RUBRIC = f"""{AGENT_TAG} rubric
You write the grading criteria for the agent's NEXT message right after the caller cut in. No
response exists yet; write what any good next message must do, grounded only in the agent's
operating instructions and the call as heard (the caller heard only the delivered part).
- tf_rubric: one sentence stating what the next message must accomplish for the task.
- rq_rubrics: 2 to 4 pass/fail criteria specific to the interruption type, each checkable from the
  response alone (for a backchannel: continues exactly where it was cut off, no restart, no
  acknowledgement; for impatience: skips what was to be skipped; for a correction: accepts and
  uses the new value without pushback; for an unrelated request: handles it separately then
  returns to the workflow; for resistance: de-escalates and offers allowed alternatives; for a
  detail or question: addresses it and resumes).

{TYPE_DEFINITIONS}

Answer with one JSON object only: {{"tf_rubric": "...", "rq_rubrics": ["...", "..."]}}."""

_BASELINE = f"""{AGENT_TAG} baseline
You are the voice agent described by the operating instructions in the input, on a live phone
call. Your last message was cut short: the caller heard only the part shown as delivered. Write
the next thing you say to the caller.
{SPOKEN_STYLE}
Answer with one JSON object only: {{"response": "..."}}."""

CHECKS = ("state_consistency", "leakage", "user_knowledge", "type_definition", "grounding", "naturalness")
EDITABLE_FIELDS = ("stage", "assistant", "delivered", "user", "type", "tf_rubric", "rq_rubrics")

_VERIFIER = f"""{AGENT_TAG} verifier
You check a synthesized customer-service call, used to test how voice agents recover from being
interrupted, before it enters a benchmark. Read every message and every interruption point and
report each problem you find:
- state_consistency: the agent's messages contradict the workflow order, the knowledge base,
  facts already established, or what the caller said (including a correction the caller made);
- leakage: a caller's interruption uses, hints at or answers anything from the part of the agent's
  message the caller did not hear;
- user_knowledge: the caller refers to internal stage names, the workflow order or knowledge-base
  details a real caller could not know;
- type_definition: an interruption does not fit the definition of its labelled type;
- grounding: a rubric criterion is not checkable from the next response alone, or relies on a
  fact that is neither in the operating instructions nor in the call as heard;
- naturalness: a message does not sound like spoken conversation (lists, markdown, placeholders,
  robotic repetition, a caller who sounds like the agent).
For each problem give the 1-based turn, the field to change (one of {", ".join(EDITABLE_FIELDS)}),
the check, a one-line description, and whether a minimal edit of that turn's fields can fix it
(fixable) or the call is broken beyond small edits (not fixable). Report nothing that is fine.

{TYPE_DEFINITIONS}

Answer with one JSON object only: {{"findings": [...]}} (an empty list when the call is clean)."""

_MODIFIER = f"""{AGENT_TAG} modifier
You repair a synthesized customer-service call with minimal, targeted edits. For each finding,
change as little as possible: a few words of a caller's utterance, the cut point, a criterion.
Keep everything that is not part of a finding exactly as it is. Rules that every edit must keep:
"delivered" stays an exact beginning of its turn's "assistant" text, cut inside a sentence with at
least three words on each side; a caller reacts only to what they heard; the type stays one of the
six; a turn keeps 2 to 4 rq_rubrics. Return every changed field of every turn as one edit: "text"
holds the new text (or the new type or stage name) and "criteria" the new list of criteria when
the field is rq_rubrics (otherwise an empty list).
{SPOKEN_STYLE}
Answer with one JSON object only: {{"edits": [{{"turn": 1, "field": "user", "text": "...",
"criteria": []}}]}}."""

SYSTEM_PROMPTS = {
    "prerequisites": _PREREQUISITES,
    "system_writer": _SYSTEM_WRITER,
    "planner": _PLANNER,
    "assistant_normal": _ASSISTANT_NORMAL,
    "assistant_after_interruption": _ASSISTANT_AFTER,
    "user_normal": _USER_NORMAL,
    "user_interrupting": _USER_INTERRUPTING,
    "rubric": _RUBRIC,
    "baseline": _BASELINE,
    "verifier": _VERIFIER,
    "modifier": _MODIFIER,
}

# --- JSON schemas (OpenAI strict mode: every property required, no extra properties) ---------

_TYPES = ["normal", "impatient", "correction", "topic_switch", "filler", "pushback"]


def _obj(properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


_STR, _STRS = {"type": "string"}, {"type": "array", "items": {"type": "string"}}

SCHEMAS = {
    "prerequisites": _obj({
        "domain_description": _STR,
        "caller_voice": {"type": "string", "enum": ["male", "female"]},
        "knowledge_base": _obj({
            "workflow_stages": {"type": "array", "items": _obj({
                "name": _STR, "description": _STR, "skip_conditions": _STRS, "failure_handling": _STR,
                "termination_conditions": _STRS})},
            "guidelines": _STRS,
            "user_data": {"type": "array", "items": _obj({"field": _STR, "value": _STR})},
        }),
        "intents": {"type": "array", "items": _obj({
            "profile": _STR,
            "interruption_probabilities": _obj({t: {"type": "number"} for t in _TYPES}),
            "hidden_info": _STRS,
        })},
    }),
    "system_writer": _obj({"system_message": _STR}),
    "planner": _obj({
        "stage": _STR, "assistant_action": _STR, "user_action": _STR, "interrupt": {"type": "boolean"},
        "type": {"type": ["string", "null"], "enum": [*_TYPES, None]}, "cut_hint": _STR, "end": {"type": "boolean"},
    }),
    "assistant_normal": _obj({"message": _STR}),
    "assistant_after_interruption": _obj({"message": _STR}),
    "user_normal": _obj({"utterance": _STR}),
    "user_interrupting": _obj({"delivered": _STR, "utterance": _STR}),
    "rubric": _obj({"tf_rubric": _STR, "rq_rubrics": _STRS}),
    "baseline": _obj({"response": _STR}),
    "verifier": _obj({"findings": {"type": "array", "items": _obj({
        "turn": {"type": "integer"}, "field": {"type": "string", "enum": list(EDITABLE_FIELDS)},
        "check": {"type": "string", "enum": list(CHECKS)}, "problem": _STR, "fixable": {"type": "boolean"}})}}),
    "modifier": _obj({"edits": {"type": "array", "items": _obj({
        "turn": {"type": "integer"}, "field": {"type": "string", "enum": list(EDITABLE_FIELDS)}, "text": _STR,
        "criteria": _STRS})}}),
}

_TASK_HEADER = "## Input\n```json\n"
#: how an agent's input is written out: compact, as the LLM reads it as well as indented, and the C encoder
#: writes it (an indented dump went through the pure-Python encoder: the largest single cost of the
#: barge-in simulator's own work, benchmarks/barge_in.py)
_INPUT_JSON = {"ensure_ascii": False}


@functools.lru_cache(maxsize=None)
def prompt_hash() -> str:
    """Short hash of everything that shapes an agent's answer: texts, schemas and the version.
    Computed once per process (every agent call stamps its cache key with it, and hashing all the
    prompt texts took 0.4 ms a call): the texts and schemas are constants of this module."""
    parts = [PROMPT_VERSION, _TASK_HEADER, repr(sorted(_INPUT_JSON.items()))] + [f"{name}\x1e{SYSTEM_PROMPTS[name]}\x1e{SCHEMAS[name]!r}"
                                              for name in sorted(SYSTEM_PROMPTS)]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


def messages(agent: str, payload: dict, task: str) -> list[dict]:
    """An agent's request: its system prompt, then the task in words and its input as JSON."""
    body = json.dumps(payload, **_INPUT_JSON)
    return [{"role": "system", "content": SYSTEM_PROMPTS[agent]},
            {"role": "user", "content": f"{task}\n\n{_TASK_HEADER}{body}\n```"}]


def agent_of(request_messages: list[dict]) -> str:
    """Which agent a request is for (the first line of its system prompt)."""
    first = request_messages[0]["content"].split("\n", 1)[0]
    return first.removeprefix(AGENT_TAG).strip()


def payload_of(request_messages: list[dict]) -> dict:
    """The JSON input of a request, as the agent received it."""
    text = request_messages[1]["content"]
    return json.loads(text.split(_TASK_HEADER, 1)[1].rsplit("\n```", 1)[0])
