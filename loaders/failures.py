"""Which exceptions belong to one item, decided in one place.

The item-level failures are the toolkit's own `ItemFailure` subclasses (audio too long or
empty, a transport failure or refusal from a server, an unreadable judge answer) and two foreign
ones that a model can raise on one large input: Python's `MemoryError` and torch's out-of-memory
error. The runner, the loaders and the LLM client catch exactly these and record them on the
item; everything else propagates with its traceback, and the records written so far stay valid.
"""
from __future__ import annotations

import re
import sys
from typing import Optional

from ihbench.dataset.checks.words import has_words
from ihbench.dataset.errors import ItemFailure

__all__ = ["EmptyAfterThinkingError", "EmptyReplyError", "ItemFailure", "MalformedReplyError", "NonFiniteScoresError",
           "UnsupportedInputError", "checked_answer", "describe_failure", "is_item_failure", "no_text"]


def _out_of_memory_types() -> tuple[type[BaseException], ...]:
    torch = sys.modules.get("torch")  # never imported here: if torch is not loaded, it cannot have raised
    if torch is None:
        return ()
    return tuple(t for t in (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
                 if isinstance(t, type))


def is_item_failure(error: BaseException) -> bool:
    return isinstance(error, (ItemFailure, MemoryError, *_out_of_memory_types()))


def describe_failure(error: BaseException) -> str:
    """The text stored in a record's `error` field, of bounded length: a judge's or a server's words quoted
    in a message may be a megabyte, once on every failed item's record."""
    from ihbench.dataset.redaction import shortened

    return f"{type(error).__name__}: {shortened(str(error))}"


class UnsupportedInputError(ItemFailure, ValueError):
    """This model cannot take this item's input as given (e.g. a transcript holding one of its
    tokenizer's control tokens): an error on the item, not on the run."""


class EmptyReplyError(ItemFailure, ValueError):
    """A reply with no text (a server's content null or empty, a local model's answer of special
    tokens only; invisible characters count as none, `no_text`): not an answer to score as a loss,
    but a failed request, retried by the next run. A thinking model that spent its whole token budget on
    its reasoning ends this way."""


class NonFiniteScoresError(ItemFailure, ValueError):
    """The model's scores (logits) were not numbers while it answered (NaN weights, an overflow in half
    precision): what it generated is one token repeated, not its answer; a failed item, retried by the
    next run, never scored. At load (`TransformersLoader`'s probe) it refuses the checkpoint instead."""


class MalformedReplyError(ItemFailure, ValueError):
    """A server's answer whose text is neither text nor a list of text parts (a number, an object): no
    answer to record, a failed request the next run retries (battery 48, U4: a traceback that lost
    the batch's good answers)."""


class StoppedByProviderError(ItemFailure, ValueError):
    """The server stopped the answer itself (finish_reason "content_filter"): what it sent is not the
    model's answer, and scored it would count as the model's; a failed request, retried by the next run."""


#: finish reasons of an answer that ended as the model meant it, as servers spell them (case, spaces and `-`
#: aside): its end token or a stop string (OpenAI's and vLLM's `stop`, Anthropic's `end_turn` and
#: `stop_sequence`, TGI's `eos_token`), a tool call, or the --max-new-tokens budget (`length`, `max_tokens`:
#: kept, with the run's note on answers that used it all). Any other reason (a filter, `error`, `abort`,
#: Gemini's `MALFORMED_FUNCTION_CALL`, `pause_turn`, `incomplete`, a word this list does not know) says the
#: answer did not end as the model meant: what was sent is not its whole answer (battery 48, U8; battery 49, V4;
#: battery 53, Z9: reasons outside a list of bad ones were kept and scored)
COMPLETE_ANSWER = ("stop", "eos", "eos_token", "end_turn", "stop_sequence", "tool_calls", "tool_call", "function_call",
                   "tool_use", "length", "max_tokens")


#: the reasons that say the token budget ended the answer
AT_THE_BUDGET = ("length", "max_tokens")


def check_not_filtered(finish_reason: object, text: Optional[str], used: Optional[int] = None,
                       budget: Optional[int] = None) -> None:
    """No reason at all (a server that leaves it out) is taken as a normal end; a reason that is not text
    (`{"type": "error"}`) is none. `length` with fewer tokens `used` than the `budget` asked for is the
    server's own limit (vLLM's --max-model-len full long before max_tokens), not --max-new-tokens: the answer
    was cut where the protocol would not have cut it (battery 54, A12)."""
    if finish_reason is None or finish_reason == "":
        return
    said = _reason(finish_reason)
    if said not in COMPLETE_ANSWER:
        raise StoppedByProviderError(f"the server stopped the answer (finish_reason {_reason_shown(finish_reason)}) after "
                                     f"{len(text or '')} character(s): not the model's whole answer")
    if said in AT_THE_BUDGET and isinstance(used, int) and isinstance(budget, int) and used < budget:
        raise StoppedByProviderError(f"the server stopped the answer (finish_reason {_reason_shown(finish_reason)}) after "
                                     f"{used} of the {budget} tokens --max-new-tokens allows: its own context or limit "
                                     "ended it, not the budget")


def check_whole_unbudgeted(finish_reason: object, text: Optional[str]) -> None:
    """`check_not_filtered` for a call that asks no token budget (a judge's, a verifier's, generate's): `length` is
    then always the server's own limit, and the answer it cut is none (battery 64, K3: a judge's answer cut so was
    scored)."""
    check_not_filtered(finish_reason, text)
    if ended_at_budget(finish_reason):
        raise StoppedByProviderError(f"the server stopped the answer (finish_reason {_reason_shown(finish_reason)}) "
                                     f"after {len(text or '')} character(s): its own token limit cut it, and no "
                                     "budget was asked")


def _reason(finish_reason: object) -> Optional[str]:
    """A finish_reason as this module compares it (`STOP`, ` Stop `, `end-turn`: one spelling); None if not text."""
    return finish_reason.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(finish_reason, str) \
        else None


def ended_at_budget(finish_reason: object) -> bool:
    """The server says the token budget ended the answer (`length`, `max_tokens`): an answer kept, and noted as
    maybe cut, with or without a token count to show it (battery 55, B5: many servers send no usage)."""
    return _reason(finish_reason) in AT_THE_BUDGET


def used_the_budget(answer, max_new_tokens: int) -> bool:
    """An answer (a `Response` or a `ChatReply`) the token budget may have cut: the server said so, or it used every
    token; kept and scored, and counted in the note a run prints so the budget can be raised (battery 56, C8:
    ConversationBench and barge-in said nothing)."""
    return bool(getattr(answer, "ended_at_budget", False)) or answer.output_tokens == max_new_tokens


def _reason_shown(value: object, longest: int = 80) -> str:
    """A server's value as a message shows it: repr, cut to `longest` characters (a reason may be anything)."""
    shown = repr(value)
    return shown if len(shown) <= longest else shown[:longest] + "...'"


def no_text(text: Optional[str]) -> bool:
    """An answer with nothing a listener would hear: None, empty, or without a letter or digit that shows (only
    spaces, zero-width or control characters, punctuation, U+FFFD: `checks.words.has_words`)."""
    return text is None or not has_words(text)


def checked_answer(text: Optional[str], what: str = "the model's answer") -> str:
    """`text`, or the `EmptyReplyError` of an answer with no text (`no_text`): an item failure the
    next run retries, never an empty answer for the judges to score as a loss."""
    if no_text(text):
        raise EmptyReplyError(f"{what} has no text{invisible_only(text)}")
    return text


#: an answer that is an error page or an error object, sent as a completion's text with status 200
_ERROR_PAGE = re.compile(r"\s*(?:<!doctype\s+html|<html\b|<head\b|<body\b)", re.IGNORECASE)
_ERROR_OBJECT = re.compile(r'\s*\{\s*"(?:error|detail|message)"\s*:', re.IGNORECASE)


def error_page(text: str) -> Optional[str]:
    """What an answer is when it is a server's error rather than a model's words (an HTML page, a JSON error object
    such as `{"error": "rate limited"}`), or None: a voice agent speaks neither, and scored either would be a loss the
    model never made (battery 67, N3)."""
    if _ERROR_PAGE.match(text):
        return "an HTML page"
    if _ERROR_OBJECT.match(text) and text.rstrip().endswith("}"):
        return "a JSON error object"
    return None


def invisible_only(text: Optional[str]) -> str:
    """" (only invisible characters: U+200B)" or " (no letter or digit, only: U+002E, U+FFFD)" for a text that looks
    filled to `str.strip` and has no words (`no_text`), "" for an empty or blank one."""
    from ihbench.dataset.checks.words import has_visible

    if not text or not text.strip():
        return ""
    what = "only invisible characters" if not has_visible(text) else "no letter or digit, only"
    return f" ({what}: {', '.join(sorted({f'U+{ord(c):04X}' for c in text}))[:200]})"


class EmptyAfterThinkingError(ItemFailure, ValueError):
    """A thinking model that said nothing after its thought (most often: the token budget ended inside
    it). Not an empty answer to score as a loss: the record keeps the reasoning, and the error says
    how many tokens went to it, so the budget can be raised."""


def empty_after_thinking(output_tokens: Optional[int], max_new_tokens: int,
                         finished: Optional[bool] = None) -> EmptyAfterThinkingError:
    """The error of an answer that is empty after a thought; `finished`: whether the model ended on
    its own (False: the budget ran out; None: not known)."""
    spent = f"{output_tokens} tokens" if output_tokens is not None else "its tokens"
    if finished is None:
        finished = output_tokens is not None and output_tokens < max_new_tokens
    if finished:  # the budget was not the cause: raising it is no advice
        return EmptyAfterThinkingError(f"the answer is empty after {spent} of reasoning (the model ended its turn "
                                       f"after thinking, within the budget of --max-new-tokens {max_new_tokens}: it "
                                       "chose to say nothing)")
    return EmptyAfterThinkingError(f"the answer is empty after {spent} of reasoning (the budget of --max-new-tokens "
                                   f"{max_new_tokens} ended inside the thought); raise --max-new-tokens (`ihbench "
                                   "run` warns at start when it is small for a thinking model)")
