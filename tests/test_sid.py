"""SID-Bench: importer, detectors, prediction files and scoring, on a synthetic folder in SID's exact layout."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
from ihbench.dataset.sid import SidFormatError, import_sid, read_sid_folder, sid_rows

from ihbench.sid.detectors import Detector, get_detector, run_detector
from ihbench.sid.evaluate_sid import plot_timing_histogram, score_both, timing_errors
from ihbench.sid.predictions import (
    PredictionFormatError,
    PredictionMismatchError,
    align,
    read_predictions,
    write_predictions,
)

SR = 16_000
# SID-Bench's example prediction file joined by audio name to its zh ground truth (as in test_metrics_sid)
ZH_EXAMPLE = Path(__file__).resolve().parent / "fixtures" / "sid_zh_example.jsonl"
REQUEST_PAD = 0.6  # known leading silence before the rendered request


# --- synthetic SID-Bench folder ------------------------------------------------------------

def _render(text: str) -> np.ndarray:
    """A flite render with its own low-level lead-in cut off, so the true onset is where we pad."""
    from ihbench.dataset.tts import get_engine

    samples = get_engine("flite:slt").synthesize(text)
    frames = samples[: len(samples) // 160 * 160].reshape(-1, 160)
    level = 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)
    return samples[int(np.flatnonzero(level > level.max() - 35)[0]) * 160:]


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * SR), dtype=np.float32)


def _speech_like(seconds: float, rate: int = SR) -> np.ndarray:
    """Harmonics on a gliding 120-180 Hz pitch, 4 Hz syllable envelope: loud, voiced, not words."""
    t = np.arange(round(seconds * rate)) / rate
    phase = 2 * np.pi * np.cumsum(150 + 30 * np.sin(2 * np.pi * 0.7 * t)) / rate
    voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
    envelope = 0.5 * (1 - np.cos(2 * np.pi * 4 * t)) ** 2
    return (0.15 * voiced * envelope).astype(np.float32)


def _tone(seconds: float, frequency: float = 440.0) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    return (0.3 * np.sin(2 * np.pi * frequency * t)).astype(np.float32)


def _clips() -> dict[str, list[tuple[str, np.ndarray, int, bool, float, str | None]]]:
    """(file, samples, rate, total_nonbreak, break_time or None for "== duration", text) per split."""
    rng = np.random.default_rng(0)
    request = np.concatenate([_silence(REQUEST_PAD), _render("Could you book me a table for two tonight?"), _silence(0.3)])
    backchannel = np.concatenate([_silence(0.4), _render("mm-hm"), _silence(0.2)])
    return {
        "en": [("en_request.wav", request, SR, False, REQUEST_PAD, "<break> Could you book me a table for two tonight?"),
               ("en_backchannel.wav", backchannel, SR, True, None, "mm-hm <break>"),
               ("en_tone.wav", np.concatenate([_silence(0.5), _tone(1.0)]), SR, False, 0.5, "<break> beep")],
        "zh": [("zh_speechlike.wav", np.concatenate([_silence(0.3), _speech_like(1.5)]), SR, False, 0.3,
                "<break>我给你个建议啊。"),
               ("zh_22k.wav", np.concatenate([np.zeros(22050 // 2, np.float32), _speech_like(1.0, 22050)]), 22050,
                True, None, "嗯嗯<break>")],
        "silence_or_noise": [("noise_white.wav", (0.05 * rng.standard_normal(2 * SR)).astype(np.float32), SR, True,
                              None, None),
                             ("noise_digital_silence.wav", _silence(1.5), SR, True, None, None)],
    }


FILES = {"en": "en_test_lines.jsonl", "zh": "zh_test_lines.jsonl", "silence_or_noise": "silence_noise_test.jsonl"}


def _write_folder(root: Path) -> Path:
    for subdir, clips in _clips().items():
        (root / "test_wavs" / subdir).mkdir(parents=True)
        lines = []
        for name, samples, rate, nonbreak, break_time, text in clips:
            soundfile.write(root / "test_wavs" / subdir / name, samples, rate, subtype="PCM_16")
            duration = round(len(samples) / rate, 3)
            lines.append(json.dumps({"audio": name, "total_nonbreak": nonbreak, "duration": duration,
                                     "break_time": duration if break_time is None else break_time,
                                     "text_with_break": text}, ensure_ascii=False))
        (root / "test_wavs" / FILES[subdir]).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def sid_folder(tmp_path_factory):
    return _write_folder(tmp_path_factory.mktemp("sid") / "SID-bench")


@pytest.fixture(scope="module")
def imported(sid_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("imported") / "sid-dataset"
    return out, import_sid(sid_folder, out, progress=False)


@pytest.fixture(scope="module")
def silero():
    return get_detector("silero-vad")


def _copy(folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folder, tmp_path / "copy"))


def _edit_line(path: Path, number: int, change) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = change(lines[number - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- reading and importing -------------------------------------------------------------------

def test_import_writes_three_configs_that_load_dataset_opens(imported):
    import datasets

    out, result = imported
    assert result["configs"] == {"sid_en": 3, "sid_zh": 2, "sid_noise": 2}
    assert not list(out.rglob(".*tmp*"))
    for config, count in result["configs"].items():
        data = datasets.load_dataset(str(out), config, split="test")
        assert len(data) == count
        assert set(data.column_names) == {"audio", "audio_file", "total_nonbreak", "duration", "break_time",
                                          "text_with_break"}
        samples = data[0]["audio"].get_all_samples()
        assert samples.sample_rate == 16_000 and samples.data.shape[-1] > 0
        assert all(name.endswith(".wav") for name in data["audio_file"])
    zh = datasets.load_dataset(str(out), "sid_zh", split="test")
    assert zh[1]["total_nonbreak"] and zh[1]["break_time"] == zh[1]["duration"]  # SID's own non-break convention
    assert datasets.load_dataset(str(out), "sid_noise", split="test")["text_with_break"] == [None, None]


def test_import_into_an_ihbench_build_touches_only_the_sid_entries(sid_folder, tmp_path):
    import yaml
    from ihbench.dataset.card import config_entries

    out = tmp_path / "build"
    out.mkdir()
    header = yaml.safe_dump({"pretty_name": "IHBench in-house dev set",
                             "configs": config_entries(("conversations", "baseline"), "dev")}, sort_keys=False)
    card = f"---\n{header}---\n\n# Card\n\ntext\n"
    (out / "README.md").write_text(card, encoding="utf-8")
    import_sid(sid_folder, out, progress=False)
    once = (out / "README.md").read_text(encoding="utf-8")
    import_sid(sid_folder, out, progress=False)  # again: replaced, not duplicated
    twice = (out / "README.md").read_text(encoding="utf-8")
    assert once == twice
    header = yaml.safe_load(twice.split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["conversations", "baseline", "sid_en", "sid_zh", "sid_noise"]
    assert header["configs"][0]["default"] is True
    files = {c: f"{c}/{next((out / c).glob('*.parquet')).name}" for c in ("sid_en", "sid_zh", "sid_noise")}
    assert all(len(list((out / c).glob("*.parquet"))) == 1 for c in files)  # the second import replaced the first
    sid_lines = "".join(f"- config_name: {c}\n  data_files:\n  - split: test\n    path: {path}\n"
                        for c, path in files.items())
    assert twice == card.replace("\n---\n\n# Card", "\n" + sid_lines.rstrip("\n") + "\n---\n\n# Card")


def test_a_different_import_at_the_same_path_is_read_as_new(sid_folder, tmp_path):
    """Files are named by their bytes and named exactly in the card: under one fixed name
    `load_dataset` served a deleted folder's rows from its cache to the folder made again."""
    import datasets

    out = tmp_path / "sid-dataset"
    import_sid(sid_folder, out, progress=False)
    assert datasets.load_dataset(str(out), "sid_en", split="test")["text_with_break"][0].endswith("tonight?")
    root = _copy(sid_folder, tmp_path)
    _edit_line(root / "test_wavs" / "en_test_lines.jsonl", 1,
               lambda text: json.dumps({**json.loads(text), "text_with_break": "<break> A table for three."}))
    shutil.rmtree(out)
    import_sid(root, out, progress=False)

    assert datasets.load_dataset(str(out), "sid_en", split="test")["text_with_break"][0] == "<break> A table for three."


