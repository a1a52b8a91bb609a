"""The third round of bad inputs (issue 23): what the second battery left, and what a fresh battery
found, each as a user met it. Each is one line naming the file, field or option, never a traceback,
a library's log line, a silent default or a file written."""
import json
import os

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


def _exit_code(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def _files(folder) -> list[str]:
    return sorted(os.path.relpath(os.path.join(root, name), folder) for root, dirs, names in os.walk(folder)
                  for name in dirs + names)


@pytest.mark.parametrize("command", ["run", "generate", "make-tiny-model", "report"])
@pytest.mark.parametrize("value", [str(2**64), "-1", "99999999999999999999999999"])
def test_a_seed_out_of_range_is_refused_when_parsed_with_the_range(command, value, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _exit_code([command, "--seed", value]) == 2
    error = _one_error(capsys, command)
    assert f"argument --seed: expected a whole number from 0 to {2**64 - 1}, got '{value}'" in error
    assert os.listdir(tmp_path) == []


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


@pytest.mark.parametrize("name, text, message", [
    ("generation_config.json", '{"eos_token_id": [1,', "not valid JSON (Expecting value at line 1 column 21)"),
    ("generation_config.json", "[1, 2]", "not a JSON object (an array)"),
    ("preprocessor_config.json", "\ufeff{}".encode("utf-16").decode("latin-1"), "not UTF-8 text (byte 0xff at offset 0)"),
])
def test_a_model_folder_json_file_that_is_not_json_is_named_not_ignored(name, text, message, official, tmp_path,
                                                                         capsys):
    """transformers skips a generation_config.json it cannot read without a word, and the model
    would generate with defaults its makers did not choose."""
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    (model / name).write_bytes(text.encode("latin-1"))
    capsys.readouterr()
    code = main(["run", "--model", "qwen2-audio", "--model-path", str(model), "--data", str(official), "--out",
                 str(tmp_path / "r"), "--limit", "1", "--epochs", "1", "--quiet"])
    assert code == 2 and f"ihbench run: error: {model / name}: {message}" in _one_error(capsys, "run")
    assert not (tmp_path / "r").exists()


def _sid_folder(root):
    """SID-Bench's layout: test_wavs/en/*.wav and en_test_lines.jsonl."""
    import numpy as np
    import soundfile

    (root / "test_wavs" / "en").mkdir(parents=True)
    for name in ("a.wav", "b.wav"):
        soundfile.write(root / "test_wavs" / "en" / name, np.zeros(32_000, np.float32), 16_000, subtype="PCM_16")
    rows = [{"audio": "a.wav", "total_nonbreak": False, "duration": 2.0, "break_time": 0.5, "text_with_break": "x"},
            {"audio": "b.wav", "total_nonbreak": True, "duration": 2.0, "break_time": 2.0, "text_with_break": "y"}]
    (root / "test_wavs" / "en_test_lines.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.mark.parametrize("value", [1e300, -1e300, 86_401])
def test_a_sid_time_no_clip_has_is_refused_when_read_with_file_line_and_field(value, tmp_path, capsys):
    data = _sid_folder(tmp_path / "SID")
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"audio": "a.wav", "total_nonbreak": False, "break_time": 0.7}) + "\n"
                           + json.dumps({"audio": "b.wav", "total_nonbreak": False, "break_time": value}) + "\n")
    code = main(["sid", "--data", str(data), "--config", "sid_en", "--predictions", str(predictions), "--out",
                 str(tmp_path / "s"), "--quiet"])
    assert code == 2
    assert (f"{predictions} line 2: break_time must be seconds within a clip (at most 86400, a day), got {value!r}"
            in _one_error(capsys, "sid"))
    assert not (tmp_path / "s").exists()
    truth = data / "test_wavs" / "en_test_lines.jsonl"
    truth.write_text(truth.read_text().replace('"duration": 2.0', '"duration": 1e300', 1))
    predictions.write_text(predictions.read_text().replace(repr(value) if value != 86_401 else "86401", "0.4"))
    assert main(["sid", "--data", str(data), "--config", "sid_en", "--predictions", str(predictions), "--out",
                 str(tmp_path / "s"), "--quiet"]) == 2
    assert f"{truth} line 1: duration must be seconds within a clip" in _one_error(capsys, "sid")


def test_sid_prints_its_figures_in_a_few_digits():
    from ihbench.cli.sid import _figure

    assert (_figure(0.25), _figure(86_400), _figure(1e300)) == ("0.250", "86400.000", "1e+300")


