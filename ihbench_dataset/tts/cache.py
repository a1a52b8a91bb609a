"""Renders cached on disk by a hash of what determines them: engine version, voice, text."""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Optional

import numpy as np

from ..audio import encode_flac
from ..errors import UsageError
from ..io import cache_root, write_atomic

log = logging.getLogger("ihbench")


def _decodes(data: bytes) -> bool:
    """Whether `data` is whole audio with samples: its header read, and its last frame (a file cut
    off short of it fails the seek). A twentieth of decoding it all, which a cached build does for
    every clip."""
    import io

    import soundfile

    try:
        with soundfile.SoundFile(io.BytesIO(data)) as audio:
            if audio.frames <= 0:
                return False
            audio.seek(audio.frames - 1)
            return len(audio.read(1)) == 1
    except (RuntimeError, ValueError, TypeError, soundfile.LibsndfileError):
        return False


def default_cache_dir() -> Path:
    return cache_root() / "tts"


#: how the default render cache is named to a user who placed it badly
DEFAULT_WHAT = "IHBENCH_CACHE (its tts folder of rendered speech)"


class RenderCache:
    def __init__(self, directory: Optional[Path] = None):
        """The default folder (under IHBENCH_CACHE) is checked as a given one is: never inside a
        dataset or another of the toolkit's folders, where it would be uploaded or left as litter."""
        if directory is None:
            from ..outputs import check_cache_path

            directory = default_cache_dir()
            check_cache_path(directory, DEFAULT_WHAT, file=False)
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0

    def key(self, engine, text: str) -> str:
        payload = "\x1f".join([engine.voice_id, engine.version, text])
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def render(self, engine, text: str) -> bytes:
        """FLAC bytes of `text` in `engine`'s voice, synthesised only on a cache miss. A cached file
        that is not the FLAC we write (emptied, overwritten, cut off) is a miss: made again, and said
        once naming the file, never a decoder's traceback later in a build or a run."""
        path = self.directory / f"{self.key(engine, text)}.flac"
        if path.is_file():
            data = path.read_bytes()
            if _decodes(data):
                self.hits += 1
                return data
            log.warning("%s: a damaged render in the TTS cache (%d bytes that are no FLAC audio); made again",
                        path, len(data))
        self.misses += 1
        samples = engine.synthesize(text)
        if samples.size == 0 or not np.all(np.isfinite(samples)):
            raise UsageError(f"{engine.voice_id} produced unusable audio for {text[:60]!r}")
        data = encode_flac(samples)
        write_atomic(path, data)  # a crash never leaves a truncated render in the cache
        return data

    def samples(self, engine, text: str) -> np.ndarray:
        """Our own 16 kHz mono FLAC: libsndfile reads it directly, so a cached rebuild never has
        to import torch and torchcodec just to decode renders."""
        import io

        import soundfile

        samples, _ = soundfile.read(io.BytesIO(self.render(engine, text)), dtype="float32")
        return samples
