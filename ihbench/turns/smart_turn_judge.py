"""Smart Turn v3.2 as a Talking Turns judge, for the one decision it was trained to make.

Talking Turns (Arora et al., ICLR 2025, Section 4) scores a system where it made a turn-taking
decision. Two of its five agreement metrics ask exactly what Smart Turn answers: once the floor
holder has gone silent (3 chunks of silence, 120 ms), does the floor change (T) or does the holder
go on after a pause (C)? (a) `speak_up` asks it at the user's pauses (should the AI take the
turn?) and (d) `convey_turn` at the AI's own pauses (did the AI leave the turn when it meant to?).
The judge label is T when p[T] - p[C] > 0. Smart Turn's P(turn complete) on the pausing speaker's
channel goes in as p[T] = P and p[C] = 1 - P, so the metric's rule is P > 0.5: pipecat's own
threshold (`THRESHOLD`, strictly greater), passed to the module as the metric's threshold 2P - 1.

The other three are **not covered**, and are reported so, never as a number:
(b) `backchannel` needs the likelihood that a listener says "mm-hm" while the other keeps the
floor, a listener's act the model has no output for; (c) `interrupt` is asked while the user is
speaking (should the AI cut in?), where the model is never asked; (e) `handle_interruption` is
asked during an overlap (should the AI yield to a barge-in?), two voices at once where the model
hears one speaker's pause. The single-label evaluation needs all five likelihoods at every chunk.

When it is asked: at each silence of the floor holder (a run of NA chunks while A or B holds the
floor, as the floor-state machine labels the recording), at the holder's last speech end plus
pipecat's VAD stop of 0.2 s (`StreamSettings.vad_stop_s`), or at the silence's last chunk if that
comes first: the model speaks once per pause, as in a voice agent. It hears the holder's channel
from 0.7 s before the start of the holder's current turn (pipecat's pre-speech plus VAD start) to
that moment, keeping the last 8 s. Its probability fills the rows from that moment to the row of
the first chunk of speech after the silence (row k predicts the 40 ms after its end time, and that
row's end time is where the silence ends: the metric's instance); earlier rows and every other
chunk hold the neutral [0.5, 0, 0, 0, 0.5]. No look-ahead in what it hears: the audio behind row k
never goes past row k's end time. Where it is asked comes from the recording's floor labels, as the
metric's instances do; the moment is the one a voice agent asks at, which may come before the
instance's end time. The metric module finds its instances itself (a chunk of speech after at least
3 chunks of silence), so nothing here restates its definition.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.floor import CHUNK_SECONDS

from .judge import JUDGE_ORDER

COVERED = ("speak_up", "convey_turn")
NOT_COVERED = {
    "backchannel": "Smart Turn says whether a speaker's turn is complete; it has no likelihood of a listener's "
                   "backchannel",
    "interrupt": "asked while the user is still speaking; Smart Turn is only asked at a pause",
    "handle_interruption": "asked during an overlap (two speakers at once); Smart Turn judges one speaker's pause",
}
SINGLE_LABEL_NOT_COVERED = "needs all five likelihoods (C, NA, I, BC, T) at every chunk; Smart Turn gives one " \
                           "probability per pause"
NEUTRAL = (0.5, 0.0, 0.0, 0.0, 0.5)
_T, _C = JUDGE_ORDER.index("T"), JUDGE_ORDER.index("C")
_ROLES = ("A", "B")


@dataclass(frozen=True)
class PauseQuery:
    """One question to the model: `speaker` (A or B) paused; `time` is when it is asked (s),
    `segment_start` where the audio it hears begins, rows `first_row`..`last_row` (inclusive)
    carry its answer: from the first chunk ending after `time` to the row of the silence's last
    chunk + 1, whose chunk ends the silence (the row a Talking Turns judge predicts it from)."""

    speaker: str
    speech_end: float
    time: float
    segment_start: float
    first_row: int
    last_row: int
    probability: Optional[float] = None

    def to_json(self) -> dict:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def pause_queries(labels, speech: Sequence[Sequence[tuple[float, float]]], *, stop_s: float,
                  pre_speech_s: float) -> list[PauseQuery]:
    """Every silence of the floor holder in a recording's floor labels (`FloorLabels`), with the
    holder's speech intervals per channel (A, B) to time the end of its speech."""
    events, turns, ends = labels.events, labels.turns, labels.end_times
    queries, k = [], 0
    while k < len(events):
        holder = turns[k]
        if events[k] != "NA" or holder not in _ROLES:
            k += 1
            continue
        last = k
        while last + 1 < len(events) and events[last + 1] == "NA" and turns[last + 1] == holder \
                and abs(ends[last + 1] - ends[last] - CHUNK_SECONDS) < 1e-6:
            last += 1
        # row last + 1 predicts the chunk that ends the silence: it is the metric's instance, and
        # its chunk ends where the silence does, so the model may hear all of it
        answer = last + 1 if last + 1 < len(events) and abs(ends[last + 1] - ends[last] - CHUNK_SECONDS) < 1e-6 \
            else last
        own = [end for start, end in speech[_ROLES.index(holder)] if start < ends[k]]
        speech_end = min(own[-1], ends[k]) if own else ends[k]
        time = min(speech_end + stop_s, ends[answer])
        first = next(row for row in range(k, answer + 1) if ends[row] >= time - 1e-9)
        queries.append(PauseQuery(holder, speech_end, time, max(0.0, _turn_start(labels, k) - pre_speech_s),
                                  first, answer))
        k = last + 1
    return queries


