"""The `duplex` config: each conversation as one two-channel recording with known turn-taking.

Channel 0 is the assistant, channel 1 the user (the Talking Turns convention: A is the AI, B the
human); 16 kHz FLAC. The clips are the build's own renders in the build's voices, trimmed to their
speech and laid out on a timeline with seeded timing (`Timing`), so a model's turn-taking can be
scored against what was actually placed:

- the assistant answers a user after a *response gap*, the user answers after a *user gap*, and
  the assistant speaks again after a *pause* (only after a filler, whose turn the assistant keeps);
- at an interruption point the assistant's clip is the delivered text; the cut point is where its
  speech ends on that render. The user starts a seeded *stop latency* before the cut (inside the
  assistant's last IPU), so the two overlap for exactly that long, and the assistant is silent
  from the cut on: what it says during the stop latency is the end of the delivered text;
- a `filler` starts the same way but does not stop the assistant: the full planned message plays
  (the cut point in it is the delivered render's speech length). The sources' next assistant
  message repeats the rest of the cut sentence (written for a turn-based reader); here the words
  already spoken are dropped from it (`continuation`), unless that would leave an interrupted turn
  with nothing to cut, so the recording never says anything twice;
- one interruption point per conversation is *talked over* (`talk_over_turn`: the first that is
  not a filler whose planned message has `TALK_OVER_REST_WORDS` words or more after the cut): the
  user starts the same way, says the start of the interruption (`_attempt`: into its first IPU
  longer than a backchannel) and gives up while the assistant plays its full planned message, as
  for a filler; once the assistant is done
  the user says the interruption in full, after a user gap, and the conversation goes on (the
  only words said twice, as a caller who was not heard says them again);
- half the recordings (`noise_floor`: by a bit of the conversation id's hash) lie under a seeded
  white noise floor of `NOISE_DBFS` on both channels, a phone line's light hiss: the timing of
  their speech is the same as in silence, which is what a turn-taking analysis must find.

Ground truth is computed from what was placed, not estimated from the mix: on each clip, speech is
the 10 ms frames within 35 dB of the clip's loudest frame, silences up to 200 ms staying inside
an IPU (the paper's IPU rule); both channels' intervals (fillers as user backchannels) go through
`floor.floor_labels`, the one floor-state machine, which `ihbench turns` runs on audio, and each
interruption point's outcome (yield, talk-over; a filler is a backchannel) and stop latency come
from `floor.barge_ins` on the same intervals, the rule `ihbench turns` times barge-ins with.

A mixed recording and its labels are cached next to the renders, keyed by the clips' bytes, the
texts, the timing, the seed and the source of this package (a code change can never serve a stale
mix), so a cached rebuild neither decodes nor re-encodes audio.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from .audio import encode_flac
from .audio_format import SAMPLING_RATE
from .config_cache import source_digest
from .errors import IHBenchError
from .floor import barge_ins, floor_labels
from .io import write_atomic
from .ipus import MIN_SILENCE_S, merge_ipus
from .schema import item_id
from .sources import ASSISTANT_VOICE, SourceConversation, SourceTurn

DUPLEX_CONFIG = "duplex"
ASSISTANT_CHANNEL, USER_CHANNEL = 0, 1
SEED = 16
FRAME = SAMPLING_RATE // 100  # 10 ms analysis frames
SPEECH_DB = -35.0  # below the loudest frame: TTS pads and breaths sit at -50 dB and lower
MIN_IPU = int(0.06 * SAMPLING_RATE)  # shorter islands are clicks, not speech
TALK_OVER_REST_WORDS = 12  # ~3.5 s of the assistant's speech after the cut: it talks on well past the attempt
LONG_IPU_S = 1.1  # longer than any backchannel (`ipus.MAX_BACKCHANNEL_S`, 1 s), with a frame's margin and more
ATTEMPT_IPU_S = 1.2  # the talked-over attempt ends this far into its first IPU longer than LONG_IPU_S
ATTEMPT_MAX_S = 2.0  # ... or after the IPU under way at 2 s: a caller who is not heard gives up
NOISE_DBFS = -50.0  # RMS of the noise floor, re full scale: light noise, 30 dB or more below the speech


class DuplexError(IHBenchError, ValueError):
    """A render cannot be placed; the message names the conversation, turn and text."""


@dataclass(frozen=True)
class Spread:
    """A log-normal duration (median, sigma of the log), clipped to [low, high] seconds; drawn in samples."""

    median: float
    sigma: float
    low: float
    high: float

    def draw(self, rng: np.random.Generator) -> int:
        seconds = float(np.clip(self.median * np.exp(self.sigma * rng.standard_normal()), self.low, self.high))
        return int(round(seconds * SAMPLING_RATE))


@dataclass(frozen=True)
class Timing:
    """Human-AI conversation timing: the AI answers more slowly than the human does."""

    lead_in: Spread = Spread(0.4, 0.3, 0.25, 0.8)
    response_gap: Spread = Spread(0.7, 0.35, 0.3, 1.6)  # user stops -> assistant starts
    user_gap: Spread = Spread(0.4, 0.4, 0.25, 1.2)  # assistant stops -> user starts
    pause: Spread = Spread(0.5, 0.3, 0.25, 1.0)  # the assistant again (after a filler's turn)
    stop_latency: Spread = Spread(0.45, 0.35, 0.2, 1.0)  # user starts -> assistant stops (filler: lead)
    tail: float = 0.5


TIMING = Timing()


@dataclass(frozen=True)
class TurnPlan:
    """What the assistant channel plays at one turn (text only: decided before any audio)."""

    turn: SourceTurn
    assistant: Optional[str]  # None: a filler's continuation already said all of it
    delivered: Optional[str]  # text up to the cut point, on interruption turns
    stops: bool  # the assistant stops at the cut (every interruption but a filler and the talked-over one)
    talked_over: bool = False  # the assistant talks over the user's attempt (`talk_over_turn`)


_WORD = re.compile(r"[\w']+")


def continuation(said: str, text: str, *, keep_some: bool = False) -> Optional[str]:
    """`text` without the leading words of `said` it repeats (None when nothing is left, or
    `text` itself when `keep_some` and nothing would be left); unchanged when it does not
    start with them. Words compare case- and punctuation-blind."""
    spoken = [w.lower() for w in _WORD.findall(said)]
    words = list(_WORD.finditer(text))
    if not spoken or [m.group().lower() for m in words[:len(spoken)]] != spoken:
        return text
    rest = text[words[len(spoken) - 1].end():].lstrip(" ,;:.!?-")
    if not _WORD.search(rest):
        return text if keep_some else None
    return rest


def talk_over_turn(conversation: SourceConversation) -> Optional[int]:
    """The number of the turn whose interruption the assistant talks over, or None: the first
    point that is not a filler where the assistant has enough left to say to talk on well past
    the user's attempt. Decided on the texts, before any audio, like the rest of the plan."""
    for turn in conversation.turns:
        if turn.interruption is None or turn.interruption.type == "filler":
            continue
        if len(_WORD.findall(turn.assistant[len(turn.heard):])) >= TALK_OVER_REST_WORDS:
            return turn.number
    return None


