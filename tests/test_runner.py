"""`ihbench run`: conversation layout, the OpenAI-compatible loader over real HTTP (local test
double), resumable run directories, crash safety, failures recorded per item."""
import base64
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import soundfile
from ihbench.dataset import load_items
from ihbench.loaders import ModelNotFoundError, resolve_model_path
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer, Reply

from ihbench.dataset.io import read_records
from ihbench.protocol import build_model_input
from ihbench.records import RECORD_FORMAT
from ihbench.runner import RunConfigError, RunSpec, run
from ihbench.seeds import record_seed


@pytest.fixture
def official(tmp_path):
    return write_official_layout(tmp_path / "official")


@pytest.fixture
def server():
    with OpenAITestServer() as test_server:
        yield test_server


def _spec(data, out, server, **overrides):
    values = dict(loader="openai", model_path="test-model", data=str(data), out=out, epochs=2,
                  loader_options={"base_url": server.base_url, "concurrency": 2, "max_retries": 0})
    values.update(overrides)
    return RunSpec(**values)


def test_conversation_layout_puts_the_delivered_part_before_the_interruption(official):
    item = load_items(official)[2]  # conv-b turn 4, filler
    conversation = build_model_input(item, "audio")
    roles = [t.role for t in conversation.turns]
    assert roles == ["system"] + ["assistant", "user"] * 3 + ["assistant", "user"]
    assert conversation.turns[0].text == item.system_prompt
    assert conversation.turns[-2].text == "The next flight leaves at"  # delivered, never the plan
    assert all(t.audio is not None and t.text is None for t in conversation.turns if t.role == "user")
    assert conversation.turns[1].text == "Welcome. Before we start, could you"
    text = build_model_input(item, "text")
    assert [t.text for t in text.turns if t.role == "user"][-1] == "Mm-hm."
    assert all(t.audio is None for t in text.turns)


def test_openai_requests_carry_well_formed_input_audio(official, server, tmp_path):
    run(_spec(official, tmp_path / "run", server, epochs=1, limit=1, types=["filler"]), progress=False)
    (request,) = server.requests
    assert request["model"] == "test-model" and request["max_tokens"] == 256 and request["temperature"] == 0
    messages = request["messages"]
    assert [m["role"] for m in messages] == ["system"] + ["assistant", "user"] * 4
    audio_parts = [m["content"][0] for m in messages if m["role"] == "user"]
    assert all(part["type"] == "input_audio" and part["input_audio"]["format"] == "wav" for part in audio_parts)
    samples, rate = soundfile.read(io.BytesIO(base64.b64decode(audio_parts[-1]["input_audio"]["data"])))
    assert rate == 16000 and samples.ndim == 1 and len(samples) > 8000
    assert messages[-2] == {"role": "assistant", "content": "The next flight leaves at"}


def test_text_mode_sends_no_audio(official, server, tmp_path):
    run(_spec(official, tmp_path / "run", server, epochs=1, modality="text"), progress=False)
    assert len(server.requests) == 3
    for request in server.requests:
        assert all(isinstance(m["content"], str) for m in request["messages"])
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": "Mm-hm."}


