"""Kimi-Audio through its own `kimia_infer` package (optional extra; GPU and flash-attn only).

Kimi-Audio is not in transformers. Its API takes a list of messages with `message_type`
"text" or "audio" and audio as file paths, so clips are written to temporary WAV files. Its
roles are user and assistant: the system prompt goes first as a user text message.

It needs an environment of its own: its remote code (trust_remote_code) targets transformers 4.4x
and does not load under the transformers 5 this toolkit is built on; it needs flash-attn and a
CUDA GPU; and it loads a second checkpoint, the GLM-4 voice tokenizer (THUDM/glm-4-voice-tokenizer),
by its hub id, which must be in the cache beside the model for an offline run. What is missing is
said in one line before anything loads (`environment_problem`).
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Optional

from ihbench.dataset.audio import encode_wav
from ihbench.dataset.errors import MissingDependencyError

from .base import GenerationConfig, Loader, ModelInput, ModelNotFoundError, Response, resolve_model_path


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


#: the second checkpoint kimia_infer loads by hub id (its audio tokenizer)
AUDIO_TOKENIZER = "THUDM/glm-4-voice-tokenizer"
SETUP = ("Kimi-Audio needs an environment of its own: transformers 4.4x, flash-attn, a CUDA GPU and "
         "https://github.com/MoonshotAI/Kimi-Audio installed (README: Kimi-Audio)")


def environment_problem(installed, transformers_version: Optional[str], cuda: bool) -> Optional[str]:
    """What this environment lacks for Kimi-Audio (None: nothing we can see). `installed`: the
    importable modules among kimia_infer and flash_attn."""
    missing = [module for module in ("kimia_infer", "flash_attn") if module not in installed]
    if missing:
        return f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed here"
    if transformers_version and int(transformers_version.split(".")[0]) >= 5:
        return (f"transformers {transformers_version} is installed here, and Kimi-Audio's remote code targets "
                "transformers 4.4x")
    if not cuda:
        return "there is no CUDA GPU here (kimia_infer runs on the GPU only)"
    return None


def _environment() -> tuple[set, Optional[str], bool]:
    import importlib.util
    from importlib.metadata import PackageNotFoundError, version

    installed = {module for module in ("kimia_infer", "flash_attn") if importlib.util.find_spec(module) is not None}
    try:
        transformers_version = version("transformers")
    except PackageNotFoundError:
        transformers_version = None
    cuda = False
    if installed >= {"kimia_infer", "flash_attn"}:
        import torch

        cuda = torch.cuda.is_available()
    return installed, transformers_version, cuda


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
            problem = environment_problem(*_environment())
            if problem:
                raise MissingDependencyError(f"--model kimi-audio: {problem}; {SETUP}")
            from kimia_infer.api.kimia import KimiAudio

            path = resolve_model_path(model_path)
            try:
                api = KimiAudio(model_path=path, load_detokenizer=False)
            except OSError as error:  # a checkpoint it fetches by hub id, missing from the cache offline
                raise ModelNotFoundError(
                    f"{model_path}: Kimi-Audio could not load what it needs ({type(error).__name__}: "
                    f"{str(error).splitlines()[0][:200]}); it also loads {AUDIO_TOKENIZER}: for an offline run "
                    f"cache both first (hf download {model_path}, then hf download {AUDIO_TOKENIZER})") from None
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
