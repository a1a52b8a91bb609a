"""Tiny Voxtral-Mini-3B-2507 / Voxtral-Small-24B-2507: VoxtralForConditionalGeneration + VoxtralProcessor.

The real checkpoints ship no Jinja chat template and no HF tokenizer files: the prompt layout comes
from mistral-common (the `tekken.json` tokenizer, version v7, read by transformers'
MistralCommonBackend), so the tiny checkpoint ships a tiny `tekken.json` of the same format: the
256 single bytes (ranks 0-255 in byte order, as the real file starts; no merges) behind the real
1000 special-token slots, with the special tokens at the real ids ([AUDIO] = 24 is hard-coded in
VoxtralProcessor) and the real `audio` section (16 kHz, 12.5 audio tokens a second, 128 mel bins,
audio padded to whole 30 s windows). Special-token ranks 0-19 are mistral-common's standard tekken
set; [AUDIO] 24, [BEGIN_AUDIO] 25 and [TRANSCRIBE] 34 are Voxtral's (reconstructed from public
code: transformers' converter and third-party Voxtral ports; other slots are fillers).
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

from ._common import CONTEXT, save_model

PROCESSOR = "VoxtralProcessor"

NUM_SPECIAL_TOKENS = 1000  # as the real tekken.json: byte b is token 1000 + b there too
# the real tekken pre-tokenizer pattern (mistral-common's own tekken files carry the same one)
TEKKEN_PATTERN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
                  r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL_TOKENS = {
    0: "<unk>", 1: "<s>", 2: "</s>", 3: "[INST]", 4: "[/INST]", 5: "[AVAILABLE_TOOLS]",
    6: "[/AVAILABLE_TOOLS]", 7: "[TOOL_RESULTS]", 8: "[/TOOL_RESULTS]", 9: "[TOOL_CALLS]", 10: "[IMG]",
    11: "<pad>", 12: "[IMG_BREAK]", 13: "[IMG_END]", 14: "[PREFIX]", 15: "[MIDDLE]", 16: "[SUFFIX]",
    17: "[SYSTEM_PROMPT]", 18: "[/SYSTEM_PROMPT]", 19: "[TOOL_CONTENT]",
    24: "[AUDIO]", 25: "[BEGIN_AUDIO]", 34: "[TRANSCRIBE]",
}
# Voxtral's tekken.json audio section: 16 kHz, 12.5 tokens/s, Whisper-style 128-bin log-mel, and
# every clip padded to a whole number of 30 s windows (375 audio tokens each).
AUDIO = {"sampling_rate": 16000, "frame_rate": 12.5, "chunk_length_s": 30.0,
         "audio_encoding_config": {"num_mel_bins": 128, "hop_length": 160, "window_size": 400}}
BOS, EOS, PAD, AUDIO_TOKEN = 1, 2, 11, 24


def tekken_json() -> dict:
    special = [{"rank": rank, "token_str": SPECIAL_TOKENS.get(rank, f"<SPECIAL_{rank}>"), "is_control": True}
               for rank in range(NUM_SPECIAL_TOKENS)]
    vocab = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(),
              "token_str": bytes([b]).decode("latin-1") if b < 128 else None} for b in range(256)]
    return {"config": {"pattern": TEKKEN_PATTERN, "num_vocab_tokens": len(vocab),
                       "default_vocab_size": NUM_SPECIAL_TOKENS + len(vocab),
                       "default_num_special_tokens": NUM_SPECIAL_TOKENS, "version": "v7"},
            "vocab": vocab, "special_tokens": special, "audio": AUDIO}


def build(out: Path) -> None:
    from transformers import (
        MistralCommonBackend,
        VoxtralConfig,
        VoxtralForConditionalGeneration,
        VoxtralProcessor,
        WhisperFeatureExtractor,
    )

    out = Path(out)
    tekken = out / "tekken.json"
    tekken.write_text(json.dumps(tekken_json(), ensure_ascii=False), encoding="utf-8")
    tokenizer = MistralCommonBackend(tokenizer_path=str(tekken))
    # the real preprocessor_config.json: WhisperFeatureExtractor, 128 mel bins, 30 s chunks, 16 kHz
    processor = VoxtralProcessor(WhisperFeatureExtractor(feature_size=128), tokenizer)
    config = VoxtralConfig(
        # intermediate = 4 x hidden as in the real encoder (1280 -> 5120): the projector stacks 4
        # encoder frames into one audio token, 1500 frames -> 375 tokens per 30 s window
        audio_config={"hidden_size": 32, "intermediate_size": 128, "num_hidden_layers": 1,
                      "num_attention_heads": 2, "num_mel_bins": 128, "max_source_positions": 1500,
                      # at the real 0.02 a 1-layer random encoder barely moves the logits; tests must see audio
                      "initializer_range": 0.2},
        text_config={"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 32,
                     "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": CONTEXT,
                     "bos_token_id": BOS, "eos_token_id": EOS, "pad_token_id": PAD},
        audio_token_id=AUDIO_TOKEN, projector_hidden_act="gelu",
    )
    model = VoxtralForConditionalGeneration(config).eval()
    # the real generation_config.json: bos 1, eos 2, pad 11
    save_model(model, out, {"bos_token_id": BOS, "eos_token_id": EOS, "pad_token_id": PAD}, tokenizer)
    processor.save_pretrained(out)
