"""Timeline PNG of one conversation: what each channel did and what the floor-state machine made of it.

Rows: the AI's channel and the user's (loudness envelope in grey, IPUs as bars, backchannels in
orange, overlaps shaded red across both), then the 40 ms events (T, I, BC; C and NA left blank so
the decisions stand out) and who held the floor. Each user barge-in is marked on the AI's row: a
black bracket from the user's onset to the AI's stop for a yield (its stop latency), a dashed red
line from the end of the user's speech to the AI's stop for a talk-over (how long the AI talked
on). With a turn-end judge (`--judge smart-turn`) a last row gives its P(turn complete) at each
pause, a stem per pause in the pausing speaker's colour, and its threshold as a dashed line. A reader checks a suspicious statistic here before trusting it: a VAD that split a sentence
or missed a quiet "mm-hm" is visible at a glance.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.floor import CHUNK_SECONDS, FloorLabels, Interval
from ihbench.dataset.plotting import pyplot, save_figure
from ihbench.dataset.schema import SAMPLING_RATE

EVENT_COLOURS = {"T": "#111111", "I": "#d62728", "BC": "#ff7f0e"}
FLOOR_COLOURS = {"A": "#1f77b4", "B": "#2ca02c", "AB": "#9467bd", "BA": "#8c564b"}
CHANNEL_COLOURS = {"A": "#1f77b4", "B": "#2ca02c"}
OUTCOME_COLOURS = {"yield": "#111111", "talk_over": "#d62728"}


def _envelope(samples: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    frames = samples[: samples.size // step * step].reshape(-1, step)
    peak = np.abs(frames).max(axis=1) if frames.size else np.zeros(0)
    return np.arange(peak.size) * step / SAMPLING_RATE, peak / max(float(peak.max(initial=0.0)), 1e-9)


def _runs(values: Sequence[str], end_times: Sequence[float]) -> list[tuple[str, float, float]]:
    """(value, start, end) for each run of equal chunk values; chunk k covers (e_k, e_k + 40 ms]."""
    runs = []
    for value, end in zip(values, end_times):
        if runs and runs[-1][0] == value and abs(runs[-1][2] - end) < 1e-6:
            runs[-1][2] = end + CHUNK_SECONDS
        else:
            runs.append([value, end, end + CHUNK_SECONDS])
    return [tuple(run) for run in runs]


def plot_timeline(path: Path, name: str, duration: float, labels: FloorLabels, *,
                  speech: Sequence[Sequence[Interval]], backchannels: Sequence[Sequence[Interval]],
                  channels: Optional[Sequence[np.ndarray]] = None, barge_ins: Sequence[dict] = (),
                  turn_end: Optional[dict] = None) -> Path:
    """Write the PNG; its width grows with the conversation (5 s per inch, 10 to 60 inches).
    `barge_ins` are the timing events' (`floor.barge_ins`); `turn_end` is events.json's entry of
    that name ({"judge", "threshold", "pauses": [{"speaker", "time", "probability", ...}]})."""
    plt = pyplot()
    width = float(np.clip(duration / 5.0, 10.0, 60.0))
    ratios = [2, 2, 0.7, 0.7] + ([1.6] if turn_end is not None else [])
    figure, axes = plt.subplots(len(ratios), 1, figsize=(width, 4.6 + (1.4 if turn_end is not None else 0)),
                                sharex=True, gridspec_kw={"height_ratios": ratios})
    for row, (role, title) in enumerate((("A", "AI (A)"), ("B", "user (B)"))):
        axis = axes[row]
        if channels is not None:
            times, peak = _envelope(np.asarray(channels[row]), max(1, SAMPLING_RATE // 50))
            axis.fill_between(times, -peak, peak, color="#bbbbbb", linewidth=0)
        for start, end in speech[row]:
            axis.add_patch(plt.Rectangle((start, -0.35), end - start, 0.7, color=CHANNEL_COLOURS[role], alpha=0.75))
        for start, end in backchannels[row]:
            axis.add_patch(plt.Rectangle((start, -0.35), end - start, 0.7, color=EVENT_COLOURS["BC"], alpha=0.9))
        axis.set_ylim(-1.05, 1.05)
        axis.set_yticks([])
        axis.set_ylabel(title, rotation=0, ha="right", va="center")
    for barge_in in barge_ins:
        if barge_in["outcome"] == "yield":
            start, style = barge_in["user_start"], "-"
        else:
            start, style = barge_in["user_end"], "--"
        colour = OUTCOME_COLOURS[barge_in["outcome"]]
        axes[0].plot([start, barge_in["ai_stop"]], [0.6, 0.6], style, color=colour, linewidth=1.5)
        axes[0].plot([start, barge_in["ai_stop"]], [0.6, 0.6], "|", color=colour, markersize=8)
    for a_start, a_end in [*speech[0], *backchannels[0]]:
        for b_start, b_end in [*speech[1], *backchannels[1]]:
            start, end = max(a_start, b_start), min(a_end, b_end)
            if start < end:
                for axis in axes[:2]:
                    axis.axvspan(start, end, color="#d62728", alpha=0.18, linewidth=0)
    for row, (values, colours, title) in enumerate(((labels.events, EVENT_COLOURS, "events"),
                                                    (labels.turns, FLOOR_COLOURS, "floor")), start=2):
        axis = axes[row]
        for value, start, end in _runs(values, labels.end_times):
            if value in colours:
                axis.axvspan(start, end, color=colours[value], linewidth=0)
        axis.set_yticks([])
        axis.set_ylabel(title, rotation=0, ha="right", va="center")
    if turn_end is not None:
        _turn_end_row(axes[4], turn_end)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in
               (CHANNEL_COLOURS["A"], CHANNEL_COLOURS["B"], EVENT_COLOURS["BC"], "#f4c2c2", EVENT_COLOURS["T"],
                EVENT_COLOURS["I"], FLOOR_COLOURS["AB"], FLOOR_COLOURS["BA"])]
    handles += [plt.Line2D([], [], color=OUTCOME_COLOURS["yield"], linestyle="-"),
                plt.Line2D([], [], color=OUTCOME_COLOURS["talk_over"], linestyle="--")]
    names = ["AI IPU", "user IPU", "backchannel (BC)", "overlap", "turn change (T)", "interruption (I)",
             "floor AB (user overlaps AI)", "floor BA (AI overlaps user)", "yield (stop latency)",
             "talk-over (AI talks on)"]
    axes[0].legend(handles, names, loc="lower left", bbox_to_anchor=(0.0, 1.02), fontsize=8, frameon=False,
                   ncol=len(names) if width >= 16 else len(names) // 2)
    axes[-1].set_xlim(0, max(duration, CHUNK_SECONDS))
    axes[-1].set_xlabel("seconds")
    figure.suptitle(name, x=0.01, ha="left", y=0.995, fontsize=10)
    return save_figure(figure, path, tight_layout=True, dpi=80)


def _turn_end_row(axis, turn_end: dict) -> None:
    """P(turn complete) where the judge was asked: one stem per pause, at the moment it was asked."""
    for role in ("A", "B"):
        asked = [p for p in turn_end["pauses"] if p["speaker"] == role]
        if asked:
            times = [p["time"] for p in asked]
            values = [p["probability"] for p in asked]
            axis.vlines(times, 0, values, color=CHANNEL_COLOURS[role], linewidth=1)
            axis.plot(times, values, "o", color=CHANNEL_COLOURS[role], markersize=4,
                      label=f"{('AI', 'user')[role == 'B']} paused")
    axis.axhline(turn_end["threshold"], color="#555555", linestyle="--", linewidth=1,
                 label=f"threshold {turn_end['threshold']:g}")
    axis.set_ylim(0, 1.05)
    axis.set_yticks([0, 0.5, 1])
    axis.set_ylabel(f"{turn_end['judge']}\nP(turn end)", rotation=0, ha="right", va="center", fontsize=8)
    axis.legend(loc="upper right", fontsize=7, frameon=False, ncol=3)
