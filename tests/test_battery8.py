"""Battery 8 (issue 23): findings of the eighth battery of bad inputs."""
import json

import pytest

from ihbench.cli import main
from test_battery4_files import _files, _one_error


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


# --- finding 12: a dry run never removes a user's files from a staging folder ---------------------

def test_a_staging_folder_holding_a_user_s_files_is_refused_naming_them_and_nothing_is_removed(tmp_path, capsys):
    staging = tmp_path / "stg"
    assert main(["publish-metrics", "--namespace", "me", "--dry-run", "--staging-dir", str(staging), "--quiet"]) == 0
    (staging / "NOTES.md").write_text("my notes, keep")
    (staging / "mywork").mkdir()
    (staging / "mywork" / "data.csv").write_text("important")
    before = _files(staging)
    capsys.readouterr()
    assert main(["publish-metrics", "--namespace", "me", "--dry-run", "--staging-dir", str(staging), "fir",
                 "--quiet"]) == 2
    assert _one_error(capsys, "publish-metrics") == (
        f"ihbench publish-metrics: error: --staging-dir: {staging} holds files no earlier publish staged: NOTES.md, "
        "mywork/data.csv; everything in it would be uploaded, so move them out (or give another folder)")
    assert _files(staging) == before
    (staging / "NOTES.md").unlink()
    (staging / "mywork" / "data.csv").unlink()
    (staging / "mywork").rmdir()
    assert main(["publish-metrics", "--namespace", "me", "--dry-run", "--staging-dir", str(staging), "fir",
                 "--quiet"]) == 0  # its own earlier staging is made again
    assert sorted(p.name for p in staging.iterdir()) == [".ihbench-staging", "fir"]


# --- finding 9: a second judge's file in the run's folder is one the report reads -----------------

def test_a_judgments_file_in_the_run_s_folder_must_be_named_as_the_report_reads_them(official, tmp_path, capsys):
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "1")
    capsys.readouterr()
    assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--out",
                 str(run / "j2.jsonl"), "--quiet"]) == 2
    assert _one_error(capsys, "judge").endswith(
        f"--out: {run / 'j2.jsonl'} is in the run's folder, where `ihbench report` reads the judgments files named "
        "judgments*.jsonl; name it so (judgments-MODEL.jsonl, say)")
    assert not (run / "j2.jsonl").exists()


# --- findings 1 and 6: sid reads a dataset as every other command does -----------------------------

def test_sid_refuses_a_build_record_without_its_fields_and_a_folder_inside_a_dataset(tmp_path, capsys):
    from test_battery5_files import MINIMAL_BUILD_INFO
    from test_battery5_files import _sid_noise
    import numpy as np

    raw = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "n1.wav": np.full(24_000, 0.02)})
    data = tmp_path / "data"
    assert main(["sid-import", str(raw), "--out", str(data), "--quiet"]) == 0
    (data / "build_info.json").write_text("{}")
    capsys.readouterr()
    assert main(["sid", "--data", str(data), "--config", "sid_noise", "--detector", "energy", "--out",
                 str(tmp_path / "s"), "--quiet"]) == 2
    assert _one_error(capsys, "sid").endswith(f"{data / 'build_info.json'}: missing field 'builder'; copy the dataset "
                                              "again or rebuild it")
    (data / "build_info.json").write_text(json.dumps(MINIMAL_BUILD_INFO))
    assert main(["sid", "--data", str(data / "sid_noise"), "--config", "sid_noise", "--detector", "energy", "--out",
                 str(tmp_path / "s"), "--quiet"]) == 2
    assert _one_error(capsys, "sid").endswith(f"{data / 'sid_noise'}: is a folder inside the dataset {data}; give the "
                                              "dataset folder itself")
    assert not (tmp_path / "s").exists()


# --- finding 8: a record of a format this version does not know ----------------------------------

def test_a_record_of_a_newer_format_is_refused_not_read_as_current():
    from ihbench.records import JudgmentRecord, RecordError, ResponseRecord

    with pytest.raises(RecordError, match="field 'format_version' is 99: written by a newer ihbench"):
        ResponseRecord.from_json({"id": "a/1", "epoch": 0, "response": "hi", "error": None, "format_version": 99})
    with pytest.raises(RecordError, match="field 'format_version' is 99: written by a newer ihbench"):
        JudgmentRecord.from_json({"id": "a/1", "epoch": 0, "axis": "tf", "outcome": "judge_error", "judge_model": "j",
                                  "format_version": 99})


# --- findings 4 and 5: the causes said when the judge's record and the files disagree --------------

def test_a_batch_folder_removed_since_is_said_with_the_command_that_writes_its_questions_again(official, tmp_path,
                                                                                                capsys):
    import shutil

    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "1")
    folder = tmp_path / "questions"
    assert main(["judge", str(run), "--judge-model", "j", "--judge-batch", str(folder), "--cache",
                 str(tmp_path / "c.sqlite"), "--quiet"]) == 1
    shutil.rmtree(folder)
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert (f"(the last judge wrote their questions to the batch folder {folder}, and its requests.jsonl is no longer "
            f"there) and are not in the scores; `ihbench judge {run} --judge-model j --judge-batch {folder}` writes "
            "them again") in err, err
    asked = json.loads((run / "judgments.asked.json").read_text())
    (run / "judgments.asked.json").write_text(json.dumps({**asked, "waiting": []}))  # edited: nothing waits
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert f"(the last judge's record says it judged them, but {run / 'judgments.jsonl'} is not there (removed " \
           "since))" in err, err


