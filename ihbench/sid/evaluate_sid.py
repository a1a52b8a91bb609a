"""Score SID-Bench predictions with the repository's own `apt` metric module, both definitions.

The published numbers follow SID-Bench's notebook; its README words FIR and IRL differently.
Reporting both side by side keeps a comparison with the paper honest whichever one a reader
has in mind. Scoring goes through `evaluate.load` on the module folder, exactly as users call
it, so this file can never drift from the metric card.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Optional, Union

from ihbench.dataset.errors import MissingFileError, UsageError

from ..resources import load_metric
from .predictions import align

DEFINITIONS = ("notebook", "readme")


def _apt_folder(metric_dir: Optional[Union[str, os.PathLike]]) -> Optional[str]:
    """None (the shipped module), or the absolute folder of another copy of apt."""
    if not metric_dir:
        return None
    path = Path(metric_dir)
    if not (path / "apt.py").is_file():
        raise MissingFileError(f"{path}: no apt metric module (apt.py) here")
    return str(path.resolve())


def _joined(predictions: list[dict], references: list[dict]) -> list[dict]:
    """Join by audio name when both sides carry one; otherwise trust the order, as the module does."""
    if all("audio" in row for row in predictions) and all("audio" in row for row in references):
        return align(predictions, references)
    if len(predictions) != len(references):
        raise UsageError(f"predictions has {len(predictions)} rows but references has {len(references)}, "
                         "and without audio names they cannot be joined")
    return list(predictions)


def _metric_rows(predictions: list[dict], references: list[dict]) -> tuple[list[dict], list[dict]]:
    """Plain Python values: the module's features reject numpy scalars. A break predicted after the
    clip's end is passed through; the module scores it as a late detection and counts it."""
    predicted, truth = [], []
    for prediction, reference in zip(predictions, references):
        nonbreak = bool(prediction["total_nonbreak"])
        predicted.append({"total_nonbreak": nonbreak, "break_time": -1.0 if nonbreak else float(prediction["break_time"])})
        truth.append({"total_nonbreak": bool(reference["total_nonbreak"]),
                      "break_time": float(reference["break_time"]), "duration": float(reference["duration"])})
    return predicted, truth


def score_both(predictions: list[dict], references: list[dict], *, tolerance: float = 0.05,
               metric_dir: Optional[Union[str, os.PathLike]] = None) -> dict:
    """`{"notebook": result, "readme": result}`; each result is the apt module's full outcome table
    (fir, irl, apt, counts, predictions_past_duration)."""
    predicted, truth = _metric_rows(_joined(predictions, references), references)
    folder = _apt_folder(metric_dir)
    return {definition: load_metric("apt", definition, folder=folder).compute(predictions=predicted,
                                                                             references=truth, tolerance=tolerance)
            for definition in DEFINITIONS}


def timing_errors(predictions: list[dict], references: list[dict]) -> list[float]:
    """Predicted minus true break time (seconds) on clips where both say "break": negative is
    early (a false alarm under SID-Bench's rule), positive is latency."""
    joined = _joined(predictions, references)
    return [float(p["break_time"]) - float(r["break_time"]) for p, r in zip(joined, references)
            if not p["total_nonbreak"] and not r["total_nonbreak"]]


def plot_timing_histogram(errors: list[float], path: Union[str, os.PathLike], *, tolerance: float = 0.05,
                          title: str = "SID-Bench timing error") -> Path:
    """Where detections land relative to the true break, with the tolerance band marked."""
    from ihbench.dataset.plotting import pyplot, save_figure

    plt = pyplot()

    path = Path(path)
    values = [e for e in errors if math.isfinite(e)]
    figure, axis = plt.subplots(figsize=(7, 4), constrained_layout=True)
    if values:
        axis.hist(values, bins=min(50, max(5, len(values) // 4)), color="#4c72b0")
    else:
        axis.text(0.5, 0.5, "no clip where both prediction and truth say break", ha="center", va="center",
                  transform=axis.transAxes)
    axis.axvspan(-tolerance, tolerance, color="#55a868", alpha=0.25, label=f"within ±{tolerance * 1000:.0f} ms")
    axis.axvline(0.0, color="black", linewidth=1)
    axis.set_xlabel("predicted − true break time (s)")
    axis.set_ylabel("clips")
    axis.set_title(f"{title} (n={len(values)})")
    axis.legend(loc="upper right")
    return save_figure(figure, path, dpi=100, metadata={"Software": None})
