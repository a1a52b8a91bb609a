"""Voxtral through transformers (`VoxtralForConditionalGeneration`): mistralai/Voxtral-Mini-3B-2507
and mistralai/Voxtral-Small-24B-2507. Needs `mistral-common` (the tokenizer).

There is no Jinja chat template: the prompt is mistral-common's own request encoding (tekken
tokenizer v7, read by transformers' MistralCommonBackend). `VoxtralProcessor.apply_chat_template`
takes user audio as `{"type": "audio", "base64" | "path" | "url": ...}` parts (not raw arrays:
clips go in as lossless float WAV) and returns ids, mask and the log-mel `input_features`; it
handles several audio user turns between assistant text turns, and batches (left-padded).
What surprised:

- No system prompt with audio. Tokenizer v7 rejects a request holding both a system message and
  audio ("not allowed prior to the tokenizer version 13") and the model card says system prompts
  are not supported. So the system prompt goes first as a user text message, in both modalities
  (one layout for audio and text runs): `<s>[INST]{system}[/INST]{greeting}</s>[INST][BEGIN_AUDIO]...`.
- Every clip is padded to whole 30 s windows: 375 audio tokens per started window (12.5 a
  second in the limit), so a 2 s turn costs as much as a 30 s one. Longer clips are taken whole,
  window after window: there is no per-clip cap (`max_clip_seconds = None`); the context is the limit.
- `VoxtralProcessor.apply_chat_template` ignores `tokenize=False`, and `VoxtralProcessor.__call__`
  fails on every call in transformers 5.23 (its defaults hand `tokenize`/`return_dict` to a
  tokenizer that refuses them); MistralCommonBackend also never reads control tokens written in
  text ("[INST]" encodes as letters). Audio input therefore goes through `apply_chat_template`;
  text-only input is rendered with the tokenizer's `apply_chat_template(tokenize=False)` and
  encoded by `VoxtralChatProcessor.__call__`, which reads the control tokens back, giving exactly
  the ids of the tokenized path (tested).
"""
from __future__ import annotations

import base64
import io
import logging
import re
from functools import cached_property, lru_cache
from typing import Sequence

import numpy as np

from .base import ModelInput
from .failures import UnsupportedInputError
from .limits import check_clips
from .transformers_base import TransformersLoader


def wav_base64(samples: np.ndarray, sampling_rate: int) -> str:
    """A clip as base64 float WAV: mistral-common decodes it back to the very same samples."""
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, np.asarray(samples, dtype=np.float32), sampling_rate, format="WAV", subtype="FLOAT")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def chat_messages(conversation: ModelInput, clips: Sequence[np.ndarray], sampling_rate: int) -> list[dict]:
    """mistral-common messages: the system prompt as the first user message (see the module
    docstring), user audio as audio parts, everything else as text. An assistant turn cut off
    before its first word is left out: mistral-common refuses an empty assistant message."""
    clips = iter(clips)
    messages = []
    for turn in conversation.turns:
        if turn.role == "system":
            if turn.text:
                messages.append({"role": "user", "content": turn.text})
        elif turn.audio is not None:
            messages.append({"role": "user", "content": [
                {"type": "audio", "base64": wav_base64(next(clips), sampling_rate)}]})
        elif turn.role == "user" or turn.text:
            messages.append({"role": turn.role, "content": turn.text})
    return messages


