r"""Gemma 4 with audio through transformers, two architectures under one loader, chosen from
the checkpoint's config.json `model_type` before anything is loaded:

- `gemma4`: google/gemma-4-E2B-it and google/gemma-4-E4B-it (`Gemma4ForConditionalGeneration`,
  `Gemma4Processor`): a conformer audio tower on mel features; the processor expands each
  `<|audio|>` to `<|audio>` + one token per 40 ms + `<audio|>` and cuts a clip at 480,000 samples,
  so a clip keeps only its first 30 s (750 audio tokens).
- `gemma4_unified`: google/gemma-4-12B-it, the paper's "Gemma 4 12B Instruct"
  (`Gemma4UnifiedForConditionalGeneration`, `Gemma4UnifiedProcessor`): no audio tower; the
  feature extractor cuts raw 16 kHz waveform into 640-sample (40 ms) frames, one soft token
  each, and nothing caps a clip (its `audio_seq_length=750` is never applied: measured, 25
  tokens a second at 10, 20, 40 and 70 s), so a clip's only limit is the model's context.

Not for the 26B-A4B and 31B checkpoints (model_type `gemma4` but no audio tower).

The prompt is the checkpoint's own template, the same layout in both: `<|turn>system\n...<turn|>`
(Gemma 4 takes a system role, unlike Gemma 3), user turns with one `<|audio|>` per clip, model
turns as text. Thinking is off unless `thinking=true`: the template then puts `<|think|>` at the
top of the system turn (its `enable_thinking`), and the model writes `<|channel>thought\n...
<channel|>` before the answer. With thinking off the E-series template pre-fills nothing, while
the 12B's (the same file as the 26B-A4B's) ends the prompt with an empty, closed thought channel
`<|channel>thought\n<channel|>`; so the thought channel is split off whenever it appears,
whatever the option.

Tools: both templates declare them in the system turn (`<|tool>declaration:NAME{...}<tool|>`); the
model calls with `<|tool_call>call:NAME{key:<|"|>value<|"|>}<tool_call|>` and stops at
`<|tool_response>` (an end token of the generation config); the template writes each result right
after its call, inside the same model turn, and the model goes on from there
(`tool_calls.gemma4`; vLLM: `--tool-call-parser gemma4`).

Without torchvision, Gemma4Processor cannot build its video processor and Gemma4UnifiedProcessor
neither its image nor its video processor: the loader then builds them minus those (the
benchmark sends neither images nor video).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

from ihbench.dataset.argtypes import boolean

from . import tool_calls
from .base import ModelFolderError, ModelInput, audio_part_messages
from .reasoning import split_reasoning
from .transformers_base import TransformersLoader

THOUGHT_START, THOUGHT_END = "<|channel>", "<channel|>"
THOUGHT_LABEL = "thought"  # the channel's name, written right after <|channel>


@dataclass(frozen=True)
class Architecture:
    model_class: str
    #: the checkpoint's processor (Gemma4Processor, Gemma4UnifiedProcessor) minus what needs
    #: torchvision, loaded when torchvision is missing
    processor_without_torchvision: str
    #: the longest clip the processor takes whole (None: any length)
    max_clip_seconds: Optional[float]


# config.json model_type -> what loads it
ARCHITECTURES = {
    "gemma4": Architecture("Gemma4ForConditionalGeneration", "Gemma4AudioTextProcessor", 30.0),
    "gemma4_unified": Architecture("Gemma4UnifiedForConditionalGeneration", "Gemma4UnifiedAudioTextProcessor", None),
}


def architecture(path: str) -> str:
    """The checkpoint's model_type, read from its config.json; one this loader does not take is
    an error naming the file and the types it takes."""
    config = Path(path) / "config.json"
    try:
        model_type = json.loads(config.read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError) as error:
        raise ModelFolderError(f"{config}: cannot read the model_type ({type(error).__name__}: {error})") from None
    if model_type not in ARCHITECTURES:
        raise ModelFolderError(f"{config}: model_type {model_type!r} is not a Gemma 4 audio checkpoint; the gemma4 "
                               f"loader takes model_type {' or '.join(ARCHITECTURES)}")
    return model_type


def _dropping(*names: str):
    """A ProcessorMixin that drops the sub-processors `names` on their way to it: placed after the
    real processor class in the MRO, the real `__init__` runs as is."""
    from transformers.processing_utils import ProcessorMixin

    class Dropping(ProcessorMixin):
        def __init__(self, *args, **kwargs):
            for name in names:
                kwargs.pop(name, None)
            super().__init__(*args, **kwargs)

    return Dropping


@lru_cache(maxsize=None)
def _processor_class(name: str):
    import transformers

    if name == "Gemma4AudioTextProcessor":
        class Gemma4AudioTextProcessor(transformers.Gemma4Processor, _dropping("video_processor")):
            """Gemma4Processor minus its video processor, which cannot be built without torchvision;
            the audio, image and text paths are unchanged."""

            def __init__(self, feature_extractor, image_processor, tokenizer, chat_template=None,
                         image_seq_length: int = 280, audio_seq_length: int = 750, audio_ms_per_token: int = 40,
                         **kwargs):
                super().__init__(feature_extractor, image_processor, tokenizer, None, chat_template=chat_template,
                                 image_seq_length=image_seq_length, audio_seq_length=audio_seq_length,
                                 audio_ms_per_token=audio_ms_per_token, **kwargs)

        return Gemma4AudioTextProcessor

    class Gemma4UnifiedAudioTextProcessor(transformers.Gemma4UnifiedProcessor,
                                          _dropping("image_processor", "video_processor")):
        """Gemma4UnifiedProcessor minus its image and video processors, which both need torchvision;
        the audio and text paths are unchanged."""

        def __init__(self, feature_extractor, tokenizer, chat_template=None, image_seq_length: int = 280,
                     audio_seq_length: int = 750, audio_ms_per_token: int = 40, **kwargs):
            super().__init__(feature_extractor, None, tokenizer, None, chat_template=chat_template,
                             image_seq_length=image_seq_length, audio_seq_length=audio_seq_length,
                             audio_ms_per_token=audio_ms_per_token, **kwargs)

    return Gemma4UnifiedAudioTextProcessor


def __getattr__(name: str):
    # Built lazily so importing this module (the registry does) does not import transformers.
    if name in (kind.processor_without_torchvision for kind in ARCHITECTURES.values()):
        return _processor_class(name)
    raise AttributeError(name)


def load_gemma4_processor(path: str, model_type: str = "gemma4"):
    """The checkpoint's processor, or all of it but what needs torchvision without it."""
    from transformers import AutoProcessor
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        return AutoProcessor.from_pretrained(path)
    return _processor_class(ARCHITECTURES[model_type].processor_without_torchvision).from_pretrained(path)


