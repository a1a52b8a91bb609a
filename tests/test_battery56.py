"""Batteries 56 and 57 (issue 23): findings C… and D… of the fifty-sixth and fifty-seventh batteries of bad inputs,
tried on an installed wheel as a new user would (/work/battery56/LOG.md, /work/battery57/LOG.md). Each test's
docstring names its finding. The models under test and the simulator are STAND-INS (scripted OpenAI-compatible
servers on loopback)."""
import json
import re
from dataclasses import replace

import pytest
from openai_test_server import OpenAITestServer, Reply

from ihbench.cli import main

NOTE = re.compile(r"note: (\d+) (turn\(s\)|reply\(ies\)) used the whole --max-new-tokens budget \(12\) and may be cut "
                  r"short")


@pytest.fixture
def bike(tmp_path):
    from convbench_layout import write_benchmark_folder

    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "imported"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    return data


@pytest.mark.parametrize("finish, budget, noted", [("length", "12", True), ("stop", "12", True),
                                                   ("stop", "64", False)])
def test_conversationbench_turns_the_budget_may_have_cut_are_flagged_and_said(finish, budget, noted, bike, tmp_path,
                                                                               capsys):
    """Battery 56, C8 (P2): ConversationBench kept and judged turns the server ended with `length` at the budget (or
    that used every token) with no word, where `ihbench run` on IHBench notes them. (The stand-in server counts 12
    tokens in every answer.)"""
    with OpenAITestServer(respond=lambda body: Reply(content="Sure, let me check", finish_reason=finish)) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data", str(bike),
                     "--config", "bike_bench", "--only-turns", "0,1", "--epochs", "1", "--max-new-tokens", budget,
                     "--out", str(tmp_path / "run"), "--quiet"]) == 0
    out = capsys.readouterr().out
    records = [json.loads(line) for line in (tmp_path / "run" / "responses.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["answered", "answered"]
    assert [r["ended_at_budget"] for r in records] == [noted, noted]
    said = NOTE.search(out)
    assert (said is not None and said.groups() == ("2", "turn(s)")) if noted else said is None, out


def test_barge_in_replies_the_budget_may_have_cut_are_flagged_and_said(built, tmp_path, capsys):
    """Battery 56, C8 (P2): barge-in played and scored replies the server ended with `length` at the budget with no
    word."""
    from barge_in_script import scripts
    from test_barge_in import barge_in, rounds

    model_script, sim_script = scripts()
    with OpenAITestServer(respond=lambda body: replace(model_script(body), finish_reason="length")) as model, \
            OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "run", "--max-new-tokens", "12") == 0
    played = [r for r in rounds(tmp_path / "run") if r["status"] == "played"]
    assert played and all(r["ended_at_budget"] for r in played)
    said = NOTE.search(capsys.readouterr().out)
    assert said is not None and said.groups() == (str(len(played)), "reply(ies)")


def test_python_s_json_error_reads_with_its_place_once(tmp_path):
    """Battery 56, C14: "Unterminated string starting at at line 6 column 5" (a doubled "at"), and a JSON line's
    "(Unterminated string starting at)" with no place."""
    from ihbench.dataset.errors import IHBenchError
    from ihbench.dataset.io import json_lines
    from ihbench.dataset.io.json_object import read_json_object

    config = tmp_path / "config.json"
    config.write_text('{\n  "a": 1,\n  "b": "cut')
    with pytest.raises(IHBenchError, match=r"not valid JSON \(Unterminated string starting at line 3 column 8\)$"):
        read_json_object(config, IHBenchError)
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"a": 1}\n{"b": "cut\n')
    with pytest.raises(IHBenchError, match=r"not valid JSON \(Unterminated string starting at column 7\)"):
        list(json_lines(lines, IHBenchError))


def test_an_empty_transcripts_file_is_said_not_silently_ignored(tmp_path, capsys):
    """Battery 57, D9: `turns --transcripts empty.txt` found backchannels without words and said nothing."""
    from turns_synth import write_short_call

    audio = write_short_call(tmp_path / "call.wav")
    (tmp_path / "empty.txt").write_text("")
    assert main(["turns", str(audio), "--transcripts", str(tmp_path / "empty.txt"), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    assert f"warning: {tmp_path / 'empty.txt'}: holds no transcript lines; backchannels are found without words" in \
        capsys.readouterr().err


@pytest.mark.parametrize("command", [["report", "{path}"], ["run", "--model", "openai", "--model-path", "m",
                                                            "--base-url", "http://127.0.0.1:9/v1", "--data", "{path}",
                                                            "--out", "o"], ["export", "{path}", "--out", "e"]])
def test_a_long_missing_path_is_quoted_by_its_first_characters(command, tmp_path, monkeypatch, capsys):
    """Battery 57, D10: a missing path of 4,059 characters was quoted whole in its one-line error."""
    monkeypatch.chdir(tmp_path)
    path = "/data/" + "/".join(["speech_eval_dataset_folder"] * 150) + "/dev"
    assert main([part.format(path=path) for part in command]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and len(err) < 900 and "more characters not shown)" in err, err
    assert "/data/speech_eval_dataset_folder/speech_eval" in err


def test_generate_s_goal_is_refused_as_a_sentence(tmp_path, capsys):
    """Battery 57 (with D6): an empty --goal was refused as "expected a non-empty name"; a goal is a sentence."""
    with pytest.raises(SystemExit) as stopped:
        main(["generate", "--domain", "telecom", "--goal", " ", "--llm-model", "j", "--out", str(tmp_path / "g")])
    assert stopped.value.code == 2
    assert "argument --goal: expected a non-empty sentence on one line" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_a_resume_whose_options_differ_only_inside_a_hidden_value_is_refused(tmp_path, capsys):
    """Battery 57, D12: run.json records extra_body with what looks like a key hidden, so a resume with another
    value hidden alike was taken for the same run; a digest of the options as given tells them apart (a credential
    a proxy reads aside: a rotated key is the same run)."""
    import secrets
    import string

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")

    def key() -> str:
        return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))

    def run(user: str, credential: str) -> int:
        body = json.dumps({"user": user, "api_key": credential})
        return main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data", str(data),
                     "--out", str(tmp_path / "r"), "--limit", "1", "--epochs", "1", "--quiet", "--option",
                     f"extra_body={body}"])

    first = key()
    with OpenAITestServer() as server:
        assert run(first, key()) == 0
        assert run(first, key()) == 0  # the same options, another key for the proxy: resumed
        assert "already done" in capsys.readouterr().out
        assert run(key(), key()) == 2
    err = capsys.readouterr().err
    # said as JSON, as every other setting (battery 59, F5)
    assert 'belongs to a different run: loader_options are {"extra_body": {' in err and \
        "they read alike with what looks like a key " \
        "hidden; as given they differ" in err, err
    recorded = json.loads((tmp_path / "r" / "run.json").read_text())
    assert first not in json.dumps(recorded) and len(recorded["options_digest"]) == 16
