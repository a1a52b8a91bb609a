"""One retry policy for every call to a model server: the judges' and the `openai` loader's.

A call reports a transport failure as `TransportError` (retryable or not, with the server's
Retry-After when it sent one); `with_retries` (async, the judges) and `retry_sync` (threads, the
loader) retry it the same way: bounded attempts, exponential backoff with jitter, Retry-After
honoured. The openai client's own retries are off wherever this is used, so nothing retries twice.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Awaitable, Callable, Optional, TypeVar

from ihbench.dataset.errors import ItemFailure
from ihbench.dataset.redaction import redact

T = TypeVar("T")
ATTEMPTS, BASE_DELAY, MAX_DELAY = 4, 0.5, 30.0


class TransportError(ItemFailure, RuntimeError):
    """The server could not be reached, timed out, or refused this request (an HTTP error)."""

    def __init__(self, message: str, *, retryable: bool, retry_after: Optional[float] = None):
        from ihbench.dataset.redaction import redact_text, shortened

        super().__init__(redact_text(shortened(message)))  # a server that echoes the request's key: never recorded
        self.retryable = retryable
        self.retry_after = retry_after


def _retry_after(headers) -> Optional[float]:
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def transport_error(error: BaseException) -> Optional[TransportError]:
    """The openai client's failure as a TransportError (429 and 5xx and timeouts are retryable),
    or None when it is not a transport failure."""
    import openai

    if isinstance(error, openai.APIStatusError):
        retryable = error.status_code == 429 or error.status_code >= 500
        moved = ""
        if 300 <= error.status_code < 400:  # never followed (a URL checked is the one reached): said, with where to
            location = error.response.headers.get("location")
            moved = (f" (a redirect{f' to {redact(location)}' if location else ''}: ihbench follows no redirects; "
                     "give the server's own URL)")
        return TransportError(f"HTTP {error.status_code}: {error.message}{moved}", retryable=retryable,
                              retry_after=_retry_after(error.response.headers))
    if isinstance(error, (openai.APITimeoutError, openai.APIConnectionError)):
        waited = ""
        if isinstance(error, openai.APITimeoutError):  # how long was waited: the command's --timeout (or option)
            limits = (getattr(getattr(error, "request", None), "extensions", None) or {}).get("timeout") or {}
            seconds = limits.get("read") if isinstance(limits, dict) else None
            waited = f" after {seconds:g} s (the request timeout, a setting of the command)" \
                if isinstance(seconds, (int, float)) else ""
        return TransportError(f"{type(error).__name__}: {error}{waited}{_server_tried(error)}", retryable=True)
    if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):  # the client parsing a page that is not JSON
        return TransportError(f"the server's reply is not JSON ({error}); a proxy's error page?", retryable=True)
    return None


def _server_tried(error) -> str:
    """" (server http://host:port)": which server did not answer (several may be given, or the endpoint
    changed since the run began); never the URL's credentials or path."""
    url = getattr(getattr(error, "request", None), "url", None)
    host = getattr(url, "host", None)
    if not host:
        return ""
    port = getattr(url, "port", None)
    return f" (server {url.scheme}://{host}{f':{port}' if port else ''})"


def checked_completion(completion):
    """A chat completion, or a retryable TransportError: a server (or a proxy before it) that
    answers 200 with an HTML page, an object without choices or an empty list of them answered
    nothing usable, which is a failure of the request, not of the program."""
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices or getattr(choices[0], "message", None) is None:
        raise TransportError(f"the server answered with something that is not a chat completion: "
                             f"{_what_came(completion, choices)}", retryable=True)
    return completion


def _what_came(completion, choices) -> str:
    """What was wrong with it, in the server's words where it gave some (an error object sent with
    status 200, as some proxies do), else what is missing; never the client's own class name."""
    if isinstance(completion, str):
        return repr(completion[:80])
    extra = getattr(completion, "model_extra", None) or {}
    error = extra.get("error")
    if isinstance(error, dict) and error.get("message"):
        return f"an error, {str(error['message'])[:160]!r}"
    if error:
        return f"an error, {str(error)[:160]!r}"
    if not isinstance(choices, list) or not choices:
        return "no choices"
    return "its first choice has no message (null)"


def retry_delay(error: TransportError, attempt: int, rng: random.Random, base_delay: float = BASE_DELAY,
                max_delay: float = MAX_DELAY) -> float:
    if error.retry_after is not None:
        return min(error.retry_after, max_delay)
    return min(max_delay, base_delay * 2 ** (attempt - 1)) * (0.5 + rng.random() / 2)


async def with_retries(call: Callable[[], Awaitable[T]], *, attempts: int = ATTEMPTS, base_delay: float = BASE_DELAY,
                       max_delay: float = MAX_DELAY, rng: random.Random | None = None,
                       sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> tuple[T, int]:
    """(result, calls made). Raises the last TransportError when attempts run out or it is final.
    The jitter's generator (seeded, so waits replay) is made at the first retry: most calls never wait."""
    for attempt in range(1, attempts + 1):
        try:
            return await call(), attempt
        except TransportError as error:
            if not error.retryable or attempt == attempts:
                error.attempts = attempt
                raise
            rng = rng or random.Random(0)
            await sleep(retry_delay(error, attempt, rng, base_delay, max_delay))
    raise AssertionError("unreachable")


def retry_sync(call: Callable[[], T], *, attempts: int = ATTEMPTS, base_delay: float = BASE_DELAY,
               max_delay: float = MAX_DELAY, rng: random.Random | None = None,
               sleep: Callable[[float], None] = time.sleep,
               stopped: Optional[Callable[[], bool]] = None) -> tuple[T, int]:
    """The same policy for blocking calls (the loader's worker threads); once `stopped()` (the run was
    asked to stop) a failure is final."""
    for attempt in range(1, attempts + 1):
        try:
            return call(), attempt
        except TransportError as error:
            if not error.retryable or attempt == attempts or (stopped is not None and stopped()):
                error.attempts = attempt
                raise
            rng = rng or random.Random(0)
            sleep(retry_delay(error, attempt, rng, base_delay, max_delay))
            if stopped is not None and stopped():  # asked to stop while waiting: not sent again
                error.attempts = attempt
                raise error
    raise AssertionError("unreachable")
