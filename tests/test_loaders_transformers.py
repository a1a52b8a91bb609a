"""The transformers loaders (Qwen2-Audio, Phi-4-multimodal) end to end, offline.

Tiny random-weight checkpoints of the real classes stand in for the weights; the rest is the
real path: chat template -> processor -> generate -> decode, on items read from the official
dataset layout with their audio.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import json
import shutil

import numpy as np
import pytest
import torch
from ihbench.dataset import load_items
from ihbench.dataset.audio import encode_flac
from ihbench.dataset.errors import UsageError
from ihbench.dataset.schema import AudioClip, Utterance
from ihbench.loaders import GenerationConfig, ModelFolderError, ModelNotFoundError, get
from ihbench.loaders.tiny import AUDIO_FAMILIES, loader_name, make_tiny_model, make_tiny_speech_lora, processor_class
from official_layout import write_official_layout

from ihbench.protocol import build_model_input

# every family with a tiny builder goes through every test here (IHBENCH_TINY_FAMILIES=a,b: only those)
FAMILIES = [f for f in AUDIO_FAMILIES if f in os.environ.get("IHBENCH_TINY_FAMILIES", f).split(",")]
SHORT = GenerationConfig(max_new_tokens=6)


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-models")
    phi4_base = make_tiny_model("phi4-multimodal", root / "phi4-base")
    phi4 = shutil.copytree(phi4_base, root / "phi4-multimodal")
    make_tiny_speech_lora(phi4)  # the real checkpoint ships its speech adapter the same way
    made = {family: make_tiny_model(family, root / family) for family in FAMILIES if family != "phi4-multimodal"}
    return {**made, "phi4-multimodal": phi4, "phi4-base": phi4_base}


@pytest.fixture(scope="session")
def loaders(checkpoints):
    return {family: get(loader_name(family))(str(checkpoints[family])) for family in FAMILIES}


@pytest.fixture(params=FAMILIES)
def family(request):
    return request.param


@pytest.fixture
def loader(family, loaders):
    return loaders[family]


@pytest.fixture(scope="session")
def items(tmp_path_factory):
    return load_items(write_official_layout(tmp_path_factory.mktemp("official") / "data"))


@pytest.fixture(scope="session")
def item(items):
    """conv-a turn 2: a correction after one audio history turn, so two clips reach the model."""
    return next(i for i in items if i.interruption_type == "correction")


def chirp(seconds: float = 1.5, start: float = 150.0, stop: float = 900.0) -> bytes:
    t = np.arange(int(16000 * seconds)) / 16000
    phase = 2 * np.pi * (start * t + (stop - start) * t ** 2 / (2 * seconds))
    return encode_flac(0.3 * np.sin(phase) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t)))


def with_interruption_audio(item, audio: bytes):
    return dataclasses.replace(item, interruption=Utterance(item.interruption.transcript, AudioClip(bytes=audio)))


def first_step_logits(loader, conversation) -> torch.Tensor:
    """What the model would pick the first token from, given exactly the loader's inputs."""
    inputs = loader.inputs([conversation])
    with torch.inference_mode():
        return loader.model(**inputs).logits[0, -1]


class ProcessorSpy:
    """Records every processor call and passes it on unchanged."""

    def __init__(self, processor):
        self.processor, self.calls = processor, []

    def __getattr__(self, name):
        return getattr(self.processor, name)

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        return self.processor(**kwargs)


def test_tiny_models_build_and_reload_offline_through_their_loaders(family, loader, checkpoints, item):
    import transformers
    from transformers import AutoProcessor
    from transformers.utils import is_torchvision_available

    assert os.environ["HF_HUB_OFFLINE"] == "1"
    path = checkpoints[family]
    assert sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) < 5_000_000
    expected = getattr(transformers, processor_class(family))
    assert isinstance(loader.processor, expected)
    if type(loader.processor) is expected or is_torchvision_available():  # not the no-torchvision subclass
        assert isinstance(AutoProcessor.from_pretrained(path), expected)

    response = loader.generate(build_model_input(item, "audio"), SHORT, seed=0)

    assert response.error is None, response  # the tiny models write letters and digits (`tiny._common.writes_words`)
    assert isinstance(response.text, str)
    assert response.latency_s > 0
    assert response.input_tokens > 0 and 1 <= response.output_tokens <= SHORT.max_new_tokens


@pytest.mark.parametrize("family", FAMILIES)
def test_tiny_model_weights_depend_only_on_the_seed(family, tmp_path):
    def digest(seed, name):
        return hashlib.sha256((make_tiny_model(family, tmp_path / name, seed=seed) / "model.safetensors")
                              .read_bytes()).hexdigest()

    assert digest(0, "a") == digest(0, "b") != digest(1, "c")


def test_the_interruption_audio_reaches_the_model(loader, item):
    original = build_model_input(item, "audio")
    changed = build_model_input(with_interruption_audio(item, chirp()), "audio")

    baseline = first_step_logits(loader, original)

    assert torch.equal(baseline, first_step_logits(loader, original))  # same input, same numbers
    assert (baseline - first_step_logits(loader, changed)).abs().max() > 1e-4


