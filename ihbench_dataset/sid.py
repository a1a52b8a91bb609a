"""SID-Bench (Semantic Interruption Detection) as three configs of a local HF dataset.

SID-Bench ships as a folder of WAVs plus one ground-truth jsonl per split
(`test_wavs/{en_test_lines,zh_test_lines,silence_noise_test}.jsonl`). Importing it into the same
kind of directory `ihbench build` writes lets every tool open it with `load_dataset(dir, "sid_en")`
offline, and lets detectors run on the very clips the scores refer to.

Quirks kept as they are in the source files, because the published numbers were computed on them:
non-break rows carry `break_time == duration` (predictions use -1), most non-break texts still end
in `<break>`, and 31 rows of the English split hold Mandarin clips.
"""
from __future__ import annotations

from ihbench_dataset.errors import IHBenchError, UsageError
from ihbench_dataset.locks import exclusive, lock_file_for
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

from .audio import audio_duration, decode_audio
from .schema import SAMPLING_RATE

SPLIT = "test"
#: config name -> (ground-truth file, WAV directory), in SID-Bench's own layout
SID_CONFIGS: dict[str, tuple[str, str]] = {
    "sid_en": ("en_test_lines.jsonl", "en"),
    "sid_zh": ("zh_test_lines.jsonl", "zh"),
    "sid_noise": ("silence_noise_test.jsonl", "silence_or_noise"),
}
FIELDS = ("audio", "total_nonbreak", "duration", "break_time", "text_with_break")
REFERENCE_FIELDS = ("total_nonbreak", "break_time", "duration")
PARQUET_NAME = f"{SPLIT}-00000-of-00001.parquet"
_ROWS_PER_GROUP = 64  # bounded memory: a noise clip can be three minutes long
_MAX_LISTED = 5
_DURATION_SLACK_S = 0.1

PathLike = Union[str, os.PathLike]


class SidFormatError(IHBenchError, ValueError):
    """The SID-Bench folder cannot be used; the message names the file and the line."""


