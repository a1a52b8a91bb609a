"""Battery 10 (issue 23): findings of the tenth battery of bad inputs, tried on an installed wheel as a
new user would. The model under test and the judge are STAND-INS (scripted OpenAI-compatible servers
on loopback); the data, the run folders and the judges' HTTP are real."""
import json

import pytest
from judging import ScriptedJudge
from openai_test_server import OpenAITestServer

from ihbench.cli import main


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


def _judged(official, run, *extra):
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run), "--limit",
            "2", "--quiet", *extra]
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(run.parent / "c.sqlite"), "--quiet"]) == 0
    return argv


# --- F3: a run's own judgments, some of whose answers are left out, are not "another run's" ------------

@pytest.mark.parametrize("cause", ["torn last line", "fewer epochs"])
def test_a_runs_own_judgments_are_kept_when_some_of_its_answers_are_left_out(cause, official, tmp_path, capsys):
    """A responses.jsonl whose last line a crash cut off, or a rerun with a lower --epochs, leaves some
    judgments without their answer: the report says why and scores the rest, never "another run's
    judgments file; move it out of the way" (which throws valid verdicts away)."""
    run = tmp_path / "run"
    argv = _judged(official, run, "--epochs", "2")
    responses = (run / "responses.jsonl").read_bytes()
    if cause == "torn last line":
        (run / "responses.jsonl").write_bytes(responses[:-40])
        said = "are damaged or cut off (line(s) 4) and left out; `ihbench run` with the same options answers them again"
    else:
        with OpenAITestServer() as server:
            assert main([*argv[:-2], "--epochs", "1", "--allow-endpoint-change", "--base-url", server.base_url]) == 0
        said = "judgment(s) of epochs beyond the run's --epochs 1 (from an earlier start) are left out"
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert said in err and "another run's" not in err and "Traceback" not in err, err
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]
    assert summary["tf_win_rate"]["tf_win_rate"] is not None
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c2.sqlite"), "--quiet"]) == 0
        assert judge.requests == []  # nothing of the kept answers judged twice
