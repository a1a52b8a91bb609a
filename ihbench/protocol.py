"""The benchmark's protocol: what the model under test is shown at an interruption point.

System prompt, the history as the caller and agent lived it, the interrupted assistant turn as
delivered (never as planned), then the interruption. This is a decision of the benchmark, not of
any model family, so it lives here and every loader receives its result, a `ModelInput`.
"""
from __future__ import annotations

from typing import Callable, Optional, Union

import numpy as np

from ihbench.dataset.errors import UsageError
from ihbench.dataset.schema import SAMPLING_RATE, EvalItem
from ihbench.dataset.audio import AudioError, check_samples
from ihbench.loaders.base import DamagedAudioError, EmptyAudioError, InputTurn, Modality, ModelInput


#: `--history-audio auto`: per item, the most recent user turns that fit the model as audio
AUTO = "auto"


def parse_history_audio(value: Optional[str]) -> Union[int, str, None]:
    """`last:K` -> K (keep the audio of the last K user turns, the interruption included); `auto`
    -> AUTO; all (or nothing) -> None."""
    if value in (None, "", "all"):
        return None
    if str(value).strip() == AUTO:
        return AUTO
    kind, _, count = str(value).partition(":")
    if kind != "last" or not (count.isascii() and count.isdigit()) or int(count) < 1:  # int() fails on '²'
        raise UsageError(f"--history-audio: expected all, auto or last:K with K >= 1, got {value!r}")
    return int(count)


def history_audio_label(value: Union[int, str, None]) -> Optional[str]:
    """How run.json names a parsed `--history-audio` (None: every user turn as audio)."""
    return value if value == AUTO else f"last:{value}" if value else None


def fitting_model_input(item: EvalItem, fits: Callable[[ModelInput], bool]) -> ModelInput:
    """`--history-audio auto`: the audio input in which the most recent user turns are heard as audio
    and the older ones as transcripts, as many as `fits` (the model's context, its clip limits) takes.

    Every turn as audio when that fits; otherwise the largest K that does, tried from the top down
    (not by halving: a short clip can cost fewer tokens than its transcript, so fitting is not
    monotone in K); never fewer than the interruption itself, so an item that does not fit even
    then fails on its own limit, with the model's own message, rather than being answered from
    transcripts alone."""
    whole = build_model_input(item, "audio")
    if fits(whole):
        return whole
    for count in range(len(whole.audio_clips) - 1, 1, -1):
        candidate = build_model_input(item, "audio", history_audio=count)
        if fits(candidate):
            return candidate
    return build_model_input(item, "audio", history_audio=1)


def build_model_input(item: EvalItem, modality: Modality = "audio", *,
                       history_audio: Optional[int] = None) -> ModelInput:
    """System prompt; history (user turns as audio, or transcripts in text mode; assistant turns
    as text); the interrupted assistant turn as delivered, never as planned; then the interruption.

    `history_audio=K` keeps the audio of only the last K user turns (the interruption counts as
    one) and gives older user turns as transcripts: an explicit, recorded choice for models whose
    context cannot hold a deep point's whole history as audio. Default: every user turn as audio.
    """
    if modality not in ("audio", "text"):
        raise ValueError(f"modality: expected 'audio' or 'text', got {modality!r}")  # the CLI offers only these
    turns = [InputTurn("system", item.system_prompt)]
    user_turns = sum(m.role == "user" for m in item.history) + 1
    as_text_before = 0 if history_audio is None else user_turns - history_audio  # user turns heard as text
    seen = 0

    def user(text: str, clip, where: str) -> InputTurn:
        nonlocal seen
        seen += 1
        if modality == "text" or seen <= as_text_before:
            return InputTurn("user", text)
        if clip is None:
            raise EmptyAudioError(f"{item.id}: {where} has no audio (use --modality text for transcripts)")
        try:  # NaN saved as 16-bit PCM reads back as one value throughout: no sound either
            samples = check_samples(clip.decode(SAMPLING_RATE), clip.where or "the clip")
        except AudioError as error:
            raise DamagedAudioError(f"{item.id}: {where}: {error}") from None
        if samples.size == 0 or not np.any(samples):
            cell = f" ({clip.where})" if clip.where else ""
            raise EmptyAudioError(f"{item.id}: {where} audio is empty or silent{cell}")
        return InputTurn("user", audio=samples)

    for index, message in enumerate(item.history):
        if message.role == "assistant":
            turns.append(InputTurn("assistant", message.text))
        else:
            turns.append(user(message.text, message.audio, f"history[{index}]"))
    turns.append(InputTurn("assistant", item.interrupted.delivered))
    turns.append(user(item.interruption.transcript, item.interruption.audio, "the interruption"))
    return ModelInput(item.id, modality, turns)
