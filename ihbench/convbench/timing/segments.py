"""Speech segments per channel with silero-vad at the reference's settings, and the relations
between them the analysis reports (overlaps, unprompted bot speech).

The settings are the reference's for this metric, not `ihbench turns`' own: threshold 0.7,
min_silence 2,000 ms, min_speech 700 ms, speech_pad 0, at 16 kHz. The long minimum silence makes
one segment of a whole reply (pauses between sentences and around a tool call included), and the
700 ms minimum keeps the 15 ms tag, a cough or a click from becoming a turn; `ihbench turns`
wants the opposite (every inter-pausal unit), so it keeps its own. The model and the batching are
`ihbench.turns.vad.ChannelVad`, whose batched pass differs from silero's single pass on under
0.5 % of windows; the reference resamples with `scipy.signal.resample` (FFT), here it is the
project's polyphase `ihbench.dataset.audio.resample` — the same speech to within a sample or two.
Positions are 16 kHz sample indices divided by 16, in ms, as the reference gives them.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

VAD_RATE = 16_000
THRESHOLD, MIN_SILENCE_MS, MIN_SPEECH_MS, SPEECH_PAD_MS = 0.7, 2000, 700, 0
OVERLAP_MIN_MS = 100  # shorter overlaps are VAD boundary noise
UNPROMPTED_GAP_MS = 5000  # a bot segment starting this long after the last user end was not prompted


def reference_vad():
    """A `ChannelVad` with the reference's settings (loads silero once; reuse it across runs)."""
    from ihbench.turns.vad import ChannelVad

    return ChannelVad(threshold=THRESHOLD, min_speech_ms=MIN_SPEECH_MS, min_silence_ms=MIN_SILENCE_MS,
                      speech_pad_ms=SPEECH_PAD_MS)


def vad_parameters() -> dict:
    return {"vad": "silero-vad", "sampling_rate": VAD_RATE, "threshold": THRESHOLD,
            "min_silence_duration_ms": MIN_SILENCE_MS, "min_speech_duration_ms": MIN_SPEECH_MS,
            "speech_pad_ms": SPEECH_PAD_MS}


def speech_segments(channels: Sequence[np.ndarray], rate: int, vad=None) -> list[list[dict]]:
    """[{start_ms, end_ms}] per channel, the channels given at `rate`."""
    from ihbench.dataset.audio import resample

    vad = vad or reference_vad()
    resampled = [resample(np.asarray(x, dtype=np.float32), int(rate), VAD_RATE) for x in channels]
    return [[{"start_ms": round(start * VAD_RATE) / 16.0, "end_ms": round(end * VAD_RATE) / 16.0}
             for start, end in intervals] for intervals in vad.speech(resampled)]


def find_overlaps(user: Sequence[dict], bot: Sequence[dict]) -> list[dict]:
    """Every (bot, user) segment pair talking at once for at least 100 ms."""
    found = []
    for b in bot:
        for u in user:
            if u["start_ms"] < b["end_ms"] and u["end_ms"] > b["start_ms"]:
                start, end = max(u["start_ms"], b["start_ms"]), min(u["end_ms"], b["end_ms"])
                if end - start >= OVERLAP_MIN_MS:
                    found.append({"user_start_ms": u["start_ms"], "user_end_ms": u["end_ms"],
                                  "bot_start_ms": b["start_ms"], "bot_end_ms": b["end_ms"],
                                  "overlap_start_ms": start, "overlap_end_ms": end, "overlap_ms": end - start})
    return found


def unprompted_segments(user: Sequence[dict], bot: Sequence[dict], greeting: Optional[dict]) -> list[dict]:
    """Bot segments with no user segment ending within 5 s before them (the greeting excepted)."""
    found = []
    for b in bot:
        if greeting is not None and b["start_ms"] == greeting["start_ms"]:
            continue
        ends = [u["end_ms"] for u in user if u["end_ms"] <= b["start_ms"]]
        gap = b["start_ms"] - max(ends) if ends else None
        if gap is None or gap > UNPROMPTED_GAP_MS:
            found.append({**span(b), "gap_from_last_user_ms": gap})
    return found


def span(segment: dict) -> dict:
    return {"start_ms": segment["start_ms"], "end_ms": segment["end_ms"],
            "duration_ms": segment["end_ms"] - segment["start_ms"]}
