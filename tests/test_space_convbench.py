"""The Space's ConversationBench tab, in process: a golden replay of the bike benchmark (the local
OpenAI-compatible TEST DOUBLE plays the golden calls and replies) judged by the scripted judge, the
same run unjudged, and folders that are not such runs."""
import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO
from convbench_judging import ConvJudge
from convbench_layout import TURNS, write_benchmark_folder
from openai_test_server import OpenAITestServer
from test_convbench_run import golden_replay, spec

from ihbench.cli import main
from ihbench.convbench import run_convbench
from ihbench.dataset.convbench import import_convbench

sys.path.insert(0, str(REPO / "spaces"))

#: turn 2 missed a call because the model forgot the state: realignment charges it to state_tracking
FORGOT = {2: {"tool_use_correct": False, "missed_call_cause": "forgotten_state", "reasoning": "lost track of slot 42"}}


def make_judged_run(root: Path, runs: Path) -> tuple[Path, Path]:
    """(judged run, the same run unjudged), both folders of `runs`; the benchmark's data under `root`."""
    import_convbench(write_benchmark_folder(root / "repo"), root / "data", progress=False)
    judged = runs / "convbench-golden"
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(root / "data", judged, server, modality="audio"), progress=False)
    unjudged = shutil.copytree(judged, runs / "convbench-unjudged")
    with OpenAITestServer(respond=ConvJudge(overrides=FORGOT)) as server:
        assert main(["judge", str(judged), "--judge-model", "scripted-judge", "--judge-base-url", server.base_url,
                     "--cache", str(root / "cache.sqlite"), "--quiet"]) == 0
    return judged, unjudged


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("convbench-space")
    folder = root / "runs"
    folder.mkdir()
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("IHBENCH_RUNS", str(folder))
        judged, unjudged = make_judged_run(root, folder)
        (folder / "ihbench-run").mkdir()
        (folder / "ihbench-run" / "run.json").write_text(json.dumps({"data": "somewhere", "modality": "text", "epochs": 1}))
        yield judged, unjudged


def test_the_runs_list_holds_the_convbench_runs_only(runs):
    from ihbench import ui_convbench

    assert sorted(ui_convbench.run_choices()) == ["convbench-golden", "convbench-unjudged"]


def test_the_turn_view_holds_the_golden_and_model_replies_the_calls_and_the_verdicts(runs):
    from ihbench import ui_convbench

    path, _, labels = ui_convbench.open_run("convbench-golden")
    assert labels == ["epoch 0 · turn 0", "epoch 0 · turn 1", "epoch 0 · turn 2 · ✗", "epoch 0 · turn 3",
                      "epoch 0 · turn 4"]
    view = ui_convbench.turn_view(path, labels[2])
    assert TURNS[2]["input"] in view.user and "implicit_correction" in view.user
    rate, samples = view.audio
    assert rate == 16000 and len(samples) == pytest.approx(16000 * 0.7, abs=160)  # turn_002.wav: 0.7 s
    assert view.golden == TURNS[2]["golden_text"] and TURNS[2]["golden_text"] in view.reply  # a golden replay
    assert view.expected_calls == [["cancel_booking", '{"customer": "Ada Park", "slot_id": "42"}'],
                                   ["book_repair", '{"customer": "Ada Park", "slot_id": "43"}']]
    assert [row[0] for row in view.actual_calls] == ["cancel_booking", "book_repair"]
    assert json.loads(view.actual_calls[1][2]) == {"status": "error", "error_code": "SLOT_FULL"}
    verdicts = {row[0]: row[1:] for row in view.verdicts}
    # realignment: the judge's "tool use failed" became a pass, charged to state tracking instead
    assert verdicts["tool_use_correct"] == ["pass", "FAIL"] and verdicts["state_tracking"] == ["FAIL", "pass"]
    assert verdicts["ambiguity_handling"][0] == "not scored"
    assert verdicts["turn_taking"][0].startswith("not measured")
    assert "lost track of slot 42" in view.judge
    assert "missed call (forgotten state) charged to state_tracking" in view.judge


def test_the_header_holds_the_reports_pass_rates(runs):
    from ihbench import ui_convbench
    from ihbench.report.convbench_summary import summarize_convbench

    judged, _ = runs
    _, header, _ = ui_convbench.open_run(None, str(judged))  # a typed path opens the same run
    scores = summarize_convbench(judged)["scores"]
    rows, state = scores["pass_rows"], scores["per_dimension"]["state_tracking"]["applicable"]
    assert f"pass rows **{rows['rate']:.3f} ({rows['passes']}/{rows['n']})**" in header
    assert f"state_tracking {state['rate']:.3f} ({state['passes']}/{state['n']})" in header
    assert "test-model on bike_bench" in header and "5 turn(s) × 1 epoch" in header


def test_an_unjudged_run_shows_its_turns_without_verdicts(runs):
    from ihbench import ui_convbench

    path, header, labels = ui_convbench.open_run("convbench-unjudged")
    assert "Not judged yet" in header and "Pass rates" not in header
    assert len(labels) == len(TURNS) and not any("✗" in label for label in labels)
    view = ui_convbench.turn_view(path, labels[1])
    assert view.golden == TURNS[1]["golden_text"] and view.actual_calls[0][0] == "book_repair"
    assert view.verdicts == [] and "not judged yet" in view.judge


