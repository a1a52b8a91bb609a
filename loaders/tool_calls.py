"""Tool calls out of what a local model wrote, one function per format the families are trained on.

A server with a tool-call parser (vLLM `--tool-call-parser ...`) hands back calls already split
from the text; a local model gives us its raw decoded text (special tokens kept), so the calls are
found here. Each parser returns the text without the calls (what the agent says) and the calls in
order, with ids `<id_prefix>_<k>`. A call whose arguments are not valid JSON is still a call, its
arguments kept as written (`chat.parse_arguments`), so it is recorded and judged as made; a block
that does not even name a function is left in the text, never dropped.

- `hermes`: Qwen3 (and Qwen3-Omni) `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, as
  vLLM's `hermes` parser reads it.
- `mistral`: mistral-common tokenizers before v11 (Voxtral's tekken v7)
  `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`, as vLLM's `mistral` parser reads it.
- `gemma4`: `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:42}<tool_call|>`: bare keys, strings
  between `<|"|>` tokens (Gemma 4's chat template and vLLM's `gemma4` parser).
"""
from __future__ import annotations

import json
import re
from typing import Any, Optional

from .chat import ToolCall, parse_arguments

_NAMED = re.compile(r'\{\s*"name"\s*:\s*"([^"]+)"\s*(?:,\s*"(?:arguments|parameters)"\s*:\s*)?', re.DOTALL)


def _call(id_: str, name: str, arguments: Any) -> ToolCall:
    """A call whose `arguments` is what the model wrote: a JSON object, or text that is not one."""
    parsed = parse_arguments(arguments)
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=id_, name=str(name), arguments=parsed, raw_arguments=raw)


def _numbered(named: list[tuple[str, Any]], id_prefix: str, first: int) -> list[ToolCall]:
    return [_call(f"{id_prefix}_{first + k}", name, arguments) for k, (name, arguments) in enumerate(named)]


def _named_objects(body: str) -> list[tuple[str, Any]]:
    """(name, arguments) of each `{"name": ..., "arguments": ...}` in `body`: one object or a list
    of them. Broken JSON still gives each call its name, and the text after `"arguments":` up to
    the next call as its (unparsed) arguments; no name at all gives nothing."""
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        found = list(_NAMED.finditer(body))
        calls = []
        for index, match in enumerate(found):
            end = found[index + 1].start() if index + 1 < len(found) else len(body)
            rest = body[match.end():end].strip().rstrip(",").rstrip()
            rest = rest.removesuffix("]").rstrip().removesuffix("}").rstrip()  # the call's (and list's) own braces
            calls.append((match.group(1), rest))
        return calls
    items = value if isinstance(value, list) else [value]
    return [(item["name"], item.get("arguments", item.get("parameters", {}))) for item in items
            if isinstance(item, dict) and isinstance(item.get("name"), str)]


def _joined(parts: list[str]) -> str:
    return "\n".join(part.strip() for part in parts if part.strip())


def _blocks(text: str, start: str, end: str, id_prefix: str, read) -> tuple[str, list[ToolCall]]:
    """Every `start ... end` block of `text` read by `read(body) -> [(name, arguments)]`; a last
    block left open (the length limit hit mid-call) is read too."""
    kept, calls, position = [], [], 0
    while True:
        opened = text.find(start, position)
        if opened < 0:
            kept.append(text[position:])
            break
        closed = text.find(end, opened + len(start))
        stop = len(text) if closed < 0 else closed + len(end)
        body = text[opened + len(start):closed if closed >= 0 else len(text)]
        named = read(body)
        kept.append(text[position:opened])
        if named:
            calls += _numbered(named, id_prefix, len(calls))
        else:
            kept.append(text[opened:stop])  # not a call: what the model wrote stays said
        position = stop
    return _joined(kept), calls


def hermes(text: str, id_prefix: str = "call") -> tuple[str, list[ToolCall]]:
    return _blocks(text, "<tool_call>", "</tool_call>", id_prefix, lambda body: _named_objects(body.strip()))


TOOL_CALLS = "[TOOL_CALLS]"


def mistral(text: str, id_prefix: str = "call") -> tuple[str, list[ToolCall]]:
    """Text before the first `[TOOL_CALLS]` is said; after each marker, one JSON list (or object)
    of calls, and whatever follows it is text again (`</s>`, removed with the special tokens)."""
    pieces = text.split(TOOL_CALLS)
    kept, calls = [pieces[0]], []
    for piece in pieces[1:]:
        stripped = piece.lstrip()
        try:
            value, end = json.JSONDecoder().raw_decode(stripped)
            body, rest = json.dumps(value), stripped[end:]
        except json.JSONDecodeError:
            body, rest = stripped, ""
        named = _named_objects(body)
        if not named:
            kept.append(TOOL_CALLS + piece)
            continue
        calls += _numbered(named, id_prefix, len(calls))
        kept.append(rest)
    return _joined(kept), calls


GEMMA_QUOTE = '<|"|>'
_GEMMA_CALL = re.compile(r"\s*call:([^{\s]+)\s*\{(.*)$", re.DOTALL)
_BARE_KEY = re.compile(r"[A-Za-z_][\w.-]*(?=\s*:)")


def gemma4_arguments(inner: str) -> Optional[dict]:
    """Gemma 4's argument syntax as a dict (None when it is not valid): `<|"|>` strings become
    JSON strings and bare keys quoted keys; JSON strings, numbers, true/false, {} and [] as they are.
    Scanned, not pattern-replaced, so a string holding `,key:` or braces is never touched."""
    out, index = [], 0
    expect_key = True  # at the start of an object, or after a comma
    while index < len(inner):
        char = inner[index]
        if inner.startswith(GEMMA_QUOTE, index):
            close = inner.find(GEMMA_QUOTE, index + len(GEMMA_QUOTE))
            if close < 0:
                return None
            out.append(json.dumps(inner[index + len(GEMMA_QUOTE):close], ensure_ascii=False))
            index, expect_key = close + len(GEMMA_QUOTE), False
            continue
        if char == '"':
            try:
                value, end = json.JSONDecoder().raw_decode(inner, index)
            except json.JSONDecodeError:
                return None
            out.append(json.dumps(value, ensure_ascii=False))
            index, expect_key = end, False
            continue
        key = _BARE_KEY.match(inner, index) if expect_key else None
        if key:
            out.append(json.dumps(key.group()))
            index, expect_key = key.end(), False
            continue
        out.append(char)
        if char in "{,":
            expect_key = True
        elif not char.isspace():
            expect_key = False
        index += 1
    try:
        value = json.loads("{" + "".join(out) + "}")
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _gemma4_call(body: str) -> list[tuple[str, Any]]:
    match = _GEMMA_CALL.match(body)
    if not match:
        return []
    name, inner = match.groups()
    inner = inner.rstrip().removesuffix("}")  # absent when the length limit cut the call
    arguments = gemma4_arguments(inner)
    return [(name, inner if arguments is None else arguments)]


def gemma4(text: str, id_prefix: str = "call") -> tuple[str, list[ToolCall]]:
    return _blocks(text, "<|tool_call>", "<tool_call|>", id_prefix, _gemma4_call)
