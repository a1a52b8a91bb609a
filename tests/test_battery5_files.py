"""Battery 5 (issue 23), files, folders and options a user can get wrong: each named in one line with
what is wrong, before any work starts, and nothing written where it does not belong."""
import json
import os

import pytest

from ihbench.cli import main
from test_battery4_files import _files, _one_error, _wav
from test_battery4_options import _exit_code


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


#: the fields every build_info.json holds (`BuildInfo`), of a build that claims no shipped conversation
MINIMAL_BUILD_INFO = {"builder": "a test's stand-in for `ihbench build`", "sources_fingerprint": "0", "conversations": [],
                      "split": "test", "configs": ["conversations", "baseline"]}


def _built(official):
    """A dataset folder as a build leaves it: configs listed by the card, beside build_info.json."""
    (official / "build_info.json").write_text(json.dumps(MINIMAL_BUILD_INFO))
    return official


def _answered(data, out, *extra):
    from test_battery_round3 import _answered as answered

    return answered(data, out, *extra)


# --- finding 6: a card without its configs -------------------------------------------------------

@pytest.mark.parametrize("card, said", [
    ("", "no configs metadata (empty or damaged card)"),
    ("# IHBench\n", "no configs metadata (empty or damaged card)"),
    ("---\nlicense: mit\n---\nthe metadata kept, its configs cut\n", "no configs metadata (empty or damaged card)"),
    ("---\nconfigs: [\n---\n", "the card's metadata cannot be read (while parsing a flow node"),
])
def test_a_dataset_card_without_configs_is_named_before_datasets_reads_the_folder(card, said, official, tmp_path,
                                                                                  capsys, caplog):
    """`datasets` read the folder as one config 'default': "BuilderConfig 'conversations' not found",
    after "Repo card metadata block was not found" four times."""
    data = _built(official)
    (data / "README.md").write_text(card)
    capsys.readouterr()
    assert main(["info", str(data)]) == 2
    error = _one_error(capsys, "info")
    assert error.startswith(f"ihbench info: error: {data / 'README.md'}: {said}"), error
    assert error.endswith("; copy the dataset again or rebuild it")
    assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                 str(data), "--out", str(tmp_path / "r"), "--quiet"]) == 2
    assert f"{data / 'README.md'}: {said}" in _one_error(capsys, "run")
    assert "metadata block was not found" not in caplog.text
    assert not (tmp_path / "r").exists()


def test_a_build_without_its_card_is_named(official, capsys):
    data = _built(official)
    (data / "README.md").unlink()
    assert main(["info", str(data)]) == 2
    assert _one_error(capsys, "info") == (f"ihbench info: error: {data / 'README.md'}: missing (the card lists the "
                                          "configs); copy the dataset again or rebuild it")


# --- finding 7: a build_info.json that is not a JSON object ---------------------------------------

