"""The TTS contract and its registry."""
from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from ..errors import UsageError


class TTSEngine(Protocol):
    """Renders text to 16 kHz mono float32 samples, identically on every call."""

    #: "engine:voice", e.g. "piper:joe"; part of the cache key and written to the card.
    voice_id: str
    #: engine + model version; a new version invalidates cached renders.
    version: str
    #: license of the voice, shown in the dataset card.
    license: str

    def synthesize(self, text: str) -> np.ndarray: ...


_FACTORIES: dict[str, Callable[[str], TTSEngine]] = {}
_INSTANCES: dict[str, TTSEngine] = {}


def register_engine(name: str):
    def wrap(factory: Callable[[str], TTSEngine]):
        _FACTORIES[name] = factory
        return factory

    return wrap


def available_engines() -> list[str]:
    _load_builtin_engines()
    return sorted(_FACTORIES)


def get_engine(voice_id: str) -> TTSEngine:
    """One shared instance per voice: loading a neural voice takes a second or two."""
    if voice_id in _INSTANCES:
        return _INSTANCES[voice_id]
    _load_builtin_engines()
    name, _, voice = voice_id.partition(":")
    if name not in _FACTORIES or not voice:
        raise UsageError(f"unknown TTS voice {voice_id!r}; use ENGINE:VOICE with ENGINE in {sorted(_FACTORIES)}")
    _INSTANCES[voice_id] = _FACTORIES[name](voice)
    return _INSTANCES[voice_id]


def _load_builtin_engines() -> None:
    from . import flite_engine, piper_engine  # noqa: F401  (they register themselves)
