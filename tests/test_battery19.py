"""Battery 19 (issue 23): findings P… of the nineteenth battery of bad inputs, tried on an installed wheel as a
new user would (/work/battery19/LOG.md). Each test's docstring names its finding. The model under test and
the judges are STAND-INS (scripted OpenAI-compatible servers on loopback)."""
import base64
import json

import pytest
from openai_test_server import OpenAITestServer, Reply

from ihbench.cli import main
from official_layout import write_official_layout


def test_a_urls_password_echoed_as_a_basic_credential_is_never_recorded(tmp_path, capsys):
    """Battery 19, P2 (try 30): a server that echoed the request's `Authorization: Basic base64(user:pw)` put the
    password of --base-url, base64-encoded, into responses.jsonl and the output."""
    data = write_official_layout(tmp_path / "official")
    password = "sk-test-b19-pw2"
    echo = []

    def respond(body):
        return Reply(status=401, content=f"bad credentials: {echo[-1]} (password {password})")

    with OpenAITestServer(respond=respond) as server:
        server_record = server.authorizations
        original = server.respond

        def noted(body):
            echo.append(server_record[-1])
            return original(body)
        server.respond = noted
        url = server.base_url.replace("http://", f"http://u:{password}@")
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", url, "--quiet"]) == 1
    encoded = base64.b64encode(f"u:{password}".encode()).decode()
    assert echo and echo[0] == f"Basic {encoded}"  # the client did send it so
    written = "".join(p.read_text() for p in (tmp_path / "r").rglob("*") if p.is_file())
    out = "".join(capsys.readouterr())
    for secret in (password, encoded):
        assert secret not in written and secret not in out
    assert "bad credentials: Basic <redacted>" in written


def test_any_basic_credential_in_a_servers_words_is_hidden():
    from ihbench.dataset.redaction import redact_text

    assert redact_text("proxy said: Authorization: Basic dXNlcjpwYXNz, go away") == \
        "proxy said: Authorization: Basic <redacted>, go away"
    for prose in ("the basic idea", "Basic authentication failed", "basic ABCD1234"):  # not base64 of user:password
        assert redact_text(prose) == prose
    # Battery 19, try 31: the placeholder sent where no key is needed is no secret (a message said a key was sent)
    assert redact_text("401: got Bearer EMPTY") == "401: got Bearer EMPTY"
    assert redact_text("401: got Bearer sk-abc") == "401: got Bearer <redacted>"


def test_a_compared_judgments_file_that_stopped_early_is_said_beside_the_agreement(tmp_path, capsys):
    """Battery 19, P3 (try 22): a second judge killed after 4 of 40 verdicts was reported as "agreement 1.000"
    with no word that it covered a tenth of the answers."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, (("j", None), ("k", "judgments-k.jsonl")), limit=3)
    second = run / "judgments-k.jsonl"
    lines = second.read_text().splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["id"] == json.loads(lines[0])["id"]]
    second.write_text("".join(kept))  # the verdicts of one item of three (3 epochs each)
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    said = "judgments-k.jsonl: 6 of 9 answer(s) have no TF/RQ judgment in it (the last judge's record says it judged"
    assert said in err, err
    assert "the agreement covers only the answers both files judged" in (tmp_path / "rep" / "report.md").read_text()


def test_answers_of_items_outside_the_runs_selection_are_left_out_and_said(tmp_path, capsys):
    """Battery 19, P2 (try 25): lines of an item the run never selected (copied from a run with a larger
    --limit) were judged and scored as this run's, the report counting 14 responses of 12 planned."""
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as server:
        for name, limit in (("small", "1"), ("large", "2")):
            assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                         str(tmp_path / name), "--limit", limit, "--epochs", "1", "--quiet", "--base-url",
                         server.base_url]) == 0
        small = tmp_path / "small" / "responses.jsonl"
        ours = json.loads(small.read_text())["id"]  # lines are in the order answers arrived: found by id
        extra = next(line for line in (tmp_path / "large" / "responses.jsonl").read_text().splitlines(keepends=True)
                     if json.loads(line)["id"] != ours)
        small.write_text(small.read_text() + extra)
        capsys.readouterr()
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "small"), "--limit", "1", "--epochs", "1", "--quiet", "--base-url",
                     server.base_url]) == 0
        assert "1 item(s) answered in it are not among this selection" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "small"), "--out", str(tmp_path / "rep"), "--quiet",
                 "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert "1 item(s) answered in responses.jsonl are not among the run's selection (--limit 1)" in err, err
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]
    assert summary["n_responses"] == 1 and summary["n_items"] == 1


