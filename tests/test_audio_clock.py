"""The clock of a model's own audio (`ihbench.barge_in.audio_clock`): real pocketsphinx alignment of
real flite speech, checked against flite's own word times of the same audio (libflite's segment
relation, `clock.speak`'s MEASURED times). The model that answers with audio is a STAND-IN: a
scripted OpenAI-compatible server (tests/openai_test_server.py) sending that flite audio as its
chat completion's audio output."""
import io

import numpy as np
import pytest
import soundfile

from ihbench.barge_in.audio_clock import ALIGNED, SPREAD, _spelling, spoken_from_audio
from ihbench.barge_in.clock import MEASURED, sentences, speak
from ihbench.dataset.tts import RenderCache, get_engine

REPLY = ("Thanks for waiting. Your booking QX7ZL2 moves to 9:15 tomorrow, and the new plan costs $40 a month. "
         "Shall I send the details by email?")


def _said(text, cache, voice="flite:slt"):
    """What a model speaking `text` in `voice` sent (its sentences' renders, one after another), and
    flite's own word times of that very audio."""
    engine = get_engine(voice)
    audio = np.concatenate([cache.samples(engine, text[g[0].start():g[-1].end()]) for g in sentences(text)])
    return audio, speak(text, engine, cache)


@pytest.mark.parametrize("voice", ["flite:slt", "flite:rms"])
def test_words_aligned_in_the_model_s_audio_are_where_flite_said_them(voice, tmp_path):
    audio, truth = _said(REPLY, RenderCache(tmp_path), voice)
    assert truth.method == MEASURED
    spoken = spoken_from_audio(REPLY, audio, "the model's own")
    assert spoken.method == ALIGNED and spoken.duration_s == pytest.approx(len(audio) / 16_000)
    assert [w.text for w in spoken.words] == [w.text for w in truth.words]
    off = [max(abs(a.start_s - b.start_s), abs(a.end_s - b.end_s)) for a, b in zip(spoken.words, truth.words)]
    assert np.median(off) < 0.05 and max(off) < 0.2, list(zip([w.text for w in truth.words], off))
    for cut in (1.0, 2.5, 4.0):  # what is heard before a cut is the same words on both clocks, or one word off
        heard, true = spoken.heard_before(cut).split(), truth.heard_before(cut).split()
        assert abs(len(heard) - len(true)) <= 1, (cut, heard, true)


def test_a_word_its_dictionary_lacks_is_read_by_its_letters_and_takes_its_own_time(tmp_path):
    text = "Your reference is Zqxvbrt, and it is ready."
    audio, _ = _said(text, RenderCache(tmp_path))
    spoken = spoken_from_audio(text, audio, "model")
    assert spoken.method == ALIGNED + "; 1 word(s) not in its dictionary said by letter-to-sound rules"
    before, name, after = spoken.words[2:5]
    assert (before.text, name.text, after.text) == ("is", "Zqxvbrt,", "and")
    assert before.end_s <= name.start_s and name.end_s - name.start_s > 0.3 and name.end_s <= after.start_s


def test_audio_the_aligner_finds_no_path_through_spreads_the_words_over_it_and_says_why(tmp_path):
    # a server whose transcript is not what it said: half a second of "Hi." for five words (silence is
    # no speech at all, and fails its round: test_battery9)
    audio = RenderCache(tmp_path).samples(get_engine("flite:slt"), "Hi.")
    spoken = spoken_from_audio("Your order ships tomorrow morning.", audio, "model")
    assert spoken.method == f"{SPREAD} (the aligner found no path through the audio for the reply's words)"
    assert [w.text for w in spoken.words] == "Your order ships tomorrow morning.".split()
    starts, ends = [w.start_s for w in spoken.words], [w.end_s for w in spoken.words]
    assert 0.0 <= starts[0] < ends[-1] <= len(audio) / 16_000 and starts[1:] == pytest.approx(ends[:-1])
    assert ends[3] - starts[3] > ends[2] - starts[2]  # "tomorrow" (3 syllables) takes longer than "ships"


@pytest.mark.parametrize("token, words", [
    ("Thanks,", ["thanks"]), ("don't", ["don't"]), ("9:15", ["nine", "fifteen"]), ("10:05", ["ten", "oh", "five"]),
    ("$40", ["forty", "dollars"]), ("2026", ["two", "thousand", "twenty", "six"]), ("QX7ZL2", list("qx") + ["seven"]
                                                                                       + list("zl") + ["two"]),
    ("QX-4402.", ["q", "x", "four", "thousand", "four", "hundred", "two"]), ("—", []),
])
def test_a_token_is_spelled_as_it_is_said(token, words):
    assert _spelling(token) == words


def test_the_openai_loader_keeps_the_audio_of_an_answer_spoken_aloud_and_refuses_one_without(tmp_path):
    from openai_test_server import OpenAITestServer, Reply

    from ihbench.loaders import GenerationConfig, create
    from ihbench.loaders.base import InputTurn, ModelInput

    audio, _ = _said("Sure, one moment.", RenderCache(tmp_path))
    wav = io.BytesIO()
    soundfile.write(wav, audio, 16_000, format="WAV", subtype="PCM_16")
    conversation = ModelInput("x/1", "text", [InputTurn("system", "Be brief."), InputTurn("user", "Hello?")])
    with OpenAITestServer(respond=lambda body: Reply(content="Sure, one moment.", audio=wav.getvalue())) as server:
        loader = create("openai", "m", base_url=server.base_url, audio_voice="alloy")
        response = loader.generate(conversation, GenerationConfig(), 0)
        asked = server.requests[-1]
    assert response.error is None and response.text == "Sure, one moment."
    assert asked["modalities"] == ["text", "audio"] and asked["audio"] == {"voice": "alloy", "format": "wav"}
    assert response.audio is not None and abs(len(response.audio) - len(audio)) <= 1
    with OpenAITestServer(respond=lambda body: Reply(content="Sure.")) as server:
        failed = create("openai", "m", base_url=server.base_url, audio_voice="alloy").generate(
            conversation, GenerationConfig(), 0)
    assert failed.text is None and "asked for an audio answer (--option audio_voice), the server sent none" in failed.error


def test_barge_in_with_a_speaking_model_and_no_aligner_is_refused_before_anything_is_made(tmp_path, monkeypatch,
                                                                                           capsys):
    import sys

    from official_layout import write_official_layout

    from ihbench.cli import main

    data = write_official_layout(tmp_path / "official")
    monkeypatch.setitem(sys.modules, "pocketsphinx", None)  # as on a machine without the `align` extra
    capsys.readouterr()
    assert main(["barge-in", "--data", str(data), "--model", "openai", "--model-path", "m", "--base-url",
                 "http://127.0.0.1:9/v1", "--sim-model", "s", "--sim-base-url", "http://127.0.0.1:9/v1", "--option",
                 "audio_voice=alloy", "--modality", "text", "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == ("ihbench barge-in: error: timing the model's own audio needs pocketsphinx: "
                                           "pip install 'ihbench[align]'"), err
    assert not (tmp_path / "run").exists()
