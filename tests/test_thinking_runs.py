"""Runs of thinking models: an answer empty after its thought is an item error of its own (with the
reasoning kept), and a small answer budget with thinking on is said at start."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer, Reply

from ihbench.dataset.io import read_records
from ihbench.runner import RunSpec, run


@pytest.fixture
def official(tmp_path):
    return write_official_layout(tmp_path / "official")


def spec(official, out, server, **options):
    return RunSpec(loader="openai", model_path="thinker", data=str(official), out=out, epochs=1, limit=1,
                   loader_options={"base_url": server.base_url, "max_retries": 0, **options})


def test_a_server_answer_empty_after_its_thought_is_an_item_error_keeping_the_reasoning(official, tmp_path):
    with OpenAITestServer(respond=lambda body: Reply(content="", reasoning="The caller wants to")) as server:
        summary = run(spec(official, tmp_path / "run", server), progress=False)

    (record,) = read_records(tmp_path / "run" / "responses.jsonl")
    assert summary.errors == 1 and record["response"] is None
    assert record["error"].startswith("EmptyAfterThinkingError: the answer is empty after 12 tokens of reasoning")
    assert record["reasoning"] == "The caller wants to"


@pytest.mark.parametrize("finish,cause", [("length", "ended inside the thought"),
                                           ("max_tokens", "ended inside the thought"),
                                           ("LENGTH", "ended inside the thought"),
                                           ("stop", "it chose to say nothing")])
def test_an_answer_empty_after_its_thought_names_the_budget_in_every_spelling_of_it(official, tmp_path, finish,
                                                                                   cause):
    """Every spelling of "the budget ended it" is read as that (a raw compare with `length` took Anthropic's
    `max_tokens` for a model that chose to say nothing, and advised nothing)."""
    with OpenAITestServer(respond=lambda body: Reply(content="", reasoning="The caller", finish_reason=finish)) \
            as server:
        run(replace(spec(official, tmp_path / "run", server), generation={"max_new_tokens": 12}), progress=False)

    (record,) = read_records(tmp_path / "run" / "responses.jsonl")
    assert record["error"].startswith("EmptyAfterThinkingError:") and cause in record["error"]


def test_a_server_reply_with_no_text_and_no_thought_stays_an_empty_reply(official, tmp_path):
    with OpenAITestServer(respond=lambda body: Reply(content="")) as server:
        run(spec(official, tmp_path / "run", server), progress=False)

    (record,) = read_records(tmp_path / "run" / "responses.jsonl")
    assert record["error"].startswith("EmptyReplyError:") and record.get("reasoning") is None
    assert json.loads((tmp_path / "run" / "run.json").read_text())["n_items"] == 1


@pytest.mark.parametrize("budget,warned", [(256, True), (2048, False)])
def test_a_small_answer_budget_with_thinking_on_is_said_at_start(official, tmp_path, caplog, budget, warned):
    thinking = {"chat_template_kwargs": {"enable_thinking": True}}
    with OpenAITestServer() as server:
        run(RunSpec(loader="openai", model_path="thinker", data=str(official), out=tmp_path / "run", epochs=1, limit=1,
                    generation={"max_new_tokens": budget},
                    loader_options={"base_url": server.base_url, "max_retries": 0, "extra_body": thinking}),
            progress=False)
    said = "thinking is on (openai) and --max-new-tokens is 256: a thought often runs past it"
    assert (said in caplog.text) is warned
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["effective_generation"]["max_tokens"] == budget
    assert info["effective_generation"]["extra_body"] == thinking


def test_without_thinking_no_budget_warning_is_given(official, tmp_path, caplog):
    with OpenAITestServer() as server:
        run(spec(official, tmp_path / "run", server), progress=False)
    assert "thinking is on" not in caplog.text
