"""What an option's value may be, said once: the checked types every command's options use.

Each factory returns a callable that is an argparse `type=` (it gets the text of the command
line) and also takes a value from Python or JSON (a loader's `--option KEY=VALUE`, a dict from
the Space). A bad value raises `ArgumentValueError` saying what is allowed, e.g. "expected a
whole number >= 1, got '0'"; argparse prints it after `argument --concurrency:` and exits 2
before the command does anything, and `check(name, value)` puts the name in front otherwise.
The allowed range lives in the instance (`min`, `max`, `kind`, ...) and nowhere else: the test
that walks every command's parser reads it from there.

This module is in the data layer, the lowest, because the model loaders check their options
with the same types as the command line.
"""
from __future__ import annotations

import argparse
import errno
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from .characters import escaped, name_problem, unseen_in
from .errors import UsageError
from .io.json_object import TOO_DEEP, TOO_LONG_NUMBER, json_problem
from .io.regular import absent

__all__ = ["ArgType", "ArgumentValueError", "boolean", "check_all", "choice", "concurrency", "count", "data_source",
           "device", "each", "env_var_name", "epoch", "epochs", "folder_name", "json_value", "key_value", "milliseconds",
           "model_name", "names", "noise_clips", "number", "path", "rounds", "seed", "temperature", "tokens", "url",
           "whole", "whole_numbers"]


class ArgumentValueError(UsageError, argparse.ArgumentTypeError):
    """A value its option does not allow; the message says what it allows and what it got."""


class ArgType:
    """A checked value type. Subclasses set `expected` (what is allowed, in words) and `convert`."""

    expected: str = "a value"

    def __call__(self, value: Any) -> Any:
        return self.convert(value)

    def convert(self, value: Any) -> Any:
        raise NotImplementedError

    def check(self, name: str, value: Any) -> Any:
        """The converted value, or a UsageError that starts with `name` (an option, a field)."""
        try:
            return self.convert(value)
        except ArgumentValueError as error:
            raise ArgumentValueError(f"{name}: {error}") from None

    def canonical(self, value: Any) -> Any:
        """What `value` (converted) stands for, for telling two values apart: itself, for most types."""
        return value

    def refuse(self, value: Any, why: str = "") -> ArgumentValueError:
        return ArgumentValueError(f"expected {self.expected}, got {_shown(value)}{f' ({why})' if why else ''}")

    def __repr__(self) -> str:  # argparse shows it in its own error for a type that is not callable
        return f"<{type(self).__name__}: {self.expected}>"


def _shown(value: Any) -> str:
    """A refused value as typed: text quoted, a JSON value (an --option's object, list, true or null) as JSON spells
    it, not as Python does (`{'model': 'cpu'}`, `None`; battery 59, with F5)."""
    if isinstance(value, TypedFloat):
        return value.typed
    if value is None or isinstance(value, (dict, list, bool)):
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            pass
    return repr(value)


def _bounds(low, high, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return ""


@dataclass(frozen=True, repr=False)
class Whole(ArgType):
    """An integer in [min, max] (either end may be open-ended: None)."""

    min: Optional[int] = None
    max: Optional[int] = None

    @property
    def expected(self) -> str:
        if self.min is not None and self.max is not None:
            return f"a whole number from {self.min} to {self.max}"
        return f"a whole number {_bounds(self.min, self.max, False, False)}".rstrip()

    def convert(self, value: Any) -> int:
        if isinstance(value, str):
            # ASCII digits only: int() reads '١' (Arabic-Indic) as 1, which no one types meaning a count
            if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):
                raise self.refuse(value)
            try:  # `\s` takes separators (U+001F) that int() does not strip
                number = int(value)
            except ValueError:
                raise self.refuse(value) from None
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            raise self.refuse(value)
        if (self.min is not None and number < self.min) or (self.max is not None and number > self.max):
            raise self.refuse(value)
        return number