def plan(conversation: SourceConversation) -> list[TurnPlan]:
    plans, said = [], ""
    talked_over = talk_over_turn(conversation)
    for turn in conversation.turns:
        kind = turn.interruption.type if turn.interruption else None
        plays_on = kind == "filler" or (kind is not None and turn.number == talked_over)
        if kind is None:
            plans.append(TurnPlan(turn, continuation(said, turn.assistant), None, False))
        else:
            delivered = continuation(said, turn.heard, keep_some=True)
            if not plays_on:
                plans.append(TurnPlan(turn, delivered, delivered, True))
            else:  # the full planned message, trimmed exactly when the delivered part was
                full = turn.assistant if delivered == turn.heard else continuation(said, turn.assistant)
                plans.append(TurnPlan(turn, full, delivered, False, talked_over=kind != "filler"))
        # after a filler or a talk-over the assistant said its whole planned message, the rest of the cut sentence included
        said = turn.assistant[len(turn.heard):] if plays_on else ""
    return plans


def noise_floor(conversation_id: str) -> Optional[float]:
    """NOISE_DBFS for half the conversations (a bit of the id's hash, so a recording's noise does
    not depend on which others are built with it), None for the rest: digital silence."""
    return NOISE_DBFS if hashlib.sha256(conversation_id.encode()).digest()[8] & 1 else None


def speech_spans(samples: np.ndarray) -> list[tuple[int, int]]:
    """IPUs of one clean render, in samples: runs of loud 10 ms frames joined by the 200 ms rule
    (`ipus.merge_ipus`, the rule `ihbench turns` applies to voice activity)."""
    count = len(samples) // FRAME
    if count == 0:
        return []
    rms = np.sqrt(np.mean(samples[: count * FRAME].astype(np.float64).reshape(count, FRAME) ** 2, axis=1))
    loud = np.concatenate([[False], rms > rms.max() * 10 ** (SPEECH_DB / 20), [False]]) if rms.max() > 0 else []
    edges = np.flatnonzero(np.diff(np.asarray(loud, dtype=np.int8)))
    runs = [(int(a) * FRAME / SAMPLING_RATE, int(b) * FRAME / SAMPLING_RATE) for a, b in zip(edges[::2], edges[1::2])]
    # frame times are float multiples of 10 ms: half a sample of slack makes exactly 200 ms merge, as the rule says
    merged = merge_ipus(runs, MIN_SILENCE_S + 0.5 / SAMPLING_RATE)
    spans = [(int(round(a * SAMPLING_RATE)), int(round(b * SAMPLING_RATE))) for a, b in merged]
    return [(a, b) for a, b in spans if b - a >= MIN_IPU]


