"""What is Gemma 4's own: the thinking switch and its thought channel, the E-series template, the
processor without torchvision, the real processor settings; and the architecture choice: the
same loader takes the 12B (`gemma4_unified`: raw-waveform audio, a template that pre-fills an
empty thought when thinking is off), read from config.json before anything is loaded."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from ihbench.dataset.errors import UsageError
from ihbench.loaders import GenerationConfig, create, get
from ihbench.loaders.base import InputTurn, ModelFolderError, ModelInput
from ihbench.loaders.limits import measure_clip_handling
from ihbench.loaders.tiny import make_tiny_model


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_model("gemma4", tmp_path_factory.mktemp("tiny") / "gemma4")


@pytest.fixture(scope="module")
def loader(checkpoint):
    return get("gemma4")(str(checkpoint))


@pytest.fixture(scope="module")
def thinking_loader(checkpoint):
    return create("gemma4", str(checkpoint), thinking=True)  # as `--option thinking=true` reaches it


@pytest.fixture(scope="module")
def unified_checkpoint(tmp_path_factory):
    return make_tiny_model("gemma4-unified", tmp_path_factory.mktemp("tiny") / "gemma4-unified")


@pytest.fixture(scope="module")
def unified_loader(unified_checkpoint):
    return get("gemma4")(str(unified_checkpoint))


@pytest.fixture(scope="module")
def unified_thinking_loader(unified_checkpoint):
    return create("gemma4", str(unified_checkpoint), thinking=True)


def noise(seconds: float) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(int(16000 * seconds)).astype(np.float32) * 0.1


CONVERSATION = ModelInput("item-1", "audio", [
    InputTurn("system", "You are the bank's voice agent."), InputTurn("user", audio=noise(1.0)),
    InputTurn("assistant", "Your balance is"), InputTurn("user", audio=noise(0.6))])


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


def test_a_thought_cut_off_by_the_length_limit_is_an_item_error_that_keeps_the_reasoning(thinking_loader,
                                                                                         monkeypatch):
    response = answer_with(thinking_loader, monkeypatch, "<|channel>thought\nThe caller wants", ends=False)

    assert response.text is None and response.reasoning == "The caller wants"
    assert response.error.startswith("EmptyAfterThinkingError: the answer is empty after ")
    assert "tokens of reasoning (the model ended its turn after thinking" not in response.error
    assert "ended inside the thought); raise --max-new-tokens" in response.error


def test_nothing_said_after_a_finished_thought_is_an_item_error_too(thinking_loader, monkeypatch):
    response = answer_with(thinking_loader, monkeypatch, "<|channel>thought\nThe caller wants<channel|>")

    assert response.text is None and response.reasoning == "The caller wants"
    assert "(the model ended its turn after thinking, within the budget" in response.error
    # Battery 19, P3: the budget was not the cause, so raising it is not advised
    assert "raise --max-new-tokens" not in response.error


def test_what_the_template_made_of_thinking_is_recorded_beside_the_option(loader, thinking_loader):
    assert loader.describe()["thinking_effective"] == "off" and not loader.thinks()
    assert thinking_loader.describe()["thinking_effective"] == "on" and thinking_loader.thinks()


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


# -- the architecture, chosen from config.json's model_type --------------------------------------

def test_each_checkpoint_loads_as_the_architecture_its_config_names(loader, unified_loader):
    from transformers import (
        Gemma4ForConditionalGeneration,
        Gemma4Processor,
        Gemma4UnifiedForConditionalGeneration,
        Gemma4UnifiedProcessor,
    )

    assert type(loader.model) is Gemma4ForConditionalGeneration and isinstance(loader.processor, Gemma4Processor)
    assert type(unified_loader.model) is Gemma4UnifiedForConditionalGeneration
    assert isinstance(unified_loader.processor, Gemma4UnifiedProcessor)
    assert loader.describe()["architecture"] == "gemma4"
    assert unified_loader.describe()["architecture"] == "gemma4_unified"
    # the clip limit is each architecture's own, set on the instance at load
    assert (loader.max_clip_seconds, unified_loader.max_clip_seconds) == (30.0, None)
    assert get("gemma4").max_clip_seconds == 30.0


@pytest.mark.parametrize("model_type", ["qwen2_audio", None])
def test_a_checkpoint_of_another_architecture_is_refused_naming_its_config(unified_checkpoint, tmp_path,
                                                                            monkeypatch, model_type):
    import transformers

    folder = shutil.copytree(unified_checkpoint, tmp_path / "other")
    config = json.loads((folder / "config.json").read_text())
    if model_type is None:
        del config["model_type"]
    else:
        config["model_type"] = model_type
    (folder / "config.json").write_text(json.dumps(config))

    def no_loading(*args, **kwargs):
        raise AssertionError("loaded before the model_type was checked")

    for loads in (transformers.AutoProcessor, transformers.ProcessorMixin, transformers.PreTrainedModel):
        monkeypatch.setattr(loads, "from_pretrained", classmethod(no_loading))
    with pytest.raises(ModelFolderError) as error:
        get("gemma4")(str(folder))

    message = str(error.value)
    assert str(folder / "config.json") in message and repr(model_type) in message
    assert "gemma4 or gemma4_unified" in message


def test_the_12b_template_prefills_an_empty_thought_unless_thinking(unified_loader, unified_thinking_loader):
    turns = ("<|turn>user\n<|audio|><turn|>\n<|turn>model\nYour balance is<turn|>\n"
             "<|turn>user\n<|audio|><turn|>\n<|turn>model\n")

    assert unified_loader.prompt(CONVERSATION) == (
        "<bos><|turn>system\nYou are the bank's voice agent.<turn|>\n" + turns + "<|channel>thought\n<channel|>")
    assert unified_thinking_loader.prompt(CONVERSATION) == (
        "<bos><|turn>system\n<|think|>\nYou are the bank's voice agent.<turn|>\n" + turns)


def test_the_12b_thought_channel_is_split_as_the_e_series_one(unified_thinking_loader, unified_loader, monkeypatch):
    thought = answer_with(unified_thinking_loader, monkeypatch,
                          "<|channel>thought\nThe caller changed the amount.<channel|>Sure, 40 dollars then.")
    plain = answer_with(unified_loader, monkeypatch, "Sure, 40 dollars then.")

    assert (thought.text, thought.reasoning) == ("Sure, 40 dollars then.", "The caller changed the amount.")
    assert (plain.text, plain.reasoning) == ("Sure, 40 dollars then.", None)


def test_the_12b_processor_has_the_real_settings_and_ends(unified_loader, unified_checkpoint):
    from transformers import Gemma4UnifiedAudioFeatureExtractor

    processor = unified_loader.processor
    assert (processor.audio_seq_length, processor.audio_ms_per_token, processor.image_seq_length) == (750, 40, 280)
    assert processor.feature_extractor.to_dict() == Gemma4UnifiedAudioFeatureExtractor().to_dict()
    assert processor.feature_extractor.audio_samples_per_token == 640  # 40 ms at 16 kHz
    saved = json.loads((unified_checkpoint / "processor_config.json").read_text())
    assert saved["processor_class"] == "Gemma4UnifiedProcessor"
    assert saved["image_processor"]["image_processor_type"] == "Gemma4UnifiedImageProcessor"
    assert saved["video_processor"]["video_processor_type"] == "Gemma4UnifiedVideoProcessor"
    tokenizer = processor.tokenizer
    ends = unified_loader.model.generation_config.eos_token_id
    assert sorted(ends) == sorted(tokenizer.convert_tokens_to_ids(["<eos>", "<turn|>", "<|tool_response>"]))


def test_the_12b_takes_clips_of_any_length_at_25_tokens_a_second(unified_loader):
    """Raw 40 ms frames, one token each; `audio_seq_length=750` (30 s) is never applied."""
    measured = measure_clip_handling(unified_loader, (10.0, 20.0, 300.0, 900.0))

    assert measured["per_second"] == 25.0 and measured["clip_cap_seconds"] is None, measured
