"""Checkpoint values that read well but break a loaded model, said in one line naming the file and
field, by `run` and by `doctor` alike (which loads no weights).

Batteries 45 and 46 edited these by hand: transformers reads each file without complaint, and the
model then fails on its first forward pass (a TypeError deep in generate, a cache without a window,
mel features of the wrong length). The load probe refuses such a folder too, but it can only name
the folder; these name the field.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from ihbench.dataset.argtypes import ArgType, ArgumentValueError, number, whole

from .base import ModelFolderError

_MOST_BEAMS = 64
#: generation_config.json fields generate reads, and what each must be
GENERATION_FIELDS: dict[str, ArgType] = {
    "max_new_tokens": whole(min=1), "max_length": whole(min=1), "min_new_tokens": whole(min=0),
    # beams and sequences multiply the memory of every answer: no checkpoint asks for more than a few dozen
    # (battery 51, X5: num_beams 1000000 asked for 1.5 TB at the probe, which could not name the field)
    "min_length": whole(min=0), "num_beams": whole(min=1, max=_MOST_BEAMS),
    "num_beam_groups": whole(min=1, max=_MOST_BEAMS), "num_return_sequences": whole(min=1, max=_MOST_BEAMS), "no_repeat_ngram_size": whole(min=0), "top_k": whole(min=0),
    "top_p": number(0, 1, min_open=True), "min_p": number(0, 1), "typical_p": number(0, 1, min_open=True),
    "temperature": number(min=0), "repetition_penalty": number(min=0, min_open=True), "length_penalty": number(),
}
TOKEN_ID_FIELDS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")
#: fields of token ids that generate masks or forces: a list of ids, or a list of lists of them (sequences)
TOKEN_LIST_FIELDS = ("suppress_tokens", "begin_suppress_tokens", "bad_words_ids", "force_words_ids")
_TOKEN_SEQUENCE_FIELDS = ("bad_words_ids", "force_words_ids")
#: decoding strategies other than the protocol's greedy or sampled decoding, and the value that leaves them off
#: (battery 52: classifier-free guidance and contrastive search from an edited file, the answers changed unseen
#: or a probe failing without naming the field)
OTHER_STRATEGIES = {"guidance_scale": (None, 1, 1.0), "penalty_alpha": (None, 0, 0.0), "dola_layers": (None,),
                    "prompt_lookup_num_tokens": (None,), "token_healing": (None, False),
                    # battery 53, Z8: an answer's end pushed forward, tokens forced or weighed, all unseen
                    "exponential_decay_length_penalty": (None,), "forced_decoder_ids": (None, []),
                    "sequence_bias": (None, {}),
                    # battery 54, A6: group and constrained beam search (transformers asks for remote code, advice
                    # ihbench gives no way to follow), early-exit drafting, a watermark's bias on half the vocabulary
                    "diversity_penalty": (None, 0, 0.0), "num_beam_groups": (None, 1), "constraints": (None,),
                    "force_words_ids": (None,), "assistant_early_exit": (None,), "watermarking_config": (None,),
                    # battery 55, B12: plain beam search, the one beam strategy left
                    "num_beams": (None, 1)}
#: switches that change what generate returns, which the loader reads as the answer's tokens (battery 53, Z8:
#: a TypeError at the probe that named neither the file nor the field)
OTHER_OUTPUTS = ("output_scores", "output_logits", "return_dict_in_generate", "output_attentions",
                 "output_hidden_states")
SWITCHES = ("do_sample", "use_cache")


def check_generation_config(path: Path, read: Any) -> None:
    """`read` is transformers' GenerationConfig of `path`, which keeps each value as written."""
    for name in TOKEN_ID_FIELDS:
        value = getattr(read, name, None)  # a text here failed inside generate
        ids = value if isinstance(value, list) else [value]
        if value is not None and not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids):
            raise ModelFolderError(f"{path}: {name} must be a token id (a whole number >= 0) or a list of them, "
                                   f"got {_shown(value)}")
    for name, kind in GENERATION_FIELDS.items():
        value = getattr(read, name, None)
        if value is None:
            continue
        try:
            if isinstance(value, str):  # "5" in JSON is text, which generate compares with numbers
                raise ArgumentValueError("text")
            kind.convert(value)
        except ArgumentValueError:
            raise ModelFolderError(f"{path}: {name} must be {kind.expected}, got {_shown(value)}") from None
    for name in SWITCHES:
        value = getattr(read, name, None)
        if value is not None and not isinstance(value, bool):
            raise ModelFolderError(f"{path}: {name} must be true or false, got {_shown(value)}")
    _check_length_by_protocol(path, read)
    for name, off in OTHER_STRATEGIES.items():
        value = getattr(read, name, None)
        if not any(value == o and type(value) is type(o) for o in off):
            raise ModelFolderError(f"{path}: {name} is {_shown(value)}, which turns on a decoding strategy other "
                                   "than the benchmark's greedy or sampled decoding; remove it")
    for name in OTHER_OUTPUTS:
        if getattr(read, name, None) not in (None, False):
            raise ModelFolderError(f"{path}: {name} is {_shown(getattr(read, name))}, which changes what generate "
                                   "returns; remove it or set it to false")
    for name in TOKEN_LIST_FIELDS:
        value = getattr(read, name, None)
        if value is not None and _token_ids(value, nested=name in _TOKEN_SEQUENCE_FIELDS) is None:
            shape = "lists of token ids" if name in _TOKEN_SEQUENCE_FIELDS else "token ids"
            raise ModelFolderError(f"{path}: {name} must be a list of {shape} (whole numbers >= 0), got {_shown(value)}")