def test_a_damaged_epoch_after_an_earlier_failed_try_is_said_not_taken_for_a_failure(tmp_path, capsys):
    """Battery 19, P3 (try 26): an answer line whose epoch was edited to a string was left out silently when an
    earlier line (the failed try it answered again) had the same item, and the run called it a failure."""
    data = write_official_layout(tmp_path / "official")
    down = OpenAITestServer(fail_when=lambda body: 500)
    with down:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--limit", "1", "--epochs", "1", "--quiet", "--base-url", down.base_url,
                     "--option", "max_retries=0"]) == 1
        url = down.base_url
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--limit", "1", "--epochs", "1", "--quiet", "--base-url", server.base_url,
                     "--allow-endpoint-change"]) == 0
    path = tmp_path / "r" / "responses.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 2 and json.loads(lines[0])["error"] and url
    answer = json.loads(lines[1])
    answer["epoch"] = "0"
    path.write_text(lines[0] + json.dumps(answer) + "\n")
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"]) == 0
    assert "responses.jsonl line 2: field 'epoch' has the wrong type (str)" in capsys.readouterr().err


def test_a_batch_answers_file_refused_for_another_model_puts_nothing_in_the_cache(tmp_path, capsys):
    """Battery 19, P2 (try 37): a judge refused for one answer by another model had already cached the answers
    before it; the next round then called this run's own answered questions "another command's" and kept them
    in requests.jsonl, to be paid for again."""
    from judging import ScriptedJudge
    from test_battery_round3 import _answered
    from test_verify_judge_batch import _batch_answers

    run = _answered(write_official_layout(tmp_path / "official"), tmp_path / "run", "--limit", "3")
    folder, cache = tmp_path / "questions", tmp_path / "c.sqlite"
    judge = ["judge", str(run), "--judge-model", "j", "--judge-batch", str(folder), "--cache", str(cache), "--quiet"]
    assert main(judge) == 1
    asked = (folder / "requests.jsonl").read_text()
    _batch_answers(folder / "requests.jsonl", folder / "out.jsonl", ScriptedJudge(faults=False))
    answers = [json.loads(line) for line in (folder / "out.jsonl").read_text().splitlines()]
    answers[-1]["response"]["body"]["model"] = "other-judge"  # the last line: every answer before it is usable
    (folder / "out.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    before = sorted(p.name for p in tmp_path.iterdir())
    capsys.readouterr()
    assert main(judge) == 2
    assert "answered by 'other-judge', not the judge asked for, 'j'" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == before and not cache.exists()
    assert (folder / "requests.jsonl").read_text() == asked and not (run / "judgments.jsonl").exists()

    answers[-1]["response"]["body"]["model"] = "j"
    (folder / "out.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    assert main(judge) in (0, 1)  # every question answered (a dependent one may wait a round)
    while (folder / "requests.jsonl").exists():
        _batch_answers(folder / "requests.jsonl", folder / "zz-next.jsonl", ScriptedJudge(faults=False))
        assert main(judge) in (0, 1)
    # the questions file of the first round put back, the answers moved away: the cache answers them all,
    # and they are this command's own questions, not kept for "another command"
    (folder / "requests.jsonl").write_text(asked)
    for answered in folder.glob("*.jsonl"):
        if answered.name != "requests.jsonl":
            answered.unlink()
    (run / "judgments.jsonl").unlink()
    capsys.readouterr()
    assert main(judge) == 0
    out = capsys.readouterr().out
    assert "another command asked" not in out and not (folder / "requests.jsonl").exists(), out


def _damaged_clips(root):
    """The official layout with conv-a's user_turn_2_audio not audio at all and conv-b's user_turn_4_audio NaN
    samples saved as 16-bit PCM (one value throughout)."""
    import io

    import datasets
    import numpy as np
    import soundfile

    from official_layout import official_features, official_rows

    data = write_official_layout(root)
    rows = official_rows()
    rows[0]["user_turn_2_audio"] = {"bytes": b"this is not audio at all", "path": "x.wav"}
    buffer = io.BytesIO()
    soundfile.write(buffer, np.full(16000, np.nan, np.float32), 16000, format="WAV")
    rows[1]["user_turn_4_audio"] = {"bytes": buffer.getvalue(), "path": "nan.wav"}
    datasets.Dataset.from_list(rows, features=official_features()).to_parquet(
        str(data / "conversations" / "test-00000-of-00001.parquet"))
    return data


def test_a_damaged_clip_of_the_data_is_an_item_error_naming_its_cell(tmp_path, capsys):
    """Battery 19, P2 (tries 39, 40): a cell that is not audio stopped `run` with "the audio bytes: not decodable
    audio" (no file, row or column; the run folder left behind), and NaN samples were fed to the model."""
    data = _damaged_clips(tmp_path / "official")
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--quiet", "--base-url", server.base_url]) == 1
        asked = len(server.requests)
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "r" / "responses.jsonl").read_text().splitlines())}
    assert asked == 1 and records["conv-b/1"]["response"]  # the one point whose clips are sound was asked
    garbage, constant = records["conv-a/2"]["error"], records["conv-b/4"]["error"]
    assert garbage.startswith("DamagedAudioError: conv-a/2: the interruption: ") and \
        "row 0 (conversation conv-a): column 'user_turn_2_audio': not decodable audio" in garbage, garbage
    assert "row 1 (conversation conv-b): column 'user_turn_4_audio': holds one value, -1, in every sample" in constant
    # Battery 20, Q3: said apart in the report, where a rerun cannot help
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"]) == 0
    assert ("2 of them on audio of the dataset that is damaged or silent (their errors name the file, row and "
            "column): they fail again until the dataset is mended or rebuilt") in capsys.readouterr().out


