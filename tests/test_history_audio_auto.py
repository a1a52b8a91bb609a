"""`--history-audio auto`: per item, the most recent user turns that fit the model in audio, older
ones as transcripts; recorded per answer and shown beside the scores."""
from __future__ import annotations

import json
import shutil

import pytest
from ihbench.dataset import load_items
from ihbench.loaders import GenerationConfig, get
from ihbench.loaders.tiny import make_tiny_model
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer

from ihbench.dataset.io import read_records
from ihbench.protocol import AUTO, build_model_input, fitting_model_input, parse_history_audio
from ihbench.report.render import render_markdown
from ihbench.report.summary import summarize
from ihbench.runner import RunSpec, run

SHORT = GenerationConfig(max_new_tokens=4)


@pytest.fixture(scope="module")
def official(tmp_path_factory):
    return write_official_layout(tmp_path_factory.mktemp("official") / "data")


@pytest.fixture(scope="module")
def deep_item(official):
    return max(load_items(official), key=lambda item: sum(m.role == "user" for m in item.history))


def heard(conversation):
    return [turn.audio is not None for turn in conversation.turns if turn.role == "user"]


def test_auto_is_parsed_and_named_in_the_option_error():
    assert parse_history_audio("auto") == AUTO
    with pytest.raises(Exception, match="expected all, auto or last:K"):
        parse_history_audio("automatic")


def test_auto_keeps_the_most_recent_user_turns_that_fit_and_gives_older_ones_as_transcripts(deep_item):
    users = len(build_model_input(deep_item, "audio").audio_clips)
    assert users == 4

    assert heard(fitting_model_input(deep_item, lambda c: True)) == [True] * 4
    assert heard(fitting_model_input(deep_item, lambda c: len(c.audio_clips) <= 2)) == [False, False, True, True]
    older = [t for t in fitting_model_input(deep_item, lambda c: len(c.audio_clips) <= 2).turns if t.role == "user"]
    assert older[0].text == [m.text for m in deep_item.history if m.role == "user"][0]


def test_when_even_the_interruption_alone_does_not_fit_it_is_still_heard_as_audio(deep_item):
    """The item then fails on the model's own limit, with its message, rather than being answered
    from transcripts only."""
    assert heard(fitting_model_input(deep_item, lambda c: False)) == [False, False, False, True]


@pytest.fixture(scope="module")
def short_context_model(tmp_path_factory, deep_item):
    """A tiny Qwen2-Audio whose context holds the deepest point with two of its four clips as audio."""
    path = make_tiny_model("qwen2-audio", tmp_path_factory.mktemp("short") / "model")
    loader = get("qwen2-audio")(str(path), device="cpu")
    tokens = {k: int(loader.inputs([build_model_input(deep_item, "audio", history_audio=k)])["input_ids"].shape[1])
              for k in (1, 2, 3, 4)}
    # on these short clips fitting is not monotone: three clips cost more than four (a clip can cost
    # fewer tokens than its transcript), so the choice is made from the top down
    assert tokens[1] < tokens[2] < min(tokens[3], tokens[4])
    config = json.loads((path / "config.json").read_text())
    config["text_config"]["max_position_embeddings"] = tokens[2] + SHORT.max_new_tokens
    (path / "config.json").write_text(json.dumps(config))
    return path


def spec(official, out, **overrides):
    values = dict(loader="qwen2-audio", model_path=None, data=str(official), out=out, epochs=1,
                  generation={"max_new_tokens": SHORT.max_new_tokens}, loader_options={"device": "cpu"})
    values.update(overrides)
    return RunSpec(**values)


def test_a_run_with_auto_answers_the_deep_point_a_full_history_cannot_and_records_what_was_heard(
        official, short_context_model, tmp_path):
    full = run(spec(official, tmp_path / "all", model_path=str(short_context_model)), progress=False)
    auto = run(spec(official, tmp_path / "auto", model_path=str(short_context_model), history_audio=AUTO),
               progress=False)

    failed = {r["id"]: r["error"] for r in read_records(tmp_path / "all" / "responses.jsonl") if r["error"]}
    assert full.errors == 1 and "conv-b/4" in failed and "context" in failed["conv-b/4"]
    assert auto.errors == 0
    records = {r["id"]: r for r in read_records(tmp_path / "auto" / "responses.jsonl")}
    assert records["conv-b/4"]["audio_turns"] == 2 and records["conv-a/2"]["audio_turns"] == 2
    assert records["conv-b/1"]["audio_turns"] == 1
    info = json.loads((tmp_path / "auto" / "run.json").read_text())
    assert info["history_audio"] == "auto" and info["effective_generation"]["max_new_tokens"] == SHORT.max_new_tokens

    report = summarize([tmp_path / "auto", tmp_path / "all"], n_bootstrap=10).to_json()
    by_setting = {r["history_audio"]["setting"]: r["history_audio"] for r in report["runs"]}
    assert by_setting["auto"] == {"setting": "auto", "n": 3, "audio_turns_mean": 5 / 3, "user_turns_mean": 7 / 3,
                                  "audio_turns_min": 1, "all_audio": 2}
    markdown = render_markdown(report, {})
    assert "| heard as audio |" in markdown and "1.7 of 2.3 user turns, all in 2/3 answers (auto)" in markdown
    assert "**Warning:** these runs heard different parts of the conversation history as audio" in markdown


def test_on_the_server_path_auto_keeps_within_the_servers_clip_limit(official, tmp_path):
    with OpenAITestServer() as server:
        summary = run(RunSpec(loader="openai", model_path="voxtral", data=str(official), out=tmp_path / "run",
                              epochs=1, history_audio=AUTO,
                              loader_options={"base_url": server.base_url, "max_retries": 0, "max_audio_clips": 2}),
                      progress=False)
    assert summary.errors == 0
    deepest = max(server.requests, key=len_messages)
    parts = [part["type"] for m in deepest["messages"] if isinstance(m["content"], list) for part in m["content"]]
    assert parts.count("input_audio") == 2
    assert sum(m["role"] == "user" and isinstance(m["content"], str) for m in deepest["messages"]) == 2


def len_messages(request):
    return len(request["messages"])


def test_auto_on_a_server_with_no_known_limit_says_every_turn_is_heard(official, tmp_path, caplog):
    with OpenAITestServer() as server:
        run(RunSpec(loader="openai", model_path="m", data=str(official), out=tmp_path / "run", epochs=1, limit=1,
                    history_audio=AUTO, loader_options={"base_url": server.base_url, "max_retries": 0}),
            progress=False)
    assert "cannot tell what fits the model (give --option max_audio_clips=N" in caplog.text


def test_a_run_without_auto_records_every_turn_heard(official, tmp_path):
    with OpenAITestServer() as server:
        run(RunSpec(loader="openai", model_path="m", data=str(official), out=tmp_path / "run", epochs=1,
                    loader_options={"base_url": server.base_url, "max_retries": 0}), progress=False)
    records = {r["id"]: r["audio_turns"] for r in read_records(tmp_path / "run" / "responses.jsonl")}
    assert records == {"conv-a/2": 2, "conv-b/1": 1, "conv-b/4": 4}
    assert json.loads((tmp_path / "run" / "run.json").read_text())["history_audio"] is None
    shutil.rmtree(tmp_path / "run")
