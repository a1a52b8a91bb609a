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

Beside the chunk labels, `barge_ins` says how each overlap a speaker starts ends: the other
speaker yields (stops while the newcomer still holds the floor) or talks over it. `ihbench turns`
times it on detected speech and the duplex renders write it as ground truth, by this one rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

CHUNK_SECONDS = 0.04
FIRST_END = 0.24
Interval = tuple[float, float]  # (start, end) in seconds

#: How long after the barge-in's last speech the interrupted speaker may still stop and count as
#: yielding. Talking Turns (Arora et al., ICLR 2025, Section 3.1) ends an IPU only after more than
#: 200 ms of silence (`ipus.MIN_SILENCE_S`): until then the user's speech, and the barge-in with
#: it, has not ended, so an AI falling silent then stopped while the user held the floor. No
#: published yield tolerance was found (the paper's label rules have none: an overlap the
#: interrupted speaker outlasts by a single 40 ms chunk is a failed interruption); this is the
#: paper's own boundary of a stretch of speech.
YIELD_TOLERANCE_S = 0.2
#: The longest pause of the user's inside one barge-in ("Wait, ... is there a bus?"): the pause
#: inside a turn that `ipus.backchannels_by_heuristic` bridges (`ipus.MAX_BACKCHANNEL_S`). A user
#: who speaks again after a longer silence, the AI having talked on through it, starts a new turn.
HELD_PAUSE_S = 1.0


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


def _stop(speech: Sequence[Interval], t: float) -> float:
    """The end of the last speech that began before `t`."""
    return max(e for s, e in speech if s < t)


def barge_ins(a_speech: Sequence[Interval], b_speech: Sequence[Interval], *,
              tolerance: float = YIELD_TOLERANCE_S, held_pause: float = HELD_PAUSE_S) -> list[dict]:
    """Each time B starts speaking inside A's speech, and whether A yielded or talked over it.

    B's attempt is B's IPU that starts inside A's, continued by B's next IPUs after pauses of at
    most `held_pause` in which A does not start speaking ("Wait, ... is there a bus?" is one
    attempt): B holds the floor through them. A *yields* when its last speech that began before
    the attempt ended stops no later than `tolerance` after the attempt's speech ends, i.e.
    while B still held it; its stop latency runs from B's onset to that stop. Otherwise A *talks
    over* B: it was still speaking after B had let go. B speaking again after a longer silence,
    A having talked on through it, is a new turn, not the rest of the attempt (taking it for the
    rest made every talk-over followed by B's next turn a yield, timed to the end of A's turn).
    A stop latency exists only for a yield.

    Returns one dict per attempt: user_start, user_end, ai_stop, stop_latency_s (None for a
    talk-over), outcome ("yield" | "talk_over") and user_took_floor (outcome == "yield").
    """
    a, b = sorted(a_speech), sorted(b_speech)
    found, covered = [], -1
    for index, (start, end) in enumerate(b):
        if index <= covered or not any(s < start < e for s, e in a):
            continue
        covered = index
        while (covered + 1 < len(b) and b[covered + 1][0] - end <= held_pause + 1e-9
               and not any(end <= s < b[covered + 1][0] for s, _ in a)):
            covered += 1  # B goes on after a short pause in which A did not start: the same attempt
            end = b[covered][1]
        stop = _stop(a, end)
        yielded = stop - end <= tolerance + 1e-9
        found.append({"user_start": start, "user_end": end, "ai_stop": stop,
                      "stop_latency_s": round(stop - start, 6) if yielded else None,
                      "outcome": "yield" if yielded else "talk_over", "user_took_floor": yielded})
    return found
