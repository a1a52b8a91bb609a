"""What a local checkpoint runs with, recorded: `--option device_map=...` for models that need
several GPUs, and the effective generation settings (the checkpoint's generation config with ours
over it)."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
from ihbench.dataset.errors import UsageError
from ihbench.loaders import GenerationConfig, check_options, create
from ihbench.loaders.base import InputTurn, ModelInput
from ihbench.loaders.tiny import make_tiny_model

FAMILY = "qwen2-audio"
CONVERSATION = ModelInput("x", "text", [InputTurn("system", "Be brief."), InputTurn("assistant", "Hello, how"),
                                        InputTurn("user", "Stop, I need a refund.")])


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_model(FAMILY, tmp_path_factory.mktemp("settings") / "model")


def test_device_map_spreads_the_model_with_accelerate_and_is_recorded(checkpoint):
    spread = create(FAMILY, str(checkpoint), device_map="auto", device="cpu")
    whole = create(FAMILY, str(checkpoint), device="cpu")

    described = spread.describe()
    assert described["device_map"] == "auto" and described["devices"] == ["cpu"]
    assert "device_map" not in whole.describe()
    inputs = spread.inputs([CONVERSATION])
    with torch.inference_mode():
        assert torch.equal(spread.model(**inputs).logits, whole.model(**inputs).logits)


def test_a_device_map_accelerate_does_not_know_is_refused_when_parsed():
    with pytest.raises(UsageError, match=r"--option device_map: expected one of auto, balanced, balanced_low_0, "
                                         r"sequential, got 'everywhere'"):
        check_options(FAMILY, {"device_map": "everywhere"})


def test_the_effective_generation_settings_are_the_checkpoints_with_ours_over_them(checkpoint, tmp_path):
    copy = shutil.copytree(checkpoint, tmp_path / "sampling-checkpoint")
    config = json.loads((copy / "generation_config.json").read_text())
    (copy / "generation_config.json").write_text(json.dumps({
        **config, "do_sample": True, "temperature": 0.7, "top_k": 20, "top_p": 0.8, "repetition_penalty": 1.05}))
    loader = create(FAMILY, str(copy), device="cpu")

    greedy = loader.effective_generation(GenerationConfig(max_new_tokens=64))
    sampled = loader.effective_generation(GenerationConfig(max_new_tokens=64, temperature=0.5, top_p=0.9))

    assert greedy["do_sample"] is False and greedy["max_new_tokens"] == 64
    assert greedy["repetition_penalty"] == 1.05  # the checkpoint's, still in force under greedy decoding
    assert not {"temperature", "top_k", "top_p"} & set(greedy)  # ignored by transformers when greedy
    assert (sampled["do_sample"], sampled["temperature"], sampled["top_p"], sampled["top_k"]) == (True, 0.5, 0.9, 20)
    assert greedy["eos_token_id"] == loader.model.generation_config.eos_token_id
