"""The audio the model hears: 16 kHz, the last 8 s of the segment, zeros on the left when shorter.

Left padding matters: the model was trained to judge the end of the window, so a short segment sits
at the right edge, where its last words are, as pipecat places it.
"""
from __future__ import annotations

import numpy as np

SAMPLING_RATE = 16_000
WINDOW_SECONDS = 8
WINDOW_SAMPLES = WINDOW_SECONDS * SAMPLING_RATE  # 128,000


def to_16k(samples: np.ndarray, sampling_rate: int) -> np.ndarray:
    """Mono float32 at 16 kHz; other rates go through soxr at "HQ", pipecat's resampler."""
    samples = np.asarray(samples, dtype=np.float32)
    if int(sampling_rate) == SAMPLING_RATE:
        return samples
    try:
        import soxr
    except ImportError:
        from ihbench.dataset.errors import MissingDependencyError

        # the extra pins it (with the model's version); this module stays below model.py
        raise MissingDependencyError('resampling for smart-turn needs soxr: '
                                     'pip install "ihbench[smart-turn]"') from None
    return soxr.resample(samples, int(sampling_rate), SAMPLING_RATE, quality="HQ").astype(np.float32)


def fixed_window(samples: np.ndarray) -> np.ndarray:
    """Exactly 128,000 samples: the last 8 s of a longer clip, a shorter one zero-padded at the start."""
    samples = np.asarray(samples, dtype=np.float32).reshape(-1)
    if samples.size >= WINDOW_SAMPLES:
        return samples[samples.size - WINDOW_SAMPLES:]
    window = np.zeros(WINDOW_SAMPLES, dtype=np.float32)
    window[WINDOW_SAMPLES - samples.size:] = samples
    return window
