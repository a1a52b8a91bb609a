"""Battery 7 (issue 23): findings of the seventh battery of bad inputs, each named in one line with
nothing lost, nothing scored that was not an answer, and nothing silently taken."""
import json

import pytest

from ihbench.cli import main
from test_battery4_files import _one_error


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


# --- finding 1: a refused batch answers file leaves the waiting questions as they were ------------

def test_a_batch_answer_by_another_model_is_refused_and_the_waiting_questions_are_kept(official, tmp_path, capsys):
    from judging import ScriptedJudge
    from test_battery_round3 import _answered
    from test_verify_judge_batch import _batch_answers

    from ihbench.llm.batch import REQUESTS

    run = _answered(official, tmp_path / "run")
    folder = tmp_path / "questions"
    judge = ["judge", str(run), "--judge-model", "jm", "--judge-batch", str(folder), "--cache",
             str(tmp_path / "c.sqlite"), "--quiet"]
    assert main(judge) == 1
    asked = (folder / REQUESTS).read_bytes()
    record = (run / "judgments.asked.json").read_bytes()
    _batch_answers(folder / REQUESTS, folder / "answers.jsonl", ScriptedJudge(faults=False))
    answers = [json.loads(line) for line in (folder / "answers.jsonl").read_text().splitlines()]
    for answer in answers:
        answer["response"]["body"]["model"] = "cheap-model"
    (folder / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    capsys.readouterr()
    assert main(judge) == 2
    error = _one_error(capsys, "judge")
    assert f"{folder / 'answers.jsonl'} line " in error and "answered by 'cheap-model', not the judge asked for, 'jm'" \
        in error and f"submit {folder / REQUESTS} as written" in error
    assert (folder / REQUESTS).read_bytes() == asked  # the file it says to submit is there, as it was
    assert (run / "judgments.asked.json").read_bytes() == record


# --- finding 3: a setting given by its flag and by --option is refused, in every command -----------

@pytest.mark.parametrize("command", [
    ["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--base-url",
     "http://127.0.0.1:9/v1", "--option", "base_url=http://127.0.0.1:8/v1"],
    ["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--base-url",
     "http://127.0.0.1:9/v1", "--concurrency", "4", "--option", "concurrency=2"],
    ["barge-in", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--sim-model", "s",
     "--base-url", "http://127.0.0.1:9/v1", "--option", "base_url=http://127.0.0.1:8/v1"],
    ["sid", "--data", "d", "--out", "o", "--detector", "audio-llm", "--model", "openai", "--model-path", "m",
     "--base-url", "http://127.0.0.1:9/v1", "--option", "base_url=http://127.0.0.1:8/v1"],
], ids=["run-base-url", "run-concurrency", "barge-in", "sid"])
def test_a_setting_given_by_its_flag_and_by_an_option_with_another_value_is_refused(command, tmp_path, monkeypatch,
                                                                                     capsys):
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    error = _one_error(capsys, command[0])
    option = command[-1]
    flag = "--concurrency" if "concurrency" in option else "--base-url"
    assert error.endswith(f"--option {option} and {flag} name the same setting twice; give it once"), error
    assert list(tmp_path.iterdir()) == []


# --- finding 4: sid names a missing --data folder, not the config it could not look for -----------

@pytest.mark.parametrize("data", ["nosuch", "afile"])
def test_sid_on_a_data_path_that_is_no_folder_names_the_path_whatever_the_config(data, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    assert main(["sid", "--data", data, "--config", "sid_dev_en", "--detector", "energy", "--out", "o",
                 "--quiet"]) == 2
    # battery 41's nit: "not a directory" named neither the option nor what --data expects
    got = "is a file" if data == "afile" else "no such folder"  # battery 65, L11: "got not found"
    assert _one_error(capsys, "sid") == (f"ihbench sid: error: --data: {data}: {got}; expected a local dataset "
                                         f"directory with sid_* configs or a SID-Bench folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


# --- finding 10: a damaged judge's record is said to be damaged, not missing -----------------------

@pytest.mark.parametrize("text, said", [("not json", "not valid JSON (Expecting value at line 1 column 1)"),
                                        ('{"judge_model": 5}', "missing field 'axes'")])
def test_a_damaged_record_of_what_the_judge_asked_is_named_as_damaged(text, said, official, tmp_path, capsys):
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run")
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet", "--axes", "tf"]) == 0
    (run / "judgments.asked.json").write_text(text)
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert f"{run / 'judgments.asked.json'}: {said}; the causes of answers without a verdict are not known" in err, err
    assert "(judgments.asked.json cannot be read (see the warning above), so what the last judge asked is not known)" \
        in err and "is missing" not in err, err


# --- finding 6: extra_body cannot replace what the benchmark sends --------------------------------

@pytest.mark.parametrize("body, key, flag", [('{"temperature": 1.5}', "temperature", "--temperature"),
                                             ('{"messages": [], "model": "other"}', "messages",
                                              "the benchmark's conversation"),
                                             ('{"model": "other"}', "model", "--model-path")])
def test_extra_body_may_add_to_a_request_never_replace_what_the_run_records(body, key, flag, tmp_path, monkeypatch,
                                                                            capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--base-url",
                 "http://127.0.0.1:9/v1", "--option", f"extra_body={body}"]) == 2
    assert _one_error(capsys, "run").endswith(f"--option extra_body: {key!r} is set by ihbench itself ({flag}); "
                                              "extra_body adds fields to a request, it cannot replace these: leave it "
                                              "out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("body, key, said", [('{"stop": ["."]}', "stop", "cuts answers at a string"),
                                             ('{"min_tokens": 200}', "min_tokens", "keeps the model from ending its turn"),
                                             ('{"ignore_eos": true}', "ignore_eos", "keeps the model from ending its turn"),
                                             # battery 53, Z7: vLLM's own fields, kept and scored
                                             ('{"stop_token_ids": [13]}', "stop_token_ids", "cuts answers at a token"),
                                             ('{"logit_bias": {"2": -100}}', "logit_bias", "weighs the model's tokens"),
                                             ('{"truncate_prompt_tokens": 1}', "truncate_prompt_tokens",
                                              "cuts the conversation the model hears"),
                                             ('{"guided_regex": "a"}', "guided_regex", "forces the answer's form")])
def test_extra_body_may_not_decide_where_an_answer_ends(body, key, said, tmp_path, monkeypatch, capsys):
    """Battery 52: `stop` ["."] cut every answer at its first sentence, and the cut answer was kept and scored."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--base-url",
                 "http://127.0.0.1:9/v1", "--option", f"extra_body={body}"]) == 2
    assert _one_error(capsys, "run").endswith(f"--option extra_body: {key!r} {said}; the model answers the benchmark's "
                                              "conversation as it would, within --max-new-tokens: leave it out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("body, key", [('{"regex": "a"}', "'regex'"), ('{"json_schema": {}}', "'json_schema'"),
                                       ('{"grammar": "root ::= a"}', "'grammar'"), ('{"chat_template": "x"}', "'chat_template'"),
                                       ('{"add_generation_prompt": false}', "'add_generation_prompt'"),
                                       ('{"echo": true}', "'echo'"), ('{"max_new_tokens": 5}', "'max_new_tokens'"),
                                       ('{"n_predict": 5}', "'n_predict'"), ('{"eos_token_id": 13}', "'eos_token_id'"),
                                       ('{"top_k": 5, "zz": 1}', "'zz'")])
def test_extra_body_carries_only_the_fields_ihbench_passes_on(body, key, tmp_path, monkeypatch, capsys):
    """Battery 54, A3: each server names the fields refused above its own way (SGLang's `regex`, llama.cpp's
    `grammar`, vLLM's `chat_template`, TGI's `max_new_tokens`), and those were passed on and the answers scored."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--base-url",
                 "http://127.0.0.1:9/v1", "--option", f"extra_body={body}"]) == 2
    said = _one_error(capsys, "run")
    assert f"--option extra_body: {key} is not a field ihbench passes on; extra_body may carry sampling (top_k, " in said
    assert said.endswith("what the model hears, where its answer ends and what form it takes are the benchmark's: "
                         "leave it out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("body, said", [
    ('{"chat_template_kwargs": {"add_generation_prompt": false}}',
     "chat_template_kwargs may only switch thinking (enable_thinking, reasoning_effort, thinking, thinking_budget), got "
     "'add_generation_prompt'; the template's other settings change the conversation the model hears: leave it out"),
    ('{"chat_template_kwargs": "x"}', "chat_template_kwargs: expected a JSON object, got \"x\""),
    # battery 55, B6: values a server answers with HTTP 400 on every item, and fields only named like a secret
    ('{"chat_template_kwargs": {"enable_thinking": {"nested": "x"}}}',
     "chat_template_kwargs.enable_thinking: expected true or false, got {\"nested\": \"x\"}"),
    ('{"top_k": "abc"}', "top_k: expected a whole number from -1 to 2147483647, got \"abc\""),
    ('{"min_p": 1.5}', "min_p: expected a number in [0, 1], got 1.5"),
    ('{"repetition_penalty": 0}', "repetition_penalty: expected a number > 0, got 0"),
    ('{"top_logprobs": 999}', "top_logprobs: expected a whole number from 0 to 20, got 999"),
    ('{"store": "yes"}', "store: expected true or false, got \"yes\""),
    ('{"reasoning_effort": {"x": 1}}', "reasoning_effort: expected one of none, minimal, low, medium, high, xhigh, got {\"x\": 1}"),
    ('{"ignore_eos_token": true}', "'ignore_eos_token' is not a field ihbench passes on"),
    ('{"api_key": 5}', "'api_key' carries a credential, which is text; got int"),
    # battery 56, C3: the text "false" is no false (a template reads it as true); efforts and nested budgets
    ('{"chat_template_kwargs": {"enable_thinking": "false"}}',
     "chat_template_kwargs.enable_thinking: expected true or false, got \"false\""),
    ('{"enable_thinking": "false"}', "enable_thinking: expected true or false, got \"false\""),
    ('{"logprobs": "true"}', "logprobs: expected true or false, got \"true\""),
    ('{"reasoning_effort": "{{ \'x\' }}"}', "reasoning_effort: expected one of none, minimal, low, medium, high, xhigh"),
    ('{"chat_template_kwargs": {"reasoning_effort": ""}}', "chat_template_kwargs.reasoning_effort: expected one of none"),
    ('{"thinking": {"type": "enabled", "budget_tokens": -5}}',
     "thinking.budget_tokens: expected a whole number >= 1024, got -5"),
    # battery 57, D6 and D7: JSON's spelling of what was typed; Anthropic's thinking shape
    ('{"chat_template_kwargs": {"enable_thinking": null}}',
     "chat_template_kwargs.enable_thinking: expected true or false, got null"),
    ('{"thinking": {}}', "thinking: 'type' is required (thinking carries type, budget_tokens)"),
    ('{"thinking": {"type": "enabled"}}', "thinking: 'budget_tokens' is required with type enabled"),
    ('{"thinking": {"type": "enabled", "budget_tokens": 0}}', "thinking.budget_tokens: expected a whole number >= 1024"),
    ('{"thinking": "yes"}', "thinking: expected true or false or a JSON object of type, budget_tokens, got \"yes\""),
    ('{"reasoning": {"effort": "x", "max_tokens": 5}}', "reasoning.effort: expected one of none, minimal"),
    ('{"reasoning": {"max_tokens": -1}}', "reasoning.max_tokens: expected a whole number >= 0, got -1"),
    ('{"reasoning": {"messages": []}}', "reasoning: 'messages' is not a field ihbench passes on"),
    ('{"top_k": 99999999999999999999999}', "top_k: expected a whole number from -1 to 2147483647"),
    # battery 58, E2: every unknown field named at once, the known ones beside them not
    ('{"frobnicate": 1, "top_k": 5, "zzz": true}', "'frobnicate', 'zzz' are not fields ihbench passes on"),
    # battery 59, F3: what the server refuses on every item
    ('{"top_logprobs": 5}', "top_logprobs needs \"logprobs\": true beside it"),
    ('{"top_logprobs": 5, "logprobs": false}', "top_logprobs needs \"logprobs\": true beside it"),
    ('{"service_tier": "cheap"}', "service_tier: expected one of auto, default, flex, scale, priority, got \"cheap\""),
])
def test_extra_body_values_are_checked_before_any_work(body, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--base-url",
                 "http://127.0.0.1:9/v1", "--option", f"extra_body={body}"]) == 2
    assert f"--option extra_body: {said}" in _one_error(capsys, "run")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("body", [
    {"chat_template_kwargs": {"enable_thinking": False, "reasoning_effort": "low"}}, {"enable_thinking": True},
    {"thinking": {"type": "enabled", "budget_tokens": 2048}}, {"thinking": False}, {"reasoning_effort": "high"},
    {"thinking": {"type": "disabled"}},
    {"reasoning": {"effort": "medium", "max_tokens": 0, "exclude": True}}, {"top_k": -1, "logprobs": True},
    {"logprobs": True, "top_logprobs": 5, "service_tier": "flex"},
])
def test_extra_body_values_of_the_right_kind_pass_on_as_given(body):
    """The other half of battery 56, C3: what a server takes is not refused."""
    from ihbench.loaders.openai_compat import OpenAICompatLoader

    assert OpenAICompatLoader.check_options({"extra_body": json.dumps(body)})["extra_body"] == body


