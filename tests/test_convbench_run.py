"""ConversationBench (1/2), part 3: on-policy runs with tools against a local OpenAI-compatible TEST
DOUBLE that replays the golden calls and answers (it stands in for a served model)."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from convbench_layout import TURNS, write_benchmark_folder
from openai_test_server import OpenAITestServer, Reply

from ihbench.cli import main
from ihbench.convbench import ConvRunSpec, run_convbench
from ihbench.convbench.tool_results import TurnTools
from ihbench.dataset.convbench import import_convbench


@pytest.fixture
def data(tmp_path):
    folder = write_benchmark_folder(tmp_path / "repo")
    out = tmp_path / "data"
    import_convbench(folder, out, progress=False)
    return out


def user_turns(body) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "user")


def golden_replay(duplicate_at=None, end_at=None):
    """Answers turn k (the k-th user message) with its expected calls, then, once their results are
    in, with the golden text. `duplicate_at`: repeat that turn's first call in the same reply."""
    def respond(body):
        turn = user_turns(body) - 1
        expected = TURNS[turn].get("required_function_call")
        calls = [] if expected is None else [expected] if isinstance(expected, dict) else expected
        if end_at is not None and turn == end_at:
            calls = [{"name": "end_session", "args": {}}]
        answered = body["messages"][-1]["role"] == "tool"
        if calls and not answered:
            wire = [{"name": c["name"], "arguments": c["args"]} for c in calls]
            if turn == duplicate_at:
                wire.append(dict(wire[0]))
            return Reply(content="", tool_calls=wire)
        return Reply(content=TURNS[turn]["golden_text"])
    return respond


def spec(data, out, server, **options) -> ConvRunSpec:
    return ConvRunSpec(loader="openai", model_path="test-model", data=str(data), config="bike_bench", out=out,
                       epochs=options.pop("epochs", 1), modality=options.pop("modality", "text"),
                       loader_options={"base_url": server.base_url, "max_retries": 0}, **options)


def transcript(out, epoch=0):
    return [json.loads(line) for line in (out / f"epoch_{epoch}" / "transcript.jsonl").read_text().splitlines()]


def test_a_golden_replay_gives_exactly_the_expected_calls_in_order(data, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay()) as server:
        summary = run_convbench(spec(data, out, server), progress=False)
    assert summary.errors == 0 and summary.planned == 5
    rows = transcript(out)
    assert [r["turn"] for r in rows] == [0, 1, 2, 3, 4]
    assert rows[0]["assistant_text"] == TURNS[0]["golden_text"] and rows[0]["tool_calls"] == []
    assert rows[1]["tool_calls"] == [{"name": "book_repair", "args": {"customer": "Ada Park", "slot_id": "42"}}]
    assert [c["name"] for c in rows[2]["tool_calls"]] == ["cancel_booking", "book_repair"]
    # positional results: the scripted list handed out in order
    assert [r["response"]["result"] for r in rows[2]["tool_results"]] == TURNS[2]["function_call_response"]
    assert rows[4]["assistant_text"] == "[MODEL_ENDED_SESSION]"
    assert json.loads((out / "epoch_0" / "runtime.json").read_text())["turns"] == 5
    assert set(rows[0]) == {"ts", "turn", "model_name", "user_text", "assistant_text", "tool_calls", "tool_results",
                            "tokens", "ttfb_ms", "latency_ms", "reconnection_count"}


def test_the_history_is_the_model_s_own_with_its_calls_and_results(data, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, out, server), progress=False)
        last = server.requests[-1]
    roles = [m["role"] for m in last["messages"]]
    assert roles[0] == "system" and roles.count("user") == 5 and roles.count("tool") == 3  # end_session: no round after
    tool = next(m for m in last["messages"] if m["role"] == "tool")
    assert json.loads(tool["content"]) == {"status": "success"}
    assert [t["function"]["name"] for t in last["tools"]] == ["end_session", "book_repair", "cancel_booking"]
    assert last["tool_choice"] == "auto"


def test_a_duplicate_call_is_skipped_marked_and_kept_out_of_the_history(data, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay(duplicate_at=1)) as server:
        run_convbench(spec(data, out, server), progress=False)
        follow_up = [r for r in server.requests if user_turns(r) == 2][-1]
    calls = transcript(out)[1]["tool_calls"]
    assert calls[1] == {"name": "book_repair", "args": {"customer": "Ada Park", "slot_id": "42"}, "is_duplicate": True}
    assert transcript(out)[1]["tool_results"][1]["response"]["result"] == {"status": "duplicate_skipped"}
    assistant = [m for m in follow_up["messages"] if m["role"] == "assistant" and m.get("tool_calls")][-1]
    assert len(assistant["tool_calls"]) == 1  # the duplicate never reached the model


