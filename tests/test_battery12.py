"""Battery 12 (issue 23): findings of the twelfth battery of bad inputs, tried on an installed wheel as a
new user would. Stand-ins are named where used (scripted OpenAI-compatible servers on loopback)."""
import re

import pytest
from metric_modules import load
from openai_test_server import OpenAITestServer
from test_battery10 import official  # noqa: F401 (fixture: a dataset in the official layout)
from test_convbench_judge import played, run  # noqa: F401 (fixtures: a judged-able ConversationBench run)

from ihbench.cli import main

BREAK = {"total_nonbreak": False, "break_time": 1.0, "duration": 3.0}


@pytest.mark.parametrize("name", ["apt", "fir", "irl"])
def test_sid_rows_with_other_keys_are_scored_on_their_own_fields(name):
    """H1: a key beyond the module's features (a dataset row's audio, id) ended in a bare KeyError from
    deep inside `datasets`; the rows of a SID config are now given as they are."""
    module = load(name)
    plain = module.compute(predictions=[{"total_nonbreak": False, "break_time": 1.02}], references=[BREAK])
    richer = module.compute(predictions=[{"total_nonbreak": False, "break_time": 1.02, "foo": 1}],
                            references=[{**BREAK, "audio": {"path": "a.wav"}, "id": "clip-1"}])
    assert richer == plain and plain["hits_within_tolerance"] == 1
    module.add(prediction={"total_nonbreak": True, "break_time": -1.0, "score": 0.2}, reference={**BREAK, "id": "x"})
    module.add_batch(predictions=[{"total_nonbreak": False, "break_time": 2.0, "score": 0.9}],
                     references=[{**BREAK, "id": "y"}])
    added = module.compute()
    assert (added["misses"], added["late_hits"]) == (1, 1)
    with pytest.raises(ValueError, match=r"predictions\[0\]: missing break_time"):
        module.compute(predictions=[{"total_nonbreak": False, "break_tme": 1.0}], references=[BREAK])


def test_a_no_break_prediction_with_a_time_is_scored_as_the_card_says():
    """H2: the card said break_time is ignored when total_nonbreak is true, while the notebook's rule
    (times first) scores such a row at the true break as a hit. The card now says what is done."""
    from metric_modules import METRICS

    result = load("apt").compute(predictions=[{"total_nonbreak": True, "break_time": 1.0}], references=[BREAK])
    assert (result["hits_within_tolerance"], result["misses"], result["apt"]) == (1, 0, 0.0)
    result = load("apt").compute(predictions=[{"total_nonbreak": True, "break_time": -1.0}], references=[BREAK])
    assert (result["misses"], result["apt"]) == (1, 2.0)
    for name in ("apt", "fir", "irl"):
        card = " ".join((METRICS / name / "README.md").read_text().split())
        assert "is ignored" not in card
        assert "compares the times before the flags, so a \"no break\" prediction whose `break_time` lies within " \
               "tolerance of the true break counts as a hit" in card


