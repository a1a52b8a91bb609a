"""The in-house SID-style split from `ihbench build`, and `ihbench sid` on it."""
import json
import subprocess
import sys

import datasets
import numpy as np
import pytest
from ihbench.dataset.sid import sid_rows
from ihbench.dataset.sid_build import SID_SOURCES, load_sid_sources, speech_onset
from ihbench.dataset.tts import get_engine


def test_the_shipped_sid_sources_are_big_enough_for_300_clips():
    sources = load_sid_sources()
    clips = len(sources["positives"]) + 2 * len(sources["negatives"]) + 90  # negatives in both voices; 90 noise
    assert clips >= 300 and SID_SOURCES.is_file()
    cues = [p["cue"] for p in sources["positives"]]
    assert len(set(cues)) == len(cues)


def test_build_writes_sid_configs_in_sid_bench_fields(built):
    speech = datasets.load_dataset(str(built), "sid_dev_en", split="dev")
    noise = datasets.load_dataset(str(built), "sid_dev_noise", split="dev")
    assert speech.num_rows == 4 + 2 * 3 and noise.num_rows == 7
    assert set(speech.column_names) == {"audio", "audio_file", "total_nonbreak", "duration", "break_time",
                                        "text_with_break"}
    for row in speech:
        if row["total_nonbreak"]:
            assert row["break_time"] == row["duration"] and row["text_with_break"].endswith("<break>")
        else:
            assert 0 < row["break_time"] < row["duration"] and " <break>" in row["text_with_break"]
    assert all(r["total_nonbreak"] and r["text_with_break"] is None for r in noise)
    samples = noise[0]["audio"].get_all_samples()
    assert samples.sample_rate == 16000


def test_break_time_is_where_the_cue_speech_starts_in_its_render(built):
    """Render the cue alone again: its onset plus the lead and the gap is the stored break_time."""
    references, clips = sid_rows(built, "sid_dev_en")
    positive = next(i for i, r in enumerate(references) if not r["total_nonbreak"])
    engine = get_engine("piper:joe")
    lead = engine.synthesize("Yeah, yeah, okay, so")
    cue = engine.synthesize("can you move the delivery to Friday instead?")
    expected = (len(lead) + int(0.12 * 16000) + speech_onset(cue)) / 16000
    assert references[positive]["break_time"] == pytest.approx(expected, abs=1e-6)
    audio = clips[positive]
    before = audio[: int(expected * 16000) - 800]  # the 50 ms before the cue: the gap, near silence
    assert np.sqrt(np.mean(before[-800:] ** 2)) < 0.01


@pytest.mark.parametrize("detector", ["silero-vad", "energy"])
def test_ihbench_sid_on_the_in_house_split(built, tmp_path, detector):
    out = tmp_path / detector
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "sid", "--detector", detector, "--data", str(built),
                             "--config", "sid_dev_en", "--out", str(out), "--quiet"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    from conftest import png_size

    from ihbench.sid.evaluate_sid import score_both
    from ihbench.sid.predictions import read_predictions

    references, _ = sid_rows(built, "sid_dev_en")
    again = score_both(read_predictions(out / "predictions.jsonl"), references)  # the file it wrote, rescored
    for definition in ("notebook", "readme"):
        assert summary["scores"][definition]["fir"] == again[definition]["fir"]
        assert summary["scores"][definition]["apt"] == again[definition]["apt"]
    assert summary["real_time_factor"] > 0 and png_size(out / "timing_errors.png") == (700, 400)
    assert len((out / "predictions.jsonl").read_text().splitlines()) == summary["n_clips"] == 10
    if detector == "silero-vad":  # fires on backchannels: every negative is a false alarm or close to it
        assert summary["scores"]["readme"]["fir"] >= 0.5


def test_mismatched_prediction_file_is_rejected(built, tmp_path):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"audio": "nope.wav", "total_nonbreak": True, "break_time": -1}) + "\n")
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "sid", "--predictions", str(predictions),
                             "--data", str(built), "--config", "sid_dev_en", "--out", str(tmp_path / "o")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "nope.wav" in result.stderr