class SidConfigs(dict):
    """`{config: rows}` that also carries what the reader skipped, so callers can say so."""

    def __init__(self, *args, notes: Optional[list[str]] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.notes: list[str] = list(notes or [])


# --- reading ---------------------------------------------------------------------------------

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
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as decode_error:
                raise error(f"{path} line {number}: not valid JSON ({decode_error.msg})") from None
            message = problem(row)
            if message:
                raise error(f"{path} line {number}: {message}")
            yield number, row


def read_sid_annotations(path: PathLike) -> list[dict]:
    """One ground-truth jsonl, validated, with `line` kept so later errors can point back to it.

    No WAV is needed, so the shipped annotation files alone can be scored against predictions.
    """
    path = Path(path)
    rows, seen = [], {}
    for number, row in checked_jsonl(path, row_problem, SidFormatError):
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
    for folder in (root / "test_wavs", root):
        if (folder / name).is_file():
            return folder / name
    return None


def _wav_directory(root: Path, annotations: Path, subdir: str) -> Optional[Path]:
    """SID-Bench keeps WAVs beside the jsonl in `test_wavs/`; a flattened copy may have them under root."""
    for folder in (annotations.parent / subdir, root / "test_wavs" / subdir, root / subdir):
        if folder.is_dir():
            return folder
    return None


def _attach_wavs(rows: list[dict], annotations: Path, wav_dir: Optional[Path]) -> list[dict]:
    """Every row's WAV must exist: a partial download would otherwise score on fewer clips, silently."""
    missing = [row for row in rows if wav_dir is None or not (wav_dir / row["audio"]).is_file()]
    if missing:
        where = f"in {wav_dir}" if wav_dir else f"(no WAV directory found for {annotations.name})"
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
        rows = read_sid_annotations(annotations)
        configs[config] = _attach_wavs(rows, annotations, _wav_directory(root, annotations, subdir))
    if not configs:
        expected = ", ".join(name for name, _ in SID_CONFIGS.values())
        raise SidFormatError(f"{root}: no SID-Bench annotation file found (expected one of {expected} "
                             f"in {root / 'test_wavs'} or {root})")
    return configs


# --- importing -------------------------------------------------------------------------------

def sid_features():
    import datasets

    return datasets.Features({
        "audio": datasets.Audio(sampling_rate=SAMPLING_RATE),
        "audio_file": datasets.Value("string"),
        "total_nonbreak": datasets.Value("bool"),
        "duration": datasets.Value("float64"),
        "break_time": datasets.Value("float64"),
        "text_with_break": datasets.Value("string"),
    })


def _wav_bytes(row: dict, annotations: str) -> tuple[bytes, float]:
    """The file's own bytes (the benchmark is defined on them) and its duration from the header."""
    path = Path(row["audio"])
    data = path.read_bytes()
    try:
        duration = audio_duration(data)
    except Exception as error:  # libsndfile and FFmpeg raise different types
        raise SidFormatError(f"{annotations} line {row['line']}: {path} is not a readable audio file "
                             f"({type(error).__name__}: {error})") from None
    return data, duration


def _arrow_rows(rows: list[dict], annotations: str, mismatched: list[str]) -> list[dict]:
    arrow = []
    for row in rows:
        data, duration = _wav_bytes(row, annotations)
        name = PurePath(row["audio"]).name
        if abs(duration - row["duration"]) > _DURATION_SLACK_S:
            mismatched.append(f"{name} ({duration:.3f}s, listed {row['duration']}s)")
        arrow.append({"audio": {"bytes": data, "path": name}, "audio_file": name,
                      "total_nonbreak": row["total_nonbreak"], "duration": row["duration"],
                      "break_time": row["break_time"], "text_with_break": row["text_with_break"]})
    return arrow


def _write_parquet(rows: list[dict], target: Path, annotations: str, progress) -> list[str]:
    """Row groups of a few dozen clips, so a split with three-minute noise clips never sits in memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = sid_features().arrow_schema
    mismatched: list[str] = []
    with pq.ParquetWriter(str(target), schema) as writer:
        for start in range(0, len(rows), _ROWS_PER_GROUP):
            chunk = rows[start:start + _ROWS_PER_GROUP]
            writer.write_table(pa.Table.from_pylist(_arrow_rows(chunk, annotations, mismatched), schema=schema))
            progress.update(len(chunk))
    return mismatched


def _duration_note(config: str, mismatched: list[str]) -> list[str]:
    if not mismatched:
        return []
    listed = ", ".join(mismatched[:_MAX_LISTED]) + (", ..." if len(mismatched) > _MAX_LISTED else "")
    return [f"{config}: {len(mismatched)} WAV(s) differ from the listed duration by more than "
            f"{_DURATION_SLACK_S}s (scores use the listed one): {listed}"]


def import_sid(root: PathLike, out_dir: PathLike, *, progress: bool = True) -> dict:
    """Write SID-Bench's configs into `out_dir` (a new directory or an ihbench build) and list them
    in its README, so `load_dataset(out_dir, "sid_en", split="test")` opens them offline.

    Everything is read and checked before anything is replaced; each Parquet is written to a
    temporary file and renamed only once every config is complete.
    """
    configs = read_sid_folder(root)
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with exclusive(lock_file_for(out), f"dataset directory {out}"):  # one writer: not during a build
        return _import_locked(root, out, configs, progress)


def _import_locked(root, out: Path, configs, progress: bool) -> dict:
    from tqdm.auto import tqdm

    annotations = {config: str(_annotation_file(Path(root), SID_CONFIGS[config][0])) for config in configs}
    notes, written = list(configs.notes), {}
    try:
        with tqdm(total=sum(map(len, configs.values())), unit="clip", desc="importing SID-Bench",
                  disable=not progress) as bar:
            for config, rows in configs.items():
                (out / config).mkdir(exist_ok=True)
                written[config] = out / config / f".{PARQUET_NAME}.tmp-{os.getpid()}"
                notes += _duration_note(config, _write_parquet(rows, written[config], annotations[config], bar))
        for config, temporary in written.items():
            os.replace(temporary, out / config / PARQUET_NAME)
    finally:
        _clean_up(written.values())
    update_readme_configs(out / "README.md", list(configs))
    return {"out": str(out), "configs": {config: len(rows) for config, rows in configs.items()},
            "split": SPLIT, "notes": notes}


def _clean_up(temporaries) -> None:
    """Remove leftovers of a failed import, and the config folders it created for nothing."""
    for temporary in temporaries:
        temporary.unlink(missing_ok=True)
        if not any(temporary.parent.iterdir()):
            temporary.parent.rmdir()


# --- README configs --------------------------------------------------------------------------

def _new_readme_body(configs: Sequence[str]) -> str:
    return ("\n# SID-Bench (imported)\n\nSemantic Interruption Detection benchmark "
            "(https://huggingface.co/datasets/kxxia/SID-bench), imported by `ihbench_dataset.sid.import_sid`. "
            "Configs: " + ", ".join(f"`{c}`" for c in configs) + f"; split `{SPLIT}`.\n")


def update_readme_configs(readme: PathLike, configs: Sequence[str]) -> None:
    """Add or replace only these configs' entries in the card's metadata, read and written by
    huggingface_hub's own card classes; the card's text, other keys and other configs stay, so an
    ihbench build's card keeps its own configs, default and text."""
    from huggingface_hub import DatasetCard

    readme = Path(readme)
    text = readme.read_text(encoding="utf-8") if readme.is_file() else _new_readme_body(configs)
    card = DatasetCard(text)
    kept = [entry for entry in card.data.get("configs") or [] if entry.get("config_name") not in configs]
    ours = [{"config_name": config, **({"default": True} if not kept and index == 0 else {}),
             "data_files": [{"split": SPLIT, "path": f"{config}/{SPLIT}-*"}]} for index, config in enumerate(configs)]
    card.data.configs = kept + ours
    _atomic_write(readme, str(card))


def _atomic_write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with temporary.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


# --- iterating a config ----------------------------------------------------------------------

@dataclass
class SidClips(Sequence):
    """Clips decoded on demand (16 kHz mono float32): a whole split would not fit in memory.

    `sources` holds WAV paths, or a lazy view of a dataset's embedded bytes."""

    sources: Sequence[Union[str, bytes]]
    names: list[str]

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return SidClips([self.sources[i] for i in range(len(self))[index]], self.names[index])
        return decode_audio(self.sources[index], SAMPLING_RATE)

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[index] for index in range(len(self)))


