"""`ihbench sid-import`: SID-Bench into Parquet configs of a local dataset folder, listed in its card."""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path, PurePath
from typing import Optional, Sequence

import numpy as np

from ..audio import AudioError, audio_channels, audio_duration, decode_audio, decoder_message
from ..audio_format import SAMPLING_RATE
from ..builddir import BuildDir
from ..io import new_folders
from .read import (
    _DURATION_SLACK_S,
    _MAX_LISTED,
    _ROWS_PER_GROUP,
    SID_CONFIGS,
    SPLIT,
    PathLike,
    SidFormatError,
    _annotation_file,
    read_sid_folder,
)

log = logging.getLogger("ihbench")


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


def _clip_facts(row: dict, annotations: str) -> tuple[float, int, str]:
    """The clip's duration and channels from its header, and a digest of its sound (samples at 16-bit precision: one
    recording saved as PCM or as float is one); every clip is decoded here once, before anything is written."""
    path = Path(row["audio"])
    data = path.read_bytes()
    try:
        duration = audio_duration(data)
    except Exception as error:  # libsndfile and FFmpeg raise different types
        raise SidFormatError(f"{annotations} line {row['line']}: {path} is not a readable audio file "
                             f"({decoder_message(error)})") from None
    if duration <= 0:  # imported, it was a traceback from the decoder when `ihbench sid` reached it
        raise SidFormatError(f"{annotations} line {row['line']}: {path}: no audio (0 samples)")
    try:  # a damaged sample (NaN, infinite) stopped the whole `ihbench sid` run later, naming no clip
        samples = decode_audio(data, SAMPLING_RATE, where=f"{annotations} line {row['line']}: {path}")  # finite
    except AudioError as error:
        raise SidFormatError(str(error)) from None
    sound = hashlib.sha256(np.round(np.clip(samples, -1, 1) * 32767).astype(np.int16).tobytes()).hexdigest()
    return duration, audio_channels(data), sound


#: how far a break time may lie past the audio's end, or a listed duration from the audio's (a rounding, a
#: last frame): more is another clip's annotation
_BEYOND_AUDIO_S = 1.0


class _Copies:
    """Clips that hold the same sound under two names (or two encodings). Said, not refused: SID-Bench's own files are kept as
    published (its scores were computed on them). But a copy labelled otherwise (break and no break) is
    scored against both labels, so one of them is wrong for any detector; and a copy counts twice."""

    def __init__(self):
        self.first: dict[str, tuple[str, str, tuple]] = {}
        self.relabelled: list[str] = []
        self.repeated: list[str] = []

    def see(self, config: str, name: str, digest: str, row: dict) -> None:
        labels = (row["total_nonbreak"], row["break_time"])
        if digest not in self.first:
            self.first[digest] = (config, name, labels)
            return
        other_config, other, other_labels = self.first[digest]
        pair = f"{other_config}/{other} and {config}/{name}"
        (self.relabelled if labels[0] != other_labels[0] else self.repeated).append(pair)

    def warn(self, root) -> None:
        def listed(pairs):
            return "; ".join(pairs[:_MAX_LISTED]) + ("; ..." if len(pairs) > _MAX_LISTED else "")

        if self.relabelled:
            log.warning("%s: %d clip(s) hold the same audio as another but say the opposite of it (break / no "
                        "break), so every detector is scored wrong on one of them: %s", root, len(self.relabelled),
                        listed(self.relabelled))
        if self.repeated:
            log.warning("%s: %d clip(s) hold the same audio as another, and count twice in the scores: %s", root,
                        len(self.repeated), listed(self.repeated))


def _check_clips(rows: list[dict], annotations: str, copies: _Copies, config: str, progress) -> tuple[list, list]:
    """Every clip of a config decoded and held against its annotation, before the dataset is touched (battery 64,
    K12: a clip that was no audio was found while writing, and the refused import had changed the dataset's folder).
    Returns the clips whose length is not the listed duration, and those of more than one channel."""
    mismatched: list[str] = []
    multichannel: list[str] = []
    for row in rows:
        duration, channels, sound = _clip_facts(row, annotations)
        name = PurePath(row["audio"]).name
        copies.see(config, name, sound, row)
        if row["break_time"] > duration + _BEYOND_AUDIO_S:  # a break the audio does not reach: APT would time it
            raise SidFormatError(f"{annotations} line {row['line']}: break_time {row['break_time']} s is past the end "
                                 f"of {name} ({duration:.3f} s of audio); the annotation is not of this file")
        if abs(duration - row["duration"]) > _BEYOND_AUDIO_S:  # scored as listed, every time of it would be wrong
            raise SidFormatError(f"{annotations} line {row['line']}: duration {row['duration']} s, but {name} holds "
                                 f"{duration:.3f} s of audio; the annotation is not of this file")
        if abs(duration - row["duration"]) > _DURATION_SLACK_S:
            mismatched.append(f"{name} ({duration:.3f}s, listed {row['duration']}s)")
        if channels > 1:
            multichannel.append(f"{name} ({channels} channels)")
        progress.update(1)
    return mismatched, multichannel