def _answered(data, out, *extra):
    from openai_test_server import OpenAITestServer

    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(out),
                     "--epochs", "1", "--base-url", server.base_url, "--quiet", *extra]) == 0
    return out


def test_set_baseline_names_the_real_reason_a_run_does_not_cover_the_dataset(built, official, tmp_path, capsys):
    elsewhere = _answered(official, tmp_path / "elsewhere")
    part = _answered(built, tmp_path / "part", "--limit", "1")
    capsys.readouterr()
    assert main(["set-baseline", str(elsewhere), "--data", str(built), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    error = _one_error(capsys, "set-baseline")
    assert f"it ran on another dataset, {official} (its run.json says so)" in error and "--limit" not in error
    assert main(["set-baseline", str(part), "--data", str(built), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    assert "it ran with --limit 1, and a run of some points" in _one_error(capsys, "set-baseline")
    assert not (tmp_path / "b").exists()


def test_make_tiny_model_replaces_its_own_earlier_model_and_nothing_of_the_user_s(tmp_path, capsys):
    out = tmp_path / "tiny"
    assert main(["make-tiny-model", "qwen2-text", "--out", str(out), "--quiet"]) == 0
    first = (out / "model.safetensors").read_bytes()
    assert main(["make-tiny-model", "qwen2-text", "--out", str(out), "--quiet"]) == 0
    assert (out / "model.safetensors").read_bytes() == first  # made again: the same model, the same weights
    # another seed or family would change the weights under the runs made with the folder (battery 59, F7)
    for other in (["qwen2-text", "--seed", "1"], ["qwen2-audio"]):
        capsys.readouterr()
        assert main(["make-tiny-model", *other, "--out", str(out), "--quiet"]) == 2
        assert "holds a tiny qwen2-text model of seed 0; runs made with it would go on with other weights" in \
            _one_error(capsys, "make-tiny-model")
    assert (out / "model.safetensors").read_bytes() == first
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["make-tiny-model", "qwen2-text", "--out", str(out), "--quiet"]) == 2
    assert "holds what make-tiny-model did not write (notes.txt); it would be replaced" in _one_error(
        capsys, "make-tiny-model")
    assert (out / "notes.txt").read_text() == "mine"
    assert main(["make-tiny-model", "qwen2-text", "--out", str(out / "inner"), "--quiet"]) == 2
    assert "is inside" in _one_error(capsys, "make-tiny-model") and not (out / "inner").exists()


def test_info_on_a_turns_folder_says_what_it_is_and_what_to_do(tmp_path, capsys):
    from turns_synth import write_short_call

    write_short_call(tmp_path / "call.wav")
    assert main(["turns", str(tmp_path / "call.wav"), "--out", str(tmp_path / "T"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "T")]) == 2
    error = _one_error(capsys, "info")
    assert "is an `ihbench turns` output folder (summary.json), not a dataset; it holds the turn-taking analysis of " \
           "recordings (`ihbench report` on it shows the results)" in error and "run.json" not in error


def test_every_kind_of_toolkit_folder_given_as_data_says_what_to_give_instead():
    from ihbench.dataset.load import _NOT_DATA
    from ihbench.dataset.outputs import DESCRIPTIONS

    assert set(_NOT_DATA) == set(DESCRIPTIONS) - {"dataset"}


def test_a_run_whose_run_json_is_a_folder_is_named_as_such(official, tmp_path, capsys):
    run = _answered(official, tmp_path / "r")
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0  # a summary.json beside it
    (run / "run.json").unlink()
    (run / "run.json").mkdir()
    before = _files(run)
    capsys.readouterr()
    for argv in (["report", str(run), "--quiet"], ["set-baseline", str(run), "--data", str(official), "--out",
                                                    str(tmp_path / "b"), "--quiet"]):
        assert main(argv) == 2
        error = _one_error(capsys, argv[0])
        assert f"{run / 'run.json'}: is a folder, not the JSON file `ihbench run` writes" in error
        assert "a report" not in error
    assert _files(run) == before and not (tmp_path / "b").exists()


def test_a_damaged_parquet_file_is_one_line_naming_it_with_no_library_log_before(official):
    """In a process of its own: the library's log handler holds the stderr of the moment it was
    imported, which no capture fixture of this process sees."""
    import subprocess
    import sys

    (parquet,) = (official / "conversations").glob("*.parquet")
    parquet.write_bytes(os.urandom(3000))
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "info", str(official), "--quiet"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [  # and nothing before it: no "Failed to read schema from ..."
        f"ihbench info: error: {parquet}: not a readable Parquet file (Parquet magic bytes not found in footer. "
        "Either the file is corrupted or this is not a parquet file.); rebuild the dataset (`ihbench build`) or copy "
        "it again"]


def test_a_resume_on_a_dataset_rebuilt_with_other_points_is_refused_before_any_call(official, tmp_path, capsys,
                                                                                   monkeypatch):
    import datasets
    from official_layout import official_features, official_rows

    run = _answered(official, tmp_path / "r")
    before = (run / "responses.jsonl").read_bytes(), (run / "run.json").read_bytes()
    rows = [{**row, "conversation_id": f"other-{row['conversation_id']}"} for row in official_rows()]
    for old in (official / "conversations").glob("*.parquet"):
        old.unlink()
    datasets.Dataset.from_list(rows, features=official_features()).to_parquet(
        str(official / "conversations" / "test-rebuilt.parquet"))
    # as a rebuild's new file names do (`ihbench build` names them by their bytes): not served from the cache
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache-after-rebuild"))
    capsys.readouterr()
    from openai_test_server import OpenAITestServer

    with OpenAITestServer() as server:
        code = main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--epochs", "1", "--base-url", server.base_url, "--allow-endpoint-change", "--quiet"])
        calls = len(server.requests)
    assert code == 2 and calls == 0
    error = _one_error(capsys, "run")
    assert "point(s) answered in this run are not in" in error and "it holds another dataset than when the run " \
                                                                    "started" in error
    assert ((run / "responses.jsonl").read_bytes(), (run / "run.json").read_bytes()) == before


def test_a_refused_sid_import_leaves_no_output_folder(tmp_path, capsys):
    data = _sid_folder(tmp_path / "SID")
    (data / "test_wavs" / "en" / "b.wav").write_text("junk")
    (tmp_path / "out").mkdir()
    capsys.readouterr()
    assert main(["sid-import", str(data), "--out", str(tmp_path / "out" / "new" / "sid"), "--quiet"]) == 2
    assert "b.wav is not a readable audio file" in _one_error(capsys, "sid-import")
    assert os.listdir(tmp_path / "out") == []


@pytest.mark.parametrize("command", ["run", "generate"])
@pytest.mark.parametrize("value", ["99", "2.5", "-0.1", "nan"])
def test_a_temperature_outside_what_servers_take_is_refused_when_parsed(command, value, tmp_path, capsys,
                                                                        monkeypatch):
    """One range for every temperature, 0 to 2: OpenAI-compatible servers answer 400 to anything
    else (a whole run of failures), and a local model's distribution is flat noise beyond it."""
    monkeypatch.chdir(tmp_path)
    assert _exit_code([command, "--temperature", value, "--out", str(tmp_path / "o")]) == 2
    assert f"argument --temperature: expected a number in [0, 2], got '{value}'" in _one_error(capsys, command)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("action", [["info"], ["prune", "--max-entries", "1"]])
def test_cache_info_and_prune_never_turn_an_empty_file_into_a_database(action, tmp_path, capsys):
    """`info` opens the cache read-only (SQLite cannot write to it); `prune` has nothing to remove
    from a file without a cache table, so it does not open it for writing either."""
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert main(["cache", *action, "--cache", str(empty)]) == 0
    assert f"{empty}: an empty file, no cache yet (nothing was written to it)" in capsys.readouterr().out
    assert empty.read_bytes() == b"" and _files(tmp_path) == ["empty.sqlite"]


def test_cache_info_leaves_a_cache_file_as_it_was(tmp_path, capsys):
    from ihbench.llm import LLMCache

    cache = LLMCache(tmp_path / "c.sqlite")
    cache.put("k", {"v": 1})
    cache.close()
    before = (tmp_path / "c.sqlite").read_bytes()
    assert main(["cache", "info", "--cache", str(tmp_path / "c.sqlite")]) == 0
    assert "1 answer(s)" in capsys.readouterr().out and (tmp_path / "c.sqlite").read_bytes() == before


def test_a_cache_variable_naming_a_file_is_refused_for_every_cache(tmp_path, capsys, monkeypatch):
    """The check is where the cache folder is found (`cache_root`), so the TTS renders, the tiny
    models and the LLM answers all say it, instead of 'no cache yet' for a path inside a file."""
    text = tmp_path / "text.sqlite"
    text.write_text("hello")
    monkeypatch.setenv("IHBENCH_CACHE", str(text))
    assert main(["cache", "info"]) == 2
    assert (f"IHBENCH_CACHE={text}: {text} is a file; the toolkit's cache must be a folder (set IHBENCH_CACHE to a "
            "folder)") in _one_error(capsys, "cache")
    assert text.read_text() == "hello" and _files(tmp_path) == ["text.sqlite"]


@pytest.mark.parametrize("subtype, message", [
    ("FLOAT", "samples are not finite numbers (NaN or infinite; a damaged file)"),
    ("PCM_16", "channel 0 holds one value, -1, in every sample: no sound (a damaged file; NaN samples saved as "
               "16-bit PCM read back so)")])
def test_a_recording_of_nan_samples_is_refused_not_analysed_as_silence(subtype, message, tmp_path, capsys):
    """Decoded samples are checked in one place (`ihbench.dataset.audio.check_samples`). Saved as
    16-bit PCM, NaN is no longer NaN but full scale in every sample: a level, not a sound, which
    the voice detector took for silence. A channel of one non-zero value throughout is refused
    (all zeros stays a valid silent recording)."""
    import numpy as np
    import soundfile

    soundfile.write(str(tmp_path / "nan.wav"), np.full((16000, 2), np.nan, np.float32), 16000, subtype=subtype)
    assert main(["turns", str(tmp_path / "nan.wav"), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert f"{tmp_path / 'nan.wav'}: {message}" in _one_error(capsys, "turns")
    assert _files(tmp_path) == ["nan.wav"]


def test_a_file_that_cannot_be_decoded_is_named_without_the_library_s_source_paths(tmp_path, capsys):
    (tmp_path / "bad.wav").write_text("garbage")
    assert main(["turns", str(tmp_path / "bad.wav"), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    error = _one_error(capsys, "turns")
    assert f"{tmp_path / 'bad.wav'}: cannot decode audio (RuntimeError: Could not open input file" in error
    assert ".cpp" not in error and "/__w/" not in error


def test_a_library_s_source_place_is_cut_from_a_decoding_message():
    from ihbench.dataset.audio import decoder_message

    error = RuntimeError("SingleStreamDecoder, /__w/torchcodec/torchcodec/src/torchcodec/_core/SingleStreamDecoder.cpp"
                         ":80, Could not open input file: c1.wav Invalid data found when processing input")
    assert decoder_message(error) == "RuntimeError: Could not open input file: c1.wav Invalid data found when " \
                                     "processing input"


@pytest.mark.parametrize("name", ["lk.npy", "lk.npz"])
def test_a_likelihoods_file_that_is_not_numpy_says_so_without_pickle_advice(name, tmp_path, capsys):
    """numpy reads a file without its header as a pickle and advises loading it unsafely: advice a
    CLI user cannot follow and should not."""
    import numpy as np
    import soundfile

    soundfile.write(str(tmp_path / "call.wav"), np.zeros((16000, 2), np.float32), 16000)
    (tmp_path / name).write_text("garbage\n")
    assert main(["turns", str(tmp_path / "call.wav"), "--judge-likelihoods", str(tmp_path / name), "--out",
                 str(tmp_path / "o"), "--quiet"]) == 2
    error = _one_error(capsys, "turns")
    assert f"{tmp_path / name}: not a NumPy {name[-4:]} file (it does not start as one)" in error
    assert "pickle" not in error and not (tmp_path / "o").exists()


def test_verify_reads_a_source_saved_with_a_byte_order_mark(tmp_path, capsys):
    """Windows editors write a UTF-8 byte-order mark; it says nothing about the content, so it is
    read past rather than refused with Python's advice to decode as utf-8-sig."""
    from pathlib import Path

    import ihbench.dataset

    source = Path(ihbench.dataset.__file__).parent / "sources" / "conversations" / "telecom-02-home-internet-move.json"
    copy = tmp_path / source.name
    copy.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
    assert main(["verify", str(copy), "--no-audio", "--quiet"]) == 0
    assert "OK: 1 conversation(s)" in capsys.readouterr().out


@pytest.mark.parametrize("option, value", [("--judge-base-url", "http://127.0.0.1:1/v1"), ("--timeout", "5"),
                                           ("--concurrency", "2"), ("--cache", "c.sqlite")])
def test_verify_refuses_a_semantic_review_option_without_the_review(option, value, tmp_path, capsys, monkeypatch):
    """Without --judge-model no LLM is asked, and "OK" would read as if the review had run."""
    import ihbench.dataset

    monkeypatch.chdir(tmp_path)
    source = os.path.join(os.path.dirname(ihbench.dataset.__file__), "sources", "conversations",
                          "telecom-02-home-internet-move.json")
    assert _exit_code(["verify", source, "--no-audio", option, value, "--quiet"]) == 2
    assert (f"{option} is an option of the semantic review, which only --judge-model MODEL asks for; give "
            "--judge-model too, or leave it out") in _one_error(capsys, "verify")
    assert os.listdir(tmp_path) == []


def test_a_predicted_break_far_past_its_clip_s_end_is_refused_with_its_line(tmp_path, capsys):
    """The judgment: a break may fall up to 10 s past its clip's end (a streaming detector waits out
    trailing silence; SID-Bench's own fallback is 3 s), no further: 86 000 s in a 2-s clip is a unit
    slip on one row that would swamp every mean, so it is refused naming the line, not scored."""
    data = _sid_folder(tmp_path / "SID")
    predictions = tmp_path / "p.jsonl"

    def write(break_time):
        predictions.write_text(json.dumps({"audio": "a.wav", "total_nonbreak": False, "break_time": 0.5}) + "\n"
                               + json.dumps({"audio": "b.wav", "total_nonbreak": False, "break_time": break_time})
                               + "\n")
    write(86_000)
    argv = ["sid", "--data", str(data), "--config", "sid_en", "--predictions", str(predictions), "--out",
            str(tmp_path / "s"), "--quiet"]
    assert main(argv) == 2
    assert (f"{predictions} line 2: break_time 86000 s is past the end of b.wav (2 s long) by more than 10 s; a time "
            "in milliseconds?") in _one_error(capsys, "sid")
    assert not (tmp_path / "s").exists()
    write(11.5)  # within the slack: a late detector, scored
    assert main(argv) == 0


@pytest.mark.parametrize("value", ["2001", "100000000"])
def test_build_refuses_more_noise_clips_than_a_false_alarm_test_needs(value, tmp_path, capsys, monkeypatch):
    """The judgment: at most 2000 (ten times SID-Bench's own 210-clip silence/noise split, 2.5 hours
    of audio); 10^8 started a build that would render for days."""
    monkeypatch.chdir(tmp_path)
    assert _exit_code(["build", "--out", str(tmp_path / "b"), "--sid-noise-clips", value, "--quiet"]) == 2
    assert f"argument --sid-noise-clips: expected a whole number from 1 to 2000, got '{value}'" in _one_error(
        capsys, "build")
    assert os.listdir(tmp_path) == []


def test_run_counts_failed_items_apart_from_responses_written(official, tmp_path, capsys):
    import itertools

    from openai_test_server import OpenAITestServer

    calls = itertools.count()
    with OpenAITestServer(fail_when=lambda body: 500 if next(calls) == 0 else None) as server:
        code = main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "2", "--base-url", server.base_url, "--option",
                     "max_retries=0", "--quiet"])
    assert code == 1
    assert ": 1 response(s) written, 1 failed (kept, tried again by the next run), 0 already done, 2 planned" in \
        capsys.readouterr().out


@pytest.mark.parametrize("config, kind", [
    ("duplex", "a turn-taking config (two-channel recordings for `ihbench turns`)"),
    ("sid_dev_en", "a SID config (clips for `ihbench sid`)"),
    ("baseline", "the baseline answers to the points of config conversations (read with it, never alone)")])
def test_run_on_a_config_of_another_kind_says_what_it_is_not_a_missing_column(config, kind, built, tmp_path,
                                                                              capsys):
    """Said where every reader of interruption points opens a config (`load_items`); a
    ConversationBench `_setup` config is named the same way there."""
    code = main(["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                 str(built), "--config", config, "--out", str(tmp_path / "r"), "--epochs", "1", "--quiet"])
    assert code == 2
    error = _one_error(capsys, "run")
    assert f"config {config!r} is {kind}, not interruption points; give conversations or interruptions" in error
    assert "missing" not in error and not (tmp_path / "r").exists()


def _emptied(official):
    import pyarrow.parquet as pq

    (parquet,) = (official / "conversations").glob("*.parquet")
    pq.write_table(pq.read_table(parquet).slice(0, 0), parquet)
    return parquet


@pytest.mark.parametrize("command", ["info", "space"])
def test_a_config_of_no_rows_is_named_by_its_file_and_refused_before_serving(command, official, capsys):
    """Said where every reader opens a local config (`load_config`), and by the Space before it
    serves (`check_source`): the library's words were "An error occurred while generating the dataset"."""
    parquet = _emptied(official)
    argv = ["space", "--data", str(official)] if command == "space" else ["info", str(official), "--quiet"]
    assert main(argv) == 2
    assert f"{parquet}: holds no rows (config 'conversations' is empty); rebuild the dataset (`ihbench build`) or " \
        "copy it again" in _one_error(capsys, command)


def test_a_config_file_the_card_lists_but_that_is_gone_is_named_in_a_short_line(official, tmp_path, capsys):
    """The library's message listed some 300 file extensions it had looked for."""
    (parquet,) = (official / "conversations").glob("*.parquet")
    parquet.unlink()
    assert main(["info", str(official), "--quiet"]) == 2
    error = _one_error(capsys, "info")
    assert f"{parquet.parent / 'test-*'}: no file matches it (the card lists it for config 'conversations'); " \
           "rebuild the dataset (`ihbench build`) or copy it again" in error and len(error) < 400
    build = tmp_path / "built"  # a card naming its files exactly, as `ihbench build` writes it
    (build / "conversations").mkdir(parents=True)
    (build / "README.md").write_text("---\nconfigs:\n- config_name: conversations\n  data_files:\n  - split: dev\n"
                                     "    path: conversations/dev-1.parquet\n---\n")
    assert main(["info", str(build), "--quiet"]) == 2
    assert f"{build / 'conversations' / 'dev-1.parquet'}: missing (the card lists it for config 'conversations')" in \
        _one_error(capsys, "info")


def test_a_folder_whose_readme_has_no_card_metadata_is_one_line_without_library_warnings(tmp_path):
    """In a process of its own: huggingface_hub's warning ("Repo card metadata block was not found")
    goes to a handler that holds the stderr of the moment it was imported."""
    import subprocess
    import sys

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "README.md").write_text("# hello\n")
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "info", str(tmp_path / "d"), "--quiet"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"ihbench info: error: {tmp_path / 'd' / 'README.md'}: has no dataset card metadata (configs:); not a dataset "
        "written by `ihbench build` or `ihbench sid-import`, nor one downloaded from the Hub"]


def test_info_on_a_model_folder_says_it_is_one(tmp_path, capsys):
    """A model folder made before make-tiny-model left its marker file, or any checkpoint."""
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-text", tmp_path / "m")
    for marker in model.glob("ihbench_tiny_model.json"):
        marker.unlink()
    capsys.readouterr()
    assert main(["info", str(model), "--quiet"]) == 2
    assert f"{model}: is a model folder (config.json and weights), not a dataset; it is a model (`ihbench run " \
        "--model-path` takes it); give a dataset folder built by `ihbench build`" in \
        _one_error(capsys, "info")


def test_the_space_does_not_print_gradio_s_share_advice(official, capsys, monkeypatch):
    """`ihbench space` says its address itself; gradio's lines advise launch(share=True), which no
    user of the command can set."""
    import gradio

    seen = {}

    def launch(self, **kwargs):
        seen.update(kwargs)

    monkeypatch.setattr(gradio.Blocks, "launch", launch)
    port = 7000 + os.getpid() % 1000
    assert main(["space", "--data", str(official), "--port", str(port), "--quiet"]) == 0
    assert seen.get("quiet") is True


def test_a_loader_s_dtype_is_checked_with_its_other_options_and_named_as_one(tmp_path, capsys, monkeypatch):
    """dtype is in the loader's `option_types`, so it is checked where --option is, before anything."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    code = main(["run", "--model", "qwen2-audio", "--model-path", str(tmp_path / "m"), "--data", str(tmp_path),
                 "--out", str(tmp_path / "r"), "--quiet", "--option", "dtype=float7"])
    assert code == 2
    assert "--option dtype: expected one of auto, float32, float16, bfloat16, got 'float7'" in _one_error(capsys, "run")
    assert os.listdir(tmp_path) == ["m"]


def test_publish_metrics_names_its_namespace_option(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["publish-metrics", "--namespace", "", "--dry-run"]) == 2
    assert "--namespace: expected a user or organization name (letters, digits, '.', '_', '-', starting with a letter " \
        "or digit), got ''" in _one_error(capsys, "publish-metrics")
    assert os.listdir(tmp_path) == []


def test_convbench_import_says_a_reserved_name_is_reserved_not_taken(tmp_path, capsys):
    """The folder given has no sid_en; the name is refused because sid-import writes it."""
    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "cb")
    for name, writer in (("sid_en", "`ihbench sid-import`"), ("duplex", "`ihbench build`")):
        assert main(["convbench-import", str(folder), "--out", str(tmp_path / "d"), "--name", name, "--quiet"]) == 2
        error = _one_error(capsys, "convbench-import")
        assert f"--name: {name!r} is reserved for a config {writer} writes; choose another name" in error
        assert "taken" not in error
    assert not (tmp_path / "d").exists()


def test_convbench_import_refuses_an_empty_knowledge_base(tmp_path, capsys):
    """Every kb_grounding verdict would be judged against nothing."""
    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "cb")
    kb = folder / "data" / "knowledge_base.txt"
    kb.write_text("\n  \n")
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert f"{kb}: is empty; the model and the judges read the knowledge base from it" in _one_error(
        capsys, "convbench-import")
    assert not (tmp_path / "d").exists()


def test_judge_on_a_run_with_nothing_answered_makes_no_judgments_file(official, tmp_path, capsys):
    from openai_test_server import OpenAITestServer

    with OpenAITestServer(fail_when=lambda body: 500) as down:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "2", "--base-url", down.base_url, "--option",
                     "max_retries=0", "--quiet"]) == 1
    before = _files(tmp_path / "r")
    with OpenAITestServer() as judge:
        main(["judge", str(tmp_path / "r"), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
              str(tmp_path / "c.sqlite"), "--quiet"])
        assert judge.requests == []
    assert _files(tmp_path / "r") == before and not (tmp_path / "r" / "judgments.jsonl").exists()


def test_report_s_console_line_says_how_many_judgments_failed(official, tmp_path, capsys):
    """As it says of failed responses: report.md showed the judge errors, the one line did not."""
    from openai_test_server import OpenAITestServer, Reply

    run = _answered(official, tmp_path / "r", "--limit", "1")
    with OpenAITestServer(respond=lambda body: Reply(content="not json")) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"]) == 1
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
    out = capsys.readouterr().out
    assert "no TF judgments, no RQ judgments" in out
    assert f"; 2 judgment(s) failed (judge_error), not scored (`ihbench judge {run} --judge-model j` with the server " \
        "it used (--judge-base-url) tries them again)" in out
    # battery 61, H5 (P3): the bare `ihbench judge RUN` it suggested lacked --judge-model, and wrote judgments.jsonl
    # when the errors were in another file
    (run / "judgments.jsonl").rename(run / "judgments-j.jsonl")
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
    out = capsys.readouterr().out
    assert f"(`ihbench judge {run} --judge-model j --out {run / 'judgments-j.jsonl'}` with the server it used " \
        "(--judge-base-url) tries them again)" in out


def test_the_openai_loader_without_a_server_or_a_key_is_refused_before_work_starts(official, tmp_path, capsys,
                                                                                   monkeypatch):
    """The judgment: only no --base-url AND no key is refused (OpenAI answers nothing without a key);
    a server of one's own, a local vLLM, may need none, so a --base-url alone is enough."""
    from openai_test_server import OpenAITestServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(tmp_path / "r"),
            "--epochs", "1", "--limit", "1", "--quiet"]
    assert main(argv) == 2
    assert ("the openai loader's default server is OpenAI and OPENAI_API_KEY is not set; give --base-url for a "
            "server of your own (vLLM needs no key) or set the variable") in _one_error(capsys, "run")
    assert not (tmp_path / "r").exists()
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0


def test_an_output_in_a_config_folder_of_a_dataset_names_the_dataset(official, tmp_path, capsys):
    """Being inside one of the toolkit's folders is said before being a folder of other files: the
    config folder holds Parquet files, and "already holds files" did not name the dataset."""
    before = _files(official)
    code = main(["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                 str(official), "--out", str(official / "conversations"), "--quiet"])
    assert code == 2
    assert f"--out: {official / 'conversations'} is inside {official}, a dataset folder" in _one_error(capsys, "run")
    assert _files(official) == before


@pytest.mark.parametrize("endpoint, written", [
    ("http://user:sk-NOT-IN-CARD@127.0.0.1:9/v1", "http://<redacted>@127.0.0.1:9/v1"),
    ("https://sk-NOT-IN-CARD@127.0.0.1:9/v1?api_key=sk-NOT-IN-CARD2",
     "https://<redacted>@127.0.0.1:9/v1?api_key=<redacted>"),
    ("http://127.0.0.1:9/v1?key=sk-NOT-IN-CARD&token=abc", "http://127.0.0.1:9/v1?key=<redacted>&token=<redacted>"),
])
def test_set_baseline_never_copies_a_key_from_run_json_into_the_card(endpoint, written, built, tmp_path, capsys):
    """Battery 36, F3 (P2): a run.json whose endpoint held a key in its URL (a hand edit, or a copy from
    elsewhere) had the key written into the new dataset's README.md and build_info.json, for upload.
    Battery 37, G1: a key in the query was redacted up to the next space, and took the card's closing
    backtick and comma with it (an open code span in the card)."""
    import json

    run = _answered(built, tmp_path / "run")
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "endpoint": endpoint}))
    assert main(["set-baseline", str(run), "--data", str(built), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    for name in ("README.md", "build_info.json"):
        text = (tmp_path / "b" / name).read_text()
        assert "sk-NOT-IN-CARD" not in text and written in text, name
    assert f"`{written}`," in (tmp_path / "b" / "README.md").read_text()


@pytest.mark.parametrize("argv", [["publish-dataset", "{loop}", "--repo", "me/x", "--dry-run"],
                                  ["sid", "--data", "{loop}", "--detector", "energy", "--out", "{tmp}/s"],
                                  ["set-baseline", "{tmp}/run", "--data", "{loop}", "--out", "{tmp}/b"],
                                  ["info", "{loop}/inside"]])
def test_a_dataset_given_as_a_symlink_loop_is_one_line(argv, tmp_path, capsys):
    """Battery 38, H5 (P2): publish-dataset, set-baseline --data and sid --data ended in a traceback
    ("RuntimeError: Symlink loop from ...") for links that point at each other, where every path option
    said so in one line. A dataset option (a folder or a Hub id) now says it too."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "run").mkdir()
    argv = [part.format(loop=tmp_path / "a", tmp=tmp_path) for part in argv]
    before = sorted(tmp_path.iterdir())
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and sorted(tmp_path.iterdir()) == before
    given = next(part for part in argv if part.startswith(str(tmp_path / "a")))
    assert err.strip().splitlines()[-1].endswith(
        f"expected a dataset folder or a Hub id, got '{given}' (a symlink loop: its links point at each other)"), err


def test_sid_import_says_which_clips_hold_the_same_audio(tmp_path, capsys):
    """Battery 39, J4: a copy of a clip under another name, labelled the opposite way (break / no break),
    and a clip listed in two languages were imported without a word, though every detector is scored
    wrong on one of the pair and a copy counts twice. Said, not refused: SID-Bench is kept as published."""
    import numpy as np
    from test_battery4_files import _wav

    root = tmp_path / "sid"
    for language in ("en", "zh"):
        (root / "test_wavs" / language).mkdir(parents=True)
    clips = {"a.wav": 0.1, "b.wav": 0.2, "c.wav": 0.1}  # c.wav: a.wav's audio again
    for name, level in clips.items():
        _wav(root / "test_wavs" / "en" / name, np.full(32_000, level))
    _wav(root / "test_wavs" / "zh" / "z.wav", np.full(32_000, 0.2))  # b.wav's audio
    import soundfile

    samples, rate = soundfile.read(root / "test_wavs" / "en" / "a.wav")  # battery 40, K3: another encoding
    soundfile.write(root / "test_wavs" / "en" / "d.wav", samples, rate, subtype="FLOAT")
    rows = {"en": [("a.wav", True), ("b.wav", True), ("c.wav", False), ("d.wav", False)], "zh": [("z.wav", True)]}
    for language, lines in rows.items():
        (root / "test_wavs" / f"{language}_test_lines.jsonl").write_text("".join(json.dumps(
            {"audio": name, "total_nonbreak": not brk, "duration": 2.0, "break_time": 0.5 if brk else 2.0,
             "text_with_break": "x"}) + "\n" for name, brk in lines))
    assert main(["sid-import", str(root), "--out", str(tmp_path / "ds"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert (f"ihbench sid-import: warning: {root}: 2 clip(s) hold the same audio as another but say the opposite "
            "of it (break / no break), so every detector is scored wrong on one of them: sid_en/a.wav and "
            "sid_en/c.wav; sid_en/a.wav and sid_en/d.wav") in err, err
    assert (f"ihbench sid-import: warning: {root}: 1 clip(s) hold the same audio as another, and count twice in "
            "the scores: sid_en/b.wav and sid_zh/z.wav") in err, err
