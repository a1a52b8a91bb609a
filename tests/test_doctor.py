"""`ihbench doctor`: every tiny family passes; deliberately broken copies fail on the check that
names their fault, one line each, with a non-zero exit; no weights are loaded."""
from __future__ import annotations

import json
import os
import shutil

import pytest
from ihbench.cli import main
from ihbench.loaders.tiny import AUDIO_FAMILIES, loader_name, make_tiny_model
from official_layout import write_official_layout

FAMILIES = [f for f in AUDIO_FAMILIES if f in os.environ.get("IHBENCH_TINY_FAMILIES", f).split(",")]
CHECKS = ("format", "processor", "template", "thinking", "stop tokens", "context", "clips")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_official_layout(tmp_path_factory.mktemp("official") / "data")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("doctor-tiny")
    made = {}

    def model(family):
        if family not in made:
            made[family] = make_tiny_model(family, root / family)
        return made[family]

    return model


def doctor(capsys, family, path, *extra):
    capsys.readouterr()  # what building the tiny model printed
    code = main(["doctor", "--model", loader_name(family), "--model-path", str(path), "--quiet", *extra])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    return code, {line[5:].partition(":")[0]: line for line in lines[:-1]}, lines[-1], err


@pytest.mark.parametrize("family", FAMILIES)
def test_every_tiny_family_passes_every_check_without_its_weights(family, tiny, data, capsys, monkeypatch):
    from ihbench.loaders.transformers_base import TransformersLoader

    monkeypatch.setattr(TransformersLoader, "load_model", lambda self: pytest.fail("doctor loaded the weights"))

    code, checks, last, err = doctor(capsys, family, tiny(family), "--data", str(data))

    assert code == 0, checks
    assert tuple(checks) == CHECKS and err == ""
    assert all(line.split()[0] in ("ok", "skip") for line in checks.values()), checks
    assert "conv-b/4" in checks["template"] and "4 heard as audio" in checks["context"]
    assert last.endswith("every check passed (7); weights not loaded")


def test_an_old_format_config_fails_the_format_check_with_the_revision_to_pass(tiny, tmp_path, capsys):
    broken = shutil.copytree(tiny("phi4-multimodal"), tmp_path / "phi4-old")
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "model_type": "phi4mm"}))

    code, checks, last, _ = doctor(capsys, "phi4-multimodal", broken)

    assert code == 1 and tuple(checks) == ("format",)
    assert checks["format"].startswith("fail format: ") and "--option revision=refs/pr/70" in checks["format"]
    assert last.endswith("1 of 1 check(s) failed")


def test_a_template_without_audio_placeholders_fails_the_template_check(tiny, data, tmp_path, capsys):
    broken = shutil.copytree(tiny("qwen2-audio"), tmp_path / "no-audio-template")
    template = (broken / "chat_template.jinja").read_text()
    (broken / "chat_template.jinja").write_text(template.replace("<|audio_bos|><|AUDIO|><|audio_eos|>", "[audio]"))

    code, checks, _, _ = doctor(capsys, "qwen2-audio", broken, "--data", str(data))

    assert code == 1
    assert checks["template"] == ("fail template: conv-b/4: the chat template wrote 0 audio placeholder(s) for 4 "
                                  "clip(s); the processor would pair clips and placeholders wrongly")
    assert checks["stop tokens"].startswith("ok ")  # the other checks still run and say their part


def ignoring_thinking(tiny, tmp_path):
    broken = shutil.copytree(tiny("qwen3-omni"), tmp_path / "ignores-thinking")
    template = (broken / "chat_template.jinja").read_text()
    (broken / "chat_template.jinja").write_text(
        template.replace("{%- if enable_thinking is defined and enable_thinking is false -%}", "{%- if false -%}"))
    return broken