def test_end_session_ends_the_conversation_and_marks_the_rest(data, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay(end_at=2)) as server:
        run_convbench(spec(data, out, server), progress=False)
        asked = {user_turns(r) - 1 for r in server.requests}
    rows = transcript(out)
    assert [r["assistant_text"] for r in rows[2:]] == ["[MODEL_ENDED_SESSION]", "[MODEL_ENDED_SESSION_EARLY]",
                                                       "[MODEL_ENDED_SESSION_EARLY]"]
    assert rows[3]["user_text"] == TURNS[3]["input"] and rows[3]["tool_calls"] == [] and asked == {0, 1, 2}


def test_matched_results_answer_a_wrong_call_with_an_error_payload():
    tools = TurnTools("matched", [{"name": "book_repair", "args": {"customer": "Ada Park", "slot_id": "42"}}], None)
    assert tools.answer("book_repair", {"slot_id": " 42 ", "customer": "Ada Park"}) == ({"status": "success"}, False)
    assert tools.answer("book_repair", {"customer": "Ada Park", "slot_id": "42"})[1] is True  # duplicate
    wrong = TurnTools("matched", [{"name": "book_repair", "args": {"customer": "Ada", "slot_id": "42"}}], None)
    assert wrong.answer("book_repair", {"customer": "Ada", "slot_id": "43"})[0]["error_code"] == "ARG_MISMATCH"
    assert wrong.answer("cancel_booking", {"customer": "Ada"})[0]["error_code"] == "UNEXPECTED_TOOL_CALL"
    assert TurnTools("matched", [], None).answer("x", {})[0]["status"] == "not_available"
    positional = TurnTools("positional", [], [{"a": 1}])
    assert positional.answer("x", {}) == ({"a": 1}, False) and positional.answer("y", {}) == ({"status": "success"},
                                                                                                False)
    assert TurnTools("positional", [], {"b": 2}).answer("z", {"q": 1}) == ({"b": 2}, False)


def test_a_failed_turn_stops_the_conversation_and_the_next_run_resumes_there(data, tmp_path):
    out = tmp_path / "run"
    replay = golden_replay()

    def down_at_turn_3(body):
        return Reply(status=500) if user_turns(body) - 1 == 3 else replay(body)

    with OpenAITestServer(respond=down_at_turn_3) as server:
        summary = run_convbench(spec(data, out, server), progress=False)
    assert summary.errors == 1
    runtime = json.loads((out / "epoch_0" / "runtime.json").read_text())
    assert runtime["status"] == "failed" and "error" in runtime and runtime["turns"] == 3
    with OpenAITestServer(respond=replay) as server:
        summary = run_convbench(spec(data, out, server, allow_endpoint_change=True), progress=False)
        first = server.requests[0]
    assert summary.errors == 0 and summary.skipped == 3 and summary.written == 2
    assert user_turns(first) == 4  # the history of turns 0-2 as it was, then turn 3
    assert [m["role"] for m in first["messages"]].count("tool") == 3
    assert [r["turn"] for r in transcript(out)] == [0, 1, 2, 3, 4]


def test_epochs_are_independent_conversations_and_rehydrate_plays_turns_alone(data, tmp_path):
    with OpenAITestServer(respond=golden_replay()) as server:
        summary = run_convbench(spec(data, tmp_path / "two", server, epochs=2, concurrency=2), progress=False)
    assert summary.conversations == 2 and len(transcript(tmp_path / "two", 1)) == 5

    def answer(body):
        return Reply(content=f"turn {user_turns(body) - 1}")

    with OpenAITestServer(respond=answer) as server:
        summary = run_convbench(spec(data, tmp_path / "re", server, rehydrate=True, only_turns=[1, 3]),
                                progress=False)
        histories = sorted((user_turns(r), [m["content"] for m in r["messages"] if m["role"] == "assistant"])
                           for r in server.requests)
    assert summary.conversations == 2 and [r["turn"] for r in transcript(tmp_path / "re")] == [1, 3]
    assert histories[1][1] == [t["golden_text"] for t in TURNS[:3]]  # golden replies, no tool messages
    runtime = json.loads((tmp_path / "re" / "epoch_0" / "runtime.json").read_text())
    assert runtime["mode"] == "rehydrated" and runtime["total_attempted"] == 2


