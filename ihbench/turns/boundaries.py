"""Where speech starts and stops inside each voice-activity segment, measured on the audio.

silero-vad ends a segment when its speech probability has stayed low for a while, and its
recurrent state lets the probability fall slowly after the last word: on the toolkit's flite
renders a segment ends 50-90 ms after the speech in digital silence and 0.1-0.2 s after it under
a -50 dBFS noise floor; soft onsets ("Hmm") start a window or more late (up to 0.3 s). A stop
latency or a response latency is the difference of two such boundaries, so the detector's
hangover went straight into them: an AI that stopped on time looked late, and more so in noise.

So the detector decides where speech is, and the audio says exactly where it starts and ends.
A 10 ms frame carries speech when it is within 35 dB of the segment's loudest frame (the rule the
`duplex` ground truth measures its clean renders with, `ihbench.dataset.duplex.SPEECH_DB`) and at
least 3 dB above the channel's noise floor (the median frame outside every segment): twice the
noise power, i.e. the speech adds at least as much power as the noise. A segment then ends at its
last such frame (never later than the detector's end) and starts at its first, reaching back over
such frames before it (at most `MAX_ONSET_SHIFT_S`, across silences of up to 200 ms, the IPU
rule's: "Oh, ... and that balance" is one IPU even when the detector only hears the second part).
In digital silence the noise term vanishes and only the 35 dB rule applies; under light noise the
noise term keeps the floor out. A segment with no such frame (noise the detector took for speech)
stays as the detector gave it.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ihbench.dataset.duplex import SPEECH_DB
from ihbench.dataset.floor import Interval
from ihbench.dataset.ipus import MIN_SILENCE_S
from ihbench.dataset.schema import SAMPLING_RATE

FRAME_S = 0.01
NOISE_MARGIN_DB = 3.0  # 10 log10(2): speech at least as strong as the noise under it
MAX_ONSET_SHIFT_S = 0.5  # how far before the detector's onset a soft start is looked for
DESCRIPTION = (f"segment boundaries moved to the first and last 10 ms frame within {-SPEECH_DB:g} dB of the segment's "
               f"loudest and {NOISE_MARGIN_DB:g} dB above the channel's noise floor (onsets up to "
               f"{MAX_ONSET_SHIFT_S:g} s earlier, across silences of up to {MIN_SILENCE_S:g} s; ends never later)")


def frame_levels(samples: np.ndarray) -> np.ndarray:
    """Power of each whole 10 ms frame in dB re full scale (digital silence is -120 dB)."""
    size = int(round(FRAME_S * SAMPLING_RATE))
    count = samples.size // size
    frames = np.asarray(samples[: count * size], dtype=np.float64).reshape(count, size)
    return 10 * np.log10(np.mean(frames ** 2, axis=1) + 1e-12)


def noise_floor(levels: np.ndarray, segments: Sequence[Interval]) -> float:
    """The median frame outside every segment; the 10th percentile of all when none is outside."""
    outside = np.ones(levels.size, dtype=bool)
    for start, end in segments:
        outside[int(start / FRAME_S): int(np.ceil(end / FRAME_S))] = False
    if outside.any():
        return float(np.median(levels[outside]))
    return float(np.percentile(levels, 10)) if levels.size else -120.0


def speech_boundaries(samples: np.ndarray, segments: Sequence[Interval]) -> list[Interval]:
    """`segments` (seconds) with each start and end moved to the frames that carry speech."""
    levels = frame_levels(samples)
    floor = noise_floor(levels, segments)
    reach, bridge = int(round(MAX_ONSET_SHIFT_S / FRAME_S)), int(round(MIN_SILENCE_S / FRAME_S))
    result = []
    for start, end in segments:
        first, last = int(start / FRAME_S), min(int(np.ceil(end / FRAME_S)), levels.size)
        inside = levels[first:last]
        if inside.size == 0:
            result.append((start, end))
            continue
        threshold = max(float(inside.max()) + SPEECH_DB, floor + NOISE_MARGIN_DB)
        loud = np.flatnonzero(inside > threshold)
        if loud.size == 0:
            result.append((start, end))
            continue
        onset = first + int(loud[0])
        if loud[0] == 0:  # speech from the segment's first frame: it may have begun before it
            quiet = 0
            for frame in range(first - 1, max(0, first - reach) - 1, -1):
                if levels[frame] > threshold:
                    onset, quiet = frame, 0
                elif (quiet := quiet + 1) > bridge:
                    break
        result.append((round(onset * FRAME_S, 6), round(min(end, (first + int(loud[-1]) + 1) * FRAME_S), 6)))
    return result