def test_an_absent_split_is_skipped_and_noted(sid_folder, tmp_path):
    root = _copy(sid_folder, tmp_path)
    (root / "test_wavs" / "zh_test_lines.jsonl").unlink()
    configs = read_sid_folder(root)
    assert list(configs) == ["sid_en", "sid_noise"]
    assert any("zh_test_lines.jsonl" in note and "sid_zh" in note for note in configs.notes)
    for name in FILES.values():
        (root / "test_wavs" / name).unlink(missing_ok=True)
    with pytest.raises(SidFormatError, match="no SID-Bench annotation file"):
        read_sid_folder(root)


def test_wav_directories_directly_under_root_are_accepted(sid_folder, tmp_path):
    root = tmp_path / "flat"
    shutil.copytree(sid_folder / "test_wavs", root)
    assert {c: len(rows) for c, rows in read_sid_folder(root).items()} == {"sid_en": 3, "sid_zh": 2, "sid_noise": 2}


@pytest.mark.parametrize("file, line, change, message", [
    ("en_test_lines.jsonl", 2, lambda text: text[:-5], "not valid JSON"),
    ("zh_test_lines.jsonl", 1, lambda text: text.replace('"duration"', '"length"'), "missing field"),
    ("silence_noise_test.jsonl", 2, lambda text: json.dumps({**json.loads(text), "audio": None}), "audio is absent"),
    ("en_test_lines.jsonl", 3, lambda text: json.dumps({**json.loads(text), "break_time": 99.0}),
     "past the clip's duration"),
    ("en_test_lines.jsonl", 2, lambda text: json.dumps({**json.loads(text), "audio": "gone.wav"}), "gone.wav"),
])
def test_bad_rows_name_the_file_and_line(sid_folder, tmp_path, file, line, change, message):
    root = _copy(sid_folder, tmp_path)
    _edit_line(root / "test_wavs" / file, line, change)
    with pytest.raises(SidFormatError, match=f"{file}.*line {line}.*{message}|{file}.*{message}.*line {line}") as error:
        read_sid_folder(root)
    assert str(root / "test_wavs" / file) in str(error.value)