@pytest.mark.parametrize("argv", [
    ["publish-dataset", "", "--repo", "a/b", "--dry-run"],
    ["sid", "--detector", "energy", "--data", "", "--config", "sid_en", "--out", "{tmp}/x"],
    ["set-baseline", "{tmp}/run", "--data", " ", "--out", "{tmp}/x"],
    ["run", "--model", "openai", "--model-path", "m", "--data", "", "--out", "{tmp}/x"],
    ["barge-in", "--data", "", "--model", "openai", "--model-path", "m", "--sim-model", "s", "--out", "{tmp}/x"],
    ["info", ""], ["export", "", "--out", "{tmp}/x"], ["space", "--data", ""], ["doctor", "--data", ""],
    ["publish-space", "--repo", "a/b", "--data", "", "--dry-run", "--staging-dir", "{tmp}/x"],
])
def test_an_empty_dataset_is_refused_when_parsed_not_read_as_the_current_folder(argv, tmp_path, capsys,
                                                                              monkeypatch):
    """H3: '' is the current folder to `Path`: publish-dataset listed whatever folder the user stood in
    for upload, sid and set-baseline read it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("a folder of the user's own\n")
    with pytest.raises(SystemExit) as stopped:
        main([part.replace("{tmp}", str(tmp_path)) for part in argv])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "expected a dataset folder or a Hub id, got" in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


@pytest.mark.parametrize("field, value, said", [("input", "   ", "blank"), ("golden_text", "", "empty")])
def test_a_benchmark_turn_that_says_nothing_is_refused_at_import(field, value, said, tmp_path, capsys):
    """H4: a blank `input` was imported, sent to the model as a blank user turn, answered and judged."""
    from convbench_layout import TURNS, write_benchmark_folder

    folder = write_benchmark_folder(tmp_path, audio=False)
    turns = [dict(turn) for turn in TURNS]
    turns[1][field] = value
    (folder / "turns.py").write_text((folder / "turns.py").read_text().replace(repr(TURNS), repr(turns)))
    capsys.readouterr()
    assert main(["convbench-import", str(folder), "--text-only", "--out", str(tmp_path / "d"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"turns.py: turn 1: `{field}` is {said}; it is" in err, err
    assert not (tmp_path / "d").exists()


def test_a_card_listing_a_config_twice_is_refused_naming_it(tmp_path, capsys):
    """H5: a card with `config_name: conversations` twice was read as one config with another's
    columns ("column 'num_turns' is missing")."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    card = data / "README.md"
    card.write_text(card.read_text().replace("config_name: baseline", "config_name: conversations"))
    for argv in (["info", str(data)], ["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                                       str(tmp_path / "run"), "--base-url", "http://127.0.0.1:9/v1"]):
        capsys.readouterr()
        assert main([*argv, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"{card}: `configs:` lists config 'conversations' 2 times; each config once" in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("kind", ["file", "link to nothing", "file named like a Hub id"])
def test_publish_space_refuses_a_local_path_that_is_no_dataset_folder(kind, tmp_path, capsys, monkeypatch):
    """H6: `--data dev/README.md` (or a dangling link, or a file org/mydata) was set as the Space's
    IHBENCH_DATA, taken for a Hub id."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "org").mkdir()
    if kind == "link to nothing":
        (tmp_path / "org" / "dang").symlink_to(tmp_path / "gone")
        data, said = "org/dang", f"--data: org/dang: a symlink to {tmp_path / 'gone'}, which does not exist"
    else:
        data = "org/README.md" if kind == "file" else "org/mydata"
        (tmp_path / data).write_text("text\n")
        said = f"--data: {data}: expected a dataset directory (built by `ihbench build`), got a file"
    capsys.readouterr()
    assert main(["publish-space", "--repo", "a/b", "--data", data, "--dry-run", "--staging-dir",
                 str(tmp_path / "stage"), "--quiet"]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "stage").exists()


@pytest.mark.parametrize("call, said", [
    (lambda s: s.cohen_kappa([float("nan"), 1], [1, 1]), "a[0]: not a label (nan)"),
    (lambda s: s.cohen_kappa(["x", "y"], ["x", None]), "b[1]: not a label (None)"),
    (lambda s: s.spearman([1, "two", 3], [1, 2, 3]), "a[1]: not a number"),
    (lambda s: s.pearson([1, 2, 3], [1, None, 3]), "b[1]: not a finite number"),
    (lambda s: s.spearman_permutation([1, 2, 3], [1, 3, 2], n_resamples=0),
     "n_resamples: expected a whole number >= 1, got 0"),
    # battery 13, I26: the parameters beside the data, checked by the rules of the options
    (lambda s: s.one_sample_t_test([1.0, 2.0], mean=float("inf")), "mean: expected a number, got inf"),
    (lambda s: s.spearman_permutation([1, 2, 3], [1, 3, 2], seed=-1),
     "seed: expected a whole number from 0 to 18446744073709551615, got -1"),
    (lambda s: s.logistic_slope([1, 2, 3], [0, 1, 1], max_iter=0), "max_iter: expected a whole number >= 1, got 0"),
    (lambda s: s.logistic_slope([1, 2, 3], [0, 1, 1], tol=float("nan")), "tol: expected a number > 0, got nan"),
])
def test_the_statistics_refuse_what_is_not_a_number_or_a_label_naming_it(call, said):
    """H7: cohen_kappa counted NaN as a label of its own (0.0); spearman with a string and
    spearman_permutation(n_resamples=0) raised float()'s and scipy's own errors."""
    from ihbench import stats
    from ihbench.dataset.errors import UsageError

    with pytest.raises(UsageError) as error:
        call(stats)
    assert str(error.value) == said


@pytest.mark.parametrize("argv", [["models"], ["info", "{data}"]])
def test_a_reader_that_quits_early_is_not_reported_as_an_error(argv, tmp_path):
    """H8: `ihbench info DATA | head -1` said "ihbench info: error: Broken pipe" and exited 2."""
    import subprocess
    import sys

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    process = subprocess.Popen([sys.executable, "-m", "ihbench.cli", *[a.replace("{data}", str(data)) for a in argv]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.close()  # the reader is gone before the first line is written: every write meets EPIPE
    err = process.stderr.read()
    assert process.wait(timeout=300) == 141
    assert "Broken pipe" not in err and "Traceback" not in err and "Exception ignored" not in err, err


def test_no_output_goes_into_the_installed_toolkit_or_a_library_cache(tmp_path, capsys, monkeypatch):
    """H9: a report written into a metric module's folder (read by evaluate.load, uploaded by
    publish-metrics), a run inside the installed package, an export inside the Hugging Face cache."""
    import ihbench
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    (tmp_path / "hf").mkdir()
    package = ihbench.metric_path("apt")
    for argv, out, said in (
            (["export", str(data)], f"{package}/rep", "the installed toolkit's files"),
            (["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--base-url",
              "http://127.0.0.1:9/v1"], f"{ihbench.__file__.rsplit('/', 1)[0]}/runx", "the installed toolkit's files"),
            (["export", str(data)], f"{tmp_path}/hf/ex", "the Hugging Face cache")):
        capsys.readouterr()
        assert main([*argv, "--out", out, "--quiet"]) == 2
        assert f"--out: {out} is inside {said}" in capsys.readouterr().err
    from pathlib import Path

    assert not (tmp_path / "hf" / "ex").exists() and not (Path(package) / "rep").exists()
    assert not (Path(ihbench.__file__).parent / "runx").exists()


@pytest.mark.parametrize("command, argv, said", [
    ("report", ["r"],  # battery 15, K2, and battery 16: it says what it did with the report folder
     "stopped (SIGTERM); nothing of the report was written yet; the same command writes it again"),
    ("sid", ["--data", "d", "--config", "sid_en", "--detector", "energy", "--out", "o"],
     "stopped (SIGTERM); anything it wrote is kept, and the same command goes on from there"),
    ("sid", ["--data", "d", "--config", "sid_en", "--detector", "smart-turn", "--thresholds", "0.5", "--out", "o"],
     "stopped (SIGTERM); it writes its results only once all is done, so nothing of them was written, and the same "
     "command starts again from the beginning"),
    ("run", ["--model", "openai", "--model-path", "m", "--data", "d", "--out", "o"],
     "stopped (SIGTERM); anything it wrote is kept, and the same command goes on from there"),
])
def test_what_a_stopped_command_says_it_kept_is_what_it_kept(command, argv, said, capsys, monkeypatch):
    """H11: a sid stopped by SIGTERM said "what was written is kept, and the same command goes on from
    there", while it wrote everything at the end and started again from the first clip; a detector's clips
    are now kept one by one, a sweep's are not, and each says so. (The command's
    work is replaced by one that is stopped at once, as `kill` stops it: the wording is what is tested
    here; tests/test_faults.py stops a real run with a real SIGTERM.)"""
    import importlib

    from ihbench.cli import Terminated

    def stopped(args):
        raise Terminated()

    monkeypatch.setattr(importlib.import_module(f"ihbench.cli.{command}"), "main", stopped)
    capsys.readouterr()
    assert main([command, *argv]) == 143
    assert capsys.readouterr().err.strip() == f"ihbench {command}: {said}"


def test_a_torn_line_of_a_conversationbench_run_is_named_by_the_report(run, capsys):
    """H10: a judgments.jsonl (or responses.jsonl) whose last line was cut was only counted, as "not judged
    as they are now", which reads as "changed since"; IHBench's report names the file and the line."""
    from convbench_judging import ConvJudge
    from test_convbench_judge import judge

    assert judge(run, ConvJudge()) == 0
    for name, said in (("judgments.jsonl", "the judge stopped while writing it, or the file was cut); the verdict "
                                           "is left out, and `ihbench judge` judges that conversation again"),
                       ("responses.jsonl", "the run stopped while writing it, or the file was cut); the turn is left "
                                           "out, and `ihbench run` with the same options plays that conversation "
                                           "again")):
        path = run / name
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:-1]) + lines[-1][:len(lines[-1]) // 2])
        capsys.readouterr()
        assert main(["report", str(run), "--quiet"]) == 0
        err = capsys.readouterr().err
        assert f"{path} line {len(lines)}: incomplete (cut mid-line: {said}" in err, err
        assert "as they are now" not in err
    import re  # which epoch's verdict was written last depends on which conversation the judge finished last

    assert re.search(r"not scored \(1 unfinished, 0 judge_error, [01] not judged yet, 0 judged on other answers: "
                     r"played again since, or another run's\)", err), err


@pytest.fixture
def sid_data(tmp_path):
    from test_sid import _write_folder

    from ihbench.dataset.sid import import_sid

    import_sid(_write_folder(tmp_path / "SID-bench"), tmp_path / "sid-data", progress=False)
    return tmp_path / "sid-data"


def test_sid_and_report_stopped_before_their_summary_are_written_again_by_the_same_command(sid_data, official,
                                                                                           tmp_path, capsys):
    """H12, H13: a report or sid killed after its first files (a plot, predictions.jsonl) left a folder the
    same command then refused as "not a folder this command wrote"."""
    sid = ["sid", "--data", str(sid_data), "--config", "sid_en", "--detector", "energy", "--out", str(tmp_path / "s"),
           "--quiet"]
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "run"), "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    report = ["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep"), "--quiet"]
    for argv, out in ((sid, tmp_path / "s"), (report, tmp_path / "rep")):
        import json

        assert main(argv) == 0
        scores = json.loads((out / "summary.json").read_text()).get("scores")
        (out / "summary.json").unlink()  # as a command stopped after its first files leaves it
        capsys.readouterr()
        assert main(argv) == 0, capsys.readouterr().err
        assert json.loads((out / "summary.json").read_text()).get("scores") == scores


def test_a_staging_stopped_midway_is_named_and_no_file_is_removed(tmp_path, capsys, monkeypatch):
    """H14: publish-space stopped by SIGTERM or kill -9 while staging left files no marker listed, and
    the same command refused the folder as not empty. Battery 41, L1 (P1): the fix took everything in
    such a folder for the staging's own, and the next publish deleted a file the user put there since.
    It is now refused, naming what happened, and nothing is removed."""
    import shutil

    import ihbench.publish.space as space

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # where SIGTERM (raised as it) or kill -9 would stop it: files are half staged

    staging = tmp_path / "stg"
    with monkeypatch.context() as patched:
        patched.setattr(space, "_write_card", stopped)
        with pytest.raises(KeyboardInterrupt):
            space.publish_space("a/b", dry_run=True, staging_dir=staging)
    assert (staging / "app.py").is_file()
    (staging / "notes.txt").write_text("a user's own file, put there after the staging was stopped\n")
    before = sorted(p.name for p in staging.iterdir())
    capsys.readouterr()
    assert main(["publish-space", "--repo", "a/b", "--dry-run", "--staging-dir", str(staging), "--quiet"]) == 2
    assert f"{staging} holds what a publish stopped while staging left there" in capsys.readouterr().err
    assert sorted(p.name for p in staging.iterdir()) == before
    shutil.rmtree(staging)  # emptied by its owner: staged into again
    assert main(["publish-space", "--repo", "a/b", "--dry-run", "--staging-dir", str(staging), "--quiet"]) == 0
    (staging / "mine.txt").write_text("a user's own file, put there after a finished staging\n")
    assert main(["publish-space", "--repo", "a/b", "--dry-run", "--staging-dir", str(staging), "--quiet"]) == 2
    assert "holds files no earlier publish staged: mine.txt" in capsys.readouterr().err


