"""Corpus statistics (Talking Turns, Section 3.1) and the judge-free timing figures of a conversation.

Everything works on IPUs in seconds, channel A the AI and B the user:

- IPU: every IPU of the speaker, backchannels included (the paper's statistics come from voice
  activity alone, which does not know what a backchannel is);
- silence: time when neither channel speaks; a silence stretch between an IPU of X and the next
  IPU of X is a *pause* of X, between an IPU of X and one of Y a *gap*, counted for Y (the
  speaker who takes the turn after it); silence before the first and after the last speech is
  neither;
- overlap: time when both speak, counted for the speaker who came in while the other spoke;
- backchannel: the speaker's backchannel IPUs.

Each is reported as events per minute and cumulative duration as a share of the conversation.

Timing figures use speech IPUs only (backchannels are not turns):

- response latency: an AI IPU that starts while the user is silent, after the user spoke last,
  answers the user's turn; its latency is the silence since the user's speech ended;
- barge-in: a user IPU that starts inside an AI IPU; `ihbench.dataset.floor.barge_ins` says how
  it ends. The user holds it through pauses of up to 1 s in which the AI does not start ("Wait,
  ... is there a bus?" is one barge-in). The AI *yields* when it stops while the user still holds
  it: no later than `floor.YIELD_TOLERANCE_S` (200 ms, the IPU rule's silence) after the user's
  last speech of it. Its stop latency is the time from the user's onset to the end of the AI's
  last speech that began before the barge-in ended. Otherwise the AI *talks over* the user (the
  paper's failed interruption: the interrupted speaker outlasts the interrupter); a talk-over has
  no stop latency, and the user speaking again after a longer silence, once the AI is done, is a
  new turn. The turn-over rate is the share of barge-ins the AI yields to; talk-overs are counted
  apart.

Means get a seeded 1000-resample percentile bootstrap interval over events, the rate a 95 %
Wilson interval. Events of one recording are not independent, so both intervals are optimistic
when few recordings contribute many events.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.floor import Interval
from ihbench.dataset.floor import barge_ins as floor_barge_ins

SPEAKERS = ("ai", "user")  # channel A, channel B
KINDS = ("ipu", "pause", "gap", "overlap", "backchannel")
N_RESAMPLES = 1000


def _silences(a: Sequence[Interval], b: Sequence[Interval]) -> list[tuple[float, float, int, int]]:
    """(start, end, speaker before, speaker after) of each silence between speech (0 = A, 1 = B)."""
    tagged = sorted([(s, e, 0) for s, e in a] + [(s, e, 1) for s, e in b])
    result, last_end, last_speaker = [], None, None
    for start, end, speaker in tagged:
        if last_end is not None and start > last_end:
            result.append((last_end, start, last_speaker, speaker))
        if last_end is None or end > last_end or (end == last_end and speaker != last_speaker):
            last_end, last_speaker = end, speaker
    return result


def _overlaps(a: Sequence[Interval], b: Sequence[Interval]) -> list[tuple[float, float, int]]:
    """(start, end, speaker who came in) of each stretch where both channels speak."""
    result, i, j = [], 0, 0
    a, b = sorted(a), sorted(b)
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            result.append((start, end, 0 if a[i][0] > b[j][0] else 1))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return result


def event_totals(a_ipus: Sequence[Interval], b_ipus: Sequence[Interval], a_backchannels: Sequence[Interval],
                 b_backchannels: Sequence[Interval]) -> dict:
    """{speaker: {kind: {"count", "duration_s"}}}: additive, so recordings pool by summing."""
    totals = {who: {kind: {"count": 0, "duration_s": 0.0} for kind in KINDS} for who in SPEAKERS}

    def add(speaker: int, kind: str, start: float, end: float) -> None:
        cell = totals[SPEAKERS[speaker]][kind]
        cell["count"] += 1
        cell["duration_s"] += end - start

    for speaker, ipus in enumerate((a_ipus, b_ipus)):
        for start, end in ipus:
            add(speaker, "ipu", start, end)
    for speaker, backchannels in enumerate((a_backchannels, b_backchannels)):
        for start, end in backchannels:
            add(speaker, "backchannel", start, end)
    for start, end, before, after in _silences(a_ipus, b_ipus):
        add(after, "pause" if before == after else "gap", start, end)
    for start, end, speaker in _overlaps(a_ipus, b_ipus):
        add(speaker, "overlap", start, end)
    return totals


def pool_totals(all_totals: Sequence[dict]) -> dict:
    pooled = {who: {kind: {"count": 0, "duration_s": 0.0} for kind in KINDS} for who in SPEAKERS}
    for totals in all_totals:
        for who in SPEAKERS:
            for kind in KINDS:
                pooled[who][kind]["count"] += totals[who][kind]["count"]
                pooled[who][kind]["duration_s"] += totals[who][kind]["duration_s"]
    return pooled


def statistics(totals: dict, duration: float) -> dict:
    """Per speaker and for both together: count, per_minute, duration_s, share, mean_s per kind."""
    def row(count: int, seconds: float) -> dict:
        return {"count": count, "per_minute": count / (duration / 60.0) if duration else None,
                "duration_s": round(seconds, 6), "share": seconds / duration if duration else None,
                "mean_s": seconds / count if count else None}

    result = {"duration_s": round(duration, 6), "speakers": {}}
    for who in SPEAKERS:
        result["speakers"][who] = {kind: row(totals[who][kind]["count"], totals[who][kind]["duration_s"])
                                   for kind in KINDS}
    result["both"] = {kind: row(sum(totals[w][kind]["count"] for w in SPEAKERS),
                                sum(totals[w][kind]["duration_s"] for w in SPEAKERS)) for kind in KINDS}
    return result


def _last_end_before(intervals: Sequence[Interval], t: float) -> Optional[float]:
    ends = [e for _, e in intervals if e <= t]
    return max(ends) if ends else None


def timing_events(a_speech: Sequence[Interval], b_speech: Sequence[Interval]) -> dict:
    """Response latencies and barge-ins of one recording (speech IPUs, backchannels left out)."""
    responses = []
    for start, _ in sorted(a_speech):
        if any(s <= start < e for s, e in b_speech):
            continue  # the AI came in over the user: an overlap, not a response
        user_end, ai_end = _last_end_before(b_speech, start), _last_end_before(a_speech, start)
        if user_end is not None and (ai_end is None or user_end > ai_end):
            responses.append({"user_end": user_end, "ai_start": start, "latency_s": round(start - user_end, 6)})
    return {"responses": responses, "barge_ins": floor_barge_ins(a_speech, b_speech)}


def mean_summary(values: Sequence[float], *, seed: int = 0) -> dict:
    """{"mean", "median", "ci_low", "ci_high", "n"}; no interval below two values."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return {"mean": None, "median": None, "ci_low": None, "ci_high": None, "n": 0}
    mean = float(values.mean())
    low = high = None
    if values.size >= 2:
        if np.all(values == values[0]):
            low = high = mean
        else:
            from scipy.stats import bootstrap

            interval = bootstrap((values,), np.mean, n_resamples=N_RESAMPLES, method="percentile",
                                 random_state=np.random.default_rng(seed), vectorized=True).confidence_interval
            low, high = min(float(interval.low), mean), max(float(interval.high), mean)
    return {"mean": mean, "median": float(np.median(values)), "ci_low": low, "ci_high": high, "n": int(values.size)}


def rate_summary(successes: int, n: int) -> dict:
    """{"value", "ci_low", "ci_high", "n"} with a 95 % Wilson interval (sensible at 0 % and 100 %)."""
    if n == 0:
        return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    from scipy.stats import binomtest

    interval = binomtest(int(successes), int(n)).proportion_ci(confidence_level=0.95, method="wilson")
    value = successes / n
    return {"value": value, "ci_low": min(float(interval.low), value), "ci_high": max(float(interval.high), value),
            "n": int(n)}


def timing_summary(per_recording: Sequence[dict], *, seed: int = 0) -> dict:
    """The pooled timing figures of summary.json."""
    responses = [r["latency_s"] for events in per_recording for r in events["responses"]]
    barge_ins = [b for events in per_recording for b in events["barge_ins"]]
    yields = [b["stop_latency_s"] for b in barge_ins if b["outcome"] == "yield"]  # a talk-over has no stop latency
    return {"response_latency_s": mean_summary(responses, seed=seed),
            "stop_latency_s": mean_summary(yields, seed=seed),
            "turn_over_rate": rate_summary(len(yields), len(barge_ins)),
            "talk_overs": sum(b["outcome"] == "talk_over" for b in barge_ins)}
