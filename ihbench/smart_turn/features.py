"""Whisper log-mel features as Smart Turn v3 was trained on them (Whisper's recipe at 8 s, 80 bins),
in numpy alone, for a batch of windows at once.

Written from the recipe, not from any implementation, and checked against
`transformers.WhisperFeatureExtractor(chunk_length=8, feature_size=80)` in the tests:
1. each 128,000-sample window is normalised to zero mean and unit variance (eps 1e-7), the zero
   padding included, in float32;
2. a centred STFT: reflect padding of n_fft/2, n_fft 400, hop 160, periodic Hann window, power;
3. 80 triangular mel filters on the Slaney scale over 0-8 kHz, each scaled to unit area (Slaney
   normalisation); floor 1e-10, log10;
4. the last frame dropped (801 -> 800);
5. per window, values below (max - 8) raised to it, then (x + 4) / 4.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

N_FFT = 400
HOP = 160
N_MELS = 80
RATE = 16_000
FLOOR = 1e-10
VARIANCE_EPS = 1e-7
DYNAMIC_RANGE = 8.0  # in log10 units: 80 dB


def _hz_to_slaney_mel(hz: np.ndarray) -> np.ndarray:
    """Linear below 1 kHz (3 mels per 200 Hz), logarithmic above (27 mels per factor 6.4)."""
    hz = np.asarray(hz, dtype=np.float64)
    return np.where(hz < 1000.0, hz * 3.0 / 200.0, 15.0 + 27.0 * np.log(np.maximum(hz, 1e-12) / 1000.0) / np.log(6.4))


def _slaney_mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, dtype=np.float64)
    return np.where(mel < 15.0, mel * 200.0 / 3.0, 1000.0 * np.exp((mel - 15.0) * np.log(6.4) / 27.0))


@lru_cache(maxsize=1)
def mel_filters() -> np.ndarray:
    """(201 FFT bins, 80 filters): triangles between neighbouring mel-spaced corners, unit area."""
    corners = _slaney_mel_to_hz(np.linspace(_hz_to_slaney_mel(0.0), _hz_to_slaney_mel(RATE / 2), N_MELS + 2))
    bins = np.linspace(0.0, RATE / 2, N_FFT // 2 + 1)[:, None]
    lower, centre, upper = corners[None, :-2], corners[None, 1:-1], corners[None, 2:]
    rising = (bins - lower) / (centre - lower)
    falling = (upper - bins) / (upper - centre)
    triangles = np.maximum(0.0, np.minimum(rising, falling))
    return triangles * (2.0 / (upper - lower))


@lru_cache(maxsize=1)
def hann_window() -> np.ndarray:
    """Periodic: the window of length N+1 without its last point (as torch.hann_window)."""
    n = np.arange(N_FFT, dtype=np.float64)
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * n / N_FFT)


def normalise(windows: np.ndarray) -> np.ndarray:
    windows = np.asarray(windows, dtype=np.float32)
    mean = windows.mean(axis=-1, keepdims=True)
    variance = windows.var(axis=-1, keepdims=True)
    return (windows - mean) / np.sqrt(variance + np.float32(VARIANCE_EPS))


def log_mel(windows: np.ndarray, *, normalize: bool = True) -> np.ndarray:
    """(batch, 128000) float audio -> (batch, 80, 800) float32 features (a 1-D window gives (80, 800))."""
    windows = np.asarray(windows)
    single = windows.ndim == 1
    batch = np.atleast_2d(windows)
    if normalize:
        batch = normalise(batch)
    features = np.stack([_one(row, _leading_zeros(raw)) for row, raw in zip(batch, np.atleast_2d(windows))])
    return features[0] if single else features


def _leading_zeros(samples: np.ndarray) -> int:
    nonzero = np.flatnonzero(samples)
    return int(nonzero[0]) if nonzero.size else samples.size


def _one(window: np.ndarray, constant: int) -> np.ndarray:
    """One window, row by row: a batch of them thrashes the cache and is slower per window here.

    The first `constant` samples were zeros (pipecat's left padding, or digital silence), so every
    frame lying wholly inside them (reflection included) holds the same values: its spectrum is
    computed once and repeated, which for a 2 s segment skips three quarters of the STFT. The
    values are the ones a full computation gives."""
    padded = np.pad(window.astype(np.float64), (N_FFT // 2, N_FFT // 2), mode="reflect")
    n_frames = (padded.size - N_FFT) // HOP  # 800: the last frame is dropped anyway
    same = min(n_frames, max(0, (constant - N_FFT // 2) // HOP + 1)) if constant >= N_FFT // 2 else 0
    first = max(same - 1, 0)  # one constant frame stands for all of them
    frames = np.lib.stride_tricks.as_strided(padded[first * HOP:], shape=(n_frames - first, N_FFT),
                                             strides=(HOP * padded.strides[0], padded.strides[0]), writeable=False)
    spectrum = np.fft.rfft(frames * hann_window(), axis=-1)
    power = spectrum.real ** 2 + spectrum.imag ** 2  # (frames, 201)
    mel = np.maximum(power @ mel_filters(), FLOOR)  # (frames, 80)
    if first:
        mel = np.concatenate([np.broadcast_to(mel[:1], (first, N_MELS)), mel])
    logs = np.log10(mel).T  # (80, 800)
    return ((np.maximum(logs, logs.max() - DYNAMIC_RANGE) + 4.0) / 4.0).astype(np.float32)
