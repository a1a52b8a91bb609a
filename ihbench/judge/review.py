"""`ihbench verify --judge-model M`: the paper's verifier questions asked of an LLM, per point.

The lexical check in `ihbench.dataset.verify` catches an interruption that quotes words the user
never heard; it cannot catch one that reacts to the unheard part in other words, a caller who
knows workflow internals, a mislabelled type or a criterion that needs a fact nobody has. Those
need a reader. The prompt is versioned and hashed like the judge prompts; answers go through
`ihbench.llm.ask_structured` (tolerant parser, one re-ask, retries and cache) like the judges'.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Optional, Sequence

from ihbench.dataset.sources import REVIEW_QUESTIONS, SourceConversation, SourceTurn
from ihbench.loaders.failures import describe_failure, is_item_failure

from ..llm import LLMCache, TextLLM, ask_structured, concurrently, extract_json
from .content_prompts import versioned_hash
from .parse import InvalidJudgment

REVIEW_PROMPT_VERSION = "2026-11-23.1"

REVIEW_SYSTEM = """You review one interruption point of a scripted customer-service call used to test voice
agents. Answer four questions independently; for each, say whether there is a problem and give a
one-line reason. Be sceptical: subtle problems matter. Answer with JSON only."""

REVIEW_USER = """## Agent's operating instructions
{system_prompt}

## What the caller knows about themselves (their own data and hidden information)
{caller}

## Call so far (as heard)
{transcript}

## The interrupted agent message
Heard by the caller: {delivered}
NOT heard (cut off): {undelivered}

## The caller's interruption (labelled type: {kind})
{interruption}

## Type definitions
- normal: relevant, non-hostile; adds a detail or constraint or asks a quick clarification; unsolicited,
  never the answer to a question the agent just asked.
- impatient: wants to speed up, skip the explanation, get to the point.
- correction: corrects something the caller themselves said in an earlier turn (not the agent, not a
  same-turn slip).
- topic_switch: an abrupt request unrelated to the current workflow stage.
- filler: a brief backchannel with no content ("yeah", "mm-hm").
- pushback: resists, challenges, suspects or disputes something the agent actually said.

## Criteria the agent's next message will be judged by
Task: {tf}
Recovery:
{rq}

## Questions
1. leakage: does the interruption use information that is only in the NOT heard part (in meaning,
   not just shared words)?
2. user_knowledge: does the caller show knowledge of workflow internals they could not know?
3. type: does the interruption NOT match the definition of its labelled type?
4. grounding: is any criterion not checkable from a response alone, or not grounded in the
   instructions or the call (a fact the agent cannot know, an invented policy, a contradiction)?

Return JSON: {{"leakage": {{"problem": true or false, "reason": "..."}}, "user_knowledge": {{...}},
"type": {{...}}, "grounding": {{...}}}}"""

REVIEW_SCHEMA = {
    "type": "object",
    "properties": {q: {"type": "object", "properties": {"problem": {"type": "boolean"}, "reason": {"type": "string"}},
                       "required": ["problem", "reason"], "additionalProperties": False} for q in REVIEW_QUESTIONS},
    "required": list(REVIEW_QUESTIONS),
    "additionalProperties": False,
}


def review_prompt_hash() -> str:
    return versioned_hash(REVIEW_PROMPT_VERSION, REVIEW_SYSTEM, REVIEW_USER, REVIEW_SCHEMA)


def parse_review(text: str) -> dict:
    data = extract_json(text)
    answer = {}
    for question in REVIEW_QUESTIONS:
        entry = data.get(question)
        if not isinstance(entry, dict) or not isinstance(entry.get("problem"), bool):
            raise InvalidJudgment(f"{question}: expected {{\"problem\": true/false, \"reason\": \"...\"}}")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidJudgment(f"{question}: the reason is missing")
        answer[question] = {"problem": entry["problem"], "reason": reason.strip()}
    return answer


def check_review(stored) -> None:
    """A cached review, checked as a live one is (`parse_review` gives its own output back unchanged)."""
    if parse_review(json.dumps(stored)) != stored:
        raise InvalidJudgment("a cached review that the reviewer's parser would not have written")


def review_messages(conversation: SourceConversation, turn: SourceTurn) -> list[dict]:
    kb = conversation.knowledge_base
    caller = "\n".join([f"- {d['field']}: {d['value']}" for d in kb.get("user_data", [])] +
                       [f"- (hidden) {h}" for h in conversation.user_intent.get("hidden_info", [])]) or "-"
    transcript = "\n".join(line for t in conversation.turns[:turn.index]
                           for line in (f"Agent: {t.heard}", f"Caller: {t.user}"))
    i = turn.interruption
    user = REVIEW_USER.format(system_prompt=conversation.system_message, caller=caller, transcript=transcript or "-",
                              delivered=turn.delivered, undelivered=turn.assistant[len(turn.delivered):].strip(),
                              kind=i.type, interruption=turn.user, tf=i.tf_rubric,
                              rq="\n".join(f"{n}. {c}" for n, c in enumerate(i.rq_rubrics, start=1)))
    return [{"role": "system", "content": REVIEW_SYSTEM}, {"role": "user", "content": user}]


@dataclass
class PointReview:
    conversation_id: str
    turn: int  # 1-based, as `ihbench verify` names turns
    answer: Optional[dict]  # question -> {"problem", "reason"}; None when the reviewer failed
    error: Optional[str] = None

    @property
    def findings(self) -> list[str]:
        return [q for q, a in (self.answer or {}).items() if a["problem"]]


async def review_conversations(conversations: Sequence[SourceConversation], backend: TextLLM, *,
                               concurrency: int = 8, cache: Optional[LLMCache] = None,
                               progress: bool = True) -> list[PointReview]:
    from tqdm.auto import tqdm

    from ihbench.dataset.argtypes import concurrency as in_flight

    in_flight().check("--concurrency", concurrency)  # 0 would wait for a free slot for ever
    cache = cache or LLMCache()
    semaphore = asyncio.Semaphore(concurrency)
    points = [(c, t) for c in conversations for t in c.interrupted_turns]

    async def one(conversation, turn) -> PointReview:
        async with semaphore:
            try:
                answer = await ask_structured(backend, review_messages(conversation, turn), schema_name="point_review",
                                              schema=REVIEW_SCHEMA, parse=parse_review, cache=cache,
                                              prompt_hash=review_prompt_hash(), task="review",
                                              invalid=InvalidJudgment, check=check_review)
            except Exception as error:
                if not is_item_failure(error):  # a bug: stops the review with its traceback
                    raise
                # a reviewer failure is reported as such, never as a pass
                return PointReview(conversation.conversation_id, turn.number, None, describe_failure(error))
        return PointReview(conversation.conversation_id, turn.number, answer.value)

    results = []
    with tqdm(total=len(points), unit="point", desc=f"reviewing with {backend.model}", disable=not progress) as bar:
        async with concurrently(one(c, t) for c, t in points) as completed:
            for future in completed:
                results.append(await future)
                bar.update(1)
    return sorted(results, key=lambda r: (r.conversation_id, r.turn))