@pytest.mark.parametrize("text, said", [("{", "not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
                                        ("[1]", "not a JSON object (an array)"),
                                        ("null", "not a JSON object (null)"),  # battery 50, W13: "(a NoneType)"
                                        ("{}", "missing field 'builder'")])  # battery 7, finding 5: emptied
def test_a_damaged_build_info_is_named_by_every_command_that_reads_it(text, said, official, tmp_path, capsys):
    """It was taken for no build at all: info, verify --audio and publish-dataset went on, and the
    report silently dropped its note that the run was on the in-house dev set."""
    data = _built(official)
    run = _answered(data, tmp_path / "run", "--limit", "1")
    (data / "build_info.json").write_text(text)
    message = f"{data / 'build_info.json'}: {said}; copy the dataset again or rebuild it"
    capsys.readouterr()
    for command, argv in (("info", [str(data)]), ("verify", ["--audio", str(data), "--quiet"]),
                          ("publish-dataset", [str(data), "--repo", "me/x", "--dry-run", "--quiet"]),
                          ("report", [str(run), "--quiet"])):
        before = _files(tmp_path)
        assert main([command, *argv]) == 2, command
        assert message in _one_error(capsys, command), command
        assert _files(tmp_path) == before


# --- finding 11: --data before the model ---------------------------------------------------------

@pytest.mark.parametrize("command", ["run", "doctor"])
def test_the_data_is_checked_before_the_model_is_loaded(command, official, tmp_path, capsys):
    """`run` loaded the weights (minutes for a real checkpoint) before saying --data was a typo;
    `doctor` ran its format and processor checks first. The model folder here does not even exist:
    what is said is the data's fault, so the data was looked at first."""
    model = ["--model", "qwen2-audio", "--model-path", str(tmp_path / "no-model")]
    out = ["--out", str(tmp_path / "r")] if command == "run" else []
    for data, said in (([str(tmp_path / "nosuch")], f"{tmp_path / 'nosuch'}: no such dataset directory"),
                       ([str(official), "--config", "nope"], "no config 'nope'; available: conversations"),
                       ([str(official), "--split", "nope"], "no split 'nope'; available: test")):
        assert main([command, *model, "--data", *data, *out, "--quiet"]) == 2
        assert said in _one_error(capsys, command)
    assert not (tmp_path / "r").exists()


# --- finding 12: a run folder whose run.json was deleted ------------------------------------------

def test_report_on_a_run_without_its_run_json_says_so(official, tmp_path, capsys):
    """It was called "a report (summary.json of kind 'ihbench')", the summary an earlier report left."""
    run = _answered(official, tmp_path / "run", "--limit", "1")
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
    (run / "run.json").unlink()
    capsys.readouterr()
    assert main(["report", str(run), "--quiet"]) == 2
    assert _one_error(capsys, "report") == (f"ihbench report: error: {run / 'run.json'}: missing ({run} holds a "
                                            "run's responses.jsonl); put it back: it records the model and "
                                            "data the answers are of")


# --- finding 13: convbench-import --speaker as a folder's name -----------------------------------

@pytest.mark.parametrize("speaker", ["", "../../etc", "person1/..", "..", ".", "a\\b"])
def test_convbench_import_speaker_is_a_folder_name_checked_when_parsed(speaker, tmp_path, capsys):
    """`--speaker ../../etc --text-only` was taken (the option silently unused); without --text-only it
    was joined as real_audio/../../etc/. (--speaker with --text-only on a benchmark folder and '' were
    refused already, by battery 4's finding 26.)"""
    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "repo", real_speaker="person1")
    for extra in ([], ["--text-only"]):
        assert _exit_code(["convbench-import", str(folder), "--speaker", speaker, "--out", str(tmp_path / "d"),
                           "--quiet", *extra]) == 2
        assert (f"argument --speaker: expected a folder's name (not empty, no / or \\, not . or ..), got "
                f"{speaker!r}") in _one_error(capsys, "convbench-import")
    assert not (tmp_path / "d").exists()


# --- finding 5: a SID clip of no samples ----------------------------------------------------------

def _sid_noise(root, clips):
    """SID-Bench's noise layout: test_wavs/silence_or_noise/*.wav and silence_noise_test.jsonl."""
    import numpy as np

    (root / "test_wavs" / "silence_or_noise").mkdir(parents=True)
    for name, samples in clips.items():
        _wav(root / "test_wavs" / "silence_or_noise" / name, samples)
    (root / "test_wavs" / "silence_noise_test.jsonl").write_text("".join(json.dumps(
        {"audio": name, "total_nonbreak": True, "duration": max(len(samples), 1) / 16_000,
         "break_time": max(len(samples), 1) / 16_000, "text_with_break": "<break>"}) + "\n"
        for name, samples in clips.items()))
    return root


