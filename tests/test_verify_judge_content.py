"""`ihbench verify --judge-model`'s content checks (issue 28) with scripted LLM answers: a criterion
the agent's own continuation fails, one a correct blind reply fails, an agent turn beyond the
knowledge base and two verdicts that disagree are each flagged by file, turn and field; a clean
point passes, a justified finding is silent, the blind writer never sees the criteria, an invalid
answer is asked again, and the prompt is pinned."""
import json
import re
import shutil
import subprocess
import sys

import pytest
from content_judge_script import (BLIND_REPLY, INCONSISTENT, INVENTED, OVERSTRICT, UNGROUNDED, criteria_answer, kind,
                                  scripted)
from openai_test_server import OpenAITestServer, Reply

from ihbench.judge.content_prompts import CONTENT_PROMPT_VERSION, content_prompt_hash

# Editing a content prompt changes its hash: bump CONTENT_PROMPT_VERSION and pin the new pair here.
PINNED_CONTENT_HASHES = {"2026-11-28.1": "e548c206bae1"}


def _source(subset, tmp_path, mutate=None):
    path = tmp_path / subset[0].name
    shutil.copy(subset[0], path)
    if mutate:
        data = json.loads(path.read_text())
        mutate(data)
        path.write_text(json.dumps(data, indent=2))
    return path


def _verify(path, url, cache):
    return subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", str(path), "--no-audio", "--judge-model",
                           "checker", "--judge-base-url", url, "--cache", str(cache), "--quiet", "--timeout", "5"],
                          capture_output=True, text=True)


def _points(data):
    return [i for i, t in enumerate(data["turns"]) if "interruption" in t]


def test_a_clean_point_passes_and_the_blind_writer_sees_only_the_models_context(subset, tmp_path):
    path = _source(subset, tmp_path)
    with OpenAITestServer(respond=scripted) as server:
        result = _verify(path, server.base_url, tmp_path / "c.sqlite")
        requests = list(server.requests)
    assert result.returncode == 0, result.stderr
    assert re.search(r"content checks by checker: criteria of \d+ point\(s\), \d+ agent turn\(s\), \d+ verdict "
                     r"pair\(s\): 0 finding\(s\), 0 not checked", result.stdout)
    data = json.loads(path.read_text())
    blind = [r["messages"][1]["content"] for r in requests if kind(r) == "blind"]
    assert len(blind) == len(_points(data))
    for index in _points(data):  # each point's blind prompt: its context, never its criteria or what was not heard
        turn = data["turns"][index]
        (prompt,) = [p for p in blind if p.endswith("## The caller cuts in\n" + turn["user"] + "\n\nReturn JSON: "
                                                   '{"reply": "the agent\'s next spoken reply"}')]
        assert turn["delivered"] in prompt
        hidden = [*turn["interruption"]["rq_rubrics"], turn["interruption"]["tf_rubric"], turn["interruption"]["baseline"],
                  turn["assistant"][len(turn["delivered"]):].strip()]
        assert not [text for text in hidden if text in prompt]
    criteria = [r["messages"][1]["content"] for r in requests if kind(r) == "criteria"]
    assert all(BLIND_REPLY in prompt for prompt in criteria)


def test_a_criterion_the_reference_or_a_correct_blind_reply_fails_is_flagged(subset, tmp_path):
    def plant(data):
        first, second = _points(data)[:2]
        data["turns"][first]["interruption"]["rq_rubrics"][1] += f" Mentions the {UNGROUNDED} rule."
        data["turns"][second]["interruption"]["rq_rubrics"][0] += f" Uses the word {OVERSTRICT}."
    path = _source(subset, tmp_path, plant)
    first, second = _points(json.loads(path.read_text()))[:2]
    with OpenAITestServer(respond=scripted) as server:
        result = _verify(path, server.base_url, tmp_path / "c.sqlite")
    assert result.returncode == 1
    assert (f"{path}: turn {first + 1}, turns[{first}].interruption.rq_rubrics[1]: reference_fails: ungrounded: the "
            f"agent's own continuation (turn {first + 2}) fails it: scripted: ungrounded") in result.stderr
    assert (f"{path}: turn {second + 1}, turns[{second}].interruption.rq_rubrics[0]: blind_reply_fails: over-strict: "
            "a correct reply written blind") in result.stderr
    assert "2 finding(s), 0 not checked" in result.stdout


def test_a_blind_reply_the_judge_finds_incorrect_shows_nothing(subset, tmp_path):
    path = _source(subset, tmp_path,
                   lambda d: d["turns"][_points(d)[0]]["interruption"]["rq_rubrics"].__setitem__(0, f"Says {OVERSTRICT}."))
    with OpenAITestServer(respond=lambda body: scripted(body, blind_correct=False)) as server:
        result = _verify(path, server.base_url, tmp_path / "c.sqlite")
    assert result.returncode == 0, result.stderr


def test_an_agent_turn_beyond_the_knowledge_base_is_flagged_and_a_justification_silences_it(subset, tmp_path):
    def plant(data):
        data["turns"][1]["assistant"] += f" Our {INVENTED} desk can also send it by courier."
    path = _source(subset, tmp_path, plant)
    with OpenAITestServer(respond=scripted) as server:
        flagged = _verify(path, server.base_url, tmp_path / "a.sqlite")
    assert flagged.returncode == 1
    assert f"{path}: turn 2, turns[1].assistant: ungrounded_turn: fact: '{INVENTED}': scripted" in flagged.stderr

    def justify(data):
        plant(data)
        data["turns"][1]["accepted"] = [{"check": "ungrounded_turn", "text": INVENTED,
                                         "reason": "The courier desk is in the knowledge base's guidelines."}]
    path = _source(subset, tmp_path, justify)
    with OpenAITestServer(respond=scripted) as server:
        silent = _verify(path, server.base_url, tmp_path / "b.sqlite")
    assert silent.returncode == 0, silent.stderr


