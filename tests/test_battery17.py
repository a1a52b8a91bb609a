"""Battery 17 (issue 23): findings M… of the seventeenth battery of bad inputs, tried on an installed wheel as a
new user would (/work/battery17/LOG.md). Each test's docstring names its finding. The model under test and
the judges are STAND-INS (scripted OpenAI-compatible servers on loopback)."""
import json

import pytest
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from official_layout import write_official_layout


def test_runs_of_one_dataset_with_other_limits_are_said_to_answer_other_items(tmp_path, capsys):
    """Battery 17, M4: two runs of one dataset with --limit 2 and --limit 5 were said to have "used different
    data", as if the dataset had changed between them."""
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as server:
        for limit in ("1", "2"):
            assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                         str(tmp_path / f"r{limit}"), "--limit", limit, "--epochs", "1", "--quiet", "--base-url",
                         server.base_url]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r1"), str(tmp_path / "r2"), "--out", str(tmp_path / "rep"), "--quiet",
                 "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert f"these runs answered different items of {data} (--limit 1 / --limit 2)" in err, err
    assert "used different data" not in err


def test_two_judgments_files_by_one_judge_are_no_inter_judge_comparison(tmp_path, capsys):
    """Battery 17, M8: a second judgments file by the same judge and prompt (its answers from the cache) was
    reported as "inter-judge agreement 1.000", which reads as two judges agreeing."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, (("j", None), ("j", "judgments-again.jsonl")))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet", "--n-bootstrap", "10"]) == 0
    said = "judgments-again.jsonl is by the same judge as judgments.jsonl (j, prompt "
    assert said in capsys.readouterr().err
    text = (tmp_path / "rep" / "report.md").read_text()
    assert said in text and "| axis | n | agreement" not in text
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert "tf" not in summary["runs"][0]["inter_judge"] and "rq" not in summary["runs"][0]["inter_judge"]


@pytest.mark.parametrize("field", ["modality", "epochs", "generation", "seed", "endpoint"])
def test_a_run_json_missing_a_field_the_run_always_writes_is_refused(field, tmp_path, capsys):
    """Battery 17, M7: run.json with `modality` removed was reported with the model named "m1 (None)", its records
    unchecked against the run's modality; `run` then said "modality is None there", a value no option gives."""
    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run), "--limit", "1",
            "--epochs", "1", "--quiet"]
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
        info = json.loads((run / "run.json").read_text())
        info.pop(field)
        (run / "run.json").write_text(json.dumps(info))
        capsys.readouterr()
        for command in (["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"], [*argv, "--base-url",
                                                                                          server.base_url]):
            assert main(command) == 2
            err = capsys.readouterr().err
            assert f"{run / 'run.json'}: field {field!r} is missing; the run always writes it" in err, err


def test_a_run_goes_on_with_its_dataset_at_a_new_place(tmp_path, capsys):
    """Battery 17, M9: with the dataset moved, judge and report took `--data NEW`, but `run` refused it as "a
    different run" and the same options named a folder that is gone: only a symlink at the old place let
    the run go on (to retry its failed items, or answer more). Another dataset at the new place is refused."""
    import shutil

    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"

    def go(where, limit):
        return main(["run", "--model", "openai", "--model-path", "m", "--data", str(where), "--out", str(run),
                     "--limit", limit, "--epochs", "1", "--base-url", server.base_url])
    with OpenAITestServer() as server:
        assert go(data, "1") == 0
        moved = shutil.move(str(data), str(tmp_path / "moved"))
        import pyarrow as pa
        import pyarrow.parquet as pq

        other = write_official_layout(tmp_path / "other")
        other_card = other / "README.md"
        parquet = next((other / "conversations").glob("*.parquet"))
        table = pq.read_table(parquet)
        for column in [c for c in table.column_names if c.endswith("_tf_rubric")]:  # not the items it answered
            values = [None if v is None else "Another rubric." for v in table.column(column).to_pylist()]
            table = table.set_column(table.schema.get_field_index(column), column, pa.array(values, pa.string()))
        pq.write_table(table, parquet)
        capsys.readouterr()
        assert go(other, "1") == 2
        assert "is not the dataset the run answered (its items differ)" in capsys.readouterr().err
        assert go(moved, "2") == 0
        said = capsys.readouterr()
        assert f"named the dataset {data}, which is not there now; {moved} holds the items the run answered" in \
            said.err, said.err
        assert "1 response(s) written" in said.out and "1 already done" in said.out, said.out
    assert json.loads((run / "run.json").read_text())["data"] == str(moved)
    assert other_card.exists()


