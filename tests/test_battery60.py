"""Battery 60 (issue 23): its P3 findings, tried on an installed wheel as a new user would. (G1-G4 and G6 are in
test_battery59.py, beside the findings they follow.)"""
import sys

import pytest

from ihbench.cli import main


@pytest.fixture
def resumed(tmp_path, monkeypatch, capsys):
    """Starts a run of one point against the test server (a stand-in for a remote model), then runs `ihbench run` again
    into the same folder with `extra` words; returns (exit code, stderr) of the second."""
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    data = write_official_layout(tmp_path / "official")

    def resume(*extra: str):
        with OpenAITestServer() as server:
            def run(*words: str) -> int:
                argv = ["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                        str(data), "--out", str(tmp_path / "r"), "--limit", "1", "--quiet", *words]
                monkeypatch.setattr(sys, "argv", ["ihbench", *argv])
                return main(argv)

            assert run() == 0
            capsys.readouterr()
            return run(*extra), capsys.readouterr().err

    return resume


@pytest.mark.parametrize("extra", [["--config", "conversations"], ["--split", "test"],
                                   ["--config", "conversations", "--split", "test"]])
def test_a_resume_that_spells_out_a_default_is_the_same_run(extra, resumed):
    """Battery 60, G5 (P3): a run started without --config/--split, resumed with the values the defaults picked
    (`--config conversations`, `--split test`), was refused as "a different run: config is not given there"."""
    code, err = resumed(*extra)
    assert code == 0 and "different run" not in err, err


def test_a_resume_with_a_split_the_data_has_not_is_said_so(resumed):
    """Battery 62, I10 (P2): a resume with a split the data has not was said as "config is 'conversations' there but
    not given now" (the config was not changed)."""
    code, err = resumed("--split", "dev")
    assert code == 2 and "no split 'dev'; available: test" in err and "config" not in err.split("]")[-1], err


def test_a_resume_with_a_config_the_data_has_not_is_said_so(resumed):
    code, err = resumed("--config", "interruptions")
    assert code == 2 and "no config 'interruptions'; available: conversations, baseline" in err, err


# --- battery 59's F13 nits, and battery 60's wording slips --------------------------------------------------------

def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    return err[-1]


def test_a_named_pipe_given_as_a_dataset_is_said_as_one(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "pipe")
    assert main(["space", "--data", str(tmp_path / "pipe")]) == 2
    assert _error(capsys).endswith("expected a dataset directory (built by `ihbench build`), got a named pipe")


def test_an_unknown_detector_option_is_said_as_an_option(tmp_path, capsys):
    assert main(["sid", "--data", str(tmp_path), "--detector", "energy", "--option", "nosuch=1", "--out",
                 str(tmp_path / "s")]) == 2
    error = _error(capsys)
    assert "--option nosuch: detector 'energy' has no such option; it accepts frame_ms" in error
    assert "keyword argument" not in error


@pytest.mark.parametrize("typed", ["1e9", "2.50", "-0.0"])
def test_a_refused_number_is_shown_as_typed(typed, tmp_path, capsys):
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(tmp_path), "--base-url",
                 "http://127.0.0.1:9/v1", "--option", f"max_retries={typed}", "--out", str(tmp_path / "r")]) == 2
    assert _error(capsys).endswith(f"--option max_retries: expected a whole number from 0 to 100, got {typed}")


def test_one_recording_given_twice_to_turns_is_said_so(tmp_path, capsys):
    from turns_synth import write_short_call

    write_short_call(tmp_path / "call.wav")
    assert main(["turns", str(tmp_path / "call.wav"), str(tmp_path / "." / "call.wav"), "--out",
                 str(tmp_path / "t")]) == 2
    error = _error(capsys)
    assert "call.wav is given twice (also as" in error and "rename" not in error
    assert not (tmp_path / "t").exists()


def test_a_tiny_model_record_without_its_family_is_said_so(tmp_path, capsys):
    import json

    out = tmp_path / "tiny"
    assert main(["make-tiny-model", "qwen2-text", "--out", str(out), "--quiet"]) == 0
    record = json.loads((out / "ihbench_tiny_model.json").read_text())
    del record["family"], record["seed"]
    (out / "ihbench_tiny_model.json").write_text(json.dumps(record))
    assert main(["make-tiny-model", "qwen2-text", "--out", str(out), "--quiet"]) == 2
    error = _error(capsys)
    assert "no longer says its family and seed (edited?)" in error and "None" not in error


def test_judgments_files_left_out_are_said_in_the_plural(tmp_path, capsys):
    """Battery 60: "judgments-k.jsonl, judgments-u.jsonl is left out" (two files said as one)."""
    import shutil

    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=2)
    first = next(run.glob("judgments*.jsonl"))
    for name in ("judgments-k.jsonl", "judgments-u.jsonl", "judgments-z.jsonl"):
        shutil.copy(first, run / name)
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert "judgments-u.jsonl, judgments-z.jsonl are left out: move them out of the run" in err, err
