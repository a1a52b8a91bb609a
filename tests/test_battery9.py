"""Battery 9 (issue 23): findings of the ninth battery of bad inputs. The model under test and the
simulator's LLM are STAND-INS (scripted OpenAI-compatible servers on loopback); the data, flite
speech, silero-vad, pocketsphinx, torchcodec, the judges' HTTP and the run folders are real."""
import json

import numpy as np
import pytest
from barge_in_script import scripts
from openai_test_server import OpenAITestServer, Reply
from test_barge_in import barge_in, cuts, rounds

from ihbench.cli import main


def _speaking(renders, voice, model_script, spoken):
    """The model answers aloud: `spoken(text, samples)` gives the audio it sends (WAV bytes)."""
    from ihbench.barge_in.clock import sentences
    from ihbench.dataset.audio import encode_wav

    def respond(body):
        reply = model_script(body)
        text = reply.content
        audio = np.concatenate([renders.samples(voice, text[g[0].start():g[-1].end()]) for g in sentences(text)])
        return Reply(content=text, audio=spoken(text, audio, encode_wav))

    return respond


# --- findings 4 and 5: a spoken answer with no speech, or that is no audio at all ---------------------

@pytest.mark.parametrize("audio", ["noise", "not audio"])  # silence and 3 ms take the path noise takes
def test_a_spoken_answer_with_no_speech_fails_its_round_and_is_played_again(audio, built, tmp_path, capsys):
    """The cut of a model that speaks is placed on its own audio. Audio in which no speech is heard
    (silence, noise, 3 ms of a file) held none of the words: the round fails, naming why, is played
    again, and nothing is cut on words that were never said. Bytes that are no audio are the same
    kind of failure, not a decoder's traceback."""
    from ihbench.dataset.tts import RenderCache, get_engine

    voice, renders = get_engine("flite:slt"), RenderCache(tmp_path / "voice")
    model_script, sim_script = scripts()
    broken = {"on": True}
    rng = np.random.default_rng(0)

    def spoken(text, samples, encode_wav):
        if not broken["on"]:
            return encode_wav(samples)
        if audio == "silence":
            return encode_wav(np.zeros_like(samples))
        if audio == "noise":
            return encode_wav(rng.normal(0, 0.1, len(samples)).astype(np.float32))
        if audio == "cut off":
            return encode_wav(samples)[:100]
        return bytes(rng.integers(0, 256, 4000, dtype=np.uint8))

    respond = _speaking(renders, voice, model_script, spoken)
    out = tmp_path / "run"
    with OpenAITestServer(respond=respond) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out, "--option", "audio_voice=slt") == 1
        failed = [r for r in rounds(out) if r["status"] == "error"]
        assert len(failed) == 1 and not cuts(out)
        why = "cannot be decoded" if audio == "not audio" else "hold no speech (silero-vad found none"
        assert why in failed[0]["error"], failed[0]["error"]
        err = capsys.readouterr().err
        assert "Traceback" not in err and "RuntimeError" not in err
        broken["on"] = False
        assert barge_in(model, sim, built, out, "--option", "audio_voice=slt") == 0
    assert cuts(out) and all(r["clock"].startswith("aligned") for r in cuts(out))


def test_the_report_counts_placed_cuts_by_the_clock_that_timed_them(built, tmp_path):
    """A cut timed on words spread by estimate is said as such in the report, not passed off as aligned."""
    from judging import ScriptedJudge

    from ihbench.dataset.tts import RenderCache, get_engine

    voice, renders = get_engine("flite:slt"), RenderCache(tmp_path / "voice")
    model_script, sim_script = scripts()
    respond = _speaking(renders, voice, model_script, lambda text, samples, encode_wav: encode_wav(samples))
    out = tmp_path / "run"
    with OpenAITestServer(respond=respond) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out, "--option", "audio_voice=slt") == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(out), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                     "--cache", str(tmp_path / "judge.sqlite"), "--quiet"]) == 0
    assert main(["report", str(out), "--n-bootstrap", "10", "--quiet", "--out", str(tmp_path / "rep")]) == 0
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]["barge_in"]
    assert summary["placed_by_clock"] == {"aligned": len(cuts(out))}
    assert f"| aligned {len(cuts(out))} |" in (tmp_path / "rep" / "report.md").read_text()
