"""Two-channel conversations from real TTS speech with known speech intervals (tests and benchmarks).

Each utterance is rendered with a voice the dataset build uses (the assistant's flite voice on
channel A, a user voice on B), trimmed of the engine's leading and trailing silence, and placed
at a chosen time. Its true speech intervals come from the clean render's energy (10 ms frames
within 35 dB of the utterance's peak; silences under 100 ms bridged), independent of silero-vad.
An utterance can be cut at a time (the assistant stopping after a barge-in), as a full-duplex
system would stop. `with_noise` lays a seeded noise floor under a channel (a phone line's hiss),
which leaves the true intervals as they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

RATE = 16_000
FRAME = RATE // 100
AI_VOICE = "flite:rms"  # ihbench.dataset.sources.ASSISTANT_VOICE
USER_VOICE = "flite:slt"


def render(text: str, voice: str, cache=None) -> np.ndarray:
    from ihbench.dataset.tts import RenderCache, get_engine

    return (cache or RenderCache()).samples(get_engine(voice), text).astype(np.float32)


def with_noise(samples: np.ndarray, dbfs: float, seed: int) -> np.ndarray:
    """`samples` plus white noise of RMS `dbfs` (re full scale 1.0)."""
    noise = np.random.default_rng(seed).normal(0.0, 10 ** (dbfs / 20), samples.size)
    return (samples + noise).astype(np.float32)


def _active_frames(samples: np.ndarray, floor_db: float = -35.0) -> np.ndarray:
    frames = samples[: samples.size // FRAME * FRAME].reshape(-1, FRAME)
    energy = 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)
    return energy > energy.max() + floor_db


def trim(samples: np.ndarray) -> np.ndarray:
    active = np.flatnonzero(_active_frames(samples))
    return samples[active[0] * FRAME:(active[-1] + 1) * FRAME]


def speech_spans(samples: np.ndarray, bridge_s: float = 0.1) -> list[tuple[float, float]]:
    """Speech intervals of a clean clip, in seconds from its start."""
    spans: list[list[float]] = []
    for index in np.flatnonzero(_active_frames(samples)):
        start, end = index * FRAME / RATE, (index + 1) * FRAME / RATE
        if spans and start - spans[-1][1] <= bridge_s:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    return [(s, e) for s, e in spans]


@dataclass
class SyntheticCall:
    duration: float
    a: np.ndarray = field(init=False)
    b: np.ndarray = field(init=False)
    truth: tuple[list, list] = field(default_factory=lambda: ([], []))

    def __post_init__(self):
        size = int(round(self.duration * RATE))
        self.a, self.b = np.zeros(size, np.float32), np.zeros(size, np.float32)

    def place(self, channel: str, clip: np.ndarray, start: float, *, cut: Optional[float] = None) -> float:
        """Put `clip` (trimmed) on channel A or B at `start` s, stopping at `cut` s if given; the end."""
        clip = trim(clip)
        if cut is not None:
            clip = clip[: max(0, int(round((cut - start) * RATE)))]
        first = int(round(start * RATE))
        target = self.a if channel == "A" else self.b
        if first + clip.size > target.size:
            raise ValueError(f"utterance at {start:.2f} s runs past the end ({self.duration:.2f} s)")
        target[first:first + clip.size] += clip
        truth = self.truth[0 if channel == "A" else 1]
        truth.extend((start + s, start + e) for s, e in speech_spans(clip))
        return start + clip.size / RATE

    def stereo(self) -> np.ndarray:
        return np.stack([self.a, self.b], axis=1)

    def write(self, path, *, swap: bool = False) -> None:
        import soundfile

        data = self.stereo()[:, ::-1] if swap else self.stereo()
        soundfile.write(str(path), data, RATE, subtype="PCM_16")


def write_short_call(path, seconds: float = 1.0):
    """A two-channel WAV with speech on the AI channel (a real flite render), silence on the user's:
    the least a recording needs for `ihbench turns` to have something to analyse."""
    import soundfile

    speech = render("Hello, how can I help?", AI_VOICE)
    frames = max(len(speech), round(seconds * 16_000))
    stereo = np.zeros((frames, 2), np.float32)
    stereo[:len(speech), 0] = speech
    soundfile.write(str(path), stereo, 16_000)
    return path
