"""Phi-4-multimodal-instruct through transformers (`Phi4MultimodalForCausalLM`), speech LoRA via peft.

The prompt is Phi-4's `<|system|>...<|end|><|user|>...<|end|><|assistant|>` layout from the
checkpoint's chat template. The transformers processor (unlike the original remote code and its
`<|audio_1|>`, `<|audio_2|>` placeholders) takes one tokenizer audio token (`<|audio|>`) per clip,
in clip order, and expands it to the clip's embedding length; each audio turn is that token.

The real checkpoint keeps its speech adapter in `speech-lora/`: it is loaded with peft and used
for audio input only; text-only input runs the base model, as Microsoft's own examples do.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Optional

from .base import ModelInput
from .transformers_base import TransformersLoader

SPEECH_ADAPTER = "speech-lora"


@lru_cache(maxsize=None)
def _processor_class():
    from transformers import Phi4MultimodalProcessor
    from transformers.processing_utils import ProcessorMixin

    class Phi4AudioTextProcessor(Phi4MultimodalProcessor):
        """Phi4MultimodalProcessor minus its image processor, which cannot be built without
        torchvision; the benchmark never sends images, and the audio and text paths are unchanged."""

        def __init__(self, audio_processor, tokenizer, chat_template=None):
            self.image_token = tokenizer.image_token
            self.image_token_id = tokenizer.image_token_id
            self.audio_token = tokenizer.audio_token
            self.audio_token_id = tokenizer.audio_token_id
            ProcessorMixin.__init__(self, audio_processor, tokenizer, chat_template=chat_template)

    return Phi4AudioTextProcessor


def __getattr__(name: str):
    # Built lazily so importing this module (the registry does) does not import transformers.
    if name == "Phi4AudioTextProcessor":
        return _processor_class()
    raise AttributeError(name)


def load_phi4_processor(path: str):
    """The checkpoint's processor, or its audio+text part when torchvision is not installed."""
    from transformers import AutoProcessor
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        return AutoProcessor.from_pretrained(path)
    return _processor_class().from_pretrained(path)


def speech_adapter_dir(path: str) -> Optional[Path]:
    candidate = Path(path) / SPEECH_ADAPTER
    return candidate if (candidate / "adapter_config.json").is_file() else None


class Phi4MultimodalLoader(TransformersLoader):
    name = "phi4-multimodal"
    model_types = ("phi4_multimodal",)
    model_type_hints = {"phi4mm": "this is the checkpoint's old remote-code format; the transformers-native "
                                  "weights are on the revision transformers and vLLM pin: --option revision=refs/pr/70 with the "
                                  "Hub id (or a local folder downloaded from that revision)"}
    requires = ("torch", "transformers", "peft")  # the checkpoint's speech adapter is a LoRA
    adapter: Optional[str] = None  # the speech adapter folder, once the model is loaded
    tools_unsupported = ("the Phi-4-multimodal chat template ignores `tools` (it copies only a system message's own "
                         "`tools` string between <|tool|> tags) and renders no tool calls or results; use a "
                         "tool-capable model served with vLLM (--model openai)")

    def load_processor(self):
        return load_phi4_processor(self.path)

    def load_model(self):
        from transformers import Phi4MultimodalForCausalLM

        model = self.pretrained(Phi4MultimodalForCausalLM)
        adapter = speech_adapter_dir(self.path)
        self.adapter = str(adapter) if adapter else None
        if adapter is None:
            return model
        from peft import PeftModel

        return PeftModel.from_pretrained(model, str(adapter), adapter_name="speech", is_trainable=False)

    def model_for(self, audio: bool):
        return _AdapterScope(self.model, enabled=audio)

    def prompt(self, conversation: ModelInput) -> str:
        token = self.processor.audio_token
        messages = [{"role": turn.role, "content": token if turn.audio is not None else turn.text}
                    for turn in conversation.turns]
        text = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return self.checked_prompt(text, len(conversation.audio_clips), token)

    def describe(self) -> dict:
        return {**super().describe(), "speech_adapter": self.adapter}


class _AdapterScope:
    """`generate` with the speech adapter on for audio input and off for text-only input."""

    def __init__(self, model, *, enabled: bool):
        self.model, self.enabled = model, enabled

    def generate(self, **kwargs):
        from contextlib import nullcontext

        off = not self.enabled and hasattr(self.model, "disable_adapter")
        with self.model.disable_adapter() if off else nullcontext():
            return self.model.generate(**kwargs)