def test_rq_verdicts_that_leave_a_criterion_unanswered_are_a_judge_error_never_a_pass(official, tmp_path):
    """H16: three verdicts all numbered 1 (or numbered 2, 3, 4) for three criteria were recorded as
    judged, every criterion met, and counted in the RQ pass rate: only their number was checked."""
    import json
    import re

    from judging import ScriptedJudge
    from openai_test_server import Reply

    from ihbench.judge.prompts import RQ_SYSTEM

    scripted = ScriptedJudge(faults=False)

    def careless(body):
        if body["messages"][0]["content"] != RQ_SYSTEM:
            return scripted(body)
        count = len(re.findall(r"^\d+\. ", body["messages"][1]["content"].split("## Criteria", 1)[1], re.MULTILINE))
        return Reply(content=json.dumps({"criteria": [{"index": 1, "met": True, "reason": "fine"}] * count}))

    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--base-url", server.base_url, "--quiet"]) == 0
    with OpenAITestServer(respond=careless) as judge:
        main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
              str(tmp_path / "c.sqlite"), "--quiet"])
    rq = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()
          if json.loads(line)["axis"] == "rq"]
    several = [j for j in rq if len(j.get("criteria") or []) > 1 or "numbered" in str(j.get("error"))]
    assert several and all(j["outcome"] == "judge_error" and "not answered" in j["error"] for j in several), several


@pytest.mark.parametrize("numbers, said", [
    ([1, 1, 1], "criteria verdicts numbered [1, 1, 1]: criteria [2, 3] not answered; [1] answered more than once"),
    ([2, 3, 4], "criteria verdicts numbered [2, 3, 4]: criteria [1] not answered; no criterion [4] (there are 3)"),
])
def test_each_criterion_is_answered_once_by_its_number(numbers, said):
    import json

    from ihbench.judge import InvalidJudgment, parse_rq

    with pytest.raises(InvalidJudgment) as error:
        parse_rq(json.dumps({"criteria": [{"index": n, "met": True, "reason": "r"} for n in numbers]}), 3)
    assert str(error.value) == said
    answered = [{"index": n, "met": n != 2, "reason": f"r{n}"} for n in (3, 1, 2)]  # out of order: put in order
    assert parse_rq(json.dumps({"criteria": answered}), 3) == {"criteria": [True, False, True],
                                                               "reasons": ["r1", "r2", "r3"], "passed": False}


@pytest.mark.parametrize("clips, said", [
    (lambda np: [np.r_[np.zeros(8000, np.float32), np.float32("nan")]], "clips[0]: samples are not finite numbers"),
    (lambda np: [np.zeros(16000, np.float32), np.zeros(0, np.float32)], "clips[1]: an empty clip"),
    (lambda np: [np.zeros((16000, 2), np.float32)], "clips[0]: expected mono samples (one dimension)"),
    (lambda np: [np.zeros(16000, np.int16)], "clips[0]: expected float samples in [-1, 1], got int16"),
    (lambda np: np.zeros(16000, np.float32), "clips: one array of samples was given; give a list of clips"),
])
def test_smart_turn_refuses_what_is_not_a_clip_instead_of_scoring_it(clips, said):
    """H15: an empty, NaN, stereo or int16 clip got a probability (0.987, "turn finished"), and one bare
    array was read as 16 000 one-sample clips."""
    import numpy as np

    from ihbench.dataset.errors import UsageError
    from ihbench.smart_turn import SmartTurn

    model = SmartTurn()
    with pytest.raises(UsageError) as error:
        model.probabilities(clips(np))
    assert str(error.value).startswith(said), error.value
    assert 0.0 <= model.probability(np.zeros(16000, np.float32)) <= 1.0


def test_a_score_the_conversationbench_judge_left_out_is_counted_false_and_said(run, capsys):
    """H17: `"kb_grounding": null` (or left out) on a dimension every turn is scored on was recorded as a
    failure without a word. The reference counts it so (its numbers are kept); it is now noted on the
    turn and counted in the report, on the console and in report.md."""
    import json

    from convbench_judging import ConvJudge
    from test_convbench_judge import judge

    assert judge(run, ConvJudge(overrides={0: {"kb_grounding": None}, 1: {"instruction_following": None}})) == 0
    rows = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    first = next(r for r in rows if r["turn"] == 0 and r["outcome"] == "judged")
    assert first["scores"]["kb_grounding"] is False
    assert "kb_grounding: no value from the judge: counted false, as the reference counts it" in first["notes"]
    capsys.readouterr()
    assert main(["report", str(run), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "scores the judge left out count as failures, as the reference counts them: instruction_following 2, " \
           "kb_grounding 2" in err, err  # two epochs
    assert json.loads((run / "summary.json").read_text())["defaulted_to_false"] == {"instruction_following": 2,
                                                                                  "kb_grounding": 2}
    assert "Scores the judge left out, counted false as the reference counts them: instruction_following 2, " \
           "kb_grounding 2." in (run / "report.md").read_text()


@pytest.mark.parametrize("text, said", [
    ('{"winner": "A", "reasoning": "r"}{"winner": "B", "reasoning": "r"}', "holds 2 different JSON objects"),
    ('```json\n{"winner": "A"}\n```\nOn second thought: {"winner": "B"}', "holds 2 different JSON objects"),
])
def test_an_answer_holding_two_different_verdicts_is_asked_again_not_read_as_the_first(text, said):
    """H18: two JSON objects with opposite verdicts were judged on the first, without a re-ask."""
    from ihbench.llm import InvalidAnswer, extract_json

    with pytest.raises(InvalidAnswer, match=said):
        extract_json(text)
    assert extract_json('Here: {"winner": "A", "reasoning": "{braces} in a string"} and again {"winner": "A", '
                        '"reasoning": "{braces} in a string"}') == {"winner": "A", "reasoning": "{braces} in a string"}


def test_a_run_json_with_a_modality_no_command_writes_is_refused_as_edited(official, tmp_path, capsys):
    """H19: `"modality": "video"` was taken: report blamed every answer as another run's, judge called the
    records damaged, and run refused the folder as another run's, naming no way out."""
    import json

    run = tmp_path / "run"
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run), "--limit",
            "1", "--modality", "text", "--quiet"]
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
        info = json.loads((run / "run.json").read_text())
        (run / "run.json").write_text(json.dumps({**info, "modality": "video"}))
        for command in (["report", str(run), "--quiet"], ["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--quiet"],
                        [*argv, "--base-url", server.base_url]):
            capsys.readouterr()
            assert main(command) == 2
            err = capsys.readouterr().err
            assert "field 'modality' is 'video', not one of audio, text (edited by hand?)" in err, err


@pytest.mark.parametrize("argv", [["report", "{loop}"], ["cache", "info", "--cache", "{loop}"],
                                  ["export", "{data}", "--out", "{loop}"], ["info", "{loop}"]])
def test_links_that_point_at_each_other_are_one_line(argv, official, tmp_path, capsys):
    """H20: `report loopA` (loopA -> loopB -> loopA) ended in pathlib's RuntimeError; --out and --cache
    called it a link to nothing, and `cache info` said "no cache yet"."""
    (tmp_path / "loopB").symlink_to(tmp_path / "loopA")
    (tmp_path / "loopA").symlink_to(tmp_path / "loopB")
    loop = str(tmp_path / "loopA")
    capsys.readouterr()
    try:
        code = main([part.replace("{loop}", loop).replace("{data}", str(official)) for part in argv])
    except SystemExit as stopped:  # refused by the parser
        code = stopped.code
    assert code == 2
    err = capsys.readouterr().err
    assert "a symlink loop: its links point at each other" in err and "Traceback" not in err, err


def test_a_device_or_a_pipe_given_for_a_file_is_refused_before_it_is_read(official, tmp_path, capsys):
    """H21: `sid --predictions /dev/zero` read for ever (18 GB in 12 s), a FIFO waited for ever; the same
    through a link in a --judge-batch folder."""
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for given in ("/dev/zero", str(fifo)):
        with pytest.raises(SystemExit) as stopped:
            main(["sid", "--data", str(official), "--config", "sid_en", "--predictions", given, "--out",
                  str(tmp_path / "s")])
        assert stopped.value.code == 2
        kind = "a device" if given == "/dev/zero" else "a named pipe"
        assert f"{kind}, not a regular file" in capsys.readouterr().err
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    batch = tmp_path / "jb"
    main(["judge", str(run), "--judge-model", "j", "--judge-batch", str(batch), "--quiet"])  # writes the requests
    (batch / "out.jsonl").symlink_to("/dev/zero")
    capsys.readouterr()
    assert main(["judge", str(run), "--judge-model", "j", "--judge-batch", str(batch), "--quiet"]) == 2
    assert f"{batch / 'out.jsonl'}: a device (a link to /dev/zero), not a regular file" in capsys.readouterr().err


