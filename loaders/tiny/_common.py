"""What every tiny checkpoint builder shares: a byte-level vocabulary (any text encodes, no
merges, a few MB), vocabularies padded like real ones, and saving with a generation config."""
from __future__ import annotations

from pathlib import Path

#: The context every tiny checkpoint declares. Not the real checkpoint's: the byte-level vocabulary
#: spends about four tokens where a real tokenizer spends one, so at a real context (Qwen2-Audio's
#: 8192) every dev-set point but the shallowest would fail the context check, and a smoke test
#: would test nothing. The positions are rotary, so a longer context costs no weights.
CONTEXT = 32768


def byte_vocab() -> dict[str, int]:
    from tokenizers import pre_tokenizers

    return {symbol: index for index, symbol in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}


def padded(size: int, multiple: int = 64) -> int:
    return -(-size // multiple) * multiple


def save_model(model, out: Path, generation: dict) -> None:
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(**generation)
    model.save_pretrained(out)
