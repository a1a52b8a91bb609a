"""Chat with tools: what a loader gives back when the model may call functions.

A ConversationBench run sends the whole on-policy history (system, user turns as audio or text,
the model's earlier replies, its tool calls and their results) with the benchmark's tools in the
OpenAI shape, and reads back the text and the calls. The messages are OpenAI-shaped dicts, except
that a user turn in audio mode carries `audio` (16 kHz mono float32 samples) instead of `content`:
each loader puts the audio where its API or chat template wants it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from ihbench.dataset.errors import ItemFailure


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Any  # the parsed JSON object, or the raw text when it is not JSON
    raw_arguments: str = ""

    def to_message(self) -> dict:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.raw_arguments or json.dumps(self.arguments)}}


@dataclass
class ChatReply:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    latency_s: float = 0.0
    ttfb_s: Optional[float] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    reasoning: Optional[str] = None
    #: the server said the token budget ended it (finish_reason `length`), whether or not it counted the tokens
    ended_at_budget: bool = False


class ChatFailure(ItemFailure, RuntimeError):
    """A chat request that could not be answered (raised by the session, recorded on the turn)."""


def parse_arguments(raw: Any) -> Any:
    """A tool call's arguments: servers send a JSON string; a model may write broken JSON, which is
    kept as text so the call is recorded as made (and judged) rather than lost."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:  # NaN and Infinity are no JSON: kept as text, so every record stays strict JSON (other tools read it)
        return json.loads(raw, parse_constant=_no_constant)
    except (TypeError, ValueError):
        return str(raw)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def template_messages(messages: list[dict]) -> list[dict]:
    """The history as a transformers chat template takes it: a user turn's audio as one audio part
    (the processor gets the samples themselves, in the same order), and each call's arguments as
    the object they encode. Templates render a mapping in their own syntax (Gemma 4:
    `key:<|"|>value<|"|>`) but paste a string in as it is (Gemma 4 would then write `{{...}}`). A
    reply that is only calls has content "" rather than None, which the Qwen3 templates cannot iterate."""
    rendered = []
    for message in messages:
        if message.get("audio") is not None:
            rendered.append({"role": message["role"], "content": [{"type": "audio", "audio": message["audio"]}]})
            continue
        message = {key: value for key, value in message.items() if key not in ("audio", "sampling_rate")}
        if message.get("content") is None:
            message["content"] = ""
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": _as_object(call["function"]["arguments"])}}
                for call in message["tool_calls"]]
        rendered.append(message)
    return rendered


def _as_object(arguments: Any) -> Any:
    parsed = parse_arguments(arguments)
    return parsed if isinstance(parsed, dict) else arguments


def assistant_turns(messages: list[dict]) -> int:
    """How many replies the history holds: the round number that keeps call ids unique and stable."""
    return sum(1 for message in messages if message["role"] == "assistant")
