"""Battery 64 (issue 23): findings K… of the sixty-fourth battery of bad inputs, tried on an installed wheel as a new
user would (/work/battery64/LOG.md). Each test's docstring names its finding. (K8 is in test_space.py.)"""
import json
import os

import pytest

from ihbench.cli import main

#: 32 letters and digits drawn at random once (the same in every test process): no key of anyone's
RANDOM_KEY = "FVodZ7hkm0qXPPQHoinwQRpbgh7TpETt"


def _seal(record: dict) -> str:
    """A response line's `check`, as `ResponseRecord.digest` makes it."""
    import hashlib

    payload = [record["id"], record["epoch"], record.get("item_hash"), record["response"], record["error"]]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def _refused(command: str, run, tmp_path, capsys) -> str:
    """What `report` or `judge` (against no judge: it never gets that far) says refusing `run`, with exit 2."""
    argv = ["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"] if command == "report" else \
        ["judge", str(run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--cache",
         str(tmp_path / "c.sqlite"), "--quiet"]
    assert main(argv) == 2
    return capsys.readouterr().err


def _run_answering(answer: str, root, **reply) -> int:
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer, Reply

    data = write_official_layout(root / "official")
    with OpenAITestServer(respond=lambda body: Reply(content=answer, **reply)) as server:
        return main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--out", str(root / "r"), "--limit", "1", "--epochs", "1", "--option",
                     "max_retries=0", "--quiet"])


@pytest.mark.parametrize("answer", ["\ufffd\ufffd", "...", "?!", "\udc00\udc00"])
def test_an_answer_without_a_letter_or_digit_is_a_failed_item(answer, tmp_path, capsys):
    """K1 (P2): an answer of only U+FFFD (bytes no one could decode, or lone surrogates the client turned into them)
    or of only punctuation was written as an answer, judged and scored."""
    assert _run_answering(answer, tmp_path) == 1
    record = json.loads((tmp_path / "r" / "responses.jsonl").read_text().splitlines()[0])
    assert record["response"] is None and "EmptyReplyError" in record["error"], record
    assert "no letter or digit" in record["error"]


@pytest.mark.parametrize("answer", ["Yes.", "42", "Sure, one moment… ✅", "はい、承知しました。"])
def test_a_short_answer_with_a_word_or_number_is_kept(answer, tmp_path):
    """K1's other side: a word, a number or a non-Latin script is an answer, with its punctuation and symbols."""
    assert _run_answering(answer, tmp_path) == 0
    assert json.loads((tmp_path / "r" / "responses.jsonl").read_text().splitlines()[0])["response"] == answer


@pytest.mark.parametrize("deficiency", ["no problems at all", "neither has issues", "they are equivalent", "tie",
                                        "both are good", "no real difference", "N/A - both responses are fine",
                                        "nothing worth mentioning", "no notable weakness", "no issue found",
                                        "none found", "nothing to note", "no significant deficiency",
                                        "no clear deficiency", "both responses are acceptable",
                                        # battery 65, L1: however the sentence goes on
                                        "nothing stands out", "no deficiency worth noting", "there is nothing missing",
                                        "both handle it",
                                        # battery 66, M1: a fault denied, or the loser called fine, anywhere
                                        "there's nothing wrong with it", "it is perfectly fine", "it does nothing wrong",
                                        "the loser is fine too", "hard to fault", "it\u2019s fine", "it's fine",
                                        "no big deal", "it is also correct", "doesn't lack anything",
                                        "can't find a flaw", "there isn't a deficiency", "I could not find any issue",
                                        "does not have any problems", "lacks nothing",
                                        # battery 67, N1: praise, a fault not found, typos, other languages
                                        "Flawless", "Zero issues", "cannot find fault", "I don't see anything wrong",
                                        "perfectly acceptable", "Good job", "It does everything right",
                                        "couldn't find anything", "Looks right to me", "alright", "Equivalent quality",
                                        "no omissions", "did nothing incorrect", "the loser is just as good",
                                        "no deficency", "Keine Mängel", "ningún defecto", "Nope"])
