"""Interruption detectors for SID-Bench behind one interface, so baselines and models score alike.

A detector hears one clip and says whether, and when, the speaker starts to take the turn:
`{"total_nonbreak": True, "break_time": -1.0}` (SID-Bench's own "no break") or
`{"total_nonbreak": False, "break_time": seconds}`.

- `silero-vad`: first speech onset from Silero VAD; the classic baseline. It fires on any speech,
  backchannels ("mm-hm", "yeah") included, so on SID-Bench's non-break clips it false-alarms.
- `energy`: a frame-energy VAD with no model at all: the floor any detector has to beat.
- `audio-llm`: any `loaders` backend asked, on growing prefixes of the clip, whether the speaker
  has started a request; what a cascaded voice agent could do with an audio LLM.
- `smart-turn`: a real trained end-of-turn model (Smart Turn v3.2, shipped in pipecat-ai) asked at
  each pause a VAD finds, as a voice agent runs it (`ihbench.smart_turn.stream`): it says when the
  user's turn is over, so its break comes at a pause, never at the cue's onset.
"""
from __future__ import annotations

import inspect
import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Iterable, Optional, Sequence

import numpy as np

from ihbench.dataset.argtypes import boolean, check_all, count, milliseconds, number, seed, tokens
from ihbench.dataset.audio import resample
from ihbench.dataset.errors import UnknownNameError, UsageError
from ihbench.dataset.registry import Registry
from ihbench.dataset.schema import SAMPLING_RATE


def no_break() -> dict:
    return {"total_nonbreak": True, "break_time": -1.0}


def break_at(seconds: float) -> dict:
    return {"total_nonbreak": False, "break_time": float(seconds)}


