"""Tiny text-only Qwen2 causal LM: stands in for a local judge model (`--judge-backend transformers`)."""
from __future__ import annotations

from pathlib import Path

from ._common import CONTEXT, byte_vocab, padded, save_model

PROCESSOR = None  # a tokenizer only

TEXT_CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                      "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def build(out: Path) -> None:
    from transformers import Qwen2Config, Qwen2ForCausalLM, Qwen2Tokenizer

    tokenizer = Qwen2Tokenizer(vocab=byte_vocab(), merges=[], extra_special_tokens=["<|im_start|>", "<|im_end|>"])
    tokenizer.chat_template = TEXT_CHAT_TEMPLATE
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in ("<|endoftext|>", "<|im_end|>")}
    config = Qwen2Config(vocab_size=padded(len(tokenizer)), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=CONTEXT,
                         bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
                         pad_token_id=ids["<|endoftext|>"])
    save_model(Qwen2ForCausalLM(config).eval(), out, {"eos_token_id": ids["<|im_end|>"],
                                                        "pad_token_id": ids["<|endoftext|>"]}, tokenizer)
    tokenizer.save_pretrained(out)