def _token_ids(value: Any, nested: bool) -> Any:
    """The token ids of a list of them (`nested`: of a list of lists of them); None if `value` is not that."""
    if not isinstance(value, list) or not all(isinstance(entry, list) == nested for entry in value):
        return None
    flat = [i for entry in value for i in (entry if nested else [entry])]
    is_id = lambda i: isinstance(i, int) and not isinstance(i, bool) and i >= 0  # noqa: E731
    return flat if all(map(is_id, flat)) else None


def _check_length_by_protocol(path: Path, read: Any) -> None:
    """An answer's length is bounded by `--max-new-tokens` alone, the same on every machine. A clock
    (`max_time`: -1 cut every answer after one token, kept and scored; battery 52, Y5) or a floor
    (`min_new_tokens`: the model may not end its turn) in the checkpoint changes the answers unseen."""
    max_time = getattr(read, "max_time", None)
    if max_time is not None:
        raise ModelFolderError(f"{path}: max_time is {_shown(max_time)}: it stops answers by the clock, so they "
                               "would depend on the machine's speed; remove it (an answer's length is bounded by "
                               "--max-new-tokens)")
    stop_strings = getattr(read, "stop_strings", None)
    if stop_strings is not None:  # even [] (battery 53, Z2): generate then asks for a tokenizer it is not given
        raise ModelFolderError(f"{path}: stop_strings is {_shown(stop_strings)}: it cuts answers at a string; remove it "
                               "(an answer ends where the model ends it, within --max-new-tokens)")
    floor = getattr(read, "min_new_tokens", None)
    if isinstance(floor, int) and not isinstance(floor, bool) and floor > 0:
        raise ModelFolderError(f"{path}: min_new_tokens is {floor}: the model could not end its turn before that "
                               "many tokens; remove it or set it to 0")


def check_token_ids_known(path: Path, read: Any, tokens: int) -> None:
    """generation_config.json's token ids (read as `check_generation_config` does) within the tokenizer's
    `tokens`: an id past it is no token the model can end on, and 10**20 overflowed inside `doctor`
    (battery 48, U5)."""
    for name in (*TOKEN_ID_FIELDS, *TOKEN_LIST_FIELDS):
        value = getattr(read, name, None)
        if name in TOKEN_LIST_FIELDS:
            ids, verb = _token_ids(value, nested=name in _TOKEN_SEQUENCE_FIELDS) or [], "holds"
        else:
            ids, verb = value if isinstance(value, list) else [value], "is"
        for token in ids:
            if isinstance(token, int) and token >= tokens:
                raise ModelFolderError(f"{path}: {name} {verb} {token}, beyond the tokenizer's {tokens} tokens; "
                                       "edited, or of another model's tokenizer")


