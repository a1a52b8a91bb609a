"""Battery 9 (issue 23), finding 13: a damaged value in the LLM answer cache (not JSON, or JSON of
the wrong shape) ended judge and barge-in in a traceback. Such an answer is a miss: dropped, asked
again, and said in one warning per command naming the file and the count."""
import json
import shutil
import sqlite3

import pytest
from judging import ScriptedJudge
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from ihbench.rundir import read_judgments


def _damage(path, value):
    db = sqlite3.connect(path)
    try:
        count = db.execute("UPDATE judgments SET value = ?", (value,)).rowcount
        db.commit()
    finally:
        db.close()
    return count


def _copy(source, target):
    """A copy of an SQLite file with what its write-ahead log still holds."""
    with sqlite3.connect(source) as a, sqlite3.connect(target) as b:
        a.backup(b)
    a.close()
    b.close()


def _warnings(err: str, command: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith(f"ihbench {command}: warning:")]


@pytest.fixture(scope="module")
def answered(built, tmp_path_factory):
    """An answered run (one epoch)."""
    root = tmp_path_factory.mktemp("battery9-cache")
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(built), "--out",
                     str(root / "run"), "--epochs", "1", "--base-url", server.base_url, "--quiet"]) == 0
    return root / "run"


def _judge(judge, run, cache, out, capsys):
    """`ihbench judge` into a new judgments file: (status, requests the judge received, stderr, records)."""
    capsys.readouterr()
    before = len(judge.requests)
    status = main(["judge", str(run), "--judge-model", "jm", "--judge-base-url", judge.base_url,
                   "--cache", str(cache), "--out", str(out), "--quiet"])
    return status, len(judge.requests) - before, capsys.readouterr().err, read_judgments(out)


@pytest.mark.parametrize("value", ["not json{", '{"winner": "Z"}', "[1, 2]", '{"winner": "a", "loser_deficiency": '
                                   '"It repeats the part of the sentence the user already heard", "reasoning": "r"}'],
                         ids=["not-json", "wrong-shape", "a-list", "tf-verdict-not-as-parsed"])
def test_a_judge_cache_with_unusable_values_is_asked_again_with_one_warning(answered, tmp_path, value, capsys):
    run = tmp_path / "run"
    shutil.copytree(answered, run)
    good, bad = tmp_path / "jc.sqlite", tmp_path / "jc_bad.sqlite"
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        status, _, err, first = _judge(judge, run, good, run / "judgments.jsonl", capsys)
        assert status == 0, err
        _copy(good, bad)
        entries = _damage(bad, value)
        assert entries == len(first) > 0

        status, requests, err, records = _judge(judge, run, bad, run / "judgments-2.jsonl", capsys)
        assert status == 0, err
        assert requests == entries  # every judgment asked again, none scored from the damaged values
        assert _warnings(err, "judge") == [
            f"ihbench judge: warning: {bad}: {entries} cached answer(s) could not be read (damaged or edited by "
            "hand); asked again"]
        assert len(records) == entries and {r.outcome for r in records} == {"judged"}
        assert not any(r.cached for r in records)
        # the verdicts are the fresh answers' own: the same as the first judging's
        assert {r.key: (r.verdict, r.criteria) for r in records} == {r.key: (r.verdict, r.criteria) for r in first}

        # the fresh answers replaced the damaged ones: the cache answers again, with no request and no warning
        status, requests, err, records = _judge(judge, run, bad, run / "judgments-3.jsonl", capsys)
        assert status == 0 and requests == 0 and _warnings(err, "judge") == []
        assert len(records) == entries and all(r.cached for r in records)


def test_a_good_cache_still_answers_without_a_request_and_cache_info_counts_unreadable_values(answered, tmp_path,
                                                                                                capsys):
    run = tmp_path / "run"
    shutil.copytree(answered, run)
    good = tmp_path / "jc.sqlite"
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        status, _, err, first = _judge(judge, run, good, run / "judgments.jsonl", capsys)
        assert status == 0, err
        status, requests, err, records = _judge(judge, run, good, run / "judgments-2.jsonl", capsys)
    assert status == 0 and requests == 0 and _warnings(err, "judge") == []
    assert len(records) == len(first) and all(r.cached and r.outcome == "judged" for r in records)

    assert main(["cache", "info", "--cache", str(good), "--quiet"]) == 0
    assert "unreadable" not in capsys.readouterr().out
    db = sqlite3.connect(good)
    db.execute("UPDATE judgments SET value = 'not json{' WHERE rowid IN (SELECT rowid FROM judgments LIMIT 2)")
    db.execute("UPDATE judgments SET value = 'NaN' WHERE rowid IN (SELECT rowid FROM judgments LIMIT 1 OFFSET 5)")
    db.commit()
    db.close()
    assert main(["cache", "info", "--cache", str(good), "--quiet"]) == 0
    assert (f"{good}: {len(first)} answer(s), 2 of them unreadable (damaged or edited by hand: asked again when met), "
            in capsys.readouterr().out)  # NaN is read (Python's JSON), though not SQLite's strict JSON


def test_a_damaged_simulator_answer_in_the_cache_is_asked_again_by_barge_in(built, tmp_path, capsys):
    from barge_in_script import scripts
    from test_barge_in import barge_in, rounds

    model_script, sim_script = scripts()
    cache = tmp_path / "shared.sqlite"
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, tmp_path / "first", "--cache", str(cache)) == 0
        sent = len(sim.requests)
        entries = _damage(cache, "[1,2")
        assert entries > 0
        capsys.readouterr()
        assert barge_in(model, sim, built, tmp_path / "again", "--cache", str(cache)) == 0
        err = capsys.readouterr().err
        assert len(sim.requests) > sent  # asked again
        assert _warnings(err, "barge-in") == [
            f"ihbench barge-in: warning: {cache}: {entries} cached answer(s) could not be read (damaged or edited by "
            "hand); asked again"]
    calls = [c for r in rounds(tmp_path / "again") for c in r["calls"]]
    assert calls and not any(c["cached"] for c in calls)
    assert json.loads((tmp_path / "again" / "run.json").read_text())


def test_a_damaged_agent_answer_of_another_shape_is_asked_again(tmp_path):
    """The usage-keeping entries (generate's and barge-in's agents): an answer with no usage, or
    usage that is no counts, is a miss too."""
    import asyncio

    from judging import FixedJudge

    from ihbench.llm import LLMCache, ask_structured, cache_key

    llm = FixedJudge(text='{"reply": "fine"}')
    cache = LLMCache(tmp_path / "c.sqlite")

    async def ask():
        return await ask_structured(llm, [{"role": "user", "content": "q"}], schema_name="s", schema={},
                                    parse=lambda text: json.loads(text)["reply"], prompt_hash="h", task="t",
                                    cache=cache, cache_usage=True)

    assert asyncio.run(ask()).cached is False and llm.calls == 1
    assert asyncio.run(ask()).cached is True and llm.calls == 1
    key = cache_key(llm.describe(), "h", "t", [{"role": "user", "content": "q"}], 0)
    for bad in ({"answer": "fine"}, {"answer": "fine", "usage": {"calls": "1"}}, {"answer": None, "usage": {}}, "fine"):
        cache.put(key, bad)
        answer = asyncio.run(ask())
        assert (answer.value, answer.cached) == ("fine", False)
    assert llm.calls == 5
    assert asyncio.run(ask()).cached is True and llm.calls == 5
