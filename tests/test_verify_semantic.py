"""`ihbench verify --judge-model`: the verifier's semantic questions answered by a scripted local
OpenAI-compatible server (a stand-in for an LLM), including malformed answers."""
import json
import random
import re
import subprocess
import sys

from content_judge_script import content_answer
from openai_test_server import OpenAITestServer, Reply

from ihbench.judge.review import REVIEW_SYSTEM, review_prompt_hash

# Editing the review prompt changes its hash: bump REVIEW_PROMPT_VERSION and pin the new pair here.
PINNED_REVIEW_HASHES = {"2026-11-23.1": "b8b2fb8d98d7"}


def _one_source(subset):
    return str(subset[0])


def _answer(problems=(), reason="fine"):
    return json.dumps({q: {"problem": q in problems, "reason": reason if q not in problems else f"{q} issue"}
                       for q in ("leakage", "user_knowledge", "type", "grounding")})


def _review(answer):
    """The server's answer: `answer(body)` for the review prompt, clean answers to the content checks'."""
    return lambda body: Reply(content=content_answer(body)) if content_answer(body) else answer(body)


def _verify(source, url, cache):
    return subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", source, "--no-audio", "--judge-model",
                           "reviewer", "--judge-base-url", url, "--cache", str(cache), "--quiet", "--timeout", "5"],
                          capture_output=True, text=True)


def test_clean_answers_pass_and_a_finding_fails_naming_the_turn(subset, tmp_path):
    source = _one_source(subset)
    with OpenAITestServer(respond=_review(lambda body: Reply(content=_answer()))) as clean:
        ok = _verify(source, clean.base_url, tmp_path / "a.sqlite")
        reviews = [r for r in clean.requests if r["messages"][0]["content"] == REVIEW_SYSTEM]
        assert reviews and "NOT heard (cut off):" in reviews[0]["messages"][1]["content"]
    assert ok.returncode == 0, ok.stderr
    points = int(re.search(r"(\d+) point\(s\), 0 finding", ok.stdout).group(1))
    assert points > 0

    with OpenAITestServer(respond=_review(lambda body: Reply(content=_answer(("leakage",))))) as leaky:
        bad = _verify(source, leaky.base_url, tmp_path / "b.sqlite")
    assert bad.returncode == 1 and f"{points} point(s), {points} finding(s)" in bad.stdout
    assert len(re.findall(r": turn \d+: leakage: leakage issue", bad.stderr)) == points
    assert bad.stderr.startswith(f"{source}: turn ")  # the file, as every finding names it


def test_malformed_answers_are_reasked_then_reported_as_not_checked(subset, tmp_path):
    source = _one_source(subset)
    attempts = {}

    def flaky(body):
        key = body["messages"][1]["content"]
        attempts[key] = attempts.get(key, 0) + 1
        return Reply(content="```json\n" + _answer() + "\n```" if attempts[key] > 1 else "Sure! Looks good to me.")
    with OpenAITestServer(respond=_review(flaky)) as server:
        fixed = _verify(source, server.base_url, tmp_path / "c.sqlite")
    assert fixed.returncode == 0, fixed.stderr  # each point: one malformed answer, one re-ask, then fine
    assert set(attempts.values()) == {2}
    with OpenAITestServer(respond=_review(lambda body: Reply(content="no"))) as hopeless:
        failed = _verify(source, hopeless.base_url, tmp_path / "d.sqlite")
    assert failed.returncode == 1 and "not checked (InvalidJudgment: invalid after a re-ask" in failed.stderr


def test_the_review_prompt_is_pinned():
    from ihbench.judge.review import REVIEW_PROMPT_VERSION

    assert PINNED_REVIEW_HASHES[REVIEW_PROMPT_VERSION] == review_prompt_hash()


def test_a_bug_in_the_reviewer_stops_the_review_while_a_refusal_is_not_checked(subset, tmp_path):
    import asyncio
    from pathlib import Path

    import pytest
    from judging import FixedJudge

    from ihbench.dataset.sources import load_conversation
    from ihbench.judge.review import review_conversations
    from ihbench.llm import LLMCache, TransportError

    conversations = [load_conversation(Path(_one_source(subset)))]

    def review(backend):
        return asyncio.run(review_conversations(conversations, backend, cache=LLMCache(tmp_path / "c.sqlite"),
                                                progress=False))

    with pytest.raises(KeyError):
        review(FixedJudge(error=KeyError("choices"), model="reviewer"))
    reviews = review(FixedJudge(error=TransportError("HTTP 403: forbidden", retryable=False), model="reviewer"))
    assert reviews and all(r.answer is None and r.error == "TransportError: HTTP 403: forbidden" for r in reviews)


def test_turns_not_checked_for_one_same_error_are_listed_a_few_with_a_count(subset, tmp_path):
    """Battery 53, Z6: a judge server down with a 4000-character error page printed that page once per turn
    (over a thousand lines, 4 MB), --quiet or not."""
    import uuid

    source = _one_source(subset)
    page = "the gateway is down " * 200
    # battery 54, A14 and battery 55, B7: a request id, a node's name or a counter in each message made every error
    # another one, and the flood came back (a short page: those within the characters recorded)
    with OpenAITestServer(respond=lambda body: Reply(status=400, content=f"{page[:400]}(request id: req_{uuid.uuid4().hex}; "
                                                                     f"node {random.choice('abcdefgh')}, "
                                                                     f"attempt {random.randrange(999)})")) \
            as down:
        failed = _verify(source, down.base_url, tmp_path / "e.sqlite")
    lines = failed.stderr.strip().splitlines()  # the semantic review's and the content checks' (4 each at most)
    assert failed.returncode == 1 and len(lines) <= 8 and all(len(line) < 600 for line in lines), failed.stderr[:3000]
    assert re.search(r"^\.\.\. and \d+ more turn\(s\) not checked for the same kind of error \(.*HTTP 400\)$",
                     failed.stderr, re.M), lines
