"""The second round of bad inputs (issue 23's fresh battery): each case as a user met it, now one line
or an item failure retried, never a traceback, a score of nothing, a write where it does not belong."""
import json

import pytest
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer, Reply

from ihbench.cli import main


@pytest.fixture
def official(tmp_path):
    return write_official_layout(tmp_path / "official")


def _one_error(capsys, command):
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith(f"ihbench {command}: error: ")]


def _run(official, out, server, *extra):
    epochs = [] if "--epochs" in extra else ["--epochs", "1"]
    return main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(out),
                 *epochs, "--limit", "2", "--base-url", server.base_url, "--option", "max_retries=0",
                 "--quiet", *extra])


class _Raw(OpenAITestServer):
    """A TEST DOUBLE that answers 200 with a body that is not a chat completion (a proxy's page)."""

    def __init__(self, body: bytes, content_type: str = "text/html"):
        super().__init__()
        handler = self._server.RequestHandlerClass

        def do_post(request):
            request.rfile.read(int(request.headers["Content-Length"]))
            request.send_response(200)
            request.send_header("Content-Type", content_type)
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)

        handler.do_POST = do_post


@pytest.mark.parametrize("body, kind", [(b"<html>502 Bad Gateway</html>", "text/html"),
                                        (b"\xff\xfe garbage", "application/json"),
                                        (b'{"id": "x", "choices": []}', "application/json"),
                                        (b'{"id": "x"}', "application/json")])
def test_a_reply_that_is_not_a_completion_is_an_item_failure_retried_later(body, kind, official, tmp_path, capsys):
    with _Raw(body, kind) as proxy:
        assert _run(official, tmp_path / "r", proxy) == 1
    assert "every one of the 2 response(s) failed" in _one_error(capsys, "run")[0]
    records = [json.loads(line) for line in (tmp_path / "r" / "responses.jsonl").read_text().splitlines()]
    assert all(r["error"].startswith("TransportError: the server") for r in records)
    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "r", up, "--allow-endpoint-change") == 0


def test_a_reply_without_text_is_an_item_failure_not_an_empty_answer(official, tmp_path, capsys):
    with OpenAITestServer(respond=lambda body: Reply(content="")) as empty:
        assert _run(official, tmp_path / "r", empty) == 1
    record = json.loads((tmp_path / "r" / "responses.jsonl").read_text().splitlines()[0])
    assert record["response"] is None and record["error"].startswith("EmptyReplyError: the server's reply has no text")


def test_a_judge_server_answering_html_is_a_judge_error_not_a_traceback(official, tmp_path, capsys):
    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "r", up) == 0
    with _Raw(b"<html>bad gateway</html>") as proxy:
        code = main(["judge", str(tmp_path / "r"), "--judge-model", "j", "--judge-base-url", proxy.base_url,
                     "--quiet", "--cache", str(tmp_path / "c.sqlite")])
    assert code == 1 and _one_error(capsys, "judge")


def test_a_file_saved_by_a_latin_1_editor_is_named_with_its_line(official, tmp_path, capsys):
    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "r", up) == 0
    responses = tmp_path / "r" / "responses.jsonl"
    responses.write_bytes(responses.read_bytes().replace(b"heard", b"h\xe9ard", 1))
    assert main(["report", str(tmp_path / "r"), "--quiet"]) == 2
    (error,) = _one_error(capsys, "report")
    assert f"{responses}: line 1 is not UTF-8 text: byte 0xe9" in error
    (tmp_path / "r" / "run.json").write_bytes(b"\x89PNG\x00\xff")
    assert main(["report", str(tmp_path / "r"), "--quiet"]) == 2
    assert "run.json: not UTF-8 text" in _one_error(capsys, "report")[0]


def test_a_damaged_cache_is_one_line(tmp_path, capsys):
    from ihbench.llm import LLMCache

    path = tmp_path / "c.sqlite"
    cache = LLMCache(path)
    for n in range(400):
        cache.put(f"k{n}", {"v": "x" * 200})
    cache.close()
    for side in (path.with_name("c.sqlite-wal"), path.with_name("c.sqlite-shm")):
        side.unlink(missing_ok=True)
    data = bytearray(path.read_bytes())
    for i in range(4096, len(data), 13):
        data[i] ^= 255
    path.write_bytes(bytes(data))
    code = main(["cache", "info", "--cache", str(path)])
    errors = _one_error(capsys, "cache")
    assert code == 2 and f"{path}: " in errors[0] and ("damaged SQLite database" in errors[0]
                                                      or "not an SQLite database" in errors[0]), errors


