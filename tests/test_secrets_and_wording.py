"""Secrets and wording (issue 23.5): a key is never taken for a variable's name nor written to a record;
messages say what is true of the user's case; plots leave the terminal alone."""
import gc
import json
import os
import re
import struct
import subprocess
import sys
import warnings

import numpy as np
import pytest
from judging import ScriptedJudge
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from ihbench.dataset.redaction import REDACTED, redact

CLI = [sys.executable, "-m", "ihbench.cli"]
KEY = "sk-proj-Zx81secretvalue"


@pytest.fixture
def official(tmp_path):
    return write_official_layout(tmp_path / "official")


def _run(official, out, url, *extra):
    return [*CLI, "run", "--model", "openai", "--model-path", "m", "--data", str(official), "--epochs", "1",
            "--limit", "1", "--out", str(out), "--base-url", url, "--quiet", *extra]


# --- secrets -------------------------------------------------------------------------------------

def test_a_key_given_where_a_variable_name_is_expected_is_refused_and_not_repeated(official, tmp_path):
    with OpenAITestServer() as server:
        result = subprocess.run(_run(official, tmp_path / "run", server.base_url, "--option", f"api_key_env={KEY}"),
                                capture_output=True, text=True)
    assert result.returncode == 2 and not server.requests
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ihbench run: error: --option api_key_env: expected the name of "
                                                   "an environment variable")
    assert KEY not in result.stderr and not (tmp_path / "run").exists()


def test_no_secret_value_is_written_to_run_json_or_any_record(official, tmp_path):
    body = json.dumps({"api_key": KEY, "top_k": 5})
    with OpenAITestServer() as server:
        result = subprocess.run(_run(official, tmp_path / "run", server.base_url, "--option", "api_key_env=MY_KEY",
                                     "--option", f"extra_body={body}"), capture_output=True, text=True,
                                env={**__import__("os").environ, "MY_KEY": KEY})
    assert result.returncode == 0, result.stderr
    assert server.requests[0]["api_key"] == KEY  # the server still gets what the user asked to send
    for path in (tmp_path / "run").iterdir():
        assert KEY not in path.read_text(), path
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["loader_options"]["extra_body"] == {"api_key": REDACTED, "top_k": 5}
    assert info["model"]["api_key_env"] == "MY_KEY"  # a variable's name is no secret
    assert f'extra_body={json.dumps({"api_key": REDACTED, "top_k": 5})}' in info["command"]


def test_redact_hides_every_option_named_like_a_secret():
    assert redact({"hf_token": "t", "Client-Secret": "s", "API_KEY": "k", "max_new_tokens": 8, "nested": {"key": 1},
                   "api_key_env": "OPENAI_API_KEY", "token": None}) == {
        "hf_token": REDACTED, "Client-Secret": REDACTED, "API_KEY": REDACTED, "max_new_tokens": 8,
        "nested": {"key": REDACTED}, "api_key_env": "OPENAI_API_KEY", "token": None}
    assert redact(["ihbench", "run", "--option", "api_key=k1", "--option=hf_token=k2", "--api-key", "k3",
                   "--base-url", "http://h/v1?api_key=k4", "--model", "m"]) == [
        "ihbench", "run", "--option", f"api_key={REDACTED}", f"--option=hf_token={REDACTED}", "--api-key", REDACTED,
        "--base-url", f"http://h/v1?api_key={REDACTED}", "--model", "m"]


def test_a_model_description_never_holds_a_secret_value():
    from ihbench.loaders.base import Loader

    class Remote(Loader):
        name = "remote"

        def __init__(self, model_path, *, hf_token=None, dtype="float32"):
            super().__init__(model_path, hf_token=hf_token, dtype=dtype)

        def _generate(self, conversation, config, seed):
            raise NotImplementedError

    assert Remote("m", hf_token=KEY).describe() == {"loader": "remote", "model_path": "m", "hf_token": REDACTED,
                                                   "dtype": "float32"}


# --- wording -------------------------------------------------------------------------------------

def _model_folder(tmp_path, weights: bytes):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def _safetensors(cut: int = 0) -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    whole = struct.pack("<Q", len(header)) + header + b"\0" * 16
    return whole[:len(whole) - cut]


