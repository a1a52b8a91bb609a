"""LLM judges against a local OpenAI-compatible test double that misbehaves on purpose."""
import asyncio
import json
import subprocess
import sys

import pytest
from ihbench.loaders.retry import with_retries
from judging import FixedJudge, ScriptedJudge
from openai_test_server import OpenAITestServer, Reply

from ihbench.dataset.io import read_records
from ihbench.judge import PROMPT_VERSION, InvalidJudgment, judge_run, parse_rq, parse_tf, prompt_hash, tf_order
from ihbench.llm import InvalidAnswer, LLMCache, OpenAICompatibleLLM, TransportError, extract_json
from ihbench.rundir import read_judgments
from ihbench.runner import RunSpec, run

# The hash of the judge prompts at each version. Editing a prompt changes the hash: bump
# PROMPT_VERSION and add the new pair here, so scores from two prompts never mix silently.
PINNED_PROMPT_HASHES = {"2026-11-22.1": "518ecfe69066"}


def test_prompt_changes_need_a_version_bump():
    assert PINNED_PROMPT_HASHES.get(PROMPT_VERSION) == prompt_hash()


# --- parsing ---------------------------------------------------------------------------------

def test_tolerant_parsing_of_fenced_and_chatty_json():
    assert extract_json('Sure!\n```json\n{"winner": "B", "x": 1}\n```\nHope this helps') == {"winner": "B", "x": 1}
    assert extract_json('My verdict is {"winner": "A"} and that is final.') == {"winner": "A"}
    with pytest.raises(InvalidAnswer):
        extract_json("I think A is better")


@pytest.mark.parametrize("deficiency", ["More detail.", "It is longer", "Response A is less detailed and shorter.",
                                        "lacks detail"])
def test_length_or_detail_is_not_a_deficiency(deficiency):
    with pytest.raises(InvalidJudgment, match="length or detail|concrete deficiency"):
        parse_tf(json.dumps({"winner": "A", "loser_deficiency": deficiency, "reasoning": "x"}))


@pytest.mark.parametrize("deficiency", ["ignores the correction", "skips verification", "Repeats the fee.", "rude",
                                        "less detailed and skips verification", "no greeting", "asks for no PIN"])
def test_the_prompt_s_own_short_deficiencies_are_accepted(deficiency):
    """Battery 61, H4 (P2): "ignores the correction", an example the TF prompt gives, was refused as "only complains
    about length or detail" (three content words were asked): every TF item a judge error."""
    assert parse_tf(json.dumps({"winner": "A", "loser_deficiency": deficiency, "reasoning": "x"}))[
        "loser_deficiency"] == deficiency


@pytest.mark.parametrize("deficiency", ["worse", "It is wrong", "the other one", "n/a", "bad overall", "",
                                        "no deficiency", "no issues", "none really", "equally good", "both fine"])
def test_a_deficiency_that_names_nothing_is_said_so(deficiency):
    with pytest.raises(InvalidJudgment, match="concrete deficiency"):
        parse_tf(json.dumps({"winner": "A", "loser_deficiency": deficiency, "reasoning": "x"}))


def test_a_concrete_deficiency_is_accepted():
    verdict = parse_tf(json.dumps({"winner": "b", "loser_deficiency": "It re-reads the fee explanation the user "
                                   "already heard instead of asking for the parcel number", "reasoning": "r"}))
    assert verdict["winner"] == "B"


def test_rq_needs_one_verdict_per_criterion():
    good = {"criteria": [{"index": 1, "met": True, "reason": "r"}, {"index": 2, "met": "false", "reason": "r"}]}
    assert parse_rq(json.dumps(good), 2) == {"criteria": [True, False], "reasons": ["r", "r"], "passed": False}
    with pytest.raises(InvalidJudgment, match="expected exactly 3"):
        parse_rq(json.dumps(good), 3)
    # a criterion numbered in a digit int() cannot read ('²' is a digit to str.isdigit) is a judgment to
    # ask again, not a ValueError
    sup = {"criteria": [{"index": "\u00b2", "met": True, "reason": "r"}, {"index": "1", "met": True, "reason": "r"}]}
    with pytest.raises(InvalidJudgment, match="'index' must be a criterion number"):
        parse_rq(json.dumps(sup), 2)


