"""Audio that does not fit is an error on that item, never a silent cut.

Two limits matter for deep interruption points (up to 20 user turns of audio): a processor that
keeps only the first N seconds of each clip (Whisper-style extractors pad or cut to 30 s), and
the model's context, which the whole history's audio tokens must fit in with room to answer.
Both are checked before generation; the message says what to do instead.
"""
from __future__ import annotations

from typing import Optional

from ihbench.dataset.errors import IHBenchError, ItemFailure, UsageError

from .base import ModelInput

class AudioTooLongError(IHBenchError, ItemFailure, ValueError):
    """A clip longer than the processor takes whole, or a prompt longer than the context."""


def _advice(audio_clips: int, *, history_helps: bool = True, room: Optional[int] = None,
            max_new_tokens: int = 0) -> str:
    """Only the remedies that would change this item: fewer clips of history while there is more
    than one (and the long clip is not the last), text instead of audio while there is audio, fewer
    new tokens while the prompt alone fits."""
    remedies = []
    if audio_clips > 1 and history_helps:
        remedies.append(f"--history-audio last:K with K below {audio_clips} (older user turns as transcripts)")
    if audio_clips:
        remedies.append("--modality text")
    if room is not None and 0 < room < max_new_tokens:
        remedies.append(f"--max-new-tokens {room} or less")
    remedies.append("a model with a longer context" if room is not None else "a model that takes longer clips")
    lead = "" if audio_clips else "the transcripts alone do not fit: "
    return lead + "use " + ", or ".join(remedies)


def check_clips(conversation: ModelInput, family: str, max_seconds: Optional[float]) -> None:
    if max_seconds is None:
        return
    count = len(conversation.audio_clips)
    for number, clip in enumerate(conversation.audio_clips, start=1):
        seconds = len(clip) / conversation.sampling_rate
        if seconds > max_seconds + 1e-6:
            raise AudioTooLongError(
                f"{conversation.item_id}: audio clip {number} of {count} is {seconds:.1f} s; "
                f"the {family} processor keeps only the first {max_seconds:g} s of a clip (not cut silently: "
                f"{_advice(count, history_helps=number < count)})")


def check_context(prompt_tokens: int, max_new_tokens: int, context: Optional[int], family: str,
                  item_id: str = "", audio_clips: int = 1) -> None:
    """`audio_clips`: how many clips the prompt holds (0 in text modality), for the advice."""
    if context is None or prompt_tokens + max_new_tokens <= context:
        return
    where = f"{item_id}: " if item_id else ""
    advice = _advice(audio_clips, room=context - prompt_tokens, max_new_tokens=max_new_tokens)
    raise AudioTooLongError(
        f"{where}the prompt is {prompt_tokens} tokens and {max_new_tokens} new tokens do not fit in the "
        f"{family} context of {context} tokens ({advice})")


FRAME_MASKS = ("input_features_mask", "feature_attention_mask")  # which feature frames are real audio


def clip_cost(loader, seconds: float, *, seed: int = 0) -> tuple[int, int | None]:
    """(prompt tokens, real feature frames or None) of a one-turn conversation whose user turn is
    `seconds` of noise, through the loader's own processor with the per-clip check off."""
    import numpy as np

    from .base import InputTurn

    rate = 16000
    noise = np.random.default_rng(seed).standard_normal(int(rate * seconds)).astype(np.float32) * 0.1
    conversation = ModelInput("measure", "audio", [InputTurn("system", "Listen."), InputTurn("user", audio=noise)], rate)
    saved, loader.max_clip_seconds = loader.max_clip_seconds, None
    try:
        inputs = loader.inputs([conversation])
    finally:
        loader.max_clip_seconds = saved
    mask = next((inputs[key] for key in FRAME_MASKS if key in inputs), None)
    return int(inputs["input_ids"].shape[1]), None if mask is None else int(mask.sum())


def probe_seconds(loader) -> tuple[float, ...]:
    """Clip lengths that show a cap: the usual 30 s ones, or around a longer declared cap
    (Qwen2.5-Omni's extractor keeps 300 s)."""
    cap = loader.max_clip_seconds
    return (10.0, 20.0, cap - 10, cap + 30) if cap and cap > 40 else (10.0, 20.0, 40.0, 70.0)


def measure_clip_handling(loader, seconds=None) -> dict:
    """How much a second of audio costs, and the clip length after which the processor takes no
    more (None when it still grows over the last span tried).

    Measured in prompt tokens; a family that spends a fixed number of tokens per clip (Gemma 3n:
    188) is measured in the feature frames its processor keeps. Processors that pad to whole
    windows (Voxtral: 30 s) grow in steps, so the rate is the average over the whole range when
    the first span shows no growth."""
    seconds = tuple(seconds or probe_seconds(loader))
    costs = [clip_cost(loader, s) for s in seconds]
    lengths, unit = [tokens for tokens, _ in costs], "prompt tokens"
    if len(set(lengths)) == 1 and costs[0][1] is not None:
        lengths, unit = [frames for _, frames in costs], "feature frames"
    spans = list(zip(zip(seconds, seconds[1:]), zip(lengths, lengths[1:])))
    first_rate = (lengths[1] - lengths[0]) / (seconds[1] - seconds[0])
    per_second = first_rate if first_rate > 0 else (lengths[-1] - lengths[0]) / (seconds[-1] - seconds[0])
    cap = None
    (last_short, last_long), (last_a, last_b) = spans[-1]
    if per_second and last_b - last_a < 0.9 * per_second * (last_long - last_short):  # stopped growing
        for (short, long_), (a, b) in spans:
            if b - a < 0.9 * per_second * (long_ - short):
                cap = round(short + (b - a) / per_second, 1)
                break
    return {"unit": unit, "per_second": round(per_second, 2), "clip_cap_seconds": cap,
            "measured": dict(zip(seconds, lengths))}


def check_clip_count(loader, needed: int, why: str, remedies: str, prompt: str = "this run's longest prompt") -> None:
    """Refused before any work when a prompt of a run (`prompt`: the longest, or even the shortest, holding
    `needed` clips, `why`) holds more clips than the server takes: otherwise it fails midway, on every
    retry alike. `remedies`: the ones the command has."""
    limit = loader.max_audio_clips
    if limit is not None and needed > limit:
        raise UsageError(f"--option max_audio_clips={limit}: the server takes at most {limit} audio clip(s) per "
                         f"prompt, and {prompt} holds {needed} ({why}); use {remedies}, or a "
                         "server that takes more (vLLM: --limit-mm-per-prompt)")
