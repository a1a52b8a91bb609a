"""Qwen2-Audio-Instruct through transformers (`Qwen2AudioForConditionalGeneration`): audio parts
in the chat template, the processor's `audio=` keyword (the old `audios=` is silently ignored)."""
from __future__ import annotations

from .base import ModelInput, audio_part_messages
from .transformers_base import TransformersLoader


class Qwen2AudioLoader(TransformersLoader):
    """Qwen2-Audio's template writes one "Audio N: <|audio_bos|><|AUDIO|><|audio_eos|>" line per
    clip; the processor expands each <|AUDIO|> to the clip's length in encoder frames. Its Whisper
    feature extractor keeps only the first 30 s of a clip (25 audio tokens a second)."""
    name = "qwen2-audio"
    model_types = ("qwen2_audio",)
    tools_unsupported = ("the Qwen2-Audio chat template ignores `tools` and renders no tool calls or results; use "
                         "a tool-capable model served with vLLM (--model openai)")

    max_clip_seconds = 30.0

    def load_model(self):
        from transformers import Qwen2AudioForConditionalGeneration

        return self.pretrained(Qwen2AudioForConditionalGeneration)

    def prompt(self, conversation: ModelInput) -> str:
        return self.processor.apply_chat_template(audio_part_messages(conversation.turns),
                                                  add_generation_prompt=True, tokenize=False)