def test_report_names_only_the_option_given_and_refuses_a_model_name_on_two_lines(tmp_path, capsys):
    """Battery 17, M12 and M13: `report r1 --compare-judge F` was refused naming --config too, which was not given;
    `--model-name $'r1=x\\n# Evil heading'` put a heading of its own into report.md."""
    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r1"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run),
                     "--limit", "1", "--epochs", "1", "--quiet", "--base-url", server.base_url]) == 0
    (tmp_path / "cj.jsonl").write_text("{}\n")
    capsys.readouterr()
    assert main(["report", str(run), "--compare-judge", str(tmp_path / "cj.jsonl"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--compare-judge: for one ConversationBench run, and one run given here (it is not one)" in err, err
    assert "--config" not in err
    assert main(["report", str(run), "--model-name", f"{run}=x\n# Evil heading", "--out", str(tmp_path / "rep"),
                 "--quiet"]) == 2
    assert "the name holds a line break, a tab, a control character or a space other than the plain one" in \
        capsys.readouterr().err
    assert not (tmp_path / "rep").exists()


def test_a_run_whose_prompts_exceed_the_servers_clip_cap_is_refused_before_any_request(tmp_path, capsys):
    """Battery 17 (max_audio_clips=1 with every user turn heard): the run sent nothing that could succeed and
    ended with every item failed, each record saying what the options had already said. When no point fits,
    the run is refused before any request; when some do, those that do not are said once, up front."""
    data = write_official_layout(tmp_path / "official")  # its points hear 2, 1 and 4 user turns
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--epochs", "1", "--modality",
            "audio", "--option", "max_audio_clips=1", "--quiet"]
    with OpenAITestServer() as server:
        assert main([*argv, "--limit", "1", "--base-url", server.base_url, "--out", str(tmp_path / "r")]) == 2
        assert not server.requests and not (tmp_path / "r").exists()
        err = capsys.readouterr().err
        assert "--option max_audio_clips=1: the server takes at most 1 audio clip(s) per prompt, and even this " \
               "run's shortest prompt holds 2 (conv-a/2" in err and "--history-audio auto" in err, err
        assert main([*argv, "--limit", "3", "--base-url", server.base_url, "--out", str(tmp_path / "some")]) == 1
        assert "2 of 3 point(s) hold more user turns heard as audio than the server's 1 clip(s) per prompt" in \
            capsys.readouterr().err
        assert main([*argv, "--limit", "1", "--base-url", server.base_url, "--out", str(tmp_path / "r1"),
                     "--history-audio", "last:1"]) == 0


def test_sid_on_a_config_whose_card_path_leaves_the_dataset_names_the_card(built, tmp_path, capsys):
    """Battery 17, M17: `sid --config sid_dev_en` on a dataset whose card names ../out.parquet for it said the
    dataset "has no config 'sid_dev_en'", sending the user looking for a config that is there."""
    import shutil

    data = tmp_path / "d"
    data.mkdir()
    for name in ("README.md", "build_info.json"):
        shutil.copy(built / name, data / name)
    parquet = next((built / "sid_dev_en").glob("*.parquet"))
    shutil.copy(parquet, tmp_path / "out.parquet")
    card = data / "README.md"
    card.write_text(card.read_text().replace(f"path: sid_dev_en/{parquet.name}", "path: ../out.parquet"))
    assert main(["sid", "--detector", "energy", "--data", str(data), "--config", "sid_dev_en", "--limit", "2", "--out",
                 str(tmp_path / "s"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{card}: config 'sid_dev_en' names ../out.parquet, a path outside the dataset folder" in err, err
    assert not (tmp_path / "s").exists()


class _Filtered(OpenAITestServer):
    """A TEST DOUBLE of a provider that stops answers itself (HTTP 200, a stub of the answer, and the
    finish_reason `reason`: its content filter's, an upstream error's, an abort's)."""

    reason = "content_filter"

    def completion(self, body, *args, **kwargs):
        reply = OpenAITestServer.completion(body, "I", *args[1:], **kwargs)
        reply["choices"][0]["finish_reason"] = self.reason
        return reply


@pytest.mark.parametrize("reason", ["content_filter", "error", "abort", "ERROR", "error ", "content-filter",
                                    "SAFETY", "RECITATION", "timeout", {"type": "error"},
                                    # battery 53, Z9: reasons outside a list of bad ones were kept and scored
                                    "MALFORMED_FUNCTION_CALL", "pause_turn", "incomplete", "truncated", "stop\u0000"])
def test_an_answer_the_provider_stopped_by_its_content_filter_is_a_failed_item(reason, tmp_path, capsys):
    """Battery 17, M16: a 200 answer with finish_reason content_filter (content "I") was recorded as the model's
    answer, judged and scored (RQ 0.000), with nothing on record. Battery 48, U8: so were OpenRouter's
    "error" (an upstream failure mid-answer) and vLLM's "abort"; battery 49, V4: spelt otherwise ("ERROR",
    "content-filter"), Gemini's own ("SAFETY"), or not text at all."""
    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"
    server = _Filtered()
    server.reason = reason
    with server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run),
                     "--limit", "1", "--epochs", "1", "--option", "max_retries=0", "--quiet", "--base-url",
                     server.base_url]) == 1
    record = json.loads((run / "responses.jsonl").read_text().splitlines()[0])
    assert record["response"] is None
    assert record["error"].startswith("StoppedByProviderError: the server stopped the answer (finish_reason "
                                      f"{reason!r})"), record


@pytest.mark.parametrize("reason", ["stop", "STOP", "end_turn", "stop_sequence", "eos_token", None])
def test_an_answer_that_ended_as_the_model_meant_is_kept(reason, tmp_path):
    """The reasons of a normal end, as servers spell them, and none at all (a server that leaves it out)."""
    data = write_official_layout(tmp_path / "official")
    server = _Filtered()
    server.reason = reason
    with server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(tmp_path / "r"),
                     "--limit", "1", "--epochs", "1", "--option", "max_retries=0", "--quiet", "--base-url",
                     server.base_url]) == 0
    assert json.loads((tmp_path / "r" / "responses.jsonl").read_text().splitlines()[0])["response"] == "I"


