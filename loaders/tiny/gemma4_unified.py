"""Tiny Gemma 4 12B (google/gemma-4-12B-it layout): Gemma4UnifiedForConditionalGeneration +
Gemma4UnifiedProcessor, served by the `gemma4` loader (which reads config.json's model_type).

What is kept from the real checkpoint: the encoder-free architecture (no audio or vision tower:
audio is raw 16 kHz waveform cut into 640-sample = 40 ms frames, one soft token each, through
RMSNorm -> Linear), sliding and full attention layers with keys shared as values on the full
ones (`attention_k_eq_v`), the tokenizer's special tokens (the same as the E-series'), and the
processor settings of its processor_config.json (as mirrored in public copies):
`Gemma4UnifiedAudioFeatureExtractor()` defaults (feature_size 640, 16 kHz, right padding,
`audio_samples_per_token` 640), `image_seq_length=280`, `audio_seq_length=750`,
`audio_ms_per_token=40`, and its generation_config's end tokens.
"""
from __future__ import annotations

import json
from pathlib import Path

from ._common import CONTEXT, padded, save_model
from .gemma4 import AFTER_TOOLS, GEMMA4_TURNS_TEMPLATE, SPECIAL_TOKENS, _gemma4_tokenizer

PROCESSOR = "Gemma4UnifiedProcessor"
LOADER = "gemma4"  # one loader serves both Gemma 4 audio architectures

# Reconstructed, not copied: the 12B ships the same chat_template.jinja as gemma-4-26B-A4B-it
# (its hub discussion #53 says byte-identical), whose non-tool path renders like the E-series
# template (loaders/tiny/gemma4.py) except the generation prompt: with thinking off it pre-fills
# an empty, closed thought channel, `<|turn>model\n<|channel>thought\n<channel|>`, as the
# 26B/31B template's `{%- if not enable_thinking | default(false) -%}` branch does (quoted in
# public code, e.g. ollama's Gemma 4 renderer notes and llama.cpp's google-gemma-4-31B-it.jinja).
# Tool calling is the E-series' (loaders/tiny/gemma4.py: the 31B file has the same tool branches);
# reasoning replay in tool-call turns is left out: the benchmark sends none.
GEMMA4_UNIFIED_CHAT_TEMPLATE = GEMMA4_TURNS_TEMPLATE + (
    "{%- if add_generation_prompt and " + AFTER_TOOLS + " -%}"
    "{{- '<|turn>model\\n' -}}"
    "{%- if not (enable_thinking is defined and enable_thinking) -%}"
    "{{- '<|channel>thought\\n<channel|>' -}}"
    "{%- endif -%}"
    "{%- endif -%}"
)

# the real processor_config.json's image and video processor entries (loaded only with torchvision)
IMAGE_PROCESSOR = {"do_convert_rgb": True, "do_normalize": False, "do_rescale": True, "do_resize": True,
                   "image_mean": [0.0, 0.0, 0.0], "image_std": [1.0, 1.0, 1.0], "max_soft_tokens": 280,
                   "patch_size": 16, "pooling_kernel_size": 3, "resample": 3, "rescale_factor": 1 / 255}
VIDEO_PROCESSOR = {**IMAGE_PROCESSOR, "do_normalize": True, "do_sample_frames": True, "max_soft_tokens": 70,
                   "num_frames": 32, "return_metadata": False}


def build(out: Path) -> None:
    from transformers import (
        Gemma4UnifiedAudioFeatureExtractor,
        Gemma4UnifiedConfig,
        Gemma4UnifiedForConditionalGeneration,
    )

    tokenizer = _gemma4_tokenizer()
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in
           ("<pad>", "<eos>", "<bos>", "<turn|>", "<|tool_response>", "<|video|>", *SPECIAL_TOKENS.values())}
    vocab = padded(len(tokenizer))
    config = Gemma4UnifiedConfig(
        text_config={
            "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "layer_types": ["sliding_attention", "full_attention"], "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 16, "num_global_key_value_heads": 1,
            "attention_k_eq_v": True, "sliding_window": 64, "max_position_embeddings": CONTEXT,
            "final_logit_softcapping": 30.0,
            "pad_token_id": ids["<pad>"], "bos_token_id": ids["<bos>"], "eos_token_id": ids["<eos>"],
        },
        # the real patch geometry (16 px, 3x3 merge) so the saved image settings fit; a small width
        vision_config={"mm_embed_dim": 32, "mm_posemb_size": 64, "output_proj_dims": 32},
        audio_config={"audio_embed_dim": 640},  # = audio_samples_per_token, as in the real config
        image_token_id=ids["<|image|>"], boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"],
        audio_token_id=ids["<|audio|>"], boa_token_id=ids["<|audio>"], eoa_token_index=ids["<audio|>"],
        video_token_id=ids["<|video|>"], eos_token_id=[ids["<eos>"], ids["<turn|>"]],
    )
    model = Gemma4UnifiedForConditionalGeneration(config).eval()
    # the real generation_config: <eos>, <turn|> and <|tool_response> end a turn; the end-of-image
    # and end-of-audio markers are never generated
    save_model(model, out, {"eos_token_id": [ids["<eos>"], ids["<turn|>"], ids["<|tool_response>"]],
                             "pad_token_id": ids["<pad>"], "bos_token_id": ids["<bos>"],
                             "suppress_tokens": [ids["<audio|>"], ids["<image|>"]]}, tokenizer)
    _save_processor(out, Gemma4UnifiedAudioFeatureExtractor(), tokenizer)


def _save_processor(out: Path, feature_extractor, tokenizer) -> None:
    """Save the processor as the real checkpoint has it, with or without torchvision installed.

    Both the image and the video processor of this architecture need torchvision; without it the
    loader's fallback processor (audio and text only) is saved, and its config is then written
    under the real class name with the real image and video processor entries.
    """
    from transformers.utils import is_torchvision_available

    options = {"chat_template": GEMMA4_UNIFIED_CHAT_TEMPLATE, "image_seq_length": 280, "audio_seq_length": 750,
               "audio_ms_per_token": 40}
    if is_torchvision_available():
        from transformers import (
            Gemma4UnifiedImageProcessor,
            Gemma4UnifiedProcessor,
            Gemma4UnifiedVideoProcessor,
        )

        Gemma4UnifiedProcessor(feature_extractor, Gemma4UnifiedImageProcessor(**IMAGE_PROCESSOR), tokenizer,
                               Gemma4UnifiedVideoProcessor(**VIDEO_PROCESSOR), **options).save_pretrained(out)
        return
    from ..gemma4 import Gemma4UnifiedAudioTextProcessor

    Gemma4UnifiedAudioTextProcessor(feature_extractor, tokenizer, **options).save_pretrained(out)
    vision = {"image_processor": {**IMAGE_PROCESSOR, "image_processor_type": "Gemma4UnifiedImageProcessor"},
              "video_processor": {**VIDEO_PROCESSOR, "video_processor_type": "Gemma4UnifiedVideoProcessor"}}
    for name, extra in (("processor_config.json", vision), ("tokenizer_config.json", {})):
        path = out / name
        config = {**json.loads(path.read_text()), "processor_class": PROCESSOR, **extra}
        path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
