"""The turn-taking judge: the interface a model implements, and the likelihood files it writes.

Talking Turns scores a conversation with a judge model trained on human-human speech: for every
40 ms chunk it gives five likelihoods of what a human would do next, in the order
**C, NA, I, BC, T** (continue, silence, interrupt, backchannel, take the turn). No judge model
runs here; this module fixes how one plugs in:

- in Python, subclass `TurnTakingJudge` and pass it to `run_turns(..., judge=...)`;
- from any tool (the ESPnet recipe, a notebook), write `--judge-likelihoods FILE`:
  - `.npz`: one array per recording, keyed by the recording's name, each of shape (n_chunks, 5);
  - `.npy`: one array of shape (n_chunks, 5), only when a single recording is analysed;
  - `.jsonl`: one line per recording, `{"recording": NAME, "likelihoods": [[C, NA, I, BC, T], ...]}`.

Row i belongs to the chunk ending at 0.24 + 0.04 i seconds, i.e. to `end_times[i]` of the
recording's `events.json`; a recording has as many rows as end times (one per whole 40 ms chunk
after the judge's first 0.2 s of context). Values must be finite numbers.
"""
from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import json_lines, write_atomic

JUDGE_ORDER = ("C", "NA", "I", "BC", "T")


class JudgeFileError(UsageError):
    """A likelihoods file that cannot be used; the message names the file, recording and row."""


class TurnTakingJudge(ABC):
    """What a judge model implements to score `ihbench turns` recordings."""

    name: str = "judge"

    @abstractmethod
    def likelihoods(self, a_channel: np.ndarray, b_channel: np.ndarray, sampling_rate: int) -> np.ndarray:
        """(n_chunks, 5) likelihoods in the order C, NA, I, BC, T for one conversation.

        `a_channel` is the AI system and `b_channel` the user, float32 mono of equal length (the
        Talking Turns judge hears their mix). Row i describes the chunk ending at 0.24 + 0.04 i s
        and may only use audio up to that time: the judge predicts, it does not look ahead.
        """


def check_likelihoods(array, n_chunks: Optional[int], where: str) -> np.ndarray:
    """(n_chunks, 5) finite float64, or an error naming `where` and the first bad row; with
    `n_chunks` None any number of rows (the recording's length is not known yet)."""
    try:
        array = np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        for number, row in enumerate(array if isinstance(array, (list, tuple)) else []):
            numbers = isinstance(row, (list, tuple)) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)
            if not numbers or len(row) != len(JUDGE_ORDER):
                raise JudgeFileError(f"{where}: row {number}: expected 5 numbers (C, NA, I, BC, T), "
                                     f"got {json.dumps(row)[:80]}") from None
        raise JudgeFileError(f"{where}: expected rows of 5 numbers (C, NA, I, BC, T)") from None
    if array.ndim != 2 or array.shape[1] != len(JUDGE_ORDER):
        raise JudgeFileError(f"{where}: expected shape (n_chunks, 5) in the order C, NA, I, BC, T, got {array.shape}")
    if n_chunks is not None and array.shape[0] != n_chunks:
        raise JudgeFileError(f"{where}: {array.shape[0]} rows, but the recording has {n_chunks} chunks of 40 ms "
                             f"(first ending at 0.24 s; `ihbench turns` without --judge-likelihoods writes their end "
                             "times, end_times, to the recording's events.json)")
    bad = np.argwhere(~np.isfinite(array))
    if bad.size:
        row, column = bad[0]
        raise JudgeFileError(f"{where}: row {row}: likelihood of {JUDGE_ORDER[column]} is not a finite number")
    outside = np.argwhere((array < 0) | (array > 1))  # a likelihood is a share: logits or percentages change every score
    if outside.size:
        row, column = outside[0]
        percent = 1 < array.max() <= 100 and array.min() >= 0
        raise JudgeFileError(f"{where}: row {row}: likelihood of {JUDGE_ORDER[column]} is {array[row, column]:g}, "
                             "outside [0, 1]" + ("; percentages? give them divided by 100" if percent else
                                                 "; logits? give the probabilities (a sigmoid of them)"))
    return array


