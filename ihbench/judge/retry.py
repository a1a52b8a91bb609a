"""Bounded retries with exponential backoff that honours the server's Retry-After."""
from __future__ import annotations

import asyncio
import random
from typing import Awaitable, Callable, TypeVar

from .backends import TransportError

T = TypeVar("T")


async def with_retries(call: Callable[[], Awaitable[T]], *, attempts: int = 4, base_delay: float = 0.5,
                       max_delay: float = 30.0, rng: random.Random | None = None,
                       sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> tuple[T, int]:
    """(result, calls made). Raises the last TransportError when attempts run out or it is final."""
    rng = rng or random.Random(0)
    for attempt in range(1, attempts + 1):
        try:
            return await call(), attempt
        except TransportError as error:
            if not error.retryable or attempt == attempts:
                error.attempts = attempt
                raise
            delay = error.retry_after if error.retry_after is not None else \
                min(max_delay, base_delay * 2 ** (attempt - 1)) * (0.5 + rng.random() / 2)
            await sleep(min(delay, max_delay))
    raise AssertionError("unreachable")
