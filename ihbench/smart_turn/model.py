"""Smart Turn v3.2, the end-of-turn model shipped inside the `pipecat-ai` wheel, run with onnxruntime.

The file is found through the installed distribution's record (`importlib.metadata`), so neither
pipecat's pipeline machinery nor even its package `__init__` is imported, and nothing is ever
downloaded. The version it was verified with is pinned in the `smart-turn` extra; another version
that moved or dropped the file is refused with the version to install, and the file's SHA-256 and
the package version go into every description, so a figure can always be traced to its weights.
"""
from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.errors import MissingDependencyError, MissingFileError, UsageError

from .features import log_mel
from .window import SAMPLING_RATE, fixed_window

DISTRIBUTION = "pipecat-ai"
VERIFIED_VERSION = "1.14.0"
MODEL_FILE = "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
VERIFIED_SHA256 = "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"
INSTALL = f'pip install "ihbench[smart-turn]" (pipecat-ai=={VERIFIED_VERSION})'
#: pipecat's LocalSmartTurnAnalyzerV3: "complete" when the probability is strictly above this
THRESHOLD = 0.5


@dataclass(frozen=True)
class ModelFile:
    path: Path
    sha256: str
    pipecat_ai: str

    def describe(self) -> dict:
        return {"model_file": MODEL_FILE, "sha256": self.sha256, "pipecat_ai": self.pipecat_ai,
                "verified": self.sha256 == VERIFIED_SHA256}


def model_file() -> ModelFile:
    """The installed model file, its hash and the pipecat-ai version it came with."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise MissingDependencyError(f"the smart-turn model ships in the pipecat-ai package, which is not "
                                     f"installed: {INSTALL}") from None
    version = dist.version
    entry = next((f for f in dist.files or () if str(f.as_posix()) == MODEL_FILE), None)
    path = Path(dist.locate_file(entry if entry is not None else MODEL_FILE))
    if not path.is_file():
        raise MissingFileError(f"pipecat-ai {version} has no {MODEL_FILE} (moved or dropped in this version); "
                               f"install the version the smart-turn detector was verified with: {INSTALL}")
    return ModelFile(path, _sha256(str(path), path.stat().st_size, path.stat().st_mtime_ns), version)


@lru_cache(maxsize=4)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class SmartTurn:
    """The model behind one onnxruntime session with pipecat's session options (sequential, one
    inter-op thread, `threads` intra-op threads); `probabilities` scores many windows.

    `batch_size` windows go to the model per call. One is the default because it is the fastest
    here: on one thread this int8 model takes about 217 ms a window alone, 281 in fours and 300 in
    sixteens (its activations outgrow the cache), so batching, which one would expect to help, is
    left as an option for machines where it does."""

    def __init__(self, *, threads: int = 1, batch_size: int = 1):
        try:
            import onnxruntime as ort
        except ImportError:
            raise MissingDependencyError(f"the smart-turn model runs with onnxruntime, which is not installed: "
                                         f"{INSTALL}") from None
        if int(threads) < 1:
            raise UsageError(f"threads: must be >= 1, got {threads}")
        if int(batch_size) < 1:
            raise UsageError(f"batch_size: must be >= 1, got {batch_size}")
        self.file = model_file()
        if self.file.sha256 != VERIFIED_SHA256:
            warnings.warn(f"{self.file.path} (pipecat-ai {self.file.pipecat_ai}) is not the model file verified "
                          f"with pipecat-ai {VERIFIED_VERSION}: its probabilities may differ", stacklevel=2)
        self.threads, self.batch_size = int(threads), int(batch_size)
        options = ort.SessionOptions()
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = self.threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(self.file.path), sess_options=options,
                                            providers=["CPUExecutionProvider"])
        self.calls = 0  # windows scored

    def probabilities(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        """P(turn complete) for each 16 kHz mono clip: its last 8 s, left-padded with zeros as
        pipecat pads a short segment."""
        if isinstance(clips, np.ndarray) and clips.ndim == 1:  # one clip's samples: 16 000 one-sample "clips"
            raise UsageError("clips: one array of samples was given; give a list of clips (or call probability(clip) "
                             "for one)")
        if not len(clips):
            return np.zeros(0, dtype=np.float32)
        clips = [_checked_clip(clip, f"clips[{index}]") for index, clip in enumerate(clips)]
        out = np.empty(len(clips), dtype=np.float32)
        for first in range(0, len(clips), self.batch_size):
            rows = np.stack([fixed_window(clip) for clip in clips[first:first + self.batch_size]])
            out[first:first + len(rows)] = self.score_features(log_mel(rows))
        return out

    def probability(self, clip: np.ndarray) -> float:
        return float(self.probabilities([_checked_clip(clip, "clip")])[0])

    def score_features(self, features: np.ndarray) -> np.ndarray:
        """The model on (batch, 80, 800) log-mel features; its output, named `logits`, already went
        through a sigmoid."""
        self.calls += len(features)
        (output,) = self.session.run(["logits"], {"input_features": np.ascontiguousarray(features, np.float32)})
        return np.asarray(output, dtype=np.float32).reshape(-1)

    def describe(self) -> dict:
        return {**self.file.describe(), "threads": self.threads, "sampling_rate": SAMPLING_RATE}


def _checked_clip(clip, where: str) -> np.ndarray:
    """A clip the model can score: mono float samples in [-1, 1], not empty, finite. Anything else
    gave a number all the same (an empty or NaN clip scored 0.99, "turn finished")."""
    array = np.asarray(clip)
    if array.ndim != 1:
        raise UsageError(f"{where}: expected mono samples (one dimension), got an array of shape {array.shape} "
                         "(a stereo clip: give one channel)")
    if not np.issubdtype(array.dtype, np.floating):
        raise UsageError(f"{where}: expected float samples in [-1, 1], got {array.dtype} (16-bit PCM: divide by "
                         "32768)")
    if array.size == 0:
        raise UsageError(f"{where}: an empty clip")
    if not np.all(np.isfinite(array)):
        raise UsageError(f"{where}: samples are not finite numbers (NaN or infinite)")
    return array
