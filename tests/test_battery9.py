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


# --- findings 6 and 7: a barge-in line edited by hand ------------------------------------------------

@pytest.mark.parametrize("edit", ["cut time", "made older"])
def test_a_barge_in_round_edited_by_hand_is_played_again_and_then_no_longer_said(edit, built, tmp_path, capsys):
    """Every round carries a check of all it holds: a cut time edited by hand (or the check taken off
    and the line dated to an older format) makes the line damaged; the next `ihbench barge-in` plays
    its conversation again from that round, after which the line is superseded and said no more."""
    model_script, sim_script = scripts()
    out = tmp_path / "run"
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out) == 0
        lines = rounds(out)
        placed = next(n for n, r in enumerate(lines) if r["status"] == "played" and r["cut"]
                      and "reason" not in r["cut"])
        original = lines[placed]["cut"]["time_s"]
        lines[placed]["cut"]["time_s"] = original + 0.5
        if edit == "made older":
            lines[placed].pop("check")
            lines[placed]["format_version"] = 2
        (out / "barge_in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
        capsys.readouterr()
        assert barge_in(model, sim, built, out) == 0
        said = capsys.readouterr()
        why = "changed since it was written" if edit == "cut time" else "older than every record of this run"
        assert f"barge_in.jsonl line {placed + 1}: " in said.err and why in said.err, said.err
        assert f"{len(lines) - placed} round(s) played, {placed} already done" in said.out, said.out
        assert barge_in(model, sim, built, out) == 0
        said = capsys.readouterr()
        assert "barge_in.jsonl line" not in said.err and "0 round(s) played" in said.out, (said.err, said.out)
    replayed = rounds(out)[len(lines):]  # the same scripts play it again as they first did
    assert replayed[0]["round"] == lines[placed]["round"] and replayed[0]["cut"]["time_s"] == original


# --- finding 10: a judge that stopped midway is said as such ----------------------------------------

@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


def _report_err(run, tmp_path, capsys) -> str:
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_judge_that_stopped_midway_is_said_to_have_stopped_and_the_next_one_goes_on(official, tmp_path, capsys,
                                                                                      monkeypatch):
    """Not "judgments.jsonl lost lines since": the judge's record says a pass began and never ended."""
    from judging import ScriptedJudge
    from test_battery_round3 import _answered

    import ihbench.judge.run as judge_run

    run = _answered(official, tmp_path / "run", "--limit", "2")
    judge = ["judge", str(run), "--judge-model", "j", "--cache", str(tmp_path / "c.sqlite"), "--concurrency", "1",
             "--quiet"]
    calls, original = [], judge_run._judge_one

    async def stops_at_the_second(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise RuntimeError("the judge's machine went away")
        return await original(*args, **kwargs)

    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        monkeypatch.setattr(judge_run, "_judge_one", stops_at_the_second)
        with pytest.raises(RuntimeError):
            main([*judge, "--judge-base-url", server.base_url])
    # the stand-in is shut down first: the request the judge dropped may end in its handler's traceback
    assert len((run / "judgments.jsonl").read_text().splitlines()) == 1
    err = _report_err(run, tmp_path, capsys)
    assert "(the last `ihbench judge` stopped before it finished (killed, or ended by an error))" in err, err
    assert f"`ihbench judge {run}` goes on from where it stopped" in err and "removed" not in err, err
    # battery 25 U8: while a judge holds the judgments file, it has not stopped; it is at work
    from ihbench.dataset.io import exclusive, lock_file_for

    with exclusive(lock_file_for(run / "judgments.jsonl"), "judgments file"):
        err = _report_err(run, tmp_path, capsys)
    assert "(a judge is writing this run's judgments now (pid " in err and "report again when it ends" in err, err
    assert "stopped before it finished" not in err
    monkeypatch.setattr(judge_run, "_judge_one", original)
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main([*judge, "--judge-base-url", server.base_url]) == 0
    assert json.loads((run / "judgments.asked.json").read_text())["unfinished"] is False
    assert "stopped before it finished" not in _report_err(run, tmp_path, capsys)


# --- finding 2: the judge's record edited to name questions no answer of the run has ---------------

def test_a_judges_record_naming_questions_of_no_answer_of_the_run_is_said_and_not_believed(official, tmp_path,
                                                                                           capsys):
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "1")
    folder = tmp_path / "questions"
    assert main(["judge", str(run), "--judge-model", "j", "--judge-batch", str(folder), "--cache",
                 str(tmp_path / "c.sqlite"), "--quiet"]) == 1
    asked = json.loads((run / "judgments.asked.json").read_text())
    (run / "judgments.asked.json").write_text(json.dumps({**asked, "waiting": [["nobody/0", 0, "tf"], "junk"]}))
    err = _report_err(run, tmp_path, capsys)
    assert f"{run / 'judgments.asked.json'}: it names nobody/0/0/tf, 'junk', not a question about an answer of this " \
           "run (edited by hand, or copied from another run?)" in err, err
    assert "wrote their questions to the batch folder" not in err and err.count("it names nobody") == 1, err


# --- findings 1 and 9: run.json edited so its two descriptions of the model disagree, or dated newer ----

@pytest.mark.parametrize("edit", ["loader", "model_path", "record_format"])
def test_a_run_json_edited_by_hand_is_refused_on_resume_naming_the_field(edit, official, tmp_path, capsys):
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "1")
    info = json.loads((run / "run.json").read_text())
    edited = {"loader": {"loader": "qwen2-audio"}, "model_path": {"model_path": "gpt-4o"},
              "record_format": {"record_format": 99}}[edit]
    (run / "run.json").write_text(json.dumps({**info, **edited}))
    before = (run / "responses.jsonl").read_bytes()
    capsys.readouterr()
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--epochs", "1", "--limit", "2", "--base-url", server.base_url, "--quiet"]) == 2
        assert server.requests == []
    err = capsys.readouterr().err
    said = {"loader": "'loader' is 'qwen2-audio' but 'model.loader' is", "model_path": "'model_path' is 'gpt-4o' but "
            "'model.model_path' is", "record_format": "'record_format' is 99: written by a newer ihbench"}[edit]
    assert "run.json" in err and said in err and "Traceback" not in err, err
    assert (run / "responses.jsonl").read_bytes() == before


