"""Tiny Phi-4-multimodal-instruct: Phi4MultimodalForCausalLM + its processor, and the speech
LoRA the real checkpoint keeps in `speech-lora/`."""
from __future__ import annotations

import json
from pathlib import Path

from ._common import CONTEXT, byte_vocab, padded, save_model

PROCESSOR = "Phi4MultimodalProcessor"

# Phi-4-multimodal-instruct's layout: <|role|>content<|end|>, one <|audio|> per clip.
PHI4_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{{ '<|image|>' }}"
    "{% elif content['type'] == 'audio' %}{{ '<|audio|>' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|end|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)

# The language model's projections, the modules the real speech-lora adapts.
SPEECH_LORA_TARGETS = r".*layers\.\d+\.(self_attn\.(qkv_proj|o_proj)|mlp\.(gate_up_proj|down_proj))"


def _phi4_tokenizer():
    from transformers import GPT2Tokenizer

    return GPT2Tokenizer(
        vocab=byte_vocab(), merges=[], pad_token="<|endoftext|>",
        extra_special_tokens={"image_token": "<|image|>", "audio_token": "<|audio|>"},
    )


def build(out: Path) -> None:
    from transformers import (
        Phi4MultimodalConfig,
        Phi4MultimodalFeatureExtractor,
        Phi4MultimodalForCausalLM,
    )

    tokenizer = _phi4_tokenizer()
    tokenizer.add_tokens(["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"], special_tokens=True)
    ids = {token: tokenizer.convert_tokens_to_ids(token)
           for token in ("<|endoftext|>", "<|end|>", "<|image|>", "<|audio|>")}
    config = Phi4MultimodalConfig(
        vocab_size=padded(len(tokenizer)), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=CONTEXT,
        original_max_position_embeddings=CONTEXT,
        bos_token_id=ids["<|endoftext|>"], pad_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|endoftext|>"], ids["<|end|>"]],
        audio_config={"hidden_size": 32, "intermediate_size": 64, "num_blocks": 1, "num_attention_heads": 2,
                      "ext_pw_out_channel": 32, "depthwise_separable_out_channel": 32, "nemo_conv_channels": 32,
                      "input_size": 80, "time_reduction": 8, "audio_token_id": ids["<|audio|>"],
                      # at the real 0.02 a 1-layer random encoder barely moves the logits; tests must see audio
                      "initializer_range": 0.2},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                       "num_attention_heads": 2, "image_size": 28, "patch_size": 14, "crop_size": 28,
                       "image_token_id": ids["<|image|>"]},
    )
    model = Phi4MultimodalForCausalLM(config).eval()
    save_model(model, out, {"eos_token_id": config.eos_token_id, "pad_token_id": ids["<|endoftext|>"],
                             "bos_token_id": ids["<|endoftext|>"]}, tokenizer)
    _save_phi4_processor(out, Phi4MultimodalFeatureExtractor(), tokenizer)


def _save_phi4_processor(out: Path, feature_extractor, tokenizer) -> None:
    """Save the processor as the real checkpoint has it, with or without torchvision installed.

    Phi4MultimodalProcessor cannot be built without torchvision (its image processor needs it),
    so without it the audio+text processor the loader falls back to is saved, and the config is
    then written under the real class name with a default image processor entry.
    """
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        from transformers import Phi4MultimodalImageProcessor, Phi4MultimodalProcessor

        Phi4MultimodalProcessor(Phi4MultimodalImageProcessor(), feature_extractor, tokenizer,
                                chat_template=PHI4_CHAT_TEMPLATE).save_pretrained(out)
        return
    from ..phi4_multimodal import Phi4AudioTextProcessor

    Phi4AudioTextProcessor(feature_extractor, tokenizer, chat_template=PHI4_CHAT_TEMPLATE).save_pretrained(out)
    config_path = out / "processor_config.json"
    config = json.loads(config_path.read_text())
    config["processor_class"] = "Phi4MultimodalProcessor"
    config["image_processor"] = {"image_processor_type": "Phi4MultimodalImageProcessor"}
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def make_tiny_speech_lora(model_dir: Path, *, seed: int = 0, subfolder: str = "speech-lora") -> Path:
    """A randomly initialised LoRA on the language model, saved where the real checkpoint keeps its
    speech adapter, so the loader's peft path runs. B is random too (peft zeroes it), so the
    adapter visibly changes the output."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Phi4MultimodalForCausalLM

    model = Phi4MultimodalForCausalLM.from_pretrained(model_dir)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=SPEECH_LORA_TARGETS, lora_dropout=0.0, bias="none")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        peft_model = get_peft_model(model, config)
        with torch.no_grad():
            for name, parameter in peft_model.named_parameters():
                if "lora_B" in name:
                    parameter.normal_(0.0, 0.5)
    target = Path(model_dir) / subfolder
    peft_model.save_pretrained(target)
    return target
