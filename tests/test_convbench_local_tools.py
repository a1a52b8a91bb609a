"""ConversationBench (1/2), part 4: tool conversations on local transformers models.

Tiny random-weight checkpoints of the families whose chat templates take tools (Qwen3-Omni, Gemma 4,
Voxtral) run whole conversations through `run_convbench`; a random model never calls a tool by
itself, so the call path is driven with a scripted generation in each family's own format, and the
prompt the model then sees is read back. The families whose templates ignore tools are refused,
with their reason, before any model is loaded.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from convbench_layout import TURNS, write_benchmark_folder

from ihbench.convbench import ConvRunSpec, run_convbench
from ihbench.dataset.convbench import import_convbench
from ihbench.dataset.errors import UsageError
from ihbench.loaders import GenerationConfig, get
from ihbench.loaders.tiny import loader_name, make_tiny_model
from ihbench.loaders.transformers_base import chat_audio
from ihbench.loaders.voxtral import mistral_call_id

SUPPORTED = ("qwen3-omni", "gemma4", "voxtral")
#: every tiny template with tool branches: the Gemma 4 12B's too (the gemma4 loader, its own template)
TEMPLATES = (*SUPPORTED, "gemma4-unified")
FORMAT = {"gemma4-unified": "gemma4"}
UNSUPPORTED = ("qwen2.5-omni", "qwen2-audio", "phi4-multimodal", "gemma3n", "kimi-audio")
SHORT = GenerationConfig(max_new_tokens=4)
Q = '<|"|>'
BOOK = {"customer": "Ada Park", "slot_id": "42"}
ANSWER = "Done: your tune-up in slot 42 is booked."

#: what each family's model writes to call book_repair, then to answer (end token included)
CALL = {
    "qwen3-omni": ('<tool_call>\n{"name": "book_repair", "arguments": {"customer": "Ada Park", "slot_id": "42"}}\n'
                   "</tool_call><|im_end|>"),
    "gemma4": f"<|tool_call>call:book_repair{{customer:{Q}Ada Park{Q},slot_id:{Q}42{Q}}}<tool_call|><|tool_response>",
    "voxtral": '[TOOL_CALLS][{"name": "book_repair", "arguments": {"customer": "Ada Park", "slot_id": "42"}}]</s>',
}
END = {"qwen3-omni": "<|im_end|>", "gemma4": "<turn|>", "voxtral": "</s>"}
#: how each family's template gives the call and its result back in the next prompt
HANDED_BACK = {
    "qwen3-omni": ('<|im_start|>assistant\n<tool_call>\n{"name": "book_repair", "arguments": {"customer": "Ada Park", '
                   '"slot_id": "42"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{"status": "success"}'
                   "\n</tool_response><|im_end|>\n<|im_start|>assistant\n"),
    "gemma4": (f"<|turn>model\n<|tool_call>call:book_repair{{customer:{Q}Ada Park{Q},slot_id:{Q}42{Q}}}<tool_call|>"
               f'<|tool_response>response:book_repair{{value:{Q}{{"status": "success"}}{Q}}}<tool_response|>'),
    "voxtral": ('[TOOL_CALLS][{"name": "book_repair", "arguments": {"customer": "Ada Park", "slot_id": "42"}, '
                '"id": "ID"}]</s>[TOOL_RESULTS]ID[TOOL_CONTENT]{"status": "success"}[/TOOL_RESULTS]'),
}
TOOLS = [{"type": "function", "function": {
    "name": "book_repair", "description": "Book a repair slot.",
    "parameters": {"type": "object", "properties": {"customer": {"type": "string", "description": "Full name."},
                                                    "slot_id": {"type": "string", "description": "Slot number."}},
                   "required": ["customer", "slot_id"]}}}]


@pytest.fixture(scope="module")
def loaders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {family: get(loader_name(family))(str(make_tiny_model(family, root / family))) for family in TEMPLATES}


@pytest.fixture(params=SUPPORTED)
def family(request):
    return request.param


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("convbench")
    import_convbench(write_benchmark_folder(root / "repo"), root / "data", progress=False)
    return root / "data"


def spec(data, out, family, **options) -> ConvRunSpec:
    return ConvRunSpec(loader=loader_name(family), model_path="tiny", data=str(data), config="bike_bench", out=out,
                       modality=options.pop("modality", "text"), generation={"max_new_tokens": 4}, **options)


def transcript(out) -> list[dict]:
    return [json.loads(line) for line in (out / "epoch_0" / "transcript.jsonl").read_text().splitlines()]


def token_ids(loader, text: str) -> list[int]:
    """`text` as the model would have generated it, its markers as the tokens they are."""
    if hasattr(loader.processor, "control_token_ids"):  # Voxtral: mistral-common never reads markers from text
        return loader.processor.control_token_ids(text)
    return loader.processor.tokenizer.encode(text, add_special_tokens=False)


def scripted(monkeypatch, loader, *replies: str) -> list[str]:
    """The model writes `replies` in turn; returns the prompts it was given, decoded."""
    prompts, queue = [], list(replies)

    def generate(input_ids, **kwargs):
        prompts.append(loader.processor.tokenizer.decode(input_ids[0].tolist(), skip_special_tokens=False))
        return torch.cat([input_ids, torch.tensor([token_ids(loader, queue.pop(0))])], dim=1)

    monkeypatch.setattr(loader.model, "generate", generate)
    return prompts


def noise(seconds: float) -> np.ndarray:
    return (np.random.default_rng(1).standard_normal(int(16000 * seconds)) * 0.1).astype(np.float32)


# -- whole conversations ------------------------------------------------------------------------

def test_a_tiny_model_plays_the_whole_conversation_in_text(data, tmp_path, family, loaders):
    out = tmp_path / "run"

    summary = run_convbench(spec(data, out, family), loader=loaders[family], progress=False)

    assert summary.errors == 0 and summary.written == len(TURNS)
    rows = transcript(out)
    assert [row["turn"] for row in rows] == list(range(len(TURNS)))
    assert all(row["tokens"] for row in rows)  # the local model's own counts


def test_a_tiny_model_hears_the_conversation_in_audio(data, tmp_path, loaders):
    out = tmp_path / "run"

    summary = run_convbench(spec(data, out, "qwen3-omni", modality="audio"), loader=loaders["qwen3-omni"],
                            progress=False)

    assert summary.errors == 0 and summary.written == len(TURNS)
    assert json.loads((out / "run.json").read_text())["modality"] == "audio"


def test_a_call_in_the_family_s_format_is_made_answered_and_handed_back(data, tmp_path, family, loaders, monkeypatch):
    """Turn 1 alone: the model calls book_repair in its own format, gets the scripted result back
    in its own format, and answers."""
    loader = loaders[family]
    prompts = scripted(monkeypatch, loader, CALL[family], ANSWER + END[family])

    run_convbench(spec(data, tmp_path / "run", family, only_turns=[1]), loader=loader, progress=False)

    row = transcript(tmp_path / "run")[0]
    assert row["tool_calls"] == [{"name": "book_repair", "args": BOOK}]
    assert row["tool_results"][0]["response"]["result"] == {"status": "success"}
    assert row["assistant_text"] == ANSWER
    assert len(prompts) == 2 and "book_repair" in prompts[0]  # the tools were offered
    assert HANDED_BACK[family].replace("ID", mistral_call_id("call_0_0")) in prompts[1]


def test_the_audio_path_gives_the_model_the_tools_and_the_call(data, tmp_path, loaders, monkeypatch):
    loader = loaders["gemma4"]
    prompts = scripted(monkeypatch, loader, CALL["gemma4"], ANSWER + END["gemma4"])

    run_convbench(spec(data, tmp_path / "run", "gemma4", only_turns=[1], modality="audio"), loader=loader,
                  progress=False)

    assert transcript(tmp_path / "run")[0]["tool_calls"] == [{"name": "book_repair", "args": BOOK}]
    assert "<|tool>declaration:book_repair" in prompts[0] and HANDED_BACK["gemma4"] in prompts[1]
    assert prompts[0].count("<|audio>") == 1  # turn 1's clip, expanded by the processor


# -- render and parse, directly -----------------------------------------------------------------

def test_a_generated_call_comes_back_as_a_tool_call(family, loaders, monkeypatch):
    loader = loaders[family]
    scripted(monkeypatch, loader, "Let me book that." + CALL[family])
    history = [{"role": "system", "content": "You are the shop's agent."}, {"role": "user", "content": "Book 42."},
               {"role": "assistant", "content": "For whom?"}, {"role": "user", "content": "Ada Park."}]

    reply = loader.chat(history, TOOLS, SHORT, seed=0)

    assert reply.text == "Let me book that."
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("call_1_0", "book_repair", BOOK)]


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_history_s_call_and_result_are_rendered_in_the_family_s_format(template, loaders):
    history = [{"role": "system", "content": "You are the shop's agent."},
               {"role": "user", "audio": noise(0.5), "sampling_rate": 16000},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_0_0", "type": "function",
                    "function": {"name": "book_repair", "arguments": json.dumps(BOOK)}}]},
               {"role": "tool", "tool_call_id": "call_0_0", "content": '{"status": "success"}'}]

    prompt = loaders[template].chat_prompt(history, TOOLS)

    assert HANDED_BACK[FORMAT.get(template, template)].replace("ID", mistral_call_id("call_0_0")) in prompt
    assert prompt.count("Book a repair slot.") == 1  # the tool declared once


@pytest.mark.parametrize("modality", ["text", "audio"])
def test_the_model_s_own_inputs_carry_the_tools(family, loaders, modality):
    """What reaches generate, decoded: Voxtral's processor drops `tools` when it encodes audio, so
    the ids themselves are checked, not only the rendered text."""
    loader = loaders[family]
    user = {"role": "user", "content": "Book 42."} if modality == "text" else \
        {"role": "user", "audio": noise(0.5), "sampling_rate": 16000}
    messages = [{"role": "system", "content": "You are the shop's agent."}, user]

    inputs = loader.chat_inputs(messages, TOOLS, chat_audio(messages))

    assert "book_repair" in loader.processor.tokenizer.decode(inputs["input_ids"][0].tolist(),
                                                              skip_special_tokens=False)
    assert ("input_features" in inputs) == (modality == "audio")


# -- refusals -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", UNSUPPORTED)
def test_a_family_whose_template_ignores_tools_is_refused_with_its_reason(name):
    cls = get(name)
    loader = object.__new__(cls)  # no weights needed: the refusal is the family's, read off the class

    with pytest.raises(UsageError, match=f"--model {name}: cannot run a tool-using conversation: .*tools"):
        loader.check_tools()
    assert cls.tools_unsupported and "\n" not in cls.tools_unsupported


def test_an_unsupported_family_is_refused_before_its_model_is_loaded(data, tmp_path):
    with pytest.raises(UsageError, match="the Qwen2-Audio chat template ignores `tools`"):
        run_convbench(ConvRunSpec(loader="qwen2-audio", model_path=str(tmp_path / "no-such-model"), data=str(data),
                                  config="bike_bench", out=tmp_path / "run", modality="text"), progress=False)
    assert not (tmp_path / "run").exists()


def test_a_checkpoint_whose_template_ignores_tools_is_refused_at_start(loaders, monkeypatch):
    """A supported family, but this checkpoint's template never writes the tools: refused, rather
    than a whole run without them."""
    loader = loaders["qwen3-omni"]
    monkeypatch.setattr(loader.processor, "chat_template",
                        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                        "<|im_start|>assistant\n")

    with pytest.raises(UsageError, match="--model qwen3-omni: .* ignores `tools` \\(a probe tool's name"):
        loader.check_tools()


def test_a_checkpoint_whose_template_breaks_on_tools_is_refused_in_one_line(loaders, monkeypatch):
    loader = loaders["gemma4"]
    monkeypatch.setattr(loader.processor, "chat_template", "{{ raise_exception('no tools here') }}")

    with pytest.raises(UsageError, match="fails on a conversation with tools \\(.*no tools here\\)"):
        loader.check_tools()


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_supported_families_pass_the_probe(template, loaders):
    loaders[template].check_tools()