def test_a_deficiency_that_says_there_is_none_is_refused(deficiency):
    """K2 (P2): TF verdicts whose loser_deficiency says the loser has none ("tie", "neither has issues") were scored
    as wins; only the exact phrases of battery 63 (J4) were refused."""
    from ihbench.judge.parse import InvalidJudgment, check_deficiency

    with pytest.raises(InvalidJudgment, match="names no concrete deficiency"):
        check_deficiency(deficiency)


@pytest.mark.parametrize("deficiency", ["rude", "no greeting", "doesn't answer", "has no apology", "asks again",
                                        "grammatical errors", "misses the date", "does not mention the refund",
                                        "neither confirms nor denies the refund", "bothers the caller twice",
                                        "without an apology", "fine otherwise but ignores the correction",
                                        "nothing wrong except it repeats the greeting", "says the wrong date",
                                        "is rude to the caller", "sounds robotic and repeats itself",
                                        "doesn't fix the error", "does not correct the mistake", "lacks an apology",
                                        "has a factual error", "factually correct but ignores the correction",
                                        "leaves a gap in the steps", "gives the same answer twice",
                                        "misses the issue the caller raised"])
def test_a_deficiency_naming_what_the_loser_does_is_kept(deficiency):
    from ihbench.judge.parse import check_deficiency

    assert check_deficiency(deficiency) == deficiency


def test_a_judge_answer_cut_by_its_server_s_limit_is_a_judge_error(tmp_path, capsys):
    """K3 (P3): a TF judge's answer sent with finish_reason "length" was scored; no budget is asked of a judge, so its
    server's own limit cut it (as run refuses the model's answer cut so)."""
    from judged_runs import judged_run
    from openai_test_server import OpenAITestServer, Reply

    run = judged_run(tmp_path, limit=1)
    answer = json.dumps({"winner": "A", "loser_deficiency": "ignores the correction", "reasoning": "x"})
    with OpenAITestServer(respond=lambda body: Reply(content=answer, finish_reason="length")) as server:
        main(["judge", str(run), "--judge-model", "j2", "--judge-base-url", server.base_url, "--axes", "tf", "--out",
              str(run / "judgments-j2.jsonl"), "--cache", str(tmp_path / "c2.sqlite"), "--quiet"])
    records = [json.loads(line) for line in (run / "judgments-j2.jsonl").read_text().splitlines()]
    assert records and all(r["outcome"] == "judge_error" for r in records), records
    assert "finish_reason 'length'" in records[0]["error"]


ANSWER_WITH_CREDENTIALS = (f"url=https://alice:S3cretPassw0rd@api.example.com/v1 | postgres://admin:pa55word@db:5432/x "
                           f"| rand32={RANDOM_KEY} | sk-ant-api03-AbCdEfGhIjKlMnOpQrSt")
SECRETS = (b"S3cretPassw0rd", b"pa55word", RANDOM_KEY.encode(), b"AbCdEfGhIjKlMnOpQrSt", b"alice", b"admin:")


def test_an_answer_quoting_a_url_password_or_a_random_key_is_written_without_it(tmp_path):
    """K4 (P1): a model's answer holding a URL's user part, 32 random letters and digits or an Anthropic key spelled in
    alphabet order was written to responses.jsonl in clear (only prefixed keys and environment secrets were hidden)."""
    assert _run_answering(ANSWER_WITH_CREDENTIALS, tmp_path) == 0
    written = (tmp_path / "r" / "responses.jsonl").read_bytes()
    assert b"<redacted>" in written and not any(secret in written for secret in SECRETS), written
    assert b"api.example.com/v1" in written  # the address itself is the answer's


