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
# and Google's "Gemma 4 prompt formatting" page): <bos>; one system turn holding <|think|> when
# `enable_thinking`, the system prompt and the tool declarations; turns as
# <|turn>{user|model}\n...<turn|>\n with text trimmed, thoughts stripped from model turns and
# one <|audio|> per audio part; the generation prompt <|turn>model\n. (The E-series template
# ends there; the 26B/31B template also pre-fills an empty <|channel>thought\n<channel|> when
# thinking is off.) `GEMMA4_TURNS_TEMPLATE` is all but the generation prompt, which the 12B
# (loaders/tiny/gemma4_unified.py) renders differently.
#
# The tool branches follow the E2B/E4B chat_template.jinja as public code copies it whole (e.g. a
# llama.cpp runtime's built-in fallback of google/gemma-4-E2B-it's file, and llama.cpp's
# models/templates/google-gemma-4-31B-it.jinja, which has the same branches): each tool in the
# system turn as <|tool>declaration:NAME{description:<|"|>...<|"|>,parameters:{properties:{KEY:
# {description:...,type:<|"|>STRING<|"|>},...},required:[...],type:<|"|>OBJECT<|"|>}}<tool|>
# (keys sorted, types upper-cased; nested object and array schemas are left out here, the
# benchmark's parameters are flat); a call as <|tool_call>call:NAME{key:value,...}<tool_call|>
# with bare sorted keys and strings between <|"|> tokens (a string of arguments pasted as is);
# the results of the tool messages that follow, inside the same model turn, as
# <|tool_response>response:NAME{value:<|"|>...<|"|>}<tool_response|> (a mapping as its own
# key:value fields); a model turn that only called stays open, the next reply continues it, and
# no generation prompt follows a call or a result.
GEMMA4_TURNS_TEMPLATE = (
    "{%- macro strip_thinking(text) -%}"
    "{%- set ns = namespace(result='') -%}"
    "{%- for part in text.split('<channel|>') -%}"
    "{%- if '<|channel>' in part -%}{%- set ns.result = ns.result + part.split('<|channel>')[0] -%}"
    "{%- else -%}{%- set ns.result = ns.result + part -%}{%- endif -%}"
    "{%- endfor -%}"
    "{{- ns.result | trim -}}"
    "{%- endmacro -%}"
    "{%- macro value(item) -%}"
    "{%- if item is string -%}{{- '<|\"|>' + item + '<|\"|>' -}}"
    "{%- elif item is boolean -%}{{- 'true' if item else 'false' -}}"
    "{%- elif item is mapping -%}{{- '{' + fields(item) + '}' -}}"
    "{%- elif item is sequence -%}"
    "{{- '[' -}}{%- for each in item -%}{{- value(each) -}}{{- ',' if not loop.last -}}{%- endfor -%}{{- ']' -}}"
    "{%- else -%}{{- item -}}{%- endif -%}"
    "{%- endmacro -%}"
    "{%- macro fields(mapping) -%}"
    "{%- for key, item in mapping | dictsort -%}{{- key + ':' + value(item) -}}{{- ',' if not loop.last -}}{%- endfor -%}"
    "{%- endmacro -%}"
    "{%- macro declaration(tool) -%}"
    "{%- set function = tool['function'] -%}"
    "{%- set params = function['parameters'] -%}"
    "{{- 'declaration:' + function['name'] + '{description:<|\"|>' + function['description'] + '<|\"|>' -}}"
    "{%- if params -%}"
    "{{- ',parameters:{' -}}"
    "{%- if params['properties'] -%}"
    "{{- 'properties:{' -}}"
    "{%- for key, field in params['properties'] | dictsort -%}"
    "{{- key + ':{' -}}"
    "{%- if field['description'] -%}{{- 'description:<|\"|>' + field['description'] + '<|\"|>,' -}}{%- endif -%}"
    "{%- if field['enum'] -%}{{- 'enum:' + value(field['enum']) + ',' -}}{%- endif -%}"
    "{{- 'type:<|\"|>' + field['type'] | upper + '<|\"|>}' -}}{{- ',' if not loop.last -}}"
    "{%- endfor -%}"
    "{{- '},' -}}"
    "{%- endif -%}"
    "{%- if params['required'] -%}{{- 'required:' + value(params['required']) + ',' -}}{%- endif -%}"
    "{%- if params['type'] -%}{{- 'type:<|\"|>' + params['type'] | upper + '<|\"|>}' -}}{%- endif -%}"
    "{%- endif -%}"
    "{{- '}' -}}"
    "{%- endmacro -%}"
    "{%- macro response(name, body) -%}"
    "{{- '<|tool_response>response:' + name + '{' -}}"
    "{{- fields(body) if body is mapping else 'value:' + value(body) -}}"
    "{{- '}<tool_response|>' -}}"
    "{%- endmacro -%}"
    "{%- set ns = namespace(prev=None, responded=false) -%}"
    "{%- set loop_messages = messages -%}"
    "{{- bos_token -}}"
    "{%- if (enable_thinking is defined and enable_thinking) or tools"
    " or messages[0]['role'] in ['system', 'developer'] -%}"
    "{{- '<|turn>system\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking -%}{{- '<|think|>\\n' -}}{%- endif -%}"
    "{%- if messages[0]['role'] in ['system', 'developer'] -%}"
    "{{- messages[0]['content'] | trim -}}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- endif -%}"
    "{%- for tool in tools or [] -%}{{- '<|tool>' + declaration(tool) | trim + '<tool|>' -}}{%- endfor -%}"
    "{{- '<turn|>\\n' -}}"
    "{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- if message['role'] != 'tool' -%}"
    "{%- set index = loop.index0 -%}"
    "{%- set ns.prev = None -%}{%- set ns.responded = false -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{%- set earlier = loop_messages[:index] | rejectattr('role', 'equalto', 'tool') | list -%}"
    "{%- if not (role == 'model' and earlier and earlier[-1]['role'] == 'assistant') -%}"
    "{{- '<|turn>' + role + '\\n' -}}"
    "{%- endif -%}"
    "{%- for tool_call in message['tool_calls'] or [] -%}"
    "{%- set function = tool_call['function'] -%}"
    "{{- '<|tool_call>call:' + function['name'] + '{' -}}"
    "{%- if function['arguments'] is mapping -%}{{- fields(function['arguments']) -}}"
    "{%- elif function['arguments'] is string -%}{{- function['arguments'] -}}{%- endif -%}"
    "{{- '}<tool_call|>' -}}"
    "{%- set ns.prev = 'tool_call' -%}"
    "{%- endfor -%}"
    "{%- if message['tool_calls'] -%}"
    "{%- set scan = namespace(open=true, name='unknown') -%}"
    "{%- for follow in loop_messages[index + 1:] -%}"
    "{%- if follow['role'] != 'tool' -%}{%- set scan.open = false -%}{%- endif -%}"
    "{%- if scan.open -%}"
    "{%- set scan.name = follow['name'] or 'unknown' -%}"
    "{%- for tool_call in message['tool_calls'] -%}"
    "{%- if tool_call['id'] == follow['tool_call_id'] -%}{%- set scan.name = tool_call['function']['name'] -%}{%- endif -%}"
    "{%- endfor -%}"
    "{{- response(scan.name, follow['content']) -}}"
    "{%- set ns.prev = 'tool_response' -%}{%- set ns.responded = true -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- endif -%}"
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
    "{%- if ns.prev == 'tool_call' and not ns.responded -%}{{- '<|tool_response>' -}}"
    "{%- elif not (ns.responded and not message['content']) -%}{{- '<turn|>\\n' -}}"
    "{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
)
#: no generation prompt after a call or a result: the model goes on inside the same turn
AFTER_TOOLS = "ns.prev not in ['tool_call', 'tool_response']"
GEMMA4_CHAT_TEMPLATE = GEMMA4_TURNS_TEMPLATE + (
    "{%- if add_generation_prompt and " + AFTER_TOOLS + " -%}{{- '<|turn>model\\n' -}}{%- endif -%}")


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
                             "pad_token_id": ids["<pad>"], "bos_token_id": ids["<bos>"]}, tokenizer)
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
