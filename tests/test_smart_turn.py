"""Smart Turn v3.2 from the installed pipecat-ai wheel: the real model, no stand-in.

Probabilities are asserted loosely (the model is real: these say what it does on our own TTS, not
what we wish it did); the exact rates are printed and recorded in the README.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ihbench.dataset.errors import MissingDependencyError, MissingFileError, UsageError
from ihbench.smart_turn import (VERIFIED_SHA256, VERIFIED_VERSION, SmartTurn, StreamingTurnDetector, decide,
                                fixed_window, log_mel, silence_decision, to_16k)
from turns_synth import render, speech_spans, trim

VOICES = ("piper:joe", "flite:slt")  # the dataset's two user voices, alternated
# (complete sentence, the same sentence cut mid-clause): each cut ends where the clause still needs
# its object, noun or second half (a determiner, a preposition, a conjunction, an auxiliary).
# Written once, measured once; never edited to move a rate.
CORPUS = [
    ("I'd like to change my delivery address.", "I'd like to change my"),
    ("My order never arrived.", "My order never"),
    ("Please cancel my subscription.", "Please cancel my"),
    ("I want to book a table for two tonight.", "I want to book a table for"),
    ("The package was damaged when it arrived.", "The package was damaged when"),
    ("Can you tell me my account balance?", "Can you tell me my"),
    ("I need to reset my password.", "I need to reset my"),
    ("What time does the store close today?", "What time does the"),
    ("I was charged twice for the same order.", "I was charged twice for the"),
    ("Could you send me a copy of the receipt?", "Could you send me a copy of"),
    ("I'd prefer the morning appointment.", "I'd prefer the"),
    ("No, I didn't receive any email.", "No, I didn't receive any"),
    ("My flight was cancelled this morning.", "My flight was cancelled this"),
    ("How long will the repair take?", "How long will the"),
    ("The heating in my apartment stopped working.", "The heating in my"),
    ("I want to speak to a manager.", "I want to speak to a"),
    ("Can I pay the parking ticket online?", "Can I pay the"),
    ("I moved to a new address last month.", "I moved to a new"),
    ("The app crashes every time I open it.", "The app crashes every time I"),
    ("Is there a fee for changing the date?", "Is there a fee for"),
    ("I lost my card yesterday evening.", "I lost my card yesterday and"),
    ("Please send the invoice to my work email.", "Please send the invoice to my"),
    ("We need a room with two beds.", "We need a room with"),
    ("My son has a dentist appointment on Friday.", "My son has a dentist appointment on"),
    ("Can you move my appointment to next week?", "Can you move my appointment to"),
    ("The internet has been down since last night.", "The internet has been down since"),
    ("I'd like to return these shoes.", "I'd like to return these"),
    ("Which platform does the train leave from?", "Which platform does the"),
    ("I forgot the password for my online account.", "I forgot the password for my"),
    ("The refund still hasn't shown up on my statement.", "The refund still hasn't shown up on"),
    ("I ordered the blue one, not the red one.", "I ordered the blue one, not the"),
    ("Do you have any tables available at eight?", "Do you have any tables available at"),
    ("My prescription needs to be renewed.", "My prescription needs to be"),
    ("I'm calling about the job I applied for.", "I'm calling about the job I"),
    ("Could you check whether my payment went through?", "Could you check whether my"),
    ("The washing machine is leaking water on the floor.", "The washing machine is leaking water on the"),
    ("I'd like to add my wife to the policy.", "I'd like to add my wife to"),
    ("Our meeting room is booked for the whole afternoon.", "Our meeting room is booked for the"),
    ("I can't find the confirmation number anywhere.", "I can't find the confirmation number because"),
    ("Please upgrade me to the faster plan.", "Please upgrade me to the"),
    ("The bus was forty minutes late again today.", "The bus was forty minutes late again and"),
    ("How much does it cost to ship to Canada?", "How much does it cost to ship to"),
    ("I'd like a window seat if possible.", "I'd like a window seat if"),
    ("My neighbour's dog barks all night long.", "My neighbour's dog barks all night and"),
    ("Can you read me the last three transactions?", "Can you read me the last three"),
    ("I was told the technician would come today.", "I was told the technician would"),
    ("The screen on my phone cracked after one week.", "The screen on my phone cracked after"),
    ("We'd like to pick up the keys on Saturday.", "We'd like to pick up the keys on"),
    ("Is the pharmacy open on public holidays?", "Is the pharmacy open on"),
    ("I think there's a mistake on my bill.", "I think there's a mistake on my"),
]


@pytest.fixture(scope="module")
def model():
    return SmartTurn(threads=1)


def _renders(pairs):
    """(complete renders, prefix renders), as the TTS gives them (its own short silences around)."""
    complete = [render(text, VOICES[i % 2]) for i, (text, _) in enumerate(pairs)]
    prefixes = [render(text, VOICES[i % 2]) for i, (_, text) in enumerate(pairs)]
    return complete, prefixes


@pytest.fixture(scope="module")
def few():
    return _renders(CORPUS[:6])  # ~40 s on a loaded 2-core machine (the TTS voices load): tests using it are slow


@pytest.fixture(scope="module")
def corpus():
    return _renders(CORPUS)  # the first six come from the render cache


# --- the model file and its dependency ---------------------------------------------------------

def test_the_model_file_loads_from_the_installed_wheel_without_importing_pipecat():
    code = ("import sys, json, numpy as np\n"
            "from ihbench.smart_turn import SmartTurn\n"
            "m = SmartTurn()\n"
            "p = m.probability(np.zeros(16000, np.float32))\n"
            "print(json.dumps({'p': p, 'describe': m.describe(),\n"
            "                  'pipecat': sorted(k for k in sys.modules if k.startswith('pipecat'))}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["pipecat"] == []  # not even the package __init__
    assert out["describe"]["sha256"] == VERIFIED_SHA256 and out["describe"]["pipecat_ai"] == VERIFIED_VERSION
    assert out["describe"]["verified"] is True and out["describe"]["threads"] == 1
    assert 0.0 <= out["p"] <= 1.0


class _FakeDist:
    def __init__(self, version, tmp_path):
        self.version, self.files, self._root = version, [], tmp_path

    def locate_file(self, path):
        return self._root / str(path)


def test_a_missing_package_or_a_moved_model_file_says_which_version_to_install(monkeypatch, tmp_path):
    from importlib import metadata

    from ihbench.smart_turn import model as module

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", absent)
    with pytest.raises(MissingDependencyError, match=r'pip install "ihbench\[smart-turn\]" \(pipecat-ai==1\.14\.0\)'):
        module.model_file()
    monkeypatch.setattr(metadata, "distribution", lambda name: _FakeDist("9.9.9", tmp_path))
    with pytest.raises(MissingFileError) as error:
        module.model_file()
    assert "pipecat-ai 9.9.9 has no pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx" in str(error.value)
    assert "pipecat-ai==1.14.0" in str(error.value)


def test_bad_model_settings_are_refused_by_name():
    with pytest.raises(UsageError, match="threads"):
        SmartTurn(threads=0)


# --- the audio path ------------------------------------------------------------------------------

def test_the_window_keeps_the_last_8_s_and_pads_a_short_clip_on_the_left():
    long = np.arange(130_000, dtype=np.float32)
    assert np.array_equal(fixed_window(long), long[-128_000:])
    short = np.ones(1000, dtype=np.float32)
    window = fixed_window(short)
    assert window.shape == (128_000,) and window[:127_000].max() == 0 and window[-1000:].min() == 1
    assert to_16k(np.zeros(24_000, np.float32), 24_000).shape == (16_000,)


def _voiced(seconds: float, seed: int) -> np.ndarray:
    """Speech-like: harmonics of a gliding pitch under a syllable-rate envelope, plus breath noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16_000)) / 16_000
    f0 = 110 + 40 * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6))
    phase = 2 * np.pi * np.cumsum(f0) / 16_000
    voiced = sum(np.sin(k * phase) / k for k in range(1, 25))
    envelope = np.clip(np.sin(2 * np.pi * 4 * t), 0, None) ** 2
    return (0.1 * voiced * envelope + 0.003 * rng.standard_normal(t.size)).astype(np.float32)


