"""Smart Turn on a built dataset's own cuts: does the assistant audio heard up to each interruption
point sound like a finished turn? Every `delivered` prefix is written to stop mid-sentence; a
model trained on real end-of-turn audio, which never saw our data, is a second opinion on that.

What it hears is what the build stores and every user of the dataset hears: the interrupted turn's
assistant audio (`assistant_turn_N_audio`, the delivered text rendered alone, which the `duplex`
recordings play too), with the render's own trailing silence (about 0.2 s, the pause after which
pipecat's VAD asks the model). A cut above the model's threshold is a candidate, not proof: the
render of a prefix alone ends the way the TTS ends any utterance, so the same words can sound
final there and unfinished inside the full message. For the flagged cuts only, the full planned
message is rendered in the build's assistant voice (through the TTS render cache) and cut where
the delivered render's speech ends (the cut point `duplex.py` uses for a filler), followed by the
same silence: its probability ("in context") tells a cut whose words sound complete from a render
that merely ends like one.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.errors import UsageError

from .model import THRESHOLD, SmartTurn
from .window import SAMPLING_RATE

AROUND_WORDS = 5  # words shown on each side of a cut
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Cut:
    """One interruption point as the model heard it."""

    id: str
    conversation_id: str
    turn: int
    type: str
    probability: float  # P(turn complete) on the build's render of the delivered text
    before: str  # the last words heard
    after: str  # the first words not heard
    in_context: Optional[float] = None  # the same words cut out of the full message (flagged cuts only)

    def text(self) -> str:
        return f"…{self.before} | {self.after}…"


def around(original: str, delivered: str, words: int = AROUND_WORDS) -> tuple[str, str]:
    """The last `words` words of the delivered text and the first `words` of the rest."""
    return " ".join(_WORD.findall(delivered)[-words:]), " ".join(_WORD.findall(original[len(delivered):])[:words])


def check_folder(folder: Path) -> None:
    """Refuse, in one line and at once, a folder `ihbench build` did not write: only a build holds
    the assistant's audio (the official data has none)."""
    from ihbench.dataset.builddir import BuildDir
    from ihbench.dataset.outputs import described_folder

    if not Path(folder).exists():  # said as what it is, as `info` and `run` say it (battery 58, E12)
        raise UsageError(f"--audio: {folder}: no such folder")
    if not Path(folder).is_dir() or not BuildDir(folder).is_build():
        what = described_folder(folder) if Path(folder).is_dir() else None
        raise UsageError(f"--audio: {folder} is {what or 'not a dataset folder built by `ihbench build`'}"
                         f"{'' if what else ' (no build_info.json)'}; give a folder `ihbench build` wrote")


def load_points(folder: Path) -> list:
    """The dataset's interruption points (`EvalItem`s), refusing points without assistant audio."""
    from ihbench.dataset.load import load_items

    check_folder(folder)
    items = load_items(Path(folder).resolve())
    silent = [item.id for item in items if item.interrupted.audio is None]
    if silent:
        raise UsageError(f"--audio: {folder}: {len(silent)} point(s) have no assistant audio (first: {silent[0]}); "
                         "rebuild it with `ihbench build`")
    return items


def score_cuts(items: Sequence, model: SmartTurn, *, batch: int = 16, progress: bool = True) -> list[Cut]:
    """P(turn complete) for each point's delivered render, `batch` clips per call."""
    from tqdm.auto import tqdm

    cuts = []
    with tqdm(total=len(items), desc="smart-turn on the cuts", unit="cut", disable=not progress) as bar:
        for first in range(0, len(items), batch):
            chunk = items[first:first + batch]
            probabilities = model.probabilities([item.interrupted.audio.decode(SAMPLING_RATE) for item in chunk])
            for item, p in zip(chunk, probabilities):
                before, after = around(item.interrupted.original, item.interrupted.delivered)
                cuts.append(Cut(item.id, item.conversation_id, item.turn, item.interruption_type, float(p),
                                before, after))
            bar.update(len(chunk))
    return cuts


def in_context(items: Sequence, cuts: list[Cut], model: SmartTurn, *, voice: str, cache_dir: Optional[Path] = None,
               progress: bool = True) -> list[Cut]:
    """`cuts` with `in_context` set for the flagged ones: the full message's render up to the cut,
    then the delivered render's own trailing silence (see the module's docstring)."""
    from dataclasses import replace

    from tqdm.auto import tqdm

    from ihbench.dataset.tts import RenderCache, get_engine

    by_id = {item.id: item for item in items}
    flagged = [i for i, cut in enumerate(cuts) if cut.probability > THRESHOLD]
    if not flagged:
        return cuts
    engine, cache = get_engine(voice), RenderCache(cache_dir)  # no TTS: the caller says so and goes on
    clips = []
    for i in tqdm(flagged, desc="rendering flagged messages in full", unit="message", disable=not progress):
        item = by_id[cuts[i].id]
        heard = item.interrupted.audio.decode(SAMPLING_RATE)
        full = cache.samples(engine, item.interrupted.original)
        clips.append(context_clip(heard, full))
    probabilities = model.probabilities(clips)
    out = list(cuts)
    for i, p in zip(flagged, probabilities):
        out[i] = replace(cuts[i], in_context=float(p))
    return out


def context_clip(heard: np.ndarray, full: np.ndarray) -> np.ndarray:
    """The full render from its speech onset for as long as the heard render speaks, then as much
    silence as the heard render ends with."""
    from ihbench.dataset.duplex import speech_spans

    spoken, whole = speech_spans(heard), speech_spans(full)
    if not spoken or not whole:
        return heard
    length = spoken[-1][1] - spoken[0][0]
    start = whole[0][0]
    return np.concatenate([full[start:start + length], np.zeros(len(heard) - spoken[-1][1], dtype=np.float32)])


def summary(cuts: list[Cut], model: SmartTurn, folder: Path) -> dict:
    """What `--audio-report` writes: every cut, the threshold, and the model file's SHA-256 and
    pipecat-ai version (a figure is only worth its weights)."""
    flagged = [cut for cut in cuts if cut.probability > THRESHOLD]
    return {"kind": "verify_audio", "dataset": str(Path(folder).resolve()), "model": model.describe(),
            "threshold": THRESHOLD, "cuts": len(cuts), "flagged": len(flagged),
            "points": [asdict(cut) for cut in cuts]}


def plot(cuts: list[Cut], model: SmartTurn, path: Path) -> None:
    """A histogram of the cut probabilities with the threshold, the model named in the caption."""
    from ihbench.dataset.plotting import pyplot, save_figure

    plt = pyplot()
    probabilities = np.array([cut.probability for cut in cuts])
    flagged = int(np.sum(probabilities > THRESHOLD))
    figure, axes = plt.subplots(figsize=(6.4, 3.4), dpi=100)
    axes.hist(probabilities, bins=np.linspace(0, 1, 21), color="#4c78a8", edgecolor="white")
    axes.axvline(THRESHOLD, color="#d62728", linestyle="--", label=f"threshold {THRESHOLD} ({flagged} above)")
    axes.set_xlabel("Smart Turn P(turn complete) on the audio heard up to the cut")
    axes.set_ylabel("interruption points")
    axes.set_title(f"{len(cuts)} cuts, {flagged} heard as complete turns", fontsize=10)
    axes.legend(fontsize=8)
    info = model.file
    figure.text(0.01, 0.01, f"smart-turn v3.2, pipecat-ai {info.pipecat_ai}, sha256 {info.sha256[:16]}…",
                fontsize=6, color="#555555")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    save_figure(figure, path)
