"""Kimi-Audio through its own `kimia_infer` package (optional extra; GPU and flash-attn only).

Kimi-Audio is not in transformers. Its API takes a list of messages with `message_type`
"text" or "audio" and audio as file paths, so clips are written to temporary WAV files. Its
roles are user and assistant: the system prompt goes first as a user text message.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ihbench.dataset.audio import encode_wav
from ihbench.dataset.errors import MissingDependencyError

from .base import GenerationConfig, Loader, ModelInput, Response, resolve_model_path


def to_kimia_messages(conversation: ModelInput, audio_dir: Path) -> list[dict]:
    messages = []
    for index, turn in enumerate(conversation.turns):
        role = "user" if turn.role == "system" else turn.role
        if turn.audio is not None:
            path = Path(audio_dir) / f"turn_{index:03d}.wav"
            path.write_bytes(encode_wav(turn.audio, conversation.sampling_rate))
            messages.append({"role": role, "message_type": "audio", "content": str(path)})
        else:
            messages.append({"role": role, "message_type": "text", "content": turn.text})
    return messages


class KimiAudioLoader(Loader):
    name = "kimi-audio"
    runs_via = "own package (kimia_infer; GPU, flash-attn)"
    requires = ("kimia_infer",)

    modalities = ("audio",)  # the paper could not run Kimi-Audio text-only either
    tools_unsupported = ("kimia_infer's KimiAudio.generate takes text and audio messages only: no tools, no tool "
                         "calls; use a tool-capable model served with vLLM (--model openai)")

    def __init__(self, model_path: str, *, api=None, **options):
        super().__init__(model_path, **options)
        if api is None:
            try:
                from kimia_infer.api.kimia import KimiAudio
            except ImportError as error:
                raise MissingDependencyError("kimi-audio needs the kimia_infer package (GPU, flash-attn): "
                                   "see https://github.com/MoonshotAI/Kimi-Audio") from error
            api = KimiAudio(model_path=resolve_model_path(model_path), load_detokenizer=False)
        self.api = api

    def _generate(self, conversation: ModelInput, config: GenerationConfig, seed: int) -> Response:
        import random

        random.seed(seed)
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="ihbench-kimi-") as tmp:
            messages = to_kimia_messages(conversation, Path(tmp))
            _, text = self.api.generate(
                messages,
                output_type="text",
                text_temperature=config.temperature,
                text_top_k=1 if config.temperature == 0 else 5,
                max_new_tokens=config.max_new_tokens,
            )
        return Response(text=text, latency_s=time.perf_counter() - started)
