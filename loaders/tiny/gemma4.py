"""Tiny Gemma 4 (E2B/E4B-it layout): Gemma4ForConditionalGeneration + Gemma4Processor.

The architecture keeps what the audio-capable checkpoints have: an audio tower (conformer +
two stride-2 convs, 40 ms an audio token), a vision tower, per-layer input embeddings, sliding
and full attention layers. The feature extractor is `Gemma4AudioFeatureExtractor()` with its
defaults, which is how transformers' conversion script builds the real checkpoints' one
(128 mel bins, 16 kHz, 20 ms frames, 10 ms hops, clips cut at 480,000 samples = 30 s); the
processor keeps the real `image_seq_length=280`, `audio_seq_length=750`, `audio_ms_per_token=40`.
"""
from __future__ import annotations

import json
from pathlib import Path

from ._common import CONTEXT, byte_vocab, padded, save_model

PROCESSOR = "Gemma4Processor"

# The special tokens the real tokenizer names (transformers' convert_gemma4_weights.py).
SPECIAL_TOKENS = {
    "image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
    "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>",
    "sot_token": "<|turn>", "eot_token": "<turn|>", "soc_token": "<|channel>", "eoc_token": "<channel|>",
    "think_token": "<|think|>", "escape_token": '<|"|>', "str_token": "<|tool_response>",
    "etr_token": "<tool_response|>", "stc_token": "<|tool_call>", "etc_token": "<tool_call|>",
    "std_token": "<|tool>", "etd_token": "<tool|>",
}

# Reconstructed from the chat_template.jinja of google/gemma-4-E4B-it (as quoted in public code
# and Google's "Gemma 4 prompt formatting" page), minus tool calling: <bos>; one system turn
# holding <|think|> when `enable_thinking` and the system prompt; turns as
# <|turn>{user|model}\n...<turn|>\n with text trimmed, thoughts stripped from model turns and
# one <|audio|> per audio part; the generation prompt <|turn>model\n. (The E-series template
# ends there; the 26B/31B template also pre-fills an empty <|channel>thought\n<channel|> when
# thinking is off.) `GEMMA4_TURNS_TEMPLATE` is all but the generation prompt, which the 12B
# (loaders/tiny/gemma4_unified.py) renders differently.
GEMMA4_TURNS_TEMPLATE = (
    "{%- macro strip_thinking(text) -%}"
    "{%- set ns = namespace(result='') -%}"
    "{%- for part in text.split('<channel|>') -%}"
    "{%- if '<|channel>' in part -%}{%- set ns.result = ns.result + part.split('<|channel>')[0] -%}"
    "{%- else -%}{%- set ns.result = ns.result + part -%}{%- endif -%}"
    "{%- endfor -%}"
    "{{- ns.result | trim -}}"
    "{%- endmacro -%}"
    "{%- set loop_messages = messages -%}"
    "{{- bos_token -}}"
    "{%- if (enable_thinking is defined and enable_thinking) or messages[0]['role'] in ['system', 'developer'] -%}"
    "{{- '<|turn>system\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking -%}{{- '<|think|>\\n' -}}{%- endif -%}"
    "{%- if messages[0]['role'] in ['system', 'developer'] -%}"
    "{{- messages[0]['content'] | trim -}}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- endif -%}"
    "{{- '<turn|>\\n' -}}"
    "{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{- '<|turn>' + role + '\\n' -}}"
    "{%- if message['content'] is string -%}"
    "{%- if role == 'model' -%}{{- strip_thinking(message['content']) -}}"
    "{%- else -%}{{- message['content'] | trim -}}{%- endif -%}"
    "{%- elif message['content'] is sequence -%}"
    "{%- for item in message['content'] -%}"
    "{%- if item['type'] == 'text' -%}"
    "{%- if role == 'model' -%}{{- strip_thinking(item['text']) -}}{%- else -%}{{- item['text'] | trim -}}{%- endif -%}"
    "{%- elif item['type'] == 'image' -%}{{- '<|image|>' -}}"
    "{%- elif item['type'] == 'audio' -%}{{- '<|audio|>' -}}"
    "{%- elif item['type'] == 'video' -%}{{- '<|video|>' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- endif -%}"
    "{{- '<turn|>\\n' -}}"
    "{%- endfor -%}"
)
GEMMA4_CHAT_TEMPLATE = GEMMA4_TURNS_TEMPLATE + "{%- if add_generation_prompt -%}{{- '<|turn>model\\n' -}}{%- endif -%}"