def test_a_run_writes_items_times_epochs_and_resumes_without_duplicates(official, server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-for-test")
    out = tmp_path / "run"
    first = run(_spec(official, out, server, limit=2), progress=False)
    assert (first.planned, first.written, first.skipped, first.errors) == (4, 4, 0, 0)
    again = run(_spec(official, out, server, limit=2), progress=False)
    assert (again.written, again.skipped) == (0, 4) and len(server.requests) == 4
    more = run(_spec(official, out, server, limit=3, epochs=3), progress=False)  # extend: only the new work
    assert (more.planned, more.written) == (9, 5)
    records = read_records(out / "responses.jsonl")
    assert sorted((r["id"], r["epoch"]) for r in records) == sorted(
        (i, e) for i in ("conv-a/2", "conv-b/1", "conv-b/4") for e in range(3))
    assert all(r["seed"] == record_seed(0, r["id"], r["epoch"]) for r in records)
    assert all(r["response"].startswith("heard ") and r["error"] is None for r in records)
    info = json.loads((out / "run.json").read_text())
    for key in ("loader", "model", "data", "data_fingerprint", "generation", "versions", "command", "modality"):
        assert key in info
    assert info["model"]["base_url"] == server.base_url and "sk-secret" not in json.dumps(info)


def test_a_run_asked_to_stop_starts_no_other_batch_and_the_same_run_goes_on(official, server, tmp_path):
    """The Space's Stop button (battery 46, S7): `stop` ends the run between batches, as an unfinished run."""
    import threading

    stop = threading.Event()
    spec = _spec(official, tmp_path / "run", server, epochs=1,
                 loader_options={"base_url": server.base_url, "concurrency": 1, "max_retries": 0})
    first = run(spec, progress=False, on_record=lambda record: stop.set(), stop=stop)
    assert first.stopped and first.written == 1 and first.planned == 3 and len(server.requests) == 1
    rest = run(spec, progress=False)
    assert not rest.stopped and rest.skipped == 1 and rest.written == 2
    assert len(read_records(tmp_path / "run" / "responses.jsonl")) == 3


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_run_asked_to_stop_retries_nothing_and_sends_nothing_new(concurrency, official, tmp_path):
    """Battery 49, V5: after the Space's Stop, the requests in flight were retried for minutes against a
    failing server. Once stopped, a failure is final (a failed item: a rerun asks it again) and a
    request not yet sent is not sent (no record: it was never asked)."""
    import threading

    stop = threading.Event()

    def failing(request):
        stop.set()  # Stop pressed while the first request is in flight, and the server then fails it
        return 503

    with OpenAITestServer(fail_when=failing) as failing_server:
        spec = _spec(official, tmp_path / "run", failing_server, epochs=1,
                     loader_options={"base_url": failing_server.base_url, "concurrency": concurrency,
                                     "max_retries": 3})
        summary = run(spec, progress=False, stop=stop)
        asked = len(failing_server.requests)
    # each request in flight when Stop came was sent once; the rest of its batch (if any) not at all
    assert summary.stopped and 1 <= asked <= concurrency and summary.written == summary.errors == asked
    records = read_records(tmp_path / "run" / "responses.jsonl")
    assert len(records) == asked and all("HTTP 503" in record["error"] for record in records)


def test_a_retry_waiting_when_stop_comes_is_not_sent():
    """Stop pressed during a retry's wait (up to 30 s): the request is not sent again."""
    import threading

    from ihbench.loaders.retry import TransportError, retry_sync

    stop, calls = threading.Event(), []

    def call():
        calls.append(1)
        raise TransportError("HTTP 503: busy", retryable=True)

    with pytest.raises(TransportError, match="HTTP 503") as failed:
        retry_sync(call, attempts=4, sleep=lambda seconds: stop.set(), stopped=stop.is_set)
    assert len(calls) == 1 and failed.value.attempts == 1


def test_a_resume_against_another_server_is_refused_even_where_its_address_was_partly_hidden(official, server,
                                                                                              tmp_path):
    """Battery 50, W11: two deployments whose names were taken for keys read alike in run.json
    (`.../deployments/<redacted>`), and a resume against the other one mixed two models' answers in a run."""
    first, second = "eed6e4cbd825a5ec40be6d0a5a8b2898", "6b13214aab63c4c1b3d531ea305b5a18"
    at = {name: server.base_url.replace("/v1", f"/deployments/{name}/v1") for name in (first, second)}
    run(_spec(official, tmp_path / "run", server, epochs=1, limit=1, loader_options={"base_url": at[first]}),
        progress=False)
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert first not in json.dumps(info) and len(info["endpoint_digest"]) == 16
    with pytest.raises(RunConfigError, match="endpoint is .* now \\(they read alike with what looks like a key "
                                             "hidden; as given they differ\\)"):
        run(_spec(official, tmp_path / "run", server, epochs=1, limit=2, loader_options={"base_url": at[second]}),
            progress=False)
    resumed = run(_spec(official, tmp_path / "run", server, epochs=1, limit=2, loader_options={"base_url": at[first]}),
                  progress=False)
    assert resumed.skipped == 1 and resumed.written == 1
    del info["endpoint_digest"]  # a run.json of an earlier version: compared by its recorded address, as it was
    (tmp_path / "run" / "run.json").write_text(json.dumps(info))
    assert run(_spec(official, tmp_path / "run", server, epochs=1, limit=2, loader_options={"base_url": at[first]}),
               progress=False).skipped == 2


def test_a_run_resumed_with_fewer_epochs_says_what_it_leaves_out(official, server, tmp_path, caplog):
    """Battery 47, T8: `--epochs 1` on a run of 2 rewrote run.json without a word, and judge and report then
    left epoch 2 out with a warning --quiet hides."""
    run(_spec(official, tmp_path / "run", server, epochs=2, limit=1), progress=False)
    with caplog.at_level("WARNING", logger="ihbench"):
        summary = run(_spec(official, tmp_path / "run", server, epochs=1, limit=1), progress=False)
    assert summary.written == 0 and summary.skipped == 1
    assert "1 response(s) of the later epochs it had (2) are beyond --epochs 1: kept in the file, and left out by " \
           "judge and report while the run has 1 epoch(s)" in caplog.text


def test_resuming_with_different_settings_is_refused(official, server, tmp_path):
    out = tmp_path / "run"
    run(_spec(official, out, server, epochs=1, limit=1), progress=False)
    with pytest.raises(RunConfigError, match="modality is 'audio' there but 'text' now"):
        run(_spec(official, out, server, epochs=1, limit=1, modality="text"), progress=False)
    # a setting inside a group is named itself (battery 30: the whole dict was printed twice)
    with pytest.raises(RunConfigError, match=r"generation\.temperature is 0\.0 there but 0\.7 now"):
        run(_spec(official, out, server, epochs=1, limit=1, generation={"temperature": 0.7}), progress=False)


def test_a_setting_deleted_from_a_group_is_named_as_missing():
    """Battery 33, C1 (P2): `convbench.only_turns` deleted from run.json (None in the run's identity) ended
    `ihbench run` in a StopIteration traceback: no key's .get() differed, though the groups did."""
    from ihbench.runner import first_difference

    name, there, here = first_difference("convbench", {"rehydrate": False}, {"rehydrate": False, "only_turns": None})
    assert (name, repr(there), here) == ("convbench.only_turns", "missing", None)
    assert first_difference("generation", {"top_p": 1.0}, {"top_p": 0.9}) == ("generation.top_p", 1.0, 0.9)


def test_a_failing_item_is_recorded_and_the_run_goes_on(official, tmp_path):
    def fail_on_correction(body):
        last = body["messages"][-2]["content"]
        return 500 if last.startswith("Thanks. The Unlimited Plus") else None

    with OpenAITestServer(fail_when=fail_on_correction) as failing:
        summary = run(_spec(official, tmp_path / "run", failing, epochs=1), progress=False)
    records = {r["id"]: r for r in read_records(tmp_path / "run" / "responses.jsonl")}
    assert summary.errors == 1 and len(records) == 3
    assert records["conv-a/2"]["response"] is None and "500" in records["conv-a/2"]["error"]
    assert records["conv-b/1"]["error"] is None


@pytest.mark.parametrize("content, said", [
    ([{"type": "text", "text": "Sure, "}, {"type": "text", "text": "one moment."}], None),
    (42, "MalformedReplyError: the server's answer is of type int, not text: '42'"),
    ({"text": "an object"}, "MalformedReplyError: the server's answer is of type dict, not text"),
    ([{"type": "image"}, 7], "MalformedReplyError: the server's answer is a list of parts that are not text"),
], ids=["parts", "number", "object", "odd parts"])
def test_an_answer_whose_content_is_no_text_fails_its_item_only(content, said, official, tmp_path):
    """Battery 48, U4: a server whose message.content was a list, a number or an object ended the run in a
    traceback, and the good answers of the same batch were lost. Parts of text are the answer; anything
    else fails that item (retried by the next run, never scored)."""
    def respond(body):
        asked = body["messages"][-2]["content"].startswith("Thanks. The Unlimited")
        return Reply(content=content) if asked else Reply(content="Of course.")

    with OpenAITestServer(respond=respond) as server:
        summary = run(_spec(official, tmp_path / "run", server, epochs=1), progress=False)
    records = {r["id"]: r for r in read_records(tmp_path / "run" / "responses.jsonl")}
    assert len(records) == 3 and summary.errors == (0 if said is None else 1)
    if said is None:
        assert records["conv-a/2"]["response"] == "Sure, one moment." and records["conv-a/2"]["error"] is None
    else:
        assert records["conv-a/2"]["response"] is None and said in records["conv-a/2"]["error"]
    assert all(records[key]["error"] is None for key in records if key != "conv-a/2")


def test_empty_audio_is_an_error_record_not_a_crash(official, server, tmp_path):
    import numpy as np
    from ihbench.dataset.audio import encode_wav
    from ihbench.dataset.schema import AudioClip, Utterance

    items = load_items(official)
    silent = Utterance(items[0].interruption.transcript, AudioClip(bytes=encode_wav(np.zeros(1600))))
    items[0] = type(items[0])(**{**items[0].__dict__, "interruption": silent})
    summary = run(_spec(official, tmp_path / "run", server, epochs=1), items=items, progress=False)
    records = {r["id"]: r for r in read_records(tmp_path / "run" / "responses.jsonl")}
    assert summary.errors == 1 and "EmptyAudioError" in records["conv-a/2"]["error"]


@pytest.mark.slow  # more than 10 s: a run killed, then run again, in fresh processes
def test_kill_9_mid_run_then_the_same_command_completes_exactly_once(official, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer(delay=0.3) as slow:
        command = [sys.executable, "-m", "ihbench.cli", "run", "--model", "openai", "--model-path", "test-model",
                   "--data", str(official), "--epochs", "4", "--out", str(out), "--base-url", slow.base_url,
                   "--concurrency", "1", "--quiet", "--option", "max_retries=0"]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        responses = out / "responses.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline and (not responses.exists() or responses.read_text().count("\n") < 3):
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        with open(responses, "ab") as handle:  # what a crash inside write() leaves: half a line
            handle.write(b'{"id": "conv-b/4", "epoch": 3, "resp')
        finished = subprocess.run(command, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    lines = responses.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line parses: the torn one was repaired
    keys = [(r["id"], r["epoch"]) for r in records]
    assert len(keys) == 3 * 4 and len(set(keys)) == 12


def test_a_missing_model_path_or_uncached_hub_id_fails_at_once(tmp_path):
    with pytest.raises(ModelNotFoundError, match="nope: no such model directory"):
        resolve_model_path(str(tmp_path / "nope"))
    with pytest.raises(ModelNotFoundError, match="Qwen/Qwen2-Audio-7B-Instruct: HF_HUB_OFFLINE is set"):
        resolve_model_path("Qwen/Qwen2-Audio-7B-Instruct")
    # a battery's nit: links looping, or pointing at nothing, were "no such model directory"
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "gone").symlink_to(tmp_path / "moved")
    with pytest.raises(ModelNotFoundError, match=r"a: a symlink loop: its links point at each other$"):
        resolve_model_path(str(tmp_path / "a"))
    with pytest.raises(ModelNotFoundError, match=r"gone: a symlink to .*moved, which does not exist$"):
        resolve_model_path(str(tmp_path / "gone"))


def test_models_command_lists_every_loader_how_it_runs_and_whether_it_is_installed():
    from ihbench.loaders import available

    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "models"], capture_output=True, text=True)
    assert result.returncode == 0
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:] if line.strip()}
    assert set(available()) <= set(lines)
    assert "yes" in lines["qwen2-audio"] and "transformers" in lines["qwen2-audio"]
    assert "no: kimia_infer" in lines["kimi-audio"] and "own package" in lines["kimi-audio"]
    assert "server" in lines["openai"] and "yes" in lines["openai"]