def test_the_feature_port_equals_transformers_whisper_feature_extractor():
    from transformers import WhisperFeatureExtractor

    extractor = WhisperFeatureExtractor(chunk_length=8, feature_size=80)
    noise = np.random.default_rng(0).standard_normal(50_000).astype(np.float32) * 0.05
    # short (left-padded), over 8 s (its end kept), noise, digital silence
    windows = np.stack([fixed_window(x) for x in (_voiced(1.7, 1), _voiced(9.3, 2), noise, np.zeros(100, np.float32))])
    ours = log_mel(windows)
    theirs = extractor(list(windows), sampling_rate=16_000, return_tensors="np", do_normalize=True,
                       padding="max_length", max_length=128_000, truncation=True).input_features
    assert ours.shape == theirs.shape == (4, 80, 800) and ours.dtype == np.float32
    # float32 rounding: transformers normalises the waveform at another precision (about 2e-5 seen on speech,
    # on features of magnitude ~1); pipecat's own port gives these features bit for bit
    assert np.abs(ours - theirs).max() < 1e-4


def _pipecat_analyzer(sample_rate: int):
    try:
        from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
    except ImportError as error:  # pipecat's own module needs loguru, pydantic, ...: not ours to require
        pytest.skip(f"pipecat's analyzer does not import here ({error}); the model file alone is what we use")
    analyzer = LocalSmartTurnAnalyzerV3(cpu_count=1)
    analyzer.set_sample_rate(sample_rate)
    return analyzer


