"""Tiny Qwen3-Omni-30B-A3B (Instruct and Thinking share the thinker): the real checkpoint's layout
(a `Qwen3OmniMoeConfig` whose weights are `thinker.*`), a 2-layer MoE thinker, and
Qwen3OmniMoeProcessor with the real feature extractor."""
from __future__ import annotations

from pathlib import Path

from ._common import CONTEXT, padded, save_model
from .qwen2_5_omni import FEATURE_EXTRACTOR, omni_tokenizer, save_omni_processor, token_ids

PROCESSOR = "Qwen3OmniMoeProcessor"
# The processor class cannot be built without torchvision (its video processor needs it): then
# the loader and `save_omni_processor` use its audio+text part, and AutoProcessor cannot load it.
NEEDS_TORCHVISION = True

# Reconstructed (the checkpoints' chat_template.json was not readable offline) from what is known
# of it: the Qwen3 template (system turn first, reasoning kept only after the last string-valued
# user query, `enable_thinking=false` closing an empty think block) with Omni content parts, audio
# as <|audio_start|><|audio_pad|><|audio_end|>. The tool branches follow Qwen/Qwen3-Omni-30B-A3B-
# Thinking's chat_template.json as a public test fixture copies it (TheDoctor-JI/Qwen3-Omni,
# tests/fixtures/thinking_chat_template.json): with `tools`, the system turn holds the system prompt,
# a blank line and the tools as JSON lines inside <tools></tools> with the instruction to answer
# in <tool_call></tool_call>; an assistant turn's calls follow its text, one
# `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>` each, newline-separated; consecutive
# tool results share one user turn, each as `\n<tool_response>\n...\n</tool_response>`.
QWEN3_OMNI_CHAT_TEMPLATE = (
    "{%- macro render(content) -%}"
    "{%- if content is string -%}{{- content -}}"
    "{%- else -%}{%- for part in content -%}"
    "{%- if part.type == 'audio' or 'audio' in part or 'audio_url' in part -%}"
    "{{- '<|audio_start|><|audio_pad|><|audio_end|>' -}}"
    "{%- elif part.type == 'image' or 'image' in part or 'image_url' in part -%}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif part.type == 'video' or 'video' in part -%}"
    "{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}"
    "{%- elif 'text' in part -%}{{- part.text -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{%- endmacro -%}"
    "{%- if tools -%}"
    "{{- '<|im_start|>system\\n' -}}"
    "{%- if messages[0].role == 'system' -%}{{- render(messages[0].content) + '\\n\\n' -}}{%- endif -%}"
    "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n'"
    " + 'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' -}}"
    "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments'"
    " + ' within <tool_call></tool_call> XML tags:\\n<tool_call>\\n'"
    " + '{\"name\": <function-name>, \"arguments\": <args-json-object>}\\n</tool_call><|im_end|>\\n' -}}"
    "{%- elif messages[0].role == 'system' -%}"
    "{{- '<|im_start|>system\\n' + render(messages[0].content) + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) -%}"
    "{%- for message in messages[::-1] -%}"
    "{%- set index = (messages|length - 1) - loop.index0 -%}"
    "{%- if ns.multi_step_tool and message.role == 'user' and message.content is string"
    " and not (message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) -%}"
    "{%- set ns.multi_step_tool = false -%}{%- set ns.last_query_index = index -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- for message in messages -%}"
    "{%- set content = render(message.content) -%}"
    "{%- if message.role == 'user' or (message.role == 'system' and not loop.first) -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' -}}"
    "{%- elif message.role == 'assistant' -%}"
    "{%- set reasoning_content = '' -%}"
    "{%- if message.reasoning_content is string -%}{%- set reasoning_content = message.reasoning_content -%}"
    "{%- elif '</think>' in content -%}"
    "{%- set reasoning_content = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') -%}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') -%}"
    "{%- endif -%}"
    "{%- if loop.index0 > ns.last_query_index and (loop.last or reasoning_content) -%}"
    "{{- '<|im_start|>assistant\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n'"
    " + content.lstrip('\\n') -}}"
    "{%- else -%}{{- '<|im_start|>assistant\\n' + content -}}{%- endif -%}"
    "{%- for tool_call in message.tool_calls or [] -%}"
    "{%- if not loop.first or content -%}{{- '\\n' -}}{%- endif -%}"
    "{%- set tool_call = tool_call.function if tool_call.function else tool_call -%}"
    "{{- '<tool_call>\\n{\"name\": \"' + tool_call.name + '\", \"arguments\": ' -}}"
    "{{- tool_call.arguments if tool_call.arguments is string else tool_call.arguments | tojson -}}"
    "{{- '}\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- elif message.role == 'tool' -%}"
    "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}"
    "{{- '\\n<tool_response>\\n' + content + '\\n</tool_response>' -}}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}{{- '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}"
    "{{- '<think>\\n\\n</think>\\n\\n' -}}{%- endif -%}"
    "{%- endif -%}"
)