class _AtBudget(OpenAITestServer):
    """A TEST DOUBLE whose every answer stops at the request's token budget (finish_reason "length")."""

    @staticmethod
    def completion(body, *args, **kwargs):
        reply = OpenAITestServer.completion(body, *args, **kwargs)
        reply["choices"][0]["finish_reason"] = "length"
        reply["usage"] = {"prompt_tokens": 10, "completion_tokens": body["max_tokens"],
                          "total_tokens": 10 + body["max_tokens"]}
        return reply


def test_answers_that_used_the_whole_token_budget_are_said_to_be_maybe_cut(tmp_path, capsys):
    """Battery 17, M16 (its `length` half): answers cut at --max-new-tokens were scored with no word anywhere, so a
    user could not tell the budget was too small."""
    data = write_official_layout(tmp_path / "official")
    with _AtBudget() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(tmp_path / "r"),
                     "--limit", "2", "--epochs", "1", "--max-new-tokens", "32", "--quiet", "--base-url",
                     server.base_url]) == 0
    assert "note: 2 answer(s) used the whole --max-new-tokens budget (32) and may be cut short" in \
        capsys.readouterr().out


class _CutEarly(OpenAITestServer):
    """A TEST DOUBLE of a server whose own limit (vLLM's --max-model-len) ends every answer after one token, with
    finish_reason "length" though the request allowed more."""


    def completion(self, body, *args, **kwargs):
        reply = OpenAITestServer.completion(body, "Sure, let me")
        reply["choices"][0]["finish_reason"] = "length"
        reply["usage"] = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
        return reply


def test_an_answer_the_server_cut_with_length_before_the_budget_is_a_failed_item(tmp_path):
    """Battery 54, A12: "length" was kept whatever the answer's length, so an answer the server's own context
    limit cut after one token was scored as whole, with no note (only answers at the budget are noted)."""
    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"
    with _CutEarly() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run),
                     "--limit", "1", "--epochs", "1", "--max-new-tokens", "32", "--option", "max_retries=0", "--quiet",
                     "--base-url", server.base_url]) == 1
    record = json.loads((run / "responses.jsonl").read_text().splitlines()[0])
    assert record["response"] is None
    assert record["error"] == ("StoppedByProviderError: the server stopped the answer (finish_reason 'length') after 1 "
                               "of the 32 tokens --max-new-tokens allows: its own context or limit ended it, not the "
                               "budget"), record


class _OddUsage(OpenAITestServer):
    """A TEST DOUBLE whose `usage` is `usage` (not an object, or absent) and whose finish_reason is `reason`."""

    usage: object = "1"
    reason = "stop"

    def completion(self, body, *args, **kwargs):
        reply = OpenAITestServer.completion(body, "Sure, let me")
        reply["choices"][0]["finish_reason"] = self.reason
        if self.usage is None:
            del reply["usage"]
        else:
            reply["usage"] = self.usage
        return reply