def test_info_names_the_cell_of_a_clip_that_is_not_audio(tmp_path, capsys):
    """Battery 19, P1 (try 39): `info` on a dataset with a cell that is not audio ended in torchcodec's traceback."""
    data = _damaged_clips(tmp_path / "official")
    assert main(["info", str(data)]) == 2
    err = capsys.readouterr().err
    assert "row 0 (conversation conv-a): column 'user_turn_2_audio': not decodable audio" in err and \
        "Traceback" not in err, err


def test_a_run_whose_answers_file_lost_lines_is_not_told_to_move_its_own_judgments_away(tmp_path, capsys):
    """Battery 19, P3 (try 44): responses.jsonl cut to its first lines (an older copy restored) was reported as
    "it is another run's judgments file; move it out of the way", advice that throws away good verdicts."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=3)
    answers = run / "responses.jsonl"
    answers.write_text("".join(answers.read_text().splitlines(keepends=True)[:3]))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"]) == 2
    err = capsys.readouterr().err
    assert "either responses.jsonl lost lines since they were judged (restored from an older copy?), then restore it" \
        in err, err


def test_a_refusal_is_recorded_with_its_words(tmp_path):
    """Battery 19, try 59: a reply with content null and a `refusal` was said as "no text" alone, the
    model's reason dropped, so a refusal read as an empty answer."""
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer(respond=lambda body: Reply(refusal="I cannot help with that.")) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--quiet", "--base-url",
                     server.base_url]) == 1
    record = json.loads((tmp_path / "r" / "responses.jsonl").read_text())
    assert record["response"] is None and record["error"] == ("EmptyReplyError: the server's reply has no text "
                                                              "(finish_reason 'stop'), only a refusal: "
                                                              "'I cannot help with that.'")


def test_a_run_of_points_the_space_picked_is_read_by_those_points(tmp_path, capsys):
    """Battery 19, P2 (try 62): every run the Space made (points picked by kind and count, handed to the runner)
    was reported with "run.json's data_fingerprint ... the data changed since the run's last start, or run.json was
    edited", and its failed answers were said to be tried again by `ihbench run`, which cannot resume it."""
    from ihbench.dataset import load_items
    from ihbench.runner import RunSpec, run

    data = write_official_layout(tmp_path / "official")
    picked = [item for item in load_items(str(data)) if item.id in ("conv-b/4", "conv-a/2")][::-1]
    with OpenAITestServer(fail_when=lambda body: 500 if "Mm-hm" in json.dumps(body) else None) as server:
        run(RunSpec(loader="openai", model_path="m", data=str(data), out=tmp_path / "space-run", epochs=1, modality="text",
                    loader_options={"base_url": server.base_url, "max_retries": 0}), items=picked, progress=False)
    info = json.loads((tmp_path / "space-run" / "run.json").read_text())
    assert info["item_ids"] == ["conv-b/4", "conv-a/2"] and info["limit"] is None
    capsys.readouterr()
    assert main(["report", str(tmp_path / "space-run"), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"]) == 0
    said = capsys.readouterr()
    assert "data_fingerprint" not in said.err and "not among the run's selection" not in said.err, said.err
    assert "1 failed response(s) not scored (a new run of the same points (the Space picked them" in said.out, said.out
    # Battery 20, Q8: the command line would have made it a run of every point; refused before anything is written
    before = (tmp_path / "space-run" / "responses.jsonl").read_text()
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "space-run"), "--epochs", "1", "--modality", "text", "--quiet", "--base-url",
                     server.base_url]) == 2
    assert "belongs to a run of 2 point(s) handed to the runner" in capsys.readouterr().err
    assert (tmp_path / "space-run" / "responses.jsonl").read_text() == before
    # Battery 20, Q10: item_ids edited to name a point the data lacks is said so, not "the answers are gone"
    info["item_ids"] = ["nope/1"]
    (tmp_path / "space-run" / "run.json").write_text(json.dumps(info))
    assert main(["report", str(tmp_path / "space-run"), "--out", str(tmp_path / "rep2"), "--quiet"]) == 2
    assert "run.json: item_ids names 1 point(s) the data does not have (e.g. nope/1)" in capsys.readouterr().err


