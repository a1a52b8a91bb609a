r"""Gemma 4 with audio through transformers (`Gemma4ForConditionalGeneration`): google/gemma-4-E2B-it
and google/gemma-4-E4B-it, the Gemma 4 checkpoints with an audio encoder.

Not for the 26B-A4B and 31B checkpoints (no audio tower), nor the 12B, which is another
architecture (`Gemma4UnifiedForConditionalGeneration`, audio fed as raw 40 ms waveform frames,
`Gemma4UnifiedProcessor`).

The prompt is the checkpoint's own template: `<|turn>system\n...<turn|>` (Gemma 4 takes a
system role, unlike Gemma 3), user turns with one `<|audio|>` per clip, which the processor
expands to `<|audio>` + one token per 40 ms + `<audio|>`. The feature extractor cuts clips at
480,000 samples, so a clip keeps only its first 30 s (750 audio tokens).

Thinking is off unless `thinking=true`: the template then puts `<|think|>` at the top of the
system turn (its `enable_thinking`), and the model writes `<|channel>thought\n...<channel|>`
before the answer. The E-series template pre-fills nothing when thinking is off, so the thought
channel is split off whenever it appears, whatever the option.

Gemma4Processor cannot be built without torchvision (its video processor needs it; the image
processor falls back to PIL): without torchvision the loader builds it minus the video processor.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ihbench_dataset.errors import UsageError

from .base import Conversation
from .reasoning import split_reasoning
from .registry import register
from .transformers_base import TransformersLoader

THOUGHT_START, THOUGHT_END = "<|channel>", "<channel|>"
THOUGHT_LABEL = "thought"  # the channel's name, written right after <|channel>


@lru_cache(maxsize=None)
def _processor_class():
    from transformers import Gemma4Processor
    from transformers.processing_utils import ProcessorMixin

    class _WithoutVideo(ProcessorMixin):
        def __init__(self, *args, video_processor=None, **kwargs):
            super().__init__(*args, **kwargs)

    class Gemma4AudioTextProcessor(Gemma4Processor, _WithoutVideo):
        """Gemma4Processor minus its video processor, which cannot be built without torchvision;
        the benchmark never sends video, and the audio, image and text paths are unchanged
        (Gemma4Processor.__init__ runs as is; `_WithoutVideo` drops the missing video processor
        on its way to ProcessorMixin)."""

        def __init__(self, feature_extractor, image_processor, tokenizer, chat_template=None,
                     image_seq_length: int = 280, audio_seq_length: int = 750, audio_ms_per_token: int = 40,
                     **kwargs):
            super().__init__(feature_extractor, image_processor, tokenizer, None, chat_template=chat_template,
                             image_seq_length=image_seq_length, audio_seq_length=audio_seq_length,
                             audio_ms_per_token=audio_ms_per_token, **kwargs)

    return Gemma4AudioTextProcessor


def __getattr__(name: str):
    # Built lazily so importing this module (the registry does) does not import transformers.
    if name == "Gemma4AudioTextProcessor":
        return _processor_class()
    raise AttributeError(name)


def load_gemma4_processor(path: str):
    """The checkpoint's processor, or all of it but the video processor without torchvision."""
    from transformers import AutoProcessor
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        return AutoProcessor.from_pretrained(path)
    return _processor_class().from_pretrained(path)


def chat_messages(conversation: Conversation) -> list[dict]:
    """Chat-template messages: user audio as an audio part, everything else as text."""
    messages = []
    for turn in conversation.turns:
        if turn.role == "user":
            part = {"type": "audio", "audio": turn.audio} if turn.audio is not None else \
                {"type": "text", "text": turn.text}
            messages.append({"role": "user", "content": [part]})
        else:
            messages.append({"role": turn.role, "content": turn.text})
    return messages


@register("gemma4")
class Gemma4Loader(TransformersLoader):
    max_clip_seconds = 30.0

    def __init__(self, model_path: str, *, thinking: bool = False, **options):
        if not isinstance(thinking, bool):
            raise UsageError(f"thinking: expected true or false, got {thinking!r}")
        self.thinking = thinking
        super().__init__(model_path, thinking=thinking, **options)

    def load_processor(self):
        processor = load_gemma4_processor(self.path)
        tokenizer = processor.tokenizer
        # the template writes <bos>; the checkpoints' tokenizer does not add one (if it did, the
        # template's is dropped, so the model never sees two)
        self.tokenizer_adds_bos = tokenizer("x").input_ids[:1] == [tokenizer.bos_token_id]
        return processor

    def load_model(self):
        from transformers import Gemma4ForConditionalGeneration

        return Gemma4ForConditionalGeneration.from_pretrained(self.path, dtype=self.dtype)

    def prompt(self, conversation: Conversation) -> str:
        text = self.processor.apply_chat_template(chat_messages(conversation), add_generation_prompt=True,
                                                  tokenize=False, enable_thinking=self.thinking)
        if self.tokenizer_adds_bos:
            text = text.removeprefix(self.processor.tokenizer.bos_token)
        token = self.processor.audio_token
        if text.count(token) != len(conversation.audio_clips):
            raise UsageError(f"the chat template wrote {text.count(token)} {token} for "
                             f"{len(conversation.audio_clips)} clip(s)")
        return text

    def split_reasoning(self, raw: str) -> tuple[str, Optional[str]]:
        text, reasoning = split_reasoning(raw, THOUGHT_START, THOUGHT_END)
        if reasoning is not None:
            label, _, rest = reasoning.partition("\n")
            if label.strip() == THOUGHT_LABEL:
                reasoning = rest.strip()
        return text, reasoning or None
