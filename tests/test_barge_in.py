"""`ihbench barge-in`: the model under test and the simulator's LLM are STAND-INS (scripted
OpenAI-compatible servers on loopback, tests/barge_in_script.py); the data (the shared real build),
the TTS clock (flite renders), the HTTP stack, the run folder and a tiny real transformers model are real."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from barge_in_script import CLEAN, model_message, scripts
from openai_test_server import OpenAITestServer

from ihbench.barge_in import prompts
from ihbench.barge_in.clock import MEASURED, SENTENCE_END, Spoken, Word
from ihbench.barge_in.cuts import place_cut
from ihbench.barge_in.points import rounds as held
from ihbench.barge_in.records import _round_check
from ihbench.cli import main
from ihbench.dataset.sources import SourceTurn
from ihbench.dataset.verify import _check_cut

# Editing the barge-in prompt changes its hash: bump PROMPT_VERSION and pin the new pair here.
PINNED_PROMPT_HASHES = {"2026-11-28.1": "d43472830856"}


def barge_in(model, sim, data, out, *extra, limit: int = 1, modality: str = "text") -> int:
    return main(["barge-in", "--data", str(data), "--model", "openai", "--model-path", "scripted",
                 "--base-url", model.base_url, "--sim-model", "scripted-sim", "--sim-base-url", sim.base_url,
                 "--modality", modality, "--limit", str(limit), "--out", str(out), "--quiet", *extra,
                 *([] if "--cache" in extra else ["--cache", str(Path(out).parent / f"{Path(out).name}-cache.sqlite")])])


def rounds(out) -> list[dict]:
    return [json.loads(line) for line in (Path(out) / "barge_in.jsonl").read_text().splitlines()]


def cuts(out) -> list[dict]:
    return [r for r in rounds(out) if r["cut"] and "reason" not in r["cut"]]


@pytest.fixture(scope="module")
def played(built, tmp_path_factory):
    """One conversation of the shared build, played on-policy (text modality)."""
    out = tmp_path_factory.mktemp("barge-in") / "run"
    model_script, sim_script = scripts()
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out) == 0
    return out, model_script.events, sim_script


def test_prompt_changes_need_a_version_bump():
    assert PINNED_PROMPT_HASHES.get(prompts.PROMPT_VERSION) == prompts.prompt_hash()


def test_every_round_is_the_models_own_message_and_the_suites_points_are_the_targets(played, built):
    from ihbench.dataset.load import load_conversations

    out, _, _ = played
    records = rounds(out)
    conversation = load_conversations(built)[0]
    suite = {t.number: t.interruption_type for t in conversation.turns if t.interruption_type}
    assert all(r["status"] == "played" for r in records)
    assert [r["round"] for r in records] == list(range(1, len(records) + 1))
    assert [r["reply"] for r in records] == [model_message(r["round"]) for r in records]
    assert {r["round"]: r["target"] for r in records if r["target"]} == suite
    assert len(cuts(out)) == len(suite)
    info = json.loads((out / "run.json").read_text())
    assert info["barge_in"]["prompts"]["barge_in"] == [prompts.PROMPT_VERSION, prompts.prompt_hash()]
    assert info["barge_in"]["assistant_voice"] == "flite:rms"
    assert info["barge_in"]["caller"]["fallbacks"] == {} and info["barge_in"]["caller"]["from_suite"] == 1
    assert info["barge_in"]["clock"] == MEASURED and {r["clock"] for r in records if r["target"]} == {MEASURED}


def test_a_cut_lands_inside_a_sentence_at_the_planned_time(played):
    out, _, _ = played
    for record in cuts(out):
        words = [Word.from_json(w) for w in record["words"]]
        cut, k = record["cut"], record["cut"]["word"]
        assert words[k].start_s < cut["time_s"] < words[k].end_s  # inside the word being spoken
        assert words[k - 1].sentence == words[k].sentence and not SENTENCE_END.search(words[k - 1].text)
        # the planned time is the seeded planner's, from the recorded clock
        planned = place_cut(Spoken(record["reply"], words, record["duration_s"], "flite:rms"), record["seed"])
        assert planned.time_s == pytest.approx(cut["time_s"], abs=1e-4) and planned.word == k
        turn = SourceTurn(index=0, stage="-", assistant=record["reply"], user="-", delivered=cut["heard"])
        assert _check_cut(turn) == []  # the very rule `ihbench verify` holds the data's cuts to


def test_the_heard_prefix_matches_the_word_timings(played):
    out, _, _ = played
    for record in cuts(out):
        words = [Word.from_json(w) for w in record["words"]]
        heard = [w for w in words if w.end_s <= record["cut"]["time_s"]]
        assert record["cut"]["heard"] == record["reply"][:heard[-1].last]
        assert " ".join(w.text for w in heard) == record["cut"]["heard"]
        assert all(w.start_s >= heard[-1].end_s for w in words[len(heard):])  # nothing unheard was spoken before


def test_the_caller_is_shown_only_the_heard_part(played):
    out, _, sim_script = played
    shown = [payload for agent, payload in sim_script.payloads if agent == "user_barging_in"]
    placed = cuts(out)
    assert [p["heard_so_far"] for p in shown] == [r["cut"]["heard"] for r in placed]
    for payload, record in zip(shown, placed):
        assert f"QX-44{record['round']:02d}" not in json.dumps(payload)
        assert payload["interruption_type"] == record["target"]


def test_the_rubric_and_baseline_are_written_before_the_recovery_is_requested(played):
    out, events, _ = played
    for record in cuts(out):
        recovery = events.index(("model", record["round"] + 1))
        before = events[events.index(("model", record["round"])):recovery]
        # the caller cuts in, the rubric and baseline are written, the next round is planned: then the model
        assert [agent for who, agent in before if who == "sim"] == ["user_barging_in", "rubric", "baseline",
                                                                     "planner"]
        assert record["rubric"]["rq_rubrics"] and record["baseline"]


def test_the_recovery_is_asked_with_the_truncated_turn_and_the_interjection(played):
    """The model's next message sees its cut message as heard, then the caller's interjection."""
    out, _, _ = played
    by_round = {r["round"]: r for r in rounds(out)}
    assert by_round[max(by_round)]["round"] > max(r["round"] for r in cuts(out))  # every cut got its recovery
    for record in cuts(out):
        assert record["user"] == CLEAN and record["refused"] == []


def test_every_simulator_call_is_logged_with_its_prompt_version(played):
    out, _, _ = played
    for record in rounds(out):
        agents = [c["agent"] for c in record["calls"]]
        assert agents[0] == "planner"
        assert agents[1:] == (["user_barging_in", "rubric", "baseline"] if record["cut"] and "reason" not in
                              record["cut"] else ["user_normal"])
        for call in record["calls"]:
            assert call["prompt_hash"] and call["prompt_version"] and call["calls"] == 1 and not call["cached"]


def test_an_interjection_that_reacts_to_the_unheard_part_is_refused_and_asked_again(built, tmp_path):
    model_script, sim_script = scripts(leaky=True)
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "run") == 0
    placed = cuts(tmp_path / "run")
    assert placed
    for record in placed:
        code = f"QX-44{record['round']:02d}"
        assert [r["utterance"] for r in record["refused"]] == [f"Wait, what is {code} for?"]
        assert code in record["refused"][0]["reason"] and record["user"] == CLEAN
        barging = [c for c in record["calls"] if c["agent"] == "user_barging_in"]
        assert barging[0]["calls"] == 2  # the refused answer and the re-ask
    asks = [e for e in sim_script.events if e == ("sim", "user_barging_in")]
    assert len(asks) == 2 * len(placed)


def test_planned_cuts_that_cannot_be_placed_are_recorded_with_the_reason(built, tmp_path):
    from ihbench.dataset.load import load_conversations

    targets = [t.number for t in load_conversations(built)[0].turns if t.interruption_type]
    model_script, sim_script = scripts(short=tuple(targets))
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "run") == 0
    unplaced = [r for r in rounds(tmp_path / "run") if r["cut"] and "reason" in r["cut"]]
    assert [r["round"] for r in unplaced] == targets
    assert all(r["cut"]["reason"].startswith("reply too short: 3 word(s)") for r in unplaced)
    assert all(r["user"] == "Okay, that works for me." and r["rubric"] is None for r in unplaced)


def _comparable(out) -> list[dict]:
    """The rounds the run holds (`records.durable`: a conversation's rounds up to its closing record)."""
    drop = ("time", "latency_s", "calls", "check")  # the check covers the time
    return [{k: v for k, v in r.to_json().items() if k not in drop}
            for _, r in sorted(held(Path(out)).items())]


def _kill_when(model, sim, built, out, cache, ready, limit: int = 1) -> None:
    """`ihbench barge-in` in a process of its own, killed with SIGKILL once `ready(lines)` holds."""
    command = [sys.executable, "-m", "ihbench.cli", "barge-in", "--data", str(built), "--model", "openai",
               "--model-path", "scripted", "--base-url", model.base_url, "--sim-model", "scripted-sim",
               "--sim-base-url", sim.base_url, "--modality", "text", "--limit", str(limit), "--concurrency", "1",
               "--out", str(out), "--cache", str(cache), "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    records = out / "barge_in.jsonl"
    deadline = time.time() + 120

    def written() -> list[dict]:  # the complete lines (the last one may be half written)
        return [json.loads(line) for line in records.read_text().split("\n")[:-1]] if records.exists() else []

    while time.time() < deadline and process.poll() is None and not ready(written()):
        time.sleep(0.01)
    time.sleep(0.05)  # kill it inside a round
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def test_killed_and_resumed_gives_what_an_uninterrupted_run_gives(built, tmp_path):
    model_script, sim_script = scripts(delay=0.03)
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "whole") == 0
        out = tmp_path / "killed"
        _kill_when(model, sim, built, out, tmp_path / "killed-cache.sqlite", lambda lines: len(lines) >= 3)
        killed_at = len(rounds(out))
        assert 3 <= killed_at < len(rounds(tmp_path / "whole"))
        assert barge_in(model, sim, built, out) == 0
    assert _comparable(out) == _comparable(tmp_path / "whole")


def test_a_conversation_killed_midway_is_played_again_from_its_start(built, tmp_path):
    """Rounds are durable per conversation: the first conversation, closed before the kill, is kept;
    the second, killed after some of its rounds, is played again from its first round, and its
    partial rounds are superseded (they stay in the file, and count for nothing)."""
    model_script, sim_script = scripts(delay=0.02)
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "whole", "--concurrency", "1", limit=2) == 0
        whole = rounds(tmp_path / "whole")
        first, second = whole[0]["conversation_id"], whole[-1]["conversation_id"]
        assert first != second and [r["closes"] for r in whole].count(True) == 2
        out = tmp_path / "killed"
        _kill_when(model, sim, built, out, tmp_path / "killed-cache.sqlite",
                   lambda lines: sum(1 for r in lines if r["conversation_id"] == second) >= 2, limit=2)
        partial = [r for r in rounds(out) if r["conversation_id"] == second]
        assert partial and not any(r["closes"] for r in partial)
        assert {cid for cid, _ in held(out)} == {first}
        model_script.events.clear()
        assert barge_in(model, sim, built, out, "--concurrency", "1", limit=2) == 0
    replayed = [number for who, number in model_script.events if who == "model"]
    assert replayed == [r["round"] for r in whole if r["conversation_id"] == second]  # from its round 1, only it
    assert len(rounds(out)) == len(whole) + len(partial)
    assert _comparable(out) == _comparable(tmp_path / "whole")


