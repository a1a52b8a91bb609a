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
- Tools (mistral-common's own request encoding, tokenizer v7; the model card's "function-calling
  straight from voice"): `[AVAILABLE_TOOLS][...JSON...][/AVAILABLE_TOOLS]` before the last user
  turn, calls as `[TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}]</s>`, results as
  `[TOOL_RESULTS]id[TOOL_CONTENT]...[/TOOL_RESULTS]` (`tool_calls.mistral`; vLLM:
  `--tool-call-parser mistral`). Call ids must be 9 letters or digits there, so each of ours is
  mapped to one (`mistral_call_id`). VoxtralProcessor.apply_chat_template drops `tools`, so every
  encoding with audio goes through `VoxtralChatProcessor.chat_encoding`, which passes them on.
"""
from __future__ import annotations

import base64
import hashlib
import io
import logging
import re
from functools import cached_property, lru_cache
from typing import Optional, Sequence

import numpy as np

from . import tool_calls
from .base import ModelInput
from .failures import UnsupportedInputError
from .limits import check_clips
from .transformers_base import TransformersLoader, chat_audio


def wav_base64(samples: np.ndarray, sampling_rate: int) -> str:
    """A clip as base64 float WAV: mistral-common decodes it back to the very same samples."""
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, np.asarray(samples, dtype=np.float32), sampling_rate, format="WAV", subtype="FLOAT")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def chat_messages(conversation: ModelInput, clips: Sequence[np.ndarray], sampling_rate: int) -> list[dict]:
    history = [{"role": turn.role, "audio": turn.audio} if turn.audio is not None else
               {"role": turn.role, "content": turn.text} for turn in conversation.turns]
    return mistral_messages(history, clips, sampling_rate)


def mistral_messages(history: list[dict], clips: Sequence[np.ndarray], sampling_rate: int) -> list[dict]:
    """mistral-common messages of an OpenAI-shaped history: the system prompt as the first user
    message (see the module docstring), user audio (`clips`, in order) as audio parts, calls and
    results with their ids mapped (`mistral_call_id`), everything else as text. An assistant turn
    cut off before its first word is left out: mistral-common refuses an empty assistant message."""
    clips = iter(clips)
    messages = []
    for message in history:
        role, text = message["role"], message.get("content")
        if role == "system":
            if text:
                messages.append({"role": "user", "content": text})
        elif message.get("audio") is not None:
            messages.append({"role": "user", "content": [
                {"type": "audio", "base64": wav_base64(next(clips), sampling_rate)}]})
        elif role == "tool":
            messages.append({"role": "tool", "tool_call_id": mistral_call_id(message["tool_call_id"]), "content": text})
        elif message.get("tool_calls"):
            messages.append({"role": "assistant", "content": text or None, "tool_calls": [
                {**call, "id": mistral_call_id(call["id"])} for call in message["tool_calls"]]})
        elif role == "user" or text:
            messages.append({"role": role, "content": text})
    return messages


def mistral_call_id(call_id: str) -> str:
    """A call id as mistral-common takes it (9 letters or digits), the same for the call and its result."""
    return hashlib.sha256(call_id.encode()).hexdigest()[:9]


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

        def chat_encoding(self, conversations: list[list[dict]], tools: Optional[list[dict]] = None) -> BatchFeature:
            """VoxtralProcessor.apply_chat_template's own tokenized path (ids, mask, and the log-mel
            features of every clip, left-padded) with `tools` passed on to mistral-common, which
            that method drops."""
            options = self._merge_kwargs()
            text, audio = options["text_kwargs"], options["audio_kwargs"]
            text["return_tensors"] = None  # tensors once the features are in, as the processor does
            encoded = self.tokenizer.apply_chat_template(conversations, tools=tools, **text)
            clips = encoded.pop("audio", None)
            data = dict(encoded)
            if clips is not None:
                data["input_features"] = self._retrieve_input_features(clips, audio.pop("max_source_positions"),
                                                                       **audio)
            return BatchFeature(data=data, tensor_type="pt")

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
    model_types = ("voxtral",)
    requires = ("torch", "transformers", "mistral_common")
    max_clip_seconds = None  # measured: clips are split into 30 s windows, none is cut
    tools_unsupported = None
    parse_tool_calls = staticmethod(tool_calls.mistral)

    def load_processor(self):
        return _processor_class().from_pretrained(self.path)

    def load_model(self):
        from transformers import VoxtralForConditionalGeneration

        return self.pretrained(VoxtralForConditionalGeneration)

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
        return self.rendered(self.messages(conversation))

    def rendered(self, messages: list[dict], tools: Optional[list[dict]] = None) -> str:
        """mistral-common `messages` rendered as text, control tokens spelled out."""
        tokenizer_logger = logging.getLogger("transformers.tokenization_mistral_common")
        level = tokenizer_logger.level
        tokenizer_logger.setLevel(logging.ERROR)  # it warns that tokenize=False is unsafe: see VoxtralChatProcessor
        try:
            return self.processor.tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        finally:
            tokenizer_logger.setLevel(level)

    def audio_placeholders(self, prompt: str) -> int:
        """mistral-common writes each clip as [BEGIN_AUDIO] and its [AUDIO] tokens, already expanded."""
        return prompt.count("[BEGIN_AUDIO]")

    def text_ids(self, text: str) -> list[int]:
        return self.processor.control_token_ids(text)

    def inputs(self, conversations: Sequence[ModelInput]):
        for conversation in conversations:
            check_clips(conversation, self.name, self.max_clip_seconds)
        if not any(c.audio_clips for c in conversations):
            texts = [self.prompt(c) for c in conversations]
            return self.processor(text=texts, return_tensors="pt", padding=True).to(self.device)
        return self.processor.chat_encoding([self.messages(c) for c in conversations]).to(self.device)

    def chat_prompt(self, messages: list[dict], tools: list[dict]) -> str:
        """The prompt as text (what `check_tools` reads); the model gets `chat_inputs`' ids."""
        return self.rendered(mistral_messages(messages, self.clips(chat_audio(messages)), self.sampling_rate), tools)

    def chat_inputs(self, messages: list[dict], tools: list[dict], audio: ModelInput):
        """mistral-common's tokenized encoding in both modalities: ids straight from the request,
        never read back from text, so a tool result may hold any text."""
        check_clips(audio, self.name, self.max_clip_seconds)
        conversation = mistral_messages(messages, self.clips(audio), self.sampling_rate)
        return self.processor.chat_encoding([conversation], tools).to(self.device)