@dataclass(frozen=True, repr=False)
class Number(ArgType):
    """A finite number in the interval from min to max; `min_open`/`max_open` leave an end out."""

    min: Optional[float] = None
    max: Optional[float] = None
    min_open: bool = False
    max_open: bool = False

    @property
    def expected(self) -> str:
        return f"a number {_bounds(self.min, self.max, self.min_open, self.max_open)}".rstrip()

    def contains(self, number: float) -> bool:
        if self.min is not None and (number < self.min or (self.min_open and number == self.min)):
            return False
        return not (self.max is not None and (number > self.max or (self.max_open and number == self.max)))

    def convert(self, value: Any) -> float:
        if isinstance(value, str):
            if not value.isascii() or "_" in value:  # float() reads other scripts' digits too (see Whole), and
                raise self.refuse(value)  # `1_000` (Python's digit grouping, no number a command line spells)
            try:
                number = float(value)
            except ValueError:
                raise self.refuse(value) from None
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            raise self.refuse(value)
        if not math.isfinite(number) or not self.contains(number):
            raise self.refuse(value)
        return number


@dataclass(frozen=True, repr=False)
class JsonValue(ArgType):
    """JSON text (or an already parsed value) of the given kind: object, array, or any."""

    kind: Optional[type] = None

    @property
    def expected(self) -> str:
        return {dict: "a JSON object", list: "a JSON array"}.get(self.kind, "a JSON value")

    def convert(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                raise self.refuse(value, f"not JSON: {json_problem(error, 'character')}") from None
            except RecursionError:
                raise self.refuse(_shortened(value), TOO_DEEP) from None
            except ValueError:  # more digits than Python reads an integer of
                raise self.refuse(_shortened(value), TOO_LONG_NUMBER) from None
        if self.kind is not None and not isinstance(value, self.kind):
            raise self.refuse(value)
        unfinite = _first_unfinite(value)
        if unfinite is not None:  # 1e999 is read as inf, which no request can carry: a traceback after run.json
            shown = _shown(unfinite) if isinstance(unfinite, TypedFloat) else json.dumps(unfinite)
            what = "not a number" if math.isnan(unfinite) else "a number too large to be finite"
            raise ArgumentValueError(f"expected {self.expected} whose numbers are finite, got one holding {shown}, "
                                     f"{what}, which JSON does not have")  # as typed (battery 61, H16)
        if not _encodable(value):  # "\ud800" decodes to no character, and failed the first write (battery 48, U7)
            raise self.refuse(_shortened(json.dumps(value)), "a lone surrogate escape, which is no character")
        return value


def _first_unfinite(value: Any, depth: int = 0) -> Optional[float]:
    """The first number in `value` that is infinite or NaN, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    if depth < 200:
        for item in items:
            found = _first_unfinite(item, depth + 1)
            if found is not None:
                return found
    return None


def _encodable(value: Any, depth: int = 0) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict) and depth < 200:
        return all(_encodable(key, depth + 1) and _encodable(item, depth + 1) for key, item in value.items())
    if isinstance(value, list) and depth < 200:
        return all(_encodable(item, depth + 1) for item in value)
    return True


@dataclass(frozen=True, repr=False)
class Url(ArgType):
    """An http(s) URL with a host, e.g. http://localhost:8000/v1: a server's base URL (every
    --*base-url). It has no query string or #fragment: an OpenAI-compatible client appends the
    endpoint's path (`chat/completions`) to the base URL's text, so `/v1?api_key=X` became
    `/v1/?api_key=Xchat/completions`, a 404 for every item; and a key belongs in the environment
    (`--option api_key_env`), not in a URL a proxy logs. The query is not echoed: it is often a key."""

    expected = "an http:// or https:// URL with a host, e.g. http://localhost:8000/v1"

    def convert(self, value: Any) -> str:
        from urllib.parse import urlsplit

        if not isinstance(value, str):
            raise self.refuse(value)
        try:
            parts = urlsplit(value.strip())
            parts.port  # noqa: B018  (raises on a port that is not a number)
        except ValueError as error:
            raise self.refuse(value, str(error)) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise self.refuse(value)
        if parts.port == 0:  # no server listens on port 0: every request would fail
            raise self.refuse(value, "port 0 is no server's port")
        if re.search(r"[\s<>\"{}|\\^`]", parts.netloc):
            raise self.refuse(value, "a space or a character no host name has")
        try:  # what the client does to every host before connecting (battery 50, W6: a traceback per item)
            parts.hostname.encode("idna")
        except UnicodeError:
            raise self.refuse(value, "a host name's labels (between dots) are 1 to 63 characters, 253 in all") from None
        if "?" in value or "#" in value:
            from .redaction import redact

            shown = redact(re.split(r"[?#]", value.strip())[0])
            raise ArgumentValueError(f"expected {self.expected}, without a query string or #fragment (the endpoint's "
                                     f"path is added after the whole URL; a key goes in an environment variable), "
                                     f"got {shown!r} followed by {'?...' if '?' in value else '#...'}")
        return value.strip()

    def canonical(self, value: Any) -> str:
        """The server a URL names: scheme and host in lower case, the scheme's default port said, no
        trailing slash (a client adds `/chat/completions` either way)."""
        from urllib.parse import urlsplit

        parts = urlsplit(value.strip())
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}{parts.path.rstrip('/')}"


def same_servers(a: Any, b: Any) -> bool:
    """Whether two recorded endpoints (a URL, a list of replicas, or None) name the same servers, in
    any order: replicas given in another order are the same run's servers."""
    def servers(value):
        values = value if isinstance(value, (list, tuple)) else [value]
        return sorted(Url().canonical(v) if isinstance(v, str) else repr(v) for v in values)
    return servers(a) == servers(b)


