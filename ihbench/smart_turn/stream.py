"""End-of-turn decisions on a stream, the way a voice agent runs Smart Turn (pipecat's defaults).

A silero VAD tracks speech in 32 ms windows (speaking at probability >= 0.7; a start needs 0.2 s of
speech, a pause 0.2 s of silence). At each pause the model hears the segment from 0.7 s before the
speech start (pipecat's 0.5 s pre-speech plus the VAD's start delay) to the pause, and ends the
turn when P(complete) is strictly above the threshold; otherwise the turn waits, and ends anyway
after 3 s of silence (pipecat's `stop_secs`) unless speech starts again. The decision time is the
moment the pause is declared (or the fallback runs out): what an agent would act on.

Every decision is causal: a pause's probability uses only the audio before it. The model's
probability at a pause does not depend on the threshold, so a trace (pauses with their
probabilities) is computed once and any threshold is a replay of it (`decide`); the VAD-only rule
(end the turn after T s of silence) is a replay of the VAD probabilities (`silence_decision`).
After the clip the stream goes on in digital silence, as a call would after the user stops, so a
decision can come after the clip's end: that is the real cost of waiting for silence.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

import numpy as np

from .model import THRESHOLD, SmartTurn
from .window import SAMPLING_RATE

VAD_WINDOW = 512  # silero's window at 16 kHz
FRAME_S = VAD_WINDOW / SAMPLING_RATE  # 32 ms


@dataclass(frozen=True)
class StreamSettings:
    """pipecat-ai 1.14.0's defaults: VADParams (confidence, start_secs, stop_secs) and
    SmartTurnParams (pre_speech_ms, stop_secs)."""

    threshold: float = THRESHOLD
    vad_confidence: float = 0.7
    vad_start_s: float = 0.2
    vad_stop_s: float = 0.2
    pre_speech_s: float = 0.5
    stop_s: float = 3.0

    def frames(self, seconds: float) -> int:
        """pipecat counts VAD windows: round(seconds / window)."""
        return max(1, round(seconds / FRAME_S))

    def tail_s(self, timeouts: Sequence[float] = ()) -> float:
        """Silence to stream after a clip so that every rule can still decide."""
        return max([self.vad_stop_s + self.stop_s, *timeouts]) + 2 * FRAME_S


@dataclass(frozen=True)
class Pause:
    time: float  # s from the clip's start: when the VAD declared it
    segment_start: float  # s: where the audio the model hears starts
    fallback: Optional[float]  # s: when silence alone ends the turn; None when speech resumes first
    probability: Optional[float] = None


@dataclass(frozen=True)
class Trace:
    """One clip as the stream saw it: VAD probabilities per 32 ms window (the clip plus its silent
    tail) and the pauses up to the first one the fallback closes (later ones are never reached)."""

    vad: np.ndarray
    pauses: tuple[Pause, ...] = field(default_factory=tuple)


def vad_events(vad: np.ndarray, settings: StreamSettings, stop_s: Optional[float] = None) -> list[tuple[str, float]]:
    """("start", t) and ("pause", t) events of pipecat's VAD state machine over window
    probabilities; t is the end of the window that completed the count."""
    start_frames = settings.frames(settings.vad_start_s)
    stop_frames = settings.frames(settings.vad_stop_s if stop_s is None else stop_s)
    speaking, run, events = False, 0, []
    for index, probability in enumerate(vad):
        voiced = probability >= settings.vad_confidence
        if voiced != speaking:
            run += 1
            if run >= (start_frames if not speaking else stop_frames):
                speaking, run = not speaking, 0
                events.append(("start" if speaking else "pause", (index + 1) * FRAME_S))
        else:
            run = 0
    return events


def find_pauses(vad: np.ndarray, settings: StreamSettings) -> tuple[Pause, ...]:
    """The pauses at which the model is asked, each with the time its silence fallback would end the
    turn; stops at the first pause the fallback closes."""
    events = vad_events(vad, settings)
    starts = [t for kind, t in events if kind == "start"]
    if not starts:
        return ()
    segment_start = max(0.0, starts[0] - settings.pre_speech_s - settings.vad_start_s)
    pauses = []
    for position, (kind, time) in enumerate(events):
        if kind != "pause":
            continue
        resumed = next((t for k, t in events[position + 1:] if k == "start"), math.inf)
        fallback = time + settings.stop_s if resumed > time + settings.stop_s else None
        pauses.append(Pause(time, segment_start, fallback))
        if fallback is not None:
            break
    return tuple(pauses)


def decide(trace: Trace, threshold: float = THRESHOLD) -> Optional[float]:
    """When the turn ends: the first pause whose probability is strictly above `threshold`, or the
    silence fallback after a pause the model judged incomplete; None when the clip has no speech."""
    for pause in trace.pauses:
        if pause.probability is not None and pause.probability > threshold:
            return pause.time
        if pause.fallback is not None:
            return pause.fallback
    return None


def silence_decision(trace: Trace, timeout: float, settings: StreamSettings = StreamSettings()) -> Optional[float]:
    """The VAD-only rule: the turn ends at the first silence of `timeout` seconds after speech."""
    pause = next((t for kind, t in vad_events(trace.vad, settings, stop_s=timeout) if kind == "pause"), None)
    return pause


class StreamingTurnDetector:
    """Traces for many clips with one VAD and one model: the VAD runs on all clips in one batch
    (the project's silero wrapper), and all the pauses' windows go to the model together."""

    def __init__(self, model: Optional[SmartTurn] = None, settings: StreamSettings = StreamSettings(), *,
                 timeouts: Sequence[float] = (), threads: int = 1):
        from ihbench.turns.vad import ChannelVad

        self.model = model or SmartTurn(threads=threads)
        self.settings = settings
        self.timeouts = tuple(timeouts)
        self.vad = ChannelVad()

    def traces(self, clips: Sequence[np.ndarray]) -> list[Trace]:
        """`clips`: 16 kHz mono float32."""
        tail = np.zeros(int(round(self.settings.tail_s(self.timeouts) * SAMPLING_RATE)), dtype=np.float32)
        streams = [np.concatenate([np.asarray(clip, dtype=np.float32), tail]) for clip in clips]
        vads = self.vad.probabilities(streams) if streams else []
        traces = [Trace(vad, find_pauses(vad, self.settings)) for vad in vads]
        jobs = [(c, p) for c, trace in enumerate(traces) for p in range(len(trace.pauses))]
        segments = [self.segment(streams[c], traces[c].pauses[p]) for c, p in jobs]
        probabilities = self.model.probabilities(segments)
        scored = [list(trace.pauses) for trace in traces]
        for (c, p), probability in zip(jobs, probabilities):
            scored[c][p] = replace(scored[c][p], probability=float(probability))
        return [Trace(trace.vad, tuple(pauses)) for trace, pauses in zip(traces, scored)]

    @staticmethod
    def segment(stream: np.ndarray, pause: Pause) -> np.ndarray:
        """The audio the model hears at `pause` (the window keeps its last 8 s)."""
        return stream[int(round(pause.segment_start * SAMPLING_RATE)):int(round(pause.time * SAMPLING_RATE))]

    def describe(self) -> dict:
        # the threshold is the caller's to report: a sweep replays this stream at many
        settings = {k: v for k, v in self.settings.__dict__.items() if k != "threshold"}
        # the wrapper's own post-processing options are not used here: its window probabilities are
        vad = {k: v for k, v in self.vad.describe().items() if k in ("vad", "silero_vad", "segment_s", "warmup_s")}
        return {**self.model.describe(), "stream": {**settings, "vad": vad}}
