"""Tiny Qwen2-Audio-7B-Instruct: Qwen2AudioForConditionalGeneration + Qwen2AudioProcessor."""
from __future__ import annotations

from pathlib import Path

from ._common import CONTEXT, byte_vocab, padded, save_model

PROCESSOR = "Qwen2AudioProcessor"

# Qwen2-Audio-7B-Instruct's template: ChatML, one "Audio N:" line per clip.
QWEN2_AUDIO_CHAT_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}"
    "Audio {{ audio_count.value }}: <|audio_bos|><|AUDIO|><|audio_eos|>\n"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

def build(out: Path) -> None:
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        Qwen2Tokenizer,
        WhisperFeatureExtractor,
    )

    tokenizer = Qwen2Tokenizer(
        vocab=byte_vocab(), merges=[],
        extra_special_tokens=["<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"],
    )
    processor = Qwen2AudioProcessor(WhisperFeatureExtractor(feature_size=128), tokenizer,
                                    chat_template=QWEN2_AUDIO_CHAT_TEMPLATE)
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in ("<|endoftext|>", "<|im_end|>", "<|AUDIO|>")}
    config = Qwen2AudioConfig(
        audio_config={"d_model": 32, "encoder_layers": 1, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                      "num_mel_bins": 128, "max_source_positions": 1500},
        text_config={"model_type": "qwen2", "vocab_size": padded(len(tokenizer)), "hidden_size": 32,
                     "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "max_position_embeddings": CONTEXT,
                     "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"]},
        audio_token_index=ids["<|AUDIO|>"],
    )
    model = Qwen2AudioForConditionalGeneration(config).eval()
    save_model(model, out, {"eos_token_id": [ids["<|im_end|>"], ids["<|endoftext|>"]],
                             "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<|endoftext|>"]}, tokenizer)
    processor.save_pretrained(out)