@dataclass(frozen=True, repr=False)
class EnvVarName(ArgType):
    """The name of an environment variable. A value that is not one is not echoed: it is often the
    secret itself, given where the name of the variable that holds it was expected."""

    expected = "the name of an environment variable (letters, digits and _, not starting with a digit)"

    def convert(self, value: Any) -> str:
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ArgumentValueError(f"expected {self.expected}; the value given is not one (not shown: it may be "
                                     "a secret)")
        from .key_shapes import holds_prefixed_key

        if holds_prefixed_key(value):  # an AWS access key id spells a variable's name (battery 61, H6)
            raise ArgumentValueError(f"expected {self.expected}; the value given is a provider's key by its shape "
                                     "(not shown), not the name of the variable that holds it")
        return value


@dataclass(frozen=True, repr=False)
class KeyValue(ArgType):
    """KEY=VALUE -> (key, value); VALUE is read as JSON when it is JSON (1, true, [..], {..}), else as text.

    Every --option needs a key and a value. No option of a loader or detector takes an empty one:
    `KEY=` (or `KEY=''`, `KEY=""`, `KEY=null`) was read as "" or None, which some options then
    treated as their default and others sent as is (an empty system prompt, a revision ''), so it is
    refused here, naming the key: leave the option out for its default."""

    expected = "KEY=VALUE"
    EMPTY = ("", "''", '""', "null")

    def convert(self, value: Any) -> tuple[str, Any]:
        if isinstance(value, tuple) and len(value) == 2:
            return value
        key, equals, text = str(value).partition("=")
        key = key.strip()
        if not equals:
            raise self.refuse(value, f"no '=': give {key}=VALUE" if key else "")
        if not key:
            raise self.refuse(value, "no KEY before '='")
        if text.strip() in self.EMPTY:
            raise ArgumentValueError(f"{key}: an empty value ({str(value)!r}); expected {key}=VALUE with a value "
                                     "(leave the option out for its default)")
        def once(pairs: list) -> dict:  # {"a": 1, "a": 2}: json keeps the last without a word
            names = [name for name, _ in pairs]
            twice = next((name for name in names if names.count(name) > 1), None)
            if twice is not None:
                raise ArgumentValueError(f"{key}: its JSON gives the key {twice!r} twice; give it once")
            return dict(pairs)

        try:
            return key, json.loads(text, object_pairs_hook=once, parse_float=TypedFloat.read,
                                   parse_constant=TypedFloat.read)
        except (json.JSONDecodeError, RecursionError):  # a text (a deep one is refused by the option's own type)
            return key, text
        except ValueError as error:  # an integer of more digits than Python reads (battery 50, W12)
            if isinstance(error, ArgumentValueError):
                raise
            raise ArgumentValueError(f"{key}: its JSON holds {TOO_LONG_NUMBER}, got "
                                     f"{_shortened(text)!r}") from None


class TypedFloat(float):
    """A number an --option read from JSON, remembering how it was typed: a refusal shows `1e9`, not Python's
    1000000000.0 (battery 59, F13). It is a float in every other way (JSON writes it as one)."""

    typed: str

    @classmethod
    def read(cls, text: str) -> "TypedFloat":
        number = cls(text)
        number.typed = text
        return number