def test_text_mode_sends_no_audio_and_the_prompt_holds_the_transcripts(loader, item, monkeypatch):
    spy = ProcessorSpy(loader.processor)
    monkeypatch.setattr(loader, "processor", spy)

    response = loader.generate(build_model_input(item, "text"), SHORT, seed=0)

    assert _answered_or_empty(response)
    (call,) = spy.calls
    assert "audio" not in call and "sampling_rate" not in call
    (prompt,) = call["text"]
    for text in [item.system_prompt, *(m.text for m in item.history), item.interrupted.delivered,
                 item.interruption.transcript]:
        assert text in prompt
    assert spy.audio_token not in prompt


@pytest.mark.parametrize("family", FAMILIES)
def test_a_missing_model_path_fails_at_once_naming_it(family, tmp_path):
    missing = tmp_path / "no-such-model"

    with pytest.raises(ModelNotFoundError, match=re.escape(str(missing))):
        get(loader_name(family))(str(missing))


def test_phi4_speech_lora_is_loaded_with_peft_and_used_for_audio_only(loaders, checkpoints, item, monkeypatch):
    if "phi4-multimodal" not in FAMILIES:
        pytest.skip("phi4-multimodal is not among IHBENCH_TINY_FAMILIES")
    from peft import PeftModel
    from transformers import Phi4MultimodalForCausalLM

    loader = loaders["phi4-multimodal"]
    assert isinstance(loader.model, PeftModel)
    assert loader.model.active_adapter == "speech"
    assert loader.describe()["speech_adapter"] == str(checkpoints["phi4-multimodal"] / "speech-lora")
    disabled = []
    real = loader.model.disable_adapter
    monkeypatch.setattr(loader.model, "disable_adapter", lambda: disabled.append(True) or real())

    loader.generate(build_model_input(item, "audio"), SHORT, seed=0)
    assert disabled == []
    loader.generate(build_model_input(item, "text"), SHORT, seed=0)
    assert disabled == [True]

    base = get("phi4-multimodal")(str(checkpoints["phi4-base"]))
    assert type(base.model) is Phi4MultimodalForCausalLM and base.describe()["speech_adapter"] is None