def test_a_resume_with_another_simulator_is_refused(played, built, capsys):
    out, _, _ = played
    before = (out / "barge_in.jsonl").read_text()
    model_script, sim_script = scripts()
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert main(["barge-in", "--data", str(built), "--model", "openai", "--model-path", "scripted",
                     "--base-url", model.base_url, "--sim-model", "another", "--sim-base-url", sim.base_url,
                     "--modality", "text", "--limit", "1", "--out", str(out), "--allow-endpoint-change",
                     "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "barge_in.simulator.model is 'scripted-sim' there but 'another' now" in err[0], err
    assert (out / "barge_in.jsonl").read_text() == before and not model_script.events


def _one_row_suite(root: Path, **columns) -> Path:
    """A suite of one conversation in the official wide layout, its own columns as given: one turn,
    a pushback point."""
    import datasets

    row = {"conversation_id": "c1", "domain": {"name": "telecom", "description": ""}, "goal": "Pay the bill",
           "system_message": "You are a billing agent.", "num_turns": 1, "assistant_turn_1_transcript": "a b c",
           "assistant_turn_1_original": "a b c d e f", "user_turn_1_transcript": "My account is 4471-889, Dana Reyes.",
           "user_turn_1_interruption_type": "Pushback", "turn_1_tf_rubric": "t", "turn_1_rq_rubrics": ["r"], **columns}
    datasets.Dataset.from_list([row]).to_parquet(str(root / "conversations" / "test-00000-of-00001.parquet"))
    (root / "README.md").write_text("---\nconfigs:\n- config_name: conversations\n  data_files:\n  - split: test\n    "
                                    "path: conversations/test-*.parquet\n---\n")
    return root


def test_the_official_schema_is_played_with_its_caller_filled_by_the_stated_rules(tmp_path):
    """The official bosonai/IHBench layout (tests/official_layout.py): its knowledge base and intent are
    not the pipeline's shape (stage names only, the caller's data as text, no interruption profile).
    The run fills them by `caller.RULES`, says which in run.json, plays the suite's points, and judge,
    report and `report STATIC BARGE_IN` score it."""
    from judging import ScriptedJudge
    from official_layout import CONVERSATIONS, write_official_layout

    from ihbench.barge_in.caller import RULES

    data, out = write_official_layout(tmp_path / "official"), tmp_path / "run"
    model_script, sim_script = scripts()
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, data, out, limit=3) == 0
    caller = json.loads((out / "run.json").read_text())["barge_in"]["caller"]
    assert (caller["from_suite"], caller["filled"]) == (0, 2)  # conv-c has no point: not played
    assert caller["fallbacks"]["conv-a"] == [
        RULES["stage_names"].format(key="stages"), RULES["facts_text"].format(shape="text"),
        RULES["probabilities_points"], RULES["hidden_text"]]
    # what the planner and the caller were given: the suite's stage names, its data, then the scripted lines
    source = {c["conversation_id"]: c for c in CONVERSATIONS}
    planned = [p for agent, p in sim_script.payloads if agent == "planner" and p["goal"] == source["conv-b"]["goal"]]
    kb, intent = planned[0]["knowledge_base"], planned[0]["caller_intent"]
    assert [s["name"] for s in kb["workflow_stages"]] == ["find booking", "rebook"] and "stages" not in kb
    lines = [t["user_turn_%d_transcript" % n] for n, t in enumerate(source["conv-b"]["turns"], start=1)]
    assert [f["value"] for f in kb["user_data"]] == ["PNR QX7ZL2", *lines]
    assert intent["hidden_info"] == ["needs aisle seat"] and intent["profile"] == "calm"
    assert intent["interruption_probabilities"] == {"normal": 0.0, "impatient": 0.0, "correction": 0.0,
                                                    "topic_switch": 0.5, "filler": 0.5, "pushback": 0.0}
    shown = [p for agent, p in sim_script.payloads if agent == "user_barging_in"
             and "QX7ZL2" in json.dumps(p["your_own_data"])]
    assert len(shown) == 2 and all("Okafor." in json.dumps(p["your_own_data"]) for p in shown)
    placed = cuts(out)
    assert sorted((r["conversation_id"], r["round"], r["target"]) for r in placed) == [
        ("conv-a", 2, "correction"), ("conv-b", 1, "topic_switch"), ("conv-b", 4, "filler")]

    static, report = tmp_path / "static", tmp_path / "report"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "scripted", "--base-url", server.base_url, "--data",
                     str(data), "--epochs", "1", "--modality", "text", "--out", str(static), "--quiet"]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        for run in (out, static):
            assert main(["judge", str(run), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                         "--cache", str(tmp_path / "judge.sqlite"), "--quiet"]) == 0
    assert main(["report", str(out), "--n-bootstrap", "50", "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())["runs"][0]
    assert summary["n_items"] == 3 and summary["barge_in"]["placed"] == 3
    assert set(summary["rq_pass_rate"]["per_type"]) == {"correction", "topic_switch", "filler"}
    assert main(["report", str(static), str(out), "--n-bootstrap", "50", "--out", str(report), "--quiet"]) == 0
    [pair] = json.loads((report / "summary.json").read_text())["barge_in_vs_static"]
    assert set(pair["difference"]["per_type"]) == {"correction", "topic_switch", "filler"}


def test_a_suite_with_no_knowledge_base_or_intent_is_played_from_its_scripted_lines(tmp_path):
    """Nothing but goal, prompt and turns: one stage for the whole call, the scripted lines as the
    caller's facts and hidden information, the suite's own point as the interruption profile."""
    from ihbench.barge_in.caller import ONE_STAGE, RULES

    data, out = _one_row_suite(tmp_path / "data"), tmp_path / "run"
    model_script, sim_script = scripts()
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, data, out) == 0
    caller = json.loads((out / "run.json").read_text())["barge_in"]["caller"]
    assert caller["fallbacks"] == {"c1": [RULES["one_stage"], RULES["facts_scripted"], RULES["profile_goal"],
                                          RULES["probabilities_points"], RULES["hidden_scripted"]]}
    plan = next(p for agent, p in sim_script.payloads if agent == "planner")
    assert [s["name"] for s in plan["knowledge_base"]["workflow_stages"]] == [ONE_STAGE]
    assert plan["caller_intent"]["hidden_info"] == ["My account is 4471-889, Dana Reyes."]
    assert plan["caller_intent"]["interruption_probabilities"]["pushback"] == 1.0
    assert "Pay the bill" in plan["caller_intent"]["profile"]
    assert [(r["round"], r["target"]) for r in cuts(out)] == [(1, "pushback")]
    assert [r["round"] for r in rounds(out)] == [1, 2]  # the cut in the last round got its recovery


def test_a_stage_list_no_rule_can_read_is_refused_before_anything_is_made(tmp_path, capsys):
    data = _one_row_suite(tmp_path / "data", knowledge_base={"stages": ["verify", "verify"], "user_data": "x"})
    capsys.readouterr()
    assert main(["barge-in", "--data", str(data), "--model", "openai", "--model-path", "m", "--base-url",
                 "http://127.0.0.1:9/v1", "--sim-model", "s", "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "conversation c1: knowledge_base.stages names the stage 'verify' twice" in err[0]
    assert str(data) in err[0] and not (tmp_path / "run").exists()


def test_a_tiny_audio_model_plays_one_conversation_end_to_end(built, tmp_path):
    """A real transformers model (random weights) under test, hearing the caller's turns as our TTS
    renders them; the simulator is the scripted stand-in."""
    from ihbench.loaders.tiny import loader_name

    model_dir, out = tmp_path / "tiny", tmp_path / "run"
    assert main(["make-tiny-model", "qwen2-audio", "--out", str(model_dir)]) == 0
    _, sim_script = scripts()
    with OpenAITestServer(respond=sim_script) as sim:
        assert main(["barge-in", "--data", str(built), "--model", loader_name("qwen2-audio"), "--model-path",
                     str(model_dir), "--max-new-tokens", "24", "--sim-model", "scripted-sim", "--sim-base-url",
                     sim.base_url, "--limit", "1", "--out", str(out), "--cache", str(tmp_path / "cache.sqlite"),
                     "--quiet"]) == 0
    records = rounds(out)
    assert records and all(r["status"] == "played" and isinstance(r["reply"], str) for r in records)
    assert records[0]["audio_turns"] == 0  # the opening: the system prompt alone
    assert [r["audio_turns"] for r in records[1:]] == list(range(1, len(records)))  # every caller turn heard as audio
    assert all(r["words"] is not None for r in records if r["target"])  # every target reply went on the clock
    assert sum(1 for r in records if r["target"]) == sum(1 for r in records if r["cut"])
    info = json.loads((out / "run.json").read_text())
    assert info["modality"] == "audio" and info["model"]["loader"] == loader_name("qwen2-audio")


def test_judge_and_report_score_the_live_points_with_the_same_judges(played, tmp_path):
    """Each placed cut is a point (its live rubric and baseline), the model's next message its answer:
    RQ per type and TF against the live baseline, by the judges and metric modules of a static run."""
    import shutil

    from judging import ScriptedJudge

    out = tmp_path / "run"
    shutil.copytree(played[0], out)
    placed = cuts(out)
    by_round = {r["round"]: r for r in rounds(out)}
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(out), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                     "--cache", str(tmp_path / "judge.sqlite"), "--quiet"]) == 0
    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    ids = {f"{r['conversation_id']}/{r['round']}" for r in placed}
    assert {j["id"] for j in judgments} == ids and {j["axis"] for j in judgments} == {"tf", "rq"}
    assert all(j["outcome"] == "judged" for j in judgments)
    assert main(["report", str(out), "--n-bootstrap", "50", "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())["runs"][0]
    assert summary["n_items"] == summary["n_planned"] == len(placed) and summary["generation_errors"] == 0
    assert set(summary["rq_pass_rate"]["per_type"]) == {r["target"] for r in placed}
    assert summary["tf_win_rate"]["tf_win_rate"] is not None
    assert summary["barge_in"] == {"planned": len(placed), "placed": len(placed), "not_placed": 0,
                                   "not_placed_by_reason": {}, "refused_interjections": 0,
                                   "placed_by_clock": {"measured": len(placed)}, "held_back": {}}
    report = (out / "report.md").read_text()
    assert "## On-policy barge-in: the cuts" in report
    assert f"| scripted (text, barge-in) | {len(placed)} | {len(placed)} | measured {len(placed)} | – | 0 |" in report
    # the answer judged is the model's next message, the baseline the live one
    from ihbench.rundir import RunDir

    _, responses, items = RunDir(out).load()
    for record in placed:
        item_id = f"{record['conversation_id']}/{record['round']}"
        answer = next(r for r in responses if r.id == item_id)
        assert answer.response == by_round[record["round"] + 1]["reply"]
        assert items[item_id].baseline == record["baseline"]
        assert items[item_id].interrupted.delivered == record["cut"]["heard"]
        assert items[item_id].rubric.rq == record["rubric"]["rq_rubrics"]


def test_a_round_the_model_fails_stops_its_conversation_and_is_played_again(built, tmp_path, capsys):
    from openai_test_server import Reply

    model_script, sim_script = scripts()
    down = {"on": True}

    def respond(body):
        if down["on"] and len([m for m in body["messages"] if m["role"] == "assistant"]) == 3:
            return Reply(status=400)  # a request the server refuses: an item failure, not retried
        return model_script(body)

    with OpenAITestServer(respond=respond) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "run") == 1
        records = rounds(tmp_path / "run")
        assert [r["status"] for r in records] == ["played"] * 3 + ["error"] and "the model" in records[-1]["error"]
        assert "every one of the 1 conversation(s) failed" in capsys.readouterr().err
        down["on"] = False
        assert barge_in(model, sim, built, tmp_path / "run") == 0
    records = rounds(tmp_path / "run")
    assert [r["round"] for r in records[4:]] == list(range(4, len(records)))
    assert all(r["status"] == "played" for r in records[4:])


def test_a_reply_far_past_max_new_tokens_fails_its_round_and_is_never_timed(built, tmp_path, capsys, monkeypatch):
    """Battery 25, U13 (P2, a hang): a server that ignores max_tokens sent a 1,000,000-character reply; timing it
    word by word on the TTS clock ran for hours. It is a failed round now (played again, never scored)."""
    from openai_test_server import Reply

    import ihbench.barge_in.run as barge_in_run

    model_script, sim_script = scripts()
    timed = []
    real = barge_in_run.speak
    monkeypatch.setattr(barge_in_run, "speak", lambda text, *a: timed.append(len(text)) or real(text, *a))

    def respond(body):
        if len([m for m in body["messages"] if m["role"] == "assistant"]) == 1:
            return Reply(content="word " * 1000)  # 5,000 characters; --max-new-tokens 64 allows 1,024
        return model_script(body)

    with OpenAITestServer(respond=respond) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "run", "--max-new-tokens", "64") == 1
    record = rounds(tmp_path / "run")[-1]
    assert record["status"] == "error" and record.get("reply") is None  # not kept: 5,000 characters of it
    assert record["error"] == ("the model: its reply is 5,000 characters long, past what --max-new-tokens 64 allows "
                               "(at most 1,024; does the server honour max_tokens?)")
    assert 5000 not in timed


def test_judge_data_for_a_barge_in_run_must_be_the_suite_it_played(played, built, tmp_path, capsys):
    """Battery 25, U14: `judge --data` naming another dataset was silently ignored for a barge-in run; it is
    where the run's suite is now (a moved dataset), checked to hold the conversations the run played."""
    import shutil

    from judging import ScriptedJudge
    from official_layout import write_official_layout

    out = shutil.copytree(played[0], tmp_path / "run")
    other = write_official_layout(tmp_path / "official")
    judge = ["judge", str(out), "--judge-model", "judge-x", "--cache", str(tmp_path / "judge.sqlite"), "--quiet"]
    capsys.readouterr()
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main([*judge, "--judge-base-url", server.base_url, "--data", str(other)]) == 2
        err = capsys.readouterr().err
        assert f"--data {other}: not the suite {out} played (its conversation " in err and "is not in it" in err, err
        assert not (out / "judgments.jsonl").exists()
        moved = shutil.copytree(built, tmp_path / "moved")
        assert main([*judge, "--judge-base-url", server.base_url, "--data", str(moved)]) == 0
    assert (out / "judgments.jsonl").exists()


def test_another_config_is_refused_before_anything_is_made(built, tmp_path, capsys):
    assert main(["barge-in", "--data", str(built), "--config", "interruptions", "--model", "openai", "--model-path",
                 "m", "--base-url", "http://127.0.0.1:9/v1", "--sim-model", "s", "--out", str(tmp_path / "run"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--config" in err[0]
    assert not (tmp_path / "run").exists()


def test_a_run_folder_of_the_other_command_is_refused(played, built, tmp_path, capsys):
    """`ihbench run` into a barge-in run (or the reverse) would put two kinds of points in one folder."""
    out = played[0]
    before = (out / "barge_in.jsonl").read_text()
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "scripted", "--base-url", server.base_url, "--data",
                     str(built), "--epochs", "1", "--limit", "1", "--modality", "text", "--out", str(out),
                     "--allow-endpoint-change", "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "belongs to a run of `ihbench barge-in`" in err[0]
        assert not (out / "responses.jsonl").exists() and (out / "barge_in.jsonl").read_text() == before
        static = tmp_path / "static"
        assert main(["run", "--model", "openai", "--model-path", "scripted", "--base-url", server.base_url, "--data",
                     str(built), "--epochs", "1", "--limit", "1", "--modality", "text", "--out", str(static),
                     "--quiet"]) == 0
        capsys.readouterr()
        model_script, sim_script = scripts()
        with OpenAITestServer(respond=sim_script) as sim:
            assert main(["barge-in", "--data", str(built), "--model", "openai", "--model-path", "scripted",
                         "--base-url", server.base_url, "--sim-model", "s", "--sim-base-url", sim.base_url,
                         "--modality", "text", "--out", str(static), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "belongs to a run of `ihbench run`" in err[0]
    assert not (static / "barge_in.jsonl").exists() and not sim_script.events


def test_conversations_played_at_once_write_what_one_at_a_time_writes(built, tmp_path):
    model_script, sim_script = scripts(delay=0.01)
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "one", "--concurrency", "1", limit=2) == 0
        assert barge_in(model, sim, built, tmp_path / "two", "--concurrency", "2", limit=2) == 0
    one, two = (sorted(_comparable(tmp_path / name), key=lambda r: (r["conversation_id"], r["round"]))
                for name in ("one", "two"))
    assert one == two and len({r["conversation_id"] for r in one}) == 2
    # the two conversations overlapped: the second one's first round came before the first one ended
    order = [r["conversation_id"] for r in rounds(tmp_path / "two")]
    assert order != sorted(order, key=order.index)
    calls = [c for r in rounds(tmp_path / "two") for c in r["calls"]]
    assert calls and not any(c["cached"] for c in calls)  # the second folder has its own cache: all sent


def test_the_model_is_asked_off_the_event_loop_only_while_other_conversations_play(built, tmp_path):
    """Played one at a time, the model's call is made on the loop (a thread hop there buys nothing and
    costs wake-ups, issue 29); at once, one conversation's model call must not hold up the others'."""
    import threading

    model_script, sim_script = scripts()
    spans, lock = [], threading.Lock()

    def slow_model(body):
        started = time.perf_counter()
        time.sleep(0.05)
        reply = model_script(body)
        with lock:
            spans.append((started, time.perf_counter()))
        return reply

    def overlapping() -> int:
        ordered = sorted(spans)
        return sum(later[0] < earlier[1] for earlier, later in zip(ordered, ordered[1:]))

    with OpenAITestServer(respond=slow_model) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "one", "--concurrency", "1", limit=2) == 0
        assert spans and overlapping() == 0
        spans.clear()
        assert barge_in(model, sim, built, tmp_path / "two", "--concurrency", "2", limit=2) == 0
        assert overlapping() > 0  # the two conversations' model calls were in flight together


def test_only_the_first_words_of_a_very_long_reply_go_on_the_clock(tmp_path, monkeypatch):
    """Battery 26, V2 (P2, a hang): a 40,000-character reply within a large --max-new-tokens took flite minutes
    to time, in uninterruptible calls (a sentence of 8,000 words is one), and Ctrl-C waited for them. Only the
    first MAX_TIMED_WORDS words are timed (about three minutes of speech: every cut falls in them), real flite."""
    import ihbench.barge_in.clock as clock
    from ihbench.barge_in.cuts import Cut, place_cut

    from ihbench.dataset.tts import RenderCache, get_engine

    monkeypatch.setattr(clock, "MAX_TIMED_WORDS", 30)  # the rules, at sizes a test renders quickly
    monkeypatch.setattr(clock, "MAX_RENDERED_WORDS", 12)
    engine, cache = get_engine("flite:rms"), RenderCache(tmp_path / "tts")
    text = "Your plan covers the water service start and the deposit " * 500  # 5,000 words, no sentence end
    spoken = clock.speak(text, engine, cache)
    assert len(spoken.words) == 30 and spoken.words[-1].text == text.split()[29]
    assert spoken.duration_s < 30 and spoken.words[-1].end_s <= spoken.duration_s
    # a run-on sentence is rendered in parts (one flite call each, a few seconds at most), back to back
    assert [w.sentence for w in spoken.words] == [n // 12 for n in range(30)]
    assert all(later.start_s >= earlier.end_s for earlier, later in zip(spoken.words, spoken.words[1:]))
    cut = place_cut(spoken, seed=7)
    assert isinstance(cut, Cut) and text.startswith(cut.heard) and len(cut.heard.split()) < 30
    short = "Shall we set up the plan now? It takes a minute."
    assert [w.text for w in clock.speak(short, engine, cache).words] == short.split()  # under the budget: all


def _segment_ends(sentence: str, voice: str) -> list[tuple[str, float]]:
    """The flite command's own account of a render: each phone segment and its end time (`-psdur`)."""
    printed = subprocess.run(["flite", "-voice", voice, "-psdur", "-t", sentence, "-o", "none"], capture_output=True,
                             text=True, check=True).stdout.split()
    return [(name, float(end)) for name, end in (entry.rsplit(":", 1) for entry in printed)]


def test_the_clock_takes_each_words_times_from_flites_own_segments_of_the_render(tmp_path):
    """Real flite renders: each word starts and ends on a phone boundary the flite command prints for
    the same sentence (first word after the leading pause, last word at the last phone), each sentence
    starts where the renders before it end, a cut inside word k hears words 0..k-1 exactly, and a
    sentence with nothing to say takes no time. The times are kept beside the render."""
    from ihbench.barge_in.clock import MEASURED, speak

    from ihbench.dataset.audio_format import SAMPLING_RATE
    from ihbench.dataset.tts import RenderCache, get_engine

    engine, cache = get_engine("flite:rms"), RenderCache(tmp_path / "tts")
    first, second = "Your balance of $2,410 is due on the fifth, Dana.", "Shall we set up the plan now?"
    text = f"{first} ... {second}"
    spoken = speak(text, engine, cache)
    assert spoken.method == MEASURED
    lengths = [len(cache.samples(engine, sentence)) / SAMPLING_RATE for sentence in (first, second)]
    assert spoken.duration_s == pytest.approx(sum(lengths))
    by_sentence = {}
    for word in spoken.words:
        by_sentence.setdefault(word.sentence, []).append(word)
    assert [w.text for w in by_sentence[1]] == ["..."] and by_sentence[1][0].start_s == by_sentence[1][0].end_s
    for words, sentence, offset in ((by_sentence[0], first, 0.0), (by_sentence[2], second, lengths[0])):
        segments = _segment_ends(sentence, "rms")
        last_phone = [end for name, end in segments if name != "pau"][-1]
        # the render ends in the closing pause (cut to whole frames of the waveform: a few ms short of it)
        assert last_phone < lengths[words[0].sentence // 2] <= segments[-1][1] + 0.001
        boundaries = [end for _, end in segments]
        for word in words:  # every word begins and ends where a phone does
            assert min(abs(word.start_s - offset - b) for b in boundaries) < 0.001
            assert min(abs(word.end_s - offset - b) for b in boundaries) < 0.001
        assert words[0].start_s - offset == pytest.approx(segments[0][1], abs=0.001)  # after the leading pause
        assert words[-1].end_s - offset == pytest.approx(last_phone, abs=0.001)
        assert all(a.end_s <= b.start_s for a, b in zip(words, words[1:]))
    money = next(w for w in spoken.words if w.text == "$2,410")  # read as six words: one span on the clock
    phones_inside = [end for _, end in _segment_ends(first, "rms") if money.start_s < end < money.end_s]
    assert len(phones_inside) > 10
    for k, word in enumerate(spoken.words):
        if word.end_s > word.start_s and k:
            heard = spoken.heard_before((word.start_s + word.end_s) / 2)
            assert heard == text[:max(w.last for w in spoken.words[:k] if w.end_s <= word.start_s)]
            assert heard.split() == [w.text for w in spoken.words[:k]]  # words 0..k-1, no more, no fewer
    # measured once: the second reading comes from beside the render, and says the same
    assert (cache.directory / f"{cache.key(engine, second)}.words.json").exists()
    assert speak(text, engine, cache) == spoken


def test_a_run_begun_on_the_estimated_clock_is_not_resumed_on_measured_times(played, built, tmp_path, capsys):
    """Cuts placed on two clocks would be scored as one run: the resume is refused, naming the clock."""
    import shutil

    from ihbench.barge_in.clock import ESTIMATED

    out = tmp_path / "run"
    shutil.copytree(played[0], out)
    info = json.loads((out / "run.json").read_text())
    info["barge_in"]["clock"] = f"{ESTIMATED} (libflite cannot be loaded)"
    (out / "run.json").write_text(json.dumps(info))
    before = (out / "barge_in.jsonl").read_text()
    model_script, sim_script = scripts()
    capsys.readouterr()
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out, "--allow-endpoint-change") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "barge_in.clock" in err[0] and "libflite cannot be loaded" in err[0]
    assert (out / "barge_in.jsonl").read_text() == before and not model_script.events and not sim_script.events


def test_a_voice_that_reports_no_times_falls_back_to_the_estimate_and_says_why(tmp_path):
    """Piper reports no word or phone times: its words share each sentence's speech by estimated
    syllables, without gaps, and the method says so."""
    from ihbench.barge_in.clock import ESTIMATED, method, sentence_clock, speak, syllables
    from ihbench.dataset.tts import RenderCache, get_engine

    engine, cache = get_engine("piper:joe"), RenderCache(tmp_path / "tts")
    sentence = "Your balance is due on the fifth."
    spoken = speak(sentence, engine, cache)
    assert spoken.method.startswith(ESTIMATED) and "piper:joe reports no word or phone times" in spoken.method
    assert method(engine) == spoken.method
    start, end, length = sentence_clock(sentence, engine, cache)
    assert spoken.words[0].start_s == pytest.approx(start) and spoken.words[-1].end_s == pytest.approx(end)
    assert all(a.end_s == pytest.approx(b.start_s) for a, b in zip(spoken.words, spoken.words[1:]))
    assert spoken.duration_s == pytest.approx(length)
    assert syllables("balance") == 2 and syllables("$2,410") == 4 and syllables("—") == 0


def test_report_puts_the_barge_in_run_beside_its_static_run_per_type_with_an_interval(played, built, tmp_path):
    """`ihbench report STATIC BARGE_IN`: per type, barge-in RQ minus static RQ with the interval the
    metric module computes (unpaired), a plot of both, each run labelled with its suite."""
    import shutil

    from judging import ScriptedJudge

    from ihbench.rundir import RunDir
    from metric_modules import load

    live, static, out = tmp_path / "live", tmp_path / "static", tmp_path / "report"
    shutil.copytree(played[0], live)
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "scripted", "--base-url", server.base_url, "--data",
                     str(built), "--epochs", "1", "--limit", "12", "--modality", "text", "--out", str(static),
                     "--quiet"]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        for run in (live, static):
            assert main(["judge", str(run), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                         "--cache", str(tmp_path / "judge.sqlite"), "--quiet"]) == 0
    assert main(["report", str(static), str(live), "--n-bootstrap", "200", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    [pair] = summary["barge_in_vs_static"]
    assert (pair["static_run"], pair["barge_in_run"]) == (str(static), str(live))
    info = {run: json.loads((run / "run.json").read_text()) for run in (live, static)}
    assert pair["barge_in_suite"] == f"{Path(built).name}@{info[live]['data_fingerprint'][:8]}"
    assert pair["static_suite"] == f"{Path(built).name}@{info[static]['data_fingerprint'][:8]}"

    def rows(run):
        run_dir = RunDir(run)
        _, responses, items = run_dir.load()
        judged = [j for j in run_dir.judgments(run_dir.judgment_files()[0], responses=responses)
                  if j.axis == "rq" and j.judged]
        return [j.criteria for j in judged], [j.id for j in judged], [items[j.id].interruption_type for j in judged]

    (a, a_ids, a_types), (b, b_ids, b_types) = rows(live), rows(static)
    expected = load("rq_pass_rate").compute(predictions=a, item_ids=a_ids, interruption_types=a_types,
                                            compare_predictions=b, compare_item_ids=b_ids,
                                            compare_interruption_types=b_types, n_bootstrap=200, seed=0)
    assert pair["difference"] == expected["difference"]  # the module's arithmetic, not the report's
    assert set(pair["difference"]["per_type"]) == set(a_types) & set(b_types) != set()
    report = (out / "report.md").read_text()
    assert "## Recovery from its own sentence vs a scripted one (scripted)" in report
    assert pair["barge_in_suite"] in report and pair["static_suite"] in report
    for kind, d in pair["difference"]["per_type"].items():
        assert f"{d['rq_pass_rate_difference']:+.2f} [{d['ci_low']:+.2f}, {d['ci_high']:+.2f}]" in report
    assert (out / "barge_in_vs_static.png").stat().st_size > 0 and "![Barge-in vs static]" in report


def test_a_changed_suite_leaves_the_old_rounds_unscored_and_a_resume_plays_them_again(played, built, tmp_path,
                                                                                        monkeypatch, caplog):
    """Stale records: rounds played on an older version of a conversation (its `conversation_hash`)
    are not scored, and a resumed run on the changed suite plays that conversation again from its
    first round (the choice over refusing: the unchanged conversations are kept)."""
    import dataclasses
    import shutil

    import ihbench.dataset.load as load
    from ihbench.barge_in.records import conversation_hash
    from ihbench.rundir import RunDir

    out = tmp_path / "run"
    shutil.copytree(played[0], out)
    _, _, before = RunDir(out).load()
    original = load.load_conversations

    def revised(*args, **kwargs):  # the suite's next version: the caller's goal reworded
        return [dataclasses.replace(c, goal=c.goal + " (revised)") for c in original(*args, **kwargs)]

    monkeypatch.setattr(load, "load_conversations", revised)
    with caplog.at_level("WARNING", logger="ihbench"):
        _, responses, items = RunDir(out).load()
    assert before and items == {} and responses == []
    assert "1 conversation(s) were played on an older version of the suite" in caplog.text
    old = rounds(out)
    model_script, sim_script = scripts()
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out, "--allow-endpoint-change") == 0
    assert [n for who, n in model_script.events if who == "model"] == [r["round"] for r in old]  # from round 1
    new_hash = conversation_hash(revised(built)[0])
    assert {r.data_hash for r in held(out).values()} == {new_hash} != {r["data_hash"] for r in old}
    _, _, after = RunDir(out).load()
    assert set(after) == set(before)


def test_a_conversation_that_failed_is_counted_as_failed_by_judge_and_report_never_scored(built, tmp_path, capsys):
    """Battery 5, finding 4: a conversation stopped by a failed round (here the simulator answers
    plain text at its first round) has no point to score; judge and report count it apart and name
    `ihbench barge-in` as what plays it again."""
    from judging import ScriptedJudge

    from openai_test_server import Reply

    out = tmp_path / "failed"
    with OpenAITestServer(respond=lambda body: Reply(content="hello")) as both:
        assert barge_in(both, both, built, out) == 1
    assert [r["status"] for r in rounds(out)] == ["error"]
    capsys.readouterr()
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(out), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "j.sqlite"), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert ("note: 1 round(s) failed in the run and have no answer to judge; `ihbench barge-in` with the same options "
            "tries them again") in said
    assert main(["report", str(out), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]
    assert summary["generation_errors"] == 1 and summary["n_responses"] == 0
    assert "1 failed round(s) not scored (`ihbench barge-in` with the same options tries them again)" in \
        capsys.readouterr().out


def test_set_baseline_refuses_a_barge_in_run_as_such(played, built, tmp_path, capsys):
    """Battery 6, finding 5: set-baseline said a barge-in run's "points have changed since the run";
    its points are live cuts of the model's own replies, never the data's, and it is told so."""
    out, _, _ = played
    capsys.readouterr()
    assert main(["set-baseline", str(out), "--data", str(built), "--out", str(tmp_path / "nb"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert f"{out} is an `ihbench barge-in` run: its points are cuts into the model's own replies" in error
    assert error.count("\n") == 1 and not (tmp_path / "nb").exists()


@pytest.mark.parametrize("damage", ["torn", "edited", "suite changed"])
def test_judge_and_report_of_a_damaged_barge_in_run_name_its_records_and_the_command_that_replays_them(
        damage, played, tmp_path, capsys, monkeypatch):
    """Battery 6, finding 5: a barge_in.jsonl cut mid-line, or a reply edited so its cut no longer
    matches, is said in barge_in.jsonl's terms (the line, `ihbench barge-in` to play it again); the
    judgments of the points it held are left out with that cause, never "responses.jsonl: missing"."""
    import shutil

    from judging import ScriptedJudge

    out = tmp_path / "run"
    shutil.copytree(played[0], out)
    judge = ["judge", str(out), "--judge-model", "judge-x", "--cache", str(tmp_path / "judge.sqlite"), "--quiet"]
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main([*judge, "--judge-base-url", server.base_url]) == 0
        records = (out / "barge_in.jsonl").read_bytes()
        lines = records.splitlines(keepends=True)
        if damage == "torn":
            (out / "barge_in.jsonl").write_bytes(records[:-200])
            said = f"barge_in.jsonl line {len(lines)}: incomplete (cut mid-line"
            cause = f"its last playing has no closing record in barge_in.jsonl (line {len(lines)} is cut off mid-line)"
        elif damage == "suite changed":  # the judgments are of rounds played on the suite's older version
            import dataclasses

            import ihbench.dataset.load as load
            original = load.load_conversations
            monkeypatch.setattr(load, "load_conversations", lambda *args, **kwargs: [
                dataclasses.replace(c, goal=c.goal + " (revised)") for c in original(*args, **kwargs)])
            said = "1 conversation(s) were played on an older version of the suite"
            cause = "are left out: it was played on an older version of the suite"
        else:
            placed = next(n for n, line in enumerate(lines) if json.loads(line)["status"] == "played"
                          and json.loads(line)["cut"] and "reason" not in json.loads(line)["cut"])
            record = json.loads(lines[placed])
            record["reply"] = "\u200b"
            record["check"] = _round_check(record)  # as a faulty writer would have it: the check passes
            lines[placed] = (json.dumps(record) + "\n").encode()
            (out / "barge_in.jsonl").write_bytes(b"".join(lines))
            said = f"barge_in.jsonl line {placed + 1}: the heard part of the cut is not the beginning of the reply"
            cause = f"line {placed + 1} of barge_in.jsonl is damaged (the heard part of the cut"
        capsys.readouterr()
        assert main([*judge, "--judge-base-url", server.base_url]) == 0
        assert main(["report", str(out), "--n-bootstrap", "10", "--quiet", "--out", str(tmp_path / "rep")]) == 0
    said_out = capsys.readouterr()
    text = said_out.out + said_out.err
    assert said in text and cause in text and "`ihbench barge-in` with the same --out plays it again" in text
    # the line once a process (judge and report run in this one), the judgments left out once by each
    assert text.count(said) == 1 and text.count(cause) == 2, text
    # battery 25 U2: judge and report say so on the terminal too, not only report.md
    again = f"`ihbench barge-in --out {out}` with the same options plays them again"
    assert f"note: 1 conversation(s) of this barge-in run are left out and not judged: their last playing" in text
    assert f"ihbench report: warning: {out}: 1 conversation(s) left out, not scored: their last playing" in text
    assert text.count(again) == 2, text
    assert "responses.jsonl" not in text and "ihbench run" not in text
    # battery 14, J10: the conversation left out is counted in the report itself, with its cause
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "1 conversation(s) left out, not scored (`ihbench barge-in` with the same --out plays them again)" \
        in report and cause.split("left out: ")[-1] in report, report


def test_a_model_that_speaks_is_cut_on_its_own_audio(built, tmp_path):
    """The model under test answers aloud (`--option audio_voice`; the STAND-IN sends flite speech of
    its reply as the chat completion's audio): each cut is placed on that audio's clock, its words
    where flite said them (pocketsphinx alignment, within 0.2 s of flite's own times), and the heard
    part is the words that end before the cut."""
    from openai_test_server import Reply

    from ihbench.barge_in.audio_clock import ALIGNED
    from ihbench.barge_in.clock import sentences, speak
    from ihbench.dataset.audio import encode_wav
    from ihbench.dataset.tts import RenderCache, get_engine

    voice, renders = get_engine("flite:slt"), RenderCache(tmp_path / "voice")
    model_script, sim_script = scripts()

    def speaking(body):
        reply = model_script(body)
        text = reply.content
        audio = np.concatenate([renders.samples(voice, text[g[0].start():g[-1].end()]) for g in sentences(text)])
        return Reply(content=text, audio=encode_wav(audio))

    out = tmp_path / "spoken"
    with OpenAITestServer(respond=speaking) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out, "--option", "audio_voice=slt") == 0
        assert all(body["audio"] == {"voice": "slt", "format": "wav"} for body in model.requests)
    assert json.loads((out / "run.json").read_text())["barge_in"]["clock"] == ALIGNED
    placed = cuts(out)
    assert placed
    for record in placed:
        assert record["clock"].startswith(ALIGNED)
        words = [Word.from_json(w) for w in record["words"]]
        truth = speak(record["reply"], voice, renders).words
        assert [w.text for w in words] == [w.text for w in truth]
        assert max(max(abs(a.start_s - b.start_s), abs(a.end_s - b.end_s)) for a, b in zip(words, truth)) < 0.2
        heard = [w for w in words if w.end_s <= record["cut"]["time_s"]]
        assert record["cut"]["heard"] == record["reply"][:heard[-1].last]
        k = record["cut"]["word"]
        assert words[k].start_s < record["cut"]["time_s"] < words[k].end_s


def test_simulator_calls_answered_from_the_cache_are_recorded_as_cached(built, tmp_path):
    """Battery 8, finding 3: every call was recorded `cached: 0` (the conversation's usage counter
    overwrote the call's own flag)."""
    model_script, sim_script = scripts()
    cache = str(tmp_path / "shared.sqlite")
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "first", "--cache", cache) == 0
        sent = len(sim.requests)
        assert barge_in(model, sim, built, tmp_path / "again", "--cache", cache) == 0
        assert len(sim.requests) == sent  # every simulator answer came from the first run's cache
    assert all(c["cached"] is False for r in rounds(tmp_path / "first") for c in r["calls"])
    calls = [c for r in rounds(tmp_path / "again") for c in r["calls"]]
    assert calls and all(c["cached"] is True for c in calls)


@pytest.mark.parametrize("value", [None, []])
def test_a_barge_in_section_of_run_json_that_is_no_object_is_named(value, played, tmp_path, capsys):
    """Battery 22, N7: `"barge_in": null` made the report say the run's answers were gone (it read the folder
    as an `ihbench run`'s), and barge-in call the folder another command's. Both now name run.json's field."""
    import shutil

    out = tmp_path / "run"
    shutil.copytree(played[0], out)
    info = json.loads((out / "run.json").read_text())
    info["barge_in"] = value
    (out / "run.json").write_text(json.dumps(info))
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'run.json'}" in err and "field 'barge_in' must be an object" in err and "gone" not in err, err