def test_a_page_meeting_damaged_audio_of_the_served_data_says_so(caplog):
    """Battery 19, try 61: Browse on a turn whose clip is no audio said "something went wrong (AudioError)"."""
    import sys
    from pathlib import Path

    from ihbench.dataset.audio import AudioError

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spaces"))
    import app as space_app

    def damaged():
        raise AudioError("/data [conversations]: row 0 (conversation c): column 'user_turn_4_audio': not decodable audio")
    with caplog.at_level("WARNING", logger="ihbench"), pytest.raises(Exception) as shown:
        space_app.shown(damaged)()
    assert "this audio of the dataset is damaged" in str(shown.value) and "/data" not in str(shown.value)
    assert any("column 'user_turn_4_audio'" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("argv", [
    ["sid", "--data", "D", "--detector", "energy", "--out", "O", "--option", "margin_db=3", "--option", "margin_db=9"],
    ["run", "--model", "openai", "--model-path", "m", "--data", "D", "--out", "O", "--option", "timeout=5",
     "--option", "timeout=10"],
])
def test_one_option_key_given_twice_with_different_values_is_refused(argv, tmp_path, capsys, monkeypatch):
    """Battery 19, P3 (try 57): `--option margin_db=3 --option margin_db=9` was taken silently, the last winning,
    which changed a detector's scores."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and list(tmp_path.iterdir()) == []
    key = argv[-1].split("=")[0]
    assert f"--option {key}=" in capsys.readouterr().err


def test_a_source_field_that_is_null_is_said_as_null_not_missing(tmp_path):
    """Battery 19, try 10: `"turns": null` was reported as `turns: missing`."""
    from ihbench.dataset.sources import SourceError, load_conversation, source_files

    path = tmp_path / "c.json"
    data = json.loads(source_files()[0].read_text())
    data["turns"] = None
    path.write_text(json.dumps(data))
    with pytest.raises(SourceError, match=r"c\.json: turns: is null; expected a list"):
        load_conversation(path)


@pytest.mark.parametrize("command", ["run", "doctor"])
def test_a_bad_history_audio_is_refused_when_parsed(command, tmp_path, capsys, monkeypatch):
    """Battery 19, try 2: `--history-audio last:0` was named only after OPENAI_API_KEY was found missing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = [command, "--model", "openai", "--model-path", "m", "--history-audio", "last:0"]
    with pytest.raises(SystemExit) as stopped:
        main(argv + (["--data", "D", "--out", "O"] if command == "run" else []))
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "--history-audio: expected all, auto or last:K with K >= 1, got 'last:0'" in err
    assert "OPENAI_API_KEY" not in err and list(tmp_path.iterdir()) == []


def test_turns_on_one_file_that_is_no_audio_says_so_before_any_progress_bar(tmp_path, capsys):
    """Battery 19, try 8: an empty "turns: 0/? s of audio" bar was drawn before the error line."""
    bad = tmp_path / "t.wav"
    bad.write_text("not audio")
    assert main(["turns", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "t.wav: cannot decode audio" in err and "s of audio" not in err, err
    assert not (tmp_path / "out").exists()


def test_audio_the_space_plays_is_given_to_gradio_as_it_plays_it(tmp_path, monkeypatch):
    """Battery 19, try 61: every playback in the Space printed gradio's "Trying to convert audio automatically from
    float32 to 16-bit int format" on the server's console."""
    import warnings

    import gradio as gr
    import numpy as np

    from ihbench import ui

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    rate, samples = ui.playable(np.array([0.5, -2.0, 0.25], np.float32))
    assert rate == 16000 and samples.dtype == np.int16 and samples.tolist() == [16383, -32767, 8191]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gr.Audio().postprocess((rate, samples))


@pytest.mark.parametrize("typed, refused", [("http://127.0.0.1:8000/v1", True), ("http://10.1.2.3/v1", True),
                                           ("http://169.254.169.254/latest", True), ("http://[::1]:8000/v1", True),
                                           ("http://localhost:8000/v1", True), ("http://8.8.8.8/v1", False)])
def test_a_space_others_visit_calls_no_server_of_its_own_network_for_them(typed, refused, monkeypatch):
    """Battery 19, try 31: a visitor's typed URL made the Space call services only the server can reach."""
    from ihbench import ui

    monkeypatch.setenv("SPACE_ID", "me/space")
    monkeypatch.delenv(ui.OWNER_ENDPOINT, raising=False)
    if refused:
        with pytest.raises(ui.UserError, match="an address of this server's own network"):
            ui.server_options("model server", typed)
    else:
        assert ui.server_options("model server", typed)["base_url"] == typed
    monkeypatch.setenv(ui.OWNER_ENDPOINT, typed)  # the owner's own endpoint is theirs to name
    assert ui.server_options("model server", typed)["api_key_env"] == "OPENAI_API_KEY"
    monkeypatch.delenv("SPACE_ID")
    monkeypatch.delenv(ui.OWNER_ENDPOINT)
    assert ui.server_options("model server", typed)["base_url"] == typed  # served on this machine only: its owner


@pytest.mark.parametrize("content", ["<|im_end|>", " <|eot_id|>\n", "</s>", "<end_of_turn><|endoftext|>",
                                     "<|im_start|>assistant\n<|im_end|>",
                                     "<|start_header_id|>assistant<|end_header_id|>\n\n<|eot_id|>"])
def test_a_served_reply_of_special_tokens_only_is_no_answer(content, tmp_path):
    """Battery 19, try 19: a server that leaked its end-of-turn token ("<|im_end|>") had it stored and scored as
    the model's answer; a local loader's answer of special tokens only is an EmptyReplyError."""
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer(respond=lambda body: Reply(content=content)) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--quiet", "--base-url",
                     server.base_url]) == 1
    record = json.loads((tmp_path / "r" / "responses.jsonl").read_text())
    assert record["response"] is None and record["error"].startswith("EmptyReplyError: the server's reply is only "
                                                                      "special tokens")
    with OpenAITestServer(respond=lambda body: Reply(content="Sure, assistant here. <|im_end|>")) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r2"), "--epochs", "1", "--limit", "1", "--quiet", "--base-url",
                     server.base_url]) == 0
    # Battery 20, Q6: words with a leaked end-of-turn token are the words alone, as a local loader's answer is
    assert json.loads((tmp_path / "r2" / "responses.jsonl").read_text())["response"] == "Sure, assistant here."