def test_an_answer_holding_a_lone_surrogate_is_recorded_not_a_crash(official, tmp_path):
    """H24: JSON may carry "\\ud800", which Python decodes but cannot write as UTF-8: the run ended in a
    traceback after run.json, and so did every rerun (judge too, with such a verdict)."""
    import json

    from judging import ScriptedJudge
    from openai_test_server import Reply

    run = tmp_path / "run"
    with OpenAITestServer(respond=lambda body: Reply(content="Noted, the new number is saved \ud800 for you.")) as up:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--limit", "1", "--modality", "text", "--base-url", up.base_url, "--quiet"]) == 0
    records = [json.loads(line) for line in (run / "responses.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records and {r["response"] for r in records} == {"Noted, the new number is saved \ufffd for you."}
    scripted = ScriptedJudge(faults=False)

    def odd_judge(body):
        reply = scripted(body)
        return Reply(content=reply.content.replace('"because"', '"because \ud800"').replace('"r"', '"r \udfff"'))

    with OpenAITestServer(respond=odd_judge) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    assert "\ufffd" in (run / "judgments.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("damage, said", [
    ("cut line 3", r"metadata.jsonl:3: not valid JSON \("),
    ("drop turn 2", r"metadata.jsonl: no row for turn_id 2; the turns are one conversation"),
    ("drop the last", r"metadata.jsonl: no row for turn_id 4 \(.* has 5 turns\)"),
    # battery 23, S4 (P2): a gap of a billion turns was listed in memory (24 GB, then the OOM killer)
    ("turn_id 1000000000", r"metadata.jsonl: turn_id 1000000000 is far past the 5 row\(s\) of the file"),
    # battery 23, S5: a row's audio_file led the import to any file of the machine
    ("audio_file ../../../etc/hostname", r"row \d+: `audio_file` '../../../etc/hostname' leaves the benchmark's folder"),
])
def test_hub_rows_with_a_damaged_or_missing_row_are_refused_naming_it(damage, said, tmp_path):
    """H25, H26: a cut line in metadata.jsonl was reported at line 1; a row deleted (or the last one lost)
    was imported as a conversation with a turn missing, without a word."""
    from convbench_layout import write_benchmark_folder, write_hub_rows

    from ihbench.dataset.convbench import ConvBenchFormatError, read_benchmark

    folder = write_benchmark_folder(tmp_path / "repo", audio=False)
    rows = write_hub_rows(tmp_path / "hub") / "metadata.jsonl"
    lines = rows.read_text().splitlines()
    if damage == "cut line 3":
        lines[2] = lines[2][:40]
    elif damage == "drop turn 2":
        del lines[2]
    elif damage == "drop the last":
        del lines[-1]
    else:
        import json

        row = json.loads(lines[-1])
        if damage.startswith("audio_file"):
            row["audio_file"] = damage.split()[1]
        else:
            row["turn_id"] = 10 ** 9
        lines[-1] = json.dumps(row)
    rows.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConvBenchFormatError, match=said):
        read_benchmark(rows.parent, setup=folder)


def test_a_console_that_cannot_show_a_path_s_characters_gets_escapes_not_a_traceback(official, tmp_path):
    """H22: with a cp1252 console (Windows, PYTHONIOENCODING) a CJK --out ended the finished command in a
    UnicodeEncodeError, on every rerun."""
    import os
    import subprocess
    import sys

    out = tmp_path / "ex日本"
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "export", str(official), "--out", str(out)],
                            capture_output=True, env={**os.environ, "PYTHONIOENCODING": "cp1252"}, timeout=300)
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr and b"ex\\u65e5\\u672c" in result.stdout
    assert any(out.iterdir())


def test_sid_tolerance_as_long_as_a_clip_is_refused():
    """H29: --tolerance 1e9 made every prediction a hit, a detector that never fires scored perfectly."""
    with pytest.raises(SystemExit):
        main(["sid", "--data", "d", "--config", "c", "--detector", "energy", "--tolerance", "1e9", "--out", "o"])
    from ihbench.dataset.errors import UsageError
    from ihbench.sid.run_sid import run_sid

    with pytest.raises(UsageError, match=r"--tolerance: expected a number in \[0, 2\], got 5"):
        run_sid("d", "c", "o", detector="energy", tolerance=5)


def test_hand_written_jsonl_with_a_windows_bom_is_read(sid_data, tmp_path):
    """H32: a UTF-8 BOM (Windows editors) in predictions, transcripts or Hub rows was refused with Python's
    own hint (decode using utf-8-sig)."""
    import json

    from ihbench.dataset.sid import sid_rows
    from ihbench.sid.predictions import read_predictions

    references, _ = sid_rows(str(sid_data), "sid_en")
    rows = [{"audio": r["audio"], "total_nonbreak": True, "break_time": -1} for r in references]
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(json.dumps(row) for row in rows).encode())
    assert len(read_predictions(path, references)) == len(references)


@pytest.mark.parametrize("loose", ["notes.txt", "notes.md"])
def test_a_local_folder_without_a_card_is_named_as_such_not_as_datasets_finds_it(loose, tmp_path, capsys,
                                                                                monkeypatch):
    """H30: a folder of stray files named like a Hub id said "BuilderConfig 'conversations' not found.
    Available: ['default']", and nothing of the local folder shadowing the Hub id."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bosonai" / "IHBench").mkdir(parents=True)
    (tmp_path / "bosonai" / "IHBench" / loose).write_text("x\n")
    capsys.readouterr()
    assert main(["info", "bosonai/IHBench"]) == 2
    err = capsys.readouterr().err
    assert "bosonai/IHBench: a local folder with no dataset card (README.md listing its configs) (a Hub id of that " \
           "name is not looked up while this folder is here)" in err, err


def test_a_report_written_where_another_was_keeps_none_of_its_figures(run, official, tmp_path):
    """H28: a ConversationBench report and then an IHBench one into the same --out left the first one's
    plots beside the second's report.md."""
    from convbench_judging import ConvJudge
    from test_convbench_judge import judge

    assert judge(run, ConvJudge()) == 0
    out = tmp_path / "rq1"
    assert main(["report", str(run), "--out", str(out), "--quiet"]) == 0
    assert (out / "convbench_dimensions.png").is_file()
    ihbench_run = tmp_path / "r1"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(ihbench_run), "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    assert main(["report", str(ihbench_run), "--out", str(out), "--quiet"]) == 0
    assert not list(out.glob("convbench_*.png"))
    referenced = (out / "report.md").read_text()
    assert all(png.name in referenced for png in out.glob("*.png")), sorted(p.name for p in out.iterdir())


def test_a_conversationbench_dataset_alone_is_described_and_published(tmp_path, capsys):
    """H31: a folder written by `convbench-import` alone is runnable, but `info` and `publish-dataset`
    failed on it: "no config 'conversations'"."""
    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "repo", audio=False)
    data = tmp_path / "cbo1"
    assert main(["convbench-import", str(folder), "--text-only", "--out", str(data), "--name", "mybench",
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["info", str(data)]) == 0
    out = capsys.readouterr().out
    assert "| mybench | ConversationBench turns | 5 |" in out and "| mybench_setup | ConversationBench setup | 1 |" in out
    assert main(["publish-dataset", str(data), "--repo", "a/b", "--dry-run", "--quiet"]) == 0
    assert "README.md" in capsys.readouterr().out


def test_a_call_the_judge_says_was_made_early_is_credited_only_where_the_run_shows_it(run):
    """H33: a judge listing a call as made early (or late), at a turn where the run recorded no call at all
    (a tool that does not even exist), passed tool use at both turns."""
    import json

    from convbench_judging import ConvJudge
    from test_convbench_judge import judge

    made_up = {"name": "make_coffee", "expected_turn": 1, "actual_turn": 0, "status": "early"}
    assert judge(run, ConvJudge(overrides={1: {"tool_use_correct": False, "missed_call_cause": "other"}},
                                calls=[made_up])) == 0
    rows = {(r["epoch"], r["turn"]): r for r in map(json.loads, (run / "judgments.jsonl").read_text().splitlines())}
    assert rows[0, 1]["scores"]["tool_use_correct"] is False
    assert "not credited: the judge said make_coffee was called at turn 0, and the run shows no such call there" \
        in rows[0, 1]["notes"]


def test_realign_credits_an_early_call_the_run_recorded():
    from test_convbench_judge import CALL, turn, verdict

    from ihbench.convbench.judge import realign

    turns = [turn(0), turn(1, call=CALL)]
    verdicts = {0: verdict(tool_use_correct=False), 1: verdict(tool_use_correct=False, missed_call_cause="other")}
    early = [{"name": "book", "expected_turn": 1, "actual_turn": 0, "status": "early"}]
    assert realign(turns, verdicts, early, made={0: {"book"}, 1: set()})[1].scores["tool_use_correct"] is True
    assert realign(turns, verdicts, early, made={0: set(), 1: set()})[1].scores["tool_use_correct"] is False


def test_a_lone_surrogate_in_a_file_a_user_wrote_is_refused_naming_it(tmp_path, capsys):
    """H34: a lone surrogate escape in Hub rows (convbench-import) or an in-house source (build) ended in
    a traceback after `verify` had passed the source."""
    import json

    from convbench_layout import write_benchmark_folder, write_hub_rows

    from ihbench.dataset.sources import SourceError, load_conversation, source_files

    folder = write_benchmark_folder(tmp_path / "repo", audio=False)
    rows = write_hub_rows(tmp_path / "hub") / "metadata.jsonl"
    lines = rows.read_text().splitlines()
    lines[2] = lines[2].replace('"input_text": "', '"input_text": "\\ud800 ', 1)
    rows.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["convbench-import", str(rows.parent), "--setup", str(folder), "--text-only", "--out",
                 str(tmp_path / "d"), "--name", "hb", "--quiet"]) == 2
    assert "`input` holds a lone surrogate escape ('\\ud800'), which is no character" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
    source = source_files()[0]
    text = source.read_text(encoding="utf-8")
    data = json.loads(text)
    data["goal"] = data["goal"] + " \ud800"
    edited = tmp_path / source.name
    edited.write_text(json.dumps(data))  # ensure_ascii: the escape is written as JSON allows it
    with pytest.raises(SourceError, match=r"the value of 'goal' holds a lone surrogate escape"):
        load_conversation(edited)


