"""What is Gemma 3n's own: a template without a system turn that wants alternating turns, one
<bos>, a fixed 188 audio tokens per clip with clips cut at 30 s, and the model loaded without its
timm vision tower."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from ihbench.dataset.errors import UsageError
from ihbench.loaders import GenerationConfig, create, get
from ihbench.loaders.base import InputTurn, ModelInput
from ihbench.loaders.tiny import make_tiny_model


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_model("gemma3n", tmp_path_factory.mktemp("tiny") / "gemma3n")


@pytest.fixture(scope="module")
def loader(checkpoint):
    return get("gemma3n")(str(checkpoint))


def noise(seconds: float) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(int(16000 * seconds)).astype(np.float32) * 0.1


def call(*turns: InputTurn) -> ModelInput:
    return ModelInput("item-1", "audio", [InputTurn("system", "You are the bank's voice agent."), *turns])


def test_the_agent_speaking_first_gets_the_system_prompt_as_the_first_user_turn(loader):
    conversation = call(InputTurn("assistant", "Hello, how can I help?"), InputTurn("user", audio=noise(1.0)),
                        InputTurn("assistant", "Your balance is"), InputTurn("user", audio=noise(0.5)))

    assert loader.prompt(conversation) == (
        "<start_of_turn>user\nYou are the bank's voice agent.<end_of_turn>\n"
        "<start_of_turn>model\nHello, how can I help?<end_of_turn>\n<start_of_turn>user\n<audio_soft_token><end_of_turn>\n"
        "<start_of_turn>model\nYour balance is<end_of_turn>\n<start_of_turn>user\n<audio_soft_token><end_of_turn>\n"
        "<start_of_turn>model\n")


def test_the_caller_speaking_first_gets_the_system_prompt_at_the_head_of_their_turn(loader):
    conversation = call(InputTurn("user", "Hi, my card is blocked."), InputTurn("assistant", "Let me"), InputTurn("user", "Wait."))

    assert loader.prompt(conversation) == (
        "<start_of_turn>user\nYou are the bank's voice agent.\n\nHi, my card is blocked.<end_of_turn>\n"
        "<start_of_turn>model\nLet me<end_of_turn>\n<start_of_turn>user\nWait.<end_of_turn>\n<start_of_turn>model\n")


def test_the_model_sees_one_bos(loader):
    conversation = call(InputTurn("assistant", "Hello."), InputTurn("user", audio=noise(1.0)))
    ids = loader.inputs([conversation])["input_ids"][0].tolist()

    bos = loader.processor.tokenizer.bos_token_id
    assert ids[0] == bos and ids.count(bos) == 1


def test_every_clip_costs_188_audio_tokens_and_only_its_first_30_s_are_heard(loader):
    """The prompt does not grow with a clip (so limits.measure_clip_handling sees 0 tokens a
    second); the feature extractor's valid frames show the 30 s cut that max_clip_seconds states."""
    def measured(seconds):
        inputs = loader.inputs([call(InputTurn("assistant", "Hello."), InputTurn("user", audio=noise(seconds)))])
        audio_tokens = int((inputs["input_ids"] == loader.processor.audio_token_id).sum())
        return audio_tokens, int(inputs["input_features_mask"].sum())

    saved, loader.max_clip_seconds = loader.max_clip_seconds, None  # measure past the declared limit
    try:
        (tokens_10, frames_10), (tokens_20, frames_20), (tokens_40, frames_40) = map(measured, (10, 20, 40))
    finally:
        loader.max_clip_seconds = saved
    assert tokens_10 == tokens_20 == tokens_40 == 188
    per_second = (frames_20 - frames_10) / 10
    assert per_second == pytest.approx(100, abs=1)  # a mel frame every 10 ms
    assert frames_20 + per_second * (loader.max_clip_seconds - 20) == pytest.approx(frames_40, abs=2)


def test_the_model_is_the_real_class_without_the_vision_tower(loader, checkpoint):
    from transformers import Gemma3nForConditionalGeneration

    assert isinstance(loader.model, Gemma3nForConditionalGeneration)
    assert loader.model.model.vision_tower is None and loader.model.model.embed_vision is not None
    assert json.loads((checkpoint / "config.json").read_text())["architectures"] == ["Gemma3nForConditionalGeneration"]


def test_a_checkpoint_with_vision_tower_weights_loads(checkpoint, loader, tmp_path):
    """The real checkpoints hold the MobileNetV5 weights: they are skipped, the rest loads."""
    import torch
    from safetensors.torch import load_file, save_file

    folder = shutil.copytree(checkpoint, tmp_path / "with-vision")
    weights = load_file(folder / "model.safetensors")
    weights["model.vision_tower.timm_model.conv_stem.conv.weight"] = torch.ones(4, 3, 3, 3)
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})

    with_vision = get("gemma3n")(str(folder))

    conversation = call(InputTurn("assistant", "Hello."), InputTurn("user", audio=noise(1.0)))
    assert with_vision.generate(conversation, GenerationConfig(max_new_tokens=4), seed=0).text == \
        loader.generate(conversation, GenerationConfig(max_new_tokens=4), seed=0).text


def test_the_processor_is_the_real_class_with_the_real_settings(loader):
    from transformers import Gemma3nAudioFeatureExtractor, Gemma3nProcessor

    processor = loader.processor
    assert type(processor) is Gemma3nProcessor
    assert (processor.audio_seq_length, processor.image_seq_length) == (188, 256)
    assert processor.feature_extractor.to_dict() == Gemma3nAudioFeatureExtractor().to_dict()


def test_there_is_no_thinking_option(checkpoint):
    assert "thinking" not in get("gemma3n").option_names()
    with pytest.raises(UsageError, match="thinking"):
        create("gemma3n", str(checkpoint), thinking=True)


def test_a_turn_ends_at_end_of_turn_as_in_the_real_generation_config(loader):
    tokenizer = loader.processor.tokenizer

    assert sorted(loader.model.generation_config.eos_token_id) == \
        sorted(tokenizer.convert_tokens_to_ids(["<eos>", "<end_of_turn>"]))