class Gemma4Loader(TransformersLoader):
    name = "gemma4"
    #: the E-series value; set per checkpoint at load (ARCHITECTURES)
    max_clip_seconds = 30.0

    option_types = {"thinking": boolean()}
    tools_unsupported = None
    parse_tool_calls = staticmethod(tool_calls.gemma4)

    def __init__(self, model_path: str, *, thinking: bool = False, **options):
        self.thinking = self.check_options({"thinking": thinking})["thinking"]
        super().__init__(model_path, thinking=thinking, **options)

    @classmethod
    def check_format(cls, path: str) -> str:
        return architecture(path)

    def load_processor(self):
        # the first hook after the path is resolved: the architecture is chosen before any loading
        self.architecture = architecture(self.path)
        self.max_clip_seconds = ARCHITECTURES[self.architecture].max_clip_seconds
        processor = load_gemma4_processor(self.path, self.architecture)
        tokenizer = processor.tokenizer
        # the template writes <bos>; the checkpoints' tokenizer does not add one (if it did, the
        # template's is dropped, so the model never sees two)
        self.tokenizer_adds_bos = tokenizer("x").input_ids[:1] == [tokenizer.bos_token_id]
        return processor

    def load_model(self):
        import transformers

        model_class = getattr(transformers, ARCHITECTURES[self.architecture].model_class)
        return self.pretrained(model_class)

    def template_options(self) -> dict:
        return {"enable_thinking": self.thinking}

    def rendered(self, messages: list[dict], tools: Optional[list[dict]] = None) -> str:
        text = super().rendered(messages, tools)
        return text.removeprefix(self.processor.tokenizer.bos_token) if self.tokenizer_adds_bos else text

    def prompt(self, conversation: ModelInput) -> str:
        return self.checked_prompt(self.rendered(audio_part_messages(conversation.turns)),
                                   len(conversation.audio_clips), self.processor.audio_token)

    def split_reasoning(self, raw: str) -> tuple[str, Optional[str]]:
        text, reasoning = split_reasoning(raw, THOUGHT_START, THOUGHT_END)
        if reasoning is not None:
            label, _, rest = reasoning.partition("\n")
            if label.strip() == THOUGHT_LABEL:
                reasoning = rest.strip()
        return text, reasoning or None

    def describe(self) -> dict:
        return {**super().describe(), "architecture": self.architecture}