def test_a_template_that_ignores_thinking_fails_when_thinking_is_asked_for(tiny, tmp_path, capsys):
    code, checks, _, _ = doctor(capsys, "qwen3-omni", ignoring_thinking(tiny, tmp_path), "--option", "thinking=true")

    assert code == 1
    assert checks["thinking"].startswith("fail thinking: --option thinking=true changes nothing: the chat template "
                                         "renders the same prompt with enable_thinking on and off")


def test_a_template_that_ignores_thinking_is_a_warning_when_thinking_is_off(tiny, tmp_path, capsys):
    code, checks, _, _ = doctor(capsys, "qwen3-omni", ignoring_thinking(tiny, tmp_path))

    assert code == 0 and checks["thinking"].startswith("warn thinking: the chat template ignores enable_thinking")


def test_a_generation_config_that_does_not_stop_at_the_end_of_a_turn_fails(tiny, tmp_path, capsys):
    broken = shutil.copytree(tiny("gemma4"), tmp_path / "no-turn-end")
    config = json.loads((broken / "generation_config.json").read_text())
    (broken / "generation_config.json").write_text(json.dumps({**config, "eos_token_id": 1}))

    code, checks, _, _ = doctor(capsys, "gemma4", broken)

    assert code == 1
    assert checks["stop tokens"] == (f"fail stop tokens: {broken / 'generation_config.json'}: eos_token_id is 1, "
                                     "without <turn|> (12), the token the chat template ends a model turn with: "
                                     "answers would not end where a turn ends (they stop at another token, or run on "
                                     "to --max-new-tokens); set it to that token's id")


def test_the_deepest_point_beyond_the_context_fails_and_auto_is_suggested_then_fits(tiny, data, tmp_path, capsys):
    short = shutil.copytree(tiny("qwen2-audio"), tmp_path / "short-context")
    config = json.loads((short / "config.json").read_text())
    config["text_config"]["max_position_embeddings"] = 345
    (short / "config.json").write_text(json.dumps(config))
    budget = ["--data", str(data), "--max-new-tokens", "4"]

    code, checks, _, _ = doctor(capsys, "qwen2-audio", short, *budget)
    assert code == 1 and checks["context"] == (
        "fail context: the deepest point conv-b/4 (4 user turns, 4 heard as audio with --history-audio all) is 359 "
        "tokens + 4 new, beyond the 345-token context: such points fail; --history-audio auto would hear 2 of 4 as "
        "audio")

    code, checks, _, _ = doctor(capsys, "qwen2-audio", short, *budget, "--history-audio", "auto")
    assert code == 0 and "2 heard as audio with --history-audio auto) is 341 tokens + 4 new" in checks["context"]


def test_without_data_a_context_too_short_for_a_sample_point_fails(tiny, tmp_path, capsys):
    """Battery 46, S1: without --data the context check was skipped, so max_position_embeddings 1 passed."""
    code, checks, _, _ = doctor(capsys, "qwen2-audio", tiny("qwen2-audio"))
    assert code == 0 and checks["context"].startswith("ok   context: a sample point (two short clips) is ")
    short = shutil.copytree(tiny("qwen2-audio"), tmp_path / "one-token")
    config = json.loads((short / "config.json").read_text())
    config["text_config"]["max_position_embeddings"] = 1
    (short / "config.json").write_text(json.dumps(config))
    code, checks, _, _ = doctor(capsys, "qwen2-audio", short)
    assert code == 1 and checks["context"].endswith(
        "new, beyond the 1-token context (config.json's max_position_embeddings): no point of the data would fit")


def test_doctor_refuses_a_family_it_cannot_check_in_one_line(capsys):
    code = main(["doctor", "--model", "openai", "--model-path", "served-model"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("ihbench doctor: error: --model openai: doctor checks local transformers checkpoints")


def test_a_bad_option_is_refused_before_any_check(tiny, capsys):
    code = main(["doctor", "--model", "gemma4", "--model-path", str(tiny("gemma4")), "--option", "thinking=maybe"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and "--option thinking: expected true or false" in captured.err