def test_an_answer_that_echoes_the_credentials_sent_is_recorded_without_them(tmp_path, monkeypatch, capsys):
    """Battery 20, Q1: redaction covered a server's error texts only; an answer (HTTP 200) echoing the request's
    Authorization header wrote the key, and a URL's password as unpadded base64, into responses.jsonl."""
    data = write_official_layout(tmp_path / "official")
    key, password = "sk-test-b20-key-0123456789", "pw-b20-secret"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    seen = []
    with OpenAITestServer() as server:
        server.respond = lambda body: Reply(content=f"you sent {seen[-1]}; unpadded {seen[-1].split()[-1].rstrip('=')}")
        original = server.respond

        def noting(body):
            seen.append(server.authorizations[-1])
            return original(body)
        server.respond = noting
        for name, url in (("key", server.base_url), ("pw", server.base_url.replace("http://", f"http://u:{password}@"))):
            main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(tmp_path / name),
                  "--epochs", "1", "--limit", "1", "--quiet", "--base-url", url])
    encoded = base64.b64encode(f"u:{password}".encode()).decode()
    assert seen == [f"Bearer {key}", f"Basic {encoded}"]
    written = "".join(p.read_text() for p in tmp_path.rglob("*.jsonl"))
    for secret in (key, password, encoded, encoded.rstrip("=")):
        assert secret not in written
    assert "you sent Bearer <redacted>" in written and "you sent Basic <redacted>" in written


def test_a_clip_of_no_samples_is_said_so_not_in_the_decoders_words():
    """Battery 20, Q3: a 0-sample WAV in the data read "No audio frames were decoded. This is probably because
    start_seconds is too high(0)", about options the user never gave."""
    import io

    import numpy as np
    import soundfile

    from ihbench.dataset.audio import AudioError, decode_audio

    buffer = io.BytesIO()
    soundfile.write(buffer, np.zeros(0, np.float32), 16000, format="WAV")
    with pytest.raises(AudioError, match=r"^cell x: no audio \(0 samples\)$"):
        decode_audio(buffer.getvalue(), where="cell x")


def test_a_judged_run_narrowed_by_limit_is_judged_and_reported_over_its_selection(tmp_path, capsys):
    """Battery 20, Q4: narrowing a judged run's --limit made judge and report refuse it ("responses.jsonl lost
    lines, or another run's judgments file"): the verdicts of the items left out counted as foreign."""
    from judging import ScriptedJudge

    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run), "--epochs", "1",
            "--quiet"]
    with OpenAITestServer() as server:
        assert main([*argv, "--limit", "3", "--base-url", server.base_url]) == 0
        with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
            assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                         str(tmp_path / "c.sqlite"), "--quiet"]) == 0
            assert main([*argv, "--limit", "2", "--base-url", server.base_url]) == 0
            capsys.readouterr()
            assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                         str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    assert "judgment(s) of items outside the run's selection" in capsys.readouterr().err
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert "lost lines" not in err and "1 item(s) answered in responses.jsonl are not among the run's selection" in err
    assert json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]["n_items"] == 2


def test_json_in_an_option_giving_one_key_twice_is_refused(tmp_path, capsys, monkeypatch):
    """Battery 20, Q5: `--option 'extra_body={"a":1,"a":2}'` was taken, the request carrying a=2 without a word."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--model", "openai", "--model-path", "m", "--data", "D", "--out", "O", "--option",
              'extra_body={"a": 1, "b": {"c": 1, "c": 2}}'])
    assert stopped.value.code == 2 and list(tmp_path.iterdir()) == []
    assert "extra_body: its JSON gives the key 'c' twice; give it once" in capsys.readouterr().err


def test_a_connection_error_names_the_server_it_tried(tmp_path):
    """Battery 20, Q7: "APIConnectionError: Connection error." named no server, though several may be given
    or the endpoint changed since the run began."""
    import socket

    data = write_official_layout(tmp_path / "official")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(tmp_path / "r"),
                 "--epochs", "1", "--limit", "1", "--quiet", "--base-url", f"http://u:pw-secret@127.0.0.1:{port}/v1",
                 "--option", "max_retries=0"]) == 1
    error = json.loads((tmp_path / "r" / "responses.jsonl").read_text())["error"]
    assert error.endswith(f"(server http://127.0.0.1:{port})") and "pw-secret" not in error, error


def test_a_server_that_redirects_is_not_followed(tmp_path):
    """Battery 20, Q9: the public Space's rule against URLs of its own network was bypassed by a public host
    answering 307 to http://127.0.0.1:PORT/: the client followed the redirect."""
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as inside:
        redirect = lambda body: Reply(status=307, headers={"Location": inside.base_url + "/chat/completions"})  # noqa
        with OpenAITestServer(respond=redirect) as outside:
            assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                         str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--quiet", "--base-url",
                         outside.base_url]) == 1
        assert inside.requests == []
    assert json.loads((tmp_path / "r" / "responses.jsonl").read_text())["error"].startswith("TransportError: HTTP 307")