def test_a_device_this_machine_lacks_is_refused_before_anything_is_made(official, tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    code = main(["run", "--model", "qwen2-audio", "--model-path", str(model), "--data", str(official), "--out",
                 str(tmp_path / "r"), "--option", "device=cuda", "--quiet"])
    assert code == 2 and "--option device: cuda is not available here: no CUDA device" in _one_error(capsys, "run")[0]
    assert not (tmp_path / "r").exists()


def test_judgments_never_go_into_a_run_s_own_files_or_another_run(official, tmp_path, capsys):
    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "a", up) == 0
        assert _run(official, tmp_path / "b", up) == 0
    before = (tmp_path / "a" / "responses.jsonl").read_bytes()
    for out, message in ((tmp_path / "a" / "responses.jsonl", "is a run's own responses.jsonl"),
                         (tmp_path / "b" / "judgments-x.jsonl", "is inside another run's folder")):
        assert main(["judge", str(tmp_path / "a"), "--judge-model", "j", "--out", str(out), "--quiet"]) == 2
        assert message in _one_error(capsys, "judge")[0]
    assert (tmp_path / "a" / "responses.jsonl").read_bytes() == before
    assert not (tmp_path / "b" / "judgments-x.jsonl").exists()


def test_a_report_of_several_runs_never_replaces_one_run_s_own_report(official, tmp_path, capsys):
    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "a", up) == 0
        assert _run(official, tmp_path / "b", up) == 0
    code = main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "a"), "--quiet"])
    assert code == 2 and "is one of the runs being reported" in _one_error(capsys, "report")[0]


def test_export_never_replaces_a_folder_of_the_user_s(official, tmp_path, capsys):
    from ihbench.dataset.load import load_conversations

    first = load_conversations(official)[0].conversation_id.replace("/", "_")
    mine = tmp_path / "u" / first
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("mine")
    assert main(["export", str(official), "--out", str(tmp_path / "u"), "--quiet"]) == 2
    assert "holds what export did not write (notes.txt)" in _one_error(capsys, "export")[0]
    assert (mine / "notes.txt").read_text() == "mine"


def test_a_secret_in_a_url_query_is_never_written(official, tmp_path, capsys):
    with OpenAITestServer() as up:
        url = up.base_url + "?api_key=SEKRIT2"
        with pytest.raises(SystemExit) as refused:
            main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                  str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", url, "--quiet"])
    assert refused.value.code == 2
    # battery 4: a base URL has no query (the client would request /v1/?api_key=...chat/completions),
    # so it is refused when parsed, without echoing it, and nothing is written at all
    assert "SEKRIT2" not in capsys.readouterr().err and not (tmp_path / "r").exists()
    from ihbench.llm import OpenAICompatibleLLM

    assert "SEKRIT6" not in json.dumps(OpenAICompatibleLLM("g", base_url="http://h/v1?api_key=SEKRIT6").describe())


def test_sid_never_scores_a_clip_whose_model_calls_failed(built, tmp_path, capsys):
    """An audio-llm detector whose server is down learned nothing about the clip: it is not a "no
    interruption", nothing is scored or written, and the exit status is the item-failure one."""
    with OpenAITestServer(fail_when=lambda body: 500) as down:
        options = json.dumps({"base_url": down.base_url, "max_retries": 0})
        code = main(["sid", "--data", str(built), "--config", "sid_dev_en", "--out", str(tmp_path / "s"),
                     "--detector", "audio-llm", "--model", "openai", "--model-path", "m", "--hop", "2000",
                     "--limit", "2", "--option", f"loader_options={options}", "--quiet"])
    assert code == 1 and "2 of 2 clip(s) have model calls that failed" in _one_error(capsys, "sid")[0]
    assert not (tmp_path / "s").exists()


def test_a_checkpoint_whose_weights_do_not_fit_is_refused_not_filled_with_random_values(tmp_path):
    """A tensor renamed by damage (or a checkpoint of another model) would be newly initialised by
    transformers, and every answer of the run would come from random weights."""
    import struct

    from ihbench.loaders import create
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    weights = model / "model.safetensors"
    data = bytearray(weights.read_bytes())
    header = struct.unpack("<Q", bytes(data[:8]))[0]
    text = data[8:8 + header].decode()
    name = "model.audio_tower.conv1.bias" if "model.audio_tower.conv1.bias" in text else \
        next(key for key in json.loads(text) if key != "__metadata__")
    renamed = name[:-4] + "xxxx"
    data[8:8 + header] = text.replace(f'"{name}"', f'"{renamed}"', 1).encode()
    weights.write_bytes(bytes(data))
    with pytest.raises(ModelFolderError, match=r"the weights do not fit Qwen2AudioForConditionalGeneration \(1 "
                                               r"tensor\(s\) missing"):
        create("qwen2-audio", str(model))