def test_audio_mode_sends_each_user_turn_as_audio(data, tmp_path):
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, tmp_path / "a", server, modality="audio", only_turns=[0, 1]), progress=False)
        last = server.requests[-1]
    users = [m for m in last["messages"] if m["role"] == "user"]
    assert all(m["content"][0]["type"] == "input_audio" for m in users) and len(users) == 2


def test_the_command_line_dispatches_and_refuses_options_of_the_other_kind(data, tmp_path, capsys):
    with OpenAITestServer(respond=golden_replay()) as server:
        base = ["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--base-url", server.base_url,
                "--quiet", "--modality", "text", "--epochs", "1"]
        assert main([*base, "--config", "bike_bench", "--out", str(tmp_path / "r"), "--tool-results", "matched"]) == 0
        assert "1 conversation(s), 5 turn record(s) written" in capsys.readouterr().out
        assert main([*base, "--config", "bike_bench", "--out", str(tmp_path / "r2"), "--limit", "3"]) == 2
        assert "--limit: not for a ConversationBench config" in capsys.readouterr().err
        assert main([*base, "--out", str(tmp_path / "r3"), "--only-turns", "1"]) == 2
        assert "--only-turns: only for a ConversationBench config" in capsys.readouterr().err
        assert main([*base, "--config", "bike_bench", "--out", str(tmp_path / "r4"), "--only-turns", "9"]) == 2
        assert "--only-turns: no turn 9 in bike_bench" in capsys.readouterr().err
    assert not (tmp_path / "r2").exists() and not (tmp_path / "r4").exists()


def test_a_family_without_tool_support_is_refused_at_start(data, tmp_path, capsys):
    from ihbench.loaders.base import Loader

    class NoTools(Loader):
        name = "no-tools"

        def _generate(self, conversation, config, seed):
            raise AssertionError("never asked")

    with pytest.raises(Exception, match="--model no-tools: cannot run a tool-using conversation"):
        run_convbench(ConvRunSpec(loader="no-tools", model_path="m", data=str(data), config="bike_bench",
                                  out=tmp_path / "n", modality="text"), loader=NoTools("m"), progress=False)
    assert not (tmp_path / "n").exists()


def _golden_server_elsewhere(tmp_path, delay: str) -> subprocess.Popen:
    """The golden replay served from a process of its own (a run killed or stopped beside it must not
    take it along), each answer `delay` seconds late (a Python expression of `body`); its URL is the
    first line of its stdout."""
    script = tmp_path / "serve.py"
    script.write_text(f"""
import sys, time
sys.path.insert(0, {str(os.path.dirname(__file__))!r})
from openai_test_server import OpenAITestServer
from test_convbench_run import golden_replay, user_turns
replay = golden_replay()
def slow(body):
    reply = replay(body)
    reply.delay = {delay}
    return reply
with OpenAITestServer(respond=slow) as server:
    print(server.base_url, flush=True)
    time.sleep(120)
""")
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_killed_mid_conversation_then_resumed_with_the_same_history(data, tmp_path):
    """kill -9 while turn 3 is being answered: the rerun starts at turn 3 with exactly the history of
    turns 0-2, and no turn is recorded twice as done."""
    out = tmp_path / "run"
    server = _golden_server_elsewhere(tmp_path, "30 if user_turns(body) - 1 == 3 else 0")
    try:
        url = server.stdout.readline().strip()
        command = [sys.executable, "-m", "ihbench.cli", "run", "--model", "openai", "--model-path", "test-model",
                   "--data",
                   str(data), "--config", "bike_bench", "--out", str(out), "--base-url", url, "--epochs", "1",
                   "--modality", "text", "--quiet"]
        runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while time.time() < deadline:
            lines = (out / "responses.jsonl").read_text().splitlines() if (out / "responses.jsonl").exists() else []
            if len(lines) >= 3:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    finally:
        server.kill()
    before = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert [r["turn"] for r in before] == [0, 1, 2]
    with OpenAITestServer(respond=golden_replay()) as again:
        summary = run_convbench(spec(data, out, again, allow_endpoint_change=True), progress=False)
        first = again.requests[0]
    assert summary.skipped == 3 and summary.written == 2
    kept = [m for m in first["messages"] if m["role"] != "system"]
    expected_history = [m for r in before for m in ([{"role": "user", "content": r["user_text"]}] + r["messages"])]
    assert [(m["role"], m.get("content")) for m in kept[:len(expected_history)]] == \
        [(m["role"], m.get("content")) for m in expected_history]
    after = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert sorted(r["turn"] for r in after if r["status"] != "error") == [0, 1, 2, 3, 4]