def test_judgments_in_a_folder_inside_the_run_are_told_where_they_go(official, tmp_path, capsys):
    """H38: `--out RUN/sub/j.jsonl` was told "give a path outside it", and a path outside "give a name
    there": the two remedies pointed at each other."""
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--out",
                 str(run / "sub" / "judgments-x.jsonl"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "is in a folder inside the run; `ihbench report` reads judgments from the run's folder itself: give a " \
           f"name there, such as {run / 'judgments-MODEL.jsonl'}" in err, err
    assert not (run / "sub").exists()


def test_conversationbench_rows_count_turns_and_epochs_from_zero():
    """H37: turn_ids=[-1] and epochs=[-1, 0] were scored."""
    module = load("convbench_pass_rate")
    for column in ({"turn_ids": [-1], "epochs": [0]}, {"turn_ids": [0], "epochs": [-1]}):
        name = next(k for k, v in column.items() if v == [-1])
        with pytest.raises(ValueError, match=rf"{name}\[0\]: expected an integer >= 0, got -1"):
            module.compute(predictions=[True], dimensions=["tool_use_correct"], call_expected=[True], **column)


def test_a_batch_answer_holding_a_lone_surrogate_is_recorded_with_the_others(official, tmp_path):
    """H35: one batch answer with "\\ud800" in its reasoning ended every round in a traceback, after the
    requests file was removed, and none of the good answers was recorded."""
    import json

    from judging import ScriptedJudge

    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    batch = tmp_path / "jb"
    argv = ["judge", str(run), "--judge-model", "j", "--judge-batch", str(batch), "--quiet"]
    main(argv)  # writes the requests
    scripted, lines = ScriptedJudge(faults=False), []
    for number, line in enumerate((batch / "requests.jsonl").read_text().splitlines()):
        request = json.loads(line)
        content = scripted(request["body"]).content
        if number == 0:
            content = content.replace('"because"', '"because \\ud800"').replace('"r"', '"r \\ud800"')
        lines.append(json.dumps({"id": f"b{number}", "custom_id": request["custom_id"], "error": None, "response": {
            "status_code": 200, "request_id": f"q{number}", "body": {
                "id": f"c{number}", "object": "chat.completion", "model": "j",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                              "content": content}}]}}}))
    (batch / "answers.jsonl").write_text("\n".join(lines) + "\n")
    assert main(argv) == 0
    judged = [json.loads(line) for line in (run / "judgments.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(judged) >= len(lines) and all(j["outcome"] == "judged" for j in judged)  # epochs share questions
    assert "\ufffd" in (run / "judgments.jsonl").read_text(encoding="utf-8")


def test_a_turn_expecting_a_call_with_no_tool_verdict_is_said_and_counted(run, capsys):
    """H17 (its other half): a null tool_use_correct on a turn that expects a call left the turn unscored
    on tool use, so it passed, without a word. The reference does so (kept); it is now noted and counted."""
    import json

    from convbench_judging import ConvJudge
    from test_convbench_judge import judge

    assert judge(run, ConvJudge(overrides={1: {"tool_use_correct": None}})) == 0
    rows = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    turn_1 = next(r for r in rows if r["turn"] == 1 and r["outcome"] == "judged")
    assert turn_1["scores"]["tool_use_correct"] is None
    assert any(note.startswith("tool_use_correct: no value from the judge on a turn that expects a call")
               for note in turn_1["notes"])
    capsys.readouterr()
    assert main(["report", str(run), "--quiet"]) == 0
    assert "2 turn(s) that expect a call have no tool use verdict from the judge" in capsys.readouterr().err
    assert json.loads((run / "summary.json").read_text())["unscored_expected_calls"] == 2


def test_a_set_baseline_copy_s_card_drops_the_original_baselines_pass_rates(built, tmp_path):
    """H27: the copy's card kept "RQ pass rate ... of the 260 hand-written baselines" and their table,
    though its baselines are another model's answers and their verdicts are gone."""
    import os
    import shutil

    from ihbench.dataset import load_items
    from ihbench.dataset.rebaseline import replace_baselines

    data = shutil.copytree(built, tmp_path / "data", copy_function=os.link)
    card = data / "README.md"
    (data / "README.md").unlink()  # a file of its own (the copy is linked to the shared build)
    card.write_text(built.joinpath("README.md").read_text() + "\n## Baselines beside the paper's\n\n"
                    "<!-- baselines by type (python -m ihbench.report.devset rewrites this block) -->\n"
                    "RQ pass rate of the 260 hand-written baselines\n| all types | 0.80 |\n"
                    "<!-- end baselines by type -->\n")
    responses = {item.id: "A new baseline answer." for item in load_items(str(data))}
    out = replace_baselines(data, tmp_path / "rebased", responses, "Replaced by set-baseline: model X.")
    text = (out / "README.md").read_text()
    assert "hand-written baselines" not in text and "| all types | 0.80 |" not in text
    assert "the pass rates of the original baselines were measured on the responses they replaced" in text


def test_answers_from_a_server_reporting_another_model_are_said_once(caplog):
    """H23: a server answering as another model than --model-path left no trace. (The served name is fed
    to the loader as its completions report it; the rest of the request path is the real one.)"""
    import logging

    from ihbench.loaders import create

    loader = create("openai", "m1", base_url="http://127.0.0.1:9/v1")
    with caplog.at_level(logging.WARNING, logger="ihbench"):
        for served in ("m1", "m1-2025-04-14", "some-other-model-7b", "some-other-model-7b"):
            loader._note_served(served)
    said = [r.getMessage() for r in caplog.records]
    assert said == ["the server answered as model 'some-other-model-7b', not 'm1' (--model-path), and its answers "
                    "are recorded under m1; check --base-url"]


def test_sid_keeps_the_clips_it_has_and_asks_only_the_others_again(built, tmp_path, capsys):
    """H11: a sid of an audio LLM stopped or failed midway kept nothing (and said the opposite), so its
    every model call was made again. Clips are now recorded as they are answered."""
    import json

    from openai_test_server import Reply

    asked = []

    def first_clip_only(body):
        asked.append(body)
        return Reply(content="yes") if len(asked) == 1 else Reply(status=500)

    out = tmp_path / "s"

    def sid(server):
        options = json.dumps({"base_url": server.base_url, "max_retries": 0})
        return main(["sid", "--data", str(built), "--config", "sid_dev_en", "--out", str(out), "--detector",
                     "audio-llm", "--model", "openai", "--model-path", "m", "--hop", "60000", "--limit", "3",
                     "--option", f"loader_options={options}", "--quiet"])

    with OpenAITestServer(respond=first_clip_only) as flaky:
        assert sid(flaky) == 1
    assert "2 of 3 clip(s) have model calls that failed" in capsys.readouterr().err
    assert len((out / "clips.jsonl").read_text().splitlines()) == 1 and not (out / "summary.json").exists()
    with OpenAITestServer(respond=lambda body: Reply(content="no")) as healthy:
        assert sid(healthy) == 0
        assert len(healthy.requests) == 2  # the two clips without an answer, and only those
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_clips"] == 3 and summary["model_calls"] == 3


@pytest.mark.parametrize("said", ["", "\u200b "])
def test_a_conversationbench_turn_with_no_text_and_no_call_is_a_failed_turn(said, tmp_path):
    """Battery 13, I5: a turn answered with content null (or only invisible characters) and no tool call
    was recorded as answered with "", then judged and scored; as for IHBench runs, it is a failed
    request (EmptyReplyError), retried by the next run, never scored."""
    import json

    from convbench_layout import write_benchmark_folder
    from openai_test_server import Reply
    from test_convbench_run import golden_replay, spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    out = tmp_path / "run"
    with OpenAITestServer(respond=lambda body: Reply(content=said)) as silent:
        run_convbench(spec(data, out, silent), progress=False)
    first = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert [r["status"] for r in first] == ["error"] and "no text and no tool call" in first[0]["error"]
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, out, server, allow_endpoint_change=True), progress=False)
    latest = {}
    for line in (out / "responses.jsonl").read_text().splitlines():
        record = json.loads(line)
        latest[record["turn"]] = record["status"]
    assert set(latest.values()) <= {"answered", "ended_session"} and len(latest) == 5


