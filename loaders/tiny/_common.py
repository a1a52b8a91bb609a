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


def save_model(model, out: Path, generation: dict, tokenizer=None) -> None:
    from transformers import GenerationConfig

    if tokenizer is not None:
        writes_words(model, tokenizer, generation.get("eos_token_id"))
    model.generation_config = GenerationConfig(**generation)
    model.save_pretrained(out)


def writes_words(model, tokenizer, ends=None) -> None:
    """The output rows of every token that writes no letter or digit (a byte of a character cut in pieces, U+FFFD
    alone, a space, a sign, a special token removed from the answer) zeroed but the turn's ends (`ends`, the
    tokenizer's eos): random weights then answer in letters and digits. An answer without words is a failed item
    (battery 64, K1), and a smoke run of a byte-level tiny model (Voxtral's tekken) failed on every item. A head tied
    to the input embeddings is left as it is: zeroed rows would silence those tokens in the prompt too."""
    import torch

    from ihbench.dataset.checks.words import has_words

    language = getattr(model, "thinker", model)  # an Omni model's text is its thinker's
    head, inputs = language.get_output_embeddings(), language.get_input_embeddings()
    if head is None or inputs is None or head.weight.data_ptr() == inputs.weight.data_ptr():
        return
    kept = {tokenizer.eos_token_id, *(ends if isinstance(ends, list) else [ends])} - {None}
    silent = [index for index in range(min(len(tokenizer), head.weight.shape[0])) if index not in kept
              and not has_words(tokenizer.decode([index], skip_special_tokens=True))]
    with torch.no_grad():
        head.weight[silent] = 0.0