def test_a_streamed_run_records_the_time_to_first_token_and_the_same_turns(data, tmp_path):
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, tmp_path / "plain", server), progress=False)
        streamed = spec(data, tmp_path / "streamed", server)
        streamed.loader_options["stream"] = True
        run_convbench(streamed, progress=False)
        assert server.requests[-1]["stream"] is True
    plain, rows = transcript(tmp_path / "plain"), transcript(tmp_path / "streamed")
    assert [(r["assistant_text"], r["tool_calls"]) for r in rows] == [(r["assistant_text"], r["tool_calls"])
                                                                      for r in plain]
    assert all(r["ttfb_ms"] is not None for r in rows) and all(r["ttfb_ms"] is None for r in plain)
    assert rows[2]["tokens"]["prompt_tokens"] > 0


@pytest.mark.parametrize("source", ["another model", "another seed"])
def test_turns_copied_from_another_run_are_played_again_not_kept(source, data, tmp_path, caplog):
    """Battery 10: another model's responses.jsonl copied into a run resumed as "turns already done"."""
    import dataclasses

    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, mine, server), progress=False)
        other = spec(data, theirs, server, allow_endpoint_change=True)
        other = dataclasses.replace(other, model_path="other-model") if source == "another model" else \
            dataclasses.replace(other, seed=7)
        run_convbench(other, progress=False)
        (mine / "responses.jsonl").write_bytes((theirs / "responses.jsonl").read_bytes())
        summary = run_convbench(spec(data, mine, server, allow_endpoint_change=True), progress=False)
    why = ("answered by openai:other-model, and this run's model is openai:test-model" if source == "another model"
           else "its seed is not the one this run (--seed 0) draws for it")
    # every line left out for one reason is said once (battery 58, E7)
    assert re.search(r"responses\.jsonl \d+ lines \(1, 2, ", caplog.text) and why in caplog.text, caplog.text
    assert summary.skipped == 0 and summary.written > 0


def test_a_turn_edited_by_hand_is_played_again_not_judged(data, tmp_path, caplog):
    """Turn records carry a check of all they hold (format 2): an answer edited by hand is no answer
    of the model's."""
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, out, server), progress=False)
        lines = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
        assert all(line["format"] == 2 and line["check"] for line in lines)
        lines[1]["text"] = "an answer the model never gave"
        (out / "responses.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        summary = run_convbench(spec(data, out, server, allow_endpoint_change=True), progress=False)
    assert "responses.jsonl line 2: changed since it was written" in caplog.text, caplog.text
    assert summary.written > 0
    kept = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()][len(lines):]
    assert kept[0]["turn"] == lines[1]["turn"] and kept[0]["text"] != "an answer the model never gave"
    # the turns after it heard another history: played again from there on, not kept
    assert [r["turn"] for r in kept] == [r["turn"] for r in lines[1:]]


@pytest.mark.slow
def test_ctrl_c_stops_once_the_turns_being_played_end(data, tmp_path):
    """Battery 31, A3: the first Ctrl-C waited, without a word, for every conversation queued to play to
    its end (the thread pool's exit waits for its whole queue). It stops the run once the turns being
    played end: they are kept, no other turn starts, and the same command goes on from there."""
    out = tmp_path / "run"
    server = _golden_server_elsewhere(tmp_path, "1.0")
    try:
        url = server.stdout.readline().strip()
        command = [sys.executable, "-m", "ihbench.cli", "run", "--model", "openai", "--model-path", "test-model",
                   "--data", str(data), "--config", "bike_bench", "--out", str(out), "--base-url", url, "--epochs", "3",
                   "--concurrency", "1", "--modality", "text"]
        # a command started in the background by a shell without job control (CI's) ignores SIGINT, and so
        # would this child: Ctrl-C's default action is given back to it
        runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + 60
        while time.time() < deadline and not (out / "responses.jsonl").exists():
            time.sleep(0.05)
        runner.send_signal(signal.SIGINT)
        _, err = runner.communicate(timeout=30)
    finally:
        server.kill()
    assert runner.returncode == 130, err
    assert "stopping once the turns being played end (they are kept), for at most 60 s; no other turn starts" \
        in err, err
    kept = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert 1 <= len(kept) <= 2 and {r["epoch"] for r in kept} == {0}, kept  # 15 turns were planned


