"""`ihbench sid`: a detector (or a prediction file) over a SID config into a run folder.

    OUT/predictions.jsonl   SID-Bench's own prediction format, one line per clip
    OUT/summary.json        FIR / IRL / APT under both definitions, counts, cost, real-time factor
    OUT/timing_errors.png   where detections land relative to the true break

The folder is a `RunDir`: locked for the life of the command (a second `ihbench sid` on it fails
at once), with its summary where every run keeps it.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

from ihbench.dataset.argtypes import number, whole
from ihbench.dataset.errors import IHBenchError, UsageError
from ihbench.dataset.io import write_json_atomic
from ihbench.dataset.redaction import redact

from ..rundir import RunDir
from ..summaries import SidScore, SidSummary


class SidClipsFailed(IHBenchError):
    """Model calls failed on some clips: nothing is scored or written (a clip whose answer is unknown
    is not a "no"); the same command runs them all again."""

    def __init__(self, failed: int, total: int, first: str):
        super().__init__(f"{failed} of {total} clip(s) have model calls that failed (first: {first}); nothing was "
                         "scored or written; run the same command again when the model answers")
        self.failed, self.total = failed, total


def run_sid(data: str, config: str, out: Path, *, detector: Optional[str] = None, predictions_file: Optional[Path] = None,
            options: Optional[dict] = None, limit: Optional[int] = None, tolerance: float = 0.05,
            progress: bool = True) -> dict:
    from ihbench.dataset.sid import sid_rows

    from .detectors import check_detector_options, get_detector, run_detector
    from .predictions import align, read_predictions

    if (detector is None) == (predictions_file is None):
        raise UsageError("give either --detector or --predictions")
    if limit is not None:  # -1 would silently drop the last clip; 0 would score nothing
        whole(min=1).check("--limit", limit)
    number(min=0).check("--tolerance", tolerance)
    if detector is not None:  # a bad option is refused before any clip is read
        options = check_detector_options(detector, options or {})
    references, clips = sid_rows(data, config)
    names = list(clips.names)
    if limit is not None:
        references, names = references[:limit], names[:limit]
    seconds, calls, description = None, None, {"predictions_file": str(predictions_file)}
    if predictions_file is not None:
        predictions = align(read_predictions(predictions_file), references)
    else:
        model = get_detector(detector, **(options or {}))
        subset = [clips[i] for i in range(len(names))] if limit is not None else clips
        started = time.perf_counter()
        predictions = run_detector(model, subset, names, progress=progress)
        seconds = time.perf_counter() - started
        if getattr(model, "failed_clips", 0):  # an unanswered clip scored as "no interruption" would be a guess
            raise SidClipsFailed(model.failed_clips, len(names), model.errors[0])
        calls = model.calls
        description = redact(model.describe())
    run = RunDir(out)
    if run.path.exists() and not run.path.is_dir():
        raise UsageError(f"--out: {run.path} is a file, not a run folder")
    with run.writing():
        return _write_run(run, data, config, predictions, references, description, calls, seconds, detector, tolerance)


def _write_run(run: RunDir, data, config, predictions, references, description, calls, seconds, detector,
               tolerance) -> dict:
    from .evaluate_sid import plot_timing_histogram, score_both, timing_errors
    from .predictions import write_predictions

    out = run.path
    write_predictions(predictions, out / "predictions.jsonl")
    audio_seconds = sum(r["duration"] for r in references)
    errors = timing_errors(predictions, references)
    plot_timing_histogram(errors, out / "timing_errors.png", tolerance=tolerance, title=f"{detector or 'predictions'} on {config}")
    scores = score_both(predictions, references, tolerance=tolerance)
    summary = SidSummary(
        data=str(data), config=config, detector=description, n_clips=len(references), tolerance=tolerance,
        scores={name: SidScore.from_json(result, f"scores.{name}") for name, result in scores.items()},
        model_calls=calls, model_calls_per_clip=None if calls is None else calls / len(references),
        seconds=seconds, audio_seconds=audio_seconds,
        real_time_factor=None if seconds is None else seconds / audio_seconds,
        timing_errors={"n": len(errors), "median": sorted(errors)[len(errors) // 2] if errors else None},
    ).to_json()
    write_json_atomic(run.summary_path, json.loads(json.dumps(summary, default=str)))
    return summary