class Boolean(ArgType):
    """true or false (as --option parses JSON, `onnx=true` arrives as True; "yes"/"1" are not taken,
    so a typo is never read as a choice)."""

    expected = "true or false"

    def convert(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise self.refuse(value)


@dataclass(frozen=True, repr=False)
class Names(ArgType):
    """Comma-separated names, each one of `choices` (after `canonical`, e.g. an official spelling
    mapped onto ours); at least one. Returns the list, each name once (`tf,tf` would do the work twice)."""

    choices: tuple[str, ...] = ()
    canonical: Optional[Callable[[str], Any]] = None

    @property
    def expected(self) -> str:
        return f"one or more of {', '.join(self.choices)}, separated by commas"

    def convert(self, value: Any) -> list[str]:
        parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
        result = []
        for part in (str(p).strip() for p in parts):
            if not part:  # `tf,,rq` or `tf,`: a name left out by mistake reads as a choice not made
                raise self.refuse(value, "an empty name between commas")
            try:
                name = self.canonical(part) if self.canonical else part
            except ValueError:
                name = None
            if name not in self.choices:
                raise self.refuse(value, f"unknown {part!r}")
            if name not in result:
                result.append(name)
        if not result:
            raise self.refuse(value)
        return result


@dataclass(frozen=True, repr=False)
class Each(ArgType):
    """One value or a list of values, each of `item` (several server URLs, say), each once: the same
    server given twice is a slip (a second server was meant), and would take twice its share."""

    item: ArgType = None  # type: ignore[assignment]

    @property
    def expected(self) -> str:
        return f"{self.item.expected}, or a list of them"

    def convert(self, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            values = [self.item.convert(v) for v in value]
            same = [self.item.canonical(v) for v in values]  # http://h/v1/ and http://H:80/v1 are one server
            twice = next((v for i, v in enumerate(values) if same[i] in same[:i]), None)
            if twice is not None:
                from .redaction import redact

                raise ArgumentValueError(f"expected {self.expected}, each once; {redact(twice)!r} is given twice")
            return values
        return self.item.convert(value)


@dataclass(frozen=True, repr=False)
class WholeNumbers(ArgType):
    """Comma-separated whole numbers (turn indices: 0,1,5), each >= min; at least one."""

    min: int = 0

    @property
    def expected(self) -> str:
        return f"whole numbers >= {self.min}, separated by commas"

    def convert(self, value: Any) -> list[int]:
        parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
        item = Whole(self.min, None)
        try:
            numbers = [item.convert(part.strip() if isinstance(part, str) else part) for part in parts]
        except ArgumentValueError:
            raise self.refuse(value) from None
        if not numbers:
            raise self.refuse(value)
        return list(dict.fromkeys(numbers))


#: the longest name or path an option takes: a path's longest on Linux (PATH_MAX)
LONGEST_NAME = 4096


@dataclass(frozen=True, repr=False)
class Name(ArgType):
    """A name that must say something: a model name on a server, a local path. Empty or blank would
    be sent as is and recorded as the judge's or model's identity; a line break or a tab (pasted by
    mistake) would be written into a summary and start a line of its own in a report."""

    expected = "a non-empty name on one line"
    noun = "a name or path"

    def convert(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.refuse(value)
        if len(value) > LONGEST_NAME:  # written into run.json and every record (battery 53, Z11: 120,000 characters)
            raise ArgumentValueError(f"expected {self.expected}, got {len(value):,} characters (not shown); {self.noun} "
                                     f"has at most {LONGEST_NAME:,}")
        if not is_text(value):  # said as what it is, as for a path (battery 59, F1)
            raise self.refuse(value, "a byte in it that is not UTF-8, and names are recorded as text; use a UTF-8 name")
        problem = name_problem(value)
        if problem:  # the names a new path may have are names here too (battery 61, H12 and H13)
            raise ArgumentValueError(f"expected {self.expected}, got {escaped(value)} ({problem} in it)")
        _refuse_credential(self, value)
        return value


def _refuse_credential(option: ArgType, value: str) -> None:
    """A URL with a user part where a name or path goes (`--model-path http://u:KEY@host`): a name or path
    never holds a credential, and this one would be recorded as the model's or judge's identity in
    run.json, judgments and reports, in clear (battery 43, N3 and N9). Not echoed. An existing file or
    folder of that name is refused too, its name would be copied into the outputs' names and records
    (battery 53, Z1): renamed, it is read; the part to rename is named."""
    from .redaction import credential_in

    found = credential_in(value)
    if found:
        part = _part_named_so(value)
        remedy = f"; {part}: rename it (its name is copied into the outputs)" if part else ""
        noun = getattr(option, "noun", "a name or path")
        raise ArgumentValueError(f"expected {option.expected}, got {found} (a credential; not shown): {noun} "
                                 f"holds none, and a server's key goes in an environment variable{remedy}")


def _part_named_so(value: str) -> Optional[str]:
    """Which existing parts of a path hold what looks like a key, said without them: the file, a folder by its
    place, or both (battery 54, A2: a folder of the path was the key's, and "rename the file" did not help;
    battery 55, B11: with both, renaming the file was refused again for the folder); an existing folder of a
    new path too (battery 56, C4: `--out KEYFOLDER/new` named no part). None when no part of the user's holds
    one (a new name: the user picks another)."""
    from .redaction import credential_in

    path = Path(value)
    skip = 1 if path.anchor else 0
    parts = path.parts[skip:]

    def exists(n: int) -> bool:
        try:
            return Path(*path.parts[:skip + n]).expanduser().exists()
        except (OSError, RuntimeError):  # a name too long, ~NAME of no user
            return False

    whole = exists(len(parts))
    holding = [n for n, part in enumerate(parts, 1) if credential_in(part) and exists(n)]
    last = "folder" if whole and path.expanduser().is_dir() else "file"
    if not holding:
        return "a file or folder of yours named so" if whole else None
    if holding == [len(parts)]:
        return f"a {last} of yours named so"
    folders = [n for n in holding if n < len(parts)]
    what = ("a folder" if len(folders) == 1 else "folders") + (f" and the {last}" if len(parts) in holding else "")
    places = ", ".join(map(str, holding[:-1])) + (" and " if len(holding) > 1 else "") + str(holding[-1])
    return f"{what} of yours named so (part{'s' if len(holding) > 1 else ''} {places} of the path's {len(parts)})"


@dataclass(frozen=True, repr=False)
class DataSource(Name):
    """A dataset: a folder or a Hub id. Empty or blank is refused here, as the option's own error:
    `Path("")` is the current folder, and a command given '' read (or uploaded) whatever was there."""

    expected = "a dataset folder or a Hub id"

    def convert(self, value: Any) -> str:
        value = super().convert(value)
        try:
            path = Path(value).expanduser()
        except RuntimeError:  # ~NAME of no user here: said by the reader, naming it
            return value
        try:  # links that point at each other: read, a traceback deep in a command (a Hub id resolves as a path)
            path.resolve()
        except RuntimeError:  # pathlib's "Symlink loop from ..." (Python < 3.13)
            raise self.refuse(value, "a symlink loop: its links point at each other") from None
        except OSError as error:  # ELOOP from Python 3.13; any other is said by the command that reads it
            if error.errno == errno.ELOOP:
                raise self.refuse(value, "a symlink loop: its links point at each other") from None
        return value


@dataclass(frozen=True, repr=False)
class FolderName(Name):
    """One folder's name, joined to a folder the command reads (`convbench-import --speaker`:
    real_audio/SPEAKER/): not empty, no path separator, not '.' or '..'. `--speaker ../../etc`
    was joined as it was (real_audio/../../etc/) and, with --text-only, taken without a word."""

    expected = "a folder's name (not empty, no / or \\, not . or ..)"

    def convert(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip() or value.strip() in (".", "..") \
                or any(sep in value for sep in "/\\"):
            raise self.refuse(value)
        return value


@dataclass(frozen=True, repr=False)
class Choice(ArgType):
    """One of a few words (argparse's `choices=` for options that also come as `--option KEY=VALUE`)."""

    choices: tuple[str, ...] = ()

    @property
    def expected(self) -> str:
        return f"one of {', '.join(self.choices)}"

    def convert(self, value: Any) -> str:
        if not isinstance(value, str) or value.strip() not in self.choices:
            raise self.refuse(value)
        return value.strip()


class Device(ArgType):
    """A torch device: auto, cpu, cuda, cuda:N or mps."""

    expected = "a device: auto, cpu, cuda, cuda:N (N a whole number) or mps"

    def convert(self, value: Any) -> str:
        if not isinstance(value, str) or not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", value.strip()):
            raise self.refuse(value)
        return value.strip()


def check_all(types: dict, values: dict, prefix: str = "--option ") -> dict:
    """`values` with each one that has a type in `types` checked and converted (None is left
    as it is: the default); the first bad one is named (`prefix` + its name) with what it may be.
    The one checking path of every options dict: loaders' and detectors' `option_types`."""
    return {name: value if value is None or name not in types else types[name].check(f"{prefix}{name}", value)
            for name, value in values.items()}


@dataclass(frozen=True, repr=False)
class PathArg(ArgType):
    """A path. `kind` "file" or "folder" (None: either); `exists`: it must be there already.
    A path that exists must be of its kind, so a file given where a folder is expected (or the
    reverse) is refused before anything is read or written."""

    kind: Optional[str] = None
    exists: bool = False

    @property
    def expected(self) -> str:
        what = {"file": "file", "folder": "folder", None: "file or folder"}[self.kind]
        return f"an existing {what}" if self.exists else f"a {what}"

    def convert(self, value: Any) -> Path:
        if not str(value).strip():
            raise self.refuse(str(value))
        _refuse_credential(self, str(value))  # made a folder, `http:/u:KEY@x/` would keep the key on disk
        if not is_text(str(value)):  # battery 58, E4: written into run.json, it ended in a traceback, a folder left
            raise self.refuse(str(value), "a byte in its name that is not UTF-8, and paths are recorded as text; "
                                          "use a UTF-8 name")
        try:
            path = _reachable(expand_home(value))
            is_dir, exists = path.is_dir(), path.exists()
            path.resolve()  # links that point at each other: no file or folder is at the end of them
        except NoSuchHomeError:
            raise self.refuse(str(value), f"{Path(str(value)).parts[0]} is the home folder of a user this system does "
                                          "not have; give the path in full") from None
        except RuntimeError:  # pathlib's "Symlink loop from ..." (Python < 3.13)
            raise self.refuse(str(value), "a symlink loop: its links point at each other") from None
        except OSError as error:  # a name past the system's limits (255 bytes a component): no such path can be
            raise self.refuse(_shortened(str(value)), error.strerror or str(error)) from None
        if not exists and any(ord(character) < 32 or ord(character) == 127 for character in str(value)):
            # a new path with a line break or tab in its name (pasted by mistake): made, it would be hard to name
            raise self.refuse(str(value), "a control character (a line break or tab) in a new path's name")
        if not exists and any(unseen_in(part) for part in _new_parts(path)):
            # a zero-width space makes `runs/a<ZWSP>b` look like `runs/ab`; a right-to-left override shows a name
            # reordered (battery 59, F12): refused as --data refuses them
            raise ArgumentValueError(f"expected {self.expected}, got {escaped(str(value))} (an invisible or "
                                     "direction-changing character, or a space other than the plain one, in a new "
                                     "path's name)")
        if not exists and any(part != part.strip() for part in _new_parts(path)):
            # `runs/ ` or `runs/trail `: a folder named by a space, or ending in one (a copy-paste slip), is hard to
            # see and to type again, as `--out " "` is (battery 58, E14)
            raise self.refuse(str(value), "a new file or folder whose name starts or ends with a space")
        if is_dir:
            if self.kind == "file":
                raise self.refuse(str(value), "a folder")
        elif self.kind == "file" and str(value).endswith(("/", os.sep)):  # Path() drops the slash: a file was made
            raise self.refuse(str(value), "a folder's name (it ends in a slash); give a file name")
        elif exists:
            if self.kind == "folder":  # /dev/null is no file either: said as what it is, as for a file option
                raise self.refuse(str(value), "a file" if path.is_file() else absent(path))
            if not path.is_file():  # /dev/zero is read for ever, a named pipe waits for ever
                raise self.refuse(str(value), absent(path))
        elif self.exists:
            raise self.refuse(str(value), "not found")
        return path


def _new_parts(path: Path) -> list[str]:
    """The names of `path`'s parts that do not exist yet: those a command would make."""
    parts = []
    while not os.path.lexists(path) and path != path.parent:
        parts.append(path.name)
        path = path.parent
    return parts


def is_text(value: str) -> bool:
    """False for a name holding bytes the file system keeps but UTF-8 cannot spell (Python's surrogate escapes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shortened(text: str, keep: int = 60) -> str:
    """A path too long to be one, cut in the middle for the message (thousands of characters would
    fill the screen and hide the reason at its end)."""
    return text if len(text) <= 2 * keep else f"{text[:keep]}...{text[-keep:]}"


class NoSuchHomeError(UsageError):
    """`~NAME/...` for a NAME this system has no user of (a mistyped `~/`, a path from another machine)."""


def expand_home(value: Any) -> Path:
    """A typed path with `~` and `~NAME` expanded: for an unknown NAME pathlib raises a bare RuntimeError
    ("Could not determine home directory"), a traceback where a user mistyped a path."""
    try:
        return Path(os.fspath(value)).expanduser()
    except RuntimeError:
        first = Path(os.fspath(value)).parts[0]
        raise NoSuchHomeError(f"{value}: {first} is the home folder of a user this system does not have; give the "
                              "path in full") from None


def _reachable(path: Path) -> Path:
    """`q1/../rq` where q1 does not exist: the system cannot open it, and making it would first make
    an empty q1. Such a path is resolved to what the user meant (symbolic links that do exist on the
    way are followed, as the system would); any other path is kept as typed, for the messages."""
    if ".." not in path.parts:
        return path
    last = len(path.parts) - 1 - path.parts[::-1].index("..")
    if Path(*path.parts[:last + 1]).is_dir():
        return path
    return Path(os.path.realpath(path))


def whole_numbers(min: int = 0) -> WholeNumbers:  # noqa: A002
    return WholeNumbers(min)


def boolean() -> Boolean:
    return Boolean()


def whole(min: Optional[int] = None, max: Optional[int] = None) -> Whole:  # noqa: A002 (the words users read)
    return Whole(min, max)


def seed() -> Whole:
    """Every command's --seed: torch seeds with at most 64 bits (a larger value is an overflow deep
    inside a model build, or hashed away elsewhere) and a negative seed means nothing, so the one
    range is said at parse time for all of them."""
    return Whole(0, 2**64 - 1)


def noise_clips() -> Whole:
    """How many seeded noise clips a build renders (build's --sid-noise-clips): SID-Bench's own
    silence/noise split has 210; ten times that (2.5 hours of audio) is a thorough false-alarm
    test, while 10^8 would render for days and fill the disk."""
    return Whole(1, 2000)


# Every count has an upper end: a value past it cannot be meant, and some counts are planned in
# memory before the first request (run --epochs 10^20 was an out-of-memory kill after run.json was
# written). The test that walks every parser refuses a whole-number option without a `max`.
MAX_EPOCHS = 1000


def epochs() -> Whole:
    """Responses per interruption point or conversation (run --epochs): the paper uses 3, and every
    (point, epoch) pair is planned before the first request; a thousand repeats is more than any
    confidence interval needs."""
    return Whole(1, MAX_EPOCHS)


def epoch() -> Whole:
    """Which epoch's responses (set-baseline --epoch): counted from 0, so below `epochs()`'s top."""
    return Whole(0, MAX_EPOCHS - 1)


def concurrency() -> Whole:
    """Requests, calls or threads at the same time: each is a thread or an open connection, and a
    process may hold 1024 files by default; no server answers more at once any faster."""
    return Whole(1, 1024)


def count(min: int = 1) -> Whole:  # noqa: A002
    """How many of something a command takes or makes (--limit, --conversations, --intents, cache
    entries, a batch): no benchmark here has a million items, so a larger count is a typo, and a
    list of that many would be built in memory by some commands."""
    return Whole(min, 1_000_000)


def rounds(min: int = 0) -> Whole:  # noqa: A002
    """Re-asks, retries, fix rounds, tool rounds: each is one more call for the same item, and an
    answer that has not come after a hundred will not come."""
    return Whole(min, 100)


def tokens(min: int = 1) -> Whole:  # noqa: A002
    """A number of tokens (new tokens of an answer, a judge's context): the largest context windows
    hold ten million."""
    return Whole(min, 10_000_000)


def milliseconds(min: int = 0) -> Whole:  # noqa: A002
    """A stretch of audio in milliseconds (a hop, speech padding, a minimum speech length): an hour
    is longer than any clip a benchmark here plays."""
    return Whole(min, 3_600_000)


def temperature() -> Number:
    """Every sampling temperature (run, generate, the loaders' settings): OpenAI-compatible servers
    take 0 to 2 and answer 400 to anything else, so a run at 50 would be all failures, one request
    at a time; a local model gains nothing from more than 2 either (the distribution is then flat
    noise). One range, said at parse time."""
    return Number(0, 2)


def number(min: Optional[float] = None, max: Optional[float] = None, *, min_open: bool = False,  # noqa: A002
           max_open: bool = False) -> Number:
    return Number(min, max, min_open, max_open)


#: the longest wait a request may be given: a day. Beyond what a socket takes (about 3e11 s: an
#: OverflowError deep in the client, after the run had begun) and far beyond any answer worth waiting for
MAX_TIMEOUT_S = 86_400.0


def timeout_seconds() -> Number:
    """Every request timeout (--timeout, --sim-timeout, a loader's timeout option): seconds, above 0."""
    return Number(0, MAX_TIMEOUT_S, True, False)


def json_value(kind: Optional[type] = None) -> JsonValue:
    return JsonValue(kind)


def url() -> Url:
    return Url()


def each(item: ArgType) -> Each:
    return Each(item)


def model_name() -> Name:
    return Name()


@dataclass(frozen=True, repr=False)
class Sentence(Name):
    """A sentence a command is given (`generate --goal`), held to a name's rules: said as what it is (battery 57:
    "expected a non-empty name" for a goal)."""

    expected = "a non-empty sentence on one line"
    noun = "a sentence"


def sentence() -> Sentence:
    return Sentence()


def data_source() -> DataSource:
    return DataSource()


def folder_name() -> FolderName:
    return FolderName()


def choice(choices: Sequence[str]) -> Choice:
    return Choice(tuple(choices))


def device() -> Device:
    return Device()


def env_var_name() -> EnvVarName:
    return EnvVarName()


def key_value() -> KeyValue:
    return KeyValue()


def names(choices: Sequence[str], canonical: Optional[Callable[[str], Any]] = None) -> Names:
    return Names(tuple(choices), canonical)


#: what matplotlib's savefig writes, by file extension (its own list; not imported to parse a command line)
PLOT_FORMATS = ("avif", "eps", "gif", "jpeg", "jpg", "pdf", "pgf", "png", "ps", "raw", "rgba", "svg", "svgz", "tif",
                "tiff", "webp")


@dataclass(frozen=True, repr=False)
class PlotPath(ArgType):
    """A plot's file: its extension says the format, checked now, not after the work it draws."""

    expected = f"a file name ending in an image format ({', '.join('.' + f for f in PLOT_FORMATS)})"

    def convert(self, value: Any) -> Path:
        target = PathArg("file", False).convert(value)
        if target.suffix.lower().lstrip(".") not in PLOT_FORMATS:
            raise self.refuse(str(value))
        return target


def plot_path() -> PlotPath:
    return PlotPath()


@dataclass(frozen=True, repr=False)
class SuffixedPath(ArgType):
    """A file written in one format, named for it (a JSON report named r.png was written as text)."""

    suffix: str = ".json"

    @property
    def expected(self) -> str:
        return f"a file name ending in {self.suffix}"

    def convert(self, value: Any) -> Path:
        target = PathArg("file", False).convert(value)
        if target.suffix.lower() != self.suffix:
            raise self.refuse(str(value))
        return target


@dataclass(frozen=True, repr=False)
class HistoryAudio(ArgType):
    """--history-audio, checked when parsed (it was named only after the server's key was, a typo found
    last); kept as typed, `ihbench.protocol.parse_history_audio` reads it."""

    expected = "all, auto or last:K with K >= 1"

    def convert(self, value: Any) -> str:
        text = str(value).strip()
        kind, _, count = text.partition(":")
        if text in ("all", "auto") or (kind == "last" and count.isascii() and count.isdigit() and int(count) >= 1):
            return text
        raise self.refuse(value)


def history_audio() -> HistoryAudio:
    return HistoryAudio()


def json_path() -> SuffixedPath:
    return SuffixedPath(".json")


def path(kind: Optional[str] = None, *, exists: bool = False) -> PathArg:
    if kind not in (None, "file", "folder"):
        raise ValueError(f"kind: expected 'file', 'folder' or None, got {kind!r}")
    return PathArg(kind, exists)