def test_a_judge_answer_quoting_a_url_password_or_a_random_key_is_written_and_cached_without_it(tmp_path):
    """K4 (P1), the judge's side: judgments.jsonl and the judge's cache held them in clear."""
    from judged_runs import judged_run
    from openai_test_server import OpenAITestServer, Reply

    run = judged_run(tmp_path, limit=1)
    answer = json.dumps({"winner": "B", "loser_deficiency": f"repeats {ANSWER_WITH_CREDENTIALS}",
                         "reasoning": ANSWER_WITH_CREDENTIALS})
    with OpenAITestServer(respond=lambda body: Reply(content=answer)) as server:
        main(["judge", str(run), "--judge-model", "j2", "--judge-base-url", server.base_url, "--axes", "tf", "--out",
              str(run / "judgments-j2.jsonl"), "--cache", str(tmp_path / "c2.sqlite"), "--quiet"])
    written = (run / "judgments-j2.jsonl").read_bytes() + (tmp_path / "c2.sqlite").read_bytes()
    assert b"<redacted>" in written and not any(secret in written for secret in SECRETS)


@pytest.mark.parametrize("argv, shown", [
    (["report", "RUN", "--model-name", "RUN=a\u17b4b"], "a\\u17b4b"),
    (["publish-metrics", "--namespace", "me\u3164", "--dry-run"], "me\\u3164"),
])
def test_a_refused_name_shows_an_invisible_character_by_its_code(argv, shown, tmp_path, capsys):
    """K5, K7 (P3): `report --model-name` and `publish-metrics --namespace` quoted U+17B4 and U+3164 raw."""
    (tmp_path / "run").mkdir()
    argv = [word.replace("RUN", str(tmp_path / "run")) for word in argv]
    assert main([*argv, "--staging-dir", str(tmp_path / "stage")] if "publish-metrics" in argv else argv) == 2
    assert shown in capsys.readouterr().err
    assert not (tmp_path / "stage").exists()


@pytest.mark.parametrize("name", ["sk-proj-Ab3dE5fG7hAb3dE5fG7hAb3dE5fG7hAb3d", "RUN=sk-proj-Ab3dE5fG7hAb3dE5fG7hAb3d\u200b"])
def test_a_model_name_holding_a_key_is_never_quoted_whatever_else_is_wrong(name, tmp_path, capsys):
    """Found beside K5: a --model-name without `=`, or with an invisible character, was quoted whole in its refusal,
    a key in it too."""
    (tmp_path / "run").mkdir()
    assert main(["report", str(tmp_path / "run"), "--model-name", name.replace("RUN", str(tmp_path / "run"))]) == 2
    err = capsys.readouterr().err
    assert "a credential; not shown" in err and "Ab3dE5fG7h" not in err


@pytest.mark.parametrize("command", ["report", "judge"])
@pytest.mark.parametrize("link", ["loop", "nothing"])
def test_a_responses_file_that_is_a_symlink_loop_or_a_link_to_nothing_is_said_so(command, link, tmp_path, capsys):
    """K6 (P3): responses.jsonl linked to itself was said "missing ... the run's answers are gone; run again into a
    new folder"; the link is what is wrong."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    (run / "responses.jsonl").unlink()
    os.symlink("responses.jsonl" if link == "loop" else "gone.jsonl", run / "responses.jsonl")
    capsys.readouterr()
    err = _refused(command, run, tmp_path, capsys)
    assert ("a symlink loop" if link == "loop" else "a link to nothing (to gone.jsonl)") in err, err
    assert "Traceback" not in err and "answers are gone" not in err


def test_a_refused_config_name_shows_an_invisible_character_by_its_code(tmp_path, capsys):
    """K7's addendum: `convbench-import --name 'x<U+17B4>'` was quoted raw ("got 'x'", 2 characters)."""
    (tmp_path / "bench").mkdir()
    assert main(["convbench-import", str(tmp_path / "bench"), "--out", str(tmp_path / "ds"), "--name", "x\u17b4"]) == 2
    assert "got 'x\\u17b4' (2 character(s))" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["bench"]


