"""The floor-state machine: two channels' speech and backchannel intervals -> per-40 ms-chunk
events (who does what next) and turns (who held the floor before the chunk).

One implementation serves both directions: `ihbench turns` feeds it intervals found by voice
activity detection, the dev set's full-duplex renders feed it the intervals they were rendered
from (their ground truth). Channel A is the AI system, channel B the user. The rules restate
`../shared/reference/talking_turns_metrics.md` ("Labels from two channels"):

- a chunk ending at e describes (e, e + 0.04]; the first chunk ends at 0.24 s (the judge's
  0.2 s context plus one chunk), as the metric module's end times expect;
- per channel: BC if a backchannel overlaps the chunk, else speech if an IPU overlaps it, else
  silence (words inside a backchannel are not speech);
- a listener's backchannel is the event BC while the other side holds the floor, and is
  otherwise discarded; then both silent -> NA; one side speaking -> C if it already held the
  floor (or held it while being overlapped), else T and the floor passes; both speaking -> I,
  the state becoming AB (A held, B overlaps) or BA.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

CHUNK_SECONDS = 0.04
FIRST_END = 0.24
Interval = tuple[float, float]  # (start, end) in seconds


@dataclass(frozen=True)
class FloorLabels:
    events: list[str]
    turns: list[str]
    end_times: list[float]

    def to_reference(self) -> dict:
        """The metric module's `references` entry for one recording."""
        return {"events": list(self.events), "turns": list(self.turns), "end_times": list(self.end_times)}


def chunk_end_times(duration: float) -> list[float]:
    """End times of every whole chunk that fits in `duration` seconds."""
    count = int(round((duration - FIRST_END) / CHUNK_SECONDS, 6)) if duration >= FIRST_END + CHUNK_SECONDS else 0
    return [round(FIRST_END + CHUNK_SECONDS * k, 6) for k in range(count)]


def _overlaps(intervals: Sequence[Interval], start: float, end: float) -> bool:
    return any(a < end and b > start for a, b in intervals)


def channel_states(speech: Sequence[Interval], backchannels: Sequence[Interval],
                   end_times: Sequence[float]) -> list[str]:
    """'BC', 'S' (speech) or 'NA' per chunk for one channel."""
    states = []
    for end in end_times:
        window = (end, end + CHUNK_SECONDS)
        if _overlaps(backchannels, *window):
            states.append("BC")
        elif _overlaps(speech, *window):
            states.append("S")
        else:
            states.append("NA")
    return states


def floor_labels(a_speech: Sequence[Interval], b_speech: Sequence[Interval], duration: float, *,
                 a_backchannels: Sequence[Interval] = (), b_backchannels: Sequence[Interval] = ()) -> FloorLabels:
    end_times = chunk_end_times(duration)
    a_states = channel_states(a_speech, a_backchannels, end_times)
    b_states = channel_states(b_speech, b_backchannels, end_times)
    events, turns, state = [], [], "NA"
    for a, b in zip(a_states, b_states):
        turns.append(state)
        if a == "BC" and state in ("B", "BA"):
            events.append("BC")
        elif b == "BC" and state in ("A", "AB"):
            events.append("BC")
        elif a == "S" and b == "S":
            events.append("I")
            state = state if state in ("AB", "BA") else "AB" if state == "A" else "BA"
        elif a == "S":
            events.append("C" if state in ("A", "AB") else "T")
            state = "A"
        elif b == "S":
            events.append("C" if state in ("B", "BA") else "T")
            state = "B"
        else:
            events.append("NA")
    return FloorLabels(events, turns, end_times)
