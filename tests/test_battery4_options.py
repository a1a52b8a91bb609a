"""Bad-input battery 4 (issue 23), the options group: each finding as the battery's user met it.

A user error is one line naming the option and what it allows, exit 2, and nothing written; the
rule each test exercises lives in one place (mostly `ihbench.dataset.argtypes`), and the parser
walk of tests/test_bad_inputs.py probes every option of the same kind.
"""
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


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


RUN = ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data", "data",
       "--out", "r", "--quiet"]


# --- finding 1: a count with no top --------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (RUN + ["--epochs", "99999999999999999999"],
     "argument --epochs: expected a whole number from 1 to 1000, got '99999999999999999999'"),
    (RUN + ["--concurrency", "100000"], "argument --concurrency: expected a whole number from 1 to 1024"),
    (RUN + ["--option", "max_retries=1000000"], "--option max_retries: expected a whole number from 0 to 100"),
    (["generate", "--llm-model", "m", "--out", "g", "--conversations", "99999999999"],
     "argument --conversations: expected a whole number from 1 to 1000000"),
    (["set-baseline", "run", "--out", "b", "--epoch", "1000"], "argument --epoch: expected a whole number from 0 to 999"),
])
def test_a_count_past_its_top_is_refused_before_anything_is_written(argv, message, cwd, capsys):
    assert _exit_code(argv) == 2
    assert message in _one_error(capsys, argv[0])
    assert os.listdir(cwd) == []


