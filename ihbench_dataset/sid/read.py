"""SID-Bench's files: the folder layout, the ground-truth rows and their checks.

Quirks kept as they are in the source files, because the published numbers were computed on them:
non-break rows carry `break_time == duration` (predictions use -1), most non-break texts still end
in `<break>`, and 31 rows of the English split hold Mandarin clips.
"""
from __future__ import annotations

import math
import os
from pathlib import Path, PurePath
from typing import Any, Iterator, Optional, Union

from ..errors import IHBenchError
from ..io import json_lines
from ..io.regular import absent, check_inside
from ..redaction import credential_in_data

SPLIT = "test"
#: config name -> (ground-truth file, WAV directory), in SID-Bench's own layout
SID_CONFIGS: dict[str, tuple[str, str]] = {
    "sid_en": ("en_test_lines.jsonl", "en"),
    "sid_zh": ("zh_test_lines.jsonl", "zh"),
    "sid_noise": ("silence_noise_test.jsonl", "silence_or_noise"),
}
FIELDS = ("audio", "total_nonbreak", "duration", "break_time", "text_with_break")
REFERENCE_FIELDS = ("total_nonbreak", "break_time", "duration")
_ROWS_PER_GROUP = 64  # bounded memory: a noise clip can be three minutes long
_MAX_LISTED = 5
_DURATION_SLACK_S = 0.1
#: no clip time is longer than this: a larger one is a unit slip (ms, samples) or garbage, and scored
#: it would swamp every mean (an IRL printed with 300 digits)
MAX_SECONDS = 86_400.0

PathLike = Union[str, os.PathLike]


class SidFormatError(IHBenchError, ValueError):
    """The SID-Bench folder cannot be used; the message names the file and the line."""


