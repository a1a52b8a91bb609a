"""The server path (`--model openai`) for templates without a system role or with a clip limit:
`fold_system` (Voxtral, Gemma 3n behind vLLM) and `max_audio_clips` (vLLM serves Voxtral with 5)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from ihbench.dataset.errors import UsageError
from ihbench.loaders import GenerationConfig, check_options, create
from ihbench.loaders.base import InputTurn, ModelInput
from ihbench.loaders.openai_compat import alternating
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer

from ihbench.dataset.io import read_records
from ihbench.runner import RunSpec, run

SYSTEM = "You are the airline's phone agent."


def clip(seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(8000) * 0.1).astype(np.float32)


def roles(messages):
    return [m["role"] for m in messages]


@pytest.fixture
def official(tmp_path):
    return write_official_layout(tmp_path / "official")


def loader(server=None, **options):
    return create("openai", "test-model", base_url=server.base_url if server else "http://127.0.0.1:9/v1",
                  max_retries=0, **options)


def test_fold_system_gives_the_system_prompt_its_own_user_turn_when_the_agent_speaks_first():
    conversation = ModelInput("x", "audio", [InputTurn("system", SYSTEM), InputTurn("assistant", "Welcome, how can"),
                                             InputTurn("user", audio=clip())])

    messages = loader(fold_system=True).wire_messages(conversation)

    assert roles(messages) == ["user", "assistant", "user"]
    assert messages[0] == {"role": "user", "content": SYSTEM}
    assert messages[2]["content"][0]["type"] == "input_audio"


def test_fold_system_puts_the_system_prompt_at_the_head_of_the_callers_first_turn():
    conversation = ModelInput("x", "audio", [InputTurn("system", SYSTEM), InputTurn("user", audio=clip()),
                                             InputTurn("assistant", "Sure, which"), InputTurn("user", audio=clip(1))])

    messages = loader(fold_system=True).wire_messages(conversation)

    assert roles(messages) == ["user", "assistant", "user"]
    assert messages[0]["content"][0] == {"type": "text", "text": SYSTEM + "\n\n"}
    assert messages[0]["content"][1]["type"] == "input_audio"


def test_an_assistant_turn_cut_before_its_first_word_is_dropped_and_the_user_turns_around_it_merged():
    conversation = ModelInput("x", "audio", [
        InputTurn("system", SYSTEM), InputTurn("assistant", "Hello"), InputTurn("user", audio=clip()),
        InputTurn("assistant", ""), InputTurn("user", audio=clip(1))])

    messages = loader(fold_system=True).wire_messages(conversation)

    assert roles(messages) == ["user", "assistant", "user"]
    assert [part["type"] for part in messages[2]["content"]] == ["input_audio", "input_audio"]
    text = alternating([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "a"},
                        {"role": "assistant", "content": " "}, {"role": "user", "content": "b"}])
    assert text == [{"role": "user", "content": f"{SYSTEM}\n\na\n\nb"}]


def test_tool_calls_and_results_are_never_merged():
    call = {"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{}"}}
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Book it."},
               {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "assistant", "content": "Done."}]

    assert roles(alternating(history)) == ["user", "assistant", "tool", "assistant"]


def test_without_fold_system_the_system_message_is_sent_as_it_is():
    conversation = ModelInput("x", "text", [InputTurn("system", SYSTEM), InputTurn("assistant", "Hi"),
                                            InputTurn("user", "Hello")])

    assert roles(loader().wire_messages(conversation)) == ["system", "assistant", "user"]


def test_a_run_with_fold_system_sends_alternating_roles_and_records_the_option(official, tmp_path):
    with OpenAITestServer() as server:
        run(RunSpec(loader="openai", model_path="test-model", data=str(official), out=tmp_path / "run", epochs=1,
                    loader_options={"base_url": server.base_url, "max_retries": 0, "fold_system": True}),
            progress=False)
    for request in server.requests:
        sequence = roles(request["messages"])
        assert sequence[0] == "user" and all(a != b for a, b in zip(sequence, sequence[1:]))
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["loader_options"] == {"fold_system": True} and info["model"]["fold_system"] is True


def test_a_prompt_over_the_servers_clip_limit_is_an_item_error_said_before_the_request(official, tmp_path):
    with OpenAITestServer() as server:
        summary = run(RunSpec(loader="openai", model_path="test-model", data=str(official), out=tmp_path / "run",
                              epochs=1, loader_options={"base_url": server.base_url, "max_retries": 0,
                                                        "max_audio_clips": 2}), progress=False)
    records = {r["id"]: r for r in read_records(tmp_path / "run" / "responses.jsonl")}
    assert summary.errors == 1 and len(server.requests) == 2  # conv-b/4 holds 4 clips: never sent
    assert records["conv-b/4"]["error"].startswith("UnsupportedInputError: conv-b/4: 4 audio clips, and the server "
                                                   "takes at most 2 per prompt (--option max_audio_clips=2); use "
                                                   "--history-audio auto or last:2")


@pytest.mark.parametrize("option,value", [("fold_system", "yes please"), ("max_audio_clips", "0")])
def test_the_shape_options_are_checked_before_anything_is_made(option, value):
    with pytest.raises(UsageError, match=f"--option {option}"):
        check_options("openai", {option: value})


def test_the_clip_limit_is_what_fits_means_on_the_server_path():
    users = [InputTurn("user", audio=clip(i)) for i in range(3)]
    three = ModelInput("x", "audio", [InputTurn("system", SYSTEM), *users])

    assert loader(max_audio_clips=3).fits(three, GenerationConfig())
    assert not loader(max_audio_clips=2).fits(three, GenerationConfig())
    assert loader().fits(three, GenerationConfig())
