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


def _built(official):
    """A dataset folder as a build leaves it: configs listed by the card, beside build_info.json."""
    (official / "build_info.json").write_text("{}")
    return official


def _answered(data, out, *extra):
    from test_battery_round3 import _answered as answered

    return answered(data, out, *extra)


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
    assert _one_error(capsys, "report") == (f"ihbench report: error: {run / 'run.json'}: missing ({run} holds an "
                                            "IHBench run's responses.jsonl); put it back: it records the model and "
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
