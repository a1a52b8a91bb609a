"""Two-channel recordings in: a stereo file, or a pair of mono files, as 16 kHz float32 per channel.

Channel A is the AI system and channel B the user, the convention of `floor.py` and of the metric
module. A stereo file carries A on channel 0 and B on channel 1; a pair is (A file, B file).
`swap=True` reverses either, for recorders that put the caller first. Every problem names the
file, because a batch of fifty recordings with one bad file should say which one.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ihbench.dataset.audio import AudioError, check_samples, decode_file, resample
from ihbench.dataset.errors import UsageError
from ihbench.dataset.floor import CHUNK_SECONDS, FIRST_END
from ihbench.dataset.schema import SAMPLING_RATE

log = logging.getLogger(__name__)

#: Channels of a pair whose lengths differ by more than this get a note (they are zero-padded).
LENGTH_NOTE_S = 0.1


@dataclass(frozen=True)
class TwoChannel:
    """One conversation: `a` (the AI) and `b` (the user), same length, 16 kHz float32."""

    name: str
    a: np.ndarray
    b: np.ndarray
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def duration(self) -> float:
        return self.a.size / SAMPLING_RATE

    @classmethod
    def from_samples(cls, name: str, a: np.ndarray, b: np.ndarray, sampling_rate: int = SAMPLING_RATE,
                     sources: Sequence[str] = ()) -> "TwoChannel":
        """From arrays (a dataset row, a live capture): checked, resampled and padded like a file."""
        where = name
        channels = [_checked(np.asarray(x, dtype=np.float32), f"{where} (channel {role})") for role, x in (("A", a), ("B", b))]
        if sampling_rate <= 0:
            raise UsageError(f"{where}: sampling_rate must be > 0, got {sampling_rate}")
        channels = [resample(x, int(sampling_rate), SAMPLING_RATE) for x in channels]
        a, b, notes = _same_length(channels[0], channels[1], where)
        recording = cls(name, a, b, tuple(map(str, sources)), tuple(notes))
        _check_duration(recording, where)
        return recording


#: the files `ihbench turns` writes at the top of its output, beside one folder per recording: names
#: a recording cannot take (its folder would be where the file goes)
OUTPUT_FILES = ("summary.json",)


def _checked(samples: np.ndarray, where: str) -> np.ndarray:
    if samples.ndim != 1:
        raise AudioError(f"{where}: expected one channel of samples, got shape {samples.shape}")
    if samples.size == 0:
        raise AudioError(f"{where}: no audio (0 samples)")
    return check_samples(samples, where)


def _same_length(a: np.ndarray, b: np.ndarray, where: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Zero-pad the shorter channel: a recorder that stops one side early recorded silence there."""
    notes = []
    if abs(a.size - b.size) / SAMPLING_RATE > LENGTH_NOTE_S:
        notes.append(f"{where}: channel lengths differ ({a.size / SAMPLING_RATE:.2f} s vs "
                     f"{b.size / SAMPLING_RATE:.2f} s); the shorter one is padded with silence")
    if min(a.size, b.size) < max(a.size, b.size) / 2:  # not one call's two sides: said even with --quiet
        log.warning("%s: one side is %.0f s long and the other %.0f s; are these two sides of one call? the "
                    "shorter is taken as silent after its end, which changes every figure", where,
                    a.size / SAMPLING_RATE, b.size / SAMPLING_RATE)
    size = max(a.size, b.size)
    return np.pad(a, (0, size - a.size)), np.pad(b, (0, size - b.size)), notes


def _check_duration(recording: TwoChannel, where: str) -> None:
    if recording.duration < FIRST_END + CHUNK_SECONDS:
        raise AudioError(f"{where}: {recording.duration:.3f} s is too short; the first 40 ms chunk ends at "
                         f"{FIRST_END + CHUNK_SECONDS:.2f} s")


def decode_channels(path: Path) -> np.ndarray:
    """(channels, samples) float32 at 16 kHz; FFmpeg resamples and keeps the channels apart."""
    return decode_file(path, SAMPLING_RATE)