class SidConfigs(dict):
    """`{config: rows}` that also carries what the reader skipped, so callers can say so."""

    def __init__(self, *args, notes: Optional[list[str]] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.notes: list[str] = list(notes or [])


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


PREDICTION_FIELDS = ("audio", "total_nonbreak", "break_time")


def row_problem(row: Any, *, prediction: bool = False) -> Optional[str]:
    """Why a parsed line is not a SID-Bench row, or None; checked field by field so the message is
    exact. Ground truth and prediction files share the checks; a prediction has no duration or text,
    and its break may fall after the clip's end (a detector that waited for trailing silence)."""
    if not isinstance(row, dict):
        return f"expected a JSON object, got {type(row).__name__}"
    fields = PREDICTION_FIELDS if prediction else FIELDS
    missing = [name for name in fields if name not in row]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    if not isinstance(row["audio"], str) or not row["audio"].strip():
        return f"audio is absent (got {row['audio']!r}); expected a WAV file name"
    if not isinstance(row["total_nonbreak"], bool):
        return f"total_nonbreak must be true or false, got {row['total_nonbreak']!r}"
    for name in fields:
        if name in ("duration", "break_time") and not _is_number(row[name]):
            return f"{name} must be a finite number, got {row[name]!r}"
        if name in ("duration", "break_time") and abs(row[name]) > MAX_SECONDS:
            return f"{name} must be seconds within a clip (at most {MAX_SECONDS:g}, a day), got {row[name]!r}"
    if prediction:
        if not row["total_nonbreak"] and row["break_time"] < 0:
            return f"break_time {row['break_time']} is negative on a break prediction"
        return None
    if row["duration"] <= 0:
        return f"duration must be > 0, got {row['duration']}"
    if row["break_time"] > row["duration"]:
        return f"break_time {row['break_time']} is past the clip's duration {row['duration']}"
    if row["break_time"] < 0 and not (row["total_nonbreak"] and row["break_time"] == -1):
        return f"break_time must be >= 0 (or -1 on a non-break row), got {row['break_time']}"
    if row["text_with_break"] is not None and not isinstance(row["text_with_break"], str):
        return f"text_with_break must be a string or null, got {type(row['text_with_break']).__name__}"
    return None


def checked_jsonl(path: PathLike, problem, error: type) -> Iterator[tuple[int, dict]]:
    """(line number, row) of a SID-style jsonl; a bad line raises `error` naming file and line.

    Shared by ground-truth and prediction files: both are hand-made by other people's scripts.
    """
    for number, row in json_lines(path, error):
        message = problem(row)
        if message:
            raise error(f"{path} line {number}: {message}")
        yield number, row


def read_sid_annotations(path: PathLike, *, from_a_folder: bool = False) -> list[dict]:
    """One ground-truth jsonl, validated, with `line` kept so later errors can point back to it.

    No WAV is needed, so the shipped annotation files alone can be scored against predictions. `from_a_folder`: the
    rows of a benchmark's folder go into a dataset (sid-import) or name a predictions file's clips (sid), so a
    credential in a clip's name or text is refused, unsaid (battery 64, K11), as build and convbench-import refuse one
    (`redaction.credential_in_data`).
    """
    path = Path(path)
    rows, seen = [], {}
    for number, row in checked_jsonl(path, row_problem, SidFormatError):
        for field in ("audio", "text_with_break") if from_a_folder else ():
            found = credential_in_data(row[field])
            if found:
                raise SidFormatError(f"{path} line {number}: {field} holds {found} (a credential; not shown); a "
                                     "benchmark's clips and texts hold none, and a dataset would publish it")
        if row["audio"] in seen:
            raise SidFormatError(f"{path} line {number}: audio {row['audio']!r} already listed on line "
                                 f"{seen[row['audio']]}")
        seen[row["audio"]] = number
        rows.append({**{name: row[name] for name in FIELDS}, "duration": float(row["duration"]),
                     "break_time": float(row["break_time"]), "line": number})
    if not rows:
        raise SidFormatError(f"{path}: no rows")
    return rows


def _annotation_file(root: Path, name: str) -> Optional[Path]:
    """The lines file, or None when the folder has none; one that is there but is no file (a named
    pipe, a folder) is said as such, not taken for absent and its config skipped."""
    for folder in (root / "test_wavs", root):
        if (folder / name).is_file():
            return folder / name
        if os.path.lexists(folder / name):
            raise SidFormatError(f"{folder / name}: {absent(folder / name)}; SID-Bench's annotations are a JSON lines "
                                 "file: put the file itself there, or remove it to skip its config")
    return None


def _wav_directory(root: Path, annotations: Path, subdir: str) -> Optional[Path]:
    """SID-Bench keeps WAVs beside the jsonl in `test_wavs/`; a flattened copy may have them under root."""
    for folder in (annotations.parent / subdir, root / "test_wavs" / subdir, root / subdir):
        if folder.is_dir():
            return folder
    return None


def _attach_wavs(rows: list[dict], annotations: Path, wav_dir: Optional[Path], subdir: str) -> list[dict]:
    """Every row's WAV must exist: a partial download would otherwise score on fewer clips, silently.
    `subdir` is the WAV folder SID-Bench's layout keeps beside the jsonl, named when none is found."""
    for row in rows:  # a file from elsewhere would be embedded in the dataset (and published) as one of its clips
        name = PurePath(row["audio"])
        if name.is_absolute() or ".." in name.parts:
            raise SidFormatError(f"{annotations} line {row['line']}: audio {row['audio']!r} is not a file name in the "
                                 f"benchmark's WAV folder ({wav_dir or annotations.parent / subdir}); SID-Bench's rows "
                                 "name their WAV there (e.g. \"clip_0001.wav\"): copy the file in and name it so")
    missing = [row for row in rows if wav_dir is None or not (wav_dir / row["audio"]).is_file()]
    odd = [row for row in missing if wav_dir is not None and os.path.lexists(wav_dir / row["audio"])]
    if odd:  # there, but nothing to read as audio
        raise SidFormatError(f"{annotations} line {odd[0]['line']}: {wav_dir / odd[0]['audio']} is "
                             f"{absent(wav_dir / odd[0]['audio'])}")
    if missing:
        # no folder at all: name the one SID-Bench's layout keeps them in (test_wavs/en/ beside the jsonl)
        where = (f"in {wav_dir}" if wav_dir else
                 f"(no WAV folder for {annotations.name}: expected them in {annotations.parent / subdir}/)")
        listed = "; ".join(f"line {row['line']}: {row['audio']}" for row in missing[:_MAX_LISTED])
        more = f"; and {len(missing) - _MAX_LISTED} more" if len(missing) > _MAX_LISTED else ""
        raise SidFormatError(f"{annotations}: {len(missing)} of {len(rows)} WAV file(s) not found {where}: "
                             f"{listed}{more}")
    return [{**row, "audio": str(wav_dir / row["audio"])} for row in rows]


def read_sid_folder(root: PathLike) -> SidConfigs:
    """`{"sid_en": rows, "sid_zh": rows, "sid_noise": rows}` with `audio` as the WAV's path.

    A split whose jsonl is absent is skipped (said in `.notes`), since users often fetch only one
    language; a folder with none of them is not SID-Bench and fails.
    """
    root = Path(root)
    if not root.is_dir():
        raise SidFormatError(f"{root}: not a directory")
    configs = SidConfigs()
    for config, (file_name, subdir) in SID_CONFIGS.items():
        annotations = _annotation_file(root, file_name)
        if annotations is None:
            configs.notes.append(f"{root}: no {file_name}; config {config} skipped")
            continue
        check_inside(annotations, root, SidFormatError)
        rows = read_sid_annotations(annotations, from_a_folder=True)
        wav_dir = _wav_directory(root, annotations, subdir)
        configs[config] = _attach_wavs(rows, annotations, wav_dir, subdir)
        for row in configs[config]:  # the WAV folder too: a language folder linked elsewhere leads out
            check_inside(Path(row["audio"]), root, SidFormatError)
    if not configs:
        expected = ", ".join(name for name, _ in SID_CONFIGS.values())
        raise SidFormatError(f"{root}: no SID-Bench annotation file found (expected one of {expected} "
                             f"in {root / 'test_wavs'} or {root})")
    return configs