def test_a_run_from_python_with_epochs_past_the_top_is_refused_before_its_folder(tmp_path):
    from ihbench.dataset.errors import UsageError
    from ihbench.runner import RunSpec, run

    spec = RunSpec(loader="openai", model_path="m", data=str(tmp_path / "data"), out=tmp_path / "r",
                   epochs=10**20, loader_options={"base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(UsageError, match="--epochs: expected a whole number from 1 to 1000"):
        run(spec, items=[], progress=False)
    assert os.listdir(tmp_path) == []


# --- finding 4: a path longer than the system allows ------------------------------------------------

@pytest.mark.parametrize("argv", [["report", "runs", "--out", "x" * 300],
                                  RUN[:-3] + ["--out", "/".join(["d" * 200] * 25)]])
def test_a_path_past_the_systems_limits_is_one_line(argv, cwd, capsys):
    assert _exit_code(argv) == 2
    assert "argument --out: expected a folder, got '" in _one_error(capsys, argv[0])
    assert os.listdir(cwd) == []


# --- finding 2: a base URL with a query string or fragment --------------------------------------------

@pytest.mark.parametrize("argv", [
    RUN[:5] + ["--data", "data", "--out", "r", "--base-url", "http://user:pw@127.0.0.1:9/v1?api_key=QSECRET77"],
    RUN[:5] + ["--data", "data", "--out", "r", "--option", "base_url=http://127.0.0.1:9/v1?api_key=QSECRET77"],
    ["judge", "runs", "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1?api_key=QSECRET77"],
    ["generate", "--llm-model", "g", "--out", "g", "--llm-base-url", "http://127.0.0.1:9/v1#QSECRET77"],
])
def test_a_base_url_with_a_query_or_fragment_is_refused_and_its_secret_not_shown(argv, cwd, capsys):
    assert _exit_code(argv) == 2
    error = _one_error(capsys, argv[0])
    assert "without a query string or #fragment" in error and "QSECRET77" not in error
    assert os.listdir(cwd) == []



# --- finding 7: api_key_env naming a variable that is not set ---------------------------------------

def test_api_key_env_naming_an_unset_variable_is_refused_at_start(cwd, capsys, monkeypatch):
    monkeypatch.delenv("NOT_SET_VAR_X", raising=False)
    argv = RUN[:-1] + ["--option", "api_key_env=NOT_SET_VAR_X", "--quiet"]
    assert _exit_code(argv) == 2
    assert ("--option api_key_env: the environment variable NOT_SET_VAR_X is not set (or empty)"
            in _one_error(capsys, "run"))
    assert os.listdir(cwd) == []
    from ihbench.dataset.errors import UsageError
    from ihbench.loaders import check_options

    monkeypatch.setenv("NOT_SET_VAR_X", "")
    with pytest.raises(UsageError, match="NOT_SET_VAR_X is not set"):
        check_options("openai", {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "NOT_SET_VAR_X"})
    monkeypatch.setenv("NOT_SET_VAR_X", "k")
    assert check_options("openai", {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "NOT_SET_VAR_X"})


# --- finding 6: sid's audio-llm reaches a server as run does ------------------------------------------

def _sid_folder(root):
    """SID-Bench's layout, two silent 2 s clips: test_wavs/en/*.wav and en_test_lines.jsonl."""
    import json

    import numpy as np
    import soundfile

    (root / "test_wavs" / "en").mkdir(parents=True)
    for name in ("a.wav", "b.wav"):
        soundfile.write(root / "test_wavs" / "en" / name, np.zeros(32_000, np.float32), 16_000, subtype="PCM_16")
    rows = [{"audio": "a.wav", "total_nonbreak": False, "duration": 2.0, "break_time": 0.5, "text_with_break": "x"},
            {"audio": "b.wav", "total_nonbreak": True, "duration": 2.0, "break_time": 2.0, "text_with_break": "y"}]
    (root / "test_wavs" / "en_test_lines.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


SID_LLM = ["sid", "--config", "sid_en", "--detector", "audio-llm", "--model", "openai", "--model-path", "m",
           "--hop", "2000", "--quiet"]


@pytest.mark.parametrize("route", [["--base-url", "{url}"], ["--option", "base_url={url}"]])
def test_sid_audio_llm_takes_the_server_url_as_run_does(route, tmp_path, capsys, monkeypatch):
    from openai_test_server import OpenAITestServer, Reply

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("SIDKEY", "k-1")
    data = _sid_folder(tmp_path / "SID")
    with OpenAITestServer(respond=lambda body: Reply(content="no")) as server:  # a model that answers the question
        argv = SID_LLM + ["--data", str(data), "--out", str(tmp_path / "s"), "--option", "api_key_env=SIDKEY",
                          "--option", "timeout=30"] + [part.format(url=server.base_url) for part in route]
        assert _exit_code(argv) == 0, capsys.readouterr().err
    assert server.requests and (tmp_path / "s" / "summary.json").is_file()


def test_sid_audio_llm_without_a_server_names_the_flag_it_has(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    data = _sid_folder(tmp_path / "SID")
    assert _exit_code(SID_LLM + ["--data", str(data), "--out", str(tmp_path / "s")]) == 2
    error = _one_error(capsys, "sid")
    assert error.startswith("ihbench sid: error: the openai loader's default server is OpenAI") and "--base-url" in error
    assert _exit_code(SID_LLM + ["--data", str(data), "--out", str(tmp_path / "s"), "--base-url", "notaurl"]) == 2
    assert "argument --base-url: expected an http:// or https:// URL" in _one_error(capsys, "sid")  # it exists
    assert _exit_code(["sid", "--data", str(data), "--out", str(tmp_path / "s"), "--detector", "energy",
                       "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "--base-url: only for --detector audio-llm, not energy" in _one_error(capsys, "sid")
    assert not (tmp_path / "s").exists()


# --- finding 10: a server's option given with a local backend ------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["judge", "run", "--judge-backend", "transformers", "--judge-model", "tiny", "--judge-base-url",
      "http://127.0.0.1:9/v1"], "--judge-base-url: only for --judge-backend openai (a server); --judge-backend "
                                "transformers runs the model locally"),
    (["judge", "run", "--judge-backend", "transformers", "--judge-model", "tiny", "--no-json-schema"],
     "--no-json-schema: only for --judge-backend openai"),
    (["generate", "--llm-backend", "transformers", "--llm-model", "tiny", "--llm-base-url", "http://127.0.0.1:9/v1",
      "--domain", "telecom", "--goal", "Port a number", "--out", "g"], "--llm-base-url: only for --llm-backend openai"),
])
def test_a_server_option_with_a_local_backend_is_refused(argv, message, cwd, capsys):
    (cwd / "run").mkdir()
    (cwd / "run" / "run.json").write_text("{}")
    assert _exit_code(argv) == 2
    assert message in _one_error(capsys, argv[0])
    assert sorted(os.listdir(cwd)) == ["run"] and os.listdir(cwd / "run") == ["run.json"]


# --- finding 24: the same server given twice -----------------------------------------------------------

def test_the_same_base_url_given_twice_is_refused_naming_the_flag(cwd, capsys):
    argv = RUN + ["--base-url", "http://127.0.0.1:9/v1"]  # RUN has it once already
    assert _exit_code(argv) == 2
    assert ("--base-url: expected an http:// or https:// URL with a host, e.g. http://localhost:8000/v1, or a list "
            "of them, each once; 'http://127.0.0.1:9/v1' is given twice") in _one_error(capsys, "run")
    assert os.listdir(cwd) == []
    from ihbench.dataset.errors import UsageError
    from ihbench.loaders import check_options

    with pytest.raises(UsageError, match=r"--option base_url: .* 'http://<redacted>@h:1/v1' is given twice"):
        check_options("openai", {"base_url": ["http://u:p@h:1/v1", "http://h:2/v1", "http://u:p@h:1/v1"]})
    assert check_options("openai", {"base_url": ["http://h:1/v1", "http://h:2/v1"]})["base_url"] == [
        "http://h:1/v1", "http://h:2/v1"]


# --- finding 25: an --option with an empty value, no key or no '=' -----------------------------------

SID_ST = ["sid", "--data", "data", "--out", "s", "--detector", "smart-turn", "--quiet"]
SID_AUDIO_LLM = ["sid", "--data", "data", "--out", "s", "--detector", "audio-llm", "--model", "openai",
                 "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--quiet"]
BARGE_IN = ["barge-in", "--data", "data", "--model", "openai", "--model-path", "m", "--sim-model", "s", "--out", "b",
            "--quiet"]
DOCTOR = ["doctor", "--model", "openai", "--model-path", "m", "--quiet"]


@pytest.mark.parametrize("command", [RUN, SID_ST, SID_AUDIO_LLM, BARGE_IN, DOCTOR], ids=lambda argv: argv[0])
@pytest.mark.parametrize("option, message", [
    ("timeout=", "argument --option: timeout: an empty value ('timeout='); expected timeout=VALUE with a value "
                 "(leave the option out for its default)"),
    ("threshold= ", "argument --option: threshold: an empty value"),
    ("loader_options=", "argument --option: loader_options: an empty value"),
    ("loader_options=''", "argument --option: loader_options: an empty value"),  # the quotes reached us
    ('system=""', "argument --option: system: an empty value"),  # JSON's empty string
    ("model_path=null", "argument --option: model_path: an empty value"),  # was the default, or --model-path's
    ("=0.5", "argument --option: expected KEY=VALUE, got '=0.5' (no KEY before '=')"),
    ("threshold", "argument --option: expected KEY=VALUE, got 'threshold' (no '=': give threshold=VALUE)"),
])
def test_an_option_without_a_value_or_a_key_is_refused_when_parsed(command, option, message, cwd, capsys):
    """sid --detector audio-llm --option loader= or model_path= was replaced by --model's without a word,
    question= asked the model nothing; every command with --option refuses them when parsed."""
    argv = command + ["--option", option]
    assert _exit_code(argv) == 2
    assert message in _one_error(capsys, argv[0])
    assert os.listdir(cwd) == []


@pytest.mark.parametrize("option, flag", [("loader=qwen2-audio", "--model"), ("model_path=other", "--model-path")])
def test_sid_refuses_a_loader_setting_given_by_an_option_and_by_its_flag(option, flag, cwd, capsys):
    """sid --detector audio-llm --option loader=X beside --model Y used Y without a word."""
    argv = SID_AUDIO_LLM + ["--option", option]
    assert _exit_code(argv) == 2
    assert f"--option {option} and {flag} name the same setting twice; give it once" in _one_error(capsys, "sid")
    assert os.listdir(cwd) == []
    # the same value twice is no conflict: what stops this one is the next check, --data
    assert _exit_code(SID_AUDIO_LLM + ["--option", "model_path=m", "--option", "loader=openai"]) == 2
    assert "same setting twice" not in _one_error(capsys, "sid")


def test_an_option_with_a_value_still_parses_as_json_or_text():
    from ihbench.dataset.argtypes import key_value

    assert key_value()("threshold=0.3") == ("threshold", 0.3)
    assert key_value()(" question = Is it over?") == ("question", " Is it over?")
    assert key_value()("extra_body={}") == ("extra_body", {})
    assert key_value()("stream=false") == ("stream", False)
