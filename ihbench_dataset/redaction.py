"""What is never written to disk: the value of an option named like a secret, and the password of a URL.

An option whose name ends in `key`, `token`, `secret`, `password`, `passwd`, `authorization` or
`credential(s)` (`api_key`, `hf_token`, `client_secret`, an `Authorization` header, in any case,
with `-` or `_`) holds a credential, and so do the user part of a URL (`http://me:pw@host`) and a
URL's query parameters named so (`http://host/v1?api_key=...`). Keys are read from the environment (`api_key_env`
names the variable); whatever a user passes by mistake is recorded as `<redacted>` in run.json,
summaries and every other record. `redact` is the one function for it, used where those records
are made: a model's description, loader and detector options, the command line.
"""
from __future__ import annotations

import base64
import json
import os
import re
from typing import Any, Optional

from .key_shapes import (SECRET_WORDS, holds_a_random_run, holds_prefixed_key, without_prefixed_keys,
                         without_random_base64, without_random_runs)

REDACTED = "<redacted>"
_SECRET = re.compile(r"(key|token|secret|password|passwd|authorization|credentials?)$", re.IGNORECASE)
#: a URL's scheme, at most 32 characters: unbounded, every word of a long dashed run in a server's message
#: was a scheme's start read to the run's end (a 300 KB message: seconds, growing with its square)
_SCHEME = r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://"
_URL_USER = re.compile(r"(" + _SCHEME + r")[^/@\s]+@")
#: a URL's query parameter: `?api_key=...`, `&token=...`; the value ends where a URL cannot go on
#: unencoded (a space, a quote, a backtick: the URL was quoted in a message or a Markdown card)
_QUERY = re.compile(r"([?&;])([^=&#\s]+)=([^&#\s`'\"<>]*)")
#: punctuation that closes the sentence or the brackets a URL was written in, not part of its last value
_CLOSING = ",.;:)]}"


#: a URL's address: scheme, host and port, left as they are
_URL_HEAD = re.compile(_SCHEME + r"[^/?#\s]*")
_URL_TOKEN = re.compile(r"[^/?#&=;,\s`'\"<>]+")
_URL_END = re.compile(r"[\s`'\"<>]|$")  # where a URL cannot go on unencoded: it ends there


def _looks_like_a_key(text: str) -> bool:
    from urllib.parse import unquote

    forms = {text, unquote(text)}
    return any(map(holds_prefixed_key, forms)) or any(map(holds_a_random_run, forms))


def _redact_url(text: str) -> str:
    """The user part of a URL, the values of its query parameters named like secrets, a provider's key
    wherever it stands (battery 46, S3), and in a URL's path any part that is one once its escapes
    are read (`/v1/Bearer%20sk-...`) or that holds a long random run (battery 47)."""
    text = _URL_USER.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    for secret in _environment_secrets():  # `--base-url http://h/v1/$DEEPSEEK_API_KEY`, extra_body's value (battery
        text = text.replace(secret, REDACTED)  # 50, W7): whatever its shape
    if "://" in text:  # a path's part as a whole, its escapes read (`/Bearer%20sk-...` -> `/<redacted>`)
        text = _redact_url_paths(without_random_base64(_QUERY.sub(_query_value, text), REDACTED))
    # random runs first, as a whole: a provider's key found by its prefix first left the parts joined to it by
    # `.` too short to be judged (Mapbox's `sk.<eyJ...>.<signature>`; battery 54, A10)
    text = without_random_runs(text, REDACTED)
    return without_prefixed_keys(text, REDACTED)


def _redact_url_paths(text: str) -> str:
    def token(match: "re.Match") -> str:
        word = match.group(0)
        return word if word == REDACTED or not _looks_like_a_key(word) else REDACTED

    out, position = [], 0
    for head in _URL_HEAD.finditer(text):
        if head.start() < position:  # a URL inside the path of one just judged (`http://proxy/http://host/v1`)
            continue
        out.append(text[position:head.end()])
        end = _URL_END.search(text, head.end()).start()
        out.append(_URL_TOKEN.sub(token, text[head.end():end]))
        position = end
    return "".join(out) + text[position:]


#: a part of an address's path hidden, where `<redacted>` would read as a placeholder (a generated conversation's
#: provenance, which `verify` checks for `<...>`)
HIDDEN_PART = "(hidden)"


