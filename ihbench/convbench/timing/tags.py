"""The 2 kHz audio tags: the tone a recorder mixes into the bot channel, the detector that finds it
in `conversation.wav`, and the log↔WAV matching that checks the recorder's clock.

The detector is the reference's (`detect_tags_in_wav`), vectorised: 20 ms Hann-windowed FFT
frames every 5 ms, a frame matching when the peak within ±100 Hz of 2 kHz is more than 20× the
mean magnitude of the positive-frequency bins (DC excluded) and the frame's RMS is ≥ −40 dBFS;
a match within 50 ms of the last accepted tag is merged into it; the position is the frame's
start in whole ms. Because the position is the start of the first frame the tone dominates, a
tag in silence is reported before its first sample: by 11-16 ms at 24 kHz (14 on average, the
"~13 ms" the reference's comments expect between a log tag and its WAV tag), 9-14 ms at 16 kHz,
the spread being where the tag falls within a 5 ms hop. So `tag_alignment_ms` of a perfect
recorder is about +14 ms at 24 kHz, not 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

FREQ_HZ = 2000
DURATION_MS = 15
LEVEL_DBFS = -12.0
FADE_MS = 2
WINDOW_MS, HOP_MS = 20, 5
BAND_HZ = 100
RATIO = 20.0
MIN_LEVEL_DBFS = -40.0
MERGE_MS = 50
MATCH_MS = 150  # log↔WAV matching window
ALIGNMENT_TOLERANCE_MS = 20  # the global alignment check
_CHUNK = 4096  # frames per FFT batch: bounded memory over an hour of audio


def tag_tone(rate: int) -> np.ndarray:
    """The tag a recorder mixes into the first bot frame of a turn: 2 kHz, 15 ms, −12 dBFS peak,
    2 ms linear fades (float32 in [-1, 1])."""
    n = int(round(rate * DURATION_MS / 1000))
    t = np.arange(n) / rate
    tone = 10 ** (LEVEL_DBFS / 20) * np.sin(2 * np.pi * FREQ_HZ * t)
    fade = max(1, int(round(rate * FADE_MS / 1000)))
    ramp = np.linspace(0.0, 1.0, fade, endpoint=False)
    tone[:fade] *= ramp
    tone[n - fade:] *= ramp[::-1]
    return tone.astype(np.float32)


def detect_tags(track: np.ndarray, rate: int) -> list[int]:
    """Tag positions (ms, window start) in one channel at its own rate."""
    track = np.asarray(track, dtype=np.float32)
    size, hop = int(rate * WINDOW_MS / 1000), int(rate * HOP_MS / 1000)
    if size < 2 or hop < 1 or track.size <= size:
        return []
    starts = np.arange(0, track.size - size, hop)
    # the level test first (cheap, from a running sum of squares): most of a bot channel is silence
    energy = np.concatenate([[0.0], np.cumsum(track.astype(np.float64) ** 2)])
    rms = np.sqrt(np.maximum(energy[starts + size] - energy[starts], 0.0) / size)
    loud = starts[20 * np.log10(rms + 1e-10) >= MIN_LEVEL_DBFS]
    resolution = rate / size
    target, spread = int(FREQ_HZ / resolution), max(1, int(BAND_HZ / resolution))
    band = slice(max(0, target - spread), target + spread + 1)
    hann = np.hanning(size)
    hits = []
    for first in range(0, loud.size, _CHUNK):
        block = loud[first:first + _CHUNK]
        frames = track[block[:, None] + np.arange(size)] * hann
        spectrum = np.abs(np.fft.rfft(frames, axis=1))  # bins 0..size//2, the same as the full FFT's first half
        mean = spectrum[:, 1:size // 2].mean(axis=1)
        peak = spectrum[:, band].max(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(mean > 0, peak / mean, 0.0)
        hits.extend(block[ratio > RATIO].tolist())
    tags: list[int] = []
    for start in hits:
        position = int(start * 1000 / rate)
        if not tags or position - tags[-1] > MERGE_MS:
            tags.append(position)
    return tags


def match_tags(log_ms: Sequence[float], wav_ms: Sequence[float], max_distance_ms: float = MATCH_MS
               ) -> tuple[list[tuple[int, int, float]], list[int]]:
    """Greedy, in log order: each log tag takes the closest unused WAV tag within the window.
    (log index, WAV index, log − WAV) per match, and the WAV indices left over."""
    matches, used = [], set()
    for i, log in enumerate(log_ms):
        best, best_diff = None, float("inf")
        for j, wav in enumerate(wav_ms):
            diff = log - wav
            if j not in used and abs(diff) < abs(best_diff) and abs(diff) <= max_distance_ms:
                best, best_diff = j, diff
        if best is not None:
            matches.append((i, best, best_diff))
            used.add(best)
    return matches, [j for j in range(len(wav_ms)) if j not in used]


@dataclass
class Alignment:
    """The reference's alignment block; the user-tag half stays for its shape (user tags are legacy)."""

    bot_tags_log: int = 0
    bot_tags_wav: int = 0
    user_tags_log: int = 0
    user_tags_wav: int = 0
    matched_bot_tags: int = 0
    matched_user_tags: int = 0
    bot_alignment_min_ms: Optional[float] = None
    bot_alignment_max_ms: Optional[float] = None
    bot_alignment_mean_ms: Optional[float] = None
    user_alignment_min_ms: Optional[float] = None
    user_alignment_max_ms: Optional[float] = None
    user_alignment_mean_ms: Optional[float] = None
    alignment_ok: bool = True
    issues: list = field(default_factory=list)


def check_alignment(bot_log: Sequence[float], bot_wav: Sequence[float], user_log: Sequence[float] = (),
                    user_wav: Sequence[float] = ()) -> tuple[Alignment, dict[int, int]]:
    """The alignment block and {bot log index: bot WAV index}. Drift beyond ±20 ms or a log tag
    missing from the WAV makes `alignment_ok` false; extra WAV tags are reported but tolerated."""
    stats = Alignment(len(bot_log), len(bot_wav), len(user_log), len(user_wav))
    bot_map = {}
    for who, log, wav in (("bot", bot_log, bot_wav), ("user", user_log, user_wav)):
        matches, unmatched = match_tags(log, wav)
        if who == "bot":
            bot_map = {i: j for i, j, _ in matches}
        diffs = [d for _, _, d in matches]
        label = who.capitalize()
        if diffs:
            low, high = min(diffs), max(diffs)
            setattr(stats, f"matched_{who}_tags", len(diffs))
            setattr(stats, f"{who}_alignment_min_ms", low)
            setattr(stats, f"{who}_alignment_max_ms", high)
            setattr(stats, f"{who}_alignment_mean_ms", sum(diffs) / len(diffs))
            if high > ALIGNMENT_TOLERANCE_MS or low < -ALIGNMENT_TOLERANCE_MS:
                stats.alignment_ok = False
                stats.issues.append(f"{label} tag alignment outside ±{ALIGNMENT_TOLERANCE_MS}ms: "
                                    f"{low:.0f} to {high:.0f}ms")
        if unmatched:
            shown = [wav[j] for j in unmatched[:5]]
            stats.issues.append(f"WAV detected {len(unmatched)} unmatched {who} tags at positions: "
                                f"{shown}{'...' if len(unmatched) > 5 else ''}")
        if len(matches) < len(log):
            stats.alignment_ok = False
            stats.issues.append(f"Missing {who} tags: {len(log) - len(matches)} log tags not found in WAV")
    return stats, bot_map