def _write_parquet(rows: list[dict], target: Path) -> None:
    """Row groups of a few dozen clips, so a split with three-minute noise clips never sits in memory; each clip's
    own bytes (the benchmark is defined on them), checked by `_check_clips`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = sid_features().arrow_schema
    with pq.ParquetWriter(str(target), schema) as writer:
        for start in range(0, len(rows), _ROWS_PER_GROUP):
            writer.write_table(pa.Table.from_pylist([
                {"audio": {"bytes": Path(row["audio"]).read_bytes(), "path": PurePath(row["audio"]).name},
                 "audio_file": PurePath(row["audio"]).name, "total_nonbreak": row["total_nonbreak"],
                 "duration": row["duration"], "break_time": row["break_time"],
                 "text_with_break": row["text_with_break"]} for row in rows[start:start + _ROWS_PER_GROUP]],
                schema=schema))


def _clip_warnings(config: str, annotations: str, mismatched: list[str], multichannel: list[str]) -> None:
    """Clips that are not what their line says are warned of, --quiet or not: scored with the listed
    duration, a clip ten times longer gives times no detector could have met; and SID-Bench's clips
    are mono, so a stereo one is likely not a clip of it (the detectors hear its channels mixed)."""
    def listed(names):
        return ", ".join(names[:_MAX_LISTED]) + (", ..." if len(names) > _MAX_LISTED else "")

    lines = []
    if mismatched:
        lines.append(f"{annotations}: {len(mismatched)} {config} WAV(s) differ from the listed duration by more than "
                     f"{_DURATION_SLACK_S}s (scores use the listed one): {listed(mismatched)}")
    if multichannel:
        lines.append(f"{annotations}: {len(multichannel)} {config} WAV(s) are not mono, as SID-Bench's clips are "
                     f"(the detectors hear their channels mixed): {listed(multichannel)}")
    for line in lines:
        log.warning("%s", line)


def import_sid(root: PathLike, out_dir: PathLike, *, progress: bool = True) -> dict:
    """Write SID-Bench's configs into `out_dir` (a new directory or an ihbench build) and list them
    in its README, so `load_dataset(out_dir, "sid_en", split="test")` opens them offline.

    Everything is read and checked before anything is replaced; each Parquet is written to a
    temporary file and renamed only once every config is complete.
    """
    from tqdm.auto import tqdm

    configs = read_sid_folder(root)
    annotations = {config: str(_annotation_file(Path(root), SID_CONFIGS[config][0])) for config in configs}
    odd_clips, copies = {}, _Copies()
    with tqdm(total=sum(map(len, configs.values())), unit="clip", desc="checking SID-Bench's clips",
              disable=not progress) as bar:
        for config, rows in configs.items():
            odd_clips[config] = _check_clips(rows, annotations[config], copies, config, bar)
    out = BuildDir(Path(out_dir).resolve())
    # one writer (not during a build); a folder made here is removed again if the import fails (a disk full while
    # writing), so a refused import leaves nothing
    with out.writing(), new_folders(out.path):
        written = {}
        try:
            with tqdm(total=len(configs), unit="config", desc="writing SID-Bench", disable=not progress) as bar:
                for config, rows in configs.items():
                    written[config] = out.new_file(config, SPLIT)
                    _write_parquet(rows, written[config])
                    bar.update(1)
        except BaseException:
            out.discard_files(written)  # nothing of this import stays
            raise
        for config, (mismatched, multichannel) in odd_clips.items():  # said once the bars are gone
            _clip_warnings(config, annotations[config], mismatched, multichannel)
        copies.warn(root)
        replaced = [config for config in configs if config in out.config_names()] if out.has_card() else []
        out.install_files(written, SPLIT, lambda files: update_readme_configs(out.card_path, list(configs), files))
    return {"out": str(out.path), "configs": {config: len(rows) for config, rows in configs.items()},
            "split": SPLIT, "notes": list(configs.notes), "replaced": replaced}


def _new_readme_body(configs: Sequence[str]) -> str:
    return ("\n# SID-Bench (imported)\n\nSemantic Interruption Detection benchmark "
            "(https://huggingface.co/datasets/kxxia/SID-bench), imported by `ihbench.dataset.sid.import_sid`. "
            "Configs: " + ", ".join(f"`{c}`" for c in configs) + f"; split `{SPLIT}`.\n")


def update_readme_configs(readme: PathLike, configs: Sequence[str], files: Optional[dict] = None) -> None:
    """Add or replace only these configs' entries in a dataset folder's card (`readme`, its
    README.md); the card's text, other keys and other configs stay, so an ihbench build's card
    keeps its own configs, default and text. The first of these is the default when the card has
    no other config. `files` names each config's file exactly ({config: "config/test-<hash>.parquet"},
    see `content_names.py`); without it the entry is the pattern `config/test-*`."""
    folder = BuildDir(Path(readme).parent)
    others = [name for name in folder.config_names() if name not in configs]
    folder.list_configs([{"config_name": config, **({"default": True} if not others and index == 0 else {}),
                          "data_files": [{"split": SPLIT, "path": (files or {}).get(config, f"{config}/{SPLIT}-*")}]}
                         for index, config in enumerate(configs)], new_card=_new_readme_body(configs))


