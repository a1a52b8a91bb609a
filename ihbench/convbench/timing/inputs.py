"""The run folder's inputs, read into one shape whichever log the recorder wrote.

`events.jsonl` (ours; schema in the package docstring) carries the turn of every tag, onset and
retry, so rows are mapped to turns by index; `run.log` (the reference's) is read with exactly
the reference's patterns and keeps its tag-order mapping. Problems a user can cause (a mono or
non-audio WAV, a malformed line) raise one-line errors naming the file and line.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ihbench.dataset.audio import AudioError
from ihbench.dataset.errors import UsageError
from ihbench.dataset.io.json_object import json_problem

EVENTS = ("bot_tag", "bot_onset", "user_audio_queued", "baseline", "retry", "reconnection", "greeting_timeout")
RETRY_REASONS = ("empty_response", "no_response")


@dataclass(frozen=True)
class Recording:
    user: np.ndarray  # channel 0
    bot: np.ndarray  # channel 1
    rate: int


@dataclass(frozen=True)
class Mark:
    """A logged position on the recording (ms from its start); `turn` is None in run.log and for
    the greeting in events.jsonl."""

    ms: float
    turn: Optional[int] = None


@dataclass
class RunLog:
    source: str  # "events.jsonl" or "run.log"
    bot_tags: list[Mark] = field(default_factory=list)
    user_tags: list[Mark] = field(default_factory=list)  # legacy run.log lines only
    onsets: list[Mark] = field(default_factory=list)
    retries: dict[int, list[str]] = field(default_factory=dict)  # turn -> reasons in log order
    first_user_end: dict[int, float] = field(default_factory=dict)  # turn -> monotonic s, first queueing
    baseline: Optional[float] = None  # monotonic s at the recording's first sample
    greeting_timeout: bool = False

    @property
    def turn_indexed(self) -> bool:
        return self.source == "events.jsonl"


def read_conversation(path: Path) -> Recording:
    """Channel 0 the user, channel 1 the bot, as float in [-1, 1) at the file's rate: int16 / 32768
    as the reference reads it, through libsndfile, which also reads the 0xFFFFFFFF sizes a
    streaming recorder leaves. Read as int16 first: half a 30-minute call's memory."""
    import soundfile

    try:
        data, rate = soundfile.read(str(path), dtype="int16", always_2d=True)
    except Exception as error:  # libsndfile raises its own error (a RuntimeError) for non-audio input
        raise AudioError(f"{path}: not a readable audio file ({error})") from error
    if data.shape[1] != 2:
        raise AudioError(f"{path}: {data.shape[1]} channel(s); a speech-to-speech conversation.wav is stereo "
                         "(channel 0 the user, channel 1 the bot)")
    if data.shape[0] == 0:
        raise AudioError(f"{path}: no audio (0 samples)")
    user, bot = (data[:, k].astype(np.float32) / 32768 for k in (0, 1))
    return Recording(user, bot, int(rate))


def read_transcript(path: Path) -> dict[int, dict]:
    """{turn: line}; a missing transcript leaves the transcript fields null, as in the reference."""
    turns = {}
    for number, line in _lines(path):
        entry = _json_object(line, path, number)
        turns[entry.get("turn", -1)] = entry
    return turns


def read_events(path: Path, rate: int) -> RunLog:
    log = RunLog("events.jsonl")
    for number, line in _lines(path):
        entry = _json_object(line, path, number)
        where = f"{path}:{number}"
        kind = entry.get("event")
        if kind not in EVENTS:
            raise UsageError(f"{where}: event {kind!r} is not one of {', '.join(EVENTS)}")
        if kind in ("bot_tag", "bot_onset"):
            target = log.bot_tags if kind == "bot_tag" else log.onsets
            target.append(Mark(_position(entry, rate, where), _turn(entry, where, optional=True)))
        elif kind == "user_audio_queued":
            log.first_user_end.setdefault(_turn(entry, where), _number(entry, "predicted_end", where))
        elif kind == "baseline":
            if log.baseline is None:
                log.baseline = _number(entry, "monotonic", where)
        elif kind == "retry":
            reason = entry.get("reason")
            if reason not in RETRY_REASONS:
                raise UsageError(f"{where}: retry reason {reason!r} is not one of {', '.join(RETRY_REASONS)}")
            log.retries.setdefault(_turn(entry, where), []).append(reason)
        elif kind == "reconnection":
            log.retries.setdefault(_turn(entry, where), []).append("reconnection")
        else:
            log.greeting_timeout = True
    return log