def test_set_baseline_refuses_a_run_whose_answer_holds_a_credential(tmp_path, capsys):
    """K10 (P2): set-baseline copied a run's answers holding a URL password and a random key into a new dataset's
    Parquet, which only publish-dataset refused later. (Runs written now hide them, K4: this run's line is an older
    run's, written by hand.)"""
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    responses = tmp_path / "r" / "responses.jsonl"
    records = [json.loads(line) for line in responses.read_text().splitlines()]
    edited = next(r for r in records if r["epoch"] == 0)
    edited["response"] = f"log in at https://alice:S3cretPassw0rd@api.example.com with {RANDOM_KEY}"
    edited["check"] = _seal(edited)  # written as the run writes it: a line of an older run, not a changed one
    responses.write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["set-baseline", str(tmp_path / "r"), "--data", str(data), "--out", str(tmp_path / "b"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"the answer to {edited['id']} (epoch 0) holds a URL with a user part" in err
    assert "(a credential; not shown)" in err and "S3cretPassw0rd" not in err and RANDOM_KEY not in err
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("field, value", [("text_with_break", "<break> key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv"),
                                          ("text_with_break", "<break> https://bob:hunter2pass@x.com"),
                                          ("audio", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv.wav")])
def test_sid_import_refuses_a_credential_in_a_clip_s_name_or_text(field, value, tmp_path, capsys):
    """K11 (P1): a SID-Bench folder whose line held a provider's key or a URL password (in its text, or as a clip's
    file name) was imported into the dataset's Parquet in clear."""
    from test_report_cross import write_sid_folder

    root = write_sid_folder(tmp_path / "sid")
    lines_file = root / "test_wavs" / "en_test_lines.jsonl"
    rows = [json.loads(line) for line in lines_file.read_text().splitlines()]
    if field == "audio":
        (root / "test_wavs" / "en" / rows[0]["audio"]).rename(root / "test_wavs" / "en" / value)
    rows[0][field] = value
    lines_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["sid-import", str(root), "--out", str(tmp_path / "ds"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"en_test_lines.jsonl line 1: {field} holds" in err and "(a credential; not shown)" in err, err
    assert "Ab3dEf6hIj" not in err and "hunter2pass" not in err
    assert not (tmp_path / "ds").exists()


def test_a_refused_sid_import_leaves_the_dataset_s_folder_untouched(tmp_path, capsys):
    """K12 (P3): a clip that is no audio was found while the Parquet was being written inside the dataset: the
    refused import changed the dataset folder's modification time (files made and removed there)."""
    from official_layout import write_official_layout
    from test_report_cross import write_sid_folder

    data = write_official_layout(tmp_path / "official")
    root = write_sid_folder(tmp_path / "sid")
    (root / "test_wavs" / "en" / "clip3.wav").write_text("not audio")
    before = sorted(p.name for p in tmp_path.iterdir())
    os.utime(data, (1_000_000, 1_000_000))
    assert main(["sid-import", str(root), "--out", str(data), "--quiet"]) == 2
    assert "clip3.wav is not a readable audio file" in capsys.readouterr().err
    assert os.stat(data).st_mtime == 1_000_000 and sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_sid_import_still_imports_and_says_its_clips(tmp_path, capsys):
    """K12's other side: checked first, the clips are still written whole, and load as audio."""
    import datasets

    from test_report_cross import write_sid_folder

    root = write_sid_folder(tmp_path / "sid")
    assert main(["sid-import", str(root), "--out", str(tmp_path / "ds"), "--quiet"]) == 0
    rows = datasets.load_dataset(str(tmp_path / "ds"), "sid_en", split="test")
    assert len(rows) == 4 and rows[0]["audio"]["array"].size > 0 and rows[0]["audio_file"] == "clip0.wav"


def test_traceback_hides_the_credentials_its_error_line_hides(tmp_path, capsys, monkeypatch):
    """K13 (P1): with --traceback, the error line said `<redacted>.flac`, and the traceback printed above it (meant to
    be sent with a bug report) held the provider's key, an environment secret's value, an AWS key id in clear."""
    from test_report_cross import write_sid_folder

    monkeypatch.setenv("MY_SERVICE_TOKEN", "Tq8WzL3nV6pR2xK9")
    root = write_sid_folder(tmp_path / "sid")
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"audio": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv.flac", "total_nonbreak": False,
                                       "break_time": 1.0}) + "\n" +
                           json.dumps({"audio": "clip1.wav", "total_nonbreak": "Tq8WzL3nV6pR2xK9 AKIAIOSFODNN7EXAMPLQ",
                                       "break_time": 1.0}) + "\n")
    capsys.readouterr()
    assert main(["sid", "--data", str(root), "--config", "sid_en", "--predictions", str(predictions), "--out",
                 str(tmp_path / "out"), "--traceback", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "<redacted>" in err
    assert "Ab3dEf6hIj" not in err and "Tq8WzL3nV6pR2xK9" not in err and "IOSFODNN7" not in err, err


def test_a_judgment_whose_deficiency_names_none_is_left_out_by_report(tmp_path, capsys):
    """K14 (P3): a TF judgment whose loser_deficiency was edited from "rude" to "no issues" was scored by report; the
    line's check covers the verdict, not the deficiency's words."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    judgments = run / "judgments.jsonl"
    records = [json.loads(line) for line in judgments.read_text().splitlines()]
    edited = next(r for r in records if r["axis"] == "tf" and r["outcome"] == "judged")
    edited["loser_deficiency"] = "no issues"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    main(["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10", "--quiet"])
    err = capsys.readouterr().err
    assert "judgments.jsonl line" in err and "names no concrete deficiency" in err, err


@pytest.mark.parametrize("command", ["report", "judge"])
def test_a_responses_file_of_one_cut_line_is_said_as_cut(command, tmp_path, capsys):
    """Battery 65, L3 (P2): responses.jsonl holding only its first line, cut mid-line, was said "every line is left
    out (said above) ... the lines are not of the run run.json describes (edited by hand, or copied)": nothing was
    said above, and nothing was edited or copied."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=2)
    responses = run / "responses.jsonl"
    responses.write_bytes(responses.read_bytes()[:120])
    capsys.readouterr()
    err = _refused(command, run, tmp_path, capsys)
    assert "responses.jsonl: its line 1 is cut mid-line" in err and "copied from another run" not in err, err


def test_a_pretty_printed_json_file_given_for_json_lines_is_said_so(tmp_path):
    """Battery 65, L5 (P3): `turns --transcripts` given one JSON document over several lines said only "line 1: not
    valid JSON (Expecting property name ...)", of a file `python -m json.tool` reads."""
    from ihbench.dataset.io import json_lines

    pretty = tmp_path / "t.json"
    pretty.write_text(json.dumps({"turns": [{"user": "hi"}]}, indent=2) + "\n")
    with pytest.raises(ValueError, match=r"line 1: not valid JSON \(.*\): the file is one JSON document over 7 lines, "
                                         r"not JSON Lines \(one JSON object per line\)$"):
        list(json_lines(pretty, ValueError))
    broken = tmp_path / "b.jsonl"
    broken.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(ValueError, match=r"line 2: not valid JSON \([^)]*\)$"):  # a damaged line: said as one
        list(json_lines(broken, ValueError))


def test_the_space_says_the_judge_error_of_the_judge_just_asked(tmp_path):
    """Battery 65, L9 (P2): the Space's Judge button said the first judge_error of the run's judgments file, an earlier
    judge's (finish_reason 'length'), for every later judge whose own failure (an empty answer) was never said."""
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer, Reply

    from ihbench import ui

    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--out", str(tmp_path / "r"), "--limit", "1", "--epochs", "1", "--quiet"]) == 0
    said = {}
    for judge, reply in (("cut", Reply(content='{"winner": "A"}', finish_reason="length")), ("empty", Reply(content=""))):
        with OpenAITestServer(respond=lambda body, reply=reply: reply) as server:
            with pytest.raises(ui.UserError) as error:
                ui.judge_run_dir(str(tmp_path / "r"), server.base_url, judge)
        said[judge] = str(error.value)
    assert "finish_reason 'length'" in said["cut"]
    assert "finish_reason" not in said["empty"] and "the judge returned no usable verdicts" in said["empty"], said


def test_the_space_s_detect_tab_refuses_a_clip_cut_short(tmp_path):
    """Battery 65, L8 (P2): a WAV whose header gives 3 s and whose file holds 4 samples was detected ("no interruption
    request in this clip"), where the Turns tab and `ihbench turns` refuse it as cut short."""
    import numpy as np
    import soundfile

    from ihbench import ui

    whole = tmp_path / "whole.wav"
    tone = 0.3 * np.sin(2 * np.pi * 220 * np.arange(48000) / 16000).astype(np.float32)
    soundfile.write(whole, tone, 16000, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[:52])
    with pytest.raises(ui.UserError, match="cut.wav .*: cut short: its header gives 3.00 s"):
        ui.detect("energy", str(cut), None)
    figure, result = ui.detect("energy", str(whole), None)
    assert set(result["prediction"]) == {"total_nonbreak", "break_time"}


@pytest.mark.parametrize("linked", ["data/knowledge_base.txt", "turns.py"])
def test_a_benchmark_file_that_is_a_symlink_loop_is_one_line(linked, tmp_path, capsys):
    """Battery 65, L12 (P2): a benchmark's knowledge base (or turns.py) linked to itself ended convbench-import and
    verify in pathlib's RuntimeError traceback."""
    import shutil

    from conftest import REPO

    bench = tmp_path / "bench"
    shutil.copytree(REPO / "ihbench_dataset" / "sources" / "convbench" / "convbench_dev", bench)
    (bench / linked).unlink()
    os.symlink(os.path.basename(linked), bench / linked)
    capsys.readouterr()
    assert main(["convbench-import", str(bench), "--out", str(tmp_path / "ds"), "--name", "cb_loop",
                 "--text-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{linked}: is a symlink loop (its links point at each other)" in err and "Traceback" not in err, err
    assert not (tmp_path / "ds").exists()


def test_a_model_file_that_is_a_symlink_loop_is_said_as_one(tmp_path):
    """Battery 65, L13 (P3): a model folder's config.json linked to itself was "a link to nothing"."""
    from ihbench.loaders.base import ModelFolderError, check_model_folder

    (tmp_path / "m").mkdir()
    os.symlink("config.json", tmp_path / "m" / "config.json")
    with pytest.raises(ModelFolderError, match=r"config.json: not a regular file \(a symlink loop: its links point"):
        check_model_folder(tmp_path / "m")


@pytest.mark.parametrize("answer, yes, no", [("Yeah.", True, False), ("\uff59\uff45\uff53", True, False),
                                             ("yep", True, False), ("Nope.", False, True),
                                             ("Yeah, no", False, False), ("No - 'yeah' is a backchannel", False, True),
                                             # battery 66, M4: an invisible character before the word
                                             ("\u200bYes", True, False), ("\ufeffNo", False, True)])
def test_an_informal_yes_is_a_yes_as_an_informal_no_is_a_no(answer, yes, no):
    """Battery 65, L15 (P3): "Yeah." and full-width "ｙｅｓ" were failed calls while "Nope." was a no."""
    from ihbench.sid.detectors import says_no, says_yes

    assert (says_yes(answer), says_no(answer)) == (yes, no)


def test_doctor_refuses_context_options_without_data(tmp_path, capsys):
    """Battery 65, L10 (P3): `doctor --split x` without --data passed every check, as if the split had been checked."""
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    capsys.readouterr()
    assert main(["doctor", "--model", "qwen2-audio", "--model-path", str(model), "--split", "x"]) == 2
    assert "--split: only with --data" in capsys.readouterr().err


def test_sid_on_a_hub_id_it_cannot_read_says_so(tmp_path, monkeypatch, capsys):
    """Battery 65, L11 (P3): `sid --data bosonai/IHBench` said "got not found"."""
    monkeypatch.chdir(tmp_path)
    assert main(["sid", "--data", "bosonai/IHBench", "--config", "sid_dev_en", "--detector", "energy", "--out", "o",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "bosonai/IHBench: no such folder; expected a local dataset directory" in err
    assert "a Hub dataset is read once downloaded" in err and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("detector", ["", "nope"])
def test_sid_names_an_unknown_detector_before_comparing_with_earlier_results(detector, tmp_path, capsys):
    """Battery 66, M2 (P2): `sid --detector ''` into an --out of earlier sid results ended in a TypeError traceback;
    `--detector nope` was said as replacing the earlier detector's results."""
    from test_report_cross import write_sid_folder

    root = write_sid_folder(tmp_path / "sid")
    out = tmp_path / "out"
    assert main(["sid", "--data", str(root), "--config", "sid_en", "--detector", "energy", "--out", str(out),
                 "--quiet"]) == 0
    before = sorted((p.name, p.stat().st_mtime) for p in out.iterdir())
    capsys.readouterr()
    assert main(["sid", "--data", str(root), "--config", "sid_en", "--detector", detector, "--out", str(out),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"unknown detector {detector!r}; available: audio-llm, energy" in err and "Traceback" not in err, err
    assert sorted((p.name, p.stat().st_mtime) for p in out.iterdir()) == before


def test_a_run_s_records_file_pretty_printed_is_said_as_one_document(tmp_path, capsys):
    """Battery 66, M3 (P3): L5's case on a run's own responses.jsonl was said "edited or damaged, not torn"."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    records = [json.loads(line) for line in (run / "responses.jsonl").read_text().splitlines()]
    (run / "responses.jsonl").write_text(json.dumps(records, indent=2) + "\n")
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "responses.jsonl: line 1 is not valid JSON" in err and "the file is one JSON document over" in err, err


@pytest.mark.parametrize("argv", [["make-tiny-model", "qwen2-text", "--out", "MODEL/t"],
                                  ["export", "DATA", "--out", "MODEL/ex"],
                                  ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1",
                                   "--data", "DATA", "--out", "MODEL/run"]])
def test_an_output_inside_a_users_model_folder_is_refused(argv, tmp_path, capsys):
    """Battery 66, M5 (P1): --out inside a transformers checkpoint (config.json and weights, no marker of the
    toolkit's: the --model-path being run, say) was written there; inside a tiny model's folder it was refused."""
    from official_layout import write_official_layout

    from ihbench.loaders.tiny import make_tiny_model

    data = write_official_layout(tmp_path / "official")
    model = make_tiny_model("qwen2-text", tmp_path / "model")
    (model / "ihbench_tiny_model.json").unlink()  # a user's own checkpoint, as a download leaves it
    # weights by another name (battery 67, N2: Mistral's consolidated.safetensors was not known as a model's)
    (model / "model.safetensors").rename(model / "consolidated.safetensors")
    before = sorted(p.name for p in model.iterdir())
    argv = [word.replace("MODEL", str(model)).replace("DATA", str(data)) for word in argv]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"is inside {model}, a model folder (config.json and weights)" in err, err
    assert sorted(p.name for p in model.iterdir()) == before


@pytest.mark.parametrize("answer", ["<html><body>Error 502</body></html>", "<!DOCTYPE html><html>Bad gateway</html>",
                                    '{"error": "rate limited"}'])
def test_an_error_page_sent_as_an_answer_is_a_failed_item(answer, tmp_path):
    """Battery 67, N3 (P2): a completion whose text was a proxy's HTML error page or a JSON error object (status 200)
    was kept as the model's answer, judged and scored."""
    assert _run_answering(answer, tmp_path) == 1
    record = json.loads((tmp_path / "r" / "responses.jsonl").read_text().splitlines()[0])
    assert record["response"] is None and "MalformedReplyError" in record["error"], record


@pytest.mark.parametrize("key", ["sk-ant-api03-abcdefghijklmnopqrstuv", "sk-proj-abcdefghijklmnopqrstuv",
                                 "ghp_abcdefghijklmnopqrstuvwxyzabcdefghij", "gsk_abcdefghijklmnopqrstuvwxyz",
                                 "hf_abcdefghijklmnopqrstuvwxyzabcdefgh", "sk_live_abcdefghijklmnopqrstuvwx"])
def test_a_key_of_its_provider_s_prefix_is_one_whatever_its_letters(key):
    """Battery 67, N4 (P1): a key whose body after a prefix only keys carry was lower-case letters only was written
    (run.json, responses, a staged Space) and echoed; names after such prefixes (`xapp-slack-bot-config-version2`)
    stay names."""
    from ihbench.dataset.redaction import credential_in, hide_secrets_in_use

    assert credential_in(key) and hide_secrets_in_use(f"use {key} now") == "use <redacted> now"
    assert credential_in("xapp-slack-bot-config-version2") is None and credential_in("hf_hub_download_cache") is None