def test_an_upload_of_hours_of_audio_is_refused_from_its_header(tmp_path):
    """Battery 20, Q11: 20 MB of compressed silence (hours of audio) was decoded whole by a public Space, tens
    of GB; the length is read from the header and refused before any decoding."""
    import numpy as np
    import soundfile

    from ihbench import ui

    long_file = tmp_path / "long.flac"
    with soundfile.SoundFile(str(long_file), "w", 8000, 1, format="FLAC") as out:
        block = np.zeros(8000 * 60, np.float32)
        for _ in range(25):  # 25 minutes of silence: a few hundred kB
            out.write(block)
    assert long_file.stat().st_size < ui.MAX_UPLOAD_BYTES
    with pytest.raises(ui.UserError, match="the recording is 25 minutes long; this Space analyses up to 20 minutes"):
        ui.refuse_oversize_upload(str(long_file))


def test_ctrl_c_says_what_was_kept_as_sigterm_does(tmp_path, capsys, monkeypatch):
    """Battery 20, Q12: Ctrl-C stopped a run without a word, though SIGTERM says what was kept and how to go on."""
    import ihbench.runner as runner

    data = write_official_layout(tmp_path / "official")
    capsys.readouterr()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(runner, "_run_locked", interrupted)
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(tmp_path / "r"),
                 "--epochs", "1", "--quiet", "--base-url", "http://127.0.0.1:9/v1"]) == 130
    assert capsys.readouterr().err.strip() == ("ihbench run: stopped (Ctrl-C); anything it wrote is kept, and the same "
                                               "command goes on from there")


def test_a_compared_judgments_file_judged_on_one_axis_is_told_the_axis_to_add(tmp_path, capsys):
    """Battery 20, Q13: for a second judgments file made with --axes tf the report said running its command
    again "judges the rest"; it judges nothing (its --axes tf leaves RQ out again)."""
    from judging import ScriptedJudge

    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=2)
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "k", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet", "--axes", "tf", "--out", str(run / "judgments-k.jsonl")]) == 0
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"]) == 0
    assert "the `ihbench judge` command that wrote judgments-k.jsonl, with --axes rq, judges the rest" in \
        capsys.readouterr().err


def test_a_new_output_path_with_a_line_break_is_refused(tmp_path, capsys, monkeypatch):
    """Battery 20, Q15: `--out` with a newline or tab was taken (--model-name refuses one since battery 17)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--model", "openai", "--model-path", "m", "--data", "D", "--out", "runs/a\nb"])
    assert stopped.value.code == 2 and list(tmp_path.iterdir()) == []
    assert "a control character (a line break or tab) in a new path's name" in capsys.readouterr().err


def test_the_spaces_evaluate_table_keeps_its_rows_when_a_clip_is_damaged(tmp_path):
    """Battery 20, Q19: one damaged clip made the Evaluate tab drop the whole table (answers and item failures);
    the player stays empty for that point instead."""
    from ihbench import ui
    from ihbench.dataset import load_items

    data = _damaged_clips(tmp_path / "official")
    items = {item.id: item for item in load_items(str(data))}
    from ihbench.dataset.audio import AudioError

    with pytest.raises(AudioError):
        items["conv-a/2"].interruption.audio.decode()  # the damaged point's own clip
    assert ui._interruption_audio(items["conv-a/2"]) is None
    rate, samples = ui._interruption_audio(items["conv-b/1"])
    assert rate == 16000 and samples.size


def test_the_spaces_metrics_tab_refuses_a_verdict_edited_by_hand(tmp_path):
    """Battery 20, Q14: the Metrics tab scored a hand-edited verdict the CLI leaves out (TF 0.0 against the
    CLI's "no TF judgment" for the same file)."""
    from judged_runs import judged_run

    from ihbench import ui

    run = judged_run(tmp_path)
    path = run / "judgments.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    tf = next(i for i, line in enumerate(lines) if line["axis"] == "tf")
    lines[tf]["verdict"] = "baseline" if lines[tf]["verdict"] != "baseline" else "model"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ui.UserError, match=rf"line {tf + 1} of this judgments file is not as `ihbench judge` wrote it"):
        ui.metrics_table("tf_win_rate", str(path))