def test_the_in_house_build_runs_end_to_end(built, server, tmp_path):
    summary = run(_spec(built, tmp_path / "run", server, epochs=1, types=["filler", "pushback"]), progress=False)
    records = read_records(tmp_path / "run" / "responses.jsonl")
    assert summary.errors == 0 and len(records) == summary.planned > 0
    assert {r["interruption_type"] for r in records} <= {"filler", "pushback"}


class RecordingKimiApi:
    """Stand-in for kimia_infer's KimiAudio (GPU only): records the messages it is given."""

    def __init__(self):
        self.calls = []

    def generate(self, messages, **kwargs):
        self.calls.append(([dict(m) for m in messages], kwargs,
                           [open(m["content"], "rb").read()[:4] for m in messages if m["message_type"] == "audio"]))
        return None, "kimi says hi"


def test_kimi_audio_messages(official):
    from ihbench.loaders import GenerationConfig
    from ihbench.loaders.kimi_audio import KimiAudioLoader

    api = RecordingKimiApi()
    loader = KimiAudioLoader("moonshotai/Kimi-Audio-7B-Instruct", api=api)
    item = load_items(official)[2]
    response = loader.generate(build_model_input(item, "audio"), GenerationConfig(max_new_tokens=64), seed=1)
    assert response.text == "kimi says hi" and response.error is None
    messages, kwargs, headers = api.calls[0]
    assert messages[0] == {"role": "user", "message_type": "text", "content": item.system_prompt}
    assert [m["role"] for m in messages[1:]] == ["assistant", "user"] * 4
    assert all(m["message_type"] == "audio" and m["content"].endswith(".wav") for m in messages[2::2])
    assert messages[-2] == {"role": "assistant", "message_type": "text", "content": "The next flight leaves at"}
    assert all(h == b"RIFF" for h in headers) and kwargs["output_type"] == "text"
    assert kwargs["text_temperature"] == 0.0
    with pytest.raises(ValueError, match="does not take text input"):
        loader.check_modality("text")


