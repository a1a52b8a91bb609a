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

from .base import ModelFolderError, ModelInput
from .transformers_base import TransformersLoader, first_line

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


def with_speech_adapter(model, adapter: Path):
    """`model` with the LoRA in `adapter` as its "speech" adapter, refused in one line when the adapter
    does not fit: peft's own loader loads what matches and drops the rest, so an adapter of other
    target modules, or with a tensor missing, answered as the base model (rc 0), and a damaged one was
    a traceback. The result of `load_adapter` says what was left (`PeftModel.from_pretrained` keeps it)."""
    from peft import PeftConfig, get_peft_model
    from safetensors import SafetensorError

    def refused(what: str) -> ModelFolderError:
        return ModelFolderError(f"{adapter}: the speech adapter {what}; the adapter is damaged, edited, or of "
                                "another checkpoint")

    if not any((adapter / name).is_file() for name in ("adapter_model.safetensors", "adapter_model.bin")):
        raise refused("has no weights (adapter_model.safetensors)")
    try:
        config = PeftConfig.from_pretrained(str(adapter))
        config.inference_mode = True
        # the adapter names the base it was trained from (Microsoft's path); this checkpoint's folder is it
        config.base_model_name_or_path = model.name_or_path
        peft_model = get_peft_model(model, config, adapter_name="speech")
        loaded = peft_model.load_adapter(str(adapter), adapter_name="speech", is_trainable=False)
    except (RuntimeError, ValueError, TypeError, KeyError, AttributeError, OSError, SafetensorError) as error:
        if "size mismatch" in str(error):
            raise refused("holds tensors of other sizes than adapter_config.json gives them (its r)") from None
        raise refused(f"cannot be loaded ({first_line(error)})") from None
    missing, unused = sorted(loaded.missing_keys), sorted(loaded.unexpected_keys)
    if missing or unused:
        example = missing[0] if missing else unused[0]
        raise refused(f"does not fit the model ({len(missing)} tensor(s) missing, {len(unused)} with no place in it, "
                      f"e.g. {example})")
    return peft_model


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
        return with_speech_adapter(model, adapter)

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
