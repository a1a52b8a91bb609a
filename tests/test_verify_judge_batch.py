"""`ihbench verify --judge-model M --judge-batch DIR`: the judge's questions asked through OpenAI
Batch API files, in rounds, give what live requests give. The batch answers here are the scripted
judge's (tests/content_judge_script.py) written in the Batch API's output format: the stand-in for
a batch OpenAI (or `vllm run-batch`) would have answered."""
import json
import subprocess
import sys

from conftest import FIXTURES
from content_judge_script import OVERSTRICT, UNGROUNDED, scripted
from openai_test_server import OpenAITestServer

from ihbench.llm.batch import REQUESTS, custom_id


def _verify(path, cache, *extra):
    return subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", str(path), "--no-audio", "--judge-model",
                           "checker", "--cache", str(cache), "--quiet", *extra], capture_output=True, text=True)


def _source(subset, tmp_path, mutate):
    path = tmp_path / subset[0].name
    data = json.loads(subset[0].read_text())
    mutate(data)
    path.write_text(json.dumps(data, indent=2))
    return path


def _points(data):
    return [i for i, t in enumerate(data["turns"]) if "interruption" in t]


def _plant(data):
    first, second = _points(data)[:2]
    data["turns"][first]["interruption"]["rq_rubrics"][1] += f" Mentions the {UNGROUNDED} rule."
    data["turns"][second]["interruption"]["rq_rubrics"][0] += f" Uses the word {OVERSTRICT}."


def _answer(requests_file, out, status=lambda body: 200):
    """The scripted judge's answers to every request of a batch input file, as a Batch API output file."""
    lines = []
    for number, line in enumerate(requests_file.read_text().splitlines()):
        request = json.loads(line)
        assert (request["method"], request["url"]) == ("POST", "/v1/chat/completions")
        body = request["body"]
        assert request["custom_id"] == custom_id(body) and body["model"] == "checker"
        assert body["response_format"]["type"] == "json_schema"
        code = status(body)
        response = {"status_code": code, "request_id": f"req_{number}", "body": {
            "id": f"chatcmpl-{number}", "object": "chat.completion", "model": "checker",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": scripted(body).content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}} if code == 200 else
            {"error": {"message": "server overloaded"}}}
        lines.append(json.dumps({"id": f"batch_req_{number}", "custom_id": request["custom_id"], "response": response,
                                 "error": None}))
    out.write_text("\n".join(lines) + "\n")


def _findings(stderr):
    return sorted(line for line in stderr.splitlines() if ": reference_fails:" in line or ": blind_reply_fails:" in line)


def test_batch_rounds_give_what_live_requests_give(subset, tmp_path):
    path = _source(subset, tmp_path, _plant)
    with OpenAITestServer(respond=scripted) as server:
        live = subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", str(path), "--no-audio", "--judge-model",
                               "checker", "--judge-base-url", server.base_url, "--cache", str(tmp_path / "live.sqlite"),
                               "--quiet"], capture_output=True, text=True)
    assert live.returncode == 1 and len(_findings(live.stderr)) == 2, live.stderr

    folder = tmp_path / "batch"
    waiting, rounds = [], 0
    while True:
        result = _verify(path, tmp_path / "batch.sqlite", "--judge-batch", str(folder))
        rounds += 1
        if not (folder / REQUESTS).exists():
            break
        assert result.returncode == 1 and "not checked (" not in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        count = len((folder / REQUESTS).read_text().splitlines())
        assert f"{count} question(s) wait for answers in {folder / REQUESTS}" in result.stdout
        waiting.append(count)
        _answer(folder / REQUESTS, folder / f"answers-{rounds}.jsonl")
        assert rounds < 5
    # the first round asks every question that depends on nothing; the criteria, which need the
    # blind reply, wait for the second
    points = len(_points(json.loads(path.read_text())))
    assert len(waiting) == 2 and waiting[1] == points, waiting
    assert result.returncode == 1 and _findings(result.stderr) == _findings(live.stderr), result.stderr
    assert "waiting for batch answers" not in result.stdout and "0 not checked" in result.stdout


