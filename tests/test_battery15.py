"""Battery 15 (issue 23): findings K… of the fifteenth battery of bad inputs, tried on an installed wheel as a
new user would (/work/battery15/LOG.md). Each test's docstring names its finding."""
import pytest
from test_battery10 import official  # noqa: F401 (fixture: a dataset in the official layout)

from ihbench.cli import main


def test_sid_import_says_a_wav_that_is_a_folder_is_no_regular_file(tmp_path, capsys):
    """Battery 15 (try 18): a b.wav that is a folder was "not found"."""
    import numpy as np
    from test_battery5_files import _sid_noise

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "b.wav": np.full(32_000, 0.01)})
    wav = root / "test_wavs" / "silence_or_noise" / "b.wav"
    wav.unlink()
    wav.mkdir()
    assert main(["sid-import", str(root), "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert f"line 2: {wav} is a folder, not a regular file" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_verify_audio_with_its_report_and_plot_at_one_path_is_refused(official, tmp_path, capsys):
    """Battery 15 (try 29): the plot silently replaced the report written to the same file."""
    same = tmp_path / "same.png"  # battery 16: a report is named .json, a plot as an image, so no name is both
    with pytest.raises(SystemExit) as stopped:
        main(["verify", "--audio", str(official), "--audio-report", str(same), "--audio-plot", str(same)])
    assert stopped.value.code == 2
    assert "--audio-report: expected a file name ending in .json" in capsys.readouterr().err and not same.exists()


def test_verify_audio_stopped_says_it_starts_again(official, monkeypatch, capsys):
    """Battery 15 (try 28): SIGTERM said "what was written is kept, and the same command goes on", yet
    `verify --audio` writes only at its end and a rerun computes everything again."""
    import ihbench.cli.verify as verify_cli
    from ihbench.cli import Terminated

    def stopped(args):
        raise Terminated()
    monkeypatch.setattr(verify_cli, "_verify_audio", stopped)
    assert main(["verify", "--audio", str(official)]) == 143
    assert "starts again from the beginning" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["missing", "dataset"])
def test_judge_names_what_a_folder_that_is_no_run_is(what, official, tmp_path, capsys):
    """Battery 15 (try 27): judge said "not a run directory; run `ihbench run` first" for a SID output, a
    dataset, a report and a path that does not exist."""
    folder = tmp_path / "nothing" if what == "missing" else official
    assert main(["judge", str(folder), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1",
                 "--cache", str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err
    said = "no such folder" if what == "missing" else "is a dataset folder"
    assert said in err and "run `ihbench run` first" not in err, err


def test_a_sid_run_whose_predictions_were_cut_is_refused_by_the_report(built, tmp_path, capsys):
    """Battery 15, K6: a SID run's predictions.jsonl cut to half (or gone) was reported with the summary's
    scores over all its clips, without a word."""
    out = tmp_path / "se"
    assert main(["sid", "--detector", "energy", "--data", str(built), "--config", "sid_dev_en", "--limit", "4",
                 "--out", str(out), "--quiet"]) == 0
    lines = (out / "predictions.jsonl").read_text().splitlines(keepends=True)
    (out / "predictions.jsonl").write_text("".join(lines[:2]))
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "predictions.jsonl: 2 prediction(s), but" in err and "scores 4 clips" in err, err


@pytest.mark.parametrize("edit", ["break_time", "apt", "model_name"])
def test_a_sid_run_edited_after_scoring_is_refused_by_the_report(edit, built, tmp_path, capsys):
    """Battery 15, K6 (and battery 14, J9): a break_time moved in predictions.jsonl, or an APT edited in
    summary.json, was reported as `ihbench sid` had scored it. A display name set by hand is allowed."""
    import json

    out = tmp_path / "se"
    assert main(["sid", "--detector", "energy", "--data", str(built), "--config", "sid_dev_en", "--limit", "4",
                 "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    if edit == "break_time":
        rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
        moved = next(row for row in rows if not row["total_nonbreak"])
        moved["break_time"] = float(moved["break_time"]) + 1.0
        (out / "predictions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    elif edit == "apt":
        summary["scores"]["notebook"]["apt"] = 0.001
    else:
        summary["model_name"] = "my detector"
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    capsys.readouterr()
    code = main(["report", str(out), "--out", str(tmp_path / "rep"), "--quiet"])
    err = capsys.readouterr().err
    if edit == "model_name":
        assert code == 0 and "my detector" in (tmp_path / "rep" / "report.md").read_text(), err
        return
    assert code == 2 and not (tmp_path / "rep" / "report.md").exists()
    said = "not the file" if edit == "break_time" else "not the figures `ihbench sid` wrote"
    assert said in err and "`ihbench sid` writes" in err, err


def test_sid_into_an_output_of_another_clip_selection_is_refused(built, tmp_path, capsys):
    """Battery 15, K12: `--clips` of another selection replaced the earlier results without a word."""
    out = tmp_path / "se"
    argv = ["sid", "--detector", "energy", "--data", str(built), "--config", "sid_dev_en", "--out", str(out),
            "--quiet"]
    assert main([*argv, "--clips", "*_000*"]) == 0
    capsys.readouterr()
    assert main([*argv, "--clips", "*_001*"]) == 2
    assert "holds the results on the clips *_000*" in capsys.readouterr().err
    assert main([*argv, "--clips", "*_000*"]) == 0  # the same selection: written again


def test_a_conversationbench_run_whose_turns_are_gone_is_refused(tmp_path, capsys):
    """Battery 15, K13: with responses.jsonl deleted, the judged run was reported as a conversation that
    "stopped on a failed turn" (rc 0); the IHBench counterpart is refused."""
    from convbench_judging import ConvJudge
    from convbench_layout import write_benchmark_folder
    from openai_test_server import OpenAITestServer
    from test_convbench_judge import judge
    from test_convbench_run import golden_replay, spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, text_only=True, progress=False)
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, out, server), progress=False)
    assert judge(out, ConvJudge()) == 0
    (out / "responses.jsonl").unlink()
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    assert f"{out / 'responses.jsonl'}: missing, while" in capsys.readouterr().err


def test_sid_import_removes_a_killed_imports_temporary_file(tmp_path, capsys):
    """Battery 15, K7: a kill -9 during sid-import left `.test.parquet.PID.tmp` in the dataset for good."""
    import numpy as np
    from test_battery5_files import _sid_noise

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01)})
    out = tmp_path / "d"
    assert main(["sid-import", str(root), "--out", str(out), "--quiet"]) == 0
    config = next(p for p in out.iterdir() if p.is_dir())
    stale = config / ".test.parquet.99999.tmp"
    stale.write_bytes(b"PAR1")  # what a killed import leaves
    assert "replacing" not in capsys.readouterr().out
    assert main(["sid-import", str(root), "--out", str(out), "--quiet"]) == 0
    assert not stale.exists()
    # the configs it held are replaced: said (battery 41's nit), not silently
    assert capsys.readouterr().out.strip().endswith(", replacing the sid_noise it held (imported before)")