def test_the_last_turn_shows_the_session_ended_and_its_call(runs):
    from ihbench import ui_convbench

    path, _, labels = ui_convbench.open_run("convbench-golden")
    view = ui_convbench.turn_view(path, labels[-1])
    assert "called end_session" in view.reply and view.actual_calls[0][0] == "end_session"


def test_previous_and_next_step_through_the_turns_and_stop_at_the_ends(runs):
    from ihbench import ui_convbench

    path, _, labels = ui_convbench.open_run("convbench-golden")
    assert ui_convbench.step(path, labels[0], 1) == labels[1]
    assert ui_convbench.step(path, labels[0], -1) == labels[0]
    assert ui_convbench.step(path, labels[-1], 1) == labels[-1]


@pytest.mark.parametrize("folder, message", [
    ("ihbench-run", "not a ConversationBench run"),
    ("missing", "no such run folder"),
    ("empty", "not a run (it has no run.json)"),
    ("unplayed", "no responses.jsonl"),
])
def test_a_folder_that_is_not_a_convbench_run_is_one_error_line(runs, folder, message):
    import app as space_app
    import gradio as gr

    from ihbench.ui import runs_dir

    judged, _ = runs
    (runs_dir() / "empty").mkdir(exist_ok=True)
    unplayed = runs_dir() / "unplayed"
    if not unplayed.exists():
        unplayed.mkdir()
        shutil.copy(judged / "run.json", unplayed / "run.json")
    with pytest.raises(gr.Error) as error:
        space_app.open_convbench(None, str(runs_dir() / folder))
    assert message in error.value.message and "\n" not in error.value.message
    assert str(runs_dir()) not in error.value.message


def test_a_tiny_model_plays_the_first_turns_of_the_in_house_benchmark(tmp_path, monkeypatch):
    """The in-house benchmark stands in as the bike benchmark imported under its config name: the
    tiny random-weight Qwen3-Omni hears the audio and answers with the tools offered."""
    import app as space_app

    from ihbench import ui_convbench
    from ihbench.rundir import RunDir

    import_convbench(write_benchmark_folder(tmp_path / "repo"), tmp_path / "data", name=ui_convbench.IN_HOUSE,
                     progress=False)
    monkeypatch.setenv("IHBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path / "runs"))
    assert ui_convbench.in_house_problem() is None
    *_, last = space_app.run_convbench_model("qwen3-omni", "", True, "", 2, 4)
    status, choice, path, header, turns = last
    assert status.startswith("2 turn(s) played") and choice["value"] == Path(path).name
    info = RunDir(path).info()
    assert info.loader == "qwen3-omni" and info.convbench["only_turns"] == [0, 1] and info.modality == "audio"
    assert turns["choices"] and "Not judged yet" in header
    view = ui_convbench.turn_view(path, turns["value"])
    assert view.golden == TURNS[0]["golden_text"] and view.audio is not None and "round(s)" in view.reply


def test_stop_ends_a_run_after_the_turn_being_played(tmp_path, monkeypatch):
    """The Stop button's half on the server (battery 46, S7): the run this page started plays no other
    turn, keeps what it played, and says it was stopped; its other half (the page freed at once) is
    test_space_browser's."""
    from openai_test_server import Reply

    from ihbench import ui, ui_convbench

    import_convbench(write_benchmark_folder(tmp_path / "repo"), tmp_path / "data", name=ui_convbench.IN_HOUSE,
                     progress=False)
    monkeypatch.setenv("IHBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path / "runs"))
    with OpenAITestServer(respond=lambda body: Reply(content="Sure, one moment.", delay=1.0)) as server:
        stream = ui_convbench.run_stream("openai", "slow-model", False, server.base_url, 4, 16, session="page-1")
        asked = 0
        for status, path in stream:
            if path is None and " 1 of 4 done" in status and not asked:
                asked = ui.stop_runs("page-1")
        assert asked == 1 and ui.stop_runs("page-1") == 0  # forgotten once its run ended
    assert status.endswith("; stopped by the Stop button."), status
    played = [json.loads(line) for line in (Path(path) / "responses.jsonl").read_text().splitlines()]
    assert 1 <= len(played) <= 2, played  # the turn being played when Stop came ends; no other starts


def test_without_the_in_house_benchmark_running_is_one_error_line(tmp_path, monkeypatch):
    """A dataset built with --no-convbench (here: one holding another benchmark only): runs still
    open, a model does not run."""
    import app as space_app
    import gradio as gr

    from ihbench import ui_convbench

    import_convbench(write_benchmark_folder(tmp_path / "repo"), tmp_path / "data", progress=False)
    monkeypatch.setenv("IHBENCH_DATA", str(tmp_path / "data"))
    assert "no in-house ConversationBench" in ui_convbench.in_house_problem()
    with pytest.raises(gr.Error, match="no in-house ConversationBench"):
        list(space_app.run_convbench_model("qwen3-omni", "", True, "", 1, 4))


def test_the_metrics_tab_scores_a_judgments_file_with_the_convbench_module(runs):
    from ihbench import ui

    judged, _ = runs
    table = dict((row[0], row[1]) for row in ui.metrics_table("convbench_pass_rate", str(judged / "judgments.jsonl")))
    state = json.loads(table["per_dimension"])["state_tracking"]["applicable"]
    assert (state["passes"], state["n"]) == (1, 2)  # turn 2's forgotten state; turn 3 passes
    assert "turn_taking" not in json.loads(table["per_dimension"])  # not measured in a text run
    assert json.loads(table["pass_rows"])["n"] == 5 and table["judge_errors"] == 0
