"""What is Gemma 4's own: the thinking switch and its thought channel, the E-series template, the
processor without torchvision, the real processor settings."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ihbench_dataset.errors import UsageError
from loaders import GenerationConfig, create, get
from loaders.base import Conversation, Turn
from loaders.tiny import make_tiny_model


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_model("gemma4", tmp_path_factory.mktemp("tiny") / "gemma4")


@pytest.fixture(scope="module")
def loader(checkpoint):
    return get("gemma4")(str(checkpoint))


@pytest.fixture(scope="module")
def thinking_loader(checkpoint):
    return create("gemma4", str(checkpoint), thinking=True)  # as `--option thinking=true` reaches it


def noise(seconds: float) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(int(16000 * seconds)).astype(np.float32) * 0.1


CONVERSATION = Conversation("item-1", "audio", [
    Turn("system", "You are the bank's voice agent."), Turn("user", audio=noise(1.0)),
    Turn("assistant", "Your balance is"), Turn("user", audio=noise(0.6))])


def answer_with(loader, monkeypatch, generated: str, *, ends: bool = True):
    """Generate with the model made to write `generated` after the prompt, then end its turn
    (or not: the length limit hit)."""
    tokenizer = loader.processor.tokenizer
    ids = tokenizer.encode(generated, add_special_tokens=False)
    ids += [tokenizer.convert_tokens_to_ids("<turn|>")] if ends else []

    def fake_generate(**inputs):
        tail = torch.tensor([ids] * inputs["input_ids"].shape[0])
        return torch.cat([inputs["input_ids"], tail], dim=1)

    monkeypatch.setattr(loader.model, "generate", fake_generate)
    return loader.generate(CONVERSATION, GenerationConfig(max_new_tokens=64), seed=0)


def test_the_template_gives_the_system_turn_model_turns_and_one_audio_token_per_clip(loader):
    prompt = loader.prompt(CONVERSATION)

    assert prompt == ("<bos><|turn>system\nYou are the bank's voice agent.<turn|>\n"
                      "<|turn>user\n<|audio|><turn|>\n<|turn>model\nYour balance is<turn|>\n"
                      "<|turn>user\n<|audio|><turn|>\n<|turn>model\n")


def test_thinking_is_off_by_default_and_switched_on_by_the_template(loader, thinking_loader):
    assert "thinking" in get("gemma4").option_names()
    assert "<|think|>" not in loader.prompt(CONVERSATION)
    assert thinking_loader.prompt(CONVERSATION).startswith("<bos><|turn>system\n<|think|>\nYou are the bank's")
    assert thinking_loader.describe()["thinking"] is True and loader.describe()["thinking"] is False


def test_a_thinking_option_that_is_not_a_boolean_is_refused(checkpoint):
    with pytest.raises(UsageError, match="thinking"):
        create("gemma4", str(checkpoint), thinking="yes")


def test_the_thought_channel_is_split_from_what_the_agent_says(thinking_loader, monkeypatch):
    response = answer_with(thinking_loader, monkeypatch,
                           "<|channel>thought\nThe caller changed the amount.<channel|>Sure, 40 dollars then.")

    assert response.error is None
    assert response.text == "Sure, 40 dollars then."
    assert response.reasoning == "The caller changed the amount."


def test_a_thought_cut_off_by_the_length_limit_leaks_nothing(thinking_loader, monkeypatch):
    response = answer_with(thinking_loader, monkeypatch, "<|channel>thought\nThe caller wants", ends=False)

    assert response.text == "" and response.reasoning == "The caller wants"


@pytest.mark.parametrize("generated,reasoning", [("Sure.", None), ("<|channel>thought\n<channel|>Sure.", None)])
def test_an_answer_without_thoughts_has_no_reasoning(loader, monkeypatch, generated, reasoning):
    response = answer_with(loader, monkeypatch, generated)

    assert response.text == "Sure." and response.reasoning is reasoning


def test_the_processor_is_the_real_class_with_the_real_settings(loader, checkpoint):
    from transformers import Gemma4AudioFeatureExtractor, Gemma4Processor

    processor = loader.processor
    assert isinstance(processor, Gemma4Processor)
    assert (processor.audio_seq_length, processor.audio_ms_per_token, processor.image_seq_length) == (750, 40, 280)
    assert processor.feature_extractor.to_dict() == Gemma4AudioFeatureExtractor().to_dict()
    saved = json.loads((checkpoint / "processor_config.json").read_text())
    assert saved["processor_class"] == "Gemma4Processor" and "video_processor" in saved
    assert json.loads((checkpoint / "tokenizer_config.json").read_text())["processor_class"] == "Gemma4Processor"


def test_without_torchvision_only_the_video_processor_is_left_out(loader):
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        pytest.skip("torchvision is installed: the full processor is loaded")
    assert not hasattr(loader.processor, "video_processor")
    assert loader.processor.image_processor is not None and loader.processor.feature_extractor is not None


def test_a_turn_ends_at_turn_end_as_in_the_real_generation_config(loader):
    tokenizer = loader.processor.tokenizer
    ends = loader.model.generation_config.eos_token_id

    assert sorted(ends) == sorted(tokenizer.convert_tokens_to_ids(["<eos>", "<turn|>", "<|tool_response>"]))
