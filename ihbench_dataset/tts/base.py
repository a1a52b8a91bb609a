"""The TTS contract and its registry."""
from __future__ import annotations

from typing import Protocol

import numpy as np

from ..errors import UsageError
from ..registry import Registry


class TTSEngine(Protocol):
    """Renders text to 16 kHz mono float32 samples, identically on every call."""

    #: "engine:voice", e.g. "piper:joe"; part of the cache key and written to the card.
    voice_id: str
    #: engine + model version; a new version invalidates cached renders.
    version: str
    #: license of the voice, shown in the dataset card.
    license: str

    def synthesize(self, text: str) -> np.ndarray: ...


#: engine name -> its class, built with the voice name (`piper:joe` -> PiperEngine("joe"))
ENGINES = Registry("TTS engine", {
    "flite": "ihbench.dataset.tts.flite_engine:FliteEngine",
    "piper": "ihbench.dataset.tts.piper_engine:PiperEngine",
})
_INSTANCES: dict[str, TTSEngine] = {}


def available_engines() -> list[str]:
    return ENGINES.names()


def get_engine(voice_id: str) -> TTSEngine:
    """One shared instance per voice: loading a neural voice takes a second or two."""
    if voice_id in _INSTANCES:
        return _INSTANCES[voice_id]
    name, _, voice = voice_id.partition(":")
    if name not in ENGINES or not voice:
        raise UsageError(f"unknown TTS voice {voice_id!r}; use ENGINE:VOICE with ENGINE in {ENGINES.names()}")
    _INSTANCES[voice_id] = ENGINES.get(name)(voice)
    return _INSTANCES[voice_id]
