"""What is particular to the Qwen2.5-Omni loader: the thinker alone out of a whole Omni
checkpoint, the end token its generation config lacks, the template's audio parts, the 300 s
clip cap, and the real checkpoint's processor files."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from ihbench.loaders import GenerationConfig, get
from ihbench.loaders.base import InputTurn, ModelInput
from ihbench.loaders.limits import measure_clip_handling
from ihbench.loaders.tiny import make_tiny_model

FAMILY = "qwen2.5-omni"
SYSTEM = "You are the airline's phone agent. Keep answers short."

# Qwen/Qwen2.5-Omni-7B's preprocessor_config.json: one file for the image processor and the
# feature extractor, in the layout transformers 4.5x saved.
REAL_PREPROCESSOR_CONFIG = {
    "chunk_length": 300, "dither": 0.0, "feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 128,
    "hop_length": 160, "image_mean": [0.48145466, 0.4578275, 0.40821073],
    "image_processor_type": "Qwen2VLImageProcessor", "image_std": [0.26862954, 0.26130258, 0.27577711],
    "max_pixels": 12845056, "merge_size": 2, "min_pixels": 3136, "n_fft": 400, "n_samples": 4800000,
    "nb_max_frames": 30000, "padding_side": "right", "padding_value": 0.0, "patch_size": 14,
    "processor_class": "Qwen2_5OmniProcessor", "return_attention_mask": True, "sampling_rate": 16000,
    "temporal_patch_size": 2,
}


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_model(FAMILY, tmp_path_factory.mktemp("qwen2.5-omni") / "model")


@pytest.fixture(scope="module")
def loader(checkpoint):
    return get(FAMILY)(str(checkpoint))


def noise(seconds: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(16000 * seconds)) * 0.1).astype(np.float32)


def conversation(modality: str = "audio", interruption: np.ndarray | None = None) -> ModelInput:
    def user(text, clip):
        return InputTurn("user", text) if modality == "text" else InputTurn("user", audio=clip)

    return ModelInput("item-1", modality, [
        InputTurn("system", SYSTEM), user("I need to change my flight.", noise(1.0, 1)),
        InputTurn("assistant", "Sure. Which date would you"),
        user("Actually, cancel it.", noise(0.8, 2) if interruption is None else interruption),
    ])


def test_only_the_thinker_is_loaded_out_of_the_whole_omni_checkpoint(checkpoint, tmp_path):
    from safetensors.torch import load_file, save_file
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    assert json.loads((checkpoint / "config.json").read_text())["model_type"] == "qwen2_5_omni"
    weights = load_file(checkpoint / "model.safetensors")
    assert weights and all(name.startswith("thinker.") for name in weights)
    # the real checkpoint also holds the speech parts: they are left on disk
    whole = shutil.copytree(checkpoint, tmp_path / "whole")
    save_file({**weights, "talker.codec_head.weight": torch.ones(4, 4), "token2wav.proj.weight": torch.ones(2)},
              whole / "model.safetensors", metadata={"format": "pt"})

    model = get(FAMILY)(str(whole)).model

    assert type(model) is Qwen2_5OmniThinkerForConditionalGeneration
    assert not any(name.startswith(("talker", "token2wav")) for name, _ in model.named_modules())
    assert torch.equal(model.lm_head.weight, weights["thinker.lm_head.weight"])


def test_generation_ends_at_the_tokenizers_end_token_the_checkpoint_does_not_name(loader, checkpoint):
    assert "eos_token_id" not in json.loads((checkpoint / "generation_config.json").read_text())
    tokenizer = loader.processor.tokenizer
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert loader.model.generation_config.eos_token_id == end
    assert loader.model.generation_config.pad_token_id == tokenizer.convert_tokens_to_ids("<|endoftext|>")
    assert loader._until_end([5, 6, end, 7, 8]) == [5, 6, end]


def test_the_end_token_is_added_even_when_the_generation_config_names_others(checkpoint, tmp_path):
    """A re-saved checkpoint whose generation config names only <|endoftext|> still stops at the end
    of its ChatML turn."""
    copy = shutil.copytree(checkpoint, tmp_path / "resaved")
    config = json.loads((copy / "generation_config.json").read_text())
    loader = get(FAMILY)(str(copy))
    tokenizer = loader.processor.tokenizer
    other, end = tokenizer.convert_tokens_to_ids("<|endoftext|>"), tokenizer.convert_tokens_to_ids("<|im_end|>")
    (copy / "generation_config.json").write_text(json.dumps({**config, "eos_token_id": other}))

    resaved = get(FAMILY)(str(copy))

    assert resaved.model.generation_config.eos_token_id == [other, end]
    assert resaved._until_end([5, end, 7]) == [5, end] and resaved._until_end([5, other, 7]) == [5, other]


def test_the_prompt_keeps_the_benchmark_system_prompt_and_one_audio_part_per_clip(loader):
    prompt = loader.prompt(conversation())

    assert prompt == (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
        "<|im_start|>user\n<|audio_bos|><|AUDIO|><|audio_eos|><|im_end|>\n"
        "<|im_start|>assistant\nSure. Which date would you<|im_end|>\n"
        "<|im_start|>user\n<|audio_bos|><|AUDIO|><|audio_eos|><|im_end|>\n"
        "<|im_start|>assistant\n")
    text = loader.prompt(conversation("text"))
    assert "<|AUDIO|>" not in text and "<|im_start|>user\nActually, cancel it.<|im_end|>\n" in text


def test_each_clip_costs_25_tokens_a_second_up_to_the_300_s_the_extractor_keeps(loader):
    assert loader.max_clip_seconds == 300.0

    measured = measure_clip_handling(loader, seconds=(100.0, 200.0, 290.0, 330.0))

    assert measured["per_second"] == 25.0 and measured["clip_cap_seconds"] == 300.0, measured


def test_a_clip_past_300_s_is_an_error_on_that_item(loader):
    response = loader.generate(conversation(interruption=noise(305.0)), GenerationConfig(max_new_tokens=4), seed=0)

    assert response.text is None
    assert "AudioTooLongError" in response.error and "300 s" in response.error and "item-1" in response.error


def test_the_real_checkpoints_processor_files_load(loader, checkpoint, tmp_path):
    saved = json.loads((checkpoint / "processor_config.json").read_text())
    assert saved["processor_class"] == "Qwen2_5OmniProcessor"
    assert {k: saved["feature_extractor"][k] for k in ("feature_size", "chunk_length", "n_samples")} == \
        {"feature_size": 128, "chunk_length": 300, "n_samples": 4800000}
    real = shutil.copytree(checkpoint, tmp_path / "real")
    (real / "processor_config.json").unlink()
    (real / "preprocessor_config.json").write_text(json.dumps(REAL_PREPROCESSOR_CONFIG))

    other = get(FAMILY)(str(real))

    extractor = other.processor.feature_extractor
    assert (extractor.feature_size, extractor.n_samples, extractor.sampling_rate) == (128, 4800000, 16000)
    mine, theirs = (x.inputs([conversation()]) for x in (loader, other))
    assert torch.equal(mine["input_ids"], theirs["input_ids"])
    assert torch.equal(mine["input_features"], theirs["input_features"])

