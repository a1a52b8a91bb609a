"""`--transcripts FILE`: word timings per recording and channel, for finding backchannels by word.

JSON lines, one line per recording and channel (either channel may be left out: it then falls
back to the short-IPU heuristic of `ipus.py`):

    {"recording": "call7", "channel": "B", "words": [{"word": "mm-hm", "start": 3.52, "end": 3.81}, ...]}

- `recording`: the recording's name, i.e. the stereo file's stem (`call7.wav` -> `call7`) or,
  for `--pair`, the common prefix of the two stems (`call7_ai.wav` + `call7_user.wav` -> `call7`);
- `channel`: `A` (the AI system) or `B` (the user), after `--swap` is applied;
- `words`: the words of that channel in any order, `start` <= `end` in seconds from the
  recording's start (what an ASR with word timestamps such as WhisperX gives).
"""
from __future__ import annotations

import math
from pathlib import Path

from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import json_lines

CHANNELS = ("A", "B")


class TranscriptError(UsageError):
    """A transcripts file that cannot be used; the message names the file, line and field."""


def _word(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise TranscriptError(f"{where}: expected an object with word, start and end")
    word = value.get("word")
    if not isinstance(word, str):
        raise TranscriptError(f"{where}.word: expected a string, got {word!r}")
    times = []
    for key in ("start", "end"):
        time = value.get(key)
        if isinstance(time, bool) or not isinstance(time, (int, float)) or not math.isfinite(time) or time < 0:
            raise TranscriptError(f"{where}.{key}: expected a number of seconds >= 0, got {time!r}")
        times.append(float(time))
    if times[1] < times[0]:
        raise TranscriptError(f"{where}: end {times[1]} is before start {times[0]}")
    return {"word": word, "start": times[0], "end": times[1]}


def read_transcripts(path) -> dict[tuple[str, str], list[dict]]:
    """{(recording, channel): words}; any malformed line is an error naming it."""
    path = Path(path)
    if not path.is_file():
        raise TranscriptError(f"{path}: transcripts file not found")
    found: dict[tuple[str, str], list[dict]] = {}
    for number, record in json_lines(path, TranscriptError, where="{path}:{number}"):
        where = f"{path}:{number}"
        if not isinstance(record, dict):
            raise TranscriptError(f"{where}: expected an object with recording, channel and words")
        recording, channel, words = record.get("recording"), record.get("channel"), record.get("words")
        if not isinstance(recording, str) or not recording:
            raise TranscriptError(f"{where}: field 'recording' must be the recording's name, got {recording!r}")
        if channel not in CHANNELS:
            raise TranscriptError(f"{where}: field 'channel' must be 'A' (the AI) or 'B' (the user), got {channel!r}")
        if not isinstance(words, list):
            raise TranscriptError(f"{where}: field 'words' must be a list of {{word, start, end}}")
        if (recording, channel) in found:
            raise TranscriptError(f"{where}: recording {recording!r} channel {channel} appears twice")
        found[(recording, channel)] = [_word(w, f"{where}: words[{i}]") for i, w in enumerate(words)]
    return found