class _EmbeddedAudio(Sequence):
    """One clip's bytes at a time from the Arrow table, never the whole column."""

    def __init__(self, dataset):
        import datasets

        self.dataset = dataset.select_columns(["audio"]).cast_column("audio", datasets.Audio(decode=False))

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index):
        audio = self.dataset[index]["audio"]
        return audio["bytes"] if audio["bytes"] is not None else audio["path"]


def _reference(row: dict, name: str) -> dict:
    return {"audio": name, **{field: row[field] for field in REFERENCE_FIELDS}}


def _from_dataset(dataset) -> tuple[list[dict], SidClips]:
    if "audio_file" in dataset.column_names:
        names = list(dataset["audio_file"])
    else:  # a Dataset built elsewhere: fall back on the embedded file names
        names = [PurePath(row["audio"]["path"] or "").name for row in _EmbeddedAudio(dataset).dataset]
    fields = dataset.select_columns(list(REFERENCE_FIELDS))
    references = [_reference(row, name) for row, name in zip(fields, names)]
    return references, SidClips(_EmbeddedAudio(dataset), names)


def _from_sid_folder(rows: list[dict]) -> tuple[list[dict], SidClips]:
    references = [_reference(row, PurePath(row["audio"]).name) for row in rows]
    return references, SidClips([row["audio"] for row in rows], [r["audio"] for r in references])


def sid_rows(dataset_or_dir: Any, config: str = "sid_en") -> tuple[list[dict], SidClips]:
    """(references, clips) of one config, from an imported dataset directory, a raw SID-Bench folder
    or a loaded `Dataset`. References are what the fir/irl/apt modules take, plus `audio` (the file
    name) so predictions can be joined to them."""
    import datasets

    if isinstance(dataset_or_dir, datasets.DatasetDict):
        dataset_or_dir = dataset_or_dir[SPLIT]
    if isinstance(dataset_or_dir, datasets.Dataset):
        return _from_dataset(dataset_or_dir)
    root = Path(dataset_or_dir)
    if (root / config).is_dir() and any((root / config).glob("*.parquet")):
        loaded = datasets.load_dataset(str(root.resolve()), config)  # imported sid_* or an in-house sid_dev_*
        return _from_dataset(loaded[SPLIT] if SPLIT in loaded else loaded[next(iter(loaded))])
    built = sorted(d.name for d in root.iterdir() if d.is_dir() and any(d.glob("*.parquet"))) if root.is_dir() else []
    if built:  # a dataset directory without this config: say what it does have
        sid = [name for name in built if name.startswith("sid")]
        raise SidFormatError(f"{root}: the dataset has no config {config!r}; its SID configs: "
                             f"{', '.join(sid) or 'none (run ihbench sid-import or ihbench build)'}; "
                             f"all configs: {', '.join(built)}")
    if config not in SID_CONFIGS:
        raise UsageError(f"config: expected one of {', '.join(SID_CONFIGS)} or a config of the dataset directory, "
                         f"got {config!r}")
    configs = read_sid_folder(root)
    if config not in configs:
        raise SidFormatError(f"{root}: has no {config} (neither an imported {config}/ nor {SID_CONFIGS[config][0]})")
    return _from_sid_folder(configs[config])