# --- finding 12: a config's folder given as the dataset ------------------------------------------

@pytest.mark.parametrize("command", [["info", "{data}"], ["export", "{data}", "--out", "ex"],
                                     ["run", "--model", "openai", "--model-path", "m", "--base-url",
                                      "http://127.0.0.1:9/v1", "--data", "{data}", "--out", "r"]])
def test_a_folder_inside_a_dataset_is_named_as_such(command, official, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    inner = official / "conversations"
    assert main([part.format(data=inner) for part in command]) == 2
    assert _one_error(capsys, command[0]).endswith(f"{inner}: is a folder inside the dataset {official}; give the "
                                                   "dataset folder itself")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["official"]


# --- finding 7: an answer edited by hand is no answer of the model -------------------------------

def test_an_answer_edited_by_hand_is_named_left_out_and_answered_again(official, tmp_path, capsys):
    from openai_test_server import OpenAITestServer

    out = tmp_path / "run"
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(out), "--epochs",
            "1", "--limit", "2", "--quiet", "--allow-endpoint-change"]
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
    lines = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert all(line["check"] for line in lines)
    lines[0]["response"] = "faked"
    (out / "responses.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
        answered_again = len(server.requests)
    err = capsys.readouterr().err
    assert (f"{out / 'responses.jsonl'} line 1: changed since it was written (its answer no longer matches the check "
            "written with it)") in err, err
    assert answered_again == 1
    from ihbench.rundir import RunDir

    _, responses, _ = RunDir(out).load()
    assert len(responses) == 2 and "faked" not in [r.response for r in responses]


# --- finding 8: run.json values a command line would refuse ---------------------------------------

@pytest.mark.parametrize("field, value, said", [
    ("format_version", 99, "field 'format_version' is 99: written by a newer ihbench (this one reads up to 2)"),
    ("epochs", 0, "field 'epochs' must be >= 1, got 0"), ("limit", -5, "field 'limit' must be >= 1, got -5"),
    ("seed", -1, "field 'seed' must be >= 0, got -1"),
])
def test_a_run_json_value_no_command_writes_is_named(field, value, said, official, tmp_path, capsys):
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "2")
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, field: value}))
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--out", str(tmp_path / "rep")]) == 2
    assert _one_error(capsys, "report").startswith(f"ihbench report: error: {run / 'run.json'}: {said}")
    assert not (tmp_path / "rep").exists()


