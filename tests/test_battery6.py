"""Battery 6 (issue 23): what a user changes by hand is read as it is now, or named; never answered
from what was there before."""
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ihbench.cli import main
from test_battery4_files import _one_error


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


def _set_goal(parquet, goal):
    table = pq.read_table(parquet)
    goals = table.column("goal").to_pylist()
    goals[0] = goal
    pq.write_table(table.set_column(table.schema.get_field_index("goal"), "goal", pa.array(goals)), parquet)


def _goal(folder):
    from ihbench.dataset.load import load_conversations

    return load_conversations(folder)[0].goal


# --- finding 3: a hand-edited file is not answered from the `datasets` cache --------------------

@pytest.fixture
def content_named(official):
    """The official fixture with its conversations file named by its bytes, as `ihbench build` names them."""
    from ihbench.dataset.content_names import name_by_content

    name_by_content(official / "conversations" / "test-00000-of-00001.parquet", "test")
    return official


@pytest.mark.parametrize("command", [["info", "{data}"], ["publish-dataset", "{data}", "--repo", "me/x", "--dry-run"],
                                     ["export", "{data}", "--out", "{tmp}/exported"]])
def test_a_built_file_edited_since_it_was_read_is_named_not_served_from_the_cache(command, content_named, tmp_path,
                                                                                    capsys):
    assert _goal(content_named) == "Move a line to a new plan"  # the cache now holds it
    parquet = next((content_named / "conversations").glob("test-*.parquet"))
    _set_goal(parquet, "EDITED GOAL")
    capsys.readouterr()
    argv = [part.format(data=content_named, tmp=tmp_path) for part in command]
    assert main(argv) == 2
    error = _one_error(capsys, command[0])
    assert f"{parquet}: changed since it was written (its name holds the hash of the bytes written" in error
    assert "; rebuild the dataset (`ihbench build`) or copy it again" in error
    assert not (tmp_path / "exported").exists()