def test_out_of_memory_on_one_item_becomes_an_error_response(loader, item, monkeypatch):
    def out_of_memory(**kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    monkeypatch.setattr(loader.model, "generate", out_of_memory)

    response = loader.generate(build_model_input(item, "audio"), SHORT, seed=0)

    assert response.text is None
    assert response.error and re.search(r"memory", response.error)
    assert response.latency_s > 0


def test_a_bug_in_a_loader_is_not_an_item_error(loader, item, monkeypatch):
    """A typo in a loader must stop the run with its traceback, not become one error string per record."""
    def typo(**kwargs):
        return kwargs["input_idz"]
    monkeypatch.setattr(loader.model, "generate", typo)

    with pytest.raises(KeyError, match="input_idz"):
        loader.generate(build_model_input(item, "audio"), SHORT, seed=0)
    with pytest.raises(KeyError, match="input_idz"):  # the batch path does not hide it either
        loader.generate_batch([build_model_input(item, "audio")] * 2, SHORT, [0, 1])


@pytest.mark.parametrize("option, value", [("max_new_tokens", 0), ("temperature", -1.0), ("top_p", 2.0)])
def test_bad_generation_settings_are_refused_before_any_work(option, value):
    with pytest.raises(UsageError, match=f"--{option.replace('_', '-')}"):
        GenerationConfig(**{option: value})


def _answered_or_empty(response) -> bool:
    """An answer, or the item failure of an answer of special tokens only (battery 5, finding 1),
    which a tiny random model may well give (Voxtral's tokenizer is mostly special tokens)."""
    return response.error is None or response.error.startswith("EmptyReplyError: the model's answer has no text")


def test_a_left_padded_batch_answers_like_one_at_a_time(loader, items):
    conversations = [build_model_input(i, "audio") for i in items[:2]]  # different lengths and clip counts
    assert len({len(c.audio_clips) for c in conversations}) == 2

    batched = loader.generate_batch(conversations, SHORT, seeds=[0, 0])

    singles = [loader.generate(c, SHORT, seed=0) for c in conversations]
    assert all(map(_answered_or_empty, batched)) and [r.error for r in batched] == [r.error for r in singles]
    assert [r.text for r in batched] == [r.text for r in singles]
    assert [r.input_tokens for r in batched] == [r.input_tokens for r in singles]


def test_the_declared_clip_limit_is_what_the_processor_does(loader):
    """A family's `max_clip_seconds` is measured, not assumed: the prompt stops growing there."""
    from ihbench.loaders.limits import measure_clip_handling

    measured = measure_clip_handling(loader)  # probes around the declared cap (Qwen2.5-Omni: 300 s)

    assert measured["per_second"] > 0
    assert measured["clip_cap_seconds"] == loader.max_clip_seconds, measured


def test_a_clip_beyond_the_processor_limit_is_an_error_on_that_item(family, loader, item):
    if loader.max_clip_seconds is None:
        pytest.skip(f"{family} takes clips of any length")
    long_clip = np.zeros(int(16000 * (loader.max_clip_seconds + 5)), dtype=np.float32)
    long_clip[::50] = 0.2
    conversation = build_model_input(with_interruption_audio(item, encode_flac(long_clip)), "audio")

    response = loader.generate(conversation, SHORT, seed=0)

    assert response.text is None
    assert "AudioTooLongError" in response.error and f"{loader.max_clip_seconds:g} s" in response.error
    assert "--modality text" in response.error and item.id in response.error
    assert "--history-audio" not in response.error  # the long clip is the interruption: history cannot help


def _edited(config: dict, edits: dict) -> None:
    """Each `edits` key is a field of config.json, of its text_config, or a dotted path ("audio_config.x")."""
    for name, value in edits.items():
        *parents, field = name.split(".")
        part = config
        for parent in parents:
            part = part[parent]
        (part if parents or field in part else part["text_config"])[field] = value


@pytest.mark.parametrize("edits, said", [
    ({"hidden_size": 7}, "transformers cannot build Qwen2AudioForConditionalGeneration from this folder's "
                         "config.json and weights (tensors in the weights have other sizes than config.json gives "
                         "them)"),
    ({"vocab_size": -5}, "(AssertionError: Padding_idx must be within num_embeddings)"),
    ({"num_hidden_layers": 3}, "config.json: transformers cannot read it as a qwen2-audio config (ValueError: "
                               "`num_hidden_layers` (3) must be equal to the number of `layer_types`"),
    # battery 44, Q3 and Q4
    ({"num_attention_heads": 0}, "(ZeroDivisionError: integer division or modulo by zero)"),
    ({"dtype": "float99"}, "(AttributeError: module 'torch' has no attribute 'float99')"),
    ({"audio_token_index": 99999}, "config.json: audio_token_index is 99999, but the tokenizer's <|AUDIO|> is 259"),
    # battery 44, Q6: fewer layers than the weights hold loaded, left the rest unused, and answered
    ({"audio_config.encoder_layers": 0}, "15 tensor(s) in the weights have no place in "
                                         "Qwen2AudioForConditionalGeneration as config.json describes it (e.g. "
                                         "model.audio_tower.layers.0.fc1.bias); config.json asks for a smaller model"),
    ({"num_hidden_layers": 1, "layer_types": ["full_attention"]}, "12 tensor(s) in the weights have no place"),
    # battery 45: a context no prompt fits was an AudioTooLongError on every item, advising fewer clips
    ({"max_position_embeddings": 1}, "the model's context of 1 tokens cannot hold a one-second probe"),
    ({"text_config.rope_parameters.rope_theta": 0}, "the model's scores for a one-second probe are not numbers"),
    # more layers than the weights hold: refused before Q6 was, now one line too (no transformers load report)
    ({"audio_config.encoder_layers": 2}, "(15 tensor(s) missing, 0 of another shape, e.g. "
                                         "model.audio_tower.layers.1.fc1.bias)"),
])
def test_a_config_edited_against_its_weights_is_one_line_naming_the_folder(edits, said, checkpoints, tmp_path,
                                                                            capfd):
    """Battery 43, N10 and N11: a config.json whose sizes no longer fit the weights gave a 39- to 76-line
    traceback in `run` (and the layer count one in `doctor` too). Battery 44, Q6: one asking for fewer
    layers than the weights hold answered (rc 0) with the rest of the weights unused. Checked at the file
    descriptor: transformers' own table of tensors went to stderr through its logger."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    from official_layout import write_official_layout

    from ihbench.cli import main

    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    config = json.loads((folder / "config.json").read_text())
    _edited(config, edits)
    (folder / "config.json").write_text(json.dumps(config))
    data = write_official_layout(tmp_path / "data")
    capfd.readouterr()
    assert main(["run", "--model", "qwen2-audio", "--model-path", str(folder), "--data", str(data), "--limit", "1",
                 "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and str(folder) in err[0], err
    assert not (tmp_path / "run").exists()


def test_a_refused_checkpoint_is_said_once_without_transformers_table(checkpoints, tmp_path):
    """Without --quiet, transformers printed its own table of every unused or missing tensor (20 lines
    and more) above the refusal, which says the same in one line. A process of its own: in this one,
    transformers' log handler may hold a stream from before the test's capture."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    import subprocess
    import sys

    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    config = json.loads((folder / "config.json").read_text())
    _edited(config, {"audio_config.encoder_layers": 0})
    (folder / "config.json").write_text(json.dumps(config))
    data = write_official_layout(tmp_path / "data")
    said = subprocess.run([sys.executable, "-m", "ihbench.cli", "run", "--model", "qwen2-audio", "--model-path",
                           str(folder), "--data", str(data), "--limit", "1", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=300)
    assert said.returncode == 2, said.stderr
    assert "LOAD REPORT" not in said.stderr and "UNEXPECTED" not in said.stderr, said.stderr
    assert "have no place in Qwen2AudioForConditionalGeneration" in said.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("generation, said", [
    ({"max_new_tokens": -3}, "transformers cannot read it as a generation config (ValueError: `max_new_tokens` must "
                             "be greater than 0, but is -3.)"),
    ({"eos_token_id": "x"}, 'eos_token_id must be a token id (a whole number >= 0) or a list of them, got "x"'),
    ({"eos_token_id": [5, -1]}, "eos_token_id must be a token id (a whole number >= 0) or a list of them, got [5, -1]"),
    ({"pad_token_id": True}, "pad_token_id must be a token id (a whole number >= 0) or a list of them, got true"),
    # battery 46, S1: read without complaint, then a TypeError inside generate that `doctor` never met
    ({"top_k": "x"}, 'top_k must be a whole number >= 0, got "x"'),
    ({"top_k": -3}, "top_k must be a whole number >= 0, got -3"),
    ({"top_p": 2}, "top_p must be a number in (0, 1], got 2"),
    ({"temperature": "0.7"}, 'temperature must be a number >= 0, got "0.7"'),
    ({"repetition_penalty": 0}, "repetition_penalty must be a number > 0, got 0"),
    ({"num_beams": 0}, "num_beams must be a whole number from 1 to 64, got 0"),
    ({"num_beams": 10 ** 6}, "num_beams must be a whole number from 1 to 64, got 1000000"),  # battery 51, X5
    ({"do_sample": "yes"}, 'do_sample must be true or false, got "yes"'),
    # battery 52, Y5: max_time -1 cut every answer after one token, and the answer was kept and scored
    ({"max_time": -1}, "max_time is -1: it stops answers by the clock, so they would depend on the machine's speed; "
                       "remove it (an answer's length is bounded by --max-new-tokens)"),
    ({"max_time": 0.5}, "max_time is 0.5: it stops answers by the clock"),
    ({"min_new_tokens": 10 ** 9}, "min_new_tokens is 1000000000: the model could not end its turn before that many "
                                  "tokens; remove it or set it to 0"),
    ({"stop_strings": ["."]}, 'stop_strings is ["."]: it cuts answers at a string; remove it'),
    # battery 52: answers changed unseen (guidance), or a probe failing without naming the field
    ({"guidance_scale": 10 ** 6}, "guidance_scale is 1000000, which turns on a decoding strategy other than the "
                                  "benchmark's greedy or sampled decoding; remove it"),
    ({"penalty_alpha": 0.6, "top_k": 4}, "penalty_alpha is 0.6, which turns on a decoding strategy other than"),
    ({"bad_words_ids": [[-1]]}, "bad_words_ids must be a list of lists of token ids (whole numbers >= 0), got [[-1]]"),
    ({"suppress_tokens": "x"}, 'suppress_tokens must be a list of token ids (whole numbers >= 0), got "x"'),
    ({"stop_strings": []}, "stop_strings is []: it cuts answers at a string; remove it"),  # battery 53, Z2
    ({"exponential_decay_length_penalty": [1, 1e9]}, "exponential_decay_length_penalty is [1, 1000000000.0], which "
                                                     "turns on a decoding strategy other than"),  # battery 53, Z8
    ({"forced_decoder_ids": [[1, 999999999]]}, "forced_decoder_ids is [[1, 999999999]], which turns on a decoding"),
    ({"output_scores": True, "return_dict_in_generate": True}, "output_scores is true, which changes what generate "
                                                               "returns; remove it or set it to false"),
    ({"bad_words_ids": [[5], [10 ** 9]]}, "bad_words_ids holds 1000000000, beyond the tokenizer's 262 tokens"),
    # battery 54, A6: group and constrained beam search failed at the probe asking for remote code
    ({"num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 1.0}, "diversity_penalty is 1.0, which turns on a "
                                                                       "decoding strategy other than"),
    ({"constraints": []}, "constraints is [], which turns on a decoding strategy other than"),
    ({"force_words_ids": [[5]], "num_beams": 2}, "force_words_ids is [[5]], which turns on a decoding strategy"),
    ({"assistant_early_exit": 1}, "assistant_early_exit is 1, which turns on a decoding strategy other than"),
    ({"num_beams": 4}, "num_beams is 4, which turns on a decoding strategy other than"),  # battery 55, B12
    ({"watermarking_config": {"greenlist_ratio": 0.25, "bias": 2.0}}, "watermarking_config is {"),
    ({"eos_token_id": 10 ** 20}, "eos_token_id is 100000000000000000000, beyond the tokenizer's 262 tokens; "
                                 "edited, or of another model's tokenizer"),  # battery 48, U5: doctor overflowed
])
def test_a_generation_config_edited_is_one_line_naming_it_with_or_without_weights(generation, said, checkpoints,
                                                                                  tmp_path):
    """generation_config.json's values were checked as the weights loaded and blamed on config.json; a
    token id written as text passed `doctor`'s load and ended its stop-token check in a traceback."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    (folder / "generation_config.json").write_text(json.dumps(generation))
    loader = get("qwen2-audio")
    for load in (loader, loader.without_weights):
        with pytest.raises(ModelFolderError) as refused:
            load(str(folder))
        assert str(refused.value).startswith(f"{folder / 'generation_config.json'}: {said}")


@pytest.mark.parametrize("edit, said", [
    (lambda eos: {"eos_token_id": [eos, 10]}, "eos_token_id holds 10 (+), an ordinary token of the vocabulary, not a "
                                              "special one: answers would end at the first one they write"),  # B8
    (lambda eos: {"eos_token_id": [5, 6, 7]}, "eos_token_id holds 5 (&), an ordinary token of the vocabulary"),
    (lambda eos: {"eos_token_id": None}, "eos_token_id is null, without <|im_end|> ({eos})"),
    (lambda eos: {"suppress_tokens": [7, eos]}, "suppress_tokens holds {eos} (<|im_end|>), a stop token: the model "
                                                "could never end its turn; remove it from the list"),
    (lambda eos: {"bad_words_ids": [[3, eos], [eos]]}, "bad_words_ids holds {eos} (<|im_end|>), a stop token"),
])
def test_a_generation_config_that_would_not_end_answers_at_a_turn_s_end_is_refused_before_the_weights(
        edit, said, checkpoints, tmp_path, capsys):
    """Battery 54, A4: end ids of ordinary tokens cut every answer after one token, and a stop token suppressed
    kept the model from ending its turn; both were kept and scored while `doctor` failed the first."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    config = json.loads((folder / "generation_config.json").read_text())
    eos = config["eos_token_id"] if isinstance(config["eos_token_id"], int) else config["eos_token_id"][0]
    (folder / "generation_config.json").write_text(json.dumps({**config, **edit(eos)}))
    with pytest.raises(ModelFolderError) as refused:
        get("qwen2-audio")(str(folder))
    assert str(refused.value).startswith(f"{folder / 'generation_config.json'}: {said.format(eos=eos)}"), refused.value
    from ihbench.cli import main

    capsys.readouterr()
    assert main(["doctor", "--model", "qwen2-audio", "--model-path", str(folder)]) == 1
    assert f"fail stop tokens: {folder / 'generation_config.json'}: {said.format(eos=eos)}" in capsys.readouterr().out


def test_a_chat_template_whose_turn_end_is_no_special_token_is_named_not_the_generation_config(checkpoints, tmp_path):
    """Battery 55, B15: a template edited to end a turn with "END" was blamed on generation_config.json, naming "E" as
    the token to add to the end ids (which would have cut every answer at its first E)."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    template = next(f for f in (folder / "chat_template.jinja", folder / "chat_template.json") if f.is_file())
    template.write_text(template.read_text().replace("<|im_end|>", "END"))
    with pytest.raises(ModelFolderError) as refused:
        get("qwen2-audio")(str(folder))
    assert str(refused.value).startswith(f"{template}: the chat template ends a model turn with E ("), refused.value
    assert "an ordinary token of the vocabulary, not a special one" in str(refused.value)


@pytest.mark.parametrize("edit, file, said", [
    ({"text_config.layer_types": ["sliding_attention", "full_attention"]}, "config.json",
     "layer_types has sliding_attention layers but sliding_window is not set; give the window (in tokens) or make "
     "those layers full_attention"),
    ({"feature_extractor.sampling_rate": 8000}, "processor_config.json",
     "the feature extractor's sampling_rate is 8000 Hz, and the model's audio encoder takes features of 16000 Hz "
     "audio"),
    # battery 56, C12: a mel-bin count the encoder does not take (torch's words about channels at the first item)
    ({"feature_extractor.feature_size": 80}, "processor_config.json",
     "processor_config.json: feature_extractor.feature_size is 80, but "),
    # battery 56, C13: the processor's audio token edited, and config.json blamed
    ({"audio_token": "<|im_end|>"}, "processor_config.json",
     "processor_config.json: audio_token is <|im_end|> (258), but config.json's audio_token_index 259 is <|AUDIO|>; "
     "the model would find no audio in a prompt (edited: restore <|AUDIO|>)"),
    # battery 58, E3: edited to a token the tokenizer lacks, and the tokenizer files blamed
    ({"audio_token": "<|AUDIOX|>"}, "processor_config.json",
     "processor_config.json: audio_token is <|AUDIOX|>, which the tokenizer does not have; the processor puts it in "
     "every audio prompt; config.json's audio_token_index 259 is <|AUDIO|> (edited: restore it)"),
])
def test_a_value_only_a_loaded_model_would_meet_is_named_with_or_without_weights(edit, file, said, checkpoints,
                                                                                 tmp_path):
    """Battery 46, S1: these read well, and the first forward pass failed (the probe refused the folder
    without naming the field), while `doctor`, which loads no weights, passed them."""
    folder = _edited_copy(checkpoints, "qwen2-audio", tmp_path, file, edit)
    loader = get("qwen2-audio")
    for load in (loader, loader.without_weights):
        with pytest.raises(ModelFolderError) as refused:
            load(str(folder))
        assert said in str(refused.value) and str(refused.value).startswith(str(folder)), refused.value


@pytest.mark.parametrize("edit, said", [
    (lambda f: _edit_json(f / "processor_config.json", "feature_extractor", hop_length=0),
     "processor_config.json: feature_extractor.hop_length must be a whole number >= 1, got 0"),
    (lambda f: _edit_json(f / "processor_config.json", "feature_extractor", feature_size=0),
     "processor_config.json: feature_extractor.feature_size must be a whole number >= 1, got 0"),
    (lambda f: _edit_json(f / "processor_config.json", "feature_extractor", chunk_length="30"),
     'processor_config.json: feature_extractor.chunk_length must be a whole number >= 1, got "30"'),
    (lambda f: _edit_json(f / "processor_config.json", None, processor_class="NopeProcessor"),
     'transformers built a Qwen2Tokenizer from this folder, not an audio model\'s processor (processor_class is '
     '"NopeProcessor")'),
    (lambda f: _edit_json(f / "tokenizer_config.json", None, pad_token=None),
     "tokenizer_config.json: pad_token is not set, and the prompts of a batch are padded to one length"),
    (lambda f: _edit_header(f / "model.safetensors", dtype="F16"),
     "model.safetensors: its header is damaged (tensor 'audio_tower.conv1.bias' is given as F16 [32], 64 bytes, "
     "and its offsets hold 128)"),
    (lambda f: _edit_header(f / "model.safetensors", shape=[1]), "model.safetensors: its header is damaged (tensor "
                                                                 "'audio_tower.conv1.bias' is given as F32 [1]"),
    (lambda f: _edit_header(f / "model.safetensors", drop=True),
     "model.safetensors: its header is damaged (the bytes of tensor 'audio_tower.conv1.weight' start at 128, where "
     "0 was expected)"),
    (lambda f: (f / "config.json").write_bytes(b"\xef\xbb\xbf" + (f / "config.json").read_bytes()),
     "config.json: begins with a byte-order mark (saved by a Windows editor?), which transformers cannot read"),
    (lambda f: _edit_header(f / "model.safetensors", dtype="Q8"),  # battery 50, W10: a SafetensorError traceback
     "model.safetensors: its header is damaged (tensor 'audio_tower.conv1.bias' has dtype 'Q8', which safetensors "
     "does not know)"),
    (lambda f: _edit_header(f / "model.safetensors", metadata="x"),
     "model.safetensors: its header is damaged (its __metadata__ is not an object of texts)"),  # battery 48, U10
    (lambda f: (f / "model.safetensors").unlink() or os.mkfifo(f / "model.safetensors"),  # battery 51, X7: a hang
     "model.safetensors: not a regular file (a named pipe); give the file itself"),
    (lambda f: (f / "config.json").unlink() or os.mkfifo(f / "config.json"),  # battery 52, Y3: "no config.json"
     "config.json: not a regular file (a named pipe); give the file itself"),
    (lambda f: (f / "config.json").unlink() or os.symlink("/dev/zero", f / "config.json"),
     "config.json: not a regular file (a device); give the file itself"),
], ids=["hop_length 0", "feature_size 0", "chunk_length text", "processor_class", "pad_token null",
        "header dtype", "header shape", "header entry removed", "BOM", "header unknown dtype", "header metadata",
        "weights a pipe", "config a pipe", "config a device"])
def test_processor_and_weights_header_edits_are_one_line_with_or_without_weights(edit, said, checkpoints, tmp_path):
    """Battery 47, T3 to T6: tracebacks from `run` and `doctor` (a division by zero as the processor was
    built, an array of 572 GiB, a tokenizer taken for the processor, safetensors' own refusal mid-load)."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    edit(folder)
    loader = get("qwen2-audio")
    for load in (loader, loader.without_weights):
        with pytest.raises(ModelFolderError) as refused:
            load(str(folder))
        assert said in str(refused.value) and str(refused.value).startswith(str(folder)), refused.value


@pytest.mark.parametrize("edit", [{"vocab": []}, {"config.default_num_special_tokens": 0}])
def test_a_voxtral_tokenizer_file_that_fails_its_own_checks_is_one_line(edit, checkpoints, tmp_path):
    """Battery 48, U9: mistral-common's assertions on tekken.json were tracebacks from `run` and `doctor`."""
    folder = _edited_copy(checkpoints, "voxtral", tmp_path, "tekken.json", edit)
    for load in (get("voxtral"), get("voxtral").without_weights):
        with pytest.raises(ModelFolderError, match=r"the processor or tokenizer cannot be loaded \(AssertionError"):
            load(str(folder))


def test_a_quantized_checkpoint_whose_library_is_missing_is_one_line(checkpoints, tmp_path):
    """Battery 48, U6: a bitsandbytes checkpoint without bitsandbytes was an ImportError traceback. (`doctor`
    loads no weights, and so does not meet it.)"""
    import importlib.util

    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    if importlib.util.find_spec("bitsandbytes") is not None:
        pytest.skip("bitsandbytes is installed here")
    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    _edit_json(folder / "config.json", None, quantization_config={"quant_method": "bitsandbytes", "load_in_4bit": True})
    with pytest.raises(ModelFolderError, match=r"config.json's quantization_config needs a library that is not "
                                               r"installed \(ImportError: .*bitsandbytes"):
        get("qwen2-audio")(str(folder))


def _edited_copy(checkpoints, family: str, tmp_path, file: str, edits: dict):
    """A copy of `family`'s tiny checkpoint with `edits` (as `_edited` takes them) made in its JSON `file`."""
    if family not in checkpoints:
        pytest.skip(f"{family} is not among IHBENCH_TINY_FAMILIES")
    folder = shutil.copytree(checkpoints[family], tmp_path / "edited")
    values = json.loads((folder / file).read_text())
    _edited(values, edits)
    (folder / file).write_text(json.dumps(values))
    return folder


def _edit_json(file, section, **fields):
    values = json.loads(file.read_text())
    (values[section] if section else values).update(fields)
    file.write_text(json.dumps(values))


def _edit_header(file, *, dtype=None, shape=None, drop=False, metadata=None):
    """The first tensor's entry of a safetensors header edited (or its metadata); the bytes after it left as
    they are."""
    import struct

    data = file.read_bytes()
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    first = sorted(name for name in header if name != "__metadata__")[0]
    if metadata is not None:
        header["__metadata__"] = metadata
    elif drop:
        header.pop(first)
    else:
        header[first].update({k: v for k, v in (("dtype", dtype), ("shape", shape)) if v is not None})
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    file.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + length:])


def test_weights_that_give_no_numbers_are_refused_by_the_probe(family, checkpoints, tmp_path):
    """Battery 45: NaN weights (or config.json's rope_theta 0, rms_norm_eps NaN) answered every item with
    one token repeated ("!!!!"), kept as valid answers and scored. Every family's forward is watched."""
    from safetensors.torch import load_file, save_file

    folder = shutil.copytree(checkpoints[family], tmp_path / "nan")
    weights = load_file(folder / "model.safetensors")
    spoiled = {name: torch.full_like(tensor, float("nan")) if tensor.is_floating_point() else tensor
               for name, tensor in weights.items()}
    save_file(spoiled, folder / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ModelFolderError, match=r"the model's scores for a one-second probe are not numbers \(NaN or "
                                               r"infinite logits\)"):
        get(loader_name(family))(str(folder))


def test_an_answer_whose_scores_are_not_numbers_is_an_error_on_the_item(checkpoints, item):
    """Past the load probe (an overflow on one long input in half precision, say): the tokens generated
    from NaN scores are one token repeated; recorded as the item's error, retried by the next run, never
    scored. In a batch, each conversation is retried alone."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    loader = get("qwen2-audio")(str(checkpoints["qwen2-audio"]))
    conversation = build_model_input(item, "audio")
    assert loader.generate(conversation, SHORT, seed=0).error is None
    with torch.no_grad():
        loader.model.lm_head.weight.fill_(float("nan"))
    response = loader.generate(conversation, SHORT, seed=0)
    assert response.text is None and response.error.startswith("NonFiniteScoresError: the model's scores were not "
                                                                "numbers (NaN or infinite logits)")
    responses = loader.generate_batch([conversation, conversation], SHORT, [0, 1])
    assert all(r.error.startswith("NonFiniteScoresError") for r in responses)


@pytest.mark.parametrize("edit, said", [
    # (a feature size edited against the audio encoder is named by its files since battery 56, C12: see
    # test_a_value_only_a_loaded_model_would_meet_is_named_with_or_without_weights)
    (lambda folder: (folder / "chat_template.jinja").write_text("{% if %}"),
     "(TemplateSyntaxError: Expected an expression, got 'end of statement block')"),
    (lambda folder: (folder / "chat_template.jinja").write_text("{{ raise_exception('no audio here') }}"),
     "(TemplateError: no audio here)"),
])
def test_files_that_disagree_are_refused_by_a_probe_before_any_item(edit, said, checkpoints, tmp_path, capsys):
    """Each file reads well, together they cannot answer: a chat template that fails. The first item ended in a traceback and left a run folder
    holding run.json only."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    from ihbench.cli import main

    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    edit(folder)
    data = write_official_layout(tmp_path / "data")
    capsys.readouterr()
    assert main(["run", "--model", "qwen2-audio", "--model-path", str(folder), "--data", str(data), "--limit", "1",
                 "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{folder}: the model fails on a one-second probe before any item {said}" in err[0], err
    assert not (tmp_path / "run").exists()


def _adapter_r_8(adapter):
    config = json.loads((adapter / "adapter_config.json").read_text())
    (adapter / "adapter_config.json").write_text(json.dumps({**config, "r": 8}))


def _adapter_o_proj_only(adapter):
    config = json.loads((adapter / "adapter_config.json").read_text())
    only = r".*layers\.\d+\.self_attn\.o_proj"
    (adapter / "adapter_config.json").write_text(json.dumps({**config, "target_modules": only}))


def _adapter_tensors(change):
    def edit(adapter):
        from safetensors.torch import load_file, save_file

        weights = load_file(adapter / "adapter_model.safetensors")
        change(weights)
        save_file(weights, adapter / "adapter_model.safetensors")
    return edit


def _first_tensor_removed(weights):
    del weights[sorted(weights)[0]]


def _a_layer_added(weights):
    first = sorted(weights)[0]
    weights[first.replace("layers.0.", "layers.7.")] = weights[first].clone()


@pytest.mark.parametrize("edit, said", [
    (_adapter_r_8, r"holds tensors of other sizes than adapter_config\.json gives them \(its r\)"),
    (_adapter_o_proj_only, r"does not fit the model \(0 tensor\(s\) missing, 12 with no place in it, e\.g\. "
                           r"base_model\.model\.model\.layers\.0\.mlp\.down_proj\.lora_A\.weight\)"),
    (_adapter_tensors(_first_tensor_removed), r"does not fit the model \(1 tensor\(s\) missing, 0 with no place in it"),
    (_adapter_tensors(_a_layer_added), r"does not fit the model \(0 tensor\(s\) missing, 1 with no place in it, "
                                       r"e\.g\. \S*layers\.7\."),
    (lambda adapter: (adapter / "adapter_model.safetensors").write_bytes(b"\x10" * 100),
     r"cannot be loaded \(SafetensorError: "),
    (lambda adapter: (adapter / "adapter_model.safetensors").unlink(),
     r"has no weights \(adapter_model\.safetensors\)"),
    (lambda adapter: (adapter / "adapter_config.json").write_text("{not json"),
     r"cannot be loaded \(JSONDecodeError: "),
])
def test_a_speech_adapter_that_does_not_fit_is_refused_in_one_line(edit, said, checkpoints, tmp_path):
    """Phi-4's speech LoRA through peft's own loader: an adapter of other target modules, or with a
    tensor missing or added, loaded what matched, dropped the rest and answered as if adapted (rc 0); one
    of another rank, damaged or without its weights file was a traceback."""
    if "phi4-multimodal" not in checkpoints:
        pytest.skip("phi4-multimodal is not among IHBENCH_TINY_FAMILIES")
    from ihbench.loaders.phi4_multimodal import SPEECH_ADAPTER

    folder = shutil.copytree(checkpoints["phi4-multimodal"], tmp_path / "edited")
    edit(folder / SPEECH_ADAPTER)
    with pytest.raises(ModelFolderError, match=rf"^{re.escape(str(folder / SPEECH_ADAPTER))}: the speech adapter "
                                               f"{said}") as refused:
        get("phi4-multimodal")(str(folder))
    assert len(str(refused.value).splitlines()) == 1


@pytest.mark.parametrize("family, parts", [("qwen2.5-omni", ("talker", "token2wav")),
                                           ("qwen3-omni", ("talker", "code2wav"))])
def test_a_whole_omni_checkpoint_loads_its_thinker_with_the_speech_parts_left_unused(family, parts, checkpoints,
                                                                                      tmp_path):
    """The real Omni checkpoints hold the talker and the speech decoder beside the thinker; the loader
    builds the thinker only, and those tensors stay unused on purpose (transformers' thinker class names
    them), so the check that refuses unused tensors (battery 44, Q6) must not refuse them. A tensor the
    thinker has no place for still is."""
    if family not in checkpoints:
        pytest.skip(f"{family} is not among IHBENCH_TINY_FAMILIES")
    from safetensors.torch import load_file, save_file

    folder = shutil.copytree(checkpoints[family], tmp_path / "whole")
    weights = load_file(folder / "model.safetensors")
    speech = {f"{part}.model.layers.0.mlp.weight": torch.zeros(2, 2) for part in parts}
    save_file({**weights, **speech}, folder / "model.safetensors", metadata={"format": "pt"})

    loader = get(loader_name(family))(str(folder))
    assert loader.model is not None

    save_file({**weights, "thinker.model.layers.9.mlp.weight": torch.zeros(2, 2)}, folder / "model.safetensors",
              metadata={"format": "pt"})
    with pytest.raises(ModelFolderError, match=r"1 tensor\(s\) in the weights have no place in .* \(e\.g\. "
                                               r"\S*layers\.9\.mlp\.weight\)"):
        get(loader_name(family))(str(folder))


@pytest.mark.parametrize("edits", [{"text_config": None}, {"audio_config": None}], ids=["text_config", "audio_config"])
def test_a_config_describing_a_far_larger_model_than_its_weights_is_refused_before_it_is_built(edits, checkpoints,
                                                                                               tmp_path):
    """Battery 50, W9: `"text_config": null` made transformers build its full-size default text model (12
    billion parameters) before finding the weights did not fit; the kernel's OOM killer ended `run` without
    a word. Run in a process limited to 6 GB of address space, so a regression fails here, not the machine."""
    import resource
    import subprocess
    import sys

    folder = _edited_copy(checkpoints, "qwen2-audio", tmp_path, "config.json", edits)

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (6 * 2 ** 30, 6 * 2 ** 30))

    code = ("import sys; from ihbench.loaders import get, ModelFolderError\n"
            "try:\n    get('qwen2-audio')(sys.argv[1])\n"
            "except ModelFolderError as error:\n    print(error); sys.exit(2)\n")
    result = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True,
                            preexec_fn=limited, timeout=300)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stdout.startswith(f"{folder / 'config.json'}: describes a model of ") and \
        "parameters and the weights hold" in result.stdout


def test_a_stop_token_forbidden_at_the_first_token_only_is_no_refusal(checkpoints, tmp_path, capsys):
    """Battery 56, C10: `begin_suppress_tokens` holding the end token (as Whisper's does) forbids an empty answer,
    not an end; it was refused as "could never end its turn"."""
    if "qwen2-audio" not in checkpoints:
        pytest.skip("qwen2-audio is not among IHBENCH_TINY_FAMILIES")
    folder = shutil.copytree(checkpoints["qwen2-audio"], tmp_path / "edited")
    config = json.loads((folder / "generation_config.json").read_text())
    eos = config["eos_token_id"] if isinstance(config["eos_token_id"], int) else config["eos_token_id"][0]
    (folder / "generation_config.json").write_text(json.dumps({**config, "begin_suppress_tokens": [eos]}))
    from ihbench.cli import main

    main(["doctor", "--model", "qwen2-audio", "--model-path", str(folder)])
    assert re.search(r"^ok +stop tokens", capsys.readouterr().out, re.M)