def test_retries_honour_retry_after_and_stop():
    delays, calls = [], []

    async def sleep(seconds):
        delays.append(seconds)

    async def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise TransportError("429", retryable=True, retry_after=7.0)
        if len(calls) == 2:
            raise TransportError("500", retryable=True)
        return "ok"

    assert asyncio.run(with_retries(flaky, sleep=sleep)) == ("ok", 3)
    assert delays[0] == 7.0 and 0 < delays[1] <= 1.0

    async def refused():
        raise TransportError("400", retryable=False)

    with pytest.raises(TransportError):
        asyncio.run(with_retries(refused, sleep=sleep))


def test_order_randomization_is_balanced_and_reproducible():
    orders = [tf_order(0, f"conv-{i // 3}/{i % 7}", i % 3) for i in range(3000)]
    assert 0.47 < sum(orders) / len(orders) < 0.53
    assert orders == [tf_order(0, f"conv-{i // 3}/{i % 7}", i % 3) for i in range(3000)]


# --- a misbehaving judge server ----------------------------------------------------------------

def test_every_record_ends_judged_or_judge_error_and_counts_match(judged_run):
    everything = read_records(judged_run["root"] / "run" / "judgments.jsonl")
    records = read_judgments(judged_run["root"] / "run" / "judgments.jsonl")  # the last record per key
    responses = read_records(judged_run["root"] / "run" / "responses.jsonl")
    keys = [(r.id, r.epoch, r.axis) for r in records]
    assert len(keys) == len(set(keys)) == 2 * len(responses) == judged_run["first"].written
    # the second pass appended one retry per judge error and nothing else
    assert len(everything) == len(records) + judged_run["first"].judge_errors
    errors = [r for r in records if r.outcome == "judge_error"]
    assert {r.outcome for r in records} <= {"judged", "judge_error"}
    assert judged_run["script"].always_broken
    assert len(errors) == judged_run["first"].judge_errors == judged_run["broken_after_first"] // 2
    assert all("invalid after a re-ask" in r.error for r in errors)
    judged = [r for r in records if r.outcome == "judged"]
    assert all(r.judge_model == "judge-x" and r.prompt_hash == prompt_hash() for r in judged)
    assert {r.verdict for r in judged if r.axis == "tf"} == {"model"}  # mapped back through the order
    assert all(r.verdict == "fail" and r.criteria[0] is False for r in judged if r.axis == "rq")


def test_faults_were_really_injected_and_survived(judged_run):
    attempts = judged_run["script"].attempts.values()
    assert sum(a > 1 for a in attempts) > 0.15 * len(attempts)


def test_judging_again_retries_only_the_judge_errors(judged_run):
    first, again, other = judged_run["requests"]
    errors = judged_run["first"].judge_errors
    repeat = judged_run["again"]
    assert errors > 0 and repeat.written == repeat.retried == errors and repeat.skipped == repeat.planned - errors
    # the always-broken answers fail again: a question and a re-ask each, nothing else is asked
    assert again - first == repeat.calls == 2 * errors and repeat.judge_errors == errors
    # a fresh judgments file is served from the cache, except the judge errors, which are retried
    assert other - again == judged_run["other"].calls
    assert judged_run["other"].cached == judged_run["other"].judged


def test_order_is_recorded_and_roughly_balanced_on_a_real_run(judged_run):
    records = [r for r in read_records(judged_run["root"] / "run" / "judgments.jsonl")
               if r["axis"] == "tf" and r["outcome"] == "judged"]
    first = sum(r["order"] == "model_first" for r in records)
    assert 0 < first < len(records)


