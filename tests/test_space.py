"""The Gradio Space through gradio_client: each tab's main function against a launched app."""
import json
import os
import socket
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from space_browser import free_port

sys.path.insert(0, str(REPO / "spaces"))


@pytest.fixture(scope="module")
def space(built, tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    (runs / "tiny").mkdir()
    (runs / "tiny" / "summary.json").write_text(json.dumps({"runs": [{
        "model": "/x/tiny-model", "modality": "audio", "tf_win_rate": {"tf_win_rate": 0.91},
        "rq_pass_rate": {"rq_pass_rate": 0.42}}]}))
    import app as space_app
    from gradio_client import Client

    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("IHBENCH_DATA", str(built))
        environment.setenv("IHBENCH_RUNS", str(runs))
        demo = space_app.build_app()
        port = free_port()
        space_app.serve(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True,
                        max_file_size="20mb", quiet=True)
        try:
            yield Client(f"http://127.0.0.1:{port}/", verbose=False), built
        finally:
            demo.close()


def test_browse_shows_turns_audio_and_rubric(space):
    client, built = space
    from ihbench.dataset import load_items

    item = load_items(built)[0]
    transcript, turns = client.predict(item.conversation_id, api_name="/show_conversation")
    assert item.interrupted.delivered in transcript
    label = f"{item.turn} · {item.interruption_type}"
    detail, assistant_audio, user_audio = client.predict(item.conversation_id, label, api_name="/show_turn")
    assert "TF criterion" in detail and item.rubric.tf in detail and item.interrupted.original in detail
    import soundfile

    for clip, expected in ((user_audio, item.interruption.audio), (assistant_audio, item.interrupted.audio)):
        assert soundfile.info(clip).duration == pytest.approx(expected.duration(), abs=0.05)


def test_evaluate_streams_responses_from_a_tiny_local_model_into_a_run_directory(space, tmp_path):
    import os

    import soundfile
    from ihbench.dataset import load_items
    from ihbench.loaders.tiny import make_tiny_model

    from ihbench.rundir import RunDir

    client, built = space
    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    rows, audio = client.predict("qwen2-audio", str(model), "", "", 2, 1, 4, "", api_name="/run_model")
    assert len(rows["data"]) == 2 and all(row[5] == "" for row in rows["data"])
    last = next(i for i in load_items(built) if i.id == rows["data"][-1][0])
    assert soundfile.info(audio).duration == pytest.approx(last.interruption.audio.duration(), abs=0.05)
    runs = Path(os.environ["IHBENCH_RUNS"]).glob("space-*")
    run_dir = RunDir(max(runs, key=lambda p: p.stat().st_mtime))
    assert run_dir.info().loader == "qwen2-audio"  # the runner wrote it: a real run.json, not a stand-in
    assert [r.id for r in run_dir.responses()] == [row[0] for row in rows["data"]]


def test_a_missing_model_path_is_a_message_not_a_crash(space):
    from gradio_client.exceptions import AppError

    client, _ = space
    with pytest.raises(AppError) as error:
        client.predict("qwen2-audio", "/secret/place/nope", "", "", 1, 1, 4, "", api_name="/run_model")
    assert "not found" in str(error.value) and "/secret/place" not in str(error.value)
    table = client.predict(api_name="/leaderboard")  # still serving
    assert "paper" in [row[5] for row in table["data"]]


def test_a_visitors_bad_input_is_said_as_the_cli_says_it_with_no_traceback_on_the_terminal(space, capfd, tmp_path):
    """Battery 13, I8: a server URL `ftp://x` was answered "the model could not be run (ArgumentValueError)",
    a model path /etc "(ModelFolderError)", and each refusal printed gradio's traceback on the terminal."""
    from gradio_client.exceptions import AppError

    client, _ = space
    capfd.readouterr()
    said = {}
    for name, args in (("url", ("openai", "m", "", "", 1, 1, 4, "ftp://x")),
                       ("folder", ("qwen2-audio", "/etc", "", "", 1, 1, 4, ""))):
        with pytest.raises(AppError) as error:
            client.predict(*args, api_name="/run_model")
        said[name] = str(error.value)
    assert "server URL: expected an http:// or https:// URL with a host" in said["url"] and "'ftp://x'" in said["url"]
    assert "the model could not be run: /etc: no config.json; this is not a transformers model folder" \
        in said["folder"]
    assert "Traceback" not in capfd.readouterr().err
    from ihbench import ui

    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(ui.UserError, match=r"^judge endpoint: expected an http:// or https:// URL with a host, .* "
                                           r"got 'not a url'$"):
        ui.judge_run_dir(str(tmp_path), "not a url", "j")


@pytest.mark.parametrize("position, label", [(4, "Interruption points"), (5, "Epochs"), (6, "Max new tokens")])
def test_a_fraction_sent_for_a_count_through_the_api_is_refused_not_cut(position, label, space, tmp_path):
    """The page's sliders step by one, but its API took 2.5 interruption points (or epochs, or tokens) and ran 2
    without a word. Refused before a run folder is made."""
    from gradio_client.exceptions import AppError

    client, _ = space
    runs = Path(os.environ["IHBENCH_RUNS"])  # set by the fixture while the Space serves
    before = sorted(runs.rglob("*"))
    args = ["openai", "m", "", "", 2, 1, 4, "http://127.0.0.1:9/v1"]
    args[position] = 1.5
    with pytest.raises(AppError) as error:
        client.predict(*args, api_name="/run_model")
    assert f"{label}: expected a whole number, got 1.5" in str(error.value)
    assert sorted(runs.rglob("*")) == before


def test_judging_the_spaces_run_gives_scores_a_chart_and_a_report(built, tmp_path):
    import app as space_app
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer

    from ihbench.runner import RunSpec, run

    with OpenAITestServer() as model:
        run(RunSpec(loader="openai", model_path="m", data=str(built), out=tmp_path / "space-run", epochs=1, limit=2,
                    loader_options={"base_url": model.base_url}), progress=False)
    with OpenAITestServer(respond=ScriptedJudge()) as judge_server:
        table, chart = space_app.judge.__wrapped__(str(tmp_path / "space-run"), judge_server.base_url, "judge-x")
    names = [row[0] for row in table]
    assert "tf_win_rate" in names and "rq_pass_rate" in names
    assert Path(chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "space-run" / "summary.json").is_file() and (tmp_path / "space-run" / "report.md").is_file()


def test_detect_on_an_sid_clip_and_bad_uploads(space, tmp_path):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    client, _ = space
    from ihbench import ui

    clip = ui.sid_clip_choices()[0]
    figure, result = client.predict("energy", None, clip, api_name="/detect")
    assert "prediction" in result and result["truth"]["audio"] == clip
    not_audio = tmp_path / "notes.wav"
    not_audio.write_text("this is not audio")
    with pytest.raises(AppError, match="not usable audio") as error:
        client.predict("energy", handle_file(str(not_audio)), "", api_name="/detect")
    said = str(error.value)  # battery 16 (try 70): the visitor's file name, no upload folder of the server
    assert "notes.wav" in said and "/tmp" not in said and said.count("(") == said.count(")"), said


def test_metrics_tab_scores_an_uploaded_file(space, tmp_path):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    client, _ = space
    path = tmp_path / "verdicts.jsonl"
    path.write_text("\n".join(json.dumps({"verdicts": v, "item_id": i}) for v, i in
                              [([True, True], "a"), ([True, False], "a"), ([True], "b")]))
    table = client.predict("rq_pass_rate", handle_file(str(path)), api_name="/score_file")
    values = {row[0]: row[1] for row in table["data"]}
    assert float(values["rq_pass_rate"]) == 0.75 and int(values["n_items"]) == 2
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json")
    with pytest.raises(AppError, match="not a usable JSON-lines file"):
        client.predict("rq_pass_rate", handle_file(str(broken)), api_name="/score_file")


def test_leaderboard_shows_the_paper_and_local_runs(space):
    client, _ = space
    table = client.predict(api_name="/leaderboard")
    sources = [row[5] for row in table["data"]]
    assert "paper" in sources and "runs/tiny" in sources
    assert table["headers"] == ["model", "TF win rate", "RQ pass rate", "items", "data", "source"]


def test_a_judge_endpoint_that_does_not_answer_is_a_message(built, tmp_path, monkeypatch):
    from openai_test_server import OpenAITestServer

    from ihbench import ui
    from ihbench.runner import RunSpec, run

    monkeypatch.setenv("IHBENCH_DATA", str(built))
    with OpenAITestServer() as model:
        run(RunSpec(loader="openai", model_path="m", data=str(built), out=tmp_path / "run", epochs=1, limit=1,
                    loader_options={"base_url": model.base_url}), progress=False)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with pytest.raises(ui.UserError, match="no usable verdicts") as error:
        ui.judge_run_dir(str(tmp_path / "run"), dead, "judge-x")
    # the reason, as the CLI would say it (the endpoint is the visitor's own), no server path
    assert "judge errors): TransportError" in str(error.value) and str(tmp_path) not in str(error.value)
    # battery 20, Q18: the failed attempt's errors bind the run to no judge; the right one judges it
    from judging import ScriptedJudge

    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        table, _ = ui.judge_run_dir(str(tmp_path / "run"), judge.base_url, "judge-y")
        assert {row[0]: row[1] for row in table}["judge_errors"] == 0
        assert {json.loads(line)["judge_model"] for line in (tmp_path / "run" / "judgments.jsonl").open()
                if json.loads(line)["outcome"] == "judged"} == {"judge-y"}
        # verdicts do bind: another judge is told the Space's way, not the CLI's --out
        with pytest.raises(ui.UserError, match="holds verdicts by judge-y, and the Space keeps one judge's") as other:
            ui.judge_run_dir(str(tmp_path / "run"), judge.base_url, "judge-z")
        assert "--out" not in str(other.value)


@pytest.mark.parametrize("failure", ["user error", "bug"])
def test_a_failed_judging_is_a_message_and_a_bug_keeps_its_traceback_in_the_log(failure, tmp_path, monkeypatch,
                                                                                 caplog):
    from ihbench import ui
    from ihbench.rundir import RunDirError

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")

    async def judge_run(*args, **kwargs):
        if failure == "bug":
            return {}["missing"]
        raise RunDirError("/srv/secret/path: responses for items not in the data")

    monkeypatch.setattr("ihbench.judge.judge_run", judge_run)
    with caplog.at_level("ERROR", logger="ihbench"), pytest.raises(ui.UserError) as error:
        ui.judge_run_dir(str(tmp_path / "run"), "http://127.0.0.1:9/v1", "judge-x")
    assert "/srv/secret" not in str(error.value)
    if failure == "bug":
        assert "an internal error (KeyError); the server log has the traceback" in str(error.value)
        assert "Traceback" in caplog.text and "KeyError" in caplog.text
    else:
        assert str(error.value) == "the run could not be judged: <server path>: responses for items not in the " \
            "data" and not caplog.text


def test_oversize_uploads_are_refused_with_a_message(tmp_path, monkeypatch):
    from ihbench import ui

    monkeypatch.setattr(ui, "MAX_UPLOAD_BYTES", 1000)
    big = tmp_path / "big.wav"
    big.write_bytes(b"\0" * 5000)
    with pytest.raises(ui.UserError, match="larger than"):
        ui.detect("energy", str(big), None)
    with pytest.raises(ui.UserError, match="too large"):
        ui.metrics_table("rq_pass_rate", str(big))


@pytest.mark.parametrize("metric", ["fir", "irl", "apt"])
def test_the_metrics_tab_says_what_sid_predictions_alone_lack(metric, tmp_path):
    """Battery 45, R13: `ihbench sid`'s own predictions.jsonl, uploaded to a SID metric, was refused as
    "missing 'prediction'": the file holds predictions without their references."""
    from ihbench import ui
    from ihbench.sid.predictions import write_predictions

    path = write_predictions([{"audio": "a.wav", "total_nonbreak": False, "break_time": 1.5},
                              {"audio": "b.wav", "total_nonbreak": True, "break_time": -1}], tmp_path / "p.jsonl")
    with pytest.raises(ui.UserError, match=r"^these are SID predictions alone .* `ihbench sid --data DATA "
                                           r"--predictions FILE --out OUT`$"):
        ui.metrics_table(metric, str(path))


def test_without_data_the_space_builds_a_setup_page_not_a_traceback(tmp_path, monkeypatch):
    """No IHBENCH_DATA and no ./data/ihbench-dev: the page says what to set; metrics still work."""
    import app as space_app

    from ihbench import ui

    monkeypatch.delenv("IHBENCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert ui.data_dir() is None and "the variable `IHBENCH_DATA`" in ui.data_problem()
    demo = space_app.build_app()
    markdown = [block.value for block in demo.blocks.values() if type(block).__name__ == "Markdown"]
    assert any("IHBENCH_DATA" in text for text in markdown)
    monkeypatch.setenv("IHBENCH_DATA", str(tmp_path / "missing"))
    assert ui.data_dir() == str(tmp_path / "missing")  # not a folder here: passed on as a Hub id
    assert "cannot be browsed here" in ui.data_problem()


def test_two_runs_in_the_same_second_get_their_own_folders(built, tmp_path, monkeypatch):
    """A click's run folder is unique: a second run within the same second used to reuse (and be
    refused by) the first one's folder."""
    import time

    from openai_test_server import OpenAITestServer

    from ihbench import ui

    monkeypatch.setenv("IHBENCH_DATA", str(built))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr(time, "strftime", lambda *args: "20261123-120000")
    with OpenAITestServer() as server:
        folders = [list(ui.evaluate_stream("openai", model, None, None, 1, 1, 4, server.base_url))[-1][2]
                   for model in ("model-a", "model-b")]
    assert folders[0] != folders[1] and all(Path(f, "run.json").is_file() for f in folders)


def test_turns_tab_on_a_duplex_recording_agrees_with_its_ground_truth(space):
    import datasets

    client, built = space
    from ihbench import ui_turns

    ids = datasets.load_dataset(str(built), "duplex", split="dev")["conversation_id"]
    assert ui_turns.recording_choices() == ids
    timeline, timing, summary = client.predict(ids[0], None, api_name="/analyze_turns")
    assert Path(timeline).stat().st_size > 10_000
    figures = {row[0]: row for row in timing["data"]}
    assert int(figures["stop latency (s)"][4]) > 0 and 0.1 < float(figures["stop latency (s)"][1]) < 1.5
    agreement = float(summary.split("ground truth: **")[1].split("**")[0])
    assert agreement >= 0.9


def test_turns_tab_on_an_uploaded_stereo_call_and_bad_uploads(space, tmp_path):
    import io

    import datasets
    import soundfile
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    client, built = space
    row = datasets.load_dataset(str(built), "duplex", split="dev").cast_column(
        "audio", datasets.Audio(decode=False))[0]
    samples, rate = soundfile.read(io.BytesIO(row["audio"]["bytes"]), dtype="float32")
    call = tmp_path / "call.wav"
    soundfile.write(call, samples[: 40 * rate], rate)  # the first 40 s, as a user's stereo WAV
    timeline, timing, summary = client.predict("", handle_file(str(call)), api_name="/analyze_turns")
    assert Path(timeline).stat().st_size > 10_000 and "ground truth" not in summary
    assert summary.startswith("**40.0 s** analysed")

    mono = tmp_path / "mono.wav"
    soundfile.write(mono, samples[: 5 * rate, 0], rate)
    with pytest.raises(AppError) as error:
        client.predict("", handle_file(str(mono)), api_name="/analyze_turns")
    # battery 16 (try 70): said in the page's terms, not with the command line's --pair
    assert "mono.wav has 1 channel(s); upload one stereo file (the AI on the left channel, the user on the right)" \
        in str(error.value) and str(tmp_path) not in str(error.value) and "--pair" not in str(error.value)
    with pytest.raises(AppError, match="pick a recording"):
        client.predict("", None, api_name="/analyze_turns")
    import secrets
    import string

    keyed = tmp_path / ("".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32)) + ".wav")
    keyed.write_bytes(call.read_bytes())  # battery 52, Y7: its name became a folder's and summary.json's
    with pytest.raises(AppError, match=r"the uploaded file's name holds what looks like an API key \(a credential; "
                                       r"not shown\); rename the file and upload it again"):
        client.predict("", handle_file(str(keyed)), api_name="/analyze_turns")