def test_a_plot_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """Battery 20 (nit): a report killed while drawing left a 0-byte PNG under the plot's name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ihbench.dataset.plotting import save_figure

    target = tmp_path / "plot.png"
    target.write_bytes(b"the earlier plot")
    figure = plt.figure()

    def killed_while_drawing(path, **options):
        open(path, "wb").close()  # the file begun, nothing in it yet
        raise KeyboardInterrupt
    monkeypatch.setattr(figure, "savefig", killed_while_drawing)
    with pytest.raises(KeyboardInterrupt):
        save_figure(figure, target)
    assert target.read_bytes() == b"the earlier plot" and sorted(p.name for p in tmp_path.iterdir()) == ["plot.png"]
    save_figure(plt.figure(), target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_timeout_says_how_long_was_waited(tmp_path):
    """Battery 20 (nit): a timeout's error did not say the timeout it hit."""
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer(delay=3) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(tmp_path / "r"),
                     "--epochs", "1", "--limit", "1", "--quiet", "--base-url", server.base_url, "--option", "timeout=1",
                     "--option", "max_retries=0"]) == 1
    error = json.loads((tmp_path / "r" / "responses.jsonl").read_text())["error"]
    assert "APITimeoutError" in error and " after 1 s (the request timeout, a setting of the command)" \
        in error, error


def test_an_upload_whose_header_understates_its_length_is_refused_by_a_bounded_decode(tmp_path, monkeypatch):
    """Battery 21, R4: an Ogg whose header states a short length was decoded whole (102 kB: 25 minutes)."""
    import numpy as np
    import soundfile

    import ihbench.dataset.audio as audio
    from ihbench import ui

    monkeypatch.setattr(ui, "MAX_UPLOAD_SECONDS", 20)
    long_file, short_file = tmp_path / "long.flac", tmp_path / "short.flac"
    soundfile.write(str(long_file), np.zeros(16000 * 25, np.float32), 16000)
    soundfile.write(str(short_file), np.zeros(16000 * 5, np.float32), 16000)
    monkeypatch.setattr(audio, "audio_header_seconds", lambda source: 1.0)  # a header that lies
    with pytest.raises(ui.UserError, match="the recording is longer than its header says"):
        ui.refuse_oversize_upload(str(long_file))
    ui.refuse_oversize_upload(str(short_file))
    assert audio.longer_than(str(long_file), 20) and not audio.longer_than(str(short_file), 20)


def test_run_says_which_failures_a_rerun_cannot_mend(tmp_path, capsys):
    """Battery 21, R1: `run`'s own summary called failures on the dataset's damaged audio "tried again by the
    next run", which fails them again."""
    data = _damaged_clips(tmp_path / "official")
    capsys.readouterr()
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--base-url", server.base_url]) == 1
    assert "note: 2 of the failed response(s) are on audio of the dataset that is damaged or silent" in \
        capsys.readouterr().out


def test_a_redirect_says_where_to_and_that_none_is_followed(tmp_path):
    """Battery 21, R3: "HTTP 307" alone, and the same command said to try again, for a server that redirects."""
    data = write_official_layout(tmp_path / "official")
    moved = lambda body: Reply(status=307, headers={"Location": "https://u:pw-r3@elsewhere.example/v1/chat"})  # noqa
    with OpenAITestServer(respond=moved) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--quiet", "--base-url",
                     server.base_url]) == 1
    error = json.loads((tmp_path / "r" / "responses.jsonl").read_text())["error"]
    assert "(a redirect to https://<redacted>@elsewhere.example/v1/chat: ihbench follows no redirects; give the " \
           "server's own URL)" in error, error


def test_the_spaces_error_cells_mask_the_servers_paths(tmp_path, monkeypatch):
    """Battery 21, R7: the Evaluate table's error cells showed a public Space's visitors the server's paths (a
    damaged clip's error names the dataset folder)."""
    from ihbench import ui

    data = _damaged_clips(tmp_path / "official")
    monkeypatch.setenv("IHBENCH_DATA", str(data))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path / "runs"))
    with OpenAITestServer() as server:
        *_, (rows, _, _) = ui.evaluate_stream("openai", "m", None, None, 3, 1, 16, server.base_url)
    errors = [row[5] for row in rows if row[5]]
    assert errors and all(str(data) not in error for error in errors), errors
    assert any("<dataset> [conversations]: row 0 (conversation conv-a)" in error for error in errors), errors


