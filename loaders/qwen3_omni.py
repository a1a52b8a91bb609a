"""Qwen3-Omni (Qwen/Qwen3-Omni-30B-A3B-Instruct, Qwen/Qwen3-Omni-30B-A3B-Thinking) through
transformers: only the text-producing MoE thinker (`Qwen3OmniMoeThinkerForConditionalGeneration`)
with `Qwen3OmniMoeProcessor`; the talker and code2wav (Instruct only) are never built.

- Loading, the missing end token and the torchvision-free processor work as for Qwen2.5-Omni
  (`loaders.qwen2_5_omni`).
- Audio parts are `<|audio_start|><|audio_pad|><|audio_end|>`; the processor pads clips to the
  longest and never cuts one (no per-clip cap), at about 13 tokens a second (13 per 100 frames).
- The Thinking checkpoint writes `<think>...</think>` before its answer. The `thinking` option
  (default false) reaches the template as `enable_thinking`, the Qwen3 templates' switch: false
  closes an empty think block after the generation prompt (Qwen3's no-thinking form), true lets
  the model think. Reasoning is split off whatever the option, so it never reaches the judges.
- Tools (the checkpoints' chat_template.json, Qwen3's Hermes-style format): the template lists them
  as JSON inside `<tools></tools>` in the system turn, the model calls with
  `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, and results go back as one user turn
  of `<tool_response>...</tool_response>` blocks (`tool_calls.hermes`; vLLM: `--tool-call-parser hermes`).
"""
from __future__ import annotations

from typing import Any, Optional

from ihbench.dataset.argtypes import boolean

from . import tool_calls
from .qwen2_5_omni import OmniThinkerLoader
from .reasoning import split_reasoning

THINK_START, THINK_END = "<think>", "</think>"


class Qwen3OmniLoader(OmniThinkerLoader):
    name = "qwen3-omni"
    model_types = ("qwen3_omni_moe",)
    PROCESSOR = "Qwen3OmniMoeProcessor"
    THINKER = "Qwen3OmniMoeThinkerForConditionalGeneration"

    option_types = {"thinking": boolean()}
    thinking_tokens = 4096  # Qwen3 thinking models reason at length before a short answer
    tools_unsupported = None
    parse_tool_calls = staticmethod(tool_calls.hermes)

    def __init__(self, model_path: str, *, thinking: bool = False, **options: Any):
        self.thinking = self.check_options({"thinking": thinking})["thinking"]
        super().__init__(model_path, thinking=thinking, **options)

    def template_options(self) -> dict:
        return {"enable_thinking": self.thinking}

    def split_reasoning(self, raw: str) -> tuple[str, Optional[str]]:
        return split_reasoning(raw, THINK_START, THINK_END)