@pytest.mark.parametrize("model", ["refuses", "answers nothing"])
def test_an_error_or_an_empty_answer_is_not_judged(model, built, tmp_path):
    """A refused request, or a server's reply without text, is no answer (issue 23: retried by the
    next run, never scored). An empty answer recorded as one (by an older version, or edited by
    hand) is refused as a damaged line and never judged as a loss (battery 5, finding 1)."""
    server = OpenAITestServer(fail_when=lambda body: 400) if model == "refuses" else \
        OpenAITestServer(respond=lambda body: Reply(content=""))
    with server:
        run(RunSpec(loader="openai", model_path="m", data=str(built), out=tmp_path / "run", epochs=1, limit=2,
                    loader_options={"base_url": server.base_url, "max_retries": 0}), progress=False)

    def judge():
        with OpenAITestServer(respond=ScriptedJudge()) as judge_server:
            async def go():
                backend = OpenAICompatibleLLM("judge-x", base_url=judge_server.base_url)
                try:
                    return await judge_run(tmp_path / "run", backend, cache=LLMCache(tmp_path / "c.sqlite"),
                                           progress=False)
                finally:
                    await backend.close()
            summary = asyncio.run(go())
            assert judge_server.requests == []
        return summary, read_records(tmp_path / "run" / "judgments.jsonl")

    summary, records = judge()
    assert (summary.unanswered, summary.written, records) == (2, 0, [])
    if model == "answers nothing":
        responses = tmp_path / "run" / "responses.jsonl"
        empty = [{**json.loads(line), "response": "", "error": None} for line in responses.read_text().splitlines()]
        responses.write_text("".join(json.dumps(record) + "\n" for record in empty))
        summary, records = judge()
        assert summary.calls == 0 and summary.written == 0 and records == []