# The reference's patterns (§4.1), searched anywhere in a line.
_BOT_TAG = re.compile(r"Bot turn tag: sample_pos=(\d+)ms")
_USER_TAG = re.compile(r"User turn tag: sample_pos=(\d+)ms")
_ONSET = re.compile(r"Bot speech onset: T\+\d+ms \(sample_pos=(\d+)ms, silent_padding=(\d+)ms, rms=([0-9.-]+)dB\)")
_RETRIES = ((re.compile(r"\[EMPTY_RESPONSE\] turn=(\d+) retry_count=(\d+)"), "empty_response"),
            (re.compile(r"\[NO_RESPONSE\] turn=(\d+) retry_count=(\d+)"), "no_response"),
            (re.compile(r"Gemini reconnected: scheduling turn (\d+) retry"), "reconnection"))
_QUEUED = re.compile(r"\[USER_AUDIO_QUEUED\] turn=(\d+) predicted_end=([0-9.]+)")
_BASELINE = re.compile(r"Recording baseline set at monotonic=([0-9.]+)")
_GREETING_TIMEOUT = "[TURN_FAILURE] Greeting did not complete"


def read_run_log(path: Path) -> RunLog:
    log = RunLog("run.log")
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if match := _BOT_TAG.search(line):
                log.bot_tags.append(Mark(int(match.group(1))))
            if match := _USER_TAG.search(line):
                log.user_tags.append(Mark(int(match.group(1))))
            if match := _ONSET.search(line):
                log.onsets.append(Mark(int(match.group(1))))
            for pattern, reason in _RETRIES:
                if match := pattern.search(line):
                    log.retries.setdefault(int(match.group(1)), []).append(reason)
            if match := _QUEUED.search(line):
                log.first_user_end.setdefault(int(match.group(1)), float(match.group(2)))
            if log.baseline is None and (match := _BASELINE.search(line)):
                log.baseline = float(match.group(1))
            if _GREETING_TIMEOUT in line:
                log.greeting_timeout = True
    return log


def _lines(path: Path):
    if not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as handle:  # a bad byte fails its line, not the read
        for number, line in enumerate(handle, 1):
            if line.strip():
                yield number, line


def _json_object(line: str, path: Path, number: int) -> dict:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{number}: not a JSON line ({json_problem(error, 'column')})") from None
    if not isinstance(entry, dict):
        raise UsageError(f"{path}:{number}: expected a JSON object, got {type(entry).__name__}")
    return entry


def _number(entry: dict, key: str, where: str) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"{where}: {key!r} must be a number, got {value!r}")
    return value


def _turn(entry: dict, where: str, *, optional: bool = False) -> Optional[int]:
    value = entry.get("turn")
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"{where}: 'turn' must be a turn index (an integer >= 0), got {value!r}")
    return value


def _position(entry: dict, rate: int, where: str) -> float:
    """ms from the recording's start: `sample_pos_ms`, or `sample_pos` in samples at the WAV rate."""
    if ("sample_pos_ms" in entry) == ("sample_pos" in entry):
        raise UsageError(f"{where}: give exactly one of 'sample_pos_ms' (ms) and 'sample_pos' (samples)")
    if "sample_pos_ms" in entry:
        return _number(entry, "sample_pos_ms", where)
    value = entry["sample_pos"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"{where}: 'sample_pos' must be a sample index (an integer >= 0), got {value!r}")
    return value * 1000 / rate
