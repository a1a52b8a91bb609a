"""One turn of an on-policy ConversationBench conversation: the user speaks, the model answers, and
every tool call it makes is recorded, answered (`tool_results`) and handed back until it answers
without one, or the round cap is hit.

The history is the model's own: its earlier replies, its calls and their results, never the golden
text. What a turn adds to it (the assistant and tool messages after the user's) is kept in the
turn's record, so a resumed conversation continues with exactly the history it had.

The text of a turn is every text segment the model wrote in it, joined with a newline (a preamble
before a call and the answer after its result), as the reference's realtime pipeline records it;
its text pipeline keeps only the last segment, which the records keep apart (`final_text`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

from ihbench.loaders.failures import EmptyReplyError, no_text, used_the_budget

from .tool_results import TurnTools, is_end_session, tool_message_content

ENDED = "[MODEL_ENDED_SESSION]"
ENDED_EARLY = "[MODEL_ENDED_SESSION_EARLY]"


@dataclass
class TurnOutcome:
    text: str = ""
    final_text: str = ""
    tool_calls: list[dict] = field(default_factory=list)  # {id, name, args, is_duplicate, result}
    messages: list[dict] = field(default_factory=list)  # what the turn adds to the history after the user's
    rounds: int = 0
    round_cap_hit: bool = False
    ended_session: bool = False
    latency_s: float = 0.0
    ttfb_s: Optional[float] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    reasoning: Optional[str] = None
    #: a request of the turn may have been cut by --max-new-tokens (`failures.used_the_budget`)
    ended_at_budget: bool = False


def run_turn(loader, history: list[dict], user_message: dict, tools: list[dict], turn_tools: TurnTools, config,
             seed: int, max_rounds: int) -> TurnOutcome:
    """The model's whole turn. An item failure of the loader (a server down, audio too long)
    propagates: the caller records it on the turn and stops the conversation there."""
    outcome = TurnOutcome()
    started = time.perf_counter()
    texts, reasonings = [], []
    while True:
        if outcome.rounds == max_rounds:
            outcome.round_cap_hit = True
            break
        reply = loader.chat([*history, user_message, *outcome.messages], tools, config, seed + outcome.rounds)
        outcome.rounds += 1
        _add_usage(outcome, reply)
        outcome.ended_at_budget = outcome.ended_at_budget or used_the_budget(reply, config.max_new_tokens)
        if reply.reasoning:
            reasonings.append(reply.reasoning)
        if reply.text:
            texts.append(reply.text)
            outcome.final_text = reply.text
        kept = []
        for call in reply.tool_calls:
            result, duplicate = turn_tools.answer(call.name, call.arguments)
            outcome.tool_calls.append({"id": call.id, "name": call.name, "args": call.arguments,
                                       "is_duplicate": duplicate, "result": result})
            if not duplicate:  # a duplicate and its result stay out of the model's history
                kept.append((call, result))
        if not kept:
            outcome.messages.append({"role": "assistant", "content": reply.text})
            break
        outcome.messages.append({"role": "assistant", "content": reply.text or None,
                                 "tool_calls": [call.to_message() for call, _ in kept]})
        outcome.messages += [{"role": "tool", "tool_call_id": call.id, "content": tool_message_content(result)}
                             for call, result in kept]
        if any(is_end_session(call.name) for call, _ in kept):
            outcome.ended_session = True
            break
    outcome.text = "\n".join(texts)
    outcome.reasoning = "\n\n".join(reasonings) or None
    if no_text(outcome.text) and not outcome.tool_calls:  # said nothing and did nothing: no answer to judge
        finish = " (its whole budget went to its reasoning)" if outcome.reasoning else ""
        raise EmptyReplyError(f"the model's turn has no text and no tool call{finish}")
    outcome.latency_s = time.perf_counter() - started
    return outcome


def _add_usage(outcome: TurnOutcome, reply) -> None:
    """Summed over the turn's requests (the reference keeps the last report only; the sum is what
    the turn cost)."""
    if outcome.ttfb_s is None and reply.ttfb_s is not None:
        outcome.ttfb_s = reply.ttfb_s
    for name in ("input_tokens", "output_tokens"):
        value = getattr(reply, name)
        if value is not None:
            setattr(outcome, name, (getattr(outcome, name) or 0) + value)