def read_stereo(path, *, swap: bool = False) -> TwoChannel:
    path = Path(path)
    data = decode_channels(path)
    if data.shape[0] != 2:
        hint = "; give mono files in pairs (AI, user) with --pair" if data.shape[0] == 1 else ""
        raise AudioError(f"{path}: {data.shape[0]} channel(s), expected a stereo file (channel 0 the AI, "
                         f"channel 1 the user){hint}")
    a, b = (data[1], data[0]) if swap else (data[0], data[1])
    recording = TwoChannel(path.stem, a, b, (str(path),))
    _check_duration(recording, str(path))
    return recording


def pair_name(a_path: Path, b_path: Path) -> str:
    """`call7_ai.wav` + `call7_user.wav` -> `call7`: the stems' common prefix without trailing
    separators, or the first file's stem when they share none."""
    prefix = os.path.commonprefix([a_path.stem, b_path.stem]).rstrip("_-. ")
    return prefix or a_path.stem


def read_pair(first, second, *, swap: bool = False) -> TwoChannel:
    """`first` is the AI's file and `second` the user's (the reverse with `swap`)."""
    paths = [Path(first), Path(second)]
    channels = []
    for path in paths:
        data = decode_channels(path)
        if data.shape[0] != 1:
            raise AudioError(f"{path}: {data.shape[0]} channels; --pair expects one mono file per speaker")
        channels.append(data[0])
    if swap:
        channels.reverse()
    where = f"{paths[0]} + {paths[1]}"
    a, b, notes = _same_length(channels[0], channels[1], where)
    recording = TwoChannel(pair_name(*paths), a, b, tuple(map(str, paths)), tuple(notes))
    _check_duration(recording, where)
    return recording


def plan_recordings(paths: Sequence, *, pair: bool = False) -> list[tuple[str, tuple[Path, ...]]]:
    """(recording name, its files) for every recording, checked before any audio is decoded, so a
    typo in the last path fails at once rather than after an hour of work."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise UsageError("AUDIO: give at least one recording")
    if pair and len(paths) % 2:
        raise UsageError(f"AUDIO: --pair takes files two by two (AI, user), got an odd number ({len(paths)})")
    groups = [tuple(paths[i:i + 2]) for i in range(0, len(paths), 2)] if pair else [(p,) for p in paths]
    plan, seen = [], {}
    for files in groups:
        for path in files:
            if not path.is_file():
                raise AudioError(f"{path}: file not found")
        if len(files) == 2 and files[0].resolve() == files[1].resolve():  # every sound would be both speakers'
            raise UsageError(f"AUDIO: {files[0]} is given for both channels of a pair (the AI's and the user's); "
                             "--pair takes each speaker's own recording")
        name = pair_name(*files) if pair else files[0].stem
        # "...wav": a folder name of its own would be ".."; "summary.json.wav": the output's own summary file
        if not name.strip(". ") or "/" in name or "\\" in name or name in OUTPUT_FILES:
            raise UsageError(f"AUDIO: {files[0]} makes the recording name {name!r}, which cannot name its output "
                             "folder; rename the file")
        if name in seen:
            raise UsageError(_clash(name, seen[name], files))
        seen[name] = files
        plan.append((name, files))
    return plan


def _clash(name: str, first: tuple, second: tuple) -> str:
    """Two recordings with one name. With --pair the likely cause is the order, not the names: a
    shell glob (`*.wav`) lists every AI file before every user file, so each "pair" is one speaker's
    side of two conversations, and renaming would only hide that."""
    if len(first) == 2:
        return (f"AUDIO: the pairs ({first[0]}, {first[1]}) and ({second[0]}, {second[1]}) both make recording "
                f"{name!r}; --pair reads the files two by two, each conversation's AI file followed by its user "
                "file (call1_ai.wav call1_user.wav call2_ai.wav ...), while a shell glob such as *.wav lists one "
                "speaker's files first: give them in pairs, or, if they are, rename the files so that each pair "
                "shares its own name")
    if Path(second[0]).resolve() == Path(first[0]).resolve():  # one file given twice: renaming is not the remedy
        return f"AUDIO: {second[0]} is given twice (also as {first[0]}); give each recording once"
    return (f"AUDIO: {second[0]} and {first[0]} both make recording {name!r}; recordings are named after their "
            "files, so rename one")


def read_recording(files: Sequence[Path], *, swap: bool = False) -> TwoChannel:
    return read_pair(*files, swap=swap) if len(files) == 2 else read_stereo(files[0], swap=swap)
