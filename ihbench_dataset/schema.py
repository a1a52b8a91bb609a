"""The one type every layer passes around: an interruption point (`EvalItem`) and its parts.

The official data is one wide row per conversation; everything downstream (runner, loaders,
judges, report) wants one record per interruption point with its context already assembled.
The reader in `ihbench.dataset.wide` is the only place that turns the former into the latter.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Optional

from .audio_format import SAMPLING_RATE
from .errors import UsageError

INTERRUPTION_TYPES: tuple[str, ...] = (
    "normal",
    "impatient",
    "correction",
    "topic_switch",
    "filler",
    "pushback",
)

# Spellings seen in generated data and papers that mean one of the canonical types.
_ALIASES = {
    "topicswitch": "topic_switch",
    "topic_change": "topic_switch",
    "topic_shift": "topic_switch",
    "backchannel": "filler",
    "push_back": "pushback",
    "corrections": "correction",
}

DEPTH_BINS: tuple[tuple[int, int], ...] = ((0, 4), (5, 9), (10, 14), (15, 19))


def canonical_interruption_type(value: Optional[str]) -> Optional[str]:
    """Map any official spelling ("Topic Switch", "topic-switch", "TOPIC_SWITCH") onto ours.

    Empty or missing means "this turn is not an interruption" and returns None. Anything that
    is not recognisably one of the six types raises, because silently dropping an interruption
    point would change every score computed from the data.
    """
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    key = re.sub(r"[\s\-]+", "_", text.lower())
    key = re.sub(r"_+", "_", key).strip("_")
    key = _ALIASES.get(key, key)
    if key not in INTERRUPTION_TYPES:
        raise UsageError(
            f"unknown interruption type {value!r}; expected one of {', '.join(INTERRUPTION_TYPES)}"
        )
    return key


def depth_bin(depth: int) -> str:
    """Label of the paper's depth bin for a 0-based user-turn index ("15-19" keeps deeper turns)."""
    for low, high in DEPTH_BINS:
        if low <= depth <= high:
            return f"{low}-{high}"
    if depth > DEPTH_BINS[-1][1]:
        return f"{DEPTH_BINS[-1][0]}-{DEPTH_BINS[-1][1]}"
    raise ValueError(f"depth must be >= 0, got {depth}")  # the readers compute depth: a bug, not a user error


@dataclass(frozen=True)
class AudioClip:
    """Encoded audio (file bytes or a path), decoded only when a model actually needs samples.

    Items share their history clips with every later item of the same conversation, so keeping
    the compressed bytes and decoding lazily keeps loading the whole benchmark cheap.
    """

    bytes: Optional[bytes] = None
    path: Optional[str] = None
    #: where the clip was read (a dataset file's row and column): named by every error about its audio
    where: Optional[str] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.bytes is None and self.path is None:
            raise ValueError("AudioClip needs bytes or a path")  # made by our readers only

    def decode(self, sampling_rate: int = SAMPLING_RATE):
        """Mono float32 samples in [-1, 1] at `sampling_rate`."""
        from .audio import decode_audio

        return decode_audio(self.bytes if self.bytes is not None else self.path, sampling_rate, where=self.where)

    def duration(self) -> float:
        from .audio import audio_duration

        return audio_duration(self.bytes if self.bytes is not None else self.path, where=self.where)

    def to_hf(self) -> dict:
        """The `{"bytes", "path"}` form a `datasets.Audio` feature encodes."""
        return {"bytes": self.bytes, "path": self.path}

    @cached_property
    def digest(self) -> str:
        """Of the encoded audio itself, not its name: a clip re-rendered at the same path is new audio.
        Computed once per clip (history clips are shared by every later point of a conversation)."""
        if self.bytes is not None:
            return hashlib.sha256(self.bytes).hexdigest()
        with open(self.path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    text: str
    audio: Optional[AudioClip] = None


@dataclass(frozen=True)
class Interrupted:
    """The assistant turn the user cut into: what was planned and what the user actually heard."""

    original: str
    delivered: str
    audio: Optional[AudioClip] = None

    @property
    def undelivered(self) -> str:
        if self.original.startswith(self.delivered):
            return self.original[len(self.delivered):]
        return ""


@dataclass(frozen=True)
class Utterance:
    transcript: str
    audio: Optional[AudioClip] = None


@dataclass(frozen=True)
class Rubric:
    tf: str
    rq: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EvalItem:
    """One interruption point: the model sees system prompt, history, the delivered part of the
    interrupted turn and the interruption, and must produce the next assistant response."""

    id: str
    conversation_id: str
    domain: str
    goal: str
    interruption_type: str
    turn: int
    depth: int
    system_prompt: str
    history: list[Message]
    interrupted: Interrupted
    interruption: Utterance
    rubric: Rubric
    baseline: Optional[str] = None
    #: the baseline judged against each RQ criterion (in-house data; None when not judged)
    baseline_rq: Optional[list[bool]] = None

    @property
    def depth_bin(self) -> str:
        return depth_bin(self.depth)

    @cached_property
    def content_hash(self) -> str:
        """Everything the model is shown and the judges score with, as one digest. A run stamps each
        record with it, so editing the data at the same path shows as changed items rather than
        leaving answers to two versions of the data side by side."""
        digest = hashlib.sha256()

        def part(value) -> None:
            digest.update(("" if value is None else str(value)).encode("utf-8") + b"\x1f")

        def audio(clip: Optional[AudioClip]) -> None:
            part(None if clip is None else clip.digest)

        for value in (self.id, self.domain, self.goal, self.interruption_type, self.turn, self.depth,
                      self.system_prompt):
            part(value)
        for message in self.history:
            part(message.role)
            part(message.text)
            audio(message.audio)
        for value in (self.interrupted.original, self.interrupted.delivered):
            part(value)
        audio(self.interrupted.audio)
        part(self.interruption.transcript)
        audio(self.interruption.audio)
        for value in (self.rubric.tf, len(self.rubric.rq), *self.rubric.rq, self.baseline, self.baseline_rq):
            part(value)
        return digest.hexdigest()[:16]


def item_id(conversation_id: str, turn: int) -> str:
    return f"{conversation_id}/{turn}"