# The real preprocessor_config.json's audio settings are Qwen2.5-Omni's (feature_size 128,
# n_samples 4800000); the Qwen3 processor itself pads to the longest clip and never cuts.
NAMED_TOKENS = {"image_token": "<|image_pad|>", "audio_token": "<|audio_pad|>", "video_token": "<|video_pad|>",
                "vision_bos_token": "<|vision_start|>", "vision_eos_token": "<|vision_end|>",
                "audio_bos_token": "<|audio_start|>", "audio_eos_token": "<|audio_end|>"}


def build(out: Path) -> None:
    from transformers import (
        Qwen3OmniMoeConfig,
        Qwen3OmniMoeForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    tokenizer = omni_tokenizer(NAMED_TOKENS, [])
    # plain added tokens in Qwen3's vocabulary, not special
    tokenizer.add_tokens(["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"])
    ids, special = token_ids(tokenizer, NAMED_TOKENS)
    thinker = {
        # at the real 0.02 a 1-layer random encoder barely moves the logits; tests must see audio
        "audio_config": {"d_model": 32, "encoder_layers": 1, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                         "num_mel_bins": 128, "max_source_positions": 1500, "n_window": 50, "n_window_infer": 800,
                         "conv_chunksize": 500, "downsample_hidden_size": 8, "output_dim": 32,
                         "initializer_range": 0.2},
        "vision_config": {"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                          "out_hidden_size": 32, "num_position_embeddings": 64, "deepstack_visual_indexes": [0]},
        "text_config": {"vocab_size": padded(len(tokenizer)), "hidden_size": 32, "intermediate_size": 64,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                        "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
                        "max_position_embeddings": CONTEXT,
                        "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 1, 1]},
                        **special},
        "audio_token_id": ids["<|audio_pad|>"], "image_token_id": ids["<|image_pad|>"],
        "video_token_id": ids["<|video_pad|>"], "audio_start_token_id": ids["<|audio_start|>"],
        "vision_start_token_id": ids["<|vision_start|>"], "position_id_per_seconds": 13,
    }
    # Thinker only, as the Thinking checkpoint ships (Instruct adds talker and code2wav weights,
    # which the loader never builds).
    config = Qwen3OmniMoeConfig(thinker_config=thinker, enable_audio_output=False,
                                im_start_token_id=ids["<|im_start|>"], im_end_token_id=ids["<|im_end|>"])
    model = Qwen3OmniMoeForConditionalGeneration(config).eval()
    # Like Qwen2.5-Omni's, the generation config names no token ids; the loader supplies them.
    save_model(model, out, {}, tokenizer)
    save_omni_processor(out, PROCESSOR, WhisperFeatureExtractor(**FEATURE_EXTRACTOR), tokenizer,
                        QWEN3_OMNI_CHAT_TEMPLATE)