def test_sid_import_refuses_a_wav_of_no_samples_naming_its_line(tmp_path, capsys):
    """It was imported with a warning about its duration; `ihbench sid` then ended in a 36-line traceback."""
    import numpy as np

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "z.wav": np.zeros(0)})
    assert main(["sid-import", str(root), "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert _one_error(capsys, "sid-import") == (
        f"ihbench sid-import: error: {root / 'test_wavs' / 'silence_noise_test.jsonl'} line 2: "
        f"{root / 'test_wavs' / 'silence_or_noise' / 'z.wav'}: no audio (0 samples)")
    assert not (tmp_path / "d").exists()


def test_the_sid_clip_reader_names_a_clip_it_cannot_decode(tmp_path, capsys):
    import io

    import numpy as np
    import soundfile

    from ihbench.dataset.sid.clips import SidClips
    from ihbench.dataset.sid.read import SidFormatError

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "z.wav": np.zeros(0)})
    assert main(["sid", "--data", str(root), "--config", "sid_noise", "--detector", "energy", "--out",
                 str(tmp_path / "s"), "--quiet"]) == 2
    assert _one_error(capsys, "sid") == "ihbench sid: error: clip z.wav: no audio (0 samples)"
    assert not (tmp_path / "s" / "summary.json").exists()  # nothing scored; the clips before it are kept (sid.progress)
    empty = io.BytesIO()
    soundfile.write(empty, np.zeros(0, np.float32), 16_000, format="WAV", subtype="PCM_16")
    clips = SidClips([empty.getvalue(), b"RIFF but not audio"], ["e.wav", "x.wav"])  # embedded, as imported
    with pytest.raises(SidFormatError, match=r"^clip e.wav: no audio \(0 samples\)$"):
        clips[0]
    with pytest.raises(SidFormatError, match=r"^clip x.wav: not readable audio \("):
        clips[1]


# --- finding 9: --cache inside another toolkit folder ----------------------------------------------

def _toolkit_folders(root):
    """A run, a turns output and a model folder, each as its command's marker file makes it."""
    for folder, name, text in (("run2", "run.json", "{}"), ("turns", "summary.json", '{"kind": "turns"}'),
                               ("tiny", "ihbench_tiny_model.json", "{}")):
        (root / folder).mkdir()
        (root / folder / name).write_text(text)
    return {"run2": "a run folder (run.json)", "turns": "an `ihbench turns` output folder (summary.json)",
            "tiny": "an `ihbench make-tiny-model` model folder (ihbench_tiny_model.json)"}


@pytest.mark.parametrize("command", ["judge", "generate", "barge-in"])
def test_a_cache_inside_another_toolkit_folder_is_refused_as_an_output_there_is(command, official, tmp_path, capsys):
    run = _answered(official, tmp_path / "run", "--limit", "1")
    kinds = _toolkit_folders(tmp_path)
    url = ["http://127.0.0.1:9/v1"]
    argv = {"judge": ["judge", str(run), "--judge-model", "j", "--judge-base-url", *url],
            "generate": ["generate", "--llm-model", "g", "--llm-base-url", *url, "--domain", "telecom", "--goal",
                         "Port a number", "--out", str(tmp_path / "g")],
            "barge-in": ["barge-in", "--data", str(official), "--model", "openai", "--model-path", "m", "--base-url",
                         *url, "--sim-model", "s", "--sim-base-url", *url, "--modality", "text", "--limit", "1",
                         "--out", str(tmp_path / "b")]}[command]
    before = _files(tmp_path)
    for folder, described in kinds.items():
        cache = tmp_path / folder / "c.sqlite"
        assert main([*argv, "--cache", str(cache), "--quiet"]) == 2
        assert _one_error(capsys, command) == (f"ihbench {command}: error: --cache: {cache} is inside "
                                               f"{tmp_path / folder}, {described}; give a path outside it")
        assert _files(tmp_path) == before


# --- finding 10: cache info and prune on a damaged cache -------------------------------------------

@pytest.mark.parametrize("argv", [["cache", "info"], ["cache", "prune", "--older-than", "1"]])
def test_cache_info_and_prune_leave_no_side_files_beside_a_cache_they_refuse(argv, tmp_path, capsys):
    """Their read-only look made SQLite's -wal and -shm files, which a read-only connection cannot
    remove; judge, verify and generate (a writer's connection) left none."""
    from ihbench.llm import LLMCache

    whole = tmp_path / "whole.sqlite"
    cache = LLMCache(whole)
    for number in range(200):
        cache.put(f"key{number}", {"verdict": "x" * 50})
    cache.close()
    damaged = tmp_path / "c" / "hdr.sqlite"
    damaged.parent.mkdir()
    damaged.write_bytes(whole.read_bytes()[:4096])  # the header (WAL mode) and nothing after
    assert main([*argv, "--cache", str(damaged)]) == 2
    assert "not an SQLite database (database disk image is malformed)" in _one_error(capsys, "cache")
    assert os.listdir(damaged.parent) == ["hdr.sqlite"]
    assert damaged.read_bytes() == whole.read_bytes()[:4096]