@pytest.mark.parametrize("family, loader, expected", [
    ("qwen2-text", "qwen2-audio", "model_type 'qwen2' is not a qwen2-audio checkpoint (expected qwen2_audio)"),
    ("qwen2-audio", "voxtral", "model_type 'qwen2_audio' is not a voxtral checkpoint (expected voxtral)"),
])
def test_a_checkpoint_of_another_family_is_refused_by_its_config(family, loader, expected, tmp_path):
    from ihbench.loaders import create
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model(family, tmp_path / family)
    with pytest.raises(ModelFolderError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        create(loader, str(model))


def test_the_old_phi4_format_says_which_revision_to_use(tmp_path):
    from ihbench.loaders import create
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("phi4-multimodal", tmp_path / "phi4")
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "model_type": "phi4mm"}))
    with pytest.raises(ModelFolderError, match=r"old remote-code format.*--option revision=refs/pr/70"):
        create("phi4-multimodal", str(model))


def test_report_scores_with_quiet_warns_of_an_unfinished_run_and_refuses_a_run_twice(official, tmp_path, capsys):
    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "r", up) == 0
    responses = tmp_path / "r" / "responses.jsonl"
    responses.write_text(responses.read_text().splitlines()[0] + "\n")  # as a run killed after one answer
    assert main(["report", str(tmp_path / "r"), "--quiet", "--n-bootstrap", "10"]) == 0
    captured = capsys.readouterr()
    assert "is unfinished: 1 of 2 planned response(s) are in it" in captured.err
    assert "no TF judgments" in captured.out  # the result line, --quiet or not
    assert main(["report", str(tmp_path / "r"), str(tmp_path / "r" / ".." / "r"), "--quiet"]) == 2
    assert "given twice" in _one_error(capsys, "report")[0]


def test_a_name_listed_twice_is_taken_once():
    from ihbench.dataset.argtypes import names, whole_numbers

    assert names(("tf", "rq"))("tf,tf") == ["tf"] and whole_numbers()("3,1,3") == [3, 1]


def test_turns_refuses_a_file_whose_name_would_climb_out_of_out(tmp_path, capsys):
    import numpy as np
    import soundfile

    (tmp_path / "t").mkdir()
    soundfile.write(str(tmp_path / "t" / "...wav"), np.zeros((16000, 2), np.float32), 16000, format="WAV")
    code = main(["turns", str(tmp_path / "t" / "...wav"), "--out", str(tmp_path / "t" / "out"), "--quiet"])
    assert code == 2 and "which cannot name its output folder" in _one_error(capsys, "turns")[0]
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["...wav"]


def test_a_missing_responses_file_is_named_not_blamed_on_the_judgments(official, tmp_path, capsys):
    from judging import ScriptedJudge

    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "r", up) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(tmp_path / "r"), "--judge-model", "j", "--judge-base-url", judge.base_url,
                     "--cache", str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    (tmp_path / "r" / "responses.jsonl").unlink()
    assert main(["report", str(tmp_path / "r"), "--quiet"]) == 2
    error = _one_error(capsys, "report")[0]
    assert "responses.jsonl: missing" in error and "another run" not in error
    (tmp_path / "empty").mkdir()
    assert main(["space", "--data", str(tmp_path / "empty")]) == 2
    assert "an empty folder, not a dataset" in _one_error(capsys, "space")[0]


def test_a_local_judge_that_is_not_a_text_model_is_refused_in_one_line(tmp_path):
    from ihbench.llm import TransformersLLM
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    with pytest.raises(ModelFolderError, match="model_type 'qwen2_audio' .* is not a text model"):
        TransformersLLM(str(model))


def _text_config_edit(**fields):
    def edit(model):
        config = json.loads((model / "config.json").read_text())
        (model / "config.json").write_text(json.dumps({**config, **fields}))
    return edit