def test_missing_wavs_are_listed_with_their_lines(sid_folder, tmp_path):
    root = _copy(sid_folder, tmp_path)
    (root / "test_wavs" / "en" / "en_tone.wav").unlink()
    with pytest.raises(SidFormatError, match=r"en_test_lines.jsonl: 1 of 3 WAV file\(s\) not found .*line 3: en_tone.wav"):
        read_sid_folder(root)


def test_a_failed_import_leaves_the_previous_one_intact(sid_folder, imported, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(imported[0], out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    root = _copy(sid_folder, tmp_path)
    (root / "test_wavs" / "silence_or_noise" / "noise_white.wav").write_bytes(b"not a wav at all")
    with pytest.raises(SidFormatError, match="silence_noise_test.jsonl line 1: .*noise_white.wav is not a readable"):
        import_sid(root, out, progress=False)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


# --- detectors -------------------------------------------------------------------------------

def test_sid_rows_gives_references_and_16k_clips(imported, sid_folder):
    references, clips = sid_rows(imported[0], "sid_zh")
    assert [r["audio"] for r in references] == ["zh_speechlike.wav", "zh_22k.wav"] == clips.names
    assert set(references[0]) == {"audio", "total_nonbreak", "break_time", "duration"}
    resampled = clips[1]
    assert resampled.dtype == np.float32 and resampled.ndim == 1
    assert abs(len(resampled) / SR - references[1]["duration"]) < 0.01
    raw_references, raw_clips = sid_rows(sid_folder, "sid_zh")  # the raw folder works too
    assert raw_references == references and len(raw_clips[1]) == len(resampled)


def test_silero_finds_the_onset_of_a_padded_utterance(imported, silero):
    references, clips = sid_rows(imported[0], "sid_en")
    prediction = silero.detect(clips[0], SR)
    assert not prediction["total_nonbreak"]
    assert abs(prediction["break_time"] - REQUEST_PAD) <= 0.1
    assert silero.detect(_silence(1.0), SR) == {"total_nonbreak": True, "break_time": -1.0}


@pytest.mark.parametrize("text", ["mm-hm", "yeah"])
def test_silero_fires_on_a_backchannel(silero, text):
    """It hears speech, not intent: on SID-Bench's non-break clips this is a false alarm."""
    prediction = silero.detect(np.concatenate([_silence(0.5), _render(text), _silence(0.3)]), SR)
    assert not prediction["total_nonbreak"] and 0.4 <= prediction["break_time"] <= 0.7


def test_energy_detector_finds_onsets_and_ignores_silence_and_steady_noise(imported):
    energy = get_detector("energy")
    references, clips = sid_rows(imported[0], "sid_en")
    for index in (0, 2):  # the rendered request and the tone
        prediction = energy.detect(clips[index], SR)
        assert abs(prediction["break_time"] - references[index]["break_time"]) <= 0.1
    _, noise = sid_rows(imported[0], "sid_noise")
    assert [energy.detect(clip, SR)["total_nonbreak"] for clip in noise] == [True, True]
    assert energy.calls == 4 and energy.calls_per_clip == [1, 1, 1, 1]


def test_unknown_detectors_and_options_say_what_is_accepted():
    with pytest.raises(KeyError, match="audio-llm, energy, silero-vad"):
        get_detector("whisper")
    with pytest.raises(ValueError, match="frame_ms"):
        get_detector("energy", frame_size=30)


class _Scripted:
    """A loader stand-in answering from a script, to pin down the prefix schedule exactly."""

    name = "scripted"

    def __init__(self, answers):
        self.answers, self.seen = list(answers), []

    def check_modality(self, modality):
        assert modality == "audio"

    def generate(self, conversation, config, seed):
        from ihbench.loaders import Response

        self.seen.append(len(conversation.audio_clips[0]))
        return Response(text=self.answers.pop(0), latency_s=0.0)

    def describe(self):
        return {"loader": self.name}


def test_an_answer_that_is_neither_yes_nor_no_is_a_failed_call_never_a_no():
    """Battery 7, finding 2: "Sure, let me help with that." was scored as "no" on every prefix."""
    loader = _Scripted(["Sure, let me help with that.", "no", "nah"])
    detector = get_detector("audio-llm", loader=loader, hop_ms=500)
    assert detector.detect(_tone(1.2), SR) == {"total_nonbreak": True, "break_time": -1.0}
    assert detector.failed_clips == 1
    assert detector.errors == ["prefix ending at 0.500s: the answer is neither yes nor no ('Sure, let me help with "
                               "that.')"]



def test_an_answer_saying_both_yes_and_no_is_said_so():
    """Battery 64, K9: "Yes and no." is a failed call (battery 63, J11), said as "neither yes nor no"."""
    detector = get_detector("audio-llm", loader=_Scripted(["Yes and no."]), hop_ms=2000)
    assert detector.detect(_tone(1.2), SR) == {"total_nonbreak": True, "break_time": -1.0}
    assert detector.errors == ["prefix ending at 1.200s: the answer says both yes and no ('Yes and no.')"]

def test_audio_llm_detector_asks_every_hop_and_stops_at_the_first_yes():
    loader = _Scripted(["no", "Nope", " Yes, they did.", "yes"])
    detector = get_detector("audio-llm", loader=loader, hop_ms=500)
    assert detector.detect(_tone(2.2), SR) == {"total_nonbreak": False, "break_time": 1.5}
    assert loader.seen == [8000, 16000, 24000] and detector.calls_per_clip == [3]
    quiet = _Scripted(["no"] * 5)
    detector = get_detector("audio-llm", loader=quiet, hop_ms=500)
    assert detector.detect(_tone(2.2), SR) == {"total_nonbreak": True, "break_time": -1.0}
    assert quiet.seen == [8000, 16000, 24000, 32000, 35200]  # the last prefix is the whole clip


def test_audio_llm_detector_runs_a_tiny_qwen2_audio(tmp_path):
    from ihbench.loaders.tiny import make_tiny_model

    from ihbench import loaders

    loader = loaders.get("qwen2-audio")(str(make_tiny_model("qwen2-audio", tmp_path / "tiny")), device="cpu")
    detector = get_detector("audio-llm", loader=loader, hop_ms=400, max_new_tokens=3)
    durations = (1.0, 1.7)
    predictions = run_detector(detector, [_speech_like(d) for d in durations], ["a.wav", "b.wav"], progress=False)
    # random weights answer neither yes nor no (or only pieces of characters, no words): every such answer is a
    # failure named, never a "no"
    assert detector.errors and all("the answer is neither yes nor no" in error or "no letter or digit" in error
                                   for error in detector.errors)
    assert detector.failed_clips == sum(p["total_nonbreak"] for p in predictions)
    for duration, prediction, calls in zip(durations, predictions, detector.calls_per_clip):
        assert set(prediction) == {"audio", "total_nonbreak", "break_time"}
        if prediction["total_nonbreak"]:
            assert prediction["break_time"] == -1.0 and calls == math.ceil(duration / 0.4)
        else:
            assert 0 < prediction["break_time"] <= duration and calls == math.ceil(prediction["break_time"] / 0.4 - 1e-9)
    assert detector.calls == sum(detector.calls_per_clip)


# --- predictions and scoring -----------------------------------------------------------------

def test_prediction_files_round_trip_and_bad_lines_are_named(tmp_path):
    path = write_predictions([{"audio": "a.wav", "total_nonbreak": True, "break_time": 3.0},
                              {"audio": "b.wav", "total_nonbreak": False, "break_time": np.float64(0.25)}],
                             tmp_path / "pred.jsonl")
    assert read_predictions(path) == [{"audio": "a.wav", "total_nonbreak": True, "break_time": -1.0},
                                      {"audio": "b.wav", "total_nonbreak": False, "break_time": 0.25}]
    path.write_text(path.read_text() + '{"audio": "c.wav", "total_nonbreak": "no", "break_time": 1}\n')
    with pytest.raises(PredictionFormatError, match=r"pred.jsonl line 3: total_nonbreak"):
        read_predictions(path)


def test_align_reorders_and_rejects_mismatched_files():
    references = [{"audio": f"/data/en/{n}.wav", "total_nonbreak": True, "break_time": 1.0, "duration": 1.0}
                  for n in "abcd"]
    predictions = [{"audio": f"{n}.wav", "total_nonbreak": True, "break_time": -1} for n in "dcba"]
    assert [p["audio"] for p in align(predictions, references)] == ["a.wav", "b.wav", "c.wav", "d.wav"]
    bad = predictions[:2] + [predictions[0], {"audio": "zz.wav", "total_nonbreak": True, "break_time": -1}]
    with pytest.raises(PredictionMismatchError) as error:
        align(bad, references)
    message = str(error.value)
    assert "1 audio name(s) appear more than once in the predictions: d.wav (x2)" in message
    assert "2 reference clip(s) have no prediction: a.wav, b.wav" in message
    assert "1 prediction(s) are for clips not in the references: zz.wav" in message


def _perfect(references):
    return [{"audio": r["audio"], "total_nonbreak": r["total_nonbreak"],
             "break_time": -1.0 if r["total_nonbreak"] else r["break_time"]} for r in references]


def test_perfect_predictions_score_zero_and_detector_output_scores_finite(imported, silero, tmp_path):
    references, clips = [], []
    for config in ("sid_en", "sid_zh", "sid_noise"):
        config_references, config_clips = sid_rows(imported[0], config)
        references += config_references
        clips += list(config_clips)
    perfect = score_both(list(reversed(_perfect(references))), references)
    for definition in ("notebook", "readme"):
        assert perfect[definition]["fir"] == 0 and perfect[definition]["apt"] == 0
    predictions = run_detector(silero, clips, [r["audio"] for r in references], progress=False)
    scores = score_both(predictions, references)
    for definition, result in scores.items():
        assert result["definition"] == definition and result["n_clips"] == 7
        assert all(math.isfinite(result[k]) for k in ("fir", "apt")) and result["fir"] > 0  # the backchannel
    errors = timing_errors(predictions, references)
    assert len(errors) == sum(not p["total_nonbreak"] and not r["total_nonbreak"] for p, r in zip(predictions, references))
    png = plot_timing_histogram(errors, tmp_path / "timing.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_score_both_reproduces_the_published_zh_numbers():
    rows = [json.loads(line) for line in ZH_EXAMPLE.read_text().splitlines()]
    scores = score_both([r["prediction"] for r in rows], [r["reference"] for r in rows])
    notebook = scores["notebook"]
    assert (notebook["fir"], notebook["irl"], notebook["apt"]) == (0.1375, 0.33837436932391457, 0.6561522135416662)
    assert scores["readme"]["apt"] == notebook["apt"]


def test_detector_interface_is_small():
    class Always(Detector):
        name = "always"

        def _onset(self, samples):
            self.calls += 1
            return 99.0  # clamped to the clip's end

    assert Always().detect(np.ones(8000, np.float32) * 0.1, 8000) == {"total_nonbreak": False, "break_time": 1.0}


def test_a_config_the_dataset_lacks_is_named_with_the_ones_it_has(built):
    """`ihbench sid --config sid_en` on an in-house build (no imported SID-Bench): say so, list configs."""
    with pytest.raises(SidFormatError) as error:
        sid_rows(built, "sid_en")
    message = str(error.value)
    assert "has no config 'sid_en'" in message and "sid_dev_en" in message and "interruptions" in message
    assert "annotation file" not in message


def test_a_clip_with_a_non_finite_sample_is_refused_at_import_naming_it(sid_folder, tmp_path):
    """Battery 10: a float WAV with one infinite sample was imported, then stopped the whole `ihbench sid`
    run with "samples: contain NaN or infinite values", naming no clip."""
    root = _copy(sid_folder, tmp_path)
    wav = sorted((root / "test_wavs" / "en").glob("*.wav"))[0]
    samples, rate = soundfile.read(wav, dtype="float32")
    samples[len(samples) // 2] = np.inf
    soundfile.write(wav, samples, rate, subtype="FLOAT")
    with pytest.raises(SidFormatError, match=f"line [0-9]+: {wav}: samples are not finite numbers"):
        import_sid(root, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_an_annotation_whose_break_lies_past_its_clip_is_refused_at_import(sid_folder, tmp_path):
    """Battery 11: a line listing a 60 s clip with its break at 45 s, for 2 s of audio, was imported and
    scored (APT ten times off)."""
    root = _copy(sid_folder, tmp_path)
    _edit_line(root / "test_wavs" / "en_test_lines.jsonl", 1,
               lambda text: json.dumps({**json.loads(text), "duration": 60.0, "break_time": 45.0}))
    with pytest.raises(SidFormatError, match=r"en_test_lines.jsonl line 1: break_time 45.0 s is past the end of"):
        import_sid(root, tmp_path / "out", progress=False)
