"""`ihbench generate` driven by a scripted LLM: the local OpenAI-compatible test server answering
each agent of the pipeline from a script (tests/generate_script.py)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from generate_script import CLEAN, RUBRIC, GenerationScript
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from ihbench.generate import PROMPT_VERSION, prompt_hash
from ihbench.seeds import record_seed

# Editing a generation prompt changes its hash: bump PROMPT_VERSION and pin the new pair here.
PINNED_PROMPT_HASHES = {"2026-11-23.1": "172960a262a3", "2026-12-04.1": "a88ea335a091"}
GOAL = "Set up a property tax installment plan"
ID = "government-set-up-a-property-tax-installment-plan-{:02d}"


def generate(server, out: Path, *extra, conversations: int = 1, intents: int = 1) -> int:
    return main(["generate", "--domain", "government", "--goal", GOAL, "--intents", str(intents),
                 "--conversations", str(conversations), "--llm-model", "scripted", "--llm-base-url", server.base_url,
                 "--out", str(out), "--cache", str(out.parent / "cache.sqlite"), "--quiet", *extra])


def written(out: Path) -> dict:
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "conversations").glob("*.json"))}


def records(out: Path) -> list[dict]:
    path = out / "discarded.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_prompt_changes_need_a_version_bump():
    assert PINNED_PROMPT_HASHES.get(PROMPT_VERSION) == prompt_hash()


def test_a_conversation_that_passes_on_the_first_try(tmp_path):
    script = GenerationScript(["cooperative"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out", "--price-per-1k-input", "0.5", "--price-per-1k-output", "1.5") == 0
    conversation = written(tmp_path / "out")[ID.format(1)]
    assert script.requests["verifier"] == 1 and script.requests["modifier"] == 0
    assert sum(script.reasks.values()) == 0
    points = [t for t in conversation["turns"] if "interruption" in t]
    assert len(conversation["turns"]) == 8 and len(points) == 4
    assert script.requests["rubric"] == script.requests["baseline"] == 4
    # the baseline writer saw what the evaluated model sees, and never the rubric or the unheard part
    for agent, payload in script.log:
        if agent == "baseline":
            text = json.dumps(payload)
            assert "tf_rubric" not in text and "rq_rubrics" not in text and "QX-44" not in text.split(
                "your_message_as_delivered")[1]
    provenance = conversation["provenance"]
    assert f"prompts {PROMPT_VERSION}" in provenance["author"] and prompt_hash() in provenance["author"]
    assert "model scripted" in provenance["llm"] and str(record_seed(0, ID.format(1), 0)) in provenance["seed"]
    assert "blind to the rubric" in provenance["baselines"] and "$" in provenance["cost_estimate"]
    info = json.loads((tmp_path / "out" / "generate.json").read_text())
    requests = sum(script.requests.values())
    assert info["tokens"]["calls"] == requests and info["tokens"]["prompt_tokens"] == 100 * requests  # server usage
    assert info["cost_estimate"] == pytest.approx(requests * (100 * 0.5 + 12 * 1.5) / 1000)
    assert info["prompt_hash"] == prompt_hash() and info["llm"]["model"] == "scripted"
    prerequisites = json.loads((tmp_path / "out" / "prerequisites" / "set-up-a-property-tax-installment-plan.json")
                               .read_text())
    assert "interrupt" not in prerequisites["system_message"].lower()


def test_a_fixable_leak_is_found_and_repaired_by_the_modifier(tmp_path):
    script = GenerationScript(["leaky"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out") == 0
    turn = written(tmp_path / "out")[ID.format(1)]["turns"][1]
    assert script.requests["verifier"] == 2 and script.requests["modifier"] == 1
    modifier_input = next(p for agent, p in script.log if agent == "modifier")
    assert {f["check"] for f in modifier_input["findings"]} == {"leakage", "lexical"}  # LLM and `ihbench verify`
    assert turn["user"] == CLEAN[turn["interruption"]["type"]] and "QX-44" not in turn["user"]
    assert records(tmp_path / "out") == []


def test_a_criterion_that_quotes_the_unheard_part_is_caught_by_the_content_checks_and_rewritten(tmp_path):
    """Issue 28: what `ihbench verify` refuses for content (here `quotes_unheard`: a criterion that
    asks for a code the model under test never heard) is a finding in generation too, though the
    verifier agent missed it, and the modifier's rewrite is what is written."""
    from ihbench.dataset.verify import verify_paths

    script = GenerationScript(["quoting"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out") == 0
    modifier_input = next(p for agent, p in script.log if agent == "modifier")
    [finding] = modifier_input["findings"]
    assert (finding["turn"], finding["field"], finding["check"], finding["fixable"]) == (2, "rq_rubrics", "lexical", True)
    assert "quotes 'QX-4402' from the unheard part" in finding["problem"], finding
    turn = written(tmp_path / "out")[ID.format(1)]["turns"][1]
    assert turn["interruption"]["rq_rubrics"] == RUBRIC
    assert verify_paths(sorted((tmp_path / "out" / "conversations").glob("*.json")), check_audio=False).problems == []


def test_an_unfixable_conversation_is_discarded_and_counted(tmp_path, capsys):
    script = GenerationScript(["cooperative", "unfixable"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out", conversations=2, intents=2) == 0
        assert "1 conversation(s) written, 0 already done, 1 discarded" in capsys.readouterr().out
        [discarded] = records(tmp_path / "out")
        assert discarded["conversation_id"] == ID.format(2) and discarded["outcome"] == "discarded"
        assert discarded["findings"][0]["check"] == "state_consistency" and not discarded["findings"][0]["fixable"]
        assert list(written(tmp_path / "out")) == [ID.format(1)]
        before = sum(script.requests.values())
        assert generate(server, tmp_path / "out", conversations=2, intents=2) == 0  # not retried unless asked
        assert "1 already done, 0 discarded, 0 failed, 1 discarded earlier" in capsys.readouterr().out
        assert sum(script.requests.values()) == before
        assert generate(server, tmp_path / "out", "--retry-discarded", conversations=2, intents=2) == 0
        assert "1 discarded" in capsys.readouterr().out and len(records(tmp_path / "out")) == 2


def test_malformed_json_and_a_bad_cut_are_reasked(tmp_path):
    script = GenerationScript(["malformed badcut"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out") == 0
    assert script.reasks["planner"] == 1 and script.reasks["user_interrupting"] == 1
    turn = written(tmp_path / "out")[ID.format(1)]["turns"][1]
    assert turn["assistant"].startswith(turn["delivered"]) and turn["delivered"].endswith("payment plan")


def test_each_guard_of_verify_is_met_by_a_re_ask_and_nothing_wrong_is_written(tmp_path):
    """Issue 28, part 5, with scripted LLM answers: an over-long system message, an invisible reply, a
    cut before the final period only, a placeholder criterion and a baseline that re-reads the
    message are each refused when answered and asked again; what is written passes verify."""
    from ihbench.dataset.verify import verify_paths

    script = GenerationScript(["sloppy"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out") == 0
    for agent in ("system_writer", "user_normal", "user_interrupting", "rubric", "baseline"):
        assert script.reasks[agent] >= 1, agent
    documents = written(tmp_path / "out")
    assert documents
    assert verify_paths(sorted((tmp_path / "out" / "conversations").glob("*.json")), check_audio=False).problems == []
    for document in documents.values():
        assert "[criterion]" not in json.dumps(document) and "\u200b" not in json.dumps(document)


def test_a_conversation_fails_after_the_bounded_reasks_and_is_not_written(tmp_path, capsys):
    script = GenerationScript(["hopeless"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out", "--max-reasks", "1") == 1
    assert script.requests["planner"] == 2  # the question and one re-ask, then it stops
    [failed] = records(tmp_path / "out")
    assert failed["outcome"] == "failed" and failed["agent"] == "planner" and "invalid after a re-ask" in failed["reason"]
    assert written(tmp_path / "out") == {}
    assert not (tmp_path / "out" / "conversations").exists()  # no empty folder left (battery 6, finding 7)
    assert "1 conversation(s) failed" in capsys.readouterr().err


def test_a_rerun_with_the_same_inputs_costs_nothing(tmp_path):
    script = GenerationScript(["cooperative", "leaky"])
    with OpenAITestServer(respond=script) as server:
        assert generate(server, tmp_path / "out", conversations=2, intents=2) == 0
        first, sent = written(tmp_path / "out"), sum(script.requests.values())
        assert generate(server, tmp_path / "out", conversations=2, intents=2) == 0  # everything is done
        assert generate(server, tmp_path / "again", conversations=2, intents=2) == 0  # new folder, same cache
        assert sum(script.requests.values()) == sent
    assert written(tmp_path / "again") == first == written(tmp_path / "out")
    runs = json.loads((tmp_path / "again" / "generate.json").read_text())["runs"]
    assert runs[-1]["usage"]["calls"] == 0 and runs[-1]["usage"]["cached"] > 0


def test_killed_midway_then_resumed_without_duplicates_or_regeneration(tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    script = GenerationScript(["cooperative"], delay=0.02)
    with OpenAITestServer(respond=script) as server:
        command = [sys.executable, "-m", "ihbench.cli", "generate", "--domain", "government", "--goal", GOAL,
                   "--intents", "1", "--conversations", "3", "--concurrency", "1", "--llm-model", "scripted",
                   "--llm-base-url", server.base_url, "--out", str(out), "--cache", str(cache), "--quiet"]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = out / "conversations" / f"{ID.format(1)}.json"
        deadline = time.time() + 60
        while not first.exists() and time.time() < deadline and process.poll() is None:
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert first.exists() and len(written(out)) < 3, "the kill came too late to test a resume"
        stat, content = first.stat(), first.read_bytes()
        seed = record_seed(0, ID.format(1), 0)
        script.log.clear()
        resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "already done" in resumed.stdout and sorted(written(out)) == [ID.format(n) for n in (1, 2, 3)]
    assert first.read_bytes() == content and first.stat().st_ino == stat.st_ino  # never rewritten
    assert not any(agent == "planner" and p["variation"] == seed for agent, p in script.log)  # never regenerated
    assert records(out) == [] and not list((out / "conversations").glob(".*"))
    assert subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", "--no-audio", str(out / "conversations")],
                          capture_output=True).returncode == 0


@pytest.mark.slow  # renders the generated conversation's audio
def test_the_output_passes_verify_and_builds_into_a_dataset(tmp_path, tts_cache, capsys):
    from ihbench.dataset import load_items

    with OpenAITestServer(respond=GenerationScript(["cooperative"])) as server:
        assert generate(server, tmp_path / "out") == 0
    conversations = tmp_path / "out" / "conversations"
    assert main(["verify", "--no-audio", str(conversations)]) == 0
    assert "OK: 1 conversation(s), 4 interruption point(s)" in capsys.readouterr().out
    assert main(["build", "--out", str(tmp_path / "data"), "--no-sid", "--quiet", "--cache-dir", str(tts_cache),
                 "--sources", str(conversations)]) == 0
    items = load_items(str(tmp_path / "data"))
    assert [i.turn for i in items] == [2, 4, 6, 8] and all(i.baseline and len(i.rubric.rq) == 2 for i in items)
    assert items[0].conversation_id == ID.format(1) and items[0].interrupted.delivered.endswith("payment plan")
    card = (tmp_path / "data" / "README.md").read_text()  # says how this suite was made, not the dev set's story
    assert "made with ihbench generate" in card and "written in-house" not in card
    assert "generated with `ihbench generate`" in card and "prompt hash" in card


WORKFLOW = """domain: telecom
goal: Port the caller's number to a new postpaid line
stages:
  - name: verify_identity
    description: Confirm the account holder with the account PIN
    failure_handling: Offer a store visit with photo ID
  - name: check_eligibility
    description: Check that the number can be ported
  - name: schedule_port
    description: Pick the port date and time
  - name: confirm_port
    description: Read back the port date and the new plan
knowledge_base:
  Porting time: one business day
policies:
  - Never read out the full account number
"""


def test_a_workflow_yaml_run_walks_its_stages(tmp_path):
    (tmp_path / "flow.yaml").write_text(WORKFLOW)
    script = GenerationScript(["cooperative"])
    with OpenAITestServer(respond=script) as server:
        assert main(["generate", "--workflow", str(tmp_path / "flow.yaml"), "--intents", "1", "--conversations", "1",
                     "--llm-model", "scripted", "--llm-base-url", server.base_url, "--out", str(tmp_path / "out"),
                     "--cache", str(tmp_path / "cache.sqlite"), "--quiet"]) == 0
    [conversation] = written(tmp_path / "out").values()
    assert conversation["conversation_id"] == "telecom-port-the-caller-s-number-to-a-new-postpaid-line-01"
    stages = conversation["knowledge_base"]["workflow_stages"]
    assert [s["name"] for s in stages] == ["verify_identity", "check_eligibility", "schedule_port", "confirm_port"]
    assert stages[0]["failure_handling"] == "Offer a store visit with photo ID"  # the file's words win
    assert stages[1]["failure_handling"] == "Offer to call back."  # what the file left out, the LLM wrote
    assert conversation["knowledge_base"]["guidelines"] == ["Never read out the full account number",
                                                            "Porting time: one business day"]
    assert {t["stage"] for t in conversation["turns"]} <= {s["name"] for s in stages}
    prerequisites_input = next(p for agent, p in script.log if agent == "prerequisites")
    assert prerequisites_input["workflow"]["policies"] == ["Never read out the full account number"]


@pytest.mark.parametrize("edit, field", [
    (lambda y: y.replace("goal: Port the caller's number to a new postpaid line\n", ""), "goal"),
    (lambda y: y.replace("name: check_eligibility", "name: Check Eligibility"), "stages[1].name"),
    (lambda y: y.replace("    description: Pick the port date and time\n", ""), "stages[2].description"),
    (lambda y: y + "languages: [en]\n", "languages"),
    (lambda y: y.replace("domain: telecom", "domain: insurance"), "domain"),
])
def test_a_bad_workflow_yaml_is_named_with_its_field(tmp_path, capsys, edit, field):
    path = tmp_path / "flow.yaml"
    path.write_text(edit(WORKFLOW))
    script = GenerationScript(["cooperative"])
    with OpenAITestServer(respond=script) as server:
        assert main(["generate", "--workflow", str(path), "--llm-model", "scripted", "--llm-base-url",
                     server.base_url, "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert f"ihbench generate: error: {path}: {field}:" in capsys.readouterr().err
    assert not script.requests and not (tmp_path / "out").exists()


KEY = "ilylytZOTJH01bMZWXRt0OhZ8g23fR2V"  # drawn with secrets.choice: a key's shape, no key of anyone's


@pytest.mark.parametrize("edit, argv, said", [
    (lambda y: y.replace("goal: Port the caller's number", f"goal: Port the number for account {KEY} to"), [],
     "{path}: goal: holds what looks like an API key"),
    (lambda y: y.replace("domain: telecom\n", f"domain: telecom\ndescription: Line of {KEY}\n"), [],
     "{path}: description: holds what looks like an API key"),
    (lambda y: y.replace("name: check_eligibility", "name: check_" + KEY.lower()), [],
     "{path}: stages[1].name: holds what looks like an API key"),
])
def test_a_key_in_the_workflow_file_or_the_description_is_refused_as_in_goal(edit, argv, said, tmp_path, capsys):
    """Battery 54, A11: `--goal` refused a key, but the same goal in a --workflow file, or a key in --description,
    was copied into generate.json in clear."""
    path = tmp_path / "flow.yaml"
    if edit is not None:
        path.write_text(edit(WORKFLOW))
        argv = ["--workflow", str(path)]
    script = GenerationScript(["cooperative"])
    with OpenAITestServer(respond=script) as server:
        assert main(["generate", *argv, "--llm-model", "scripted", "--llm-base-url", server.base_url, "--out",
                     str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert said.format(path=path) + " (a credential; not shown), which generate.json and every conversation would " \
        "copy; remove it" in err, err
    assert KEY not in err and KEY.lower() not in err
    assert not script.requests and not (tmp_path / "out").exists()


def test_a_provider_s_key_in_the_workflow_s_knowledge_base_is_refused_before_any_prompt(tmp_path, capsys):
    """Battery 58, E9: a key in the workflow's knowledge base went into every prompt, the prerequisites and
    every conversation (`convbench-import` refused the same key in a benchmark's knowledge base)."""
    key = "sk-proj-iQrfNKp8zXzy5-ZWaoni92lBRlTW0UvCLlOAWN8xeH4"  # drawn once (fixed)
    path = tmp_path / "flow.yaml"
    path.write_text(WORKFLOW.replace("  Porting time: one business day", f"  Porting time: one business day; the admin "
                                     f"key is {key}"))
    script = GenerationScript(["cooperative"])
    with OpenAITestServer(respond=script) as server:
        assert main(["generate", "--workflow", str(path), "--llm-model", "scripted", "--llm-base-url",
                     server.base_url, "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"--workflow {path}: holds a provider's API key (a credential; not shown), which every prompt would " \
        "send and every conversation copy; remove it" in err, err
    assert key not in err and not script.requests and not (tmp_path / "out").exists()


def test_a_local_transformers_model_that_never_answers_json_fails_the_conversation(tmp_path, capsys):
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-text", tmp_path / "tiny")
    code = main(["generate", "--domain", "government", "--goal", GOAL, "--intents", "1", "--conversations", "2",
                 "--llm-backend", "transformers", "--llm-model", str(model), "--max-new-tokens", "8",
                 "--max-reasks", "1", "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache.sqlite"),
                 "--quiet"])
    assert code == 1 and "2 conversation(s) failed" in capsys.readouterr().err
    failed = records(tmp_path / "out")
    assert [r["conversation_id"] for r in failed] == [ID.format(1), ID.format(2)]
    assert all(r["outcome"] == "failed" and "invalid after a re-ask" in r["reason"] for r in failed)
    assert written(tmp_path / "out") == {} and not list((tmp_path / "out").glob("prerequisites/*.json"))
    info = json.loads((tmp_path / "out" / "generate.json").read_text())
    assert info["llm"]["backend"] == "transformers" and info["tokens"]["calls"] == 2
    assert info["tokens"]["completion_tokens"] > 0  # the local backend counts its tokens too


def test_a_bug_in_the_llm_stops_generate_while_a_refusal_fails_the_calls(tmp_path):
    """`AgentFailure` is an item failure (the conversation fails, the run goes on); a bug in the
    LLM backend is not: it stops `generate` with its own exception."""
    import asyncio

    from judging import FixedJudge

    from ihbench.generate import AgentFailure, GenerateSpec
    from ihbench.generate import generate as generate_suite
    from ihbench.llm import LLMCache, TransportError
    from ihbench.loaders.failures import is_item_failure

    assert is_item_failure(AgentFailure("planner", "invalid after a re-ask: ..."))

    def make(backend, out):
        spec = GenerateSpec(out=tmp_path / out, domain="government", goal=GOAL, intents=1, conversations=2)
        return asyncio.run(generate_suite(spec, backend, cache=LLMCache(tmp_path / "cache.sqlite"), progress=False))

    with pytest.raises(KeyError, match="choices"):
        make(FixedJudge(error=KeyError("choices"), model="scripted"), "bug")
    summary = make(FixedJudge(error=TransportError("HTTP 401: no key", retryable=False), model="scripted"), "refused")
    assert summary.failed == 2 and summary.written == 0 and summary.usage.calls == 1
    assert [(r["outcome"], r["agent"], r["reason"]) for r in records(tmp_path / "refused")] == [
        ("failed", "prerequisites", "prerequisites: HTTP 401: no key (after 1 attempt(s))")] * 2


@pytest.mark.parametrize("where", ["user", "path"])
def test_an_llm_reached_through_a_url_with_a_key_in_it_writes_conversations_without_the_key(where, tmp_path):
    """Battery 42, M2: with --llm-base-url http://KEY@host/v1 the provenance named the LLM "at
    http://<redacted>@host", which verify reads as an unfilled placeholder: every conversation was
    refused after all its requests, and the retry the message offered failed the same way. Battery 46,
    S3: a key in the address's path (a proxy's) was written as it was."""
    script = GenerationScript(["cooperative"])
    with OpenAITestServer(respond=script) as server:
        keyed = server.base_url.replace("http://", "http://sk-GENKEY42secret@") if where == "user" else \
            server.base_url.replace("/v1", "/sk-proj-GENKEY42secretXYZabc0123456789/v1")
        out = tmp_path / "out"
        assert main(["generate", "--domain", "government", "--goal", GOAL, "--intents", "1", "--conversations", "1",
                     "--llm-model", "scripted", "--llm-base-url", keyed, "--out", str(out), "--cache",
                     str(tmp_path / "cache.sqlite"), "--quiet"]) == 0
    conversation = written(out)[ID.format(1)]
    address = server.base_url if where == "user" else server.base_url.replace("/v1", "/(hidden)/v1")
    assert conversation["provenance"]["llm"].startswith(f"openai backend, model scripted at {address}")
    assert not any("GENKEY42" in path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file())
