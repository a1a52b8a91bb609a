"""`ask_structured`: one question to a text LLM, answered with a usable value or an item failure.

The one sequence judging, review and generation share: the cache key, a cache lookup, the call
under the one retry policy (`ihbench.loaders.retry.with_retries`), a bounded number of re-asks
that tell the model what was wrong with its answer (a model that never answers usably is a
failure, not a loop), and storing the parsed value. Only item failures end an ask quietly for the
caller to record: a `TransportError` after its retries, or an `InvalidAnswer` after the last
re-ask; anything else (a bug in a parse function or a backend) propagates as it is.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, TypeVar

from ihbench.loaders.failures import is_item_failure
from ihbench.loaders.retry import with_retries

from .answers import InvalidAnswer
from .backends import TextLLM
from .cache import LLMCache, cache_key

__all__ = ["Answer", "ask_structured", "concurrently"]

T = TypeVar("T")


@dataclass
class Answer:
    value: Any  # what `parse` returned (for a cache hit: as stored, through JSON)
    cached: bool
    calls: int  # requests this ask sent, re-asks and transport retries included: 0 for a cache hit
    # What making the answer took: {"calls": n} plus "prompt_tokens" and "completion_tokens" summed
    # over the calls whose backend reported them. A cache hit gives the stored counts when the ask
    # keeps them (`cache_usage=True`), else {}: an answer paid for once costs the same however often
    # it is reused.
    usage: dict = field(default_factory=dict)


#: how a re-ask begins: the answer before it could not be used (`reask_reason` reads it back)
REASK = "That answer could not be used: "


def reask_reason(messages: list[dict]) -> Optional[str]:
    """Why `messages` re-ask (the problem with the answer before them), or None for a first question:
    a batch of answers is read in another round, and its unusable answers are said there."""
    if len(messages) >= 2 and messages[-2].get("role") == "assistant" and messages[-1].get("role") == "user":
        text = messages[-1].get("content")
        if isinstance(text, str) and text.startswith(REASK):
            return text[len(REASK):].rsplit(". Answer again with JSON only.", 1)[0]
    return None


async def ask_structured(llm: TextLLM, messages: list[dict], *, schema_name: str, schema: dict,
                         parse: Callable[[str], Any], prompt_hash: str, task: str, epoch: int = 0,
                         cache: Optional[LLMCache] = None, max_reasks: int = 1,
                         invalid: type[InvalidAnswer] = InvalidAnswer, cache_usage: bool = False,
                         check: Optional[Callable[[Any], Any]] = None) -> Answer:
    """The parsed answer to `messages`.

    `parse(text)` returns the value or raises `InvalidAnswer`; after `max_reasks` re-asks the last
    message is raised as `invalid` ("invalid after a re-ask: ...": the class callers' records
    name). The cache key covers `llm.describe()`, `prompt_hash`, `task`, `messages` and `epoch`;
    the stored value is the parsed one, or `{"answer", "usage"}` with `cache_usage`. An item
    failure raised here carries `usage` (what the failed ask spent, in `Answer.usage`'s shape) and,
    for a transport failure, the retry policy's `attempts`.

    A cached answer is used only as a live one is: `check(value)` (given by a caller whose `parse`
    output can be checked again once stored) raises `InvalidAnswer` (or fails) for a value `parse`
    would not have returned. One that cannot be read, or fails the check, or (with `cache_usage`)
    lacks its answer or usage, is a miss: removed, asked again, and counted for the cache's one
    warning per command (`LLMCache.report_unusable`).
    """
    key = cache_key(llm.describe(), prompt_hash, task, messages, epoch) if cache is not None else None
    if cache is not None:
        hit = cache.get(key)
        if hit is not None and not _usable(hit, cache_usage, check):
            cache.discard(key)
            hit = None
        if cache.unusable:
            await cache.report_unusable_at_loop_end()
        if hit is not None:
            settled = getattr(llm, "settled", None)  # a batch backend: the question is this command's, answered
            if settled is not None:
                settled(messages, schema_name, schema)
            return Answer(hit["answer"], True, 0, hit["usage"]) if cache_usage else Answer(hit, True, 0, {})
    spent = {"calls": 0}
    try:
        value = await _ask(llm, list(messages), schema_name, schema, parse, spent, max_reasks, invalid)
    except Exception as error:
        if is_item_failure(error):
            error.usage = spent
        raise
    if cache is not None:
        cache.put(key, {"answer": value, "usage": spent} if cache_usage else value)
    return Answer(value, False, spent["calls"], spent)


def _usable(hit: Any, cache_usage: bool, check: Optional[Callable[[Any], Any]]) -> bool:
    """Whether a stored value can stand for an answer: `{"answer", "usage"}` with counts as
    `Answer.usage` has them (with `cache_usage`), and an answer `check` accepts."""
    if cache_usage:
        if not isinstance(hit, dict) or hit.get("answer") is None or not isinstance(hit.get("usage"), dict):
            return False
        if not all(isinstance(name, str) and isinstance(count, int) and not isinstance(count, bool) and count >= 0
                   for name, count in hit["usage"].items()):
            return False
        hit = hit["answer"]
    if check is None:
        return True
    try:
        check(hit)
    except (InvalidAnswer, TypeError, ValueError, KeyError, IndexError, AttributeError):
        return False
    return True


async def _ask(llm: TextLLM, conversation: list[dict], schema_name: str, schema: dict, parse, spent: dict,
               max_reasks: int, invalid: type[InvalidAnswer]):
    for ask in range(max_reasks + 1):
        async def call(conversation=conversation):
            spent["calls"] += 1
            text, usage = await llm.complete(conversation, schema_name, schema)
            for name, value in usage.items():
                spent[name] = spent.get(name, 0) + value
            return text

        text, _ = await with_retries(call)
        try:
            return parse(text)
        except InvalidAnswer as error:
            if ask == max_reasks:
                after = "a re-ask" if max_reasks == 1 else f"{max_reasks} re-asks"
                raise invalid(f"invalid after {after}: {error}") from None
            conversation = conversation + [{"role": "assistant", "content": text},
                                           {"role": "user", "content": f"{REASK}{error}. Answer again with JSON only."}]
    raise AssertionError("unreachable")


@contextlib.asynccontextmanager
async def concurrently(coroutines: Iterable[Awaitable[T]]) -> AsyncIterator[Iterator[Awaitable[T]]]:
    """Many asks at once: the coroutines as tasks, yielded in completion order
    (`asyncio.as_completed`). Leaving the block, normally or because one raised (a bug), cancels
    and awaits the tasks still running: nothing keeps calling the LLM for a caller that stopped,
    and no task's failure is left unretrieved."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        yield asyncio.as_completed(tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
