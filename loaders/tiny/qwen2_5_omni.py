"""Tiny Qwen2.5-Omni-7B: the real checkpoint's layout (a `Qwen2_5OmniConfig` whose weights are
`thinker.*`), built without the talker, plus Qwen2_5OmniProcessor with the real feature extractor."""
from __future__ import annotations

import json
from pathlib import Path

from ._common import CONTEXT, byte_vocab, padded, save_model

PROCESSOR = "Qwen2_5OmniProcessor"
# The processor class cannot be built without torchvision (its video processor needs it): then
# the loader and `save_omni_processor` use its audio+text part, and AutoProcessor cannot load it.
NEEDS_TORCHVISION = True

# Qwen/Qwen2.5-Omni-7B's chat_template.jinja (the same template is in transformers' own Qwen2.5-Omni
# processor tests): ChatML, a default system turn when the first message is not one, and one
# <|audio_bos|><|AUDIO|><|audio_eos|> per audio part, with no "Audio N:" label unless add_audio_id.
QWEN2_5_OMNI_CHAT_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}{% set image_count = namespace(value=0) %}"
    "{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}<|vision_bos|><|IMAGE|><|vision_eos|>"
    "{% elif content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}"
    "{% if add_audio_id %}Audio {{ audio_count.value }}: {% endif %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}<|vision_bos|><|VIDEO|><|vision_eos|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# The real preprocessor_config.json's audio settings: Whisper features, 128 mel bins, and clips
# padded (and cut) to 300 s, not Whisper's 30 s.
FEATURE_EXTRACTOR = {"feature_size": 128, "sampling_rate": 16000, "hop_length": 160, "n_fft": 400,
                     "chunk_length": 300, "dither": 0.0, "padding_value": 0.0, "return_attention_mask": True}

# The tokenizer's named multimodal tokens, which Qwen2_5OmniProcessor reads off the tokenizer.
NAMED_TOKENS = {"image_token": "<|IMAGE|>", "audio_token": "<|AUDIO|>", "video_token": "<|VIDEO|>",
                "vision_bos_token": "<|vision_bos|>", "vision_eos_token": "<|vision_eos|>",
                "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>"}


def token_ids(tokenizer, named_tokens: dict) -> tuple[dict, dict]:
    """The ids of the chat and multimodal tokens, and the bos/eos/pad ids both Omni thinkers use."""
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in
           ("<|endoftext|>", "<|im_start|>", "<|im_end|>", *named_tokens.values())}
    return ids, {"bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                 "pad_token_id": ids["<|endoftext|>"]}


def omni_tokenizer(named: dict, extra: list):
    """A byte-level Qwen2 tokenizer with ChatML's tokens, `named` multimodal tokens (attributes the
    processor reads) and `extra` special tokens."""
    from transformers import Qwen2Tokenizer

    tokenizer = Qwen2Tokenizer(vocab=byte_vocab(), merges=[], eos_token="<|im_end|>", pad_token="<|endoftext|>",
                               extra_special_tokens=named)
    tokenizer.add_tokens(["<|im_start|>", "<|im_end|>", *extra], special_tokens=True)
    return tokenizer


def build(out: Path) -> None:
    from transformers import (
        Qwen2_5OmniConfig,
        Qwen2_5OmniForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    tokenizer = omni_tokenizer(NAMED_TOKENS, ["<|vision_pad|>"])
    ids, special = token_ids(tokenizer, NAMED_TOKENS)
    thinker = {
        # at the real 0.02 a 1-layer random encoder barely moves the logits; tests must see audio
        "audio_config": {"d_model": 32, "encoder_layers": 1, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                         "num_mel_bins": 128, "max_source_positions": 1500, "n_window": 100, "output_dim": 32,
                         "initializer_range": 0.2},
        "vision_config": {"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                          "out_hidden_size": 32, "fullatt_block_indexes": [0]},
        "text_config": {"vocab_size": padded(len(tokenizer)), "hidden_size": 32, "intermediate_size": 64,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": CONTEXT, "tie_word_embeddings": False,
                        "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 1, 1]},
                        **special},
        "audio_token_index": ids["<|AUDIO|>"], "image_token_index": ids["<|IMAGE|>"],
        "video_token_index": ids["<|VIDEO|>"], "audio_start_token_id": ids["<|audio_bos|>"],
        "audio_end_token_id": ids["<|audio_eos|>"],
        "vision_start_token_id": ids["<|vision_bos|>"], "vision_end_token_id": ids["<|vision_eos|>"],
        **special,
    }
    # No talker or token2wav (the real checkpoint has them; the loader never builds them).
    config = Qwen2_5OmniConfig(thinker_config=thinker, enable_audio_output=False)
    model = Qwen2_5OmniForConditionalGeneration(config).eval()
    # The real generation_config.json is the whole Omni model's and names no token ids at all
    # (so a thinker loaded alone does not stop at <|im_end|>: QwenLM/Qwen2.5-Omni#371); the loader
    # supplies them, and this keeps that path tested.
    save_model(model, out, {}, tokenizer)
    save_omni_processor(out, "Qwen2_5OmniProcessor", WhisperFeatureExtractor(**FEATURE_EXTRACTOR), tokenizer,
                        QWEN2_5_OMNI_CHAT_TEMPLATE)


def save_omni_processor(out: Path, processor_class: str, feature_extractor, tokenizer, chat_template: str) -> None:
    """Save the processor as the real checkpoint has it, with or without torchvision installed.

    An Omni processor cannot be built without torchvision (its video processor needs it), so
    without it the audio+text processor the loader falls back to is saved, and the config then
    names the real class with default image and video processor entries.
    """
    import transformers
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

        getattr(transformers, processor_class)(Qwen2VLImageProcessor(), Qwen2VLVideoProcessor(), feature_extractor,
                                               tokenizer, chat_template=chat_template).save_pretrained(out)
        return
    from ..qwen2_5_omni import audio_text_processor

    audio_text_processor(processor_class)(feature_extractor, tokenizer,
                                          chat_template=chat_template).save_pretrained(out)
    defaults = {"image_processor": {"image_processor_type": "Qwen2VLImageProcessor"},
                "video_processor": {"video_processor_type": "Qwen2VLVideoProcessor"}}
    for name, extra in (("processor_config.json", defaults), ("tokenizer_config.json", {})):
        config_path = out / name
        config = json.loads(config_path.read_text())
        config.update(processor_class=processor_class, **extra)
        config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