def test_interruption_points_of_a_conversationbench_config_are_refused_by_name(tmp_path):
    """Battery 13, I1: load_items (and doctor) recommended convbench_dev, then failed on it with
    "column 'conversation_id' is missing"."""
    from convbench_layout import write_benchmark_folder

    from ihbench.dataset import load_items
    from ihbench.dataset.convbench import import_convbench
    from ihbench.dataset.load import DataSourceError

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo", audio=False), data, text_only=True, progress=False)
    with pytest.raises(DataSourceError, match=r"config 'bike_bench' is a ConversationBench benchmark \(played "
                                              r"on-policy by `ihbench run --config bike_bench`"):
        load_items(str(data), config="bike_bench")


@pytest.mark.parametrize("body, said", [
    (b'{"error": {"message": "Rate limit reached for requests"}}', "an error, 'Rate limit reached for requests'"),
    (b'{"id": "x", "choices": [{"index": 0, "message": null}]}', "its first choice has no message (null)"),
    (b'{"id": "x"}', "no choices"),
])
def test_a_200_reply_that_is_no_completion_says_what_came(body, said, official, tmp_path):
    """Battery 13, I4: such replies were recorded as "not a chat completion: 'ChatCompletion'", the client's
    own class name, and the server's message was dropped."""
    import json

    from test_battery_round2 import _Raw, _run

    with _Raw(body, "application/json") as proxy:
        assert _run(official, tmp_path / "r", proxy) == 1
    records = [json.loads(line) for line in (tmp_path / "r" / "responses.jsonl").read_text().splitlines()]
    assert records and all(r["error"] == f"TransportError: the server answered with something that is not a chat "
                                         f"completion: {said}" for r in records), records[0]["error"]


def test_turns_stopped_at_the_tool_round_cap_are_counted_by_the_report(tmp_path, capsys):
    """Battery 13, I10: a model that only ever called tools hit the round cap on every turn; the turns were
    judged and scored, and nothing in the report counted them."""
    import json

    from convbench_judging import ConvJudge
    from convbench_layout import write_benchmark_folder
    from openai_test_server import Reply
    from test_convbench_judge import judge
    from test_convbench_run import spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    out = tmp_path / "run"
    def looping(body):  # a new call each round (a repeated one would end the turn as a duplicate)
        return Reply(content="", tool_calls=[{"name": "check_hours", "arguments": {"day": len(body["messages"])}}])

    with OpenAITestServer(respond=looping) as server:
        run_convbench(spec(data, out, server, max_rounds=2, only_turns=[0, 1]), progress=False)
    assert judge(out, ConvJudge()) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--quiet"]) == 0
    assert "2 turn(s) reached the tool-round cap (--max-tool-rounds) and ended without a final answer" in \
        capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text())["round_cap_hits"] == 2


def test_turns_after_an_early_end_session_fail_by_rule_and_are_counted(tmp_path, capsys):
    """Battery 13, I21: the model ended the session at turn 1; turns 2-4 were never played, yet kept the
    judge's verdicts (all true, and tool use credited for an end_session "made early"), and the report
    said pass rows 1.000 without a word about the early end."""
    import json

    from convbench_judging import ConvJudge
    from convbench_layout import write_benchmark_folder
    from test_convbench_judge import judge, records
    from test_convbench_run import golden_replay, spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, text_only=True, progress=False)
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay(end_at=1)) as server:
        run_convbench(spec(data, out, server, modality="text"), progress=False)
    early = ConvJudge(calls=[{"name": "end_session", "expected_turn": 4, "actual_turn": 1, "status": "early"}])
    assert judge(out, early) == 0
    final = records(out)
    assert all(final[0, t]["scores"]["instruction_following"] is True for t in (0, 1))
    for turn in (2, 3, 4):
        scores = final[0, turn]["scores"]
        assert scores["instruction_following"] is False and scores["kb_grounding"] is False, (turn, scores)
        assert final[0, turn]["notes"] == ["never answered: the model ended the session at turn 1, so every "
                                           "dimension this turn scores fails by rule"]
    assert final[0, 4]["scores"]["tool_use_correct"] is False  # the early call does not credit a turn never played
    assert final[0, 3]["scores"]["tool_use_correct"] is None  # nothing to call there
    assert final[0, 2]["scores"]["state_tracking"] is False
    capsys.readouterr()
    assert main(["report", str(out), "--quiet"]) == 0
    assert "3 turn(s) were never answered: the model ended the session before them" in capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["never_answered"] == 3 and summary["scores"]["pass_rows"]["passes"] <= 2
    assert "Turns never answered because the model ended the session before them" in \
        (out / "report.md").read_text()


def test_rq_rows_of_one_item_are_judged_against_one_rubric_and_every_item_has_an_id():
    """Battery 13, I2: one item judged against a 1- and a 3-criterion rubric was pooled; an empty id was
    an item."""
    rq = load("rq_pass_rate")
    with pytest.raises(ValueError, match=r"predictions\[1\]: item 'a/1' has 3 criterion verdict\(s\) here but 1 at "
                                         r"index 0"):
        rq.compute(predictions=[[True], [False, True, True]], item_ids=["a/1", "a/1"])
    for empty in ("", "  "):
        with pytest.raises(ValueError, match=r"item_ids\[0\]: missing item id"):
            rq.compute(predictions=[[True]], item_ids=[empty])


@pytest.mark.parametrize("name, row", [("rq_pass_rate", [True, False]), ("tf_win_rate", "model"),
                                       ("apt", {"total_nonbreak": True, "break_time": -1.0})])
def test_add_with_add_batch_s_plural_names_says_so(name, row):
    """Battery 13, I3: `add(predictions=...)` was read as a missing row ("expected ..., got None")."""
    module = load(name)
    with pytest.raises(ValueError, match=r"add\(\) takes one row, as prediction= \(and reference=\)"):
        module.add(predictions=row)