def address_without_credentials(text: str) -> str:
    """`text` with every URL's user part left out and every provider's key in its path hidden
    (`http://KEY@host/v1` -> `http://host/v1`, `http://host/sk-.../v1` -> `http://host/(hidden)/v1`), as given or
    as `redact` wrote them: where a URL is shown as an address, not recorded as the option given. A path's part is
    marked, not dropped: without it the address names another endpoint (battery 61, H2)."""
    text = _URL_USER.sub(r"\1", _redact_url(text))
    return text.replace(f"/{REDACTED}", f"/{HIDDEN_PART}").replace(f"{REDACTED}@", "")


#: as typed where a name or path goes: a slash short (`http:/u:KEY@h`) is still a URL meant, and as a path it
#: would make a folder named with the key; a scheme of one letter is a drive (`C:/me@host`)
_TYPED_URL_USER = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,31}:/+[^/@\s]+@")  # a scheme's length bounded, as _SCHEME
#: shorter values of a variable named like a secret are too common to tell apart from a word of a path
_SHORTEST_SECRET = 12


def _environment_secrets(shortest: int = _SHORTEST_SECRET) -> list[str]:
    """Values of environment variables named like secrets, long enough not to be a word of a path, and
    not paths themselves (`HF_TOKEN_PATH`); the longest first."""
    values = {value for name, value in os.environ.items()
              if is_secret_variable(name) and len(value) >= shortest and not value.startswith(("/", "~", "."))}
    return sorted(values, key=len, reverse=True)


def credential_in(text: str) -> Optional[str]:
    """What credential `text` holds, said without it, or None: a URL with a user part (`http://KEY@host`,
    `http://me:pw@host`, `http:/me:pw@host`), a provider's key (`sk-...`), or the value of an environment
    variable named like a secret
    (`--out $OPENAI_API_KEY/r` from a shell: a folder named with the key). Where a name or path goes, each
    would be written to disk in clear (run.json, a folder's name, report.md)."""
    if not isinstance(text, str):
        return None
    if _URL_USER.search(text) or _TYPED_URL_USER.search(text):
        return "a URL with a user part"
    variable = secret_variable_in(text)
    if variable:
        return f"the value of ${variable}"
    if _looks_like_a_key(text):  # pasted where a name goes (battery 45, R7): run.json kept it in clear
        return "what looks like an API key"
    return None


def secret_variable_in(text: str) -> Optional[str]:
    """The name of the environment variable named like a secret whose value `text` holds (12 characters or more,
    not a path), or None: the variable named, the more helpful of the two."""
    secrets = set(_environment_secrets())
    return next((name for name, value in sorted(os.environ.items())
                 if is_secret_variable(name) and value in secrets and value in text), None)


def any_environment_secret() -> bool:
    """Whether a variable named like a secret holds a value long enough to look for (else a walk is skipped)."""
    return bool(_environment_secrets())


def credential_in_data(text: str) -> Optional[str]:
    """What credential a text that a dataset or a prompt copies holds (a conversation's turn, a workflow's knowledge
    base, a benchmark's), said without it, or None: a provider's key by its prefix or shape, a URL with a user part,
    an environment secret's value (battery 61, H10 and H11: `$MY_SERVICE_TOKEN`'s value went into a built dataset),
    or a run of letters and digits as random as a key's, 24 or more (a reference code or an account number a
    caller reads out is shorter, or has a word's or a number's structure)."""
    if not isinstance(text, str):
        return None
    if holds_prefixed_key(text):
        return "a provider's API key"
    if _URL_USER.search(text) or _TYPED_URL_USER.search(text):  # battery 62, I1 and I3: `https://bob:pw@host`
        return "a URL with a user part (a password or a key)"
    variable = secret_variable_in(text)
    if variable:
        return f"the value of ${variable}"
    if holds_a_random_run(text):  # battery 62, I2: 32 random letters and digits, which no one says aloud
        return "what looks like an API key (a run of 24 or more letters and digits as random as a key's)"
    return None


def _query_value(match: "re.Match") -> str:
    if not is_secret(match.group(2)):
        return match.group(0)
    value = match.group(3)
    closing = value[len(value.rstrip(_CLOSING)):]
    return f"{match.group(1)}{match.group(2)}={REDACTED}{closing}"


