"""SID-Bench's prediction files, and joining them to the ground truth by audio file.

A prediction row is `{"audio": "<file>.wav", "total_nonbreak": bool, "break_time": seconds}`, with
`break_time == -1` on "no break" (SID-Bench's reference notebook reads exactly this). Scores are
only meaningful on the same clips as the truth, so `align` refuses any mismatch instead of
scoring the overlap.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path, PurePath
from typing import Iterable, Union

from ihbench.dataset.errors import IHBenchError
from ihbench.dataset.io import write_atomic
from ihbench.dataset.sid import PREDICTION_FIELDS, row_problem

_MAX_LISTED = 10
#: how far past its clip's end a predicted break may fall: a streaming detector that waits out
#: trailing silence answers a few seconds after the end (SID-Bench's own fallback is 3 s of silence);
#: further out is a unit slip (ms for s) on that row, which would swamp every mean
AFTER_END_SLACK_S = 10.0


class PredictionFormatError(IHBenchError, ValueError):
    """A prediction file or row that cannot be scored; the message names file/row and field."""


class PredictionMismatchError(IHBenchError, ValueError):
    """Predictions and references are not about the same clips."""


def _problem(row) -> str | None:
    return row_problem(row, prediction=True)


def normalise(row: dict) -> dict:
    """Just the three fields, with -1 on "no break" whatever the detector put there."""
    nonbreak = bool(row["total_nonbreak"])
    return {"audio": str(row["audio"]), "total_nonbreak": nonbreak,
            "break_time": -1.0 if nonbreak else float(row["break_time"])}


def read_predictions(path: Union[str, os.PathLike], references: Iterable[dict] = ()) -> list[dict]:
    """The rows; with `references` (rows with `audio` and `duration`), a break later than its clip's
    duration plus `AFTER_END_SLACK_S` is refused naming the line."""
    from ihbench.dataset.sid import checked_jsonl

    path = Path(path)
    durations = {audio_key(row["audio"]): row["duration"] for row in references if row.get("duration") is not None}
    rows = []
    for number, row in checked_jsonl(path, _problem, PredictionFormatError):
        duration = durations.get(audio_key(row["audio"]))
        if duration is not None and not row["total_nonbreak"] and row["break_time"] > duration + AFTER_END_SLACK_S:
            raise PredictionFormatError(
                f"{path} line {number}: break_time {row['break_time']:g} s is past the end of {row['audio']} "
                f"({duration:g} s long) by more than {AFTER_END_SLACK_S:g} s; a time in milliseconds?")
        rows.append({name: row[name] for name in PREDICTION_FIELDS})
    if not rows:
        raise PredictionFormatError(f"{path}: no predictions")
    return rows


def write_predictions(predictions: Iterable[dict], path: Union[str, os.PathLike]) -> Path:
    """Written to a temporary file and renamed, so a crash never leaves a truncated file to score."""
    path = Path(path)
    rows = []
    for index, row in enumerate(predictions):
        problem = _problem(row)
        if problem:
            raise PredictionFormatError(f"predictions[{index}]: {problem}")
        rows.append(json.dumps(normalise(row), ensure_ascii=False))
    return write_atomic(path, "".join(f"{line}\n" for line in rows))


def audio_key(name: str) -> str:
    """The file name alone: references may carry full paths, prediction files carry names."""
    return PurePath(str(name)).name


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown + (f", ... ({len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else "")


def _duplicates(rows: list[dict], what: str) -> list[str]:
    counts = Counter(audio_key(row["audio"]) for row in rows)
    repeated = sorted(name for name, count in counts.items() if count > 1)
    if not repeated:
        return []
    return [f"{len(repeated)} audio name(s) appear more than once in the {what}: "
            f"{_listed([f'{name} (x{counts[name]})' for name in repeated])}"]


def _missing_field(rows: list[dict], what: str) -> None:
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not row.get("audio"):
            raise PredictionMismatchError(f"{what}[{index}]: no audio name to join on")


def align(predictions: list[dict], references: list[dict]) -> list[dict]:
    """Predictions reordered to match `references` (both need `audio`); any missing, extra or
    duplicated audio name is an error that names them and counts them."""
    _missing_field(predictions, "predictions")
    _missing_field(references, "references")
    problems = _duplicates(predictions, "predictions") + _duplicates(references, "references")
    by_name = {audio_key(row["audio"]): row for row in predictions}
    wanted = [audio_key(row["audio"]) for row in references]
    missing = [name for name in dict.fromkeys(wanted) if name not in by_name]
    extra = sorted(set(by_name) - set(wanted))
    if missing:
        problems.append(f"{len(missing)} reference clip(s) have no prediction: {_listed(missing)}")
    if extra:
        problems.append(f"{len(extra)} prediction(s) are for clips not in the references: {_listed(extra)}")
    if problems:
        raise PredictionMismatchError(f"predictions ({len(predictions)} rows) do not match references "
                                      f"({len(references)} rows): " + "; ".join(problems))
    return [by_name[name] for name in wanted]
