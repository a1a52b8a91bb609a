"""Every clip of a dataset's interruption points decoded and checked as a run checks it, before the
dataset is published: a clip that is no audio, NaN, one value throughout, or (heard by the model) empty
or silent fails its points on every run, and on the Hub it fails everyone's. Each is named by its cell."""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from .audio import AudioError, check_samples, decode_audio
from .audio_format import SAMPLING_RATE
from .schema import EvalItem


def unusable_clips(items: Iterable[EvalItem], *, progress: bool = False) -> list[str]:
    """One line per clip a run would refuse (its cell, and why), each clip once however many points share it."""
    from tqdm.auto import tqdm

    clips: dict = {}  # a conversation's history clips are shared by its later points: decoded once
    for item in items:
        for message in item.history:
            if message.role == "user" and message.audio is not None:
                clips.setdefault(id(message.audio), (message.audio, True))
        if item.interruption.audio is not None:
            clips.setdefault(id(item.interruption.audio), (item.interruption.audio, True))
        if item.interrupted.audio is not None:  # played in the Space, heard by no model: decodable is enough
            clips.setdefault(id(item.interrupted.audio), (item.interrupted.audio, False))
    problems = []
    for clip, heard in tqdm(clips.values(), unit="clip", desc="checking the audio", disable=not progress):
        where = clip.where or "a clip"
        problems.append(_unusable(lambda: check_samples(clip.decode(SAMPLING_RATE), where), where, heard))
    return [problem for problem in problems if problem]


def unusable_turn_clips(turns, where: str, *, progress: bool = False) -> list[str]:
    """The same for a ConversationBench config's turns (a run plays each turn's clip to the model and
    stops its conversation on one it cannot decode): one line per clip, named by config and turn."""
    from tqdm.auto import tqdm

    problems = []
    for index, turn in enumerate(tqdm(turns, unit="clip", desc="checking the turns' audio", disable=not progress)):
        if not turn.audio:  # a text-only import: nothing to hear
            continue
        at = f"{where}: turn {index} ({turn.audio.get('path') or 'its audio'})"
        problems.append(_unusable(lambda: decode_audio(turn.audio["bytes"], SAMPLING_RATE, where=at), at))
    return [problem for problem in problems if problem]


def _unusable(decode, where: str, heard: bool = True) -> Optional[str]:
    """Why a clip cannot be played (it does not decode), or, when a model hears it, why it would hear
    nothing (empty or silent); None when it is usable."""
    try:
        samples = decode()
    except AudioError as error:
        return str(error)
    if heard and (samples.size == 0 or not np.any(samples)):
        return f"{where}: empty or silent (a model would hear nothing)"
    return None

