"""The in-house SID-style split, rendered by `ihbench build` (configs `sid_dev_en`, `sid_dev_noise`).

Same fields as SID-Bench so one code path scores both. Positives are a lead-in and a cue rendered
as two segments and joined: `break_time` is where the cue's speech starts, measured on the cue's
own render (not estimated from text). Negatives are backchannels and side remarks, which must not
trigger a detector; as in SID-Bench their text ends in `<break>` and `break_time == duration`.
Noise clips (white, pink, brown noise, mains hum, silence) are seeded, so rebuilds are identical.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from .audio import encode_flac
from .audio_format import SAMPLING_RATE
from .errors import IHBenchError
from .io import read_json_object
from .sources import USER_VOICES

SID_SOURCES = Path(__file__).parent / "sources" / "sid" / "utterances.json"
SID_DEV_SPEECH, SID_DEV_NOISE = "sid_dev_en", "sid_dev_noise"
SID_DEV_CONFIGS = (SID_DEV_SPEECH, SID_DEV_NOISE)
GAP_S = 0.12  # pause between lead-in and cue: a natural breath
ONSET_FRAME_S = 0.005
ONSET_FRACTION = 0.05  # speech starts at the first 5 ms frame above 5 % of the segment's loudest frame


class SidSourceError(IHBenchError, ValueError):
    pass


def load_sid_sources(path: Optional[Path] = None) -> dict:
    """The SID source utterances: a JSON object with non-empty lists `positives` (objects with
    non-empty text `lead` and `cue`) and `negatives` (non-empty texts). A file that is not that
    is refused naming the file and the field, before a build writes anything."""
    path = Path(path or SID_SOURCES)
    data = read_json_object(path, SidSourceError, hint="expected an object with 'positives' and 'negatives' lists")
    for field in ("positives", "negatives"):
        if not isinstance(data.get(field), list) or not data[field]:
            raise SidSourceError(f"{path}: {field}: expected a non-empty list, got "
                                 f"{'nothing' if field not in data else repr(data[field])[:80]}")
    for index, entry in enumerate(data["positives"]):
        if not isinstance(entry, dict):
            raise SidSourceError(f"{path}: positives[{index}]: expected an object with 'lead' and 'cue' texts")
        for field in ("lead", "cue"):
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise SidSourceError(f"{path}: positives[{index}].{field}: missing or empty")
    for index, text in enumerate(data["negatives"]):
        if not isinstance(text, str) or not text.strip():
            raise SidSourceError(f"{path}: negatives[{index}]: must be a non-empty string")
    return data


def speech_onset(samples: np.ndarray) -> int:
    """Index of the first frame of speech in a single TTS segment (its leading pad skipped)."""
    frame = int(ONSET_FRAME_S * SAMPLING_RATE)
    usable = samples[: len(samples) // frame * frame].reshape(-1, frame)
    energy = np.sqrt(np.mean(usable.astype(np.float64) ** 2, axis=1))
    voiced = np.flatnonzero(energy > ONSET_FRACTION * energy.max())
    return int(voiced[0] * frame) if voiced.size else 0


def _row(config: str, name: str, samples: np.ndarray, nonbreak: bool, break_time: Optional[float],
         text: Optional[str]) -> dict:
    duration = len(samples) / SAMPLING_RATE
    return {"audio": {"bytes": encode_flac(samples), "path": f"{config}/{name}.flac"}, "audio_file": f"{name}.flac",
            "total_nonbreak": nonbreak, "duration": duration,
            "break_time": duration if nonbreak else break_time, "text_with_break": text}


def speech_rows(sources: dict, cache, *, progress: bool = True) -> list[dict]:
    """Positives alternate the two user voices; negatives are rendered in both (they are short)."""
    from tqdm.auto import tqdm

    from .tts import get_engine

    rows = []
    gap = np.zeros(int(GAP_S * SAMPLING_RATE), dtype=np.float32)
    jobs = [("positive", i, USER_VOICES[i % len(USER_VOICES)], entry) for i, entry in enumerate(sources["positives"])]
    jobs += [("negative", i * len(USER_VOICES) + v, voice, text) for i, text in enumerate(sources["negatives"])
             for v, voice in enumerate(USER_VOICES)]
    for kind, index, voice, entry in tqdm(jobs, desc="rendering SID clips", unit="clip", disable=not progress):
        engine = get_engine(voice)
        name = f"{kind}_{index:03d}_{voice.replace(':', '-')}"
        if kind == "positive":
            lead, cue = cache.samples(engine, entry["lead"]), cache.samples(engine, entry["cue"])
            samples = np.concatenate([lead, gap, cue])
            break_time = (len(lead) + len(gap) + speech_onset(cue)) / SAMPLING_RATE
            rows.append(_row(SID_DEV_SPEECH, name, samples, False, break_time, f"{entry['lead']} <break>{entry['cue']}"))
        else:
            rows.append(_row(SID_DEV_SPEECH, name, cache.samples(engine, entry), True, None, f"{entry}<break>"))
    return rows


def noise_rows(count: int, seed: int = 0) -> list[dict]:
    """Seeded non-speech clips: white, pink and brown noise, mains hum, digital and near silence."""
    rng = np.random.default_rng(seed)
    kinds = ("white", "pink", "brown", "hum50", "hum60", "silence", "near_silence")
    rows = []
    for index in range(count):
        kind = kinds[index % len(kinds)]
        n = int(rng.uniform(1.0, 8.0) * SAMPLING_RATE)
        level = float(10 ** (rng.uniform(-45, -15) / 20))
        if kind in ("white", "pink", "brown"):
            spectrum = np.fft.rfft(rng.standard_normal(n))
            freqs = np.maximum(np.fft.rfftfreq(n, 1 / SAMPLING_RATE), 1.0)
            spectrum /= {"white": 1.0, "pink": np.sqrt(freqs), "brown": freqs}[kind]
            signal = np.fft.irfft(spectrum, n)
        elif kind.startswith("hum"):
            t = np.arange(n) / SAMPLING_RATE
            base = 50.0 if kind == "hum50" else 60.0
            signal = sum(np.sin(2 * np.pi * base * h * t) / h for h in (1, 2, 3))
        elif kind == "silence":
            signal = np.zeros(n)
        else:
            signal = rng.standard_normal(n) * 1e-4
        peak = np.max(np.abs(signal)) or 1.0
        samples = (signal / peak * (level if kind not in ("silence", "near_silence") else 1.0)).astype(np.float32)
        if kind == "near_silence":
            samples = (signal).astype(np.float32)
        rows.append(_row(SID_DEV_NOISE, f"noise_{index:03d}_{kind}", samples, True, None, None))
    return rows