# --- finding 8: a responses line copied from another run ----------------------------------------------

@pytest.mark.parametrize("source", ["another model", "another seed", "another temperature", "a second answer"])
def test_a_response_line_not_written_by_the_run_is_left_out_and_answered_by_the_run(source, official, tmp_path,
                                                                                    capsys, monkeypatch):
    """A line copied in from another model's run (or one drawn with another seed), or a second answer
    to an (item, epoch) the run already answered, is not this run's answer: said naming the line, and
    never scored in its place."""
    argv = ["run", "--model", "openai", "--data", str(official), "--epochs", "1", "--limit", "2", "--quiet"]
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main([*argv, "--model-path", "m", "--out", str(run), "--base-url", server.base_url]) == 0
        other = {"another model": ["--model-path", "m2"], "another seed": ["--model-path", "m", "--seed", "7"],
                 "another temperature": ["--model-path", "m", "--temperature", "0.7"]}.get(source, ["--model-path", "m"])
        assert main([*argv, *other, "--out", str(tmp_path / "other"), "--base-url", server.base_url]) == 0
        ours = (run / "responses.jsonl").read_text().splitlines(keepends=True)
        theirs = (tmp_path / "other" / "responses.jsonl").read_text().splitlines(keepends=True)
        if source == "a second answer":
            import dataclasses

            from ihbench.records import ResponseRecord

            mine = json.loads(ours[0])
            second = dataclasses.replace(ResponseRecord.from_json(mine), response="a better answer").to_json()
            lines = [*ours, json.dumps(second) + "\n"]
            why = f"a second record of {mine['id']} epoch 0, which an earlier line already answered"
        else:  # lines are in the order answers arrived: the other run's answer to the item ours[0] is not
            first = json.loads(ours[0])["id"]
            lines = [ours[0], next(line for line in theirs if json.loads(line)["id"] != first)]
            why = {"another model": "answered by openai:m2, and this run's model is openai:m",
                   "another seed": "its seed is not the one this run (--seed 0) draws for it",
                   "another temperature": "drawn with other generation settings"}[source]
        (run / "responses.jsonl").write_text("".join(lines))
        capsys.readouterr()
        assert main([*argv, "--model-path", "m", "--out", str(run), "--base-url", server.base_url]) == 0
        said = capsys.readouterr()
        assert f"responses.jsonl line {len(lines)}: " in said.err and why in said.err, said.err
        answered = 0 if source == "a second answer" else 1
        assert f"{answered} response(s) written" in said.out, said.out
    from ihbench.dataset.io import jsonlines
    from ihbench.rundir import RunDir

    monkeypatch.setattr(jsonlines, "_WARNED", set())  # a line is said once a process: the report is a new one
    err = _report_err(run, tmp_path, capsys)
    kept = RunDir(run).load()[1]
    assert len(kept) == 2 and all(r.model == "openai:m" for r in kept)
    if source == "a second answer":  # said until the line is removed; the first answer is the one scored
        assert why in err and [r.response for r in kept if r.id == mine["id"]] == [mine["response"]]
    else:  # the run answered the item itself: the copied line is superseded, and no longer said
        assert why not in err and json.loads(theirs[1])["id"] in {r.id for r in kept}