def test_publish_dataset_names_a_run_folder_as_one(official, tmp_path, capsys):
    """Battery 15, K8 (try 65): publish-dataset of a run folder said "no README.md; publish a folder written
    by `ihbench build`" where publish-space said it is a run folder."""
    from openai_test_server import OpenAITestServer

    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--quiet"]) == 0
    capsys.readouterr()
    assert main(["publish-dataset", str(tmp_path / "r"), "--repo", "a/c", "--dry-run"]) == 2
    assert "is a run folder (run.json), not a dataset" in capsys.readouterr().err


def test_info_on_a_hub_id_it_cannot_read_fails_as_run_does(capsys):
    """Battery 15, K3: `ihbench info nobody/nothing-here` (offline) printed an empty table, rc 0."""
    assert main(["info", "nobody/nothing-here"]) == 2
    assert "nobody/nothing-here: no such local folder, and as a Hub dataset it cannot load" in \
        capsys.readouterr().err


def test_a_conversationbench_resume_counts_only_the_turns_it_kept(tmp_path):
    """Battery 15, K5: after a turn in the middle was played anew, the turns played again after it were
    counted "already done" too (4 written, 5 already done, of 6 planned)."""
    import json

    from convbench_layout import write_benchmark_folder
    from openai_test_server import OpenAITestServer
    from test_convbench_run import golden_replay, spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, text_only=True, progress=False)
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay()) as server:
        first = run_convbench(spec(data, out, server), progress=False)
        lines = (out / "responses.jsonl").read_text().splitlines()
        record = json.loads(lines[2])
        record["text"] = "EDITED: " + record["text"]  # its check no longer matches: played again
        lines[2] = json.dumps(record)
        (out / "responses.jsonl").write_text("\n".join(lines) + "\n")
        again = run_convbench(spec(data, out, server), progress=False)
    assert first.written == 5 and (again.skipped, again.written) == (2, 3)