def test_the_openai_loader_retries_a_429_by_the_shared_policy_honouring_retry_after(official, tmp_path):
    """One policy for loader and judge (loaders.retry): a 429 with Retry-After is waited out and
    retried; a 400 is final at once."""

    seen = []

    def flaky(body):
        seen.append(time.monotonic())
        return Reply(status=429, headers={"Retry-After": "0.3"}) if len(seen) == 1 else Reply(content="fine")
    with OpenAITestServer(respond=flaky) as server:
        summary = run(_spec(official, tmp_path / "run", server, epochs=1, limit=1,
                            loader_options={"base_url": server.base_url, "max_retries": 2}), progress=False)
    assert summary.errors == 0 and len(seen) == 2 and seen[1] - seen[0] >= 0.3
    assert read_records(tmp_path / "run" / "responses.jsonl")[0]["response"] == "fine"
    with OpenAITestServer(fail_when=lambda body: 400) as refusing:
        run(_spec(official, tmp_path / "final", refusing, epochs=1, limit=1,
                  loader_options={"base_url": refusing.base_url, "max_retries": 3}), progress=False)
        assert len(refusing.requests) == 1
    assert "HTTP 400" in read_records(tmp_path / "final" / "responses.jsonl")[0]["error"]


@pytest.mark.slow  # more than 10 s: a fresh `ihbench run` process, then retries off a dead server
def test_requests_spread_over_several_servers_and_a_dead_one_loses_nothing(official, tmp_path):
    """`--base-url` given twice: both servers answer; with one of them dead, every record still
    arrives (its attempts move to the live server)."""
    import socket

    with OpenAITestServer() as first, OpenAITestServer() as second:
        command = [sys.executable, "-m", "ihbench.cli", "run", "--model", "openai", "--model-path", "m", "--data",
                   str(official), "--epochs", "4", "--out", str(tmp_path / "both"), "--base-url", first.base_url,
                   "--base-url", second.base_url, "--concurrency", "2", "--quiet"]
        assert subprocess.run(command, capture_output=True, text=True).returncode == 0
        assert len(first.requests) > 0 and len(second.requests) > 0
        assert len(first.requests) + len(second.requests) == 12
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with OpenAITestServer() as alive:
        summary = run(_spec(official, tmp_path / "half", alive, epochs=4,
                            loader_options={"base_url": [dead, alive.base_url], "max_retries": 1}), progress=False)
        assert len(alive.requests) == 12
    records = read_records(tmp_path / "half" / "responses.jsonl")
    assert summary.errors == 0 and len({(r["id"], r["epoch"]) for r in records}) == len(records) == 12
    assert json.loads((tmp_path / "half" / "run.json").read_text())["endpoint"] == [dead, alive.base_url]