def test_one_publish_at_a_time_stages_into_a_staging_folder(tmp_path, capsys):
    """Battery 13, I9: publish-space and publish-metrics into one --staging-dir at once each listed (and
    would have uploaded) the other's files."""
    from ihbench.dataset.io import exclusive, lock_file_for

    staging = tmp_path / "stg"
    with exclusive(lock_file_for(staging), f"staging folder {staging}"):  # another publish, staging there now
        capsys.readouterr()
        assert main(["publish-metrics", "--namespace", "me", "--dry-run", "--staging-dir", str(staging),
                     "--quiet"]) == 2
        assert "is in use by another process" in capsys.readouterr().err
    assert not staging.exists()
    assert main(["publish-metrics", "--namespace", "me", "--dry-run", "--staging-dir", str(staging), "--quiet"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stg"]  # its lock is gone with the command


def test_tool_arguments_with_nan_are_kept_as_text_and_deep_json_is_an_invalid_answer():
    """Battery 13, I11-I12: NaN/Infinity in a model's tool arguments were written as bare NaN into
    records other tools read; JSON nested 100000 deep ended judge, verify, generate and barge-in in a
    RecursionError."""
    from ihbench.llm import InvalidAnswer, extract_json
    from ihbench.loaders.chat import parse_arguments

    assert parse_arguments('{"credits": NaN, "x": Infinity}') == '{"credits": NaN, "x": Infinity}'
    assert parse_arguments('{"credits": 3}') == {"credits": 3}
    with pytest.raises(InvalidAnswer, match="nested too deeply"):
        extract_json('{"a": ' * 100000 + "1" + "}" * 100000)


@pytest.mark.parametrize("body", [
    b'data: {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "test-model", "choices": '
    b'[{"index": 0, "delta": {"content": "I can help you sign up for the sum"}, "finish_reason": null}]}\n\n',
    b'{"id": "x", "object": "chat.completion", "created": 0, "model": "test-model", "choices": [{"index": 0, '
    b'"finish_reason": "stop", "message": {"role": "assistant", "content": "A whole answer."}}]}',
])
def test_a_stream_cut_midway_or_never_streamed_is_a_failed_turn(body, tmp_path):
    """Battery 13, I15-I16: a stream closed mid-reply (no finish_reason) was recorded as an answered turn
    with the cut text; a server that ignored stream=true gave answered turns with no text; both judged."""
    import json

    from convbench_layout import write_benchmark_folder
    from test_battery_round2 import _Raw
    from test_convbench_run import spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    out = tmp_path / "run"
    with _Raw(body, "text/event-stream" if body.startswith(b"data:") else "application/json") as server:
        run_spec = spec(data, out, server)
        run_spec.loader_options["stream"] = True
        run_convbench(run_spec, progress=False)
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["error"], records
    assert "stream ended before the reply did" in records[0]["error"]


def test_a_data_file_replaced_by_a_pipe_is_named_as_such_not_missing(official, tmp_path, capsys):
    """Battery 13, I13: a parquet file replaced by a FIFO (or a link to /dev/zero) was called missing."""
    import os
    import shutil

    data = shutil.copytree(official, tmp_path / "d")
    (parquet,) = (data / "conversations").glob("*.parquet")
    parquet.unlink()
    os.mkfifo(parquet)
    capsys.readouterr()
    assert main(["info", str(data)]) == 2
    assert f"{parquet}: a named pipe, not a regular file, where the card lists" in capsys.readouterr().err


def test_a_local_judge_refuses_a_request_timeout_it_would_ignore(capsys):
    """Battery 13, I14: `--judge-backend transformers --timeout 1` was accepted and the timeout ignored."""
    assert main(["judge", "r", "--judge-backend", "transformers", "--judge-model", "m", "--timeout", "1"]) == 2
    assert "--timeout: only for --judge-backend openai (a server)" in capsys.readouterr().err


@pytest.mark.parametrize("argv, said", [
    (["run", "--model", "openai", "--model-path", "m", "--data", "{data}", "--out", "{tmp}/r", "--base-url",
      "http://127.0.0.1:9/v1", "--option", "stream=true"], "--option stream: only for a ConversationBench config"),
    (["barge-in", "--data", "{data}", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1",
      "--sim-model", "s", "--sim-base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/b", "--option", "stream=true"],
     "--option stream: only for a ConversationBench config of `ihbench run`"),
])
def test_stream_is_refused_where_nothing_is_streamed(argv, said, official, tmp_path, capsys):
    """Battery 13, I17: `--option stream=true` was accepted, recorded and ignored by IHBench runs and barge-in."""
    capsys.readouterr()
    assert main([a.replace("{data}", str(official)).replace("{tmp}", str(tmp_path)) for a in argv] + ["--quiet"]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "r").exists() and not (tmp_path / "b").exists()


def test_set_baseline_from_a_conversationbench_run_says_what_it_is(run, official, tmp_path, capsys):
    """Battery 13, I20: a ConversationBench run was refused as one whose points "have changed since the
    run (rebuilt from other sources?)": nothing had changed, and rerunning could not help."""
    capsys.readouterr()
    assert main(["set-baseline", str(run), "--data", str(official), "--out", str(tmp_path / "sb"), "--quiet"]) == 2
    assert "is a ConversationBench run (bike_bench): its turns answer a benchmark's user turns" in \
        capsys.readouterr().err
    assert not (tmp_path / "sb").exists()


def test_a_conversation_still_being_played_is_not_called_failed(run, capsys):
    """Battery 13, I19: while `ihbench run` was still playing, judge and report said its unfinished
    conversation "stopped on a failed turn"."""
    from ihbench.dataset.io import exclusive
    from ihbench.rundir import LOCK

    path = run / "responses.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # its last turn not written yet, as while it is being played
    with exclusive(run / LOCK, f"run directory {run}"):  # the run that is playing it (this process, here)
        capsys.readouterr()
        assert main(["report", str(run), "--quiet"]) == 0
        captured = capsys.readouterr()
    assert "is playing the run now" in captured.err and "still being played" in (run / "report.md").read_text()
    assert "stopped on a failed turn" not in (run / "report.md").read_text()


def test_baseline_rows_given_from_python_are_checked(official):
    """Battery 13, I18: two rows with different baselines for one point kept the last silently; the
    conversations rows given as baselines attached none without a word; a string ended in AttributeError."""
    import datasets

    from ihbench.dataset import load_items
    from ihbench.dataset.wide import SchemaError

    conversations = datasets.load_dataset(str(official), "conversations", split="test")
    rows = datasets.load_dataset(str(official), "baseline", split="test").to_list()
    twice = [rows[0], {**rows[0], "response": "CONFLICTING BASELINE"}, *rows[1:]]  # the long layout
    with pytest.raises(SchemaError, match="a second, different baseline for"):
        load_items(conversations, baseline=twice)
    with pytest.raises(SchemaError, match="no baseline column"):
        load_items(conversations, baseline=conversations.to_list())
    with pytest.raises(ValueError, match="baseline rows must be rows"):
        load_items(conversations, baseline="nope")
    assert any(item.baseline for item in load_items(conversations, baseline=rows))


def test_a_verdict_with_a_key_given_twice_is_asked_again(official, tmp_path):
    """Battery 13, I22: `{"criteria": [all false], "criteria": [all true]}` was judged last-wins (a pass)
    without a re-ask; the same in ConversationBench answers."""
    import json
    import re

    from judging import ScriptedJudge
    from openai_test_server import Reply

    from ihbench.judge.prompts import RQ_SYSTEM

    scripted = ScriptedJudge(faults=False)

    def twice(body):
        if body["messages"][0]["content"] != RQ_SYSTEM:
            return scripted(body)
        count = len(re.findall(r"^\d+\. ", body["messages"][1]["content"].split("## Criteria", 1)[1], re.MULTILINE))
        fail = json.dumps([{"index": n + 1, "met": False, "reason": "no"} for n in range(count)])
        passed = json.dumps([{"index": n + 1, "met": True, "reason": "yes"} for n in range(count)])
        return Reply(content=f'{{"criteria": {fail}, "criteria": {passed}}}')

    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    with OpenAITestServer(respond=twice) as judge:
        main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
              str(tmp_path / "c.sqlite"), "--quiet"])
    rq = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()
          if json.loads(line)["axis"] == "rq"]
    assert rq and all(j["outcome"] == "judge_error" and "given twice" in j["error"] for j in rq), rq[0]


def test_a_misspelled_turn_key_is_refused_naming_the_likely_one(tmp_path):
    """Battery 13, I24: `'required_function_cal'` was kept as an extra, and its turn expected no call."""
    from convbench_layout import TURNS, write_benchmark_folder

    from ihbench.dataset.convbench import ConvBenchFormatError, read_benchmark

    folder = write_benchmark_folder(tmp_path / "repo", audio=False)
    turns = [dict(turn) for turn in TURNS]
    turns[1]["required_function_cal"] = turns[1].pop("required_function_call")
    (folder / "turns.py").write_text((folder / "turns.py").read_text().replace(repr(TURNS), repr(turns)))
    with pytest.raises(ConvBenchFormatError, match=r"turn 1: unknown key 'required_function_cal'; did you mean "
                                                   r"'required_function_call'\?"):
        read_benchmark(folder)


def test_a_card_saved_with_a_byte_order_mark_is_named_as_such(official, tmp_path, capsys):
    """Battery 13, I27: a card re-saved with a BOM was called "empty or damaged card"."""
    import shutil

    data = shutil.copytree(official, tmp_path / "d")
    card = data / "README.md"
    card.write_bytes(b"\xef\xbb\xbf" + card.read_bytes())
    capsys.readouterr()
    assert main(["info", str(data)]) == 2
    assert f"{card}: starts with a byte-order mark (saved by a Windows editor)" in capsys.readouterr().err