def test_detect_offers_smart_turn_with_the_clis_threshold(space):
    """The break is the first pause where P(turn complete) > the threshold (`--option threshold=`);
    above every probability, only the silence fallback is left, never earlier."""
    client, _ = space
    from ihbench import ui

    clip = ui.sid_clip_choices()[0]
    _, result = client.predict("smart-turn", None, clip, 0.5, api_name="/detect")
    assert result["detector"]["detector"] == "smart-turn" and result["detector"]["threshold"] == 0.5
    assert result["detector"]["sha256"] == "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"
    pauses, prediction = result["pauses"], result["prediction"]
    assert pauses and all(0 <= p["probability"] <= 1 for p in pauses)
    fired = [p for p in pauses if p["probability"] > 0.5]
    if fired:
        assert prediction["break_time"] == pytest.approx(fired[0]["time"], abs=1e-3)
    _, strict = client.predict("smart-turn", None, clip, 1.0, api_name="/detect")
    assert strict["detector"]["threshold"] == 1.0
    assert strict["prediction"]["break_time"] >= prediction["break_time"]


def test_a_missing_smart_turn_extra_is_a_message_in_the_detect_and_turns_tabs(monkeypatch):
    from importlib import metadata

    from ihbench import ui, ui_turns

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", absent)
    clip = np.zeros(16_000, dtype=np.float32)
    monkeypatch.setattr(ui, "_read_upload", lambda path: clip)
    with pytest.raises(ui.UserError, match=r'smart-turn is not available on this server: .*pip install "ihbench\[smart-turn\]"'):
        ui.detect("smart-turn", "call.wav", None, 0.5)
    with pytest.raises(ui.UserError, match=r'Smart Turn is not available on this server: .*pip install "ihbench\[smart-turn\]"'):
        ui_turns.analyze_recording(None, "call.wav", True)