def _turn_start(labels, k: int) -> float:
    """When the holder at chunk k took the floor: back over chunks it held, alone or in overlap,
    to the chunk before them (the one whose event started its speech)."""
    turns, holder = labels.turns, labels.turns[k]
    other = _ROLES[1 - _ROLES.index(holder)]
    first = k
    while first > 0 and turns[first - 1] not in (other, "NA"):
        first -= 1
    return labels.end_times[first - 1] if first > 0 else 0.0


def likelihood_rows(n_chunks: int, queries: Sequence[PauseQuery]) -> np.ndarray:
    """(n_chunks, 5) rows in the order C, NA, I, BC, T: P(complete) as T and its complement as C
    where the model was asked, neutral elsewhere."""
    rows = np.tile(np.asarray(NEUTRAL, dtype=np.float64), (n_chunks, 1))
    for query in queries:
        rows[query.first_row:query.last_row + 1, _T] = query.probability
        rows[query.first_row:query.last_row + 1, _C] = 1.0 - query.probability
    return rows


class SmartTurnJudge:
    """The model (`ihbench.smart_turn.SmartTurn`) with pipecat's stream settings; `judge` scores
    one recording's pauses in one batch. Made before any output is written, so a missing extra or
    model file is refused first."""

    name = "smart-turn"
    covers = COVERED
    not_covered = NOT_COVERED
    single_label_not_covered = SINGLE_LABEL_NOT_COVERED

    def __init__(self, *, threads: int = 1):
        from ihbench.smart_turn.model import THRESHOLD, SmartTurn
        from ihbench.smart_turn.stream import StreamSettings

        self.model = SmartTurn(threads=threads)
        self.settings = StreamSettings()
        self.threshold = THRESHOLD

    def judge(self, recording, analysis, bar=None) -> tuple[np.ndarray, list[PauseQuery]]:
        """(likelihood rows, the pauses with their probabilities) for one `TwoChannel` recording
        and its `Analysis`; `bar` (a tqdm) grows by its pauses and ticks as they are scored."""
        from dataclasses import replace

        from ihbench.dataset.schema import SAMPLING_RATE

        settings = self.settings
        queries = pause_queries(analysis.labels, analysis.speech, stop_s=settings.vad_stop_s,
                                pre_speech_s=settings.pre_speech_s + settings.vad_start_s)
        channels = {"A": recording.a, "B": recording.b}
        segments = [channels[q.speaker][int(round(q.segment_start * SAMPLING_RATE)):int(round(q.time * SAMPLING_RATE))]
                    for q in queries]
        if bar is not None:
            bar.total += len(segments)
            bar.refresh()
        probabilities = []
        for first in range(0, len(segments), 8):  # a few at a time, so the bar moves
            probabilities.extend(self.model.probabilities(segments[first:first + 8]).tolist())
            if bar is not None:
                bar.update(len(segments[first:first + 8]))
        scored = [replace(q, probability=float(p)) for q, p in zip(queries, probabilities)]
        return likelihood_rows(len(analysis.labels.events), scored), scored

    def thresholds(self) -> dict:
        """The metric module's threshold for each covered metric: p[T] - p[C] = 2P - 1."""
        return {name: 2 * self.threshold - 1 for name in COVERED}

    def describe(self) -> dict:
        return {"judge": self.name, "threshold": self.threshold, **self.model.describe(),
                "asked": {"vad_stop_s": self.settings.vad_stop_s,
                          "pre_speech_s": self.settings.pre_speech_s + self.settings.vad_start_s}}