# --- finding 7: a line made older by hand, in a run begun with checked records ----------------------

@pytest.mark.parametrize("edit", ["downgraded", "no format"])
def test_a_record_made_older_by_hand_is_not_taken_in_a_run_that_began_with_checks(edit, official, tmp_path, capsys):
    from openai_test_server import OpenAITestServer

    out = tmp_path / "run"
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(out), "--epochs",
            "1", "--limit", "2", "--quiet", "--allow-endpoint-change"]
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
    assert json.loads((out / "run.json").read_text())["record_format"] == 5
    lines = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    lines[0].update(response="faked")
    lines[0].pop("check")
    if edit == "downgraded":
        lines[0]["format_version"] = 4
    else:
        lines[0].pop("format_version")
    (out / "responses.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
        assert len(server.requests) == 1  # answered again
    err = capsys.readouterr().err
    old = 4 if edit == "downgraded" else 1
    assert (f"{out / 'responses.jsonl'} line 1: format_version {old}, older than every record of this run (5): not "
            "written by it") in err, err


# --- finding 14: recordings with no speech are said, not scored as turn-taking ----------------------

def test_turns_on_recordings_with_no_speech_says_so_and_writes_nothing(tmp_path, capsys):
    import numpy as np
    import soundfile

    soundfile.write(str(tmp_path / "silent.wav"), np.zeros((32_000, 2), np.float32), 16_000)
    capsys.readouterr()
    assert main(["turns", str(tmp_path / "silent.wav"), "--out", str(tmp_path / "tu"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "silent: no speech found on either channel (AI, user); left out of the summary" in err, err
    assert "ihbench turns: error: no speech found in any of the 1 recording(s) (silent); nothing was written" in err
    assert not (tmp_path / "tu").exists()


# --- finding 10: a run records its data where any folder finds it -------------------------------

def test_a_run_made_with_a_relative_data_path_is_judged_and_reported_from_another_folder(official, tmp_path,
                                                                                          monkeypatch, capsys):
    import shutil

    from openai_test_server import OpenAITestServer

    work = tmp_path / "work"
    shutil.copytree(official, work / "mv" / "data")
    monkeypatch.chdir(work)
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", "mv/data", "--out", "runs/r",
                     "--epochs", "1", "--limit", "2", "--quiet", "--base-url", server.base_url]) == 0
        assert json.loads((work / "runs" / "r" / "run.json").read_text())["data"] == str(work / "mv" / "data")
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", "./mv/data", "--out", "runs/r",
                     "--epochs", "1", "--limit", "2", "--quiet", "--base-url", server.base_url]) == 0  # the same data
    monkeypatch.chdir(work / "runs")
    assert main(["report", "r", "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    (work / "mv" / "data").rename(work / "mv" / "moved")
    capsys.readouterr()
    assert main(["report", "r", "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep2")]) == 2
    error = _one_error(capsys, "report")
    assert error.startswith(f"ihbench report: error: r/run.json names the dataset {work / 'mv' / 'data'}, which is "
                            "not there now"), error
    assert main(["report", "r", "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep2"), "--data",
                 str(work / "mv" / "moved")]) == 0  # battery 14, J6: its new place


# --- finding 2: run.json's data fingerprint, edited by hand -----------------------------------------

def test_an_edited_data_fingerprint_is_said_and_the_report_names_the_data_s_own(official, tmp_path, capsys):
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "2")
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "data_fingerprint": "0000"}))
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert f"{run}: run.json's data_fingerprint 0000 is not that of the items the run answers" in err, err
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]
    assert summary["data_fingerprint"] == info["data_fingerprint"]


def test_a_model_path_edited_in_one_of_run_json_s_two_places_is_refused_naming_both(official, tmp_path, capsys):
    """run.json holds the model's path twice (the command's, and the loader's own description): both
    come from one --model-path, so two values mean one was edited, and the report would be labelled by
    the other."""
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "2")
    info = json.loads((run / "run.json").read_text())
    assert info["model_path"] == info["model"]["model_path"]
    (run / "run.json").write_text(json.dumps({**info, "model_path": "gpt-4o"}))
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert "run.json" in err and "'model_path' is 'gpt-4o' but 'model.model_path' is" in err, err
    assert not (tmp_path / "rep").exists()


# --- finding 11: looking at a file that is no cache says so -----------------------------------------

def test_cache_info_on_a_file_inside_a_dataset_says_it_is_no_cache(official, capsys):
    assert main(["cache", "info", "--cache", str(official / "README.md")]) == 2
    assert _one_error(capsys, "cache").startswith(f"ihbench cache: error: {official / 'README.md'}: not an SQLite "
                                                  "database")


# --- finding 13: an output that cannot be made is said first, naming the option --------------------

@pytest.mark.parametrize("command", [["make-tiny-model", "qwen2-text", "--out", "/proc/tm"],
                                     ["report", "{run}", "--out", "/proc/rep"]])
def test_an_output_that_cannot_be_made_is_refused_first_naming_the_option(command, official, tmp_path, capsys):
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "1") if "{run}" in command else None
    capsys.readouterr()
    assert main([part.format(run=run) for part in command] + ["--quiet"]) == 2
    error = _one_error(capsys, command[0])
    assert f"--out: cannot create {command[-1]} (" in error and ".ihbench" not in error.split("(", 1)[0], error
