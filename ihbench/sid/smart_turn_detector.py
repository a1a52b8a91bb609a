"""`smart-turn`: Smart Turn v3.2 as an SID detector.

Its own module, not beside the other detectors: it needs the project's silero wrapper
(`ihbench.turns.vad`), which loads silero's weights through `detectors`, so living in `detectors`
would make an import circle.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ihbench.dataset.argtypes import concurrency, count, number

from .detectors import Detector


class SmartTurnDetector(Detector):
    """Smart Turn v3.2 behind pipecat's streaming rule (`ihbench.smart_turn.stream`): the break is the
    first pause where P(turn complete) > `threshold`, or the silence fallback `stop_secs` after a
    pause judged incomplete. The clip is followed by silence, so the break may come after its end.
    `traces` keeps every clip's pauses and probabilities, so a threshold sweep or the VAD-only rule
    is a replay, not another pass of the model."""

    name = "smart-turn"
    clamps_to_clip = False
    option_types = {"threshold": number(min=0, max=1), "threads": concurrency(), "batch_size": count(),
                    "stop_secs": number(min=0, min_open=True), "vad_confidence": number(min=0, max=1),
                    "vad_start_secs": number(min=0, min_open=True), "vad_stop_secs": number(min=0, min_open=True),
                    "pre_speech_secs": number(min=0)}

    def __init__(self, *, threshold: float = 0.5, threads: int = 1, batch_size: int = 1, stop_secs: float = 3.0,
                 vad_confidence: float = 0.7, vad_start_secs: float = 0.2, vad_stop_secs: float = 0.2,
                 pre_speech_secs: float = 0.5):
        super().__init__()
        from ihbench.smart_turn import SmartTurn, StreamSettings, StreamingTurnDetector

        self.settings = StreamSettings(threshold=threshold, vad_confidence=vad_confidence, vad_start_s=vad_start_secs,
                                       vad_stop_s=vad_stop_secs, pre_speech_s=pre_speech_secs, stop_s=stop_secs)
        self.stream = StreamingTurnDetector(SmartTurn(threads=threads, batch_size=batch_size), self.settings)
        self.traces: list = []

    def _onset(self, samples: np.ndarray) -> Optional[float]:
        from ihbench.smart_turn import decide

        (trace,) = self.stream.traces([samples])
        self.traces.append(trace)
        self.calls += len(trace.pauses)
        return decide(trace, self.settings.threshold)

    def describe(self) -> dict:
        return {"detector": self.name, "threshold": self.settings.threshold, **self.stream.describe()}
