"""History audio as an explicit choice, context limits named per item, reasoning kept apart."""
from __future__ import annotations

import pytest
from ihbench.dataset import load_items
from ihbench.dataset.errors import UsageError
from ihbench.loaders.limits import AudioTooLongError, check_context
from ihbench.loaders.reasoning import split_reasoning
from official_layout import write_official_layout

from ihbench.protocol import build_model_input, parse_history_audio


@pytest.fixture(scope="module")
def deep_item(tmp_path_factory):
    items = load_items(write_official_layout(tmp_path_factory.mktemp("official") / "data"))
    return max(items, key=lambda i: sum(m.role == "user" for m in i.history))


def test_history_audio_keeps_the_last_k_user_turns_as_audio(deep_item):
    full = build_model_input(deep_item, "audio")
    users = [t for t in full.turns if t.role == "user"]
    assert len(users) >= 2 and all(t.audio is not None for t in users)

    last_one = build_model_input(deep_item, "audio", history_audio=1)

    kept = [t for t in last_one.turns if t.role == "user"]
    assert [t.audio is not None for t in kept] == [False] * (len(users) - 1) + [True]
    history_users = [m for m in deep_item.history if m.role == "user"]
    assert [t.text for t in kept[:-1]] == [m.text for m in history_users]
    assert build_model_input(deep_item, "audio", history_audio=len(users) + 3).audio_clips.__len__() == len(users)


@pytest.mark.parametrize("value,expected", [(None, None), ("all", None), ("last:1", 1), ("last:4", 4)])
def test_history_audio_option(value, expected):
    assert parse_history_audio(value) == expected


@pytest.mark.parametrize("value", ["last", "last:0", "first:2", "2", "last:x"])
def test_a_bad_history_audio_option_is_named(value):
    with pytest.raises(UsageError, match="--history-audio"):
        parse_history_audio(value)


def test_a_prompt_beyond_the_context_is_an_error_naming_item_and_advice():
    check_context(900, 100, 1000, "qwen2-audio", "conv/3")  # fits exactly
    with pytest.raises(AudioTooLongError, match=r"conv/3: the prompt is 901 tokens.*1000 tokens.*last:K"):
        check_context(901, 100, 1000, "qwen2-audio", "conv/3", audio_clips=3)


@pytest.mark.parametrize("raw,answer,reasoning", [
    ("Sure, one moment.", "Sure, one moment.", None),
    ("<think>She wants speed.</think>Got it, skipping ahead.", "Got it, skipping ahead.", "She wants speed."),
    ("<think>\nlong thought cut by the length limit", "", "long thought cut by the length limit"),
    ("thoughts without an opening tag</think> The answer.", "The answer.", "thoughts without an opening tag"),
])
def test_reasoning_is_split_from_what_the_agent_says(raw, answer, reasoning):
    assert split_reasoning(raw, "<think>", "</think>") == (answer, reasoning)
