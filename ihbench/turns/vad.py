"""Speech intervals per channel with silero-vad, fast enough to run over hours of two-channel audio.

Silero VAD scores 32 ms windows one after another with a recurrent state, so a call per window
costs ~3 ms on a small CPU: a real-time factor near 0.1 per channel. Here each channel is cut
into segments of a few seconds (`segment_windows`), each preceded by `warmup_s` seconds of the
audio before it (scored but thrown away, so the recurrent state has settled when the segment
starts), and all segments of both channels run as one batch: one model call advances every
segment by a window. Measured against one pass over the whole channel, fewer than 0.5 % of the
windows change side of the threshold, and both channels together run at a real-time factor
below 0.01 on two cores.
The probabilities then go through silero's own `get_speech_timestamps_from_probs`, the same
post-processing `get_speech_timestamps` applies. Segments of digital silence are not scored.
"""
from __future__ import annotations

import math
import warnings
from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.errors import MissingDependencyError
from ihbench.dataset.floor import Interval
from ihbench.dataset.schema import SAMPLING_RATE

WINDOW = 512  # silero's window at 16 kHz (32 ms)
SILENT = 1e-4  # a segment whose peak stays below this (-80 dBFS) is silence, not scored
CALL_COST, ROW_COST = 5.0, 0.18  # ms per batched model call and per row of it (TorchScript, 1 thread)
MIN_SEGMENT, MAX_SEGMENT = 16, 512  # windows: 0.5 s to 16 s


class ChannelVad:
    """silero-vad with the options `ihbench turns` uses; `speech(channels)` gives each channel's
    speech intervals in seconds.

    `speech_pad_ms` widens every segment on both sides: silero's onsets come a window or two late
    and its offsets early, and an IPU boundary a chunk late moves a T or an I by 40 ms.
    `min_silence_ms` is below the 200 ms IPU rule on purpose: `ipus.merge_ipus` applies that rule.
    """

    def __init__(self, *, threshold: float = 0.5, min_speech_ms: int = 90, min_silence_ms: int = 100,
                 speech_pad_ms: int = 0, segment_s: Optional[float] = None, warmup_s: float = 0.64,
                 max_batch: int = 128):
        from ihbench.silero import load_silero

        self.model = load_silero()
        self.options = {"threshold": threshold, "min_speech_duration_ms": min_speech_ms,
                        "min_silence_duration_ms": min_silence_ms, "speech_pad_ms": speech_pad_ms}
        self.segment = None if segment_s is None else max(1, round(segment_s * SAMPLING_RATE / WINDOW))  # windows
        self.warmup = max(0, round(warmup_s * SAMPLING_RATE / WINDOW))
        self.max_batch = max(1, int(max_batch))

    def describe(self) -> dict:
        from importlib.metadata import version

        segment = "adaptive" if self.segment is None else self.segment * WINDOW / SAMPLING_RATE
        return {"vad": "silero-vad", "silero_vad": version("silero-vad"), **self.options,
                "segment_s": segment, "warmup_s": self.warmup * WINDOW / SAMPLING_RATE}

    def segment_windows(self, total_windows: int) -> int:
        """Segment length (in windows) for `total_windows` windows over all channels.

        A batched call costs about CALL + ROW * batch; with segments of s windows and w of warm-up
        the total is (s + w) * (CALL + ROW * total / s), least at s = sqrt(ROW * total * w / CALL):
        short segments for a short recording (the call overhead is shared by more rows), longer
        ones for long recordings (less warm-up scored twice)."""
        if self.segment is not None:
            return self.segment
        best = math.sqrt(ROW_COST / CALL_COST * total_windows * max(self.warmup, 1))
        return int(min(max(best, MIN_SEGMENT), MAX_SEGMENT))

    def probabilities(self, channels: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Speech probability per 32 ms window for each 16 kHz channel."""
        import torch

        windows = [self._windows(x) for x in channels]
        # (channel, first window of the segment) for every segment worth scoring
        segment = self.segment_windows(sum(len(w) for w in windows))
        jobs = [(c, start) for c, w in enumerate(windows) for start in range(0, len(w), segment)
                if np.max(np.abs(w[start:start + segment]), initial=0.0) >= SILENT]
        probs = [np.zeros(len(w), dtype=np.float32) for w in windows]
        span = self.warmup + min(segment, max((len(w) for w in windows), default=0))
        for first in range(0, len(jobs), self.max_batch):
            batch = jobs[first:first + self.max_batch]
            stack = np.zeros((len(batch), span, WINDOW), dtype=np.float32)
            for row, (c, start) in enumerate(batch):
                lo = max(0, start - self.warmup)
                piece = windows[c][lo:start + segment]
                stack[row, self.warmup - (start - lo):self.warmup - (start - lo) + len(piece)] = piece
            scores = np.empty((len(batch), span), dtype=np.float32)
            self.model.reset_states()
            with torch.no_grad():
                tensor = torch.from_numpy(stack)
                for k in range(span):
                    scores[:, k] = self.model(tensor[:, k], SAMPLING_RATE).numpy()[:, 0]
            for row, (c, start) in enumerate(batch):
                stop = min(start + segment, len(probs[c]))
                probs[c][start:stop] = scores[row, self.warmup:self.warmup + stop - start]
        return probs

    @staticmethod
    def _windows(samples: np.ndarray) -> np.ndarray:
        samples = np.asarray(samples, dtype=np.float32)
        count = -(-samples.size // WINDOW)
        return np.pad(samples, (0, count * WINDOW - samples.size)).reshape(count, WINDOW)

    def speech(self, channels: Sequence[np.ndarray]) -> list[list[Interval]]:
        try:
            from silero_vad.utils_vad import get_speech_timestamps_from_probs
        except ImportError:
            raise MissingDependencyError("ihbench turns needs silero-vad's get_speech_timestamps_from_probs "
                                         "(silero-vad 6.2 has it): pip install -U 'silero-vad>=6.2,<7'") from None
        result = []
        for samples, probs in zip(channels, self.probabilities(channels)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                stamps = get_speech_timestamps_from_probs(list(map(float, probs)), sampling_rate=SAMPLING_RATE,
                                                          audio_length_samples=int(samples.size), **self.options)
            result.append([(s["start"] / SAMPLING_RATE, s["end"] / SAMPLING_RATE) for s in stamps])
        return result