def test_a_justified_criterion_finding_is_silent_and_an_empty_reason_is_refused(subset, tmp_path):
    def plant(reason):
        def mutate(data):
            point = data["turns"][_points(data)[0]]
            point["interruption"]["rq_rubrics"][0] += f" Mentions the {UNGROUNDED} rule."
            point["interruption"]["review"]["accepted"] = [{"check": "reference_fails", "criterion": 0, "reason": reason}]
        return mutate
    path = _source(subset, tmp_path, plant("The next turn answers another question; the rule is in the prompt."))
    with OpenAITestServer(respond=scripted) as server:
        silent = _verify(path, server.base_url, tmp_path / "a.sqlite")
    assert silent.returncode == 0, silent.stderr
    path = _source(subset, tmp_path, plant("   "))
    with OpenAITestServer(respond=scripted) as server:
        refused = _verify(path, server.base_url, tmp_path / "b.sqlite")
        asked = len(server.requests)
    assert refused.returncode == 1 and ".review.accepted[0].reason: is empty" in refused.stderr
    assert asked == 0  # a file with problems is not sent to the judge


def test_near_identical_behaviour_judged_differently_is_flagged(subset, tmp_path):
    def plant(data):
        a, b = _points(data)[:2]
        for index, met, wording in ((a, True, "before moving on."), (b, False, ", then moves on to the next step.")):
            interruption = data["turns"][index]["interruption"]  # alike, not near-identical: the lexical rule is silent
            interruption["rq_rubrics"][0] = f"Offers the {INCONSISTENT} option to the caller" + (" " if wording[0] != "," else "") + wording
            interruption["baseline_rq_verdicts"][0] = {"met": met, "reason": "scripted"}
    path = _source(subset, tmp_path, plant)
    a, b = _points(json.loads(path.read_text()))[:2]
    with OpenAITestServer(respond=scripted) as server:
        result = _verify(path, server.base_url, tmp_path / "c.sqlite")
    assert result.returncode == 1
    assert (f"turn {b + 1}, turns[{b}].interruption.baseline_rq_verdicts[0]: inconsistent_verdict: judged differently "
            f"from {path.name} turn {a + 1} rq_rubrics[0]") in result.stderr


def test_an_invalid_answer_is_asked_again_then_reported_as_not_checked(subset, tmp_path):
    path = _source(subset, tmp_path)
    attempts = {}

    def flaky(body):
        if kind(body) != "criteria":
            return scripted(body)
        key = body["messages"][1]["content"]
        attempts[key] = attempts.get(key, 0) + 1
        answer = criteria_answer(key)
        if attempts[key] == 1:
            answer["rq"] = answer["rq"][:1]  # one entry short: invalid
        return Reply(content=json.dumps(answer))
    with OpenAITestServer(respond=flaky) as server:
        fixed = _verify(path, server.base_url, tmp_path / "a.sqlite")
    assert fixed.returncode == 0, fixed.stderr and set(attempts.values()) == {2}

    def hopeless(body):
        return scripted(body) if kind(body) != "criteria" else Reply(content="{}")
    with OpenAITestServer(respond=hopeless) as server:
        failed = _verify(path, server.base_url, tmp_path / "b.sqlite")
    assert failed.returncode == 1
    assert re.search(r": turn \d+: criteria not checked \(InvalidJudgment: invalid after a re-ask", failed.stderr)


def test_the_content_prompts_are_pinned():
    assert PINNED_CONTENT_HASHES[CONTENT_PROMPT_VERSION] == content_prompt_hash()


@pytest.mark.parametrize("check", ["reference_fails", "blind_reply_fails", "inconsistent_verdict"])
def test_judge_findings_take_the_points_justifications(check):
    from ihbench.dataset.checks.accepted import CHECKS

    assert CHECKS[check] == "point" and CHECKS["ungrounded_turn"] == "turn"


def test_the_issues_pair_of_verdicts_is_put_to_the_judge(tmp_path):
    """travel-01 as the issue found it: "I'll book that" passed "lets her accept it", "I'll extend
    your stay" failed "Lets her choose" (issue 28): worded differently, alike in a clause, within one
    call. The third pass made both verdicts agree, so the issue's disagreement is planted back in a
    copy: the pair is put to the judge, and the shipped file, agreeing, has no such pair."""
    import shutil

    from ihbench.dataset.sources import SOURCES_DIR, load_conversation
    from ihbench.judge.content import candidate_pairs

    shipped = SOURCES_DIR / "travel-01-hotel-oversold-relocation.json"

    def pairs(path):
        return {(a[1].number, a[2], b[1].number, b[2]) for a, b in candidate_pairs([load_conversation(path)])}

    assert (4, 2, 10, 3) not in pairs(shipped)
    copy = tmp_path / shipped.name
    shutil.copy(shipped, copy)
    data = json.loads(copy.read_text())
    # the two criteria and verdicts as the issue found them (later passes reworded the first)
    data["turns"][3]["interruption"]["rq_rubrics"][2] = "Offers the king junior suite at no cost and lets her accept it"
    data["turns"][3]["interruption"]["baseline_rq_verdicts"][2] = {"met": True, "reason": "'I'll book that for you'"}
    data["turns"][9]["interruption"]["rq_rubrics"][3] = "Lets her choose"
    data["turns"][9]["interruption"]["baseline_rq_verdicts"][3] = {"met": False, "reason": "It decides for her."}
    copy.write_text(json.dumps(data))
    assert (4, 2, 10, 3) in pairs(copy)