def test_a_record_line_with_a_key_given_twice_is_left_out_as_edited(official, tmp_path, capsys):
    """Battery 15, K11: a responses.jsonl line with `"response"` given twice (JSON keeps the last) was read as
    done and reported, where run.json and sources refuse a key twice."""
    from openai_test_server import OpenAITestServer

    with OpenAITestServer() as server:
        argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                str(tmp_path / "r"), "--epochs", "1", "--limit", "2", "--base-url", server.base_url, "--quiet"]
        assert main(argv) == 0
        path = tmp_path / "r" / "responses.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        lines[0] = lines[0].replace('"response": ', '"response": "I WILL IGNORE YOU", "response": ', 1)
        path.write_text("".join(lines))
        asked = len(server.requests)
        capsys.readouterr()
        assert main(argv) == 0
        assert len(server.requests) == asked + 1  # the edited line's item asked again
    assert "the key 'response' is given twice in one object" in capsys.readouterr().err


def test_a_record_line_with_a_lone_surrogate_is_left_out_as_edited(official, tmp_path, capsys):
    """Battery 48, U7: an answer edited to hold "\\ud800" (no character) ended judge and report in a
    UnicodeEncodeError traceback, with no judgment written. The line is left out as edited, as a key
    twice is; an --option extra_body holding one is refused when parsed."""
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer

    run = tmp_path / "r"
    with OpenAITestServer() as server, OpenAITestServer(respond=ScriptedJudge()) as judge_server:
        argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                "--epochs", "1", "--limit", "2", "--base-url", server.base_url, "--quiet"]
        assert main(argv) == 0
        path = run / "responses.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        lines[0] = lines[0].replace('"response": "', '"response": "\\ud800', 1)
        path.write_text("".join(lines))
        capsys.readouterr()
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge_server.base_url,
                     "--cache", str(tmp_path / "c.sqlite"), "--quiet"]) in (0, 1)
        assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
        err = capsys.readouterr().err
        assert "line 1: the value of 'response' holds a lone surrogate escape" in err and "Traceback" not in err
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r2"), "--base-url", server.base_url, "--option",
                     'extra_body={"user": "\\ud800"}']) == 2
    assert "a lone surrogate escape, which is no character" in capsys.readouterr().err
    assert not (tmp_path / "r2").exists()


def test_a_home_inside_a_dataset_is_said_as_home_before_any_work(official, tmp_path, capsys, monkeypatch):
    """Battery 15, K1: with HOME inside a dataset, 190 MB of the datasets library's cache were written into it,
    and the refusal then named IHBENCH_CACHE, which the user never set."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(official, data)
    for variable in ("IHBENCH_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HF_DATASETS_CACHE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(data))
    before = sorted(p.name for p in data.iterdir())
    assert main(["info", str(data)]) == 2
    assert "~/.cache/ihbench (the default cache, from HOME; IHBENCH_CACHE moves it)" in capsys.readouterr().err
    assert sorted(p.name for p in data.iterdir()) == before


def test_a_report_stopped_midway_leaves_no_half_report(official, tmp_path, capsys, monkeypatch):
    """Battery 15, K2: a report stopped between its figures and its text left new figures beside the earlier
    report.md, and SIGTERM said nothing was written."""
    from test_battery16 import reported_run

    import ihbench.report.render as render
    from ihbench.cli import Terminated

    out = reported_run(tmp_path, official)
    earlier = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".md", ".png", ".json")}

    def stopped(*args, **kwargs):
        raise Terminated()
    monkeypatch.setattr(render, "render_markdown", stopped)  # stopped after the figures, before the text
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 143
    assert f"the report it was writing in {out} is removed; the earlier report there is kept" in capsys.readouterr().err
    # battery 23 S2: the earlier report, not half of each and not nothing
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".md", ".png", ".json")} == earlier
    assert (tmp_path / "r" / "run.json").exists()


def test_sid_import_into_the_folder_it_reads_is_refused(tmp_path, capsys):
    """Battery 42, M1, for sid-import: the dataset was written inside the SID-Bench download it read."""
    import numpy as np
    from test_battery5_files import _sid_noise

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01)})
    before = sorted(root.rglob("*"))
    assert main(["sid-import", str(root), "--out", str(root / "imported"), "--quiet"]) == 2
    assert f"--out: {root / 'imported'} is inside {root}, the SID-Bench folder being imported" in capsys.readouterr().err
    assert sorted(root.rglob("*")) == before


@pytest.mark.parametrize("given, said", [("afile.txt", "it is a file"), ("me/hubid", "no such folder")])
def test_publish_dataset_of_no_folder_says_what_it_expects(given, said, tmp_path, capsys, monkeypatch):
    """Battery 42's nit: "afile.txt: not a directory" said neither what the argument is for nor what it got."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile.txt").write_text("x\n")
    assert main(["publish-dataset", given, "--repo", "me/x", "--dry-run", "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (f"ihbench publish-dataset: error: {given}: expected a dataset folder "
                                               f"written by `ihbench build`; {said}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile.txt"]