def test_judge_cli(judged_run, tmp_path):
    """A dead endpoint: the earlier judge errors are retried, fail again, and the exit status says
    so; once the endpoint answers, a rerun fixes exactly those and exits 0."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(judged_run["root"] / "run", run_dir)
    errors = judged_run["first"].judge_errors
    command = [sys.executable, "-m", "ihbench.cli", "judge", str(run_dir), "--judge-model", "judge-x",
               "--cache", str(judged_run["root"] / "cache.sqlite"), "--quiet", "--timeout", "2"]
    result = subprocess.run(command + ["--judge-base-url", "http://127.0.0.1:9/v1"], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert f"{errors} judgment(s) written (0 judged, {errors} judge_error)" in result.stdout
    assert f"{errors} earlier judge_error(s) retried" in result.stdout and "tries only those again" in result.stderr
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as healthy:
        fixed = subprocess.run(command + ["--judge-base-url", healthy.base_url], capture_output=True, text=True)
        assert fixed.returncode == 0, fixed.stderr
        assert f"{errors} judgment(s) written ({errors} judged, 0 judge_error)" in fixed.stdout
        assert len(healthy.requests) == errors  # only the failed ones were asked again
    latest = read_judgments(run_dir / "judgments.jsonl")
    assert {r.outcome for r in latest} == {"judged"} and len(latest) == judged_run["first"].written
    other = subprocess.run([sys.executable, "-m", "ihbench.cli", "judge", str(judged_run["root"] / "run"),
                            "--judge-model", "judge-y", "--judge-base-url", "http://127.0.0.1:9/v1", "--quiet"],
                           capture_output=True, text=True)
    assert other.returncode == 2 and "judge-x" in other.stderr and "--out" in other.stderr


def test_a_local_transformers_judge_runs_and_its_garbage_is_judge_error(tmp_path):
    """A tiny random-weight text model stands in for a local judge: its output is not JSON, so
    every judgment must end as judge_error after one re-ask, with the calls counted."""
    from ihbench.loaders.tiny import make_tiny_model
    from official_layout import write_official_layout

    from ihbench.llm import TransformersLLM

    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as model_server:
        run(RunSpec(loader="openai", model_path="m", data=str(data), out=tmp_path / "run", epochs=1,
                    loader_options={"base_url": model_server.base_url}), progress=False)
    backend = TransformersLLM(str(make_tiny_model("qwen2-text", tmp_path / "judge")), max_new_tokens=8)
    summary = asyncio.run(judge_run(tmp_path / "run", backend, cache=LLMCache(tmp_path / "c.sqlite"),
                                    progress=False))
    records = read_records(tmp_path / "run" / "judgments.jsonl")
    assert summary.judge_errors == len(records) == 6 and summary.calls == 12
    assert all(r["outcome"] == "judge_error" and r["judge_model"].endswith("judge") for r in records)


def test_a_local_judge_whose_context_cannot_hold_the_question_fails_it_rather_than_reading_noise(tmp_path):
    """Battery 46, S4: past its context a rotary model still generates, and that noise was parsed as
    an answer. The question now fails (a judge_error, never a verdict) and says why."""
    import json

    from ihbench.loaders.tiny import make_tiny_model
    from official_layout import write_official_layout

    from ihbench.llm import PromptTooLongError, TransformersLLM

    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as model_server:
        run(RunSpec(loader="openai", model_path="m", data=str(data), out=tmp_path / "run", epochs=1,
                    loader_options={"base_url": model_server.base_url}), progress=False)
    folder = make_tiny_model("qwen2-text", tmp_path / "judge")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 64}))  # a greeting fits
    backend = TransformersLLM(str(folder), max_new_tokens=8)
    with pytest.raises(PromptTooLongError, match=r"the prompt is \d+ tokens and 8 new tokens do not fit in the "
                                                 r"context of .*judge \(64 tokens\)"):
        asyncio.run(backend.complete([{"role": "user", "content": "word " * 100}], "s", {}))
    summary = asyncio.run(judge_run(tmp_path / "run", backend, cache=LLMCache(tmp_path / "c.sqlite"),
                                    progress=False))
    records = read_records(tmp_path / "run" / "judgments.jsonl")
    assert summary.judge_errors == len(records) == 6 and summary.calls == 6
    assert all(r["outcome"] == "judge_error" and "do not fit in the context" in r["error"] for r in records)


def test_the_cache_key_tells_two_servers_with_the_same_model_name_apart():
    from ihbench.llm import cache_key

    messages = [{"role": "user", "content": "x"}]
    here, there = (OpenAICompatibleLLM("default", base_url=url) for url in ("http://a:8000/v1", "http://b:8000/v1"))
    strict = OpenAICompatibleLLM("default", base_url="http://a:8000/v1", structured=False)
    keys = {cache_key(b.describe(), prompt_hash(), "tf", messages, 0) for b in (here, there, strict)}
    assert len(keys) == 3
    again = OpenAICompatibleLLM("default", base_url="http://a:8000/v1")
    assert cache_key(here.describe(), prompt_hash(), "tf", messages, 0) == \
        cache_key(again.describe(), prompt_hash(), "tf", messages, 0)


def test_a_bug_stops_judging_while_item_failures_are_judge_errors(tmp_path):
    """A backend with a bug (KeyError, AttributeError) stops `judge_run` with that exception and
    writes no verdict for it; a transport failure or an answer that stays invalid is a judge_error."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as model_server:
        run(RunSpec(loader="openai", model_path="m", data=str(data), out=tmp_path / "run", epochs=1,
                    loader_options={"base_url": model_server.base_url}), progress=False)

    def judge(backend, out):
        return asyncio.run(judge_run(tmp_path / "run", backend, cache=LLMCache(tmp_path / "c.sqlite"),
                                     out=tmp_path / "run" / out, progress=False))

    for n, bug in enumerate([KeyError("choices"), AttributeError("'NoneType' object has no attribute 'content'")]):
        with pytest.raises(type(bug)) as caught:
            judge(FixedJudge(error=bug), f"judgments-bug-{n}.jsonl")
        assert caught.value is bug
        assert read_records(tmp_path / "run" / f"judgments-bug-{n}.jsonl") == []

    refused = FixedJudge(error=TransportError("HTTP 400: bad request", retryable=False))
    summary = judge(refused, "judgments-refused.jsonl")
    records = read_records(tmp_path / "run" / "judgments-refused.jsonl")
    assert summary.judge_errors == len(records) == 6 and summary.calls == refused.calls == 6
    assert all(r["outcome"] == "judge_error" and r["error"] == "TransportError: HTTP 400: bad request"
               and r["calls"] == 1 for r in records)

    garbage = FixedJudge(text="I prefer the first one.")
    summary = judge(garbage, "judgments-garbage.jsonl")
    records = read_records(tmp_path / "run" / "judgments-garbage.jsonl")
    assert summary.judge_errors == len(records) == 6 and summary.calls == garbage.calls == 12
    assert all(r["outcome"] == "judge_error" and r["calls"] is None and r["error"] ==
               "InvalidJudgment: invalid after a re-ask: no JSON object found in the answer" for r in records)