@pytest.mark.parametrize("reply,thoughts", [
    (Reply(content="Sure, skipping ahead.", reasoning="She is in a hurry."), "She is in a hurry."),
    (Reply(content="<think>She is in a hurry.</think>Sure, skipping ahead."), "She is in a hurry."),
    (Reply(content="Sure, skipping ahead."), None),
])
def test_a_thinking_model_s_reasoning_is_recorded_apart_and_never_judged(official, tmp_path, reply, thoughts):
    """From vLLM's reasoning parser (`reasoning_content`) or inline <think> tags: the response
    field, which judges read, holds only what the agent says."""
    with OpenAITestServer(respond=lambda body: reply) as server:
        run(_spec(official, tmp_path / "run", server, epochs=1, limit=1), progress=False)
    (record,) = read_records(tmp_path / "run" / "responses.jsonl")
    assert record["response"] == "Sure, skipping ahead."
    assert record.get("reasoning") == thoughts


def _edit_rubric_of_conv_a(root, monkeypatch):
    """The data edited at the same path: conv-a/2's TF rubric changes. The Parquet file gets a new
    name, named exactly in the card, as `ihbench build` does: datasets keys its cache of a local
    folder by the card's configs, so a file rewritten under a glob is served from the old cache."""
    import copy

    import official_layout

    edited = copy.deepcopy(official_layout.CONVERSATIONS)
    edited[0]["turns"][1]["turn_2_tf_rubric"] = "Use 555-0143, confirm it back, then give the plan price."
    monkeypatch.setattr(official_layout, "CONVERSATIONS", edited)
    write_official_layout(root)
    parquet = root / "conversations" / "test-00000-of-00001.parquet"
    parquet.rename(parquet.with_name("test-00000-of-00001-edited.parquet"))
    card = root / "README.md"
    card.write_text(card.read_text().replace("path: conversations/test-*",
                                             "path: conversations/test-00000-of-00001-edited.parquet"))