def test_turns_tab_shows_smart_turns_probability_track_and_what_it_covers(space):
    import datasets
    from conftest import png_size

    client, built = space
    ids = datasets.load_dataset(str(built), "duplex", split="dev")["conversation_id"]
    plain, _, _ = client.predict(ids[0], None, False, api_name="/analyze_turns")
    timeline, _, summary = client.predict(ids[0], None, True, api_name="/analyze_turns")
    assert png_size(timeline)[1] > png_size(plain)[1]  # a row more: P(turn end) under the timeline
    assert "agreement speak_up: C " in summary and "agreement convey_turn: C " in summary
    for name in ("backchannel", "interrupt", "handle_interruption"):
        assert f"agreement {name}: not covered (" in summary
    assert "single-label evaluation: not covered" in summary and "pipecat-ai 1.14.0" in summary


@pytest.mark.parametrize("blank", [" ", "   ", "\u00a0", "\t "])
def test_a_judge_model_of_spaces_is_refused_by_the_judge_tab(blank, tmp_path):
    """Battery 39, J2: the Judge tab stripped a judge model of spaces to '' and judged, writing judge_model ''
    into every judgment and "judges:  (prompt ...)" into the report (the CLI refuses --judge-model ' ')."""
    from ihbench import ui

    (tmp_path / "run.json").write_text("{}")  # a session's run: refused before it is read
    with pytest.raises(ui.UserError, match="the judge model is blank; type a name"):
        ui.judge_run_dir(str(tmp_path), "http://127.0.0.1:9/v1", blank)
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_serve_asks_again_when_gradios_first_request_for_the_page_times_out(monkeypatch):
    """The clean-clone CI lost its browser tests to gradio's "localhost is not accessible ... set
    share=True" on a busy machine: gradio allows its first request for the page 3 s. The stand-in for
    a busy machine is gradio's own check answering "not reached" once."""
    import gradio as gr
    import httpx
    from gradio import networking

    import app as space_app

    real, asked = networking.url_ok, []
    monkeypatch.setattr(networking, "url_ok", lambda url: bool(asked.append(url)) or len(asked) > 1 and real(url))
    with gr.Blocks() as demo:
        gr.Markdown("served")
    port = free_port()
    space_app.serve(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        assert len(asked) == 2 and httpx.get(f"http://127.0.0.1:{port}/", timeout=30).status_code == 200
    finally:
        demo.close()


def test_the_convbench_tab_refuses_a_fraction_of_turns_before_any_work():
    from ihbench import ui, ui_convbench

    with pytest.raises(ui.UserError, match=r"^First turns: expected a whole number, got 2.5$"):
        next(ui_convbench.run_stream("openai", "m", False, "http://127.0.0.1:9/v1", 2.5, 32))


def test_a_model_or_judge_typed_as_a_url_with_a_credential_is_refused_by_the_page():
    """Battery 44, Q1: the Space's run_model took `http://u:KEY@h` as the model, which the command line refuses,
    and wrote the key in clear into the run's run.json and responses."""
    from ihbench import ui

    for what in ("model name", "model path", "judge model"):
        with pytest.raises(ui.UserError, match=r"a URL with a user part \(a credential; not shown\)") as error:
            ui.typed_name("http://u:sk-SPK44x@h", what)
        assert "SPK44x" not in str(error.value)


def test_a_choice_not_offered_or_a_number_out_of_range_sent_through_the_api_prints_no_traceback(space, capfd,
                                                                                                 tmp_path):
    """Battery 64, K8: gradio's own checks (a conversation not in the list, a slider below its minimum) answered
    the caller in one line, and printed a traceback on the Space's terminal for each call."""
    from gradio_client.exceptions import AppError

    client, _ = space
    capfd.readouterr()
    with pytest.raises(AppError, match="is not in the list of choices"):
        client.predict(conversation_id="nope", api_name="/show_conversation")
    with pytest.raises(AppError, match="less than minimum value"):
        client.predict("openai", "m", "", "", 0, 1, 4, "http://127.0.0.1:9/v1", api_name="/run_model")
    from gradio_client import handle_file  # battery 65, L7: a file of a type the Metrics tab does not offer

    wav = tmp_path / "clip.wav"
    wav.write_bytes(b"RIFF")
    with pytest.raises(AppError, match="Invalid file type"):
        client.predict("rq_pass_rate", handle_file(str(wav)), api_name="/score_file")
    assert "Traceback" not in capfd.readouterr().err
    page = client.view_api(return_format="dict", print_info=False)
    assert "/show_conversation" in page["named_endpoints"]  # the quiet components are still the page's own


def test_building_the_space_writes_nothing_beside_its_code(tmp_path, monkeypatch):
    """A component class defined in app.py made gradio write `spaces/app.pyi` beside it (into site-packages, for an
    installed wheel): the K8 fix wraps the components' checks instead."""
    before = sorted((REPO / "spaces").iterdir())
    import app as space_app

    monkeypatch.setenv("IHBENCH_DATA", str(tmp_path / "none"))
    space_app.build_app().close()
    assert sorted((REPO / "spaces").iterdir()) == before and not list((REPO / "spaces").glob("*.pyi"))


def test_a_port_taken_as_the_space_starts_is_said_as_the_port(tmp_path, monkeypatch, capfd):
    """Battery 65, L2: two Spaces started on one port at once (free at the command's check, taken at the bind): the
    address was announced, then uvicorn's bind error and gradio's advice about launch() printed."""
    import app as space_app
    from ihbench.dataset.errors import UsageError

    monkeypatch.setenv("IHBENCH_DATA", str(tmp_path / "none"))
    demo = space_app.build_app()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        capfd.readouterr()
        with pytest.raises(UsageError, match=rf"^port {port} on 127.0.0.1 was taken as the Space started"):
            space_app.serve(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    err = capfd.readouterr().err
    assert "Errno 98" not in err and "launch()" not in err, err
    demo.close()