@pytest.mark.parametrize("usage", ["1", [1], 7, None, {"completion_tokens": None}])
@pytest.mark.parametrize("reason", ["stop", "length"])
def test_a_usage_of_any_shape_is_read_as_absent_and_length_without_a_count_is_noted(usage, reason, tmp_path, capsys):
    """Battery 55, B4: a `usage` that is not an object ended the run in a traceback (AttributeError); B5: `length`
    without a count to compare with the budget was kept with no note."""
    data = write_official_layout(tmp_path / "official")
    server = _OddUsage()
    server.usage, server.reason = usage, reason
    with server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(tmp_path / "r"),
                     "--limit", "2", "--epochs", "1", "--max-new-tokens", "32", "--option", "max_retries=0",
                     "--base-url", server.base_url]) == 0
    out = capsys.readouterr().out
    records = [json.loads(line) for line in (tmp_path / "r" / "responses.jsonl").read_text().splitlines()]
    assert [r["response"] for r in records] == ["Sure, let me"] * 2 and all(r["output_tokens"] is None for r in records)
    said = "note: 2 answer(s) used the whole --max-new-tokens budget (32) and may be cut short"
    assert (said in out) == (reason == "length"), out


@pytest.mark.parametrize("value", ["notaurl", "", "ftp://x/v1"])
def test_the_space_owners_endpoint_is_checked_before_serving(value, monkeypatch, capsys):
    """Battery 17, M18: IHBENCH_SPACE_ENDPOINT=notaurl started the Space; visitors were then asked for a server,
    the owner's endpoint and key never used, and the owner told nothing."""
    monkeypatch.setenv("IHBENCH_SPACE_ENDPOINT", value)
    assert main(["space", "--port", "18799", "--quiet"]) == 2
    assert "IHBENCH_SPACE_ENDPOINT: " in capsys.readouterr().err


def test_a_sid_clip_record_edited_by_hand_is_detected_again_never_scored(built, tmp_path, capsys):
    """Battery 17, M11: a prediction written into sid's resume file (clips.jsonl) by hand, one no model call
    produced, was scored as the detector's."""
    out = tmp_path / "s"
    argv = ["sid", "--detector", "energy", "--data", str(built), "--config", "sid_dev_en", "--limit", "3", "--out",
            str(out), "--quiet"]
    assert main(argv) == 0
    honest = (out / "predictions.jsonl").read_text()
    records = [json.loads(line) for line in (out / "clips.jsonl").read_text().splitlines()]
    records[0]["prediction"] = {"total_nonbreak": False, "break_time": 0.5}
    (out / "clips.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for name in ("summary.json", "predictions.jsonl"):
        (out / name).unlink()
    capsys.readouterr()
    assert main(argv) == 0
    assert "clips.jsonl line 1: its prediction does not match the check" in capsys.readouterr().err
    assert (out / "predictions.jsonl").read_text() == honest


def test_the_spaces_metrics_tab_scores_an_ihbench_judgments_file_as_judge_wrote_it(tmp_path):
    """Battery 17, M2: the toolkit's own judgments.jsonl (TF and RQ lines together) was refused by the Metrics tab
    with "predictions[1]: expected 'model', 'baseline' or 'tie', got 'fail'" (a 0-based index), though a
    ConversationBench run's judgments.jsonl was taken."""
    from judged_runs import judged_run

    from ihbench import ui

    run = judged_run(tmp_path)
    for metric, key in (("tf_win_rate", "tf_win_rate"), ("rq_pass_rate", "rq_pass_rate")):
        table = dict((row[0], row[1]) for row in ui.metrics_table(metric, str(run / "judgments.jsonl")))
        assert 0.0 <= table[key] <= 1.0 and table["n_items"] == 2, table


def test_the_metrics_tab_says_how_many_judge_errors_it_left_out_of_a_judgments_file(tmp_path):
    """Battery 37 nit: a judgments file of judged and judge_error lines was scored on the judged ones with no
    word of the others, as if the score were the whole file's (`ihbench report` and the Judge tab say it)."""
    from judged_runs import judged_run

    from ihbench import ui
    from ihbench.records import RECORD_FORMAT, JudgmentRecord

    run = judged_run(tmp_path)
    path = run / "judgments.jsonl"
    for key, metric in (("tf", "tf_win_rate"), ("rq", "rq_pass_rate")):
        assert dict((row[0], row[1]) for row in ui.metrics_table(metric, str(path)))["judge_errors"] == 0
    with path.open("a") as judgments:
        for number, axis in enumerate(("rq", "rq", "tf")):
            failed = JudgmentRecord(id=f"gone-{number}", epoch=0, axis=axis, outcome="judge_error", judge_model="j",
                                    error="TransportError", format_version=RECORD_FORMAT)
            judgments.write(json.dumps(failed.to_json()) + "\n")
    for metric, failed in (("tf_win_rate", 1), ("rq_pass_rate", 2)):
        table = dict((row[0], row[1]) for row in ui.metrics_table(metric, str(path)))
        assert table["judge_errors"] == failed and table["n_items"] == 2, table