def test_a_clip_cap_too_small_for_a_conversationbench_run_is_refused_before_any_turn(tmp_path, capsys):
    """Battery 13, I23: `--option max_audio_clips=2` on a 4-turn audio run played two turns, then failed
    the third with advice (--history-audio) that command refuses, and "the same command tries again"."""
    from convbench_layout import write_benchmark_folder

    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    out = tmp_path / "run"
    with OpenAITestServer(respond=lambda body: None) as server:
        code = main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--config", "bike_bench", "--only-turns", "0,1,2,3", "--option", "max_audio_clips=2",
                     "--out", str(out), "--quiet"])
        assert server.requests == []
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "--option max_audio_clips=2: the server takes at most 2 audio clip(s) per prompt, and this run's longest " \
        "prompt holds 4 (turn 3 with the 3 turn(s) before it in its history, each heard); use --only-turns with at " \
        "most 2 turns, or --modality text" in err[0]
    assert "--history-audio" not in err[0] and not (out / "responses.jsonl").exists()
    with OpenAITestServer(respond=lambda body: None) as server:  # rehydrated: the golden history is heard too
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--config", "bike_bench", "--only-turns", "3", "--rehydrate", "--option",
                     "max_audio_clips=2", "--out", str(tmp_path / "rehydrated"), "--quiet"]) == 2
    assert "use --only-turns with turns among the first 2, or --modality text" in capsys.readouterr().err


def test_a_clip_cap_too_small_for_barge_in_is_refused_before_any_round(built, tmp_path, capsys):
    """Battery 13, I23: barge-in found the cap only in round 3, and named --history-audio, which it has not."""
    from ihbench.barge_in.run import rounds_of
    from ihbench.dataset.load import load_conversations

    first = load_conversations(str(built))[0]
    cap = rounds_of(first) - 2
    capsys.readouterr()
    with OpenAITestServer(respond=lambda body: None) as model, OpenAITestServer(respond=lambda body: None) as sim:
        code = main(["barge-in", "--data", str(built), "--model", "openai", "--model-path", "m", "--base-url",
                     model.base_url, "--sim-model", "s", "--sim-base-url", sim.base_url, "--limit", "1", "--option",
                     f"max_audio_clips={cap}", "--out", str(tmp_path / "run"), "--quiet"])
        assert model.requests == [] and sim.requests == []
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert f"this run's longest prompt holds {cap + 1} (round {cap + 2} of {first.conversation_id}" in err[0]
    assert err[0].endswith("use --modality text, or a server that takes more (vLLM: --limit-mm-per-prompt)")
    assert not (tmp_path / "run" / "run.json").exists()


@pytest.mark.parametrize("value, said", [
    ("", "expected a dataset folder or a Hub id, got ''"),
    ("nonexist", "nonexist: no such dataset directory, and not a hub id"),
    ("afile", "afile: expected a dataset directory (built by `ihbench build`), got a file"),
    ("a/b/c", "a/b/c: no such dataset directory"),
])
def test_ihbench_data_is_checked_as_data_is_before_the_space_serves(value, said, tmp_path, capsys, monkeypatch):
    """Battery 13, I25: `IHBENCH_DATA=... ihbench space` started the server, whose page then said the data
    "could not be opened (DataSourceError)", where `--data` with the same value is refused with the reason."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("text\n")
    monkeypatch.setenv("IHBENCH_DATA", value)
    assert main(["space", "--port", "1"]) == 2  # refused before the address is even tried
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ihbench space: error: $IHBENCH_DATA (--data's default): ") and \
        said in err[0], err


def test_a_revision_for_a_local_checkpoint_folder_is_refused_not_recorded(official, tmp_path, capsys):
    """Battery 13, I7: `--option revision=nonexistent-branch` with a local folder ran, and run.json recorded
    the revision as the weights' provenance though nothing could apply it."""
    folder = tmp_path / "qwen"
    folder.mkdir()  # refused before the folder is even read
    for command in (["doctor"], ["run", "--data", str(official), "--out", str(tmp_path / "run")]):
        code = main([*command, "--model", "qwen2-audio", "--model-path", str(folder), "--option",
                     "revision=nonexistent-branch"])
        err = capsys.readouterr().err
        assert code == 2 and f"--option revision=nonexistent-branch: a revision picks a Hub model's branch, tag or " \
            f"commit, and {folder} is a local folder" in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("when", ["right after the working folder is made", "while it is being removed"])
def test_a_stop_at_any_moment_leaves_no_hidden_working_folder(when, tmp_path, monkeypatch):
    """Battery 13, I6: a SIGTERM'd make-tiny-model left an empty `.OUT.building-PID` beside --out: a stop
    between making the working folder and guarding it, or a second stop during its removal, left it."""
    import pathlib
    import shutil

    from ihbench.dataset.io import atomic

    target = tmp_path / "out"
    if when.startswith("right after"):
        made = pathlib.Path.mkdir

        def mkdir_then_stop(self, *args, **kwargs):
            made(self, *args, **kwargs)
            raise KeyboardInterrupt  # SIGTERM is raised as one by the CLI
        monkeypatch.setattr(pathlib.Path, "mkdir", mkdir_then_stop)
        with pytest.raises(KeyboardInterrupt), atomic.staging_folder(target):
            pass
    else:
        removals = []
        remove = shutil.rmtree

        def interrupted_once(path, *args, **kwargs):
            removals.append(path)
            if len(removals) == 2:  # the cleanup's first try (the first is the stale-folder sweep before mkdir)
                raise KeyboardInterrupt
            return remove(path, *args, **kwargs)
        monkeypatch.setattr(atomic.shutil, "rmtree", interrupted_once)
        with pytest.raises(RuntimeError), atomic.staging_folder(target) as work:
            (work / "weights.bin").write_bytes(b"x")
            raise RuntimeError("stopped mid-build")
        assert len(removals) >= 3
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_cache_info_on_a_link_to_nothing_says_so(tmp_path, capsys):
    """Battery 34 nit: `cache info` on a dangling link said "no cache yet" (judge refuses the same path)."""
    (tmp_path / "cache.sqlite").symlink_to(tmp_path / "gone.sqlite")
    assert main(["cache", "info", "--cache", str(tmp_path / "cache.sqlite")]) == 0
    out = capsys.readouterr().out
    assert f"{tmp_path / 'cache.sqlite'}: a link to nothing (to {tmp_path / 'gone.sqlite'})" in out, out
    assert not (tmp_path / "gone.sqlite").exists()


@pytest.mark.parametrize("conversation_id, folder", [("x\x00y", "x_y-"), ("..", "_..-"), (".", "_.-"),
                                                     ("../../esc1", "_.._.._esc1-"), ("a/b", "a_b-"), ("a_b", "a_b"),
                                                     ("z" * 300, "z" * 139 + "-"), ("gov-01", "gov-01"),
                                                     ("x\u202eyfdp.exe", "x_yfdp.exe-")])
def test_export_gives_each_conversation_one_visible_folder_under_out(conversation_id, folder, official, tmp_path):
    """Battery 35, E2 (P2) and E3: a conversation_id with a NUL byte (a hand-edited dataset) ended export in a
    ValueError traceback; ".." in an OS error naming a temporary folder; "." exported into --out itself and
    "../../esc1" into a hidden folder. Battery 36, F4 and F5: a 300-character id ended in "File name too
    long"; "a/b" and "a_b" shared one folder. An id that is not a folder's name as it is gets a digest.
    Battery 38 nit: a right-to-left override kept in the folder's name turned its listing around."""
    import dataclasses

    from ihbench.dataset import load_items
    from ihbench.dataset.export import export_conversation
    from ihbench.dataset.load import load_conversations

    conversation = load_conversations(str(official))[0]
    items = [dataclasses.replace(item, conversation_id=conversation_id) for item in load_items(str(official))
             if item.conversation_id == conversation.conversation_id]
    out = tmp_path / "out"
    written = export_conversation(dataclasses.replace(conversation, conversation_id=conversation_id), items, out)
    assert written.parent == out and (written / "conversation.md").is_file()
    assert written.name == folder if not folder.endswith("-") else \
        (written.name.startswith(folder) and len(written.name) == len(folder) + 10)
    assert [p.name for p in out.iterdir()] == [written.name] and not (tmp_path / "esc1").exists()