@pytest.mark.slow
def test_end_to_end_probabilities_equal_pipecats_own_analyzer(model, few):
    from ihbench.dataset.audio import resample

    complete, prefixes = few
    clips = [complete[0], prefixes[0], complete[1], np.concatenate(complete[2:6])]  # the last one over 8 s
    ours = model.probabilities(clips)
    analyzer = _pipecat_analyzer(16_000)
    theirs = np.array([analyzer._predict_endpoint(clip)["probability"] for clip in clips])
    assert np.abs(ours - theirs).max() <= 1e-5
    at_24k = resample(complete[3], 16_000, 24_000)  # a pipeline at 24 kHz: both resample with soxr HQ
    analyzer_24k = _pipecat_analyzer(24_000)
    theirs_24k = analyzer_24k._predict_endpoint(at_24k)["probability"]
    assert abs(model.probability(to_16k(at_24k, 24_000)) - theirs_24k) <= 1e-5


@pytest.mark.slow
def test_a_batch_gives_the_probabilities_of_one_by_one(model, few):
    clips = few[0][:3] + few[1][:3]
    assert np.array_equal(model.probabilities(clips), np.array([model.probability(c) for c in clips], np.float32))


# --- what it says on our speech ------------------------------------------------------------------

@pytest.mark.slow
def test_complete_sentences_score_above_the_threshold_and_mid_clause_prefixes_below(model, corpus):
    complete, prefixes = corpus
    assert len(complete) == len(prefixes) >= 50
    p_complete, p_prefix = model.probabilities(complete), model.probabilities(prefixes)
    above = float(np.mean(p_complete > 0.5))
    below = float(np.mean(p_prefix <= 0.5))
    pairs = p_complete[:, None] - p_prefix[None, :]
    auc = float(np.mean(pairs > 0) + 0.5 * np.mean(pairs == 0))
    by_voice = {voice: (float(np.mean(p_complete[i::2] > 0.5)), float(np.mean(p_prefix[i::2] <= 0.5)))
                for i, voice in enumerate(VOICES)}
    print(f"\ncomplete > 0.5: {above:.2f}; prefix <= 0.5: {below:.2f}; AUC {auc:.3f}; by voice {by_voice}")
    # measured (see README): 0.84 / 0.48, AUC 0.746 on renders made anew (piper 0.92 / 0.56, flite
    # 0.76 / 0.40); 0.84 / 0.62, AUC 0.758 on an earlier machine's cached renders. The prefixes are what
    # moves with the machine's TTS packages: the bar on them says the model is not blind to the cut
    # (a coin scores 0.5 on both), the ranking says how far it tells the two apart
    assert above >= 0.80
    assert below >= 0.40  # TTS gives a fragment the final fall of a sentence: the model hears it as an end
    assert auc >= 0.70


# --- the streaming decision ----------------------------------------------------------------------

@pytest.mark.slow
def test_the_streaming_decision_fires_after_the_end_not_before(model, few):
    speech = trim(few[0][0])  # "I'd like to change my delivery address." (piper)
    clip = np.concatenate([np.zeros(8000, np.float32), speech, np.zeros(8000, np.float32)])
    end = 0.5 + speech_spans(speech)[-1][1]
    detector = StreamingTurnDetector(model)
    (trace,) = detector.traces([clip])
    assert trace.pauses and trace.pauses[-1].fallback is not None
    fired = decide(trace, 0.5)
    assert end < fired <= end + 0.2 + 0.1  # at the pause the VAD declares (0.2 s of silence)
    assert trace.pauses[-1].probability > 0.5
    never = decide(trace, 1.0)  # the model never fires: the 3 s fallback does
    assert end + 3.0 < never <= end + 3.2 + 0.1
    assert end + 0.8 <= silence_decision(trace, 0.8) <= end + 0.8 + 0.1
    assert decide(detector.traces([np.zeros(32000, np.float32)])[0]) is None  # no speech, no turn