def test_a_request_the_batch_failed_is_asked_again(subset, tmp_path):
    path = _source(subset, tmp_path, lambda data: None)
    folder = tmp_path / "batch"
    assert _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder)).returncode == 1
    failed = []

    def status(body):
        if not failed and "blind" in json.dumps(body).lower():
            failed.append(custom_id(body))
            return 500
        return 200
    _answer(folder / REQUESTS, folder / "answers.jsonl", status)
    result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder))
    assert result.returncode == 1 and "not checked (" not in result.stderr, result.stderr
    assert "(1 failed in an earlier batch: asked again) wait for answers" in result.stdout
    assert failed[0] in (folder / REQUESTS).read_text()  # asked again, as a live call is retried
    _answer(folder / REQUESTS, folder / "answers-2.jsonl")
    for _ in range(3):  # the failed blind reply's criteria wait for it: one round more
        result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder))
        if not (folder / REQUESTS).exists():
            break
        _answer(folder / REQUESTS, folder / f"answers-{_ + 3}.jsonl")
    assert result.returncode == 0 and "0 finding(s), 0 not checked" in result.stdout, result.stdout + result.stderr
    # the failure stays in its file; the later answer replaces it whatever the files' order
    (folder / "answers.jsonl").rename(folder / "zz-answers.jsonl")
    assert _verify(path, tmp_path / "other.sqlite", "--judge-batch", str(folder)).returncode == 0


def test_a_damaged_answers_file_and_a_live_option_are_refused_in_one_line(subset, tmp_path):
    path = _source(subset, tmp_path, lambda data: None)
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "answers.jsonl").write_text(json.dumps({"custom_id": "x", "response": {"status_code": 200, "body": {}}})
                                          + "\n")
    result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"{folder / 'answers.jsonl'} line 1: response.body is not a chat completion" in result.stderr
    result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(tmp_path / "b2"), "--judge-base-url",
                     "http://127.0.0.1:9/v1")
    assert result.returncode == 2 and "--judge-base-url is an option of a live judge" in result.stderr
    assert not (tmp_path / "b2").exists()


def _batch_answers(requests_file, out, respond):
    """Answers of a scripted judge (`respond(body) -> Reply`) to a batch input file, as its output."""
    lines = []
    for number, line in enumerate(requests_file.read_text().splitlines()):
        request = json.loads(line)
        body = {"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": respond(request["body"]).content}}]}
        lines.append(json.dumps({"custom_id": request["custom_id"], "error": None,
                                 "response": {"status_code": 200, "request_id": str(number), "body": body}}))
    out.write_text("\n".join(lines) + "\n")


def test_judge_through_a_batch_writes_no_record_until_answered_and_then_what_a_live_judge_writes(tmp_path, capsys):
    from judging import ScriptedJudge
    from official_layout import write_official_layout
    from test_battery_round3 import _answered

    from ihbench.cli import main

    official = write_official_layout(tmp_path / "official")
    live, batch = _answered(official, tmp_path / "live"), _answered(official, tmp_path / "batch")
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main(["judge", str(live), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                     str(tmp_path / "live.sqlite"), "--quiet"]) == 0
    folder = tmp_path / "questions"
    capsys.readouterr()
    assert main(["judge", str(batch), "--judge-model", "j", "--judge-batch", str(folder), "--cache",
                 str(tmp_path / "batch.sqlite"), "--quiet"]) == 1
    out = capsys.readouterr().out
    asked = len((folder / REQUESTS).read_text().splitlines())
    assert "0 judgment(s) written (0 judged, 0 judge_error)" in out and f"{asked} question(s) wait" in out
    assert not (batch / "judgments.jsonl").exists()  # a question waiting is not a judge error
    _batch_answers(folder / REQUESTS, folder / "out.jsonl", ScriptedJudge(faults=False))
    assert main(["judge", str(batch), "--judge-model", "j", "--judge-batch", str(folder), "--cache",
                 str(tmp_path / "batch.sqlite"), "--quiet"]) == 0
    assert f"{asked} judgment(s) written ({asked} judged, 0 judge_error)" in capsys.readouterr().out
    assert not (folder / REQUESTS).exists()

    def verdicts(run):
        return sorted((r["id"], r["axis"], r["verdict"], r.get("criteria")) for r in
                      map(json.loads, (run / "judgments.jsonl").read_text().splitlines()))
    assert verdicts(batch) == verdicts(live)
    assert main(["judge", str(batch), "--judge-model", "j", "--judge-batch", str(folder), "--judge-base-url",
                 "http://127.0.0.1:9/v1", "--quiet"]) == 2


