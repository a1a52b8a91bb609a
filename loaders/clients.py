"""The OpenAI-compatible clients every request goes through (the model under test's, the judges', the
simulator's), made in one place, so that what they take from the environment is checked when they are
made: the key (named by its variable, never shown) and the proxy settings the HTTP client reads. A
wrong one is one line naming the variable, before any request, not a traceback from inside the client
or a "connection error" for every item."""
from __future__ import annotations

import functools
import importlib
import os
from typing import Any, Optional

from ihbench.dataset.errors import UsageError
from ihbench.dataset.redaction import hide_secrets_in_use, remember_secret, remember_url_credentials

from .failures import MalformedReplyError

PROXY_VARIABLES = ("ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")


def _shared_tls() -> dict:
    """The HTTP client's `verify`: one certificate-checking TLS context for every client of the process
    (per SSL_CERT_FILE and SSL_CERT_DIR, which the context is built from). The client builds one from
    the whole CA bundle each time it is made, about 50 ms of CPU, and a command makes several (a
    barge-in run: the model's and the simulator's; one per server of a vLLM list): issue 29's benchmark
    spent it twice per run. {} (the client's own) where the HTTP library has no public builder."""
    import openai

    library = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])
    build = getattr(library, "create_ssl_context", None)
    return {"verify": _tls(build, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))} if build else {}


@functools.lru_cache(maxsize=8)
def _tls(build, cafile: Optional[str], capath: Optional[str]):
    return build()  # reads SSL_CERT_FILE / SSL_CERT_DIR itself: they are the cache's key


def openai_client(kind, *, base_url, api_key_env: str, timeout: float):
    """`kind(...)` (openai.OpenAI or AsyncOpenAI), its own retries off: `loaders.retry` is the one policy; and
    redirects not followed (a 3xx is the server's answer, said as such)."""
    if base_url is None and not os.environ.get("OPENAI_BASE_URL") and not os.environ.get(api_key_env):
        raise UsageError(f"no base URL was given, so the server is OpenAI's own, and ${api_key_env} is not set: give "
                         "the server's URL (a vLLM server needs no key) or set the variable")
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR"):  # read by the HTTP client when it is made
        value = os.environ.get(variable)
        if value and not os.path.exists(value):
            raise UsageError(f"{variable}={value}: no such {'file' if variable.endswith('FILE') else 'folder'}; "
                             "point it at the certificates, or unset it")
    key = os.environ.get(api_key_env) or "EMPTY"
    remember_secret(key)  # hidden wherever a server's error message echoes it
    remember_url_credentials(base_url or os.environ.get("OPENAI_BASE_URL"))
    if not key.isascii() or not key.isprintable() or any(character.isspace() for character in key):
        raise UsageError(f"${api_key_env}: the key holds a character an HTTP header cannot carry (a space, a line "
                         "break, or one beyond ASCII such as a curly quote pasted from a web page); set it to the key "
                         "alone")
    try:  # no redirect followed: a server URL checked (the Space's rule for visitors' URLs) is the one reached
        import openai

        http = (openai.DefaultAsyncHttpxClient if kind is openai.AsyncOpenAI else openai.DefaultHttpxClient)(
            follow_redirects=False, **_shared_tls())
        return kind(base_url=base_url, api_key=key, timeout=timeout, max_retries=0, http_client=http)
    except ImportError as error:  # a socks5:// proxy, and httpx without its socks extra
        if "socks" not in str(error).lower():
            raise
        raise UsageError(f"a SOCKS proxy is set in the environment ({_set_proxies()}), and the HTTP client needs "
                         "httpx's socks extra for it: pip install 'httpx[socks]', or unset the variable") from None
    except Exception as error:  # noqa: BLE001 (httpx's InvalidURL: a proxy URL it cannot parse)
        if type(error).__name__ != "InvalidURL":
            raise
        raise UsageError(f"a proxy set in the environment ({_set_proxies()}) is not a URL the HTTP client can use "
                         f"({error}); correct or unset it") from None


def _set_proxies() -> str:
    return ", ".join(name for name in PROXY_VARIABLES if os.environ.get(name)) or "a proxy variable"


def server_text(text: Any) -> Optional[str]:
    """Text a server sent, as a str that can be written: JSON may carry a lone surrogate ("\\ud800"),
    which Python decodes but cannot encode as UTF-8, so the first record or hash of the answer failed
    and every rerun with it. Each such code point becomes U+FFFD; pairs and all else are kept. A key or
    URL password this toolkit sent (`redaction.hide_secrets_in_use`) is hidden, in an answer as in an
    error: a server that echoes the request's credentials wrote them into every record. Content sent as
    a list of parts (`[{"type": "text", "text": ...}]`) is their text, joined."""
    if isinstance(text, list):
        if not all(isinstance(part, str) or isinstance(part, dict) and isinstance(part.get("text", ""), str)
                   for part in text):
            raise MalformedReplyError("the server's answer is a list of parts that are not text")
        text = "".join(part if isinstance(part, str) else part.get("text", "") for part in text)
    if text is not None and not isinstance(text, str):
        raise MalformedReplyError(f"the server's answer is of type {type(text).__name__}, not text: "
                                  f"{str(text)[:80]!r}")
    if not text:
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return hide_secrets_in_use(text)
