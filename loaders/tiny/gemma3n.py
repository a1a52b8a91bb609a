"""Tiny Gemma 3n (E2B/E4B-it layout): Gemma3nForConditionalGeneration + Gemma3nProcessor.

The text model keeps Gemma 3n's parts (AltUp, LAuReL, per-layer inputs, activation sparsity,
sliding and full attention) and the token layout the multimodal embedders rely on: the text
vocabulary, then 128 vision ids (<end_of_image>, <image_soft_token>, ...), then 128 audio ids
(<end_of_audio>, <audio_soft_token>, ...). The weights are built without the vision tower (see
`loaders.gemma3n`): the config still describes the real MobileNetV5 one. The feature extractor
is `Gemma3nAudioFeatureExtractor()` and the image processor has the settings transformers'
conversion script gives the real checkpoints; the processor puts 188 audio tokens per clip.
"""
from __future__ import annotations

import json
from pathlib import Path

from ._common import CONTEXT, byte_vocab, padded, save_model

PROCESSOR = "Gemma3nProcessor"

SPECIAL_TOKENS = {"image_token": "<image_soft_token>", "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                  "audio_token": "<audio_soft_token>", "boa_token": "<start_of_audio>", "eoa_token": "<end_of_audio>"}
MULTIMODAL_VOCAB = 128  # ids each of the vision and audio embedders own, as in the real config

# google/gemma-3n-E4B-it's template, as transformers' convert_gemma3n_weights.py writes it: no
# system turn (the system prompt opens the first turn, then a blank line), roles must alternate,
# "assistant" is "model", one <audio_soft_token> per audio part.
GEMMA3N_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- if messages[0]['content'] is string -%}{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}"
    "{%- else -%}{%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}{%- endif -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{%- endif -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}"
    "{%- if message['content'] is string -%}{{ message['content'] | trim }}"
    "{%- elif message['content'] is iterable -%}"
    "{%- for item in message['content'] -%}"
    "{%- if item['type'] == 'audio' -%}{{ '<audio_soft_token>' }}"
    "{%- elif item['type'] == 'image' -%}{{ '<image_soft_token>' }}"
    "{%- elif item['type'] == 'text' -%}{{ item['text'] | trim }}{%- endif -%}"
    "{%- endfor -%}"
    "{%- else -%}{{ raise_exception('Invalid content type') }}{%- endif -%}"
    "{{ '<end_of_turn>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)


def _gemma3n_tokenizer():
    """The real tokenizer class (BPE, byte fallback, "▁" for spaces, adds <bos>) on: the real
    leading specials (<pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4), the turn and begin-of-media
    tokens, byte-fallback pieces, "▁", byte-level symbols, unused ids up to a padded text
    vocabulary; then the vision ids and the audio ids, each block opening with its end-of-media
    and soft token as in the real vocabulary."""
    from transformers import GemmaTokenizer

    text = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>",
            "<start_of_image>", "<start_of_audio>", *(f"<0x{byte:02X}>" for byte in range(256)), "▁"]
    text += [symbol for symbol in byte_vocab() if symbol not in text]
    unused = (f"<unused{n}>" for n in range(10_000))
    text += [next(unused) for _ in range(padded(len(text)) - len(text))]
    blocks = []
    for head in (["<end_of_image>", "<image_soft_token>"], ["<end_of_audio>", "<audio_soft_token>"]):
        blocks += head + [next(unused) for _ in range(MULTIMODAL_VOCAB - len(head))]
    tokenizer = GemmaTokenizer(vocab={token: index for index, token in enumerate(text + blocks)}, merges=[],
                               add_bos_token=True, extra_special_tokens=SPECIAL_TOKENS)
    tokenizer.add_tokens(["<start_of_turn>", "<end_of_turn>"], special_tokens=True)
    return tokenizer, len(text)


def build(out: Path) -> None:
    from transformers import Gemma3nConfig

    from ..gemma3n import Gemma3nAudioTextForConditionalGeneration

    tokenizer, text_vocab = _gemma3n_tokenizer()
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in
           ("<pad>", "<eos>", "<bos>", "<end_of_turn>", *SPECIAL_TOKENS.values())}
    config = Gemma3nConfig(
        text_config={
            "vocab_size": text_vocab + 2 * MULTIMODAL_VOCAB, "vocab_size_per_layer_input": text_vocab,
            "hidden_size": 32, "hidden_size_per_layer_input": 8, "intermediate_size": 64, "num_hidden_layers": 2,
            "layer_types": ["sliding_attention", "full_attention"], "activation_sparsity_pattern": [0.95, 0.0],
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_kv_shared_layers": 0,
            "laurel_rank": 4, "sliding_window": 64, "max_position_embeddings": CONTEXT,
            "pad_token_id": ids["<pad>"], "bos_token_id": ids["<bos>"], "eos_token_id": ids["<eos>"],
        },
        vision_config={"hidden_size": 32, "vocab_size": MULTIMODAL_VOCAB, "vocab_offset": text_vocab},
        audio_config={"hidden_size": 32, "conf_num_attention_heads": 2, "conf_num_hidden_layers": 1,
                      "sscp_conv_channel_size": [8, 4], "vocab_size": MULTIMODAL_VOCAB,
                      "vocab_offset": text_vocab + MULTIMODAL_VOCAB},
        image_token_id=ids["<image_soft_token>"], boi_token_id=ids["<start_of_image>"],
        eoi_token_id=ids["<end_of_image>"], audio_token_id=ids["<audio_soft_token>"],
        boa_token_id=ids["<start_of_audio>"], eoa_token_id=ids["<end_of_audio>"],
        eos_token_id=[ids["<eos>"], ids["<end_of_turn>"]],
    )
    model = Gemma3nAudioTextForConditionalGeneration(config).eval()
    # the real generation_config: <eos> and <end_of_turn> end a turn
    save_model(model, out, {"eos_token_id": [ids["<eos>"], ids["<end_of_turn>"]], "pad_token_id": ids["<pad>"],
                             "bos_token_id": ids["<bos>"]}, tokenizer)
    config_path = out / "config.json"  # saved under the class the real checkpoint names
    config_path.write_text(json.dumps({**json.loads(config_path.read_text()),
                                       "architectures": ["Gemma3nForConditionalGeneration"]}, indent=2) + "\n")
    _processor(tokenizer).save_pretrained(out)


def _processor(tokenizer):
    from transformers import Gemma3nAudioFeatureExtractor, Gemma3nProcessor
    from transformers.image_utils import PILImageResampling
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        from transformers import SiglipImageProcessor
    else:
        from transformers.models.siglip.image_processing_pil_siglip import (
            SiglipImageProcessorPil as SiglipImageProcessor,
        )
    image_processor = SiglipImageProcessor(image_seq_length=256, image_mean=(0.5,) * 3, image_std=(0.5,) * 3,
                                           size={"height": 768, "width": 768}, resample=PILImageResampling.BILINEAR,
                                           do_normalize=False)
    return Gemma3nProcessor(Gemma3nAudioFeatureExtractor(), image_processor, tokenizer,
                            chat_template=GEMMA3N_CHAT_TEMPLATE, audio_seq_length=188, image_seq_length=256)
