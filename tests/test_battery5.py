"""The fifth battery of bad inputs (issue 23): rule 1, an item error is not an answer. An answer with
no text is a failed item (retried, never judged or scored), failed items are counted apart beside
every score, and what the report says of judgments is what the files show, never a guess."""
import json

import pytest
from openai_test_server import OpenAITestServer, Reply
from judging import ScriptedJudge

from ihbench.cli import main
from test_battery4_files import _files, _one_error  # noqa: F401  (the shared helpers)


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _run_openai(data, out, base_url, *extra) -> int:
    return main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(out),
                 "--epochs", "1", "--base-url", base_url, "--option", "max_retries=0", "--quiet", *extra])


def _judge(run, tmp_path, *extra) -> tuple[int, ScriptedJudge, OpenAITestServer]:
    script = ScriptedJudge(faults=False)
    with OpenAITestServer(respond=script) as server:
        code = main(["judge", str(run), "--judge-model", "judge-x", "--judge-base-url", server.base_url,
                     "--cache", str(tmp_path / "jc.sqlite"), "--quiet", *extra])
    return code, script, server


# --- findings 1 and 2: an answer with no text is a failed item ---------------------------------

def _special_tokens_only(model):
    """The tiny model made to answer only a special token: its final norm zeroed (every logit 0, so
    greedy decoding picks token 0, '!'), which is made an end token and a special token."""
    import torch
    from safetensors.torch import load_file, save_file

    weights = load_file(str(model / "model.safetensors"))
    weights["language_model.model.norm.weight"] = torch.zeros_like(weights["language_model.model.norm.weight"])
    save_file(weights, str(model / "model.safetensors"), metadata={"format": "pt"})
    generation = json.loads((model / "generation_config.json").read_text())
    generation["eos_token_id"] = [0] + [e for e in ([generation["eos_token_id"]]
                                                    if isinstance(generation["eos_token_id"], int)
                                                    else generation["eos_token_id"]) if e != 0]
    (model / "generation_config.json").write_text(json.dumps(generation))
    tokenizer = json.loads((model / "tokenizer_config.json").read_text())
    tokenizer.setdefault("extra_special_tokens", []).append("!")
    (model / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    return model


def test_a_local_model_s_answer_of_special_tokens_only_is_a_failed_item_not_an_answer(official, tmp_path, capsys):
    """The transformers path recorded `response: ""` and the judge scored it a loss."""
    from ihbench.loaders.tiny import make_tiny_model

    model = _special_tokens_only(make_tiny_model("qwen2-audio", tmp_path / "tiny"))
    out = tmp_path / "r"
    code = main(["run", "--model", "qwen2-audio", "--model-path", str(model), "--data", str(official), "--out",
                 str(out), "--limit", "2", "--epochs", "1", "--quiet"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    records = _records(out / "responses.jsonl")
    assert len(records) == 2 and all(r["response"] is None for r in records), records
    assert all(r["error"].startswith("EmptyReplyError: the model's answer has no text once its special tokens are "
                                     "removed") for r in records), records
    code, script, server = _judge(out, tmp_path)
    assert code == 0 and server.requests == []
    assert "note: 2 response(s) failed in the run" in capsys.readouterr().out
    assert not (out / "judgments.jsonl").exists()  # no loss made up for them


@pytest.mark.parametrize("content", ["\u200b\u200b", "\u200b\u00a0", "\u200b \u00a0\n", "\u2060\u0007"])
def test_a_server_reply_of_invisible_characters_only_is_a_failed_item(content, official, tmp_path, capsys):
    """`ihbench verify` calls such a string empty; the run recorded it as an answer and judged it."""
    reply = [content]
    with OpenAITestServer(respond=lambda body: Reply(content=reply[0])) as server:
        code = _run_openai(official, tmp_path / "r", server.base_url, "--limit", "2")
        assert code == 1, capsys.readouterr().err
        records = _records(tmp_path / "r" / "responses.jsonl")
        assert [r["response"] for r in records] == [None, None]
        assert all(r["error"].startswith("EmptyReplyError: the server's reply has no text (finish_reason 'stop') "
                                         "(only invisible characters: ") for r in records), records
        reply[0] = "Sure, go ahead."  # retried by the next run, not kept as answers
        assert _run_openai(official, tmp_path / "r", server.base_url, "--limit", "2") == 0
        assert len(server.requests) == 4


@pytest.mark.parametrize("text", ["", "\u200b\u200b", "\u00a0 "])
def test_a_recorded_answer_with_no_text_is_refused_and_never_judged_as_a_loss(text, official, tmp_path, capsys):
    """A hand-edited (or old) record `response: ""`, `error: null` was judged without a call: TF
    baseline, RQ fail, "the model produced no response"."""
    from ihbench.records import ResponseRecord

    out = tmp_path / "r"
    with OpenAITestServer() as server:
        assert _run_openai(official, out, server.base_url, "--limit", "2") == 0
    lines = _records(out / "responses.jsonl")
    lines[0] = {**lines[0], "response": text, "error": None}
    (out / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    capsys.readouterr()
    code, script, server = _judge(out, tmp_path)
    err = capsys.readouterr().err
    assert code == 0
    assert f"{out / 'responses.jsonl'} line 1: field 'response' is empty" in err and "no error" in err, err
    judged = _records(out / "judgments.jsonl")
    assert {r["id"] for r in judged} == {lines[1]["id"]}  # only the real answer
    assert "the model produced no response" not in (out / "judgments.jsonl").read_text()
    # an answer with no text made in code (not read from a line) is no answer either
    record = ResponseRecord(id="a/1", epoch=0, response=text, error=None)
    assert not record.answered


def test_set_baseline_refuses_a_run_whose_answers_have_no_text(official, tmp_path, capsys):
    out = tmp_path / "r"
    with OpenAITestServer() as server:
        assert _run_openai(official, out, server.base_url) == 0
    lines = _records(out / "responses.jsonl")
    lines = [{**r, "response": "\u200b\u200b"} for r in lines[:2]] + lines[2:]
    (out / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    capsys.readouterr()
    assert main(["set-baseline", str(out), "--data", str(official), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    err = capsys.readouterr().err
    error = [line for line in err.splitlines() if line.startswith("ihbench set-baseline: error: ")]
    assert error == [f"ihbench set-baseline: error: {out}: 2 answer(s) of epoch 0 have no words (empty, or invisible "
                     f"characters or punctuation only), e.g. {lines[0]['id']}: an answer with no text is a failed item, not a "
                     "baseline; `ihbench run` with the same options answers them again"], err
    assert not (tmp_path / "b").exists()


# --- finding 3: the baseline's RQ beside the run's is over the same items -----------------------

def _summary(run) -> dict:
    return json.loads((run / "summary.json").read_text())["runs"][0]


def test_the_baseline_rq_beside_the_run_s_is_over_the_items_with_an_rq_verdict(built, tmp_path, capsys):
    """A run judged on 4 items, then answered to 30: the baseline's RQ covered all 30 answers while
    the run's RQ covered the 4 judged ones."""
    out = tmp_path / "a"
    with OpenAITestServer(respond=lambda body: Reply(content="Sure, let me help with that.")) as server:
        assert _run_openai(built, out, server.base_url, "--limit", "4") == 0
        assert _judge(out, tmp_path)[0] == 0
        assert _run_openai(built, out, server.base_url, "--limit", "30") == 0
    answered = len(_records(out / "responses.jsonl"))
    assert answered > 4
    capsys.readouterr()
    assert main(["report", str(out), "--quiet"]) == 0
    line = capsys.readouterr().out
    run = _summary(out)
    assert run["rq_pass_rate"]["n_items"] == 4 and run["baseline_rq_pass_rate"]["n_items"] == 4, run
    assert f"(baseline RQ on the same items {run['baseline_rq_pass_rate']['rq_pass_rate']:.3f})" in line
    # a judge that only fails: no RQ verdict, so no baseline beside it
    failing = tmp_path / "c"
    with OpenAITestServer(respond=lambda body: Reply(content="Sure, let me help with that.")) as server:
        assert _run_openai(built, failing, server.base_url, "--limit", "4") == 0
    with OpenAITestServer(fail_when=lambda body: 400) as judge:
        assert main(["judge", str(failing), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                     "--cache", str(tmp_path / "jc2.sqlite"), "--quiet"]) == 1
    capsys.readouterr()
    main(["report", str(failing), "--quiet"])
    line = capsys.readouterr().out
    assert "no RQ judgments" in line and "baseline RQ" not in line, line
    assert _summary(failing)["baseline_rq_pass_rate"] is None


# --- finding 8: a judgments file cut mid-line ----------------------------------------------------

def test_the_report_names_a_judgments_line_cut_mid_way_and_guesses_no_cause(official, tmp_path, capsys):
    """The report said nothing of the torn line, and blamed `--axes tf` (the judge ran with both)."""
    out = tmp_path / "a"
    with OpenAITestServer() as server:
        assert _run_openai(official, out, server.base_url, "--limit", "3") == 0
    assert _judge(out, tmp_path)[0] == 0
    judgments = out / "judgments.jsonl"
    lines = judgments.read_bytes().split(b"\n")
    assert len(lines) >= 4
    judgments.write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][:len(lines[2]) // 2])  # line 3 cut mid-way
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    said = capsys.readouterr()
    text = said.out + said.err
    assert text.count(f"{judgments} line 3: incomplete (cut mid-line") == 1, text
    assert "--axes" not in text and "answered after the last" not in text, text
    why = _summary(out)["not_judged_why"]
    assert why and all(reason["why"] == f"{judgments} has 1 damaged line(s) (3), left out"
                       for reasons in why.values() for reason in reasons), why
    assert judgments.read_bytes().endswith(lines[2][:len(lines[2]) // 2])  # a reader repairs nothing
