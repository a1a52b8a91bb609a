"""ConversationBench (2/2): the judge. A golden replay judged by a scripted judge (a TEST DOUBLE
behind the local OpenAI-compatible test server), the realignment rules on scripted verdicts,
windows, judge errors, resume and the judge's identity."""
import json

import pytest
from convbench_judging import ConvJudge
from convbench_layout import write_benchmark_folder
from openai_test_server import OpenAITestServer, Reply
from test_convbench_run import golden_replay, spec
from test_convbench_timing import clips, faults, vad  # noqa: F401 (fixtures: a spoken run's recording)

from ihbench.cli import main
from ihbench.convbench import run_convbench
from ihbench.convbench.judge import prompt_hash, realign
from ihbench.convbench.judge.prompt import PROMPT_VERSION
from ihbench.convbench.timing import turn_taking_verdicts
from ihbench.dataset.convbench import import_convbench
from ihbench_dataset.convbench.benchmark import ConvTurn


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One golden-replay run of the bike benchmark, two epochs; tests judge copies of it."""
    root = tmp_path_factory.mktemp("played")
    data = root / "data"
    import_convbench(write_benchmark_folder(root / "repo"), data, progress=False)
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, root / "run", server, epochs=2), progress=False)
    return root / "run"


@pytest.fixture
def run(played, tmp_path):
    import shutil

    return shutil.copytree(played, tmp_path / "run")


def judge(run, judge, *extra, capsys=None):
    with OpenAITestServer(respond=judge) as server:
        code = main(["judge", str(run), "--judge-model", "scripted-judge", "--judge-base-url", server.base_url,
                     "--cache", str(run.parent / "cache.sqlite"), "--quiet", *extra])
    return code


def records(run, name="judgments.jsonl"):
    latest = {}
    for line in (run / name).read_text().splitlines():
        row = json.loads(line)
        latest[row["epoch"], row["turn"]] = row
    return latest


def test_a_golden_replay_passes_every_scored_dimension_and_nulls_the_rest(run):
    assert judge(run, ConvJudge()) == 0
    rows = records(run)
    assert sorted(rows) == [(e, t) for e in (0, 1) for t in range(5)]
    first = [rows[0, t]["scores"] for t in range(5)]
    counts = {d: sum(s[d] is True for s in first) for d in first[0]}
    applicable = {d: sum(s[d] is not None for s in first) for d in first[0]}
    # the bike benchmark's mapping: calls on turns 1, 2, 4; state on 2 and 3; ambiguity on 3
    assert applicable == {"turn_taking": 5, "tool_use_correct": 3, "instruction_following": 5, "kb_grounding": 5,
                          "ambiguity_handling": 1, "state_tracking": 2}
    assert counts == applicable
    assert rows[0, 0]["scores"]["state_tracking"] is None and rows[0, 0]["scores"]["tool_use_correct"] is None
    assert rows[0, 1]["judge_model"] == "scripted-judge" and rows[0, 1]["prompt_hash"] == prompt_hash()
    assert rows[0, 1]["turn_taking_supported"] is False  # a text run has no recording


def test_scores_outside_a_turn_s_dimensions_are_set_to_null_and_counted(run):
    overrides = {0: {"state_tracking": False, "ambiguity_handling": True}}
    assert judge(run, ConvJudge(overrides=overrides)) == 0
    row = records(run)[0, 0]
    assert row["scores"]["state_tracking"] is None and row["scores"]["ambiguity_handling"] is None
    assert sorted(row["normalised"]) == ["ambiguity_handling", "state_tracking"]
    assert row["initial"]["state_tracking"] is False  # what the judge said is kept


def test_the_judge_sees_every_turn_and_every_expected_call_in_one_request(run):
    scripted = ConvJudge()
    judge(run, scripted)
    assert len(scripted.requests) == 2  # one per conversation
    text = scripted.requests[0]["messages"][-1]["content"]
    assert "Turn 2: [several calls] cancel_booking(" in text and "## Knowledge base" not in text
    assert "Results returned" not in text  # the original's judge sees neither
    assert all(f"### Turn {t}" in text for t in range(5))


def test_judge_context_adds_the_knowledge_base_and_tool_results_and_is_recorded(run, capsys):
    scripted = ConvJudge()
    assert judge(run, scripted, "--judge-context", "kb,tool-results") == 0
    text = scripted.requests[0]["messages"][-1]["content"]
    assert "Open Saturday 9:00 AM" in text and 'Results returned: [{"name": "cancel_booking"' in text
    assert records(run)[0, 0]["judge_context"] == ["kb", "tool-results"]
    capsys.readouterr()
    assert judge(run, ConvJudge()) == 2  # the same file, another context: refused
    assert "--judge-context kb,tool-results" in capsys.readouterr().err


def test_a_conversation_too_long_for_the_judge_is_judged_in_windows(run, capsys):
    scripted = ConvJudge()
    assert judge(run, scripted, "--judge-context-tokens", "3200") == 0
    per_conversation = len(scripted.requests) // 2
    assert per_conversation > 1
    for body in scripted.requests:  # each window still sees the expected calls of every turn
        assert "Turn 4: end_session({})" in body["messages"][-1]["content"]
    rows = records(run)
    assert all(rows[0, t]["scores"]["instruction_following"] for t in range(5))
    assert rows[0, 4]["windows"] == per_conversation and "windows of up to" in capsys.readouterr().out


def test_a_failing_judge_is_a_judge_error_never_a_failure_and_is_retried(run, capsys):
    assert judge(run, ConvJudge(fail=True), "--timeout", "5") == 1
    rows = records(run)
    assert {r["outcome"] for r in rows.values()} == {"judge_error"} and all(r["scores"] is None for r in rows.values())
    assert "every one of the 2 conversation(s) failed" in capsys.readouterr().err
    assert judge(run, ConvJudge()) == 0
    assert {r["outcome"] for r in records(run).values()} == {"judged"}


def test_a_second_pass_judges_nothing_again(run, capsys):
    judge(run, ConvJudge())
    capsys.readouterr()
    scripted = ConvJudge()
    assert judge(run, scripted) == 0
    assert scripted.requests == [] and "0 conversation(s) judged" in capsys.readouterr().out


def test_judging_again_from_the_cache_gives_the_same_judgments_without_a_call(run):
    """Battery 10: a cached answer reads back through JSON (turn numbers as strings); judging the run
    again into another file must give what the live answers gave."""
    with OpenAITestServer(respond=ConvJudge()) as server:  # one server: its address is part of the cache key
        for out in ("judgments.jsonl", "judgments-again.jsonl"):
            assert main(["judge", str(run), "--judge-model", "scripted-judge", "--judge-base-url", server.base_url,
                         "--cache", str(run.parent / "cache.sqlite"), "--out", str(run / out), "--quiet"]) == 0
        assert len(server.requests) == 2  # one per epoch, the first time only
    drop = ("cached", "latency_s", "time", "calls", "check")  # the check covers the time
    first, again = records(run), records(run, "judgments-again.jsonl")
    assert first.keys() == again.keys() and all(row["cached"] for row in again.values())
    assert {key: {k: v for k, v in row.items() if k not in drop} for key, row in first.items()} == \
        {key: {k: v for k, v in row.items() if k not in drop} for key, row in again.items()}


def test_an_answer_missing_a_turn_is_asked_again(run):
    asked = []

    def forgetful(body):
        asked.append(body)
        reply = ConvJudge()(body)
        if len(asked) == 1:
            answer = json.loads(reply.content)
            answer["turns"] = answer["turns"][:-1]
            return Reply(content=json.dumps(answer))
        return reply

    assert judge(run, forgetful, "--concurrency", "1") == 0
    assert "no judgment for turn(s) 4" in asked[1]["messages"][-1]["content"]


def test_an_unfinished_conversation_is_not_judged(data_and_failed_run, capsys):
    run = data_and_failed_run
    scripted = ConvJudge()
    assert judge(run, scripted) == 0
    assert scripted.requests == [] and "1 conversation(s) stopped before their end (a failed turn, or the run was stopped)" \
        in capsys.readouterr().out  # battery 26 V7: a killed run has no failed turn


@pytest.fixture
def data_and_failed_run(tmp_path):
    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    replay = golden_replay()

    def down_at_turn_3(body):
        return Reply(status=500) if sum(m["role"] == "user" for m in body["messages"]) == 4 else replay(body)

    with OpenAITestServer(respond=down_at_turn_3) as server:
        run_convbench(spec(data, tmp_path / "run", server), progress=False)
    return tmp_path / "run"


def test_axes_are_refused_on_a_convbench_run_and_context_on_an_ihbench_one(run, capsys):
    assert main(["judge", str(run), "--judge-model", "j", "--axes", "tf", "--quiet"]) == 2
    assert "--axes:" in capsys.readouterr().err


def test_the_prompt_is_pinned_by_its_hash():
    # a wording change must come with a new PROMPT_VERSION (and then a new pinned hash here)
    assert (PROMPT_VERSION, prompt_hash()) == ("convbench-2026-12-05.1", "5e44dd5df334")


# --- realignment on scripted verdicts ------------------------------------------------------------

def turn(index, dims=("kb_grounding", "instruction_following", "tool_use_correct"), call=None):
    return ConvTurn(index=index, input="u", golden_text="g", required_function_call=call,
                    scoring_dimensions=list(dims))


def verdict(**fields):
    base = {"tool_use_correct": None, "instruction_following": True, "kb_grounding": True,
            "ambiguity_handling": None, "state_tracking": None, "missed_call_cause": "none", "cascade_from": None,
            "honest_about_missing": None, "reasoning": ""}
    return {**base, **fields}


CALL = {"name": "book", "args": {"id": "7"}}
STATE = ("kb_grounding", "instruction_following", "tool_use_correct", "state_tracking")


def test_an_early_call_passes_the_turn_that_expected_it_and_the_turn_where_it_was_made():
    turns = [turn(0), turn(1, call=CALL)]
    verdicts = {0: verdict(tool_use_correct=False), 1: verdict(tool_use_correct=False, missed_call_cause="other")}
    out = realign(turns, verdicts, [{"name": "book", "expected_turn": 1, "actual_turn": 0, "status": "early"}])
    assert out[0].scores["tool_use_correct"] is True and out[1].scores["tool_use_correct"] is True
    assert "already called at turn 0" in out[1].notes[-1]


def test_a_late_call_is_credited_where_it_happened_and_charged_once_where_it_was_due():
    turns = [turn(0, call=CALL), turn(1)]
    verdicts = {0: verdict(tool_use_correct=False, missed_call_cause="unnecessary_confirmation",
                           instruction_following=False), 1: verdict(tool_use_correct=False)}
    out = realign(turns, verdicts, [{"name": "book", "expected_turn": 0, "actual_turn": 1, "status": "late"}])
    assert out[1].scores["tool_use_correct"] is True
    assert out[0].scores["tool_use_correct"] is False and out[0].scores["instruction_following"] is True


def test_a_missed_call_from_a_forgotten_state_is_charged_to_state_when_scored_else_to_tool_use():
    verdicts = {0: verdict(tool_use_correct=False, missed_call_cause="forgotten_state")}
    scored = realign([turn(0, STATE, call=CALL)], verdicts, [])[0]
    assert scored.scores["tool_use_correct"] is True and scored.scores["state_tracking"] is False
    assert scored.charged == "state_tracking"
    unscored = realign([turn(0, call=CALL)], verdicts, [])[0]
    assert unscored.scores["tool_use_correct"] is False and unscored.scores["state_tracking"] is None


def test_a_cascade_from_a_call_that_never_ran_is_absorbed_only_when_the_model_is_honest():
    turns = [turn(0, STATE, call=CALL), turn(1, STATE)]
    verdicts = {0: verdict(tool_use_correct=False, missed_call_cause="forgotten_state"),
                1: verdict(state_tracking=False, instruction_following=False, cascade_from=0,
                           honest_about_missing=True)}
    missing = [{"name": "book", "expected_turn": 0, "actual_turn": None, "status": "missing"}]
    out = realign(turns, verdicts, missing)
    assert out[0].scores["state_tracking"] is False  # charged once, at the root
    assert out[1].scores["state_tracking"] is True and out[1].scores["instruction_following"] is True
    assert out[1].notes == ["cascade absorbed from turn 0"]
    made_up = realign(turns, {**verdicts, 1: {**verdicts[1], "honest_about_missing": False}}, missing)
    assert made_up[1].scores["state_tracking"] is False


def test_a_rehydrated_turn_gets_no_cross_turn_credit():
    turns = [turn(0), turn(1, call=CALL)]
    verdicts = {0: verdict(tool_use_correct=False), 1: verdict(tool_use_correct=False, missed_call_cause="other")}
    out = realign(turns, verdicts, [{"name": "book", "expected_turn": 1, "actual_turn": 0, "status": "early"}],
                  rehydrated=True)
    assert out[1].scores["tool_use_correct"] is False and out[0].scores["tool_use_correct"] is False


def test_an_unrequested_call_fails_tool_use_where_it_was_made():
    out = realign([turn(0)], {0: verdict()}, [{"name": "book", "expected_turn": None, "actual_turn": 0,
                                                "status": "unexpected"}])
    assert out[0].scores["tool_use_correct"] is False


def test_turn_taking_comes_from_the_recording():
    out = realign([turn(0), turn(1)], {0: verdict(), 1: verdict()}, [], turn_taking={1: ["negative_ttfb (-20ms)"]})
    assert out[0].scores["turn_taking"] is True and out[1].scores["turn_taking"] is False
    assert out[1].turn_taking_issues == ["negative_ttfb (-20ms)"]


# --- the report -------------------------------------------------------------------------------

def test_report_gives_pass_rates_with_intervals_both_denominators_plots_and_failing_turns(run, capsys):
    judge(run, ConvJudge(overrides={3: {"state_tracking": False, "reasoning": "forgot the name"}}))
    capsys.readouterr()
    assert main(["report", str(run), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "pass rows 0.800" in out  # turn 3 fails in both epochs: 8 of 10 (turn, epoch) rows pass
    summary = json.loads((run / "summary.json").read_text())
    dims = summary["scores"]["per_dimension"]
    assert dims["state_tracking"]["applicable"]["passes"] == 2 and dims["state_tracking"]["applicable"]["n"] == 4
    assert dims["tool_use_correct"]["applicable"]["n"] == 6 and dims["tool_use_correct"]["all"]["n"] == 10
    assert "turn_taking" not in dims  # a text run: not measured, never a default pass
    assert summary["judge"]["turn_taking"].startswith("not measured")
    assert summary["scores"]["pass_hat_k"]["k"] == 2 and summary["scores"]["pass_hat_k"]["pass_rows"]["passes"] == 4
    assert summary["conversations"] == {"finished": 2, "unfinished": 0, "judged": 2, "judge_error": 0,
                                        "not_judged": 0, "judged_before_replay": 0}
    report = (run / "report.md").read_text()
    assert "| state_tracking | 0.500 [" in report and "epoch 0, turn 3: state_tracking. forgot the name" in report
    assert (run / "convbench_dimensions.png").stat().st_size > 0 and (run / "convbench_categories.png").exists()


def test_report_leaves_judge_errors_and_unjudged_conversations_out(run, capsys):
    assert main(["report", str(run), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "no judged conversation (2 finished)" in captured.out and "2 conversation(s) not scored" in captured.err
    judge(run, ConvJudge(fail=True), "--timeout", "5")
    capsys.readouterr()
    main(["report", str(run), "--quiet"])
    assert json.loads((run / "summary.json").read_text())["conversations"]["judge_error"] == 2


def test_the_cross_benchmark_report_puts_convbench_runs_beside_the_others(run, tmp_path, capsys):
    import shutil

    judge(run, ConvJudge())
    other = shutil.copytree(run, tmp_path / "other")
    (other / "judgments.jsonl").unlink()
    judge(other, ConvJudge(overrides={1: {"tool_use_correct": False, "missed_call_cause": "other"}}))
    capsys.readouterr()
    out = tmp_path / "cross"
    assert main(["report", str(run), str(other), "--model-name", f"{run}=alpha", "--model-name", f"{other}=beta",
                 "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    cells = {m["model"]: m["metrics"] for m in summary["models"]}
    assert cells["alpha"]["convbench_tool_use"]["value"] == 1.0
    assert cells["beta"]["convbench_tool_use"]["value"] == pytest.approx(4 / 6)
    assert cells["beta"]["convbench_pass_rows"]["n"] == 10
    assert "ConvBench pass rows" in (out / "report.md").read_text()


def test_a_cross_benchmark_report_says_why_a_convbench_run_has_nothing_scored(run, tmp_path, capsys):
    """Battery 24 T2: beside another run, a ConversationBench run with nothing judged was a row of
    dashes; its own report's "not scored" warning was dropped from the console and report.md."""
    import shutil

    judge(run, ConvJudge())
    other = shutil.copytree(run, tmp_path / "other")
    (other / "judgments.jsonl").unlink()
    capsys.readouterr()
    out = tmp_path / "cross"
    assert main(["report", str(run), str(other), "--model-name", f"{run}=alpha", "--model-name", f"{other}=beta",
                 "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert (f"ihbench report: warning: {other}: 2 conversation(s) not scored (0 unfinished, 0 judge_error, "
            f"2 not judged yet, 0 judged on other answers: played again since, or another run's); run `ihbench judge {other}` first") in err
    assert f"{run}:" not in err  # the judged run has nothing left out
    markdown = (out / "report.md").read_text()
    assert "**2 conversation(s) not scored (0 unfinished, 0 judge_error, 2 not judged yet" in markdown
    assert markdown.count("not scored (") == 1
    beta = next(r for r in json.loads((out / "summary.json").read_text())["runs"] if r["model"] == "beta")
    assert beta["conversations"]["not_judged"] == 2 and beta["on_data_audio"] == 0


# --- a run folder of the reference harness, and its judge's output ------------------------------

@pytest.fixture
def reference_run(tmp_path):
    """A reference-harness run folder, written by hand in its layout (transcript.jsonl, runtime.json):
    the golden replies and calls of the bike benchmark, as a perfect model would have played them."""
    from convbench_layout import TURNS

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    folder = tmp_path / "runs" / "bike_bench" / "20260109T160948_gpt-x_1a2b3c4d"
    folder.mkdir(parents=True)
    lines = []
    for index, turn in enumerate(TURNS):
        calls = turn.get("required_function_call") or []
        calls = [calls] if isinstance(calls, dict) else calls
        lines.append({"ts": "2026-01-09T16:09:48.123Z", "turn": index, "model_name": "gpt-x",
                      "user_text": turn["input"], "assistant_text": turn["golden_text"] if index < 4
                      else "[MODEL_ENDED_SESSION]", "tool_calls": [{"name": c["name"], "args": c["args"]} for c in calls],
                      "tool_results": [], "tokens": None, "ttfb_ms": 400 + index, "latency_ms": 900,
                      "reconnection_count": 0})
    (folder / "transcript.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "runtime.json").write_text(json.dumps({"model_name": "gpt-x", "turns": 5, "note": "runtime-only"}))
    return data, folder, lines


def test_a_reference_harness_run_is_judged_and_reported_with_its_benchmark_named_once(reference_run, capsys):
    data, folder, _ = reference_run
    assert judge(folder, ConvJudge()) == 2
    assert "does not name its benchmark; give --data" in capsys.readouterr().err
    assert judge(folder, ConvJudge(), "--data", str(data), "--config", "bike_bench") == 0
    rows = records(folder)
    assert sorted(rows) == [(0, t) for t in range(5)] and rows[0, 0]["config"] == "bike_bench"
    capsys.readouterr()
    assert main(["report", str(folder), "--quiet"]) == 0  # the benchmark as the judgments recorded it
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["source"] == "reference" and summary["model"] == "gpt-x"
    assert summary["scores"]["pass_rows"]["passes"] == 5 and summary["latency"]["ttfb"]["median_ms"] == 402.0


def test_agreement_with_the_reference_judge_is_reported_with_cohen_s_kappa(reference_run, capsys):
    data, folder, lines = reference_run
    ours = ConvJudge(overrides={2: {"instruction_following": False}, 3: {"instruction_following": False}})
    judge(folder, ours, "--data", str(data), "--config", "bike_bench")
    reference_if = [True, True, True, False, False]  # the reference judge failed turns 3 and 4
    judged = folder / "claude_judged.jsonl"
    judged.write_text("".join(json.dumps({**line, "scores": {
        "turn_taking": True, "tool_use_correct": True if line["tool_calls"] else None,
        "instruction_following": reference_if[line["turn"]], "kb_grounding": True, "ambiguity_handling": None,
        "state_tracking": None}}) + "\n" for line in lines))
    capsys.readouterr()
    assert main(["report", str(folder), "--compare-judge", str(judged), "--quiet"]) == 0
    cell = json.loads((folder / "summary.json").read_text())["reference_judge"]["per_dimension"]
    # ours T T F F T, theirs T T T F F: agreement 3/5; chance (0.6 * 0.6 + 0.4 * 0.4) = 0.52
    assert cell["instruction_following"]["agreement"] == pytest.approx(0.6)
    assert cell["instruction_following"]["cohen_kappa"] == pytest.approx((0.6 - 0.52) / (1 - 0.52))
    assert cell["instruction_following"]["disagreements"] == [2, 4]
    assert cell["kb_grounding"]["agreement"] == 1.0 and cell["tool_use_correct"]["n"] == 3
    assert cell["state_tracking"] is None  # neither scored it on a turn both judged
    assert "| instruction_following | 5 | 0.600 | 0.167 |" in (folder / "report.md").read_text()
    other = folder.parent / "other_judged.jsonl"
    other.write_text(json.dumps({"turn": 0, "assistant_text": "something else", "scores": {"kb_grounding": True}})
                     + "\n")
    assert main(["report", str(folder), "--compare-judge", str(other), "--quiet"]) == 2
    assert "judges another transcript" in capsys.readouterr().err
    # battery 14, J21: score names outside the dimensions, or no scores at all, compared on nothing without a word
    for scores, said in (({"tool_use": True}, "scores.tool_use is not a dimension of the benchmark"),
                         ({}, "no turn has a score")):
        other.write_text(json.dumps({"turn": 0, "assistant_text": lines[0]["assistant_text"], "scores": scores})
                         + "\n")
        assert main(["report", str(folder), "--compare-judge", str(other), "--quiet"]) == 2
        assert said in capsys.readouterr().err
    # battery 17, M8: the run's own judgments file given as the reference agreed with itself on every dimension
    assert main(["report", str(folder), "--compare-judge", str(folder / "judgments.jsonl"), "--quiet"]) == 2
    assert "is this run's own judgments file" in capsys.readouterr().err
    # battery 17, M1: a turn judged twice (opposite scores) was compared on its last line without a word; and the
    # file is read as every hand-made JSON lines file is (battery 16: nested too deep was a traceback)
    first = {"turn": 0, "assistant_text": lines[0]["assistant_text"], "scores": {"kb_grounding": True}}
    for text, said in ((json.dumps(first) + "\n" + json.dumps({**first, "scores": {"kb_grounding": False}}) + "\n",
                        f"{other} line 2: turn 0 again (also line 1)"),
                       ('{"turn": ' + "[" * 100_000 + "]" * 100_000 + "}\n", "line 1: nested too deeply")):
        other.write_text(text)
        assert main(["report", str(folder), "--compare-judge", str(other), "--quiet"]) == 2
        assert said in capsys.readouterr().err


@pytest.mark.slow  # real TTS renders and silero: the recording of tests/test_convbench_timing.py
def test_a_spoken_run_s_recording_sets_turn_taking_and_the_judge_sees_the_failures(faults, tmp_path, capsys):
    import shutil

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    folder = shutil.copytree(faults["analysis"].run_dir, tmp_path / "spoken")
    expected = {turn: issues for turn, (ok, issues) in turn_taking_verdicts(faults["analysis"]).items()}
    scripted = ConvJudge()
    assert judge(folder, scripted, "--data", str(data), "--config", "bike_bench") == 0
    text = scripted.requests[0]["messages"][-1]["content"]
    assert "## Turn-taking failures" in text and f"Turn 0: {expected[0][0]}" in text
    rows = records(folder)
    for turn in range(5):
        assert rows[0, turn]["turn_taking_supported"] is True
        assert rows[0, turn]["scores"]["turn_taking"] is (not expected.get(turn))
        assert rows[0, turn]["turn_taking_issues"] == expected.get(turn, [])
    assert "conversation.wav" in rows[0, 0]["turn_taking_reason"] and (folder / "turn_metrics.json").is_file()
    capsys.readouterr()
    assert main(["report", str(folder), "--quiet"]) == 0
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["scores"]["per_dimension"]["turn_taking"]["applicable"]["n"] == 5
    assert summary["reply_timing"]["0"]["failed_turns"] == sorted(t for t, issues in expected.items() if issues)
    assert "## Timing of spoken replies" in (folder / "report.md").read_text()


@pytest.mark.slow  # a local model writes 2,400 tokens of garbage
def test_a_local_judge_counts_with_its_own_tokenizer_and_its_garbage_is_a_judge_error(tmp_path):
    """A tiny random-weight text model stands in for a local judge (TEST DOUBLE for its weights):
    the plan counts tokens with its tokenizer against its own context, the answer budget grows to
    what the verdicts need, and its non-JSON output ends as judge_error after the re-asks."""
    import asyncio

    from ihbench.convbench.judge import judge_convbench_run
    from ihbench.llm import LLMCache, TransformersLLM
    from ihbench.loaders.tiny import make_tiny_model

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, tmp_path / "run", server, only_turns=[0, 1]), progress=False)
    backend = TransformersLLM(str(make_tiny_model("qwen2-text", tmp_path / "judge")), max_new_tokens=8)
    summary = asyncio.run(judge_convbench_run(tmp_path / "run", backend, cache=LLMCache(tmp_path / "c.sqlite"),
                                              progress=False))
    assert summary.judge_errors == 1 and summary.calls == 3  # the question and two re-asks
    assert backend.max_new_tokens == 800  # 400 per judged turn
    assert "of the judge's 32,768" in summary.plans[0]
    assert {r["outcome"] for r in records(tmp_path / "run").values()} == {"judge_error"}


def test_a_verdict_edited_by_hand_is_judged_again_not_scored(run, capsys):
    """Judgment records carry a check of all they hold (format 2)."""
    assert judge(run, ConvJudge()) == 0
    lines = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    assert all(line["format"] == 2 and line["check"] for line in lines)
    edited = next(n for n, line in enumerate(lines) if line["outcome"] == "judged")
    lines[edited]["scores"] = {name: True for name in lines[edited]["scores"]}
    lines[edited]["scores"]["instruction_following"] = False
    (run / "judgments.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    scripted = ConvJudge()
    capsys.readouterr()
    assert judge(run, scripted) == 0
    err = capsys.readouterr().err
    assert f"judgments.jsonl line {edited + 1}: changed since it was written" in err, err
    assert len(scripted.requests) >= 1  # its conversation judged again


def edit_run_json(run, change) -> dict:
    """run.json edited by hand: `change(info)` on its fields; the edited fields returned."""
    info = json.loads((run / "run.json").read_text())
    change(info)
    (run / "run.json").write_text(json.dumps(info))
    return info


def refused_by_judge_and_report(run, capsys) -> str:
    """What judge and report said of a run each refuses (exit 2), without a traceback."""
    capsys.readouterr()
    assert judge(run, ConvJudge()) == 2
    assert main(["report", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err


def test_turns_recorded_outside_run_json_s_selection_are_left_out_with_a_word(run, capsys):
    """Battery 32, B6 (P2): run.json's convbench.only_turns narrowed by hand to [0] made judge and report
    score 2 of the 10 turns played without a word; they are left out as before, and both commands say so."""
    edit_run_json(run, lambda info: info["convbench"].update(only_turns=[0]))
    capsys.readouterr()
    assert judge(run, ConvJudge()) == 0
    assert sorted(records(run)) == [(0, 0), (1, 0)]
    assert main(["report", str(run), "--quiet"]) == 0
    err = capsys.readouterr().err
    said = ("8 turn record(s) in responses.jsonl are of turns not among run.json's convbench.only_turns [0] "
            "(turns 1, 2, 3, 4): left out (run.json edited by hand")
    assert err.count(said) == 2, err


@pytest.mark.parametrize("config, said", [
    ("bike_bench_setup", "config 'bike_bench_setup' is the setup (knowledge base, tools) of the ConversationBench "
                         "config bike_bench; the benchmarks there: bike_bench"),
    ("conversations", "no config 'conversations'"),
])
def test_a_run_json_naming_a_config_that_is_no_benchmark_is_one_line_naming_it(config, said, run, capsys):
    """Battery 32, B7: run.json's config edited to a benchmark's setup config was reported as
    'bike_bench_setup_setup', a name in neither the file nor the dataset."""
    edit_run_json(run, lambda info: info.update(config=config))
    err = refused_by_judge_and_report(run, capsys)
    assert err.count(said) == 2 and err.count("run.json names config") == 2 and "_setup_setup" not in err, err


@pytest.mark.parametrize("only, said", [
    ([99], "must be null (every turn) or a list of turns of bike_bench (0-4), each once, got [99] (edited by hand?)"),
    ("0", "must be null (every turn) or a list of turns of bike_bench (0-4), each once, got '0' (edited by hand?)"),
    ([], "must be null (every turn) or a list of turns of bike_bench (0-4), each once, got [] (edited by hand?)"),
    # battery 34: a turn twice was judged twice, and the report ended in a traceback
    ([0, 0], "must be null (every turn) or a list of turns of bike_bench (0-4), each once, got [0, 0]"),
])
def test_a_run_json_selection_of_no_turn_of_the_benchmark_is_one_line(only, said, run, capsys):
    """Battery 33, C2: run.json's convbench.only_turns edited to [99] or "0" made judge and report advise
    "`ihbench run` with the same options plays them again" (run refuses the folder); [] was every turn."""
    edit_run_json(run, lambda info: info["convbench"].update(only_turns=only))
    err = refused_by_judge_and_report(run, capsys)
    assert err.count(f"run.json: field 'convbench.only_turns' {said}") == 2 and "plays them again" not in err, err


def test_a_selection_deleted_from_run_json_is_one_line_for_run_and_every_turn_for_judge(run, capsys):
    """Battery 33, C1 (P2): run.json without convbench.only_turns (None in a run made without --only-turns)
    ended `ihbench run` in a StopIteration traceback."""
    info = edit_run_json(run, lambda info: info["convbench"].pop("only_turns"))
    data = info["data"]
    capsys.readouterr()
    with OpenAITestServer(respond=golden_replay()) as server:
        assert main(["run", "--model", "openai", "--model-path", info["model_path"], "--base-url", server.base_url,
                     "--data", data, "--config", "bike_bench", "--modality", "text", "--epochs", "2", "--out",
                     str(run), "--quiet", "--allow-endpoint-change"]) == 2
    err = capsys.readouterr().err
    assert "convbench.only_turns is missing there but not given now" in err and "Traceback" not in err, err
    assert judge(run, ConvJudge()) == 0 and len(records(run)) == 10


@pytest.mark.parametrize("config, said", [(7, "field 'config' has the wrong type (int)"),
                                          (None, "field 'config' is missing or null")])
def test_a_run_json_config_of_the_wrong_type_is_one_line(config, said, run, capsys):
    """Battery 34: run.json's config edited to 7 or null made judge and report end in a TypeError traceback."""
    edit_run_json(run, lambda info: info.update(config=config))
    err = refused_by_judge_and_report(run, capsys)
    assert err.count(said) == 2, err


def test_a_run_json_without_its_benchmark_hash_is_named_not_called_changed(run, capsys):
    """Battery 34 nit: convbench.benchmark_hash deleted from run.json was reported as the benchmark having
    changed since the run played it."""
    edit_run_json(run, lambda info: info["convbench"].pop("benchmark_hash"))
    err = refused_by_judge_and_report(run, capsys)
    assert "field 'convbench.benchmark_hash' is missing or not a string" in err and "changed since" not in err, err


def test_a_run_json_without_its_convbench_group_is_one_line_naming_it(run, capsys):
    """Battery 34, D3: run.json with its `convbench` group deleted was read as an IHBench run: ten "missing
    field 'id'" lines, then a line about the dataset's kind that never named run.json."""
    edit_run_json(run, lambda info: info.pop("convbench"))
    capsys.readouterr()
    assert main(["report", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"ihbench report: error: {run / 'run.json'}: config 'bike_bench' is a "
                                        "ConversationBench benchmark, but field 'convbench' is missing (edited by "
                                        "hand?); restore it"], err