def test_a_resume_on_data_grown_at_the_same_path_says_how_many_points_it_adds(official, server, tmp_path,
                                                                                monkeypatch, caplog):
    """Battery 27, W2: a run resumed on its dataset rebuilt at the same path with more conversations grew from
    10 to 260 points with no word; it is said once (run.json then records the new count)."""
    import copy

    import official_layout

    out = tmp_path / "run"
    run(_spec(official, out, server, epochs=1), progress=False)
    before = json.loads((out / "run.json").read_text())["n_items"]
    grown = copy.deepcopy(official_layout.CONVERSATIONS)
    extra = copy.deepcopy(grown[0])
    extra["conversation_id"] = "conv-z"
    monkeypatch.setattr(official_layout, "CONVERSATIONS", [*grown, extra])
    _edit_rubric_of_conv_a(official, monkeypatch)  # rewrites the layout (now with conv-z) under a new file name
    with caplog.at_level("WARNING", logger="ihbench"):
        resumed = run(_spec(official, out, server, epochs=1), progress=False)
    added = resumed.planned - before
    assert added > 0 and f"now holds {resumed.planned} point(s), {added} more than when the run started" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="ihbench"):
        run(_spec(official, out, server, epochs=1), progress=False)
    assert "more than when the run started" not in caplog.text


def test_a_resume_after_the_data_changed_answers_the_changed_items_again(official, server, tmp_path, monkeypatch,
                                                                         caplog):
    """Issue 22.1: run one item, edit the data at the same path, resume without --limit. The
    changed item is answered again (its old record stays, superseded), the user is told how many
    changed, and judge/report read one current answer per (item, epoch)."""
    from ihbench.rundir import RunDir

    out = tmp_path / "run"
    run(_spec(official, out, server, epochs=1, limit=1), progress=False)
    first = read_records(out / "responses.jsonl")
    assert [r["id"] for r in first] == ["conv-a/2"] and first[0]["format_version"] == RECORD_FORMAT and first[0]["item_hash"]

    _edit_rubric_of_conv_a(official, monkeypatch)
    with caplog.at_level("WARNING", logger="ihbench"):
        resumed = run(_spec(official, out, server, epochs=1), progress=False)
    assert (resumed.planned, resumed.written, resumed.skipped) == (3, 3, 0)
    assert "1 item(s) changed in the data since they were answered (e.g. conv-a/2)" in caplog.text

    records = read_records(out / "responses.jsonl")
    assert [r["id"] for r in records].count("conv-a/2") == 2 and records[0]["item_hash"] != records[1]["item_hash"]
    info, responses, items = RunDir(out).load()
    assert sorted(r.id for r in responses) == ["conv-a/2", "conv-b/1", "conv-b/4"]
    assert all(r.item_hash == items[r.id].content_hash for r in responses)
    again = run(_spec(official, out, server, epochs=1), progress=False)
    assert (again.written, again.skipped) == (0, 3)


def test_readers_refuse_answers_to_an_earlier_version_of_the_data(official, server, tmp_path, monkeypatch):
    from ihbench.rundir import RunDir, RunDirError

    out = tmp_path / "run"
    run(_spec(official, out, server, epochs=2), progress=False)
    _edit_rubric_of_conv_a(official, monkeypatch)
    with pytest.raises(RunDirError, match=r"2 response\(s\) answer an earlier version of 1 item\(s\) .*conv-a/2\): "
                                          r"the data changed at the same path since they were written\. "
                                          r"Run `ihbench run` again"):
        RunDir(out).load()
    # given as another folder (set-baseline --data a copy): not "at the same path" (battery 23 nit)
    from ihbench.dataset import load_items

    items = {item.id: item for item in load_items(str(official))}
    with pytest.raises(RunDirError, match=r"conv-a/2\): it is not the data the run answered \(.*\), or that data "
                                          r"changed since\."):
        RunDir(out).current(RunDir(out).responses(), items, str(tmp_path / "a-copy"))


def _as_begun_before_record_formats(out):
    """run.json as versions before `record_format` wrote it (their records may be of any older format)."""
    info = json.loads((out / "run.json").read_text())
    info.pop("record_format")
    (out / "run.json").write_text(json.dumps(info))