@dataclass
class _Clip:
    samples: np.ndarray  # trimmed to its speech: sample 0 is speech onset, the last is speech end
    spans: list[tuple[int, int]]


def _clip(data: bytes, where: str) -> _Clip:
    import soundfile

    samples, _ = soundfile.read(io.BytesIO(data), dtype="float32")
    spans = speech_spans(samples)
    if not spans:
        raise DuplexError(f"{where}: the render has no speech to place")
    first = spans[0][0]
    return _Clip(samples[first: spans[-1][1]], [(a - first, b - first) for a, b in spans])


class _Timeline:
    """Clips placed on the two channels, in samples; the intervals come from the placements."""

    def __init__(self):
        self.pieces: list[tuple[int, int, np.ndarray]] = []  # (channel, start, samples)
        self.speech: dict[int, list[tuple[int, int]]] = {ASSISTANT_CHANNEL: [], USER_CHANNEL: []}
        self.backchannels: list[tuple[int, int]] = []
        self.segments: list[dict] = []

    def place(self, channel: int, start: int, clip: _Clip, *, turn: int, kind: str, text: str) -> int:
        self.pieces.append((channel, start, clip.samples))
        if kind == "filler":
            self.backchannels.append((start, start + len(clip.samples)))
        else:
            self.speech[channel].extend((start + a, start + b) for a, b in clip.spans)
        self.segments.append({"channel": channel, "turn": turn, "kind": kind, "text": text,
                              "start": start / SAMPLING_RATE, "end": (start + len(clip.samples)) / SAMPLING_RATE})
        return start + len(clip.samples)

    def mix(self, length: int, noise_dbfs: Optional[float] = None, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        audio = np.zeros((length, 2), dtype=np.float32)
        for channel, start, samples in self.pieces:
            audio[start: start + len(samples), channel] += samples
        if noise_dbfs is not None:
            audio += rng.normal(0.0, 10 ** (noise_dbfs / 20), audio.shape).astype(np.float32)
        return audio


def _overlap(span: tuple[int, int], others: list[tuple[int, int]]) -> tuple[float, float]:
    """First start and last end of `span` intersected with `others`, in seconds."""
    pieces = [(max(a, span[0]), min(b, span[1])) for a, b in others if a < span[1] and b > span[0]]
    return pieces[0][0] / SAMPLING_RATE, pieces[-1][1] / SAMPLING_RATE


def _seconds(spans) -> list[tuple[float, float]]:
    return [(a / SAMPLING_RATE, b / SAMPLING_RATE) for a, b in spans]


def _intervals(spans) -> list[dict]:
    return [{"start": a, "end": b} for a, b in _seconds(spans)]


def layout(conversation: SourceConversation, plans: list[TurnPlan], clip: Callable[[str, SourceTurn, str], _Clip],
           timing: Timing = TIMING, seed: int = SEED) -> tuple[np.ndarray, dict]:
    """The stereo samples and the row's ground-truth fields (everything but the audio)."""
    digest = hashlib.sha256(conversation.conversation_id.encode()).digest()
    rng = np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])
    line, interruptions = _Timeline(), []
    end, floor = timing.lead_in.draw(rng), None  # floor: who spoke last and still holds the floor
    for p in plans:
        turn = p.turn
        user = clip("user", turn, turn.user)
        if p.assistant is not None:
            if floor is not None:
                end += (timing.pause if floor == "assistant" else timing.response_gap).draw(rng)
            spoken = clip("assistant", turn, p.assistant)
            if p.delivered is None:
                end = line.place(ASSISTANT_CHANNEL, end, spoken, turn=turn.number, kind="message", text=p.assistant)
                floor = "assistant"
            else:
                point, end = _interrupt(line, end, spoken, user, p, clip, timing.stop_latency.draw(rng))
                interruptions.append({"id": item_id(conversation.conversation_id, turn.number), "turn": turn.number,
                                      "interruption_type": turn.interruption.type, **point})
                floor = "user" if p.stops else "assistant"  # a filler or a talk-over leaves it with the assistant
                if not p.talked_over:
                    continue
        end += (timing.user_gap if floor == "assistant" else timing.pause).draw(rng)
        end = line.place(USER_CHANNEL, end, user, turn=turn.number, kind="interruption" if p.talked_over else "reply",
                         text=turn.user)
        floor = "user"
    length = end + int(round(timing.tail * SAMPLING_RATE))
    a_speech, b_speech = _seconds(line.speech[ASSISTANT_CHANNEL]), _seconds(line.speech[USER_CHANNEL])
    labels = floor_labels(a_speech, b_speech, length / SAMPLING_RATE, b_backchannels=_seconds(line.backchannels))
    _outcomes(interruptions, barge_ins(a_speech, b_speech))
    noise = noise_floor(conversation.conversation_id)
    return line.mix(length, noise, np.random.default_rng([seed, int.from_bytes(digest[:8], "big"), 1])), {
        "duration": length / SAMPLING_RATE,
        "noise_dbfs": noise,
        "assistant_speech": _intervals(line.speech[ASSISTANT_CHANNEL]),
        "user_speech": _intervals(line.speech[USER_CHANNEL]),
        "user_backchannels": _intervals(line.backchannels),
        **labels.to_reference(),
        "interruptions": interruptions,
        "segments": line.segments,
    }


