"""Qwen2.5-Omni (Qwen/Qwen2.5-Omni-7B, Qwen/Qwen2.5-Omni-3B) through transformers: only the
text-producing thinker (`Qwen2_5OmniThinkerForConditionalGeneration`) with `Qwen2_5OmniProcessor`.

- The checkpoint is a whole `Qwen2_5OmniForConditionalGeneration` (config `qwen2_5_omni`, weights
  `thinker.*`, `talker.*`, `token2wav.*`); the thinker class picks its own sub-config and weights
  out of it, as the transformers docs show for text-only output, so the talker is never built.
- The model card asks for its own "You are Qwen, a virtual human ..." system prompt, but only for
  speech output; we generate text, so the benchmark's system prompt is kept.
- The template writes `<|audio_bos|><|AUDIO|><|audio_eos|>` per audio part (no "Audio N:" label);
  the processor expands each <|AUDIO|> to 25 tokens a second. Its Whisper feature extractor pads
  and cuts every clip to 300 s (`n_samples`), not Whisper's 30 s.
- Its generation_config.json is the whole model's and names no end token for the thinker, which
  then runs to max_new_tokens (QwenLM/Qwen2.5-Omni#371): the tokenizer's end token is always added
  to the stop tokens, and its pad token fills in when none is named.
- The processor also holds image and video processors; the video one cannot be built without
  torchvision, so without it the audio+text part of the same class is used (as for Phi-4).
"""
from __future__ import annotations

from functools import lru_cache

from .base import ModelInput
from .transformers_base import TransformersLoader


@lru_cache(maxsize=None)
def audio_text_processor(name: str):
    """The transformers Omni processor class `name` (its audio and text paths unchanged) built
    without the image and video processors, which need torchvision; the benchmark sends neither."""
    import transformers
    from transformers.processing_utils import ProcessorMixin

    class AudioTextProcessor(getattr(transformers, name)):
        def __init__(self, feature_extractor, tokenizer, chat_template=None):
            ProcessorMixin.__init__(self, feature_extractor, tokenizer, chat_template=chat_template)
            for attribute in ("image_token", "audio_token", "video_token", "vision_bos_token", "vision_eos_token",
                              "audio_bos_token", "audio_eos_token", "image_token_id", "audio_token_id",
                              "video_token_id"):
                setattr(self, attribute, getattr(tokenizer, attribute))

        @property
        def model_input_names(self):
            return list(dict.fromkeys([*self.tokenizer.model_input_names,
                                       *self.feature_extractor.model_input_names, "feature_attention_mask"]))

    AudioTextProcessor.__name__ = f"{name.removesuffix('Processor')}AudioTextProcessor"
    AudioTextProcessor.__qualname__ = AudioTextProcessor.__name__
    return AudioTextProcessor


def load_omni_processor(path: str, name: str):
    """The checkpoint's processor, or its audio+text part when torchvision is not installed."""
    from transformers import AutoProcessor
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        return AutoProcessor.from_pretrained(path)
    return audio_text_processor(name).from_pretrained(path)


def chat_messages(conversation: ModelInput) -> list[dict]:
    """Every turn as a list of content parts, the form the Omni templates expect; user audio as
    an audio part (the processor gets the clips themselves, in the same order)."""
    messages = []
    for turn in conversation.turns:
        part = {"type": "audio", "audio": turn.audio} if turn.audio is not None else {"type": "text", "text": turn.text}
        messages.append({"role": turn.role, "content": [part]})
    return messages


def with_end_token(ends, end: int):
    """The generation config's end token(s) with `end` among them (one id stays an int)."""
    ends = [] if ends is None else list(ends) if isinstance(ends, (list, tuple)) else [ends]
    if end is not None and end not in ends:
        ends.append(end)
    return ends[0] if len(ends) == 1 else ends or None


class OmniThinkerLoader(TransformersLoader):
    """What the Qwen Omni families share: the thinker only, the processor (or its audio+text part)
    and a template check."""

    requires = ("torch", "transformers")  # not torchvision: see `audio_text_processor`
    PROCESSOR: str = ""
    THINKER: str = ""

    def load_processor(self):
        return load_omni_processor(self.path, self.PROCESSOR)

    def load_model(self):
        import transformers

        return self.pretrained(getattr(transformers, self.THINKER))

    def adjust_generation(self, generation) -> None:
        """The checkpoint's generation_config.json is the whole Omni model's and names no end token
        for the thinker, which then runs to max_new_tokens (QwenLM/Qwen2.5-Omni#371); the tokenizer's
        end (<|im_end|>, the end of a ChatML turn) and pad tokens are the fix. The end token is added
        even when the config names others: a re-saved or fine-tuned checkpoint that names only
        <|endoftext|> would otherwise run past the end of its turn."""
        tokenizer = self.processor.tokenizer
        generation.eos_token_id = with_end_token(generation.eos_token_id, tokenizer.eos_token_id)
        if generation.pad_token_id is None:
            generation.pad_token_id = tokenizer.pad_token_id

    def model_config(self):
        """Without weights, the thinker's part of the whole Omni checkpoint's config."""
        config = super().model_config()
        return config if self.model is not None else config.thinker_config

    def prompt(self, conversation: ModelInput) -> str:
        return self.checked_prompt(self.rendered(chat_messages(conversation)), len(conversation.audio_clips),
                                   self.processor.audio_token)


class Qwen2_5OmniLoader(OmniThinkerLoader):
    name = "qwen2.5-omni"
    model_types = ("qwen2_5_omni",)
    PROCESSOR = "Qwen2_5OmniProcessor"
    THINKER = "Qwen2_5OmniThinkerForConditionalGeneration"
    max_clip_seconds = 300.0  # measured: the extractor pads and cuts every clip to n_samples (300 s)
    tools_unsupported = ("the Qwen2.5-Omni chat template ignores `tools` and renders no tool calls or results; "
                         "use qwen3-omni, gemma4 or voxtral, or a tool-capable model served with vLLM (--model openai)")