def test_a_judgment_of_a_replaced_answer_is_left_out(official, server, tmp_path, monkeypatch, caplog):
    from ihbench.rundir import RunDir

    out = tmp_path / "run"
    run(_spec(official, out, server, epochs=1), progress=False)
    _, responses, _ = RunDir(out).load()
    judgments = [{"format_version": 2, "item_hash": r.item_hash, "id": r.id, "epoch": 0, "axis": "tf",
                  "judge_model": "j", "outcome": "judged", "verdict": "model"} for r in responses]
    (out / "judgments.jsonl").write_text("".join(json.dumps(j) + "\n" for j in judgments))
    _as_begun_before_record_formats(out)  # an older version's judgments, of an older version's run
    _edit_rubric_of_conv_a(official, monkeypatch)
    run(_spec(official, out, server, epochs=1), progress=False)
    _, responses, _ = RunDir(out).load()
    with caplog.at_level("WARNING", logger="ihbench"):
        kept = RunDir(out).judgments(responses=responses)
    assert sorted(j.id for j in kept) == ["conv-b/1", "conv-b/4"]
    assert ("1 judgment(s) of other answers than this run's (answers since replaced, items that failed, or judgments "
            "copied from another run) are left out") in caplog.text


def test_a_run_folder_written_before_records_were_stamped_still_reads(official, server, tmp_path):
    """Format-1 records (no format_version, no item_hash), as every earlier version wrote them."""
    from ihbench.rundir import RunDir

    out = tmp_path / "run"
    run(_spec(official, out, server, epochs=1), progress=False)
    path = out / "responses.jsonl"
    old = [{k: v for k, v in r.items() if k not in ("format_version", "item_hash")} for r in read_records(path)]
    path.write_text("".join(json.dumps(r) + "\n" for r in old))
    _as_begun_before_record_formats(out)
    _, responses, _ = RunDir(out).load()
    assert len(responses) == 3
    assert run(_spec(official, out, server, epochs=1), progress=False).skipped == 3


def _judge(run_dir, respond=None):
    import asyncio

    from judging import ScriptedJudge

    from ihbench.judge import judge_run
    from ihbench.llm import LLMCache, OpenAICompatibleLLM

    with OpenAITestServer(respond=respond or ScriptedJudge(faults=False)) as judge:
        async def go():
            llm = OpenAICompatibleLLM("judge-x", base_url=judge.base_url)
            try:
                return await judge_run(run_dir, llm, cache=LLMCache(run_dir.parent / "cache.sqlite"), progress=False)
            finally:
                await llm.close()

        return asyncio.run(go()), judge.requests


def test_a_failed_item_is_retried_by_the_next_run_and_never_scored(official, tmp_path, caplog, capsys):
    """Issue 23.1: a server that is down makes every item an error; the judge has nothing to judge
    (no loss is recorded), and the rerun after the server is back answers them."""
    from ihbench.report import summarize
    from ihbench.rundir import RunDir

    out = tmp_path / "run"
    with OpenAITestServer(fail_when=lambda body: 500) as down:
        first = run(_spec(official, out, down, epochs=1, loader_options={"base_url": down.base_url,
                                                                           "max_retries": 0}), progress=False)
    assert (first.planned, first.written, first.errors) == (3, 3, 3)
    summary, requests = _judge(out)
    assert (summary.written, summary.unanswered, len(requests)) == (0, 3, 0)
    assert summarize([out], n_bootstrap=10).runs[0]["tf_win_rate"] is None  # nothing scored, no TF 0.000

    with OpenAITestServer() as up, caplog.at_level("WARNING", logger="ihbench"):
        again = run(_spec(official, out, up, epochs=1, allow_endpoint_change=True), progress=False)
    assert (again.written, again.skipped, again.errors) == (3, 0, 0)
    assert "trying again 3 response(s) that failed before" in caplog.text
    _, responses, _ = RunDir(out).load()
    assert [r.answered for r in responses] == [True] * 3
    # answered after the last judging: not in the scores, and the report says so (battery 3, finding 13)
    assert summarize([out], n_bootstrap=10).runs[0]["not_judged"] == {"tf": 3, "rq": 3}
    from ihbench.cli import main

    capsys.readouterr()
    assert main(["report", str(out), "--n-bootstrap", "10", "--quiet"]) == 0
    assert "3 answer(s) have no judgment yet" in capsys.readouterr().err
    assert "| 3/3 | 0 |" in (out / "report.md").read_text()
    summary, _ = _judge(out)
    assert (summary.written, summary.unanswered) == (6, 0)
    report = summarize([out], n_bootstrap=10).runs[0]
    assert report["generation_errors"] == 0 and report["tf_win_rate"]["n_items"] == 3
    assert report["not_judged"] == {"tf": 0, "rq": 0}


