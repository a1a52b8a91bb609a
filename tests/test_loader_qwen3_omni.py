"""What is particular to the Qwen3-Omni loader: the thinker alone out of a whole Omni checkpoint,
the Thinking checkpoint's reasoning kept out of the answer, the `thinking` option reaching the
template, and clips of any length."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from ihbench.dataset.errors import UsageError
from ihbench.loaders import GenerationConfig, get
from ihbench.loaders.base import InputTurn, ModelInput
from ihbench.loaders.limits import measure_clip_handling
from ihbench.loaders.tiny import make_tiny_model

FAMILY = "qwen3-omni"
SYSTEM = "You are the bank's phone agent."
SHORT = GenerationConfig(max_new_tokens=40)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_model(FAMILY, tmp_path_factory.mktemp("qwen3-omni") / "model")


@pytest.fixture(scope="module")
def loader(checkpoint):
    return get(FAMILY)(str(checkpoint))


@pytest.fixture(scope="module")
def thinking_loader(checkpoint):
    return get(FAMILY)(str(checkpoint), thinking=True)


def noise(seconds: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(16000 * seconds)) * 0.1).astype(np.float32)


def conversation() -> ModelInput:
    return ModelInput("item-7", "audio", [
        InputTurn("system", SYSTEM), InputTurn("user", audio=noise(1.0, 1)), InputTurn("assistant", "Your balance is"),
        InputTurn("user", audio=noise(0.6, 2)),
    ])


def answer_with(loader, monkeypatch, generated: str):
    """The loader's response when the model writes exactly `generated` after the prompt."""
    tokens = loader.processor.tokenizer.encode(generated, add_special_tokens=False)

    def generate(input_ids, **kwargs):
        return torch.cat([input_ids, torch.tensor([tokens] * len(input_ids))], dim=1)

    monkeypatch.setattr(loader.model, "generate", generate)
    return loader.generate(conversation(), SHORT, seed=0)


def test_only_the_thinker_is_loaded_out_of_the_whole_omni_checkpoint(checkpoint, tmp_path):
    from safetensors.torch import load_file, save_file
    from transformers import Qwen3OmniMoeThinkerForConditionalGeneration

    assert json.loads((checkpoint / "config.json").read_text())["model_type"] == "qwen3_omni_moe"
    weights = load_file(checkpoint / "model.safetensors")
    assert weights and all(name.startswith("thinker.") for name in weights)
    whole = shutil.copytree(checkpoint, tmp_path / "instruct")  # Instruct also ships the speech parts
    save_file({**weights, "talker.codec_head.weight": torch.ones(4, 4), "code2wav.pre_conv.weight": torch.ones(2)},
              whole / "model.safetensors", metadata={"format": "pt"})

    instruct = get(FAMILY)(str(whole))

    model = instruct.model
    assert type(model) is Qwen3OmniMoeThinkerForConditionalGeneration
    assert not any(name.startswith(("talker", "code2wav")) for name, _ in model.named_modules())
    assert torch.equal(model.lm_head.weight, weights["thinker.lm_head.weight"])
    # the checkpoint's generation config names no end token: the tokenizer's is used
    assert model.generation_config.eos_token_id == instruct.processor.tokenizer.convert_tokens_to_ids("<|im_end|>")


def test_the_thinking_checkpoints_reasoning_is_kept_out_of_the_answer(thinking_loader, monkeypatch):
    response = answer_with(thinking_loader, monkeypatch,
                           "<think>\nThe caller wants to stop.\n</think>\n\nOf course, I'll stop there.<|im_end|>")

    assert response.error is None
    assert response.text == "Of course, I'll stop there."
    assert response.reasoning == "The caller wants to stop."


def test_thoughts_opened_by_the_prompt_are_split_at_the_closing_marker(thinking_loader, monkeypatch):
    response = answer_with(thinking_loader, monkeypatch, "The caller wants to stop.\n</think>\n\nOf course.<|im_end|>")

    assert response.text == "Of course." and response.reasoning == "The caller wants to stop."


def test_thoughts_cut_off_by_the_length_limit_are_an_item_error_never_the_answer(thinking_loader, monkeypatch):
    response = answer_with(thinking_loader, monkeypatch, "<think>\nFirst, the caller said")

    assert response.text is None and response.reasoning == "First, the caller said"
    assert response.error.startswith("EmptyAfterThinkingError: the answer is empty after ")


def test_a_template_that_ignores_enable_thinking_is_recorded_as_the_checkpoint_deciding(checkpoint, tmp_path):
    """thinking=false on such a checkpoint switched nothing off: run.json says so, not `false`."""
    from ihbench.loaders.transformers_base import THINKING_IGNORED

    copy = shutil.copytree(checkpoint, tmp_path / "ignores-thinking")
    template = (copy / "chat_template.jinja").read_text()
    switch = "{%- if enable_thinking is defined and enable_thinking is false -%}"
    assert switch in template
    (copy / "chat_template.jinja").write_text(template.replace(switch, "{%- if false -%}"))

    described = get(FAMILY)(str(copy)).describe()
    thinking = get(FAMILY)(str(copy), thinking=True)

    assert described["thinking"] is False and described["thinking_effective"] == THINKING_IGNORED
    assert thinking.thinks()


def test_the_thinking_checkpoint_is_given_a_longer_budget_warning_than_the_default(loader, thinking_loader):
    from ihbench.loaders.reasoning import budget_warning

    assert budget_warning(loader, 256) is None
    warning = budget_warning(thinking_loader, 256)
    assert warning.startswith("thinking is on (qwen3-omni) and --max-new-tokens is 256") and "4096 or more" in warning
    assert budget_warning(thinking_loader, 4096) is None


def test_an_answer_without_thoughts_is_left_as_it_is(loader, monkeypatch):
    response = answer_with(loader, monkeypatch, "Of course.<|im_end|>")

    assert response.text == "Of course." and response.reasoning is None


def test_the_thinking_option_reaches_the_template_as_enable_thinking(loader, thinking_loader):
    assert "thinking" in loader.option_names()
    assert loader.describe()["thinking"] is False and thinking_loader.describe()["thinking"] is True

    prompt = loader.prompt(conversation())

    assert prompt == (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
        "<|im_start|>user\n<|audio_start|><|audio_pad|><|audio_end|><|im_end|>\n"
        "<|im_start|>assistant\nYour balance is<|im_end|>\n"
        "<|im_start|>user\n<|audio_start|><|audio_pad|><|audio_end|><|im_end|>\n"
        "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert thinking_loader.prompt(conversation()) == prompt.removesuffix("<think>\n\n</think>\n\n")


def test_thinking_must_be_true_or_false(checkpoint):
    with pytest.raises(UsageError, match="thinking"):
        get(FAMILY)(str(checkpoint), thinking="yes")


def test_clips_of_any_length_are_taken_whole_at_13_tokens_a_second(loader):
    assert loader.max_clip_seconds is None

    measured = measure_clip_handling(loader, seconds=(100.0, 200.0, 290.0, 330.0))

    assert measured["per_second"] == 13.0 and measured["clip_cap_seconds"] is None, measured