@lru_cache(maxsize=None)
def _processor_class():
    from transformers import VoxtralProcessor
    from transformers.feature_extraction_utils import BatchFeature

    class VoxtralChatProcessor(VoxtralProcessor):
        """VoxtralProcessor whose `__call__` encodes prompts written by the tokenizer's
        `apply_chat_template(tokenize=False)`: control tokens spelled out in the text become their
        ids, the text between them is encoded as usual. Text only: audio goes through
        `apply_chat_template`, which counts each clip's audio tokens and extracts its features."""

        def __call__(self, text=None, audio=None, **kwargs):
            texts = [text] if isinstance(text, str) else list(text)
            if audio is not None or any(self.audio_token in t for t in texts):
                raise TypeError("Voxtral takes audio through apply_chat_template, not the processor call")
            options = self._merge_kwargs(**kwargs)["text_kwargs"]
            for key in ("tokenize", "return_dict"):  # chat-template options MistralCommonBackend refuses
                options.pop(key, None)
            options["add_special_tokens"] = False  # the rendered prompt already starts with <s>
            encoded = self.tokenizer([self.control_token_ids(t) for t in texts], **options)
            return BatchFeature(data=dict(encoded), tensor_type=options.get("return_tensors"))

        @cached_property
        def control_tokens(self) -> re.Pattern:
            """Any of the tokenizer's control tokens, as apply_chat_template(tokenize=False) writes them."""
            tokens = sorted(self.tokenizer.all_special_tokens, key=len, reverse=True)
            return re.compile("(" + "|".join(re.escape(token) for token in tokens) + ")")

        def control_token_ids(self, text: str) -> list[int]:
            ids: list[int] = []
            for index, piece in enumerate(self.control_tokens.split(text)):  # text, control, text, ...
                if index % 2:
                    ids.append(self.tokenizer.convert_tokens_to_ids(piece))
                elif piece:
                    ids.extend(self.tokenizer.encode(piece, add_special_tokens=False))
            return ids

    return VoxtralChatProcessor


def __getattr__(name: str):
    # Built lazily so importing this module (the registry does) does not import transformers.
    if name == "VoxtralChatProcessor":
        return _processor_class()
    raise AttributeError(name)


class VoxtralLoader(TransformersLoader):
    name = "voxtral"
    requires = ("torch", "transformers", "mistral_common")
    max_clip_seconds = None  # measured: clips are split into 30 s windows, none is cut

    def load_processor(self):
        return _processor_class().from_pretrained(self.path)

    def load_model(self):
        from transformers import VoxtralForConditionalGeneration

        return VoxtralForConditionalGeneration.from_pretrained(self.path, dtype=self.dtype)

    def messages(self, conversation: ModelInput) -> list[dict]:
        return chat_messages(conversation, self.clips(conversation), self.sampling_rate)

    def prompt(self, conversation: ModelInput) -> str:
        """The prompt as text, control tokens spelled out (mistral-common's own rendering)."""
        if not conversation.audio_clips:  # text mode reads control tokens back: none may hide in a turn
            for turn in conversation.turns:
                found = turn.text and self.processor.control_tokens.search(turn.text)
                if found:
                    raise UnsupportedInputError(f"{conversation.item_id}: a {turn.role} turn holds the Mistral control token "
                                     f"{found.group()}, which a text prompt cannot carry")
        tokenizer_logger = logging.getLogger("transformers.tokenization_mistral_common")
        level = tokenizer_logger.level
        tokenizer_logger.setLevel(logging.ERROR)  # it warns that tokenize=False is unsafe: see VoxtralChatProcessor
        try:
            return self.processor.tokenizer.apply_chat_template(self.messages(conversation), tokenize=False)
        finally:
            tokenizer_logger.setLevel(level)

    def inputs(self, conversations: Sequence[ModelInput]):
        for conversation in conversations:
            check_clips(conversation, self.name, self.max_clip_seconds)
        if not any(c.audio_clips for c in conversations):
            texts = [self.prompt(c) for c in conversations]
            return self.processor(text=texts, return_tensors="pt", padding=True).to(self.device)
        # VoxtralProcessor's defaults: tokenize, a dict with the log-mel input_features, padding (left,
        # the tokenizer's side), torch tensors; its own tokenize/return_dict arguments are not read
        batch = [self.messages(c) for c in conversations]
        return self.processor.apply_chat_template(batch).to(self.device)
