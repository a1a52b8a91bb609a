"""Battery 4 (issue 23), files and wording: each file a user can get wrong named in one line with
what is wrong with it, each warning true (its real cause) and said once, and nothing written by a
command that had nothing to write."""
import json
import os

import numpy as np
import pytest

from ihbench.cli import main


def _one_error(capsys, command) -> str:
    """The one error line of `command`, after checking nothing else was said but argparse's usage."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(f"ihbench {command}: error: ")]
    assert len(errors) == 1, err
    others = [line for line in lines if line not in errors and not line.startswith((f"usage: ihbench {command}", " "))]
    assert others == [], err
    return errors[0]


def _files(folder) -> list[str]:
    return sorted(os.path.relpath(os.path.join(root, name), folder) for root, dirs, names in os.walk(folder)
                  for name in dirs + names)


def _wav(path, samples, rate=16_000):
    import soundfile

    soundfile.write(str(path), np.asarray(samples, np.float32), rate, subtype="PCM_16")
    return path


# --- finding 16: a WAV of no frames ------------------------------------------------------------

def test_a_wav_of_no_samples_is_said_to_hold_no_audio(tmp_path, capsys):
    """FFmpeg's words were about start and stop times the user never gave."""
    _wav(tmp_path / "zero.wav", np.zeros((0, 2)))
    assert main(["turns", str(tmp_path / "zero.wav"), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    error = _one_error(capsys, "turns")
    assert error == f"ihbench turns: error: {tmp_path / 'zero.wav'}: no audio (0 samples)"
    assert _files(tmp_path) == ["zero.wav"]


def test_a_recording_of_no_samples_is_refused_by_the_dataset_s_reader_in_the_same_words(tmp_path):
    from ihbench.dataset.audio import AudioError, load_recording

    _wav(tmp_path / "zero.wav", np.zeros(0))
    with pytest.raises(AudioError, match=r"zero.wav \(audio\): no audio \(0 samples\)$"):
        load_recording(tmp_path / "zero.wav")


# --- finding 22: one file for both channels ----------------------------------------------------

def test_turns_refuses_one_file_given_for_both_channels_of_a_pair(tmp_path, capsys):
    mono = _wav(tmp_path / "mono.wav", np.zeros(32_000))
    assert main(["turns", str(mono), str(tmp_path / "." / "mono.wav"), "--pair", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    assert (f"AUDIO: {mono} is given for both channels of a pair (the AI's and the user's); --pair takes each "
            "speaker's own recording") in _one_error(capsys, "turns")
    assert _files(tmp_path) == ["mono.wav"]


# --- finding 23: a transcripts line for a recording that is not analysed -----------------------

def test_a_transcripts_line_for_an_unknown_recording_is_a_warning_even_with_quiet(tmp_path, capsys):
    noise = np.random.default_rng(0).normal(0, 0.001, (32_000, 2))
    audio = _wav(tmp_path / "call.wav", noise)
    transcripts = tmp_path / "tr.jsonl"
    transcripts.write_text(json.dumps({"recording": "nosuchrec", "channel": "A",
                                       "words": [{"word": "hi", "start": 0.1, "end": 0.3}]}) + "\n")
    assert main(["turns", str(audio), "--transcripts", str(transcripts), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning") == 1, err
    assert (f"ihbench turns: warning: {transcripts}: no recording named 'nosuchrec'; those lines are unused "
            "(the recordings are 'call')") in err


# --- finding 27: the SID layout's WAV folder ----------------------------------------------------

def test_sid_import_names_the_wav_folder_the_layout_expects(tmp_path, capsys):
    root = tmp_path / "sid"
    (root / "test_wavs").mkdir(parents=True)
    (root / "test_wavs" / "en_test_lines.jsonl").write_text(json.dumps(
        {"audio": "a.wav", "total_nonbreak": False, "break_time": 1.0, "duration": 2.0,
         "text_with_break": "hi [break] there"}) + "\n")
    _wav(root / "test_wavs" / "a.wav", np.zeros(32_000))  # beside the jsonl, not in test_wavs/en/
    assert main(["sid-import", str(root), "--out", str(tmp_path / "data"), "--quiet"]) == 2
    error = _one_error(capsys, "sid-import")
    assert (f"(no WAV folder for en_test_lines.jsonl: expected them in {root / 'test_wavs' / 'en'}/): line 1: "
            "a.wav") in error
    assert not (tmp_path / "data").exists()


# --- finding 9: a stereo clip, and one far longer than its line says ----------------------------

def test_sid_import_warns_of_a_stereo_clip_and_one_whose_length_is_not_its_line_s(tmp_path, capsys):
    root = tmp_path / "sid"
    (root / "test_wavs" / "en").mkdir(parents=True)
    (root / "test_wavs" / "en_test_lines.jsonl").write_text("".join(json.dumps(
        {"audio": name, "total_nonbreak": False, "break_time": 1.0, "duration": 3.0,
         "text_with_break": "hi [break] there"}) + "\n" for name in ("a.wav", "b.wav")))
    _wav(root / "test_wavs" / "en" / "a.wav", np.zeros((16_000 * 10, 2)))  # 10 s, two channels
    _wav(root / "test_wavs" / "en" / "b.wav", np.zeros(16_000 * 3))  # as listed
    annotations = root / "test_wavs" / "en_test_lines.jsonl"
    assert main(["sid-import", str(root), "--out", str(tmp_path / "data"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"ihbench sid-import: warning: {annotations}: 1 sid_en WAV(s) differ from the listed duration by more than "
        "0.1s (scores use the listed one): a.wav (10.000s, listed 3.0s)",
        f"ihbench sid-import: warning: {annotations}: 1 sid_en WAV(s) are not mono, as SID-Bench's clips are (the "
        "detectors hear their channels mixed): a.wav (2 channels)"], err
