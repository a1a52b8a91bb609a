"""Thinking models write their reasoning before the answer, between markers. The reasoning is
kept (a run records it in its own field) but never shown to judges: they score what the agent
says, as a caller would hear it."""
from __future__ import annotations

from typing import Optional


def split_reasoning(raw: str, start: str, end: str) -> tuple[str, Optional[str]]:
    """(answer, reasoning). Text before `start` is kept as answer; reasoning that never closes
    (the length limit hit mid-thought) leaves an empty answer rather than leaking the thoughts."""
    if start not in raw and end not in raw:
        return raw, None
    before, _, rest = raw.partition(start) if start in raw else ("", "", raw)
    if end not in rest:
        return before.strip(), rest.strip()
    reasoning, _, answer = rest.partition(end)
    return (before + answer).strip(), reasoning.strip()


def budget_warning(loader, max_new_tokens: int) -> Optional[str]:
    """What `ihbench run` says at start when thinking is on and the answer budget is small: a thought
    that outgrows it leaves no answer, and every such item fails (EmptyAfterThinkingError)."""
    if not loader.thinks() or max_new_tokens >= loader.thinking_tokens:
        return None
    return (f"thinking is on ({loader.name}) and --max-new-tokens is {max_new_tokens}: a thought often runs past it, "
            "and the answer then comes back empty (recorded as an item error, EmptyAfterThinkingError, never "
            f"judged); give --max-new-tokens {loader.thinking_tokens} or more")
