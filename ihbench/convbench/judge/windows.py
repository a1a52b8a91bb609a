"""How a conversation is cut into judge requests: whole when it fits the judge's context, otherwise
in windows of consecutive turns, each preceded by a few earlier turns shown for context. Every
request carries the expected calls of every turn, so a call made early or late is still seen
where it belongs.

Token counts are estimates: a local judge's own tokenizer when there is one, otherwise three
characters per token, which overestimates English (about four) so a plan errs on the safe side.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ihbench.dataset.errors import UsageError

#: room left for the answer per judged turn (the verdicts and a few sentences of reasoning)
ANSWER_TOKENS_PER_TURN = 400
CONTEXT_TURNS = 3  # earlier turns shown before a window, for the state it starts in
DEFAULT_CONTEXT_TOKENS = 128_000


@dataclass
class Window:
    judged: list[int]
    context: list[int]
    tokens: int  # the request's estimate, the answer's room included


@dataclass
class Plan:
    windows: list[Window]
    context_tokens: int
    whole_tokens: int  # what one request for the whole conversation would need

    @property
    def whole(self) -> bool:
        return len(self.windows) == 1

    def describe(self) -> str:
        if self.whole:
            return (f"whole conversation in one request (about {self.whole_tokens:,} tokens of the judge's "
                    f"{self.context_tokens:,})")
        longest = max(len(w.judged) for w in self.windows)
        return (f"{len(self.windows)} windows of up to {longest} turns, each after {CONTEXT_TURNS} earlier turns "
                f"for context: the whole conversation needs about {self.whole_tokens:,} tokens, the judge's context "
                f"is {self.context_tokens:,}")


def count_tokens_for(backend) -> Callable[[list[dict]], int]:
    tokenizer = getattr(backend, "tokenizer", None)
    if tokenizer is not None and hasattr(tokenizer, "apply_chat_template"):
        def count(messages):
            return len(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True))
        return count
    return lambda messages: sum(len(m["content"]) for m in messages) // 3 + 8 * len(messages)


def context_tokens_of(backend, given) -> int:
    """The judge's context: `--judge-context-tokens` when given, a local model's own limit, or the
    default (a current hosted judge's 128k)."""
    if given:
        return int(given)
    lm = getattr(backend, "lm", None)
    limit = getattr(getattr(lm, "config", None), "max_position_embeddings", None)
    return int(limit) if isinstance(limit, int) and limit > 0 else DEFAULT_CONTEXT_TOKENS


def plan_windows(turns: Sequence[int], build: Callable[[list[int], list[int]], list[dict]],
                 count: Callable[[list[dict]], int], context_tokens: int) -> Plan:
    """`build(judged, context)` makes a request's messages; `count` estimates their tokens."""
    turns = list(turns)

    def need(judged, context):
        return count(build(judged, context)) + ANSWER_TOKENS_PER_TURN * len(judged)

    whole = need(turns, [])
    if whole <= context_tokens:
        return Plan([Window(turns, [], whole)], context_tokens, whole)
    windows, start = [], 0
    while start < len(turns):
        context = turns[max(0, start - CONTEXT_TURNS):start]
        end = start + 1
        tokens = need(turns[start:end], context)
        if tokens > context_tokens:
            raise UsageError(f"--judge-context-tokens: {context_tokens:,} tokens cannot hold turn {turns[start]} "
                             f"with its context (about {tokens:,} needed); use a judge with a longer context")
        while end < len(turns):
            more = need(turns[start:end + 1], context)
            if more > context_tokens:
                break
            end, tokens = end + 1, more
        windows.append(Window(turns[start:end], context, tokens))
        start = end
    return Plan(windows, context_tokens, whole)
