"""Gemma 3n through transformers (`Gemma3nForConditionalGeneration`, `Gemma3nProcessor`):
google/gemma-3n-E4B-it and google/gemma-3n-E2B-it. No thinking mode.

What is surprising about it:
- Every clip costs the same 188 audio tokens, whatever its length: the feature extractor cuts
  clips at 480,000 samples (30 s), the encoder makes 6.25 tokens a second, and the model pads
  each clip's tokens to 188 with a padding embedding. So the prompt does not grow with a clip's
  length, and a clip over 30 s would lose its end silently (here it is an error on the item).
- The template has no system turn: it puts the system prompt, then a blank line, at the head of
  the first user turn, and refuses turns that do not alternate user/model. Our calls open with
  the agent's greeting, so when the first turn after the system prompt is the agent's, the
  system prompt is that first user turn on its own (where the template would have put it).
- The tokenizer adds <bos> itself and the template writes it too: the template's one is dropped
  so the model sees one <bos>, as `apply_chat_template(tokenize=True)` gives it.
- The vision tower is a timm MobileNetV5: building it needs `timm`, which needs torchvision. The
  benchmark sends no images, so the model is loaded without it (`Gemma3nAudioTextForConditional
  Generation`: the real class with the vision tower left out, its weights skipped on load); the
  audio tower, the language model and the image/audio token embedders are the checkpoint's.
"""
from __future__ import annotations

from functools import lru_cache

from .base import ModelInput, audio_part_messages
from .transformers_base import TransformersLoader


@lru_cache(maxsize=None)
def _model_class():
    from torch import nn
    from transformers import AutoModel, Gemma3nForConditionalGeneration
    from transformers.models.gemma3n.modeling_gemma3n import (
        Gemma3nModel,
        Gemma3nMultimodalEmbedder,
    )

    class Gemma3nAudioTextModel(Gemma3nModel):
        """Gemma3nModel.__init__ without the vision tower (it is used only for `pixel_values`)."""

        def __init__(self, config):
            super(Gemma3nModel, self).__init__(config)
            self.vision_tower = None
            self.vocab_size = config.text_config.vocab_size
            self.language_model = AutoModel.from_config(config.text_config)
            self.vocab_size_per_layer_input = config.text_config.vocab_size_per_layer_input
            self.audio_tower = AutoModel.from_config(config.audio_config)
            self.embed_vision = Gemma3nMultimodalEmbedder(config.vision_config, config.text_config)
            self.embed_audio = Gemma3nMultimodalEmbedder(config.audio_config, config.text_config)
            self.post_init()

    class Gemma3nAudioTextForConditionalGeneration(Gemma3nForConditionalGeneration):
        """Gemma3nForConditionalGeneration whose model has no vision tower; a checkpoint's vision
        tower weights are skipped on load."""

        _keys_to_ignore_on_load_unexpected = [r"^model\.vision_tower\."]

        def __init__(self, config):
            super(Gemma3nForConditionalGeneration, self).__init__(config)
            self.model = Gemma3nAudioTextModel(config)
            self.lm_head = nn.Linear(config.text_config.hidden_size, config.text_config.vocab_size, bias=False)
            self.post_init()

    return Gemma3nAudioTextForConditionalGeneration


def __getattr__(name: str):
    # Built lazily so importing this module (the registry does) does not import transformers.
    if name == "Gemma3nAudioTextForConditionalGeneration":
        return _model_class()
    raise AttributeError(name)


def chat_messages(conversation: ModelInput) -> list[dict]:
    """Chat-template messages: user audio as an audio part, everything else as text; the system
    prompt as a user turn of its own when the agent speaks first (see the module docstring)."""
    turns = list(conversation.turns)
    messages = []
    if turns[0].role == "system" and (len(turns) == 1 or turns[1].role != "user"):
        messages.append({"role": "user", "content": [{"type": "text", "text": turns.pop(0).text}]})
    return messages + audio_part_messages(turns)


class Gemma3nLoader(TransformersLoader):
    name = "gemma3n"
    model_types = ("gemma3n",)
    max_clip_seconds = 30.0
    tools_unsupported = ("the Gemma 3n chat template ignores `tools` and takes only alternating user/model turns "
                         "(no tool calls or results); use gemma4, or a tool-capable model served with vLLM "
                         "(--model openai)")

    def load_processor(self):
        processor = super().load_processor()
        tokenizer = processor.tokenizer
        # what the tokenizer does, not its `add_bos_token` (a reloaded tokenizer can say False and add it)
        self.tokenizer_adds_bos = tokenizer("x").input_ids[:1] == [tokenizer.bos_token_id]
        return processor

    def load_model(self):
        return self.pretrained(_model_class())

    def prompt(self, conversation: ModelInput) -> str:
        text = self.processor.apply_chat_template(chat_messages(conversation), add_generation_prompt=True,
                                                  tokenize=False)
        if self.tokenizer_adds_bos:
            text = text.removeprefix(self.processor.tokenizer.bos_token)
        return self.checked_prompt(text, len(conversation.audio_clips), self.processor.audio_token)