def _gemma4_tokenizer():
    """The real tokenizer class (a BPE with byte fallback and "▁" for spaces) on a vocabulary of
    the real leading specials (<pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4), the family's
    control tokens, the byte-fallback pieces, "▁" and the byte-level symbols: any text encodes."""
    from transformers import GemmaTokenizer

    tokens = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", *SPECIAL_TOKENS.values(), "<|video|>"]
    tokens += [f"<0x{byte:02X}>" for byte in range(256)] + ["▁"]
    tokens += [symbol for symbol in byte_vocab() if symbol not in tokens]
    return GemmaTokenizer(vocab={token: index for index, token in enumerate(tokens)}, merges=[],
                          add_bos_token=False, padding_side="left", extra_special_tokens=SPECIAL_TOKENS)


def build(out: Path) -> None:
    from transformers import (
        Gemma4AudioFeatureExtractor,
        Gemma4Config,
        Gemma4ForConditionalGeneration,
    )

    tokenizer = _gemma4_tokenizer()
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in
           ("<pad>", "<eos>", "<bos>", "<turn|>", "<|tool_response>", *SPECIAL_TOKENS.values())}
    vocab = padded(len(tokenizer))
    config = Gemma4Config(
        text_config={
            "vocab_size": vocab, "vocab_size_per_layer_input": vocab, "hidden_size": 32,
            "hidden_size_per_layer_input": 8, "intermediate_size": 64, "num_hidden_layers": 2,
            "layer_types": ["sliding_attention", "full_attention"], "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 16, "sliding_window": 64,
            "max_position_embeddings": CONTEXT, "final_logit_softcapping": 30.0,
            "pad_token_id": ids["<pad>"], "bos_token_id": ids["<bos>"], "eos_token_id": ids["<eos>"],
        },
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                       "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 16,
                       "position_embedding_size": 64},
        audio_config={"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                      # channel 0 must stay 128 (= mel bins): the projection assumes it
                      "subsampling_conv_channels": [128, 4], "output_proj_dims": 32,
                      # at the real 0.02 a 1-layer random encoder barely moves the logits; tests must see audio
                      "initializer_range": 0.2},
        image_token_id=ids["<|image|>"], boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"],
        audio_token_id=ids["<|audio|>"], boa_token_id=ids["<|audio>"], eoa_token_index=ids["<audio|>"],
        video_token_id=tokenizer.convert_tokens_to_ids("<|video|>"),
        eos_token_id=[ids["<eos>"], ids["<turn|>"]],
    )
    model = Gemma4ForConditionalGeneration(config).eval()
    # the real generation_config: <eos>, <turn|> and <|tool_response> end a turn
    save_model(model, out, {"eos_token_id": [ids["<eos>"], ids["<turn|>"], ids["<|tool_response>"]],
                             "pad_token_id": ids["<pad>"], "bos_token_id": ids["<bos>"]})
    _save_gemma4_processor(out, Gemma4AudioFeatureExtractor(), tokenizer)


def _save_gemma4_processor(out: Path, feature_extractor, tokenizer) -> None:
    """Save the processor as the real checkpoint has it, with or without torchvision installed.

    Gemma4Processor cannot be built without torchvision (its video processor needs it), so
    without it the processor the loader falls back to (no video processor) is saved, and the
    config is then written under the real class name with a default video processor entry.
    """
    from transformers.utils import is_torchvision_available

    image_processor = _image_processor()
    options = {"chat_template": GEMMA4_CHAT_TEMPLATE, "image_seq_length": 280, "audio_seq_length": 750,
               "audio_ms_per_token": 40}
    if is_torchvision_available():
        from transformers import Gemma4Processor, Gemma4VideoProcessor

        Gemma4Processor(feature_extractor, image_processor, tokenizer, Gemma4VideoProcessor(),
                        **options).save_pretrained(out)
        return
    from ..gemma4 import Gemma4AudioTextProcessor

    Gemma4AudioTextProcessor(feature_extractor, image_processor, tokenizer, **options).save_pretrained(out)
    for name, extra in (("processor_config.json", {"video_processor": {"video_processor_type": "Gemma4VideoProcessor"}}),
                        ("tokenizer_config.json", {})):
        path = out / name
        config = {**json.loads(path.read_text()), "processor_class": "Gemma4Processor", **extra}
        path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def _image_processor():
    """The real checkpoints' image processor settings; the PIL backend when torchvision is missing."""
    from transformers.utils import is_torchvision_available

    settings = {"image_seq_length": 280, "do_normalize": False, "max_soft_tokens": 280, "pooling_kernel_size": 3}
    if is_torchvision_available():
        from transformers import Gemma4ImageProcessor

        return Gemma4ImageProcessor(**settings)
    from transformers.models.gemma4.image_processing_pil_gemma4 import (
        Gemma4ImageProcessorPil,
    )

    return Gemma4ImageProcessorPil(**settings)