def _jsonl(path: Path) -> dict[str, object]:
    rows: dict[str, object] = {}
    for number, record in json_lines(path, JudgeFileError, where="{path}:{number}"):
        where = f"{path}:{number}"
        if not isinstance(record, dict) or not isinstance(record.get("recording"), str):
            raise JudgeFileError(f"{where}: expected {{\"recording\": NAME, \"likelihoods\": [[C, NA, I, BC, T], ...]}}")
        if not isinstance(record.get("likelihoods"), list):
            raise JudgeFileError(f"{where}: field 'likelihoods' must be a list of rows of 5 numbers")
        if record["recording"] in rows:
            raise JudgeFileError(f"{where}: recording {record['recording']!r} appears twice")
        rows[record["recording"]] = record["likelihoods"]
    return rows


def read_likelihood_file(path) -> dict[str, object]:
    """{recording name or None (a bare .npy): raw rows}, read without knowing the recordings yet,
    so a broken file fails before any audio is analysed."""
    path = Path(path)
    if not path.is_file():
        raise JudgeFileError(f"{path}: judge likelihoods file not found")
    suffix = path.suffix.lower()
    magic = {".npy": b"\x93NUMPY", ".npz": b"PK"}.get(suffix)
    if magic is not None:
        with open(path, "rb") as file:
            if not file.read(len(magic)) == magic:  # else numpy tries it as a pickle, and says so
                raise JudgeFileError(f"{path}: not a NumPy {suffix} file (it does not start as one)")
    try:
        if suffix == ".npy":
            return {None: np.load(path, allow_pickle=False)}
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                return {name: archive[name] for name in archive.files}
    except (ValueError, OSError, EOFError) as error:
        why = "it holds Python objects, not numbers" if "pickle" in str(error) else str(error)
        raise JudgeFileError(f"{path}: cannot read as {suffix} ({why})") from None
    if suffix in (".jsonl", ".json"):
        return _jsonl(path)
    raise JudgeFileError(f"{path}: unknown format {suffix!r}; use .npz (one array per recording), "
                         ".npy (one recording) or .jsonl")


def check_likelihood_file(raw: Mapping, path, recordings: Sequence[str]) -> None:
    """Everything about a likelihoods file that does not need the audio: rows for each recording
    named, rows of 5 finite numbers. Called before any audio is analysed or any folder made; the
    number of rows is checked against each recording's chunks once its length is known."""
    likelihoods_for(raw, path, {name: None for name in recordings})


def likelihoods_for(raw: Mapping, path, chunks: Mapping[str, Optional[int]]) -> dict[str, np.ndarray]:
    """Checked (n_chunks, 5) arrays for exactly the recordings analysed ({name: n_chunks})."""
    if None in raw:
        if len(chunks) != 1:
            raise JudgeFileError(f"{path}: a .npy file holds one recording, but {len(chunks)} were given; "
                                 "use .npz or .jsonl keyed by recording")
        raw = {next(iter(chunks)): raw[None]}
    missing = [name for name in chunks if name not in raw]
    if missing:
        raise JudgeFileError(f"{path}: no likelihoods for recording(s) {', '.join(map(repr, missing))}; "
                             f"it has {', '.join(map(repr, sorted(raw))) or 'none'}")
    return {name: check_likelihoods(raw[name], n, f"{path}: recording {name!r}") for name, n in chunks.items()}


def run_judge(judge: TurnTakingJudge, recording) -> np.ndarray:
    """A judge's likelihoods for one `TwoChannel` recording, checked like a file's."""
    from ihbench.dataset.floor import chunk_end_times
    from ihbench.dataset.schema import SAMPLING_RATE

    n_chunks = len(chunk_end_times(recording.duration))
    return check_likelihoods(judge.likelihoods(recording.a, recording.b, SAMPLING_RATE), n_chunks,
                             f"judge {getattr(judge, 'name', type(judge).__name__)}: recording {recording.name!r}")


def write_likelihoods_jsonl(path, likelihoods: Mapping[str, np.ndarray]) -> None:
    """The .jsonl format above, e.g. to keep a judge's output beside its run."""
    lines = []
    for name, rows in likelihoods.items():
        values = [[float(v) if math.isfinite(v) else None for v in row] for row in np.asarray(rows).tolist()]
        lines.append(json.dumps({"recording": name, "likelihoods": values}) + "\n")
    write_atomic(path, "".join(lines))