def test_judgments_of_an_error_by_an_older_version_are_not_scored(official, tmp_path):
    """Older versions judged an error as a loss ("the model produced no response"); once the item is
    answered, that verdict is left out and the answer judged."""
    from ihbench.rundir import RunDir

    out = tmp_path / "run"
    with OpenAITestServer(fail_when=lambda body: 500) as down:
        run(_spec(official, out, down, epochs=1, limit=1, loader_options={"base_url": down.base_url,
                                                                           "max_retries": 0}), progress=False)
    loss = {"id": "conv-a/2", "epoch": 0, "axis": "tf", "judge_model": "judge-x", "outcome": "judged",
            "verdict": "baseline", "reason": "the model produced no response"}
    (out / "judgments.jsonl").write_text(json.dumps(loss) + "\n")  # format 1: no stamps
    _, responses, _ = RunDir(out).load()
    assert RunDir(out).judgments(responses=responses) == []
    with OpenAITestServer() as up:
        run(_spec(official, out, up, epochs=1, limit=1, allow_endpoint_change=True), progress=False)
    summary, _ = _judge(out)
    _, responses, _ = RunDir(out).load()
    kept = RunDir(out).judgments(responses=responses)
    assert summary.written == 2 and {j.verdict for j in kept if j.axis == "tf"} == {"model"}
    assert all(j.response_hash == responses[0].digest for j in kept)


def test_a_resume_whose_earlier_answers_are_fine_does_not_say_every_item_failed(official, tmp_path, capsys):
    from ihbench.cli import main

    out = tmp_path / "run"
    with OpenAITestServer() as up:
        run(_spec(official, out, up, epochs=1, limit=2), progress=False)
    with OpenAITestServer(fail_when=lambda body: 500) as down:
        args = ["run", "--model", "openai", "--model-path", "test-model", "--data", str(official), "--out", str(out),
                "--epochs", "1", "--base-url", down.base_url, "--option", "max_retries=0", "--option",
                "concurrency=2", "--allow-endpoint-change", "--quiet"]
        assert main(args) == 1  # incomplete: 2 answered earlier, 1 failed now, and not "every item failed"
    assert "1 of 3 response(s) failed" in capsys.readouterr().err


def test_a_bug_in_a_loader_stops_the_run_with_its_traceback_and_keeps_what_was_written(official, server, tmp_path,
                                                                                        monkeypatch):
    """Issue 22.2: a typo in a loader is not one error string per record. The run stops at the
    bug with its own exception; the records written before it stay valid, and a rerun after the
    fix completes the run without doubling them."""
    from ihbench.loaders.openai_compat import OpenAICompatLoader
    from ihbench.rundir import RunDir

    real, calls = OpenAICompatLoader._generate, []

    def typo(self, conversation, config, seed):
        calls.append(conversation.item_id)
        if len(calls) > 1:
            return {}["choises"]  # the bug
        return real(self, conversation, config, seed)

    monkeypatch.setattr(OpenAICompatLoader, "_generate", typo)
    out = tmp_path / "run"
    with pytest.raises(KeyError, match="choises"):
        run(_spec(official, out, server, epochs=1, loader_options={"base_url": server.base_url, "concurrency": 1}),
            progress=False)
    assert [r.id for r in RunDir(out).responses()] == ["conv-a/2"]
    monkeypatch.setattr(OpenAICompatLoader, "_generate", real)
    resumed = run(_spec(official, out, server, epochs=1, loader_options={"base_url": server.base_url,
                                                                           "concurrency": 1}), progress=False)
    assert (resumed.written, resumed.skipped, resumed.errors) == (2, 1, 0)


def test_kimi_audio_says_in_one_line_what_its_own_environment_needs():
    from ihbench.dataset.errors import MissingDependencyError
    from ihbench.loaders.kimi_audio import KimiAudioLoader, environment_problem

    with pytest.raises(MissingDependencyError, match=r"^--model kimi-audio: kimia_infer and flash_attn are not "
                                                     r"installed here; Kimi-Audio needs an environment of its own: "
                                                     r"transformers 4.4x, flash-attn, a CUDA GPU"):
        KimiAudioLoader("moonshotai/Kimi-Audio-7B-Instruct")
    both = {"kimia_infer", "flash_attn"}
    assert environment_problem({"kimia_infer"}, "4.48.3", True) == "flash_attn is not installed here"
    assert "transformers 5.24.0 is installed here, and Kimi-Audio's remote code targets transformers 4.4x" == \
        environment_problem(both, "5.24.0", True)
    assert environment_problem(both, "4.48.3", False).startswith("there is no CUDA GPU here")
    assert environment_problem(both, "4.48.3", True) is None