def _outcomes(interruptions: list[dict], found: list[dict]) -> None:
    """Each point's outcome, assistant stop and stop latency by `floor.barge_ins` on the placed
    intervals (the rule `ihbench turns` applies to audio): a filler is a backchannel, no barge-in;
    a user who starts exactly as the assistant's IPU does is no barge-in either (outcome None)."""
    by_onset = {round(b["user_start"], 6): b for b in found}
    for point in interruptions:
        attempt = by_onset.get(round(point["user_start"], 6))
        if point["interruption_type"] == "filler" or attempt is None:
            point.update(outcome="backchannel" if point["interruption_type"] == "filler" else None)
            continue
        yielded = attempt["outcome"] == "yield"
        point.update(outcome=attempt["outcome"], assistant_stop=attempt["ai_stop"] if yielded else None,
                     stop_latency=attempt["ai_stop"] - point["user_start"] if yielded else None)  # unrounded


def _interrupt(line: _Timeline, start: int, spoken: _Clip, user: _Clip, p: TurnPlan, clip,
               latency: int) -> tuple[dict, int]:
    """Place an interrupted assistant message and the user's cut-in; return the point's timing
    and where the later of the two ends.

    The cut point is where the delivered text's speech ends: the end of `spoken` when the
    assistant stops, else the delivered render's speech length into the full message (a filler,
    a talk-over). The user starts `latency` before it, kept inside the assistant's last IPU before
    the cut (40 ms from either end, or its middle) so the overlap begins at once (a user who
    starts in a breath pause does not overlap yet, one who starts with the IPU does not barge in). Talked over, the user says only the attempt (`_attempt`)."""
    turn = p.turn
    if p.stops:
        cut = start + len(spoken.samples)
    else:
        cut = start + min(len(clip("assistant", turn, p.delivered).samples), len(spoken.samples) - FRAME)
    first, last = [(start + a, start + b) for a, b in spoken.spans if start + a < cut][-1]
    last = min(last, cut)
    margin = min(4 * FRAME, (last - first) // 2)  # strictly inside: starting with the IPU is no barge-in
    user_start = max(first + margin, min(cut - latency, last - margin))
    assistant_end = line.place(ASSISTANT_CHANNEL, start, spoken, turn=turn.number,
                               kind="delivered" if p.stops else "planned", text=p.assistant)
    kind = "interruption" if p.stops else "talked_over" if p.talked_over else "filler"
    user_end = line.place(USER_CHANNEL, user_start, _attempt(user) if p.talked_over else user, turn=turn.number,
                          kind=kind, text=turn.user)
    overlap = _overlap((user_start, user_end), line.speech[ASSISTANT_CHANNEL])
    # assistant_stop, stop_latency and outcome are the rule's (`_outcomes`), once everything is placed
    return {"user_start": user_start / SAMPLING_RATE, "user_end": user_end / SAMPLING_RATE,
            "cut_point": cut / SAMPLING_RATE, "assistant_stop": None, "stop_latency": None,
            "overlap_start": overlap[0], "overlap_end": overlap[1], "outcome": None}, max(assistant_end, user_end)


def _attempt(user: _Clip) -> _Clip:
    """What a user who is talked over says before giving up: the interruption up to its first IPU
    longer than a backchannel (`LONG_IPU_S`), cut `ATTEMPT_IPU_S` into it; a short opening
    ("That was my son.") alone would be a listener's "mm-hm" to a detector without words."""
    spans = []
    for a, b in user.spans:
        spans.append((a, min(b, a + int(ATTEMPT_IPU_S * SAMPLING_RATE))))
        if b - a > LONG_IPU_S * SAMPLING_RATE or b >= ATTEMPT_MAX_S * SAMPLING_RATE:
            break
    return _Clip(user.samples[: spans[-1][1]], spans)



class DuplexCache:
    """Mixed recordings (FLAC) and their ground truth (JSON), next to the TTS renders."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.code = source_digest()
        self.hits = self.misses = 0

    def key(self, conversation_id: str, plans: list[TurnPlan], clips: list[bytes], timing: Timing, seed: int) -> str:
        """The texts and types are stored in the row too: a user recording given as a file keeps
        its bytes when its transcript is corrected."""
        texts = [(p.turn.number, p.turn.interruption.type if p.turn.interruption else None, p.assistant, p.delivered,
                  p.stops, p.talked_over, p.turn.user) for p in plans]
        digest = hashlib.sha256("\x1f".join([self.code, json.dumps(asdict(timing), sort_keys=True), str(seed),
                                             conversation_id, json.dumps(texts)]).encode())
        for data in clips:
            digest.update(hashlib.sha256(data).digest())
        return digest.hexdigest()

    def get(self, key: str) -> Optional[tuple[bytes, dict]]:
        audio, truth = self.directory / f"{key}.flac", self.directory / f"{key}.json"
        if not (audio.is_file() and truth.is_file()):
            self.misses += 1
            return None
        self.hits += 1
        return audio.read_bytes(), json.loads(truth.read_text(encoding="utf-8"))

    def put(self, key: str, audio: bytes, truth: dict) -> None:
        write_atomic(self.directory / f"{key}.flac", audio)
        write_atomic(self.directory / f"{key}.json", json.dumps(truth))  # the JSON last: get() needs both


def duplex_rows(conversations: list[SourceConversation], audio: dict, cache, *, progress: bool = True,
                timing: Timing = TIMING, seed: int = SEED) -> list[dict]:
    """One row per conversation. `audio` is the build's renders keyed (conversation_id, turn
    index, "user" | "assistant"); texts it lacks (a filler's full message, a continuation) are
    rendered through `cache`, the build's RenderCache."""
    from tqdm.auto import tqdm

    from .tts import get_engine

    mixes = DuplexCache(cache.directory / "duplex")
    rows = []
    for c in tqdm(conversations, desc="mixing duplex recordings", unit="conversation", disable=not progress):
        plans = plan(c)

        def data(speaker: str, turn: SourceTurn, text: str) -> bytes:
            if speaker == "user" or text == turn.heard:
                return audio[(c.conversation_id, turn.index, speaker)]
            return cache.render(get_engine(ASSISTANT_VOICE), text)

        needed = [data("user", p.turn, p.turn.user) for p in plans]
        needed += [data("assistant", p.turn, text) for p in plans for text in (p.assistant, p.delivered) if text]
        key = mixes.key(c.conversation_id, plans, needed, timing, seed)
        cached = mixes.get(key)
        if cached is None:
            def clip(speaker: str, turn: SourceTurn, text: str) -> _Clip:
                return _clip(data(speaker, turn, text), f"{c.path}: turns[{turn.index}] {speaker} {text[:50]!r}")

            samples, truth = layout(c, plans, clip, timing, seed)
            cached = (encode_flac(samples), truth)
            mixes.put(key, *cached)
        flac, truth = cached
        rows.append({"conversation_id": c.conversation_id,
                     "audio": {"bytes": flac, "path": f"{DUPLEX_CONFIG}/{c.conversation_id}.flac"}, **truth})
    return rows


def duplex_statistics(rows: list[dict]) -> dict:
    """The card's line: how much audio, how many overlaps, and the timing actually drawn."""
    points = [i for r in rows for i in r["interruptions"]]
    latencies = [i["stop_latency"] for i in points if i["outcome"] == "yield"]
    return {"recordings": len(rows), "minutes": round(sum(r["duration"] for r in rows) / 60, 1),
            "interruptions": len(latencies), "fillers": sum(i["outcome"] == "backchannel" for i in points),
            "talk_overs": sum(i["outcome"] == "talk_over" for i in points),
            "noisy_recordings": sum(r["noise_dbfs"] is not None for r in rows),
            "stop_latency_mean_s": round(float(np.mean(latencies)), 3) if latencies else None}