def test_the_shipped_dev_set_passes_the_judge_run_its_answers_record(tmp_path):
    """Issue 28: the dev set passes `ihbench verify --judge-model`. The judge run of 2026-12-04
    (assistant instances given exactly the batch requests; no endpoint was reachable) is kept as
    its Batch API answers; the shipped sources must still pass it. A question it has no answer for
    means a source or a prompt changed since: judge the changed questions again (`--judge-batch`,
    the README's rounds), settle what is found, and add the new answers to the fixture."""
    import shutil

    folder = tmp_path / "batch"
    folder.mkdir()
    shutil.copy(FIXTURES / "devset_judge_run.jsonl", folder / "answers.jsonl")
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", "--no-audio", "--judge-model",
                             "assistant-judge", "--judge-batch", str(folder), "--cache", str(tmp_path / "c.sqlite"),
                             "--quiet"], capture_output=True, text=True)
    assert "wait for answers" not in result.stdout, (
        "the dev set (or a prompt) changed since its judge run: " + result.stdout.splitlines()[-1])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "260 point(s), 0 finding(s), 0 not checked" in result.stdout
    assert "489 agent turn(s)" in result.stdout and result.stdout.count("0 finding(s), 0 not checked") == 2


def test_edited_requests_other_models_answers_and_conflicting_answers_are_refused(subset, tmp_path):
    """Battery 6, findings 1 and 8: an answer is scored only as the answer to the question written."""
    path = _source(subset, tmp_path, lambda data: None)
    folder = tmp_path / "batch"
    assert _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder)).returncode == 1
    requests = folder / REQUESTS
    original = requests.read_text()
    edited = [json.loads(line) for line in original.splitlines()]
    edited[0]["body"]["model"] = "cheap-model"
    requests.write_text("".join(json.dumps(r) + "\n" for r in edited))
    result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder))
    assert result.returncode == 2 and f"{requests} line 1: changed since it was written" in result.stderr

    requests.write_text(original)
    _answer(requests, folder / "answers.jsonl")
    answers = [json.loads(line) for line in (folder / "answers.jsonl").read_text().splitlines()]
    answers[0]["response"]["body"]["model"] = "cheap-model"
    (folder / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder))
    assert result.returncode == 2 and "answered by 'cheap-model', not the judge asked for, 'checker'" in result.stderr

    answers[0]["response"]["body"]["model"] = "checker-2026-01-01"  # a snapshot of the model asked for
    (folder / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    other = dict(answers[0], response={**answers[0]["response"], "body": {**answers[0]["response"]["body"], "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "{}"}}]}})
    (folder / "zz-again.jsonl").write_text(json.dumps(other) + "\n")
    result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder))
    assert result.returncode == 2 and "answer " + answers[0]["custom_id"] + " differently" in result.stderr
    (folder / "zz-again.jsonl").unlink()
    assert "Traceback" not in _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder)).stderr


def test_an_answers_file_that_answers_none_of_the_questions_is_said_to(subset, tmp_path):
    """Battery 16 (try 21): with an answers file whose custom_ids match no question (another batch's output),
    the command asked for "the output file" as if none were there."""
    path = _source(subset, tmp_path, lambda data: None)
    folder = tmp_path / "batch"
    assert _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder)).returncode == 1
    _answer(folder / REQUESTS, folder / "answers.jsonl")
    answers = [json.loads(line) for line in (folder / "answers.jsonl").read_text().splitlines()]
    (folder / "answers.jsonl").write_text("".join(json.dumps({**a, "custom_id": "ihb-" + "0" * 24}) + "\n"
                                                  for a in answers[:1]))
    result = _verify(path, tmp_path / "c.sqlite", "--judge-batch", str(folder))
    assert result.returncode == 1
    assert f"and none of the 1 answer(s) in {folder} (answers.jsonl) answers one of them" in result.stdout, \
        result.stdout + result.stderr


def test_a_failed_question_asked_twice_is_counted_once(tmp_path):
    """Battery 45, R10: "16 question(s) (17 failed in an earlier batch: asked again)": the waiting questions
    were counted once each, the failed ones once per time a command asked them (two judgments sharing one
    question). Both now count questions."""
    import asyncio

    import pytest

    from ihbench.llm.batch import BatchLLM, BatchPending

    folder = tmp_path / "batch"
    folder.mkdir()
    messages = [{"role": "user", "content": "Is this right?"}]
    body = BatchLLM("judge", folder).body(messages, "verdict", {"type": "object"})
    failed = {"custom_id": custom_id(body), "response": {"status_code": 500, "body": {"error": "overloaded"}}}
    (folder / "answers.jsonl").write_text(json.dumps(failed) + "\n")
    batch = BatchLLM("judge", folder)
    for _ in range(2):
        with pytest.raises(BatchPending):
            asyncio.run(batch.complete(messages, "verdict", {"type": "object"}))
    assert batch.waiting_line().startswith("1 question(s) (1 failed in an earlier batch: asked again) wait")
    asyncio.run(batch.close())