def check_sliding_window(path: Path, config: Any) -> None:
    """A layer of sliding attention needs its window: without one the first forward pass is a
    TypeError inside the cache (battery 45, R1)."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    kinds = getattr(text, "layer_types", None) or []
    if "sliding_attention" in kinds and getattr(text, "sliding_window", None) is None:
        raise ModelFolderError(f"{path}: layer_types has sliding_attention layers but sliding_window is not set; "
                               "give the window (in tokens) or make those layers full_attention")


def check_feature_rate(path: Path, processor: Any, rate: int) -> None:
    """Every supported family's feature extractor takes `rate` (16 kHz) audio, and its model was trained
    on features made so; another rate changes how many frames a second makes (battery 45, R4)."""
    extractor = getattr(processor, "feature_extractor", None)
    given = getattr(extractor, "sampling_rate", None)
    if isinstance(given, (int, float)) and not isinstance(given, bool) and given != rate:
        raise ModelFolderError(f"{path}: the feature extractor's sampling_rate is {given:g} Hz, and the model's "
                               f"audio encoder takes features of {rate} Hz audio (preprocessor_config.json or "
                               "processor_config.json edited, or of another model)")


def check_feature_size(path: Path, processor: Any) -> None:
    """The feature extractor makes as many mel bins a frame as config.json's audio encoder takes (`num_mel_bins`,
    wherever the family keeps its audio config); otherwise the first item ended in torch's words about
    channels, where `doctor` had passed (battery 56, C12)."""
    size = getattr(getattr(processor, "feature_extractor", None), "feature_size", None)
    config = path / "config.json"
    try:
        found = _first_field(json.loads(config.read_text(encoding="utf-8")), "num_mel_bins")
    except (OSError, ValueError):  # no config.json, or not JSON: named by check_model_folder
        return
    if found is None or not _whole(size):
        return
    where, bins = found
    if _whole(bins) and bins != size:
        file = next((f"{path / name}: {section + '.' if section else ''}feature_size"
                     for name, section in EXTRACTOR_FILES if _names_field(path / name, section, "feature_size")),
                    f"{path}: the feature extractor's feature_size")
        raise ModelFolderError(f"{file} is {size}, but {config}'s {where} is {bins}: the audio encoder takes {bins} mel "
                               "bins a frame (one of them edited, or of another model)")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _first_field(values: Any, field: str, where: str = "", depth: int = 3) -> Optional[tuple[str, Any]]:
    """(`audio_config.num_mel_bins`, its value) for the first `field` in `values` or its objects, nearest first."""
    if not isinstance(values, dict):
        return None
    if field in values:
        return where + field, values[field]
    for key, inner in values.items() if depth else ():
        found = _first_field(inner, field, f"{where}{key}.", depth - 1)
        if found:
            return found
    return None


def _names_field(file: Path, section: Optional[str], field: str) -> bool:
    try:
        values = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    values = values.get(section) if section and isinstance(values, dict) else values
    return isinstance(values, dict) and field in values


#: a feature extractor's sizes, each a whole number >= 1 where given: 0 divides by zero as the processor is
#: built (hop_length), or asks for an array of hundreds of GiB (feature_size) (battery 47, T3 and T6)
EXTRACTOR_SIZES = ("feature_size", "hop_length", "chunk_length", "n_fft", "n_samples", "nb_max_frames",
                   "sampling_rate", "num_mel_bins", "frame_length", "fft_length", "win_length")
EXTRACTOR_FILES = (("processor_config.json", "feature_extractor"), ("preprocessor_config.json", None))


def check_feature_extractor_files(folder: Path) -> None:
    """The feature extractor's sizes as its files give them, read before transformers builds it."""
    for name, section in EXTRACTOR_FILES:
        file = folder / name
        if not file.is_file():
            continue
        values = json.loads(file.read_text(encoding="utf-8"))  # a file that is not JSON: named by check_model_folder
        values = values.get(section) if section and isinstance(values, dict) else values
        if not isinstance(values, dict):
            continue
        for field in EXTRACTOR_SIZES:
            value = values.get(field)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                where = f"{section}.{field}" if section else field
                raise ModelFolderError(f"{file}: {where} must be a whole number >= 1, got {_shown(value)}")


def check_is_processor(folder: Path, processor: Any) -> None:
    """What AutoProcessor built is a processor (a tokenizer with its audio part), and its tokenizer can pad
    a batch: an unknown processor_class makes transformers fall back to the bare tokenizer (battery 47, T4)."""
    if getattr(processor, "tokenizer", None) is None:
        given = [json.loads((folder / name).read_text(encoding="utf-8")).get("processor_class")
                 for name, _ in EXTRACTOR_FILES if (folder / name).is_file()]
        said = f" (processor_class is {_shown(next(g for g in given if g))})" if any(given) else ""
        raise ModelFolderError(f"{folder}: transformers built a {type(processor).__name__} from this folder, not an "
                               f"audio model's processor{said}; its processor files are edited or of another model")
    if getattr(processor.tokenizer, "pad_token", "") is None:
        raise ModelFolderError(f"{folder / 'tokenizer_config.json'}: pad_token is not set, and the prompts of a batch "
                               "are padded to one length; give the token the checkpoint pads with")


def _shown(value: Any) -> str:
    if hasattr(value, "to_dict"):  # a config transformers made an object of (watermarking_config)
        value = value.to_dict()
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."

