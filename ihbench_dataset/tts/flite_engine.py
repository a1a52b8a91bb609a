"""Debian's flite (CMU, BSD-like license): a second, very different voice family for variety."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..audio import decode_audio
from ..errors import MissingDependencyError, UsageError

FLITE_VOICES = ("slt", "rms", "awb", "kal16")


class FliteEngine:
    license = "flite and CMU Arctic voices: BSD-style (CMU), free use with attribution"

    def __init__(self, voice: str):
        if voice not in FLITE_VOICES:
            raise UsageError(f"unknown flite voice {voice!r}; known: {FLITE_VOICES}")
        self._binary = shutil.which("flite")
        if self._binary is None:
            raise MissingDependencyError("flite is not installed: apt-get install flite (make test does it as root)")
        self.voice_id = f"flite:{voice}"
        self._voice = voice
        banner = subprocess.run([self._binary, "--version"], capture_output=True, text=True).stdout.strip()
        versions = [line.split("version:", 1)[1].split()[0] for line in banner.splitlines() if "version:" in line]
        self.version = versions[0] if versions else "flite"

    def synthesize(self, text: str) -> np.ndarray:
        with tempfile.TemporaryDirectory(prefix="ihbench-flite-") as tmp:
            text_file, wav_file = Path(tmp, "in.txt"), Path(tmp, "out.wav")
            text_file.write_text(text, encoding="utf-8")
            subprocess.run(
                [self._binary, "-voice", self._voice, "-f", str(text_file), "-o", str(wav_file)],
                check=True, capture_output=True,
            )
            return decode_audio(wav_file)

