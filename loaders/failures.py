"""Which exceptions belong to one item, decided in one place.

The item-level failures are the toolkit's own `ItemFailure` subclasses (audio too long or
empty, a transport failure or refusal from a server, an unreadable judge answer) and two foreign
ones that a model can raise on one large input: Python's `MemoryError` and torch's out-of-memory
error. The runner, the loaders and the LLM client catch exactly these and record them on the
item; everything else propagates with its traceback, and the records written so far stay valid.
"""
from __future__ import annotations

import sys
from typing import Optional

from ihbench.dataset.errors import ItemFailure

__all__ = ["EmptyAfterThinkingError", "EmptyReplyError", "ItemFailure", "UnsupportedInputError", "describe_failure",
           "is_item_failure"]


def _out_of_memory_types() -> tuple[type[BaseException], ...]:
    torch = sys.modules.get("torch")  # never imported here: if torch is not loaded, it cannot have raised
    if torch is None:
        return ()
    return tuple(t for t in (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
                 if isinstance(t, type))


def is_item_failure(error: BaseException) -> bool:
    return isinstance(error, (ItemFailure, MemoryError, *_out_of_memory_types()))


def describe_failure(error: BaseException) -> str:
    """The text stored in a record's `error` field."""
    return f"{type(error).__name__}: {error}"


class UnsupportedInputError(ItemFailure, ValueError):
    """This model cannot take this item's input as given (e.g. a transcript holding one of its
    tokenizer's control tokens): an error on the item, not on the run."""


class EmptyReplyError(ItemFailure, ValueError):
    """A server's reply with no text (content null or empty): not an answer to score as a loss, but
    a failed request, retried by the next run. A thinking model that spent its whole token budget on
    its reasoning ends this way."""


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
    why = "the model ended its turn after thinking" if finished else \
        f"the budget of --max-new-tokens {max_new_tokens} ended inside the thought"
    return EmptyAfterThinkingError(f"the answer is empty after {spent} of reasoning ({why}); raise --max-new-tokens "
                                   "(`ihbench run` warns at start when it is small for a thinking model)")