def prepare(samples: np.ndarray, sampling_rate: int) -> np.ndarray:
    """16 kHz mono float32, which every detector here is built for; bad input fails loudly
    instead of being scored as silence."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim == 2:  # (channels, samples) or (samples, channels): the short axis is channels
        samples = samples.mean(axis=0 if samples.shape[0] <= samples.shape[1] else 1)
    if samples.ndim != 1:
        raise UsageError(f"samples: expected mono audio (1-D), got shape {samples.shape}")
    if sampling_rate <= 0:
        raise UsageError(f"sampling_rate: must be > 0, got {sampling_rate}")
    if not np.all(np.isfinite(samples)):
        raise UsageError("samples: contain NaN or infinite values")
    return resample(samples, int(sampling_rate), SAMPLING_RATE)


class Detector(ABC):
    """Subclasses implement `_onset`; `calls` counts model invocations (one per clip for the VADs,
    one per prefix for `audio-llm`), `calls_per_clip` keeps them clip by clip."""

    name: ClassVar[str] = ""
    #: a break after the clip's end is moved to the end; a streaming detector that waits for
    #: silence keeps its real time instead (the apt module scores it as late and counts it)
    clamps_to_clip: ClassVar[bool] = True
    #: how the value of each option is checked (name -> an `ihbench.dataset.argtypes` type), as the
    #: loaders' `option_types`; `check_detector_options` applies them before any work
    option_types: ClassVar[dict] = {}

    def __init__(self) -> None:
        self.calls = 0
        self.calls_per_clip: list[int] = []

    def detect(self, samples: np.ndarray, sampling_rate: int) -> dict:
        samples = prepare(samples, sampling_rate)
        before = self.calls
        onset = self._onset(samples) if samples.size else None
        self.calls_per_clip.append(self.calls - before)
        if onset is None:
            return no_break()
        onset = max(onset, 0.0)
        return break_at(min(onset, samples.size / SAMPLING_RATE) if self.clamps_to_clip else onset)

    @abstractmethod
    def _onset(self, samples: np.ndarray) -> Optional[float]:
        """Seconds from the start of the 16 kHz clip to the detected break, or None."""

    def describe(self) -> dict:
        return {"detector": self.name}


class SileroVadDetector(Detector):
    """The weights ship inside the `silero-vad` package, so nothing is fetched at run time."""

    name = "silero-vad"
    option_types = {"threshold": number(min=0, max=1), "min_speech_duration_ms": milliseconds(),
                    "speech_pad_ms": milliseconds(), "onnx": boolean()}

    def __init__(self, *, threshold: float = 0.5, min_speech_duration_ms: int = 250,
                 speech_pad_ms: int = 0, onnx: bool = False):
        super().__init__()
        from ihbench.silero import load_silero

        self.model = load_silero(onnx=onnx)
        from silero_vad import get_speech_timestamps

        self._timestamps = get_speech_timestamps
        # speech_pad_ms defaults to 0 (silero's is 30): padding suits cutting segments, but
        # here it would move every onset 30 ms early, most of SID-Bench's 50 ms tolerance.
        self.options = {"threshold": threshold, "min_speech_duration_ms": min_speech_duration_ms,
                        "speech_pad_ms": speech_pad_ms, "onnx": onnx}

    def _onset(self, samples: np.ndarray) -> Optional[float]:
        import torch

        self.calls += 1
        options = {k: v for k, v in self.options.items() if k != "onnx"}
        stamps = self._timestamps(torch.from_numpy(samples), self.model, sampling_rate=SAMPLING_RATE, **options)
        return stamps[0]["start"] / SAMPLING_RATE if stamps else None

    def describe(self) -> dict:
        from importlib.metadata import version

        return {"detector": self.name, "silero_vad": version("silero-vad"), **self.options}


class EnergyDetector(Detector):
    """Voiced = a frame louder than both the clip's noise floor + `margin_db` and `floor_dbfs`;
    the onset is the first run of `min_frames` voiced frames. The floor is taken over the whole
    clip, so this baseline peeks ahead; it is a floor to beat, not a streaming system."""

    name = "energy"
    # a frame of more than a second times no onset (1e9 ms scored every clip "no interruption"); no frame is louder
    # than 0 dBFS, and a margin past 60 dB is past any clip's range: either made the detector deaf, every clip a miss
    # (battery 59, F6)
    option_types = {"frame_ms": number(min=0, max=1000, min_open=True), "margin_db": number(min=0, max=60),
                    "floor_dbfs": number(min=-120, max=0, max_open=True),
                    "min_frames": count(), "noise_percentile": number(min=0, max=100)}

    def __init__(self, *, frame_ms: float = 30.0, margin_db: float = 12.0, floor_dbfs: float = -50.0,
                 min_frames: int = 3, noise_percentile: float = 10.0):
        super().__init__()
        if frame_ms <= 0 or min_frames < 1:
            raise UsageError("frame_ms must be > 0 and min_frames >= 1")
        self.options = {"frame_ms": frame_ms, "margin_db": margin_db, "floor_dbfs": floor_dbfs,
                        "min_frames": min_frames, "noise_percentile": noise_percentile}

    def frame_energies(self, samples: np.ndarray) -> np.ndarray:
        """Mean-square energy per frame in dBFS (a full-scale sine is -3 dBFS)."""
        frame = max(1, round(SAMPLING_RATE * self.options["frame_ms"] / 1000))
        count = samples.size // frame
        frames = samples[:count * frame].astype(np.float64).reshape(count, frame)
        return 10.0 * np.log10(np.mean(frames ** 2, axis=1) + 1e-12)

    def _onset(self, samples: np.ndarray) -> Optional[float]:
        self.calls += 1
        energies = self.frame_energies(samples)
        run = self.options["min_frames"]
        if energies.size < run:
            return None
        floor = float(np.percentile(energies, self.options["noise_percentile"]))
        voiced = energies > max(floor + self.options["margin_db"], self.options["floor_dbfs"])
        starts = np.flatnonzero(np.convolve(voiced.astype(int), np.ones(run, dtype=int), "valid") == run)
        return float(starts[0]) * self.options["frame_ms"] / 1000 if starts.size else None

    def describe(self) -> dict:
        return {"detector": self.name, **self.options}


SYSTEM_PROMPT = ("You monitor a live microphone for a voice assistant that is talking. You decide whether the user "
                 "has started to take the turn. Reply with one word: yes or no.")
QUESTION = ("Has the speaker clearly begun a request, a question or an objection that the assistant should stop "
            "and listen to? Backchannels such as 'mm-hm' or 'yeah', fillers, silence and noise do not count. "
            "Answer yes or no.")
_YES = re.compile(r"^[\s\"'*`(\[]*(?:yes|yeah|yep|yup)\b", re.IGNORECASE)  # as "nope" is a no (battery 65, L15)
_NO = re.compile(r"^[\s\"'*`(\[]*(?:no|nope|nah)\b", re.IGNORECASE)


_ANY_YES = re.compile(r"\byes\b", re.IGNORECASE)
_ANY_NO = re.compile(r"\b(?:no|nope|nah)\b", re.IGNORECASE)


def says_yes(text: Optional[str]) -> bool:
    """Opens with yes and says no "no" after it: "No. Actually yes." or "Yes, but no" is neither (battery 63, J11:
    scored by its first word), a failed call as "maybe" is. Read as NFKC folds it: full-width `ｙｅｓ` is yes."""
    text = _folded(text)
    return bool(text) and bool(_YES.match(text)) and not _ANY_NO.search(text)


def says_no(text: Optional[str]) -> bool:
    text = _folded(text)
    return bool(text) and bool(_NO.match(text)) and not _ANY_YES.search(text)


def _folded(text: Optional[str]) -> Optional[str]:
    """NFKC, without characters that show nothing (a zero-width space or a BOM before "No": battery 66, M4)."""
    import unicodedata

    from ihbench.dataset.characters import shows_nothing

    if not isinstance(text, str):
        return text
    return "".join(c if not shows_nothing(c) or c.isspace() else "" for c in unicodedata.normalize("NFKC", text))


class AudioLLMDetector(Detector):
    """Asks the model about prefixes ending every `hop_ms` (the last one is the whole clip) and
    stops at the first "yes"; break_time is that prefix's end, so timing is at best one hop late.
    A clip of D seconds with no "yes" costs ceil(D / hop) generations."""

    name = "audio-llm"
    # at most a minute between the prefixes asked about: longer is one question per clip, timing nothing
    option_types = {"hop_ms": number(min=0, max=60_000, min_open=True), "max_new_tokens": tokens(), "seed": seed()}

    def __init__(self, loader, hop_ms: float = 500.0, *, question: str = QUESTION, system: str = SYSTEM_PROMPT,
                 max_new_tokens: int = 3, seed: int = 0):
        super().__init__()
        from ihbench.loaders import GenerationConfig

        if hop_ms <= 0:
            raise UsageError(f"hop_ms: must be > 0, got {hop_ms}")
        loader.check_modality("audio")
        self.loader, self.hop_ms, self.question, self.system, self.seed = loader, float(hop_ms), question, system, seed
        self.config = GenerationConfig(max_new_tokens=max_new_tokens, temperature=0.0)
        self.errors: list[str] = []  # a loader never raises; its failures are kept here
        self.failed_clips = 0  # clips whose answer is unknown: a call failed before any "yes"

    def prefix_ends(self, n_samples: int) -> list[int]:
        hop = max(1, round(SAMPLING_RATE * self.hop_ms / 1000))
        return [*range(hop, n_samples, hop), n_samples] if n_samples else []

    def _conversation(self, prefix: np.ndarray, end: int):
        from ihbench.loaders import InputTurn, ModelInput

        return ModelInput(f"sid-prefix-{end}", "audio",
                            [InputTurn("system", self.system), InputTurn("user", audio=prefix), InputTurn("user", self.question)])

    def _onset(self, samples: np.ndarray) -> Optional[float]:
        """A failed call, or an answer that is neither yes nor no, is no "no": when one comes before
        any "yes", the clip's answer is unknown, it is counted in `failed_clips`, and the run scores
        nothing (`run_sid`)."""
        failed = False
        for end in self.prefix_ends(samples.size):
            self.calls += 1
            response = self.loader.generate(self._conversation(samples[:end], end), self.config, self.seed)
            if response.error:
                self.errors.append(f"prefix ending at {end / SAMPLING_RATE:.3f}s: {response.error}")
                failed = True
            elif says_yes(response.text):
                self.failed_clips += failed
                return end / SAMPLING_RATE
            elif not says_no(response.text):  # an answer to another question is no "no" either
                text = response.text or ""
                what = "says both yes and no" if _ANY_YES.search(text) and _ANY_NO.search(text) else \
                    "is neither yes nor no"  # battery 64, K9: "Yes and no." was called neither
                self.errors.append(f"prefix ending at {end / SAMPLING_RATE:.3f}s: the answer {what} "
                                   f"({' '.join(text.split())[:60]!r})")
                failed = True
        self.failed_clips += failed
        return None

    def describe(self) -> dict:
        return {"detector": self.name, "hop_ms": self.hop_ms, "question": self.question, "system": self.system,
                "max_new_tokens": self.config.max_new_tokens, "seed": self.seed, "model": self.loader.describe()}


DETECTORS = Registry("detector", {
    "silero-vad": "ihbench.sid.detectors:SileroVadDetector",
    "energy": "ihbench.sid.detectors:EnergyDetector",
    "audio-llm": "ihbench.sid.detectors:AudioLLMDetector",
    "smart-turn": "ihbench.sid.smart_turn_detector:SmartTurnDetector",
})


def available_detectors() -> list[str]:
    return DETECTORS.names()


def _loader_from_name(options: dict) -> dict:
    """`audio-llm` from the command line: a loader name plus `model_path` instead of an instance."""
    if not isinstance(options.get("loader"), str):
        return options
    from ihbench import loaders

    options = dict(options)
    name, model_path = options.pop("loader"), options.pop("model_path", None)
    if model_path is None:
        raise UsageError(f"audio-llm: loader {name!r} given by name needs model_path=")
    options["loader"] = loaders.get(name)(model_path, **options.pop("loader_options", {}))
    return options


def check_detector_options(name: str, options: dict) -> dict:
    """The options of detector `name` checked without creating it (nothing loaded, nothing read):
    an unknown detector or option is named with what is accepted, and a value its option does not
    allow (`Detector.option_types`) says what it may be. Returns them converted."""
    cls = DETECTORS.get(name)
    names = dict(options)
    if cls is AudioLLMDetector and isinstance(names.get("loader"), str):  # loader by name: a stand-in to bind
        names.pop("model_path", None)
        names.pop("loader_options", None)
    accepted = ", ".join(inspect.signature(cls).parameters)
    unknown = [key for key in names if key not in inspect.signature(cls).parameters]
    if unknown:  # said as the option it is, not as Python's "unexpected keyword argument" (battery 59, F13)
        raise UsageError(f"--option {unknown[0]}: detector {name!r} has no such option; it accepts {accepted}")
    try:
        inspect.signature(cls).bind(**names)
    except TypeError as error:
        raise UsageError(f"detector {name!r}: {error}; it accepts {accepted}") from None
    checked = check_all(cls.option_types, options)
    if cls is AudioLLMDetector and isinstance(options.get("loader"), str):
        checked["loader_options"] = _check_loader_options(options["loader"], options.get("loader_options", {}))
    return checked


def _check_loader_options(loader: str, loader_options: Any) -> dict:
    """The named loader's own options, checked as `ihbench run --option` checks them, before any
    audio is read (the loader is built only after the clips are found)."""
    from ihbench import loaders

    try:
        loaders.get(loader)
    except UnknownNameError as error:
        raise UsageError(f"--option loader: {error.args[0]}") from None
    if not isinstance(loader_options, dict):
        raise UsageError(f"--option loader_options: expected a JSON object of the {loader} loader's options, "
                         f"got {loader_options!r}")
    try:
        return loaders.check_options(loader, loader_options)
    except UsageError as error:
        raise UsageError(f"--option loader_options: {error}") from None


def get_detector(name: str, **options: Any) -> Detector:
    """A detector by name; unknown names and options fail with what is accepted."""
    cls = DETECTORS.get(name)
    options = check_detector_options(name, options)
    if cls is AudioLLMDetector:
        options = _loader_from_name(options)
    return cls(**options)


def run_detector(detector: Detector, clips: Iterable[np.ndarray], names: Optional[Sequence[str]] = None, *,
                 sampling_rate: int = SAMPLING_RATE, progress: bool = True) -> list[dict]:
    """Predictions for every clip, each with `audio` (its file name) when names are known, which is
    SID-Bench's prediction-file row."""
    from tqdm.auto import tqdm

    names = list(names) if names is not None else getattr(clips, "names", None)
    total = len(clips) if hasattr(clips, "__len__") else None
    predictions = []
    for index, samples in enumerate(tqdm(clips, total=total, unit="clip", desc=detector.name, disable=not progress)):
        prediction = detector.detect(samples, sampling_rate)
        predictions.append({"audio": names[index], **prediction} if names is not None else prediction)
    return predictions