def test_a_run_json_whose_types_are_no_interruption_types_is_named(tmp_path, capsys):
    """Battery 21, R6: a bad `types` in run.json was reported as if the user had typed it, naming no file."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    info = json.loads((run / "run.json").read_text())
    info["types"] = ["nonsense"]
    (run / "run.json").write_text(json.dumps(info))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    assert f"{run / 'run.json'}: field 'types' holds 'nonsense', which is not an interruption type" in \
        capsys.readouterr().err


def test_a_folder_where_the_judges_record_belongs_is_said_before_judging(tmp_path, capsys):
    """Battery 21, R8: with judgments.asked.json a folder, the judge ended in a raw OSError naming a temporary
    file."""
    from judging import ScriptedJudge

    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    (run / "judgments.asked.json").unlink()
    (run / "judgments.asked.json").mkdir()
    before = (run / "judgments.jsonl").read_text()
    capsys.readouterr()
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{run / 'judgments.asked.json'}: is a folder, not the judge's record of what it asked" in err, err
    assert (run / "judgments.jsonl").read_text() == before


def test_a_number_too_long_to_read_is_a_damaged_line_not_a_traceback(tmp_path, capsys):
    """Battery 21, R10: a 5,000-digit integer in a line (Python reads at most 4,300 digits) crashed run, judge
    and report with a traceback naming no file."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    with open(run / "responses.jsonl", "a") as handle:
        handle.write('{"id": "conv-a/2", "epoch": ' + "9" * 5000 + "}\n")
    capsys.readouterr()
    main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "a number too long to read" in err and "responses.jsonl" in err, err
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info)[:-1] + ', "n": ' + "7" * 5000 + "}")
    assert main(["report", str(run), "--out", str(tmp_path / "rep2"), "--quiet"]) == 2
    assert "run.json: a number too long to read" in capsys.readouterr().err


@pytest.mark.parametrize("line, said", [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                                        ('{"verdict": ' + "9" * 5000 + "}", "a number too long to read"),
                                        ("{not json", "not valid JSON")])
def test_the_spaces_metrics_tab_reads_uploads_as_the_cli_does(line, said, tmp_path):
    """Battery 21, R11: a deeply nested line or a number too long for Python answered "something went wrong"."""
    from ihbench import ui

    upload = tmp_path / "verdicts.jsonl"
    upload.write_text(line + "\n")
    with pytest.raises(ui.UserError, match=f"not a usable JSON-lines file: line 1: {said}"):
        ui.metrics_table("tf_win_rate", str(upload))


def test_a_suggested_command_is_quoted_for_the_shell(tmp_path, capsys):
    """Battery 21 R5: "`ihbench judge /tmp/ünï cödé run --axes rq`" pasted into a shell is four arguments
    and fails; every path in a suggested command is quoted as the shell needs."""
    import shlex

    from judging import ScriptedJudge
    from test_battery_round3 import _answered

    from ihbench.dataset.errors import command_line

    official = write_official_layout(tmp_path / "official")
    run = _answered(official, tmp_path / "ünï cödé run", "--limit", "1")
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet", "--axes", "tf"]) == 0
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    suggested = f"`ihbench judge '{run}' --axes rq` judges only those"
    assert suggested in err, err
    assert shlex.split(suggested.split("`")[1]) == ["ihbench", "judge", str(run), "--axes", "rq"]
    assert command_line("ihbench", "report", "/plain/path") == "ihbench report /plain/path"


def test_a_run_json_whose_n_items_contradicts_its_selection_plans_the_selection(tmp_path, capsys):
    """Battery 21, R6 (c): n_items edited to 999 in run.json was believed ("unfinished: 12 of 1998 planned")."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=2)
    info = json.loads((run / "run.json").read_text())
    planned = info["n_items"] * info["epochs"]
    info["n_items"] = 999
    (run / "run.json").write_text(json.dumps(info))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert f"{run / 'run.json'}: n_items says 999, but the run's selection holds 2 item(s)" in err, err
    assert "unfinished" not in err
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert [r["n_planned"] for r in summary["runs"]] == [planned]


def test_another_judges_errors_bind_no_judge_and_are_tried_again(tmp_path, capsys):
    """Battery 20, Q18: a judge that failed every call (a mistyped URL) left judge_errors that tied the
    judgments file to its name; the right judge was refused ("use --out"). Errors are no verdicts: the
    next judge tries them, and only verdicts bind a file to their judge."""
    import socket

    from judging import ScriptedJudge
    from test_battery_round3 import _answered

    run = _answered(write_official_layout(tmp_path / "official"), tmp_path / "run", "--limit", "2")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    judge = ["judge", str(run), "--cache", str(tmp_path / "c.sqlite"), "--quiet", "--judge-base-url"]
    assert main([*judge, dead, "--judge-model", "typo-judge", "--timeout", "5"]) == 1
    lines = [json.loads(line) for line in (run / "judgments.jsonl").open()]
    assert lines and {line["outcome"] for line in lines} == {"judge_error"}
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main([*judge, server.base_url, "--judge-model", "j"]) == 0
        assert "4 judged" in capsys.readouterr().out
        assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
        assert main([*judge, server.base_url, "--judge-model", "j2"]) == 2  # verdicts do bind
    assert "holds judgments by j; write another judge's verdicts to another file (--out)" in capsys.readouterr().err
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]
    assert summary["judge_errors"] == {"tf": 0, "rq": 0} and summary["tf_win_rate"]["n_items"] == 2
