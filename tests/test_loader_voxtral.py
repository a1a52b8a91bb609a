"""What is Voxtral's own: mistral-common's prompt (no Jinja template), no system role next to audio,
clips padded to whole 30 s windows, and the text-mode encoding of the rendered prompt."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from ihbench.loaders import GenerationConfig, get
from ihbench.loaders.base import InputTurn, ModelInput
from ihbench.loaders.limits import clip_cost, measure_clip_handling
from ihbench.loaders.tiny import make_tiny_model

WINDOW = 375  # audio tokens per 30 s window (12.5 a second)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_model("voxtral", tmp_path_factory.mktemp("tiny") / "voxtral")


@pytest.fixture(scope="module")
def loader(checkpoint):
    return get("voxtral")(str(checkpoint))


def noise(seconds: float, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(int(16000 * seconds)).astype(np.float32) * 0.1


def call(modality: str, *, delivered: str = "Your balance is") -> ModelInput:
    """Greeting first, as in the benchmark's calls: two user turns, heard or read."""
    def user(text, seconds, seed):
        return InputTurn("user", audio=noise(seconds, seed)) if modality == "audio" else InputTurn("user", text)

    return ModelInput("item-1", modality, [
        InputTurn("system", "You are the bank's voice agent."), InputTurn("assistant", "Hello, how can I help?"),
        user("What's my balance?", 1.0, 1), InputTurn("assistant", delivered), user("Wait, savings.", 31.0, 2)])


def test_the_system_prompt_goes_first_as_a_user_message_and_each_clip_is_whole_windows(loader):
    audio = loader.prompt(call("audio"))

    assert "[SYSTEM_PROMPT]" not in audio
    assert audio == ("<s>[INST]You are the bank's voice agent.[/INST]Hello, how can I help?</s>"
                     f"[INST][BEGIN_AUDIO]{'[AUDIO]' * WINDOW}[/INST]Your balance is</s>"
                     f"[INST][BEGIN_AUDIO]{'[AUDIO]' * 2 * WINDOW}[/INST]")  # 1 s: one window; 31 s: two
    assert loader.prompt(call("text")) == (
        "<s>[INST]You are the bank's voice agent.[/INST]Hello, how can I help?</s>"
        "[INST]What's my balance?[/INST]Your balance is</s>[INST]Wait, savings.[/INST]")
    inputs = loader.inputs([call("audio")])
    assert tuple(inputs["input_features"].shape) == (3, 128, 3000)  # one 30 s mel window per chunk
    assert int((inputs["input_ids"] == 24).sum()) == 3 * WINDOW


def test_tokenizer_v7_refuses_a_system_message_next_to_audio(loader):
    """Why the system prompt is a user message: the checkpoint's tokenizer says no."""
    messages = loader.messages(call("audio"))
    system = [{"role": "system", "content": messages[0]["content"]}, *messages[1:]]

    with pytest.raises(ValueError, match="system messages .* audio"):
        loader.processor.apply_chat_template(system)
    assert loader.processor.tokenizer.apply_chat_template(  # a system message alone is fine
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], tokenize=False
    ).startswith("<s>[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT]")


def test_an_assistant_turn_cut_before_its_first_word_is_left_out(loader):
    """mistral-common refuses an empty assistant message; the two user turns then share one [INST]."""
    response = loader.generate(call("audio", delivered=""), GenerationConfig(max_new_tokens=3), seed=0)

    # the tiny model's answer may be special tokens only: an item failure (battery 5, finding 1), not a refusal
    assert response.error is None or response.error.startswith("EmptyReplyError: the model's answer has no text")
    assert loader.prompt(call("text", delivered="")).endswith(
        "</s>[INST]What's my balance?\n\nWait, savings.[/INST]")


def test_text_mode_encodes_the_rendered_prompt_to_the_tokenized_ids(loader):
    conversation = call("text")

    ids = loader.inputs([conversation])["input_ids"][0].tolist()

    assert ids == loader.processor.tokenizer.apply_chat_template(loader.messages(conversation), return_dict=False)


def test_the_rendered_prompt_round_trips_with_a_real_bpe_vocabulary(tmp_path):
    """The tiny vocabulary has no merges; mistral-common ships a real tekken vocabulary (v3, no
    audio), which as v7 checks that text between control tokens encodes as the official path does."""
    import mistral_common
    from ihbench.loaders.voxtral import VoxtralChatProcessor
    from transformers import MistralCommonBackend, WhisperFeatureExtractor

    source = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"
    if not source.is_file():
        pytest.skip("this mistral-common ships no tekken vocabulary")
    tekken = json.loads(source.read_text(encoding="utf-8"))
    tekken["vocab"] = tekken["vocab"][:20000]  # the top 20k merges: a real BPE, loaded in a blink
    tekken["config"].update(version="v7", num_vocab_tokens=20000, default_vocab_size=21000)
    (tmp_path / "tekken.json").write_text(json.dumps(tekken), encoding="utf-8")
    tokenizer = MistralCommonBackend(tokenizer_path=str(tmp_path / "tekken.json"))
    processor = VoxtralChatProcessor(WhisperFeatureExtractor(feature_size=128), tokenizer)
    messages = [{"role": "user", "content": "You are the bank's agent.\n\nBe brief: 2–3 sentences, no “lists”."},
                {"role": "assistant", "content": "Hello!  How can I help?"},
                {"role": "user", "content": "Card 4242-1234… charged $19.99 twice — café in Zürich 😀"},
                {"role": "assistant", "content": "I see two charges of"},
                {"role": "user", "content": "  wait,\nactually  three? "}]

    rendered = tokenizer.apply_chat_template(messages, tokenize=False)

    assert processor(text=[rendered])["input_ids"][0].tolist() == tokenizer.apply_chat_template(
        messages, return_dict=False)


def test_a_control_token_in_a_transcript_is_an_item_error_in_text_mode(loader):
    conversation = ModelInput("item-9", "text", [InputTurn("system", "Be brief."), InputTurn("user", "say [INST] now")])

    response = loader.generate(conversation, GenerationConfig(max_new_tokens=3), seed=0)

    assert response.text is None and "[INST]" in response.error and "item-9" in response.error
    with pytest.raises(TypeError, match="apply_chat_template"):  # a misuse of the class: a bug, not a user error
        loader.processor(text=["<s>[INST]hi[/INST]"], audio=[noise(1.0)])


def test_clips_are_padded_to_30_second_windows_and_never_cut(loader):
    """The measurement behind `max_clip_seconds = None`. The shared check's default points (10 s,
    20 s, ...) fall in one window, so it is measured here at window multiples."""
    one_window = clip_cost(loader, 1.0)[0]

    assert clip_cost(loader, 30.0)[0] == one_window
    assert clip_cost(loader, 30.1)[0] == one_window + WINDOW
    assert clip_cost(loader, 600.0)[0] == one_window + 19 * WINDOW  # ten minutes, all of it
    measured = measure_clip_handling(loader, seconds=(30.0, 60.0, 90.0, 120.0))
    assert measured["per_second"] == 12.5 and measured["clip_cap_seconds"] is None
    assert loader.max_clip_seconds is None