# --- SID through the metric modules --------------------------------------------------------------

@pytest.mark.slow
def test_sid_figures_with_smart_turn_come_from_the_metric_modules(built, tmp_path):
    from ihbench.cli import main
    from ihbench.dataset.sid import sid_rows
    from ihbench.sid.evaluate_sid import score_both
    from ihbench.sid.predictions import read_predictions

    out = tmp_path / "st"
    code = main(["sid", "--detector", "smart-turn", "--data", str(built), "--config", "sid_dev_en", "--quiet",
                 "--clips", "*piper-joe*", "--tune-clips", "*flite-slt*", "--thresholds", "0.3,0.5,0.7",
                 "--timeouts", "0.4,1", "--out", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    references, _ = sid_rows(built, "sid_dev_en")
    reported = [r for r in references if "piper-joe" in r["audio"]]
    again = score_both(read_predictions(out / "predictions.jsonl"), reported)
    for definition in ("notebook", "readme"):
        for figure in ("fir", "irl", "apt"):
            assert summary["scores"][definition][figure] == again[definition][figure]
    operating = summary["operating_point"]
    assert operating["tuned_on"].endswith("sid_dev_en clips *flite-slt*") and summary["clips"] == "*piper-joe*"
    assert operating["smart_turn"]["threshold"] == summary["detector"]["threshold"]
    assert operating["smart_turn"]["notebook"]["apt"] == summary["scores"]["notebook"]["apt"]
    tuned = summary["tuning"]["sweep"]["smart_turn"]
    assert operating["smart_turn"]["threshold"] == min(tuned, key=lambda r: (r["notebook"]["apt"],
                                                                            r["notebook"]["fir"]))["threshold"]
    assert [r["threshold"] for r in summary["sweep"]["smart_turn"]] == [0.3, 0.5, 0.7]
    assert [r["timeout"] for r in summary["sweep"]["vad_only"]] == [0.4, 1.0]
    assert set(summary["baselines"]) == {"silero-vad", "energy"}
    assert summary["detector"]["sha256"] == VERIFIED_SHA256 and summary["detector"]["pipecat_ai"] == VERIFIED_VERSION
    assert summary["n_clips"] == len(reported) and summary["model_calls"] >= len(reported) - 1
    report = (out / "report.md").read_text()
    assert "| smart-turn |" in report and "| silero-vad |" in report and "| VAD only |" in report
    from conftest import png_size

    assert png_size(out / "sweep.png") == (700, 500)


@pytest.mark.slow
def test_the_operating_point_is_never_tuned_on_the_clips_it_is_reported_on(built, tmp_path, capsys):
    from ihbench.cli import main

    out = tmp_path / "st"
    code = main(["sid", "--detector", "smart-turn", "--data", str(built), "--config", "sid_dev_en", "--quiet",
                 "--clips", "positive*", "--tune-clips", "*piper-joe*", "--thresholds", "0.5", "--out", str(out)])
    assert code == 2 and not out.exists()
    assert "--tune-on: the tuning clips include" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--detector", "energy", "--thresholds", "0.5"], "--thresholds: only for --detector smart-turn, not energy"),
    (["--detector", "smart-turn", "--timeouts", "1"], "--timeouts: needs --thresholds"),
    (["--detector", "smart-turn", "--thresholds", "0.5,1.5"], "argument --thresholds: expected numbers >= 0 and <= 1"),
    (["--detector", "smart-turn", "--thresholds", "0.5", "--timeouts", "0"],
     "argument --timeouts: expected numbers > 0"),
    (["--detector", "smart-turn", "--option", "threshold=2"], "--option threshold: expected a number in [0, 1]"),
    (["--detector", "smart-turn", "--option", "threads=0"], "--option threads: expected a whole number from 1 to 1024"),
    (["--detector", "smart-turn", "--option", "window=3"], "--option window: detector 'smart-turn' has no such option"),
])
def test_bad_smart_turn_options_are_one_line_before_any_work(argv, message, tmp_path, capsys):
    from ihbench.cli import main

    try:
        code = main(["sid", "--data", str(tmp_path / "nodata"), "--out", str(tmp_path / "o"), *argv])
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and message in err[-1] and not (tmp_path / "o").exists()