def is_secret(name: str) -> bool:
    """An option name that holds a credential: it ends in key, token, secret, password, ..."""
    return isinstance(name, str) and bool(_SECRET.search(name.strip().lstrip("-")))


def is_secret_variable(name: str) -> bool:
    """An environment variable that holds a credential: named as a secret option is, or with a word of
    `SECRET_WORDS` anywhere in its name (battery 50, W7: `OPENAI_API_KEY_2`'s value named a folder)."""
    return is_secret(name) or any(word.rstrip("0123456789") in SECRET_WORDS
                                  for word in str(name).upper().split("_"))


def redact(value: Any) -> Any:
    """`value` with every secret's value replaced: in a mapping, the values of secret keys (nested
    ones too); in a list of strings such as a command line, `NAME=VALUE` (also inside `--option=...`)
    with a secret NAME, and the word after a secret `--NAME`. Anything else is returned as it is."""
    if isinstance(value, dict):  # a key pasted as a name of extra_body's is hidden too (battery 50, W5)
        return {_redact_url(key) if isinstance(key, str) else key:
                REDACTED if is_secret(key) and value[key] is not None else redact(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        out, hide_next = [], False
        for item in value:
            if hide_next and isinstance(item, str):
                out.append(REDACTED)
                hide_next = False
                continue
            hide_next = False
            if isinstance(item, str):
                out.append(_redact_word(item))
                hide_next = item.startswith("-") and "=" not in item and is_secret(item)
            else:
                out.append(redact(item))
        return type(value)(out) if isinstance(value, tuple) else out
    if isinstance(value, str):
        return _redact_url(value)
    return value


def _redact_word(word: str) -> str:
    """`api_key=sk-...`, `--option=api_key=sk-...`, `...?api_key=sk-...`: all after the first `=` that
    follows a secret name is hidden; in `NAME={...}` the JSON's secrets are."""
    word = _redact_url(word)
    parts = word.split("=")
    for end in range(1, len(parts)):
        if is_secret(parts[end - 1]):
            return "=".join(parts[:end]) + "=" + REDACTED
    name, equals, text = word.partition("=")
    if equals and text.lstrip().startswith(("{", "[")):  # NAME=JSON, e.g. extra_body={"api_key": ...}
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return word
        hidden = redact(data)
        return word if hidden == data else f"{name}={json.dumps(hidden, ensure_ascii=False)}"
    return word


#: key values the toolkit has read to call a server (`remember_secret`), whatever variable held them
_IN_USE: set = set()
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)[^\s'\"),;]+")
#: `Basic <base64 of user:password>`, as an Authorization header carries it (`_basic` checks the decoding,
#: so "the basic idea" stays as it is)
_BASIC = re.compile(r"(?i)\b(basic)(\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")


def remember_secret(value: str) -> None:
    """A key read for a client: `redact_text` hides it wherever a server's words echo it."""
    if value and len(value) >= 8 and value != "EMPTY":
        _IN_USE.add(value)


def remember_url_credentials(url) -> None:
    """The password of a URL a client is made with (`http://user:pw@host`): sent as `Basic
    base64(user:pw)`, which a proxy may echo, so both it and that encoding are hidden by `redact_text`."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(str(url or ""))
    except ValueError:
        return
    if parts.password:
        user, password = unquote(parts.username or ""), unquote(parts.password)
        if len(password) >= 4:  # shorter, it would hide letters of every message
            _IN_USE.add(password)
        encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
        _IN_USE.update({encoded, encoded.rstrip("=")})  # with its padding or without


def hide_secrets_in_use(text: str) -> str:
    """`text` (a server's answer) with the keys and URL passwords this toolkit sent replaced, and every credential
    it holds as the data rule reads one (`credential_in_data`): an environment secret's value, a provider's key, a
    URL's user part, a run as random as a key's (battery 63, J6, and battery 64, K4: a model's or judge's answer
    quoting `https://alice:pw@host` or 32 random letters was written to responses.jsonl and the judge's cache). The
    part of `redact_text` that changes no model's words but a secret's: `Bearer`/`Basic` words are an answer's own."""
    if not isinstance(text, str) or not text:
        return text
    for secret in sorted(_IN_USE, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return _redact_url(text)


#: a server's message is recorded up to this many characters: an error page of a megabyte went whole
#: into every failed item's record, and judging every run in it for a key took 20 s a message
LONGEST_MESSAGE = 4000


def shortened(text: str, limit: int = LONGEST_MESSAGE, left_out: str = "not recorded",
              within: str = r"[^\s\"'`<>,;]*") -> str:
    """`text` cut to about `limit` characters, before `redact_text` (whose time grows with the length) and
    before a record: the cut falls at a space or a quote, never inside a word (`within`: what the cut moves back
    over), so no key is cut into a piece too short to be judged one and written in clear."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    head = re.sub(within + "$", "", text[:limit])
    return f"{head}... ({len(text) - len(head):,} more characters {left_out})"


#: a value read from a file and quoted in a refusal is cut to this many characters: a run.json field edited to
#: 500 KB was quoted whole, a screenful on every try
LONGEST_QUOTED_VALUE = 300


def quoted(value, as_json: bool = False) -> str:
    """A value read from a file, as a one-line refusal quotes it: its repr (or, `as_json`, as JSON spells it: a
    value the user typed as JSON, `null` and `true`, not `None` and `True`; battery 57, D6) with any key hidden, cut
    before `LONGEST_QUOTED_VALUE` between words or path parts (its keys are hidden before the cut, so any cut is
    safe; a long path has no space, and was shown as nothing: battery 56, C6)."""
    hidden = redact(value)
    said = json.dumps(hidden, ensure_ascii=False) if as_json else repr(hidden)
    return shortened(said, LONGEST_QUOTED_VALUE, left_out="not shown", within="[A-Za-z0-9]{0,40}")


def hidden_as_before(before, now):
    """`now` (a record about to replace `before`, as JSON values) with every value `before` showed with a part hidden
    shown so again, where `now` is that value with the part in clear: a value is hidden as a secret's when it equals
    a secret-named variable's, so the same run resumed in a shell without the variable wrote out what its first start
    had hidden (battery 59, F2). A value hidden now and not before stays hidden: either start's hiding holds."""
    if isinstance(before, str) and isinstance(now, str):
        if REDACTED in before and REDACTED not in now and before != now:
            match = re.fullmatch("(.+)".join(map(re.escape, before.split(REDACTED))), now, re.DOTALL)
            if match is None:
                return now
            for hidden in match.groups():  # and hidden in every text this process writes from now on: a server's
                remember_secret(hidden)    # error quoting the address, in a record written after this one
            return before
        return now
    if isinstance(before, dict) and isinstance(now, dict):
        return {key: hidden_as_before(before.get(key), value) for key, value in now.items()}
    if isinstance(before, list) and isinstance(now, list):
        if len(before) == len(now):
            return [hidden_as_before(old, new) for old, new in zip(before, now)]
        # a command line of another length (a flag added at the resume): each word against every hidden one of
        # before, wherever it stood (battery 60, G2: matched by place only, the word was written out)
        hidden = [old for old in before if isinstance(old, str) and REDACTED in old]
        return [next((old for old in hidden if hidden_as_before(old, new) == old), new) if isinstance(new, str)
                else new for new in now]
    return now


def redact_text(text: str) -> str:
    """A message a server or library wrote, as it may be recorded or printed: the keys in use and the
    values of environment variables named like secrets replaced, an HTTP credential (`Bearer ...`,
    `Basic ...`) and a URL's password hidden (a proxy's 401 that echoes the request's key went into every record)."""
    if not isinstance(text, str) or not text:
        return text
    secrets = set(_IN_USE) | set(_environment_secrets(shortest=8))
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _BASIC.sub(_basic, _redact_url(text))
    return _BEARER.sub(_bearer, text)


def _bearer(match: "re.Match") -> str:
    """`Bearer EMPTY`, the placeholder sent to a server that needs no key, is no secret: shown as it is, so
    a message does not suggest a key was sent."""
    credential = match.group(0)[len(match.group(1)) + len(match.group(2)):]
    return match.group(0) if credential == "EMPTY" else f"{match.group(1)}{match.group(2)}{REDACTED}"


def _basic(match: "re.Match") -> str:
    try:
        decoded = base64.b64decode(match.group(3), validate=True).decode("utf-8")
    except ValueError:  # not base64, or not text: a word after "basic"
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{REDACTED}" if ":" in decoded else match.group(0)
