"""Smart Turn's threshold, and the VAD-only silence timeout, swept over one set of clips: the
frontier of false cut-ins (FIR) against the time it costs (APT), as end-of-turn benchmarks draw it.

Both rules replay the traces the detector recorded (the model ran once per pause), and every
point is scored by the apt metric module. The operating point is chosen on other clips than the
ones it is reported on (`choose` on the tuning set's sweep, then read off this one), so the figure
at the operating point is never fitted to the clips it describes.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Sequence

from ihbench.dataset.argtypes import ArgType

#: seconds of silence that end a turn under the VAD-only rule; 0.2 is pipecat's VAD stop with
#: Smart Turn, 0.8 its stop without, 3.2 the Smart Turn fallback's total (0.2 + 3 s)
DEFAULT_TIMEOUTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 2.5, 3.2)
DEFAULT_THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
_KEPT = ("fir", "irl", "apt", "false_alarms", "early_detections", "misses", "late_hits", "hits_within_tolerance",
         "predictions_past_duration")


class Numbers(ArgType):
    """Comma-separated numbers in [low, high], at least one; repeats dropped, order kept."""

    def __init__(self, low: float, high: Optional[float], *, low_open: bool = False):
        self.low, self.high, self.low_open = low, high, low_open

    @property
    def expected(self) -> str:
        low = f"{'>' if self.low_open else '>='} {self.low:g}"
        return f"numbers {low}{f' and <= {self.high:g}' if self.high is not None else ''}, separated by commas"

    def convert(self, value: Any) -> list[float]:
        parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
        numbers = []
        for part in parts:
            try:
                number = float(part.strip() if isinstance(part, str) else part)
            except (TypeError, ValueError):
                raise self.refuse(value) from None
            too_low = number < self.low or (self.low_open and number == self.low)
            if not math.isfinite(number) or too_low or (self.high is not None and number > self.high):
                raise self.refuse(value)
            numbers.append(number)
        if not numbers:
            raise self.refuse(value)
        return list(dict.fromkeys(numbers))


def thresholds_type() -> Numbers:
    return Numbers(0.0, 1.0)


def timeouts_type() -> Numbers:
    return Numbers(0.0, 60.0, low_open=True)


def _predictions(times: Sequence[Optional[float]], names: Sequence[str]) -> list[dict]:
    from .detectors import break_at, no_break

    return [{"audio": name, **(no_break() if time is None else break_at(time))} for name, time in zip(names, times)]


def threshold_predictions(traces, names, threshold: float) -> list[dict]:
    from ihbench.smart_turn import decide

    return _predictions([decide(trace, threshold) for trace in traces], names)


def timeout_predictions(traces, names, timeout: float, settings) -> list[dict]:
    from ihbench.smart_turn import silence_decision

    return _predictions([silence_decision(trace, timeout, settings) for trace in traces], names)


def _row(key: str, value: float, predictions, references, tolerance: float) -> dict:
    from .evaluate_sid import score_both

    scores = score_both(predictions, references, tolerance=tolerance)
    return {key: value, **{name: {k: result.get(k) for k in _KEPT if k in result} for name, result in scores.items()}}


def sweep(traces, references: list[dict], *, thresholds: Sequence[float], timeouts: Sequence[float], settings,
          tolerance: float = 0.05) -> dict:
    """{"smart_turn": one row per threshold, "vad_only": one row per timeout}; each row holds both
    definitions' FIR, IRL, APT and the counts behind them."""
    names = [reference["audio"] for reference in references]
    return {
        "smart_turn": [_row("threshold", t, threshold_predictions(traces, names, t), references, tolerance)
                       for t in thresholds],
        "vad_only": [_row("timeout", t, timeout_predictions(traces, names, t, settings), references, tolerance)
                     for t in timeouts],
    }


def choose(rows: list[dict]) -> dict:
    """The row with the lowest APT (notebook), then the lowest FIR; the first of equals."""
    return min(rows, key=lambda row: (row["notebook"]["apt"], row["notebook"]["fir"]))


def row_at(rows: list[dict], key: str, value: float) -> dict:
    return next(row for row in rows if row[key] == value)


def plot_sweep(result: dict, path, *, operating: dict, title: str, definition: str = "notebook") -> Path:
    """FIR against APT: Smart Turn over thresholds, VAD-only over timeouts; the operating points
    (chosen on other clips) ringed."""
    from ihbench.dataset.plotting import pyplot, save_figure

    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7, 5), constrained_layout=True)
    curves = ((result["smart_turn"], "threshold", "smart-turn (threshold)", "#c44e52", ""),
              (result["vad_only"], "timeout", "VAD only (silence timeout)", "#4c72b0", " s"))
    for rows, key, label, colour, unit in curves:
        xs = [row[definition]["apt"] for row in rows]
        ys = [row[definition]["fir"] if row[definition]["fir"] is not None else math.nan for row in rows]
        axis.plot(xs, ys, "o-", color=colour, label=label, markersize=4)
        for row, x, y in zip(rows, xs, ys):
            axis.annotate(f"{row[key]:g}{unit}", (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7,
                          color=colour)
    for name, marker, colour in (("smart_turn", "*", "#c44e52"), ("vad_only", "D", "#4c72b0")):
        point = operating.get(name)
        if point:
            axis.plot(point[definition]["apt"], point[definition]["fir"], marker, color=colour, markersize=14,
                      markerfacecolor="none", markeredgewidth=2,
                      label=f"operating point: {point.get('label', '')}")
    axis.set_xlabel(f"APT, s ({definition}; lower is better)")
    axis.set_ylabel(f"FIR ({definition}; lower is better)")
    axis.set_title(title, fontsize=10)
    axis.grid(alpha=0.3)
    axis.legend(loc="best", fontsize=8)
    return save_figure(figure, Path(path), dpi=100, metadata={"Software": None})


def _cell(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def report_table(rows: list[tuple[str, str, dict]]) -> str:
    """Markdown: one line per (detector, setting, {"notebook": ..., "readme": ...})."""
    lines = ["| detector | setting | FIR | IRL (s) | APT (s) | FIR (README) | IRL (README, s) | false alarms "
             "| misses |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for detector, setting, scores in rows:
        notebook, readme = scores["notebook"], scores["readme"]
        lines.append(f"| {detector} | {setting} | {_cell(notebook['fir'])} | {_cell(notebook['irl'])} | "
                     f"{_cell(notebook['apt'])} | {_cell(readme['fir'])} | {_cell(readme['irl'])} | "
                     f"{notebook.get('false_alarms', '–')} | {notebook.get('misses', '–')} |")
    return "\n".join(lines)