@pytest.mark.parametrize("weights,said", [
    (np.random.default_rng(0).bytes(4096), r"not a safetensors file \(its header is not valid\)"),
    (struct.pack("<Q", 20) + b"[1, 2, 3]" + b" " * 11, r"not a safetensors file \(its header is not valid\)"),
    (b"\1\2\3", r"not a safetensors file \(3 bytes, too short to hold a header\)"),
    (_safetensors(cut=8), r"truncated \(\d+ bytes, the header describes \d+\)"),
    (_safetensors(cut=30), r"truncated \(header says \d+ bytes, file has \d+\)"),
])
def test_a_weights_file_is_called_truncated_only_when_it_is(tmp_path, weights, said):
    from ihbench.loaders import ModelFolderError, resolve_model_path

    folder = _model_folder(tmp_path, weights)
    with pytest.raises(ModelFolderError, match=rf"model\.safetensors: {said}"):
        resolve_model_path(str(folder))


def test_info_on_a_local_folder_does_not_blame_the_hub(official, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for parquet in (official / "conversations").glob("*.parquet"):
        parquet.write_bytes(b"PAR1 not parquet at all")
    assert main(["info", str(official), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{official / 'conversations'}/" in err and "not a readable Parquet file" in err  # the file named
    assert "HF_HUB_OFFLINE" not in err


def test_generate_names_its_own_model_flag(tmp_path, capsys):
    (tmp_path / "not-a-model").mkdir()
    code = main(["generate", "--llm-backend", "transformers", "--llm-model", str(tmp_path / "not-a-model"),
                 "--domain", "telecom", "--goal", "Port the caller's number", "--out", str(tmp_path / "gen"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "no config.json" in err and "--model-path" not in err
    assert not (tmp_path / "gen").exists()


def test_a_prompt_too_long_suggests_only_what_would_change_it():
    from ihbench.loaders.limits import AudioTooLongError, check_context

    def advice(*args, **kwargs) -> str:
        with pytest.raises(AudioTooLongError) as error:
            check_context(*args, **kwargs)
        return str(error.value)

    text = advice(901, 100, 1000, "qwen2-audio", "conv/3", audio_clips=0)
    assert "the transcripts alone do not fit: use --max-new-tokens 99 or less, or a model with a longer" in text
    assert "--modality text" not in text and "--history-audio" not in text
    deep = advice(901, 100, 1000, "qwen2-audio", "conv/3", audio_clips=4)
    assert "--history-audio last:K with K below 4" in deep and "--modality text" in deep
    one = advice(901, 100, 1000, "qwen2-audio", "conv/3", audio_clips=1)  # last:1 already, or one turn deep
    assert "--history-audio" not in one and "--modality text" in one
    full = advice(1200, 1, 1000, "qwen2-audio", "conv/3", audio_clips=1)  # the prompt alone is too long
    assert "--max-new-tokens" not in full and full.endswith("or a model with a longer context)")


def test_a_clip_too_long_suggests_history_audio_only_for_an_older_clip():
    from ihbench.loaders.base import InputTurn, ModelInput
    from ihbench.loaders.limits import AudioTooLongError, check_clips

    short, long_ = np.zeros(16000, np.float32), np.zeros(16000 * 40, np.float32)
    for clips, expected, absent in (((long_, short), "--history-audio last:K with K below 2", None),
                                    ((short, long_), "--modality text", "--history-audio")):
        turns = [InputTurn("system", "S"), *(InputTurn("user", audio=clip) for clip in clips)]
        with pytest.raises(AudioTooLongError) as error:
            check_clips(ModelInput("c/1", "audio", turns, 16000), "qwen2-audio", 30.0)
        assert expected in str(error.value) and (absent is None or absent not in str(error.value))


# --- plots leave the terminal alone ----------------------------------------------------------------

def _report_quietly(argv, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(argv) == 0
    assert [str(w.message) for w in caught if issubclass(w.category, UserWarning)] == []
    assert "Warning" not in capsys.readouterr().err


def test_report_on_an_unjudged_run_prints_no_matplotlib_warning(official, tmp_path, capsys):
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--epochs", "1",
                     "--out", str(tmp_path / "run"), "--base-url", server.base_url, "--quiet"]) == 0
    _report_quietly(["report", str(tmp_path / "run"), "--n-bootstrap", "50", "--quiet"], capsys)


def test_report_with_cjk_names_prints_no_matplotlib_warning(official, tmp_path, capsys):
    out = tmp_path / "运行-ラン"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "模型/音声モデル", "--data", str(official), "--epochs",
                     "1", "--out", str(out), "--base-url", server.base_url, "--quiet"]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(out), "--judge-model", "判定", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "cache.sqlite"), "--quiet"]) == 0
    _report_quietly(["report", str(out), "--n-bootstrap", "50", "--quiet"], capsys)
    assert (out / "per_type.png").is_file()


def test_a_timeline_of_a_recording_with_a_cjk_name_draws_without_a_warning(tmp_path):
    from ihbench.dataset.floor import floor_labels
    from ihbench.turns.plot import plot_timeline

    speech = [[(0.0, 1.0)], [(1.2, 2.0)]]
    labels = floor_labels(speech[0], speech[1], 2.5)
    gc.collect()  # an earlier test's garbage (an unclosed loop's ResourceWarning) is not this drawing's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_timeline(tmp_path / "timeline.png", "通話-電話", 2.5, labels, speech=speech, backchannels=[[], []])
    said = [str(w.message) for w in caught if not issubclass(w.category, ResourceWarning)]
    assert said == [] and (tmp_path / "timeline.png").is_file()


def test_a_password_in_a_server_url_or_a_header_is_never_written(official, tmp_path):
    """Found by the bad-input battery: `--base-url http://me:PW@host/v1` and an Authorization header
    or a password in extra_body were written to run.json (three times)."""
    body = json.dumps({"password": KEY, "Authorization": f"Bearer {KEY}", "top_k": 5})
    with OpenAITestServer() as server:
        with_user = server.base_url.replace("http://", f"http://me:{KEY}@")
        result = subprocess.run(_run(official, tmp_path / "run", with_user, "--option", f"extra_body={body}"),
                                capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for path in (tmp_path / "run").iterdir():
        assert KEY not in path.read_text(), path
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["endpoint"] == server.base_url.replace("http://", f"http://{REDACTED}@")
    assert info["loader_options"]["extra_body"] == {"password": REDACTED, "Authorization": REDACTED, "top_k": 5}


def test_a_character_a_terminal_hides_is_written_as_its_escape(tmp_path, capsys):
    """Battery 36 nits: an id holding a NUL byte was printed raw ("en_a.wav^@" read as "en_a.wav" beside
    it), and a right-to-left override turns the rest of a line around. Errors, warnings and notes, and
    the lines export and verify print, escape them; letters of any script, newline and tab pass."""
    from ihbench.cli.common import shown

    assert shown("en_a.wav\x00 x\u202eabc \x07 \r\x1b[2J\x85 é 😀 日本\n\t") == \
        "en_a.wav\\x00 x\\u202eabc \\x07 \\x0d\\x1b[2J\\u0085 é 😀 日本\n\t"
    odd = tmp_path / "a\u202eb\x07"
    odd.mkdir()  # an existing folder, not a run: the name option types refuse such a name before any message
    assert main(["report", str(odd), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}/a\\u202eb\\x07" in err and "\u202e" not in err and "\x07" not in err, err


def test_a_folder_option_given_a_device_says_it_is_a_device(tmp_path):
    """Battery 37 nit: sid-import's source /dev/null was called "(a file)", where a file option says "(a device,
    not a regular file)"."""
    from ihbench.dataset.argtypes import ArgumentValueError, path

    with pytest.raises(ArgumentValueError, match=r"expected a folder, got '/dev/null' \(a device, not a regular file\)"):
        path("folder")("/dev/null")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ArgumentValueError, match=r"expected a folder, got '.*f\.txt' \(a file\)$"):
        path("folder")(str(tmp_path / "f.txt"))


def test_a_run_folder_named_with_terminal_commands_is_escaped_in_the_results_too(tmp_path, capsys):
    """Battery 39, J5: the results on stdout ("rs<ESC>[2Kq: TF win rate ...") printed a run folder's name raw
    while the warnings beside them escaped it. Every command's stdout goes through the same escape."""
    import shutil

    from judged_runs import judged_run

    run = shutil.copytree(judged_run(tmp_path), tmp_path / "rs\x1b[2Kq\u202eX")
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "rs\\x1b[2Kq\\u202eX: TF win rate" in out and "\x1b" not in out and "\u202e" not in out, out


@pytest.mark.parametrize("argv", [
    ["space", "--data", f"http://{KEY}@x"],  # refused by the command: "no such dataset directory"
    ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:1/v1", "--out", "o",
     "--data", f"http://user:{KEY}@x"],
    ["judge", ".", "--concurrency", f"http://{KEY}@x"],  # refused by argparse, through the option's type
])
def test_a_key_typed_where_a_path_or_number_goes_is_not_echoed_by_the_refusal(argv, tmp_path, monkeypatch):
    """Battery 42, M3: `space --data http://sk-KEY@x` printed the key in the line that refused it, where
    --base-url's own refusals hide it."""
    monkeypatch.chdir(tmp_path)
    result = subprocess.run([*CLI, *argv], capture_output=True, text=True)
    assert result.returncode == 2 and KEY not in result.stderr + result.stdout, result.stderr
    assert "(a credential; not shown)" in result.stderr or f"http://{REDACTED}@x" in result.stderr
    assert list(tmp_path.iterdir()) == []


def _refused_unshown(argv, official, tmp_path, monkeypatch, said, variables=None, key=KEY):
    """`ihbench ARGV` (run folder {run}, dataset {data}, the key {key}) from an empty working folder:
    refused with `said`, the key nowhere in the output, nothing made, the run folder untouched."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("{}")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    given = [part.format(key=key, data=official, run=run) for part in argv]
    result = subprocess.run([*CLI, *given, "--quiet"], capture_output=True, text=True,
                            env={**os.environ, **(variables or {})})
    assert result.returncode == 2 and key not in result.stderr + result.stdout, result.stderr
    assert said in result.stderr, result.stderr
    assert list(work.iterdir()) == [] and sorted(p.name for p in run.iterdir()) == ["run.json"]


@pytest.mark.parametrize("argv", [
    ["run", "--model", "openai", "--model-path", "http://u:{key}@h", "--data", "{data}", "--out", "o"],
    ["barge-in", "--model", "openai", "--model-path", "http://{key}@h", "--data", "{data}", "--out", "o",
     "--sim-model", "s"],
    ["judge", "{run}", "--judge-model", "http://u:{key}@h"],
    ["generate", "--llm-model", "http://{key}@h", "--out", "o"],
    ["run", "--model", "openai", "--model-path", "m", "--data", "{data}", "--out", "http://u:{key}@x/y"],
    ["report", "http://u:{key}@x"],
    ["verify", "http://u:{key}@x"],
    ["report", "{run}", "--model-name", "{run}=http://u:{key}@h"],
    # battery 44 nit: a slash short, taken as a path (a folder named with the key)
    ["run", "--model", "openai", "--model-path", "http:/u:{key}@h", "--data", "{data}", "--out", "o"],
    ["run", "--model", "openai", "--model-path", "m", "--data", "{data}", "--out", "https:/{key}@x/y"],
])
def test_a_url_with_a_credential_is_no_name_nor_path(argv, official, tmp_path, monkeypatch):
    """Battery 43: `--model-path http://u:KEY@h` was written in clear into run.json, and the run then refused
    by judge and report; `--judge-model` the same into judgments and report.md; `--out http://u:KEY@x/y`
    made the folders ./http:/u:KEY@x/y; `report http://u:KEY@x` echoed the key. Refused, the key not shown,
    nothing made."""
    _refused_unshown(argv, official, tmp_path, monkeypatch, "a URL with a user part (a credential; not shown)")


@pytest.mark.parametrize("argv", [
    ["run", "--model", "openai", "--model-path", "m", "--data", "{data}", "--out", "{key}/r"],
    ["run", "--model", "openai", "--model-path", "m-{key}", "--data", "{data}", "--out", "o"],
    ["report", "{run}", "--model-name", "{run}=x{key}"],
])
def test_a_name_or_path_holding_a_secret_variable_s_value_is_refused(argv, official, tmp_path, monkeypatch):
    """Battery 43 nit: `--out $OPENAI_API_KEY/r` (a shell expanding the wrong variable) made a folder named
    with the key, and printed it in the result line. A value of a variable named like a secret (12
    characters or more, not a path) is no name nor path; the variable is named, the value not shown."""
    _refused_unshown(argv, official, tmp_path, monkeypatch,
                     "the value of $MY_SERVER_API_KEY (a credential; not shown)",
                     {"MY_SERVER_API_KEY": KEY, "SHORT_TOKEN": "m"})


PASTED = "sk-proj-Qb8299UbZDKPOGBV128YtIFRrIfnNoRe"  # random, as a real key is (a typed one has patterns)


@pytest.mark.parametrize("argv", [
    ["run", "--model", "openai", "--model-path", PASTED, "--data", "{data}", "--out", "o"],
    ["report", "{run}", "--model-name", "{run}=" + PASTED],
    # battery 47, T2: staged into every card and usage example, and a public repository's name; T7: echoed
    ["publish-metrics", "--namespace", PASTED, "--dry-run", "--staging-dir", "st"],
    ["publish-space", "--repo", f"me/{PASTED}", "--data", "{data}", "--dry-run", "--staging-dir", "st"],
    ["publish-space", "--repo", "me/space", "--data", f"me/{PASTED}", "--dry-run", "--staging-dir", "st"],
    ["publish-dataset", "{data}", "--repo", f"me/{PASTED}", "--dry-run"],
    ["export", "{data}", "--conversation", PASTED],
])
def test_a_key_pasted_where_a_name_goes_is_refused(argv, official, tmp_path, monkeypatch):
    """Battery 45, R7: `--model-path sk-proj-...` (a key pasted where the model's name goes) ran, and the key
    was in run.json and every response record in clear; the Space's model field and --model-name the same.
    A provider's key shape (sk-, hf_, ghp_; long, mixed case with digits) is no name."""
    from ihbench import ui
    from ihbench.dataset.redaction import credential_in

    _refused_unshown([part.replace(PASTED, "{key}") for part in argv], official, tmp_path, monkeypatch,
                     "what looks like an API key (a credential; not shown)", key=PASTED)
    with pytest.raises(ui.UserError, match=r"the model path holds what looks like an API key") as refused:
        ui.typed_name(PASTED, "model path")
    assert PASTED not in str(refused.value)
    for name in ("sk-llama-3-8b-instruct-finetuned-version-two", "models/hf_cache_dir_for_qwen2_audio_7B_instruct_v1",
                 "Qwen/Qwen2-Audio-7B-Instruct", "hub/models--Qwen--Qwen2-Audio-7B-Instruct/snapshots/"
                 "0123456789abcdef0123456789abcdef01234567",  # a cache's snapshot: a hash, no key
                 "hf_checkpoint1500steps",  # battery 48, U3
                 "models/Qwen2AudioForConditionalGeneration", "gpt4oAudioPreview20241217"):  # words, not random
        assert credential_in(name) is None, name
    for key in [*OTHER_KEYS, *MORE_KEYS, "m/%2F" + PASTED]:  # battery 47, T1
        assert credential_in(key) == "what looks like an API key", key


@pytest.mark.parametrize("key", ["eed6e4cbd825a5ec40be6d0a5a8b2898", "1CMBQKJ8NBLH7C63CC3H9RC7YU6MS2UC",
                                 "lp1TeP0l-srQws8lI-X2LdqJcu-wgCP5M8L", "S-DkjjbvHjYfyykepvlyXscJ17SsyvZII23QFP7IIhk"],
                         ids=["azure hex", "upper case", "dash groups", "token_urlsafe"])
def test_a_one_case_or_dashed_key_is_refused_as_a_name_and_hidden_in_extra_body(key, official, tmp_path, monkeypatch):
    """Battery 49, V2: Azure's 32 hex, 32 upper-case letters and digits, a key in dash groups and a
    token_urlsafe key were taken for names, and in extra_body written to run.json (the part of the last
    before its `-` in clear)."""
    _refused_unshown(["run", "--model", "openai", "--model-path", "{key}", "--data", "{data}", "--out", "o"],
                     official, tmp_path, monkeypatch, "what looks like an API key (a credential; not shown)", key=key)
    out = tmp_path / "run2"
    with OpenAITestServer() as server:
        result = subprocess.run([*CLI, "run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url,
                                 "--data", str(official), "--out", str(out), "--limit", "1", "--quiet",
                                 "--option", f'extra_body={{"user": "{key}"}}'], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    written = "".join(path.read_text() for path in out.rglob("*") if path.is_file())
    assert not [part for part in re.split(r"[-_]", key) if len(part) >= 6 and part in written], written
    assert '"user": "<redacted>"' in written


#: keys of other shapes (battery 47, T1): DeepSeek's lower-case hex, OpenRouter's, Groq's
HEX_KEY = "sk-a1b2c3d4e5f60718293a4b5c6d7e8f90"
OTHER_KEYS = [HEX_KEY, "sk-or-v1-" + "0123456789abcdef" * 4, "gsk_aB3dE5fGh7Jk9LmN1pQr3StU5vWx7Yz9Ab1Cd3EfGh7Jk9L"]
#: battery 48, U1: Cerebras', Fireworks', Together's, and a key of no prefix (Mistral's, Cohere's: random letters)
MORE_KEYS = ["csk-k3j9x2m8q7w1e5r4t6y0u2i9o8p7a6s5d4f3g2h1j0k9", "fw_3ZbC7qP9xR2mK8vN4tL6wY1s",
             "tgp_v1_AbC3dEf5GhI7jKl9MnO1pQr3StU5vWx7Yz9aBc1dE", "iRdGreU5DmrZS5KTfQqHVjp5HvhHaOSX"]


def test_a_key_of_any_shape_in_an_option_s_value_is_not_recorded():
    """Battery 48, U1: a Cerebras or Fireworks key as extra_body's value went into run.json in clear."""
    from ihbench.dataset.redaction import redact

    for key in MORE_KEYS:
        assert key not in json.dumps(redact({"extra_body": {"user": key}, "command": ["--option",
                                                                                     f"extra_body={{\"u\": \"{key}\"}}"]}))


def test_a_deployment_s_name_in_a_server_address_is_no_key():
    """Battery 48, U2: a deployment named gpt4oaudiopreview20241217 was redacted, so run.json's endpoint
    could not tell it from another deployment's, and a resume against the other was taken as the same run."""
    from ihbench.dataset.redaction import redact

    for address in ("https://x.openai.azure.com/openai/deployments/gpt4oaudiopreview20241217",
                    "https://x.openai.azure.com/openai/deployments/gpt4oAudioPreview20241217",
                    "http://h:8000/v1/models/qwen2audio7binstruct20240801"):
        assert redact(address) == address


@pytest.mark.parametrize("segment, key", [
    (f"{PASTED}/v1", PASTED), *[(f"v1/{key}", key) for key in OTHER_KEYS],
    (f"v1/Bearer%20{PASTED}", PASTED), (f"v1/%2F{PASTED}", PASTED), (f"v1/x{PASTED}", PASTED),
    ("v1/$MY_PROXY_API_KEY", "proxy-key-of-any-shape"),
], ids=["sk-proj", "deepseek", "openrouter", "groq", "after %20", "after %2F", "after a letter", "an env value"])
def test_a_key_in_a_server_address_s_path_is_never_written(segment, key, official, tmp_path, monkeypatch):
    """Battery 46, S3: a proxy's address with the key in its path (`http://host/sk-proj-.../v1`) is a URL a
    --base-url may be, and the run uses it as given; run.json's endpoint, the loader's description and the
    records held the key in clear. Battery 47, T1: so did keys of other shapes, one after an escape, and a
    secret variable's value."""
    monkeypatch.setenv("MY_PROXY_API_KEY", "proxy-key-of-any-shape")
    out = tmp_path / "run"
    with OpenAITestServer() as server:
        address = server.base_url.replace("/v1", "/" + segment.replace("$MY_PROXY_API_KEY", key))
        result = subprocess.run(_run(official, out, address), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 1  # asked where the user said
    written = "".join(path.read_text() for path in out.rglob("*") if path.is_file())
    assert key not in written + result.stdout + result.stderr and "/<redacted>" in written


@pytest.mark.parametrize("variable", ["IHBENCH_CACHE", "IHBENCH_RUNS"])
def test_a_folder_variable_holding_a_url_with_a_credential_is_refused(variable, tmp_path, monkeypatch):
    """Battery 44, Q2: IHBENCH_CACHE=http://u:KEY@h/x made the folders ./http:/u:KEY@h/x, the key on disk."""
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.io.cache import refuse_blank

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, f"http://u:{KEY}@h/x")
    with pytest.raises(UsageError, match=f"^{variable}: a URL with a user part") as error:
        refuse_blank(variable)
    assert KEY not in str(error.value) and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ['{"x": 1e999}', '{"x": [1, NaN]}', '{"a": {"b": -Infinity}}'])
def test_a_json_option_with_a_number_json_cannot_carry_is_refused_before_any_work(value, official, tmp_path):
    """Battery 44, Q7: extra_body={"x":1e999} (read as inf) wrote run.json, then ended in a traceback; the
    corrected value was refused as another run's options, and the same ones crashed again."""
    result = subprocess.run(_run(official, tmp_path / "run", "http://127.0.0.1:9/v1", "--option",
                                 f"extra_body={value}"), capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "--option extra_body: expected a JSON object whose numbers are finite, got one holding" in result.stderr
    assert "which JSON does not have" in result.stderr
    # battery 61, H16: the number as typed, not as Python read it (`1e999`, not Infinity)
    assert ("1e999," if "1e999" in value else "NaN," if "NaN" in value else "-Infinity,") in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_server_s_message_of_a_megabyte_is_recorded_cut_at_a_space_with_no_key_piece(official, tmp_path):
    """A 400 whose message was an error page of a megabyte went whole into every failed item's record, and
    judging every run in it for a key took 20 s a message. It is cut at a space before it is judged, so a
    key standing at the cut is left out whole, never half-written in clear."""
    import secrets

    from openai_test_server import Reply

    key = secrets.token_urlsafe(48)  # no prefix: found only by its shape, which a cut in its middle would hide
    page = "error happened here " * 197 + "see " + key  # the key spans the cut (4000 characters) + " then " + "more words " * 100_000
    with OpenAITestServer(respond=lambda body: Reply(status=400, content=page)) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--option", "max_retries=0", "--quiet"]) == 1
    error = json.loads((tmp_path / "r" / "responses.jsonl").read_text().splitlines()[0])["error"]
    assert len(error) < 4200 and error.endswith("more characters not recorded)")
    assert error.split("... (")[0].endswith("see ")
    assert not any(key[i:i + 6] in error for i in range(len(key) - 5))


@pytest.mark.parametrize("text", ["see http://proxy/b/http://host:8000/v1/models x",
                                  "https://web.archive.org/web/2024/https://example.com/a?b=1 and more"])
def test_a_url_inside_another_url_s_path_is_written_as_it_was(text):
    """A URL in the path of another (a proxy's, an archive's) had its remainder written twice."""
    from ihbench.dataset.redaction import redact_text

    assert redact_text(text) == text


def test_an_existing_file_named_like_a_key_is_refused_saying_to_rename_it(tmp_path):
    """Battery 53, Z1: read under its name, a recording named like a key had its name copied into a new folder
    and summary.json. Refused, with the remedy; a new path or a folder of that shape is refused as before."""
    import secrets
    import string

    from ihbench.dataset.argtypes import ArgumentValueError, path

    name = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    (tmp_path / f"{name}.wav").write_bytes(b"RIFF")
    with pytest.raises(ArgumentValueError, match=r"what looks like an API key \(a credential; not shown\).*; a file of "
                                                 r"yours named so: rename it \(its name is copied into the outputs\)$"):
        path("file").convert(str(tmp_path / f"{name}.wav"))
    with pytest.raises(ArgumentValueError, match=r"what looks like an API key \(a credential; not shown\): a name or path "
                                                 r"holds none, and a server's key goes in an environment variable$"):
        path().convert(str(tmp_path / f"{name}.json"))  # a new path: nothing of the user's to rename
    (tmp_path / name).mkdir()
    with pytest.raises(ArgumentValueError, match=r"; a folder of yours named so: rename it"):  # battery 55, B11
        path().convert(str(tmp_path / name))


def test_an_existing_file_in_a_folder_named_like_a_key_says_which_part_to_rename(tmp_path):
    """Battery 54, A2: the remedy said "rename the file" when a folder of the path was the key's."""
    import secrets
    import string

    from ihbench.dataset.argtypes import ArgumentValueError, path

    name = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    (tmp_path / name / "calls").mkdir(parents=True)
    (tmp_path / name / "calls" / "call.wav").write_bytes(b"RIFF")
    depth = len(tmp_path.parts)  # the key's folder is the next part, counted without the root
    with pytest.raises(ArgumentValueError, match=rf"a folder of yours named so \(part {depth} of the path's "
                                                 rf"{depth + 2}\): rename it"):
        path("file").convert(str(tmp_path / name / "calls" / "call.wav"))
    # battery 55, B11: a folder and the file both named so, and a dataset folder given as --data
    (tmp_path / name / "calls" / f"{name}.wav").write_bytes(b"RIFF")
    with pytest.raises(ArgumentValueError, match=rf"a folder and the file of yours named so \(parts {depth} and "
                                                 rf"{depth + 2} of the path's {depth + 2}\): rename it"):
        path("file").convert(str(tmp_path / name / "calls" / f"{name}.wav"))
    from ihbench.dataset.argtypes import data_source

    with pytest.raises(ArgumentValueError, match=rf"a folder of yours named so \(part {depth} of the path's "
                                                 rf"{depth + 1}\): rename it"):
        data_source().convert(str(tmp_path / name / "calls"))


def test_a_name_longer_than_a_path_can_be_is_refused_without_echoing_it(official, tmp_path):
    """Battery 53, Z11: a --model-path of 120,000 characters was written into run.json and every record, and the
    key rule's check of it took seconds."""
    long = "aB3-" * 30_000
    with OpenAITestServer() as server:
        argv = _run(official, tmp_path / "run", server.base_url)
        result = subprocess.run([*argv[:7], long, *argv[8:]], capture_output=True, text=True)
    assert result.returncode == 2 and not server.requests and not (tmp_path / "run").exists()
    assert "argument --model-path: expected a non-empty name on one line, got 120,000 characters (not shown); a name " \
           "or path has at most 4,096" in result.stderr and "aB3-aB3-" not in result.stderr


def test_a_run_json_setting_edited_to_half_a_megabyte_is_quoted_cut(official, tmp_path, capsys):
    """Left from battery 53 (Z11): a run.json setting edited by hand to 500 KB was quoted whole in the refusal
    that names the setting which differs, a screenful for every try. (A name over 4,096 characters is refused as
    edited before: `test_a_run_json_name_longer_than_the_command_line_allows_is_refused_in_one_line`.)"""
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        argv = _run(official, run, server.base_url)[len(CLI):]
        assert main(argv) == 0
        info = json.loads((run / "run.json").read_text())
        info["model_path"] = info["model"]["model_path"] = "x " * 1500  # within the 4,096 a name may have
        (run / "run.json").write_text(json.dumps(info))
        capsys.readouterr()
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert "belongs to a different run: model_path is 'x x x" in err, err
    assert "more characters not shown) there but 'm' now" in err and len(err) < 1500, len(err)


def test_a_judgments_file_copied_in_under_a_key_shaped_name_is_refused_by_report(official, tmp_path, capsys):
    """Left from battery 53 (Z10): `judge --out` refuses a key-shaped name, but a judgments file copied into the run
    folder by hand under one was read by `report`, which wrote its name into summary.json and report.md."""
    import secrets
    import string

    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(_run(official, run, server.base_url)[len(CLI):]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "j.sqlite"), "--quiet"]) == 0
    key = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    (run / f"judgments-{key}.jsonl").write_bytes((run / "judgments.jsonl").read_bytes())
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{run}: a judgments file there is named with what looks like an API key (a credential; not shown), and " \
           "its name would be copied into the report; rename it (judgments-MODEL.jsonl)" in err, err
    assert key not in err and not (tmp_path / "rep").exists()


def test_a_run_json_whose_names_hold_a_key_is_not_copied_into_a_report(official, tmp_path, capsys):
    """Battery 54, A9: a run.json whose model_path, model.model_path and model_name held a key (a run made before the
    key rule, or edited consistently) was reported, the key copied into summary.json and report.md."""
    import secrets
    import string

    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(_run(official, run, server.base_url)[len(CLI):]) == 0
    key = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    info = json.loads((run / "run.json").read_text())
    info["model_path"] = info["model"]["model_path"] = info["model_name"] = key
    (run / "run.json").write_text(json.dumps(info))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "field 'model_path' holds what looks like an API key (a credential; not shown), which every report of the " \
           "run would copy" in err, err
    assert key not in err and not (tmp_path / "rep").exists()


def test_a_run_json_name_longer_than_the_command_line_allows_is_refused_in_one_line(official, tmp_path, capsys):
    """Battery 55, B14: a run.json whose model_path (and model.model_path) was edited to 20,000 characters made
    `report` print one warning per answer, each with the whole value: 800 KB on the terminal."""
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(_run(official, run, server.base_url)[len(CLI):]) == 0
    info = json.loads((run / "run.json").read_text())
    info["model_path"] = info["model"]["model_path"] = "word " * 4000
    (run / "run.json").write_text(json.dumps(info))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "field 'model_path' is 20,000 characters long (not shown), over the 4,096 a name or path may have" in err
    assert len(err) < 1000 and not (tmp_path / "rep").exists()


def test_a_record_s_model_with_a_line_break_is_quoted_in_the_warning():
    from types import SimpleNamespace

    from ihbench.records import copied_from_another_run

    info = SimpleNamespace(loader="openai", model_path="m", modality=None, seed=None)  # a run.json's fields
    said = copied_from_another_run(info, model="openai:m\n\x1b[31mRED", modality=None, seed=None, drawn=lambda s: s,
                                   verb="answered", noun="an answer")
    assert said.startswith("answered by 'openai:m\\n\\x1b[31mRED', and this run's model is openai:m:"), said


def test_a_new_path_under_an_existing_folder_named_like_a_key_names_that_folder(tmp_path):
    """Battery 56, C4: `--out KEYFOLDER/new/r` (the folder the user's, the rest new) named no part to rename; a new
    name holding a key still gets no remedy (nothing of the user's to rename)."""
    import secrets
    import string

    from ihbench.dataset.argtypes import ArgumentValueError, path

    name = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    (tmp_path / name / "sub").mkdir(parents=True)
    depth = len(tmp_path.parts)
    with pytest.raises(ArgumentValueError, match=rf"a folder of yours named so \(part {depth} of the path's "
                                                 rf"{depth + 2}\): rename it"):
        path().convert(str(tmp_path / name / "new" / "run"))
    with pytest.raises(ArgumentValueError, match=rf"a folder of yours named so \(part {depth} of the path's "
                                                 rf"{depth + 3}\): rename it"):
        path().convert(str(tmp_path / name / "sub" / name / "run"))  # the second one is new: not named
    with pytest.raises(ArgumentValueError, match=r"environment variable$"):
        path().convert(str(tmp_path / "new" / name / "run"))


def test_a_long_value_without_spaces_is_quoted_up_to_the_limit_not_as_nothing():
    """Battery 56, C6: a long model path (no space to cut at) was quoted as `'... (386 more characters not shown)`;
    its keys are hidden before the cut, so it is cut between path parts, or inside a run when it has none."""
    from ihbench.dataset.redaction import quoted

    path = "/data/models/" + "Qwen2-Audio-7B-Instruct/" * 15 + "final"
    said = quoted(path)
    assert said.startswith("'/data/models/Qwen2-Audio-7B-Instruct/Qwen2") and len(said) < 340, said
    assert said.endswith("more characters not shown)") and quoted("x" * 400).startswith("'" + "x" * 250)