@pytest.mark.parametrize("damage, message", [
    (_text_config_edit(hidden_size=8), "transformers cannot build AutoModelForCausalLM from this folder's config.json "
                                       "and weights (tensors in the weights have other sizes"),
    (_text_config_edit(num_hidden_layers=0, layer_types=[]), "tensor(s) in the weights have no place in "
                                                             "AutoModelForCausalLM as config.json describes it"),
    (_text_config_edit(num_attention_heads=0), "(ZeroDivisionError: integer division or modulo by zero)"),
    (_text_config_edit(num_hidden_layers=3), "config.json: transformers cannot read it as a model's config "
                                             "(ValueError: `num_hidden_layers` (3) must be equal to the number of"),
    (lambda model: (model / "chat_template.jinja").write_text("{% if %}"),
     "the model fails on a one-token probe before any request (TemplateSyntaxError: "),
    # battery 46, S4: these judged, every judgment a judge_error "asked again" that never could succeed
    (_text_config_edit(rope_parameters={"rope_theta": 0.0, "rope_type": "default"}),
     "the model's scores for a one-token probe are not numbers (NaN or infinite logits)"),
    (_text_config_edit(rms_norm_eps=float("nan")), "the model's scores for a one-token probe are not numbers"),
    (_text_config_edit(max_position_embeddings=1), "the model's context of 1 tokens cannot hold a greeting and a "
                                                   "token of answer: config.json's max_position_embeddings is edited"),
])
def test_a_local_judge_whose_files_disagree_is_refused_in_one_line(damage, message, tmp_path):
    """The local judge and generator loaded a text model with none of the audio loaders' checks: a
    config.json edited against its weights was a traceback, or (fewer layers) answered with weights
    unused; a broken chat template failed on the first request."""
    from ihbench.llm import TransformersLLM
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-text", tmp_path / "tiny")
    damage(model)
    with pytest.raises(ModelFolderError) as refused:
        TransformersLLM(str(model))
    assert message in str(refused.value) and len(str(refused.value).splitlines()) == 1, refused.value


@pytest.mark.parametrize("damage, message", [
    (lambda model: [(model / name).unlink() for name in ("tokenizer.json", "tokenizer_config.json")],
     "the tokenizer has no <|AUDIO|> token"),
    (lambda model: (model / "tokenizer.json").write_text('{"version": "1.0"}'),
     "the processor or tokenizer cannot be loaded"),  # not JSON at all: test_battery_round3
])
def test_damaged_tokenizer_files_are_one_line_at_load(damage, message, tmp_path):
    from ihbench.loaders import create
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    damage(model)
    with pytest.raises(ModelFolderError, match=message.replace("|", r"\|")):
        create("qwen2-audio", str(model))


def test_space_names_a_bad_host_or_a_port_in_use(official, capsys):
    import socket

    assert main(["space", "--data", str(official), "--host", "999.1.1.1"]) == 2
    assert "--host: '999.1.1.1' is not an address" in _one_error(capsys, "space")[0]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["space", "--data", str(official), "--port", str(port)]) == 2
    assert f"--port: {port} is in use on 127.0.0.1" in _one_error(capsys, "space")[0]


def test_turns_into_its_own_folder_again_leaves_no_earlier_recording(tmp_path):
    from turns_synth import write_short_call

    for name in ("first", "second"):
        write_short_call(tmp_path / f"{name}.wav")
    out = tmp_path / "T"
    assert main(["turns", str(tmp_path / "first.wav"), "--out", str(out), "--quiet"]) == 0
    (out / "notes").mkdir()
    (out / "notes" / "mine.txt").write_text("kept")
    assert main(["turns", str(tmp_path / "second.wav"), "--out", str(out), "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["notes", "second"]


def test_a_staging_folder_may_be_staged_into_again_after_a_dry_run(tmp_path, capsys):
    staged = tmp_path / "pm"
    assert main(["publish-metrics", "fir", "--namespace", "me", "--dry-run", "--staging-dir", str(staged),
                 "--quiet"]) == 0
    assert main(["publish-metrics", "fir", "--namespace", "me", "--dry-run", "--staging-dir", str(staged),
                 "--quiet"]) == 0
    assert (staged / "fir" / "app.py").is_file()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("x")
    assert main(["publish-metrics", "fir", "--namespace", "me", "--dry-run", "--staging-dir", str(mine),
                 "--quiet"]) == 2
    assert "is not empty" in _one_error(capsys, "publish-metrics")[0]


def test_answers_of_epochs_a_rerun_dropped_are_not_scored(official, tmp_path, capsys):
    with OpenAITestServer() as up:
        assert _run(official, tmp_path / "r", up, "--epochs", "2") == 0
        assert _run(official, tmp_path / "r", up, "--epochs", "1") == 0
    assert main(["report", str(tmp_path / "r"), "--quiet", "--n-bootstrap", "10"]) == 0
    assert "2 response(s) of epochs beyond the run's --epochs 1" in capsys.readouterr().err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["runs"][0]["n_responses"] == 2