def test_ctrl_c_again_stops_at_once_when_the_server_never_answers(data, tmp_path):
    """Battery 45, R6: the first Ctrl-C waits for the turns being played, which against a server that never
    answers is each request's timeout times its retries; a second Ctrl-C did nothing. It stops at once; the
    turns cut short are played again by the next run."""
    from openai_test_server import SilentServer

    out = tmp_path / "run"
    with SilentServer() as server:
        command = [sys.executable, "-m", "ihbench.cli", "run", "--model", "openai", "--model-path", "test-model",
                   "--data", str(data), "--config", "bike_bench", "--out", str(out), "--base-url", server.base_url,
                   "--concurrency", "2", "--modality", "text", "--option", "timeout=600", "--rehydrate"]
        runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + 60
        while time.time() < deadline and server.connections < 2:
            time.sleep(0.05)
        runner.send_signal(signal.SIGINT)
        time.sleep(1)
        assert runner.poll() is None  # waiting for the turns being played
        runner.send_signal(signal.SIGINT)
        try:
            _, err = runner.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            runner.kill()
            pytest.fail("the run went on waiting for its server after a second Ctrl-C")
    assert runner.returncode == 130, err
    assert "no other turn starts; Ctrl-C again stops at once (those turns are then played again by the next run)" \
        in err, err
    assert "ihbench run: stopped (Ctrl-C)" in err.strip().splitlines()[-1], err
    assert "Traceback" not in err, err


def test_a_first_ctrl_c_waits_for_the_turns_being_played_only_so_long(data, tmp_path, monkeypatch, caplog):
    """Battery 46, S5: against a server that never answers, the first Ctrl-C waited for each request's timeout
    times its retries (10 minutes here). It waits STOP_GRACE_SECONDS, then stops without those turns."""
    import ihbench.convbench.run as convbench_run
    from openai_test_server import SilentServer

    monkeypatch.setattr(convbench_run, "STOP_GRACE_SECONDS", 1.0)
    # a shell without job control (CI's) starts this process with SIGINT ignored: its default, for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with SilentServer() as server:
            def ctrl_c_once_asked():
                deadline = time.time() + 60
                while time.time() < deadline and server.connections < 1:
                    time.sleep(0.05)
                os.kill(os.getpid(), signal.SIGINT)  # a real signal: it wakes the main thread's wait

            hanging = spec(data, tmp_path / "run", server, rehydrate=True, concurrency=2)
            hanging.loader_options["timeout"] = 600
            threading.Thread(target=ctrl_c_once_asked, daemon=True).start()
            started = time.time()
            with pytest.raises(KeyboardInterrupt), caplog.at_level("WARNING", logger="ihbench"):
                run_convbench(hanging, progress=False)
            waited = time.time() - started
    finally:
        signal.signal(signal.SIGINT, previous)
    assert waited < 120, waited  # not the 600 s timeout
    assert "for at most 1 s; no other turn starts" in caplog.text
    assert "the turns being played did not end within 1 s: stopping now (they are played again by the next run)" \
        in caplog.text


@pytest.mark.parametrize("changed", ["changed", "the same", "moved"])
def test_a_benchmark_reimported_while_the_run_plays_it_is_said_at_the_end(changed, data, tmp_path, caplog):
    """Battery 31 A7 / battery 33 C5: `ihbench convbench-import` replaced the config while a run played it, and
    the run ended without a word (judge and report then refused it as changed). The same turns written again
    are not a change; a dataset moved away is said as such (battery 34 nit)."""
    folder = tmp_path / "repo" / "benchmarks" / "bike_bench"
    if changed == "changed":
        (folder / "data" / "knowledge_base.txt").write_text("Another shop now.", encoding="utf-8")
    replay, imported = golden_replay(), []

    def respond(body):
        if not imported:  # the first request: the re-import (or the move) lands while the run plays
            imported.append(data.rename(tmp_path / "elsewhere") if changed == "moved"
                            else import_convbench(folder, data, progress=False))
        return replay(body)

    with OpenAITestServer(respond=respond) as server, caplog.at_level("WARNING", logger="ihbench"):
        summary = run_convbench(spec(data, tmp_path / "run", server), progress=False)
    assert summary.errors == 0 and imported
    said = [r.getMessage() for r in caplog.records if "run played it" in r.getMessage()]
    expected = {"changed": "was replaced while this run played it", "moved": "is no longer where this run found it"}
    assert len(said) == (changed in expected) and all(expected[changed] in line for line in said), said