def test_an_imported_config_edited_since_is_mended_by_its_import_not_a_rebuild(tmp_path, capsys):
    """Battery 42's nit: a sid-import config changed by hand was to be mended by "rebuild the dataset",
    which does not bring an imported config back."""
    import numpy as np
    from test_battery5_files import _sid_noise

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01)})
    out = tmp_path / "d"
    assert main(["sid-import", str(root), "--out", str(out), "--quiet"]) == 0
    parquet = next((out / "sid_noise").glob("test-*.parquet"))
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(parquet), parquet, compression="gzip")  # the same rows in other bytes
    capsys.readouterr()
    assert main(["sid", "--data", str(out), "--config", "sid_noise", "--detector", "energy", "--out",
                 str(tmp_path / "s"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "changed since it was written" in error and "import it again (`ihbench sid-import`)" in error, error


def test_a_copy_of_an_edited_build_under_the_same_folder_name_elsewhere_is_refused_too(content_named, tmp_path):
    from ihbench.dataset.load import DataSourceError

    _goal(content_named)
    elsewhere = tmp_path / "alt" / "official"
    shutil.copytree(content_named, elsewhere)
    _set_goal(next((elsewhere / "conversations").glob("test-*.parquet")), "EDITED GOAL")
    with pytest.raises(DataSourceError, match="changed since it was written"):
        _goal(elsewhere)
    assert _goal(content_named) == "Move a line to a new plan"  # the untouched one still reads


def test_a_file_not_named_by_its_bytes_is_read_as_it_is_now_each_folder_its_own(official, tmp_path):
    """The official layout's names (`test-00000-of-00001.parquet`) say nothing of the bytes: the cache
    is remade when the files it was made from changed, and two folders of one name never share rows.
    (With a card naming the file exactly, as builds do, `datasets` keys its cache on the name alone.)"""
    card = official / "README.md"
    card.write_text(card.read_text().replace("conversations/test-*", "conversations/test-00000-of-00001.parquet"))
    parquet = official / "conversations" / "test-00000-of-00001.parquet"
    assert _goal(official) == "Move a line to a new plan"
    _set_goal(parquet, "EDITED GOAL")
    assert _goal(official) == "EDITED GOAL"
    elsewhere = tmp_path / "alt" / "official"
    shutil.copytree(official, elsewhere)
    _set_goal(elsewhere / "conversations" / "test-00000-of-00001.parquet", "ANOTHER GOAL")
    assert _goal(elsewhere) == "ANOTHER GOAL"
    assert _goal(official) == "EDITED GOAL"
    assert _goal(official) == "EDITED GOAL"  # read twice: the second from the cache, now recorded as this folder's


# --- finding 2: answers without a verdict are explained by what the judge asked, never a guess ----

def _report_warnings(capsys, run, tmp_path) -> list[str]:
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    return [line for line in capsys.readouterr().err.splitlines() if "have no" in line]


def test_answers_waiting_in_a_judge_batch_are_said_to_wait_there_with_the_unusable_answers_counted(
        official, tmp_path, capsys):
    import json

    from judging import ScriptedJudge
    from test_battery_round3 import _answered
    from test_verify_judge_batch import _batch_answers

    run = _answered(official, tmp_path / "run")
    folder = tmp_path / "questions"
    judge = ["judge", str(run), "--judge-model", "j", "--judge-batch", str(folder), "--cache",
             str(tmp_path / "c.sqlite"), "--quiet"]
    assert main(judge) == 1
    warnings = _report_warnings(capsys, run, tmp_path)
    assert len(warnings) == 1 and f"(their questions wait in the batch folder {folder})" in warnings[0], warnings
    assert (f"answer {folder / 'requests.jsonl'} and run `ihbench judge {run} --judge-model j --judge-batch {folder}` "
            "again") in warnings[0]

    _batch_answers(folder / "requests.jsonl", folder / "out.jsonl", ScriptedJudge(faults=False))
    answers = [json.loads(line) for line in (folder / "out.jsonl").read_text().splitlines()]
    for answer in answers[:2]:  # two answers the judge cannot use: asked again, and said so
        answer["response"]["body"]["choices"][0]["message"]["content"] = "\u200b\u200b"
    (folder / "out.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    capsys.readouterr()
    assert main(judge) == 1
    said = capsys.readouterr().out
    assert "2 question(s) (2 had an answer that could not be used (e.g. " in said and ": asked again) wait" in said, said
    warnings = _report_warnings(capsys, run, tmp_path)
    assert len(warnings) >= 1 and all(f"(their questions wait in the batch folder {folder}; 2 of the judge's questions "
                                      "had a batch answer that could not be used and were asked again)" in w
                                      for w in warnings), warnings
    assert not any("answered after" in w or "--axes" in w for w in warnings), warnings


def test_the_causes_the_report_names_are_the_judge_s_own_record(official, tmp_path, capsys):
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    from ihbench.judge.asked import asked_path

    run = _answered(official, tmp_path / "run", "--limit", "2")
    assert ["the run was not judged" in w for w in _report_warnings(capsys, run, tmp_path)] == [True]
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        judge = ["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                 str(tmp_path / "c.sqlite"), "--quiet"]
        assert main([*judge, "--axes", "tf"]) == 0
    warnings = _report_warnings(capsys, run, tmp_path)
    assert len(warnings) == 1 and "no RQ judgment yet (the last judge ran with --axes tf)" in warnings[0]
    assert f"`ihbench judge {run} --axes rq` judges only those" in warnings[0]
    _answered(official, run, "--limit", "3", "--allow-endpoint-change")  # one answer more, after the judge
    warnings = _report_warnings(capsys, run, tmp_path)
    assert sorted(w.split(": ", 3)[-1].split(" and are")[0] for w in warnings) == [
        "1 answer(s) have no judgment yet (answered after the last `ihbench judge`)",
        "2 answer(s) have no RQ judgment yet (the last judge ran with --axes tf)"], warnings
    asked_path(run / "judgments.jsonl").unlink()  # a judge stopped midway (or an older version): no cause known
    warnings = _report_warnings(capsys, run, tmp_path)
    assert len(warnings) == 1 and "what the last judge asked is not known" in warnings[0], warnings


# --- left by battery 6: one --judge-batch folder shared by two commands -------------------------

def test_a_batch_folder_shared_by_two_runs_keeps_both_runs_questions_and_one_command_at_a_time(
        official, tmp_path, capsys):
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer, Reply
    from test_battery_round3 import _answered
    from test_verify_judge_batch import _batch_answers

    from ihbench.dataset.io import exclusive, lock_file_for
    from ihbench.llm.batch import REQUESTS

    first = _answered(official, tmp_path / "first")
    with OpenAITestServer(respond=lambda body: Reply(content="Another model's answer.")) as server:  # other questions
        second = tmp_path / "second"
        assert main(["run", "--model", "openai", "--model-path", "m2", "--data", str(official), "--out", str(second),
                     "--epochs", "1", "--base-url", server.base_url, "--quiet", "--limit", "1"]) == 0
    folder = tmp_path / "questions"

    def judge(run, model="j"):
        capsys.readouterr()
        code = main(["judge", str(run), "--judge-model", model, "--judge-batch", str(folder), "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"])
        said = capsys.readouterr()
        return code, said.out + said.err

    def asked():
        return len((folder / REQUESTS).read_text().splitlines()) if (folder / REQUESTS).exists() else 0

    assert judge(first)[0] == 1
    of_first = asked()
    code, said = judge(second)
    of_second = asked() - of_first
    assert code == 1 and of_second > 0, said  # the first run's questions were not dropped
    assert f"it also keeps {of_first} question(s) another command asked" in said, said
    code, said = judge(first, model="j2")  # another judge model: the earlier model's questions stay, and are said
    assert code == 1 and asked() == 2 * of_first + of_second
    assert f"it also keeps {of_first + of_second} question(s) another command asked" in said, said

    with exclusive(lock_file_for(folder), "a test holding the folder"):
        code, said = judge(first)
        assert code == 2 and f"batch folder {folder} is in use by another process" in said, said
    _batch_answers(folder / REQUESTS, folder / "out.jsonl", ScriptedJudge(faults=False))
    assert judge(first)[0] == 0 and judge(second)[0] == 0
    assert not (folder / REQUESTS).exists()  # every question answered: nothing left to submit
    assert not lock_file_for(folder).exists()


def test_sid_into_an_out_holding_another_detector_s_results_is_refused_a_rerun_is_not(tmp_path, capsys):
    import shutil

    import numpy as np
    from test_battery5_files import _sid_noise

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "n1.wav": np.full(24_000, 0.02)})
    out = tmp_path / "s"

    def sid(data, detector="energy"):
        return main(["sid", "--data", str(data), "--config", "sid_noise", "--detector", detector, "--out", str(out),
                     "--quiet"])

    assert sid(root) == 0 and sid(root) == 0  # the same scoring again: a rerun replaces its own results
    before = (out / "summary.json").read_bytes()
    other = tmp_path / "other"
    shutil.copytree(root, other)
    capsys.readouterr()
    assert sid(other) == 2
    assert _one_error(capsys, "sid") == (f"ihbench sid: error: --out: {out} holds the results of the detector energy "
                                         f"on sid_noise of {root}; this command would replace them with another's: "
                                         "give another --out (or remove that folder first)")
    assert sid(root, "silero-vad") == 2
    assert (out / "summary.json").read_bytes() == before