# --- finding 9: a verdict edited by hand, or with another number of criteria than its rubric -------

def _judged(official, tmp_path):
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run")
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    return run


def _report(run, tmp_path, capsys):
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    return capsys.readouterr().err, json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]


def test_a_verdict_flipped_by_hand_is_left_out_not_scored(official, tmp_path, capsys):
    run = _judged(official, tmp_path)
    _, before = _report(run, tmp_path, capsys)
    lines = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    number, tf = next((n, line) for n, line in enumerate(lines, 1) if line["axis"] == "tf")
    lines.append({**tf, "verdict": "model" if tf["verdict"] != "model" else "baseline"})  # a copy, its verdict flipped
    (run / "judgments.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    err, after = _report(run, tmp_path, capsys)
    assert (f"{run / 'judgments.jsonl'} line {len(lines)}: changed since it was written (its verdict no longer "
            "matches the check written with it)") in err, err
    assert after["tf_win_rate"] == before["tf_win_rate"]


def test_an_rq_verdict_with_another_number_of_criteria_than_its_rubric_is_judged_again(official, tmp_path, capsys):
    run = _judged(official, tmp_path)
    lines = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    rq = [n for n, line in enumerate(lines) if line["axis"] == "rq"]
    for n in rq:  # as an older version's line, which carries no check
        lines[n].pop("check")
        lines[n].update(criteria=[True], verdict="pass", format_version=4)
    (run / "judgments.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    from test_runner import _as_begun_before_record_formats

    _as_begun_before_record_formats(run)  # of a run an older version began
    err, summary = _report(run, tmp_path, capsys)
    assert "RQ verdict(s) hold another number of criteria than their rubric (e.g. " in err, err
    assert summary["rq_pass_rate"] is None and summary["not_judged"]["rq"] == len(rq)


def test_a_setting_given_twice_is_refused_without_echoing_a_url_s_password(tmp_path, monkeypatch, capsys):
    """Battery 33 nit: `--option base_url=http://user:KEY@host` beside --base-url was refused with the key
    printed on the terminal."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o", "--base-url",
                 "http://127.0.0.1:9/v1", "--option", "base_url=http://user:sk-NOT-SHOWN@127.0.0.1:8/v1"]) == 2
    error = _one_error(capsys, "run")
    assert "sk-NOT-SHOWN" not in error and error.endswith(
        "--option base_url=http://<redacted>@127.0.0.1:8/v1 and --base-url name the same setting twice; give it once")
