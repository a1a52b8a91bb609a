"""Battery 14 (issue 23): findings J1-J28 of the fourteenth battery of bad inputs, tried on an installed wheel
as a new user would (/work/battery14/LOG.md). Stand-ins are named where used (scripted OpenAI-compatible
servers on loopback); each test's docstring names its finding."""
import re

import pytest
from metric_modules import load
from openai_test_server import OpenAITestServer
from test_battery10 import official  # noqa: F401 (fixture: a dataset in the official layout)

from ihbench.cli import main


def _installed_toolkit() -> "Path":
    from pathlib import Path

    import ihbench

    return Path(ihbench.__file__).resolve().parent


@pytest.mark.parametrize("how", ["--cache", "IHBENCH_CACHE", "IHBENCH_CACHE inside a metric", "blank IHBENCH_CACHE"])
def test_a_cache_inside_the_installed_toolkit_is_refused_before_any_work(how, tmp_path, capsys, monkeypatch):
    """Battery 14, J1: `--cache` or $IHBENCH_CACHE inside the installed package wrote judge_cache.sqlite there,
    and publish-space then staged it (every judge prompt and answer uploaded with the Space)."""
    package = _installed_toolkit()
    monkeypatch.chdir(tmp_path)
    argv = ["judge", str(tmp_path / "nothing-here"), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1"]
    if how == "--cache":
        argv += ["--cache", str(package / "x.sqlite")]
    else:
        monkeypatch.setenv("IHBENCH_CACHE", {"IHBENCH_CACHE": str(package), "blank IHBENCH_CACHE": "   ",
                                             "IHBENCH_CACHE inside a metric": str(package / "metrics" / "apt")}[how])
    before = sorted(p.name for p in package.rglob("*.sqlite"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    said = "blank; unset it, or give a folder" if how.startswith("blank") else "is inside the installed toolkit's files"
    assert said in err and (how.split()[0] if not how.startswith("blank") else "IHBENCH_CACHE") in err, err
    assert sorted(p.name for p in package.rglob("*.sqlite")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_publish_space_stages_only_what_the_package_ships(tmp_path):
    """Battery 14, J1: publish-space copied the installed package folder whole, so a cache (or anything) that
    landed in it was staged for upload. It stages the modules and the package data setup.cfg names."""
    import configparser
    from pathlib import Path

    from ihbench.publish.space import SHIPPED, shipped_files

    config = configparser.ConfigParser()
    config.read(Path(__file__).resolve().parent.parent / "setup.cfg")
    declared = {package: tuple(line.strip() for line in patterns.splitlines()
                               if line.strip() and not line.strip().startswith("#"))
                for package, patterns in config["options.package_data"].items()}
    assert {k: v for k, v in SHIPPED.items() if v} == declared  # one list, kept equal to the wheel's
    package = tmp_path / "pkg"
    for name in ("a.py", "sub/b.py", "metrics/apt/apt.py", "metrics/apt/README.md", "reference/t.csv",
                 "judge_cache.sqlite", "metrics/apt/judge_cache.sqlite", "notes.txt", ".hidden.py",
                 "__pycache__/a.cpython-311.pyc", "spaces/app.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("x")
    assert shipped_files(package, SHIPPED["ihbench"]) == ["a.py", "metrics/apt/README.md", "metrics/apt/apt.py",
                                                          "reference/t.csv", "sub/b.py"]


def test_publishing_refuses_a_dataset_file_that_is_a_link_leading_out_of_the_folder(official, tmp_path, capsys):
    """Battery 14, J2: stats.png replaced by a link to a secret file outside the dataset was followed and
    uploaded by publish-dataset and publish-space."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(official, data)
    secret = tmp_path / "secret.txt"
    secret.write_text("hf_SECRET\n")
    plot = next(p for p in data.iterdir() if p.suffix == ".png") if any(p.suffix == ".png" for p in data.iterdir()) \
        else data / "stats.png"
    plot.unlink(missing_ok=True)
    plot.symlink_to(secret)
    for argv in (["publish-dataset", str(data), "--repo", "a/c", "--dry-run"],
                 ["publish-space", "--repo", "a/b", "--data", str(data), "--dry-run", "--staging-dir",
                  str(tmp_path / "stage")]):
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"links leading out of the dataset folder: {plot.name} (-> {secret})" in err, err
    assert not (tmp_path / "stage").exists()


@pytest.mark.parametrize("where", ["a dataset", "the installed toolkit", "blank"])
def test_the_spaces_runs_folder_is_checked_before_serving(where, official, tmp_path, capsys, monkeypatch):
    """Battery 14, J3: the Evaluate tab wrote its runs into ./runs or $IHBENCH_RUNS unchecked: inside a dataset
    (then refused by publish-dataset) or inside the installed package (then staged by publish-space)."""
    monkeypatch.chdir(tmp_path)
    if where == "a dataset":
        monkeypatch.chdir(official)  # ./runs would be inside it
        monkeypatch.delenv("IHBENCH_RUNS", raising=False)
        said = "./runs (the Space's runs folder; IHBENCH_RUNS moves it): "
    elif where == "blank":
        monkeypatch.setenv("IHBENCH_RUNS", "  ")
        said = "IHBENCH_RUNS='  ': blank"
    else:
        monkeypatch.setenv("IHBENCH_RUNS", str(_installed_toolkit() / "metrics"))
        said = "is inside the installed toolkit's files"
    assert main(["space", "--data", str(official), "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert said in err, err
    assert not (official / "runs").exists()


def test_server_replicas_are_one_server_each_in_any_order_or_spelling(official, tmp_path, capsys):
    """Battery 14, J4: the same replicas given in another order were "a different run", and one server
    spelled twice (a trailing slash) was taken as two replicas."""
    with OpenAITestServer() as one, OpenAITestServer() as two:
        def run(*urls):
            argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                    str(tmp_path / "r"), "--epochs", "1", "--limit", "2", "--option", "max_retries=0", "--quiet"]
            for url in urls:
                argv += ["--base-url", url]
            return main(argv)
        assert run(one.base_url, two.base_url) == 0
        assert run(two.base_url + "/", one.base_url.replace("127.0.0.1", "127.0.0.1")) == 0  # resumed, not refused
        capsys.readouterr()
        assert run(one.base_url, one.base_url + "/") == 2
    assert f"'{one.base_url}/' is given twice" in capsys.readouterr().err


@pytest.mark.parametrize("call, said", [
    (lambda m: m.load("rq_pass_rate", "readme"), "config_name: 'readme', but rq_pass_rate has no configurations"),
    (lambda m: m.load("tf_win_rate", "nonsense"), "config_name: 'nonsense', but tf_win_rate has no configurations"),
    (lambda m: m.load("convbench_pass_rate", "x"), "config_name: 'x', but convbench_pass_rate has no configurations"),
    (lambda m: m.load("rq_pass_rate").compute(predictions=[[True]], compare_item_ids=["a/1"]),
     "compare_item_ids: given without compare_predictions"),
    (lambda m: m.load("tf_win_rate").compute(predictions=["model"], return_items="no"),
     "return_items: expected True or False, got 'no'"),
])
def test_metric_arguments_that_cannot_apply_are_refused(call, said):
    """Battery 14, J5: a config name on a metric without configurations, compare_item_ids without
    compare_predictions and return_items="no" (taken as true) were accepted silently."""
    import types

    module = types.SimpleNamespace(load=load)
    with pytest.raises(ValueError, match=re.escape(said)):
        call(module)


def test_a_run_whose_dataset_moved_is_judged_and_reported_from_its_new_place(official, built, tmp_path, capsys):
    """Battery 14, J6: after the dataset folder moved, judge and report said "no such dataset directory" about
    a path the user never typed, and --data was refused; only editing run.json by hand helped."""
    import json
    import shutil

    from judging import ScriptedJudge

    data = tmp_path / "data"
    shutil.copytree(official, data)
    run = tmp_path / "run"
    with OpenAITestServer() as model:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run),
                     "--epochs", "1", "--limit", "2", "--base-url", model.base_url, "--quiet"]) == 0
    data.rename(tmp_path / "moved")
    capsys.readouterr()
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        argv = ["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                str(tmp_path / "c.sqlite"), "--quiet"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{run / 'run.json'} names the dataset {data}, which is not there now (moved or deleted?); give its " \
            "new place with --data" in err, err
        assert main([*argv, "--data", str(built)]) == 2  # other items: refused, not judged against them
        assert "not the items" in capsys.readouterr().err
        assert main([*argv, "--data", str(tmp_path / "moved")]) == 0
    assert main(["report", str(run), "--data", str(tmp_path / "moved"), "--quiet"]) == 0
    assert json.loads((run / "summary.json").read_text())["runs"][0]["data"] == str(tmp_path / "moved")
    assert json.loads((run / "run.json").read_text())["data"] == str(data)  # the run's record is left as it was


def test_an_epoch_folder_of_a_failed_conversation_read_as_a_reference_run_is_not_scored(tmp_path, capsys):
    """Battery 14, J7: `ihbench judge RUN/epoch_0 --data --config` (our epoch folder read as a reference
    harness's) judged a conversation that had stopped on a failed turn, and the report said pass rows 1.000,
    "0 unfinished": runtime.json's status, error and failed turns were not read."""
    import json

    from convbench_judging import ConvJudge
    from convbench_layout import write_benchmark_folder
    from openai_test_server import Reply
    from test_convbench_run import golden_replay, spec, user_turns

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, text_only=True, progress=False)
    replay = golden_replay()
    out = tmp_path / "run"
    with OpenAITestServer(respond=lambda body: Reply(status=500) if user_turns(body) == 4 else replay(body)) as server:
        assert run_convbench(spec(data, out, server), progress=False).errors == 1
    assert json.loads((out / "epoch_0" / "runtime.json").read_text())["status"] == "failed"
    capsys.readouterr()
    with OpenAITestServer(respond=ConvJudge()) as server:
        assert main(["judge", str(out / "epoch_0"), "--judge-model", "scripted-judge", "--judge-base-url",
                     server.base_url, "--cache", str(tmp_path / "cache.sqlite"), "--data", str(data), "--config",
                     "bike_bench"]) == 0
    said = capsys.readouterr().out
    assert f"{out / 'epoch_0' / 'runtime.json'} says the conversation is failed (" in said, said
    assert not list((out / "epoch_0").glob("judgments*.jsonl")) or all(
        json.loads(line)["outcome"] != "judged" for f in (out / "epoch_0").glob("judgments*.jsonl")
        for line in f.read_text().splitlines())
    assert main(["report", str(out / "epoch_0"), "--data", str(data), "--config", "bike_bench", "--out",
                 str(tmp_path / "rep"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert summary["scores"] is None and summary["conversations"]["unfinished"] == 1, summary["conversations"]


@pytest.mark.parametrize("argv", [
    ["judge", "RUN", "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--cache", "{tmp}/cdir/"],
    ["verify", "--audio", "RUN", "--audio-report", "{tmp}/dir/"],
])
def test_a_file_option_given_a_folders_name_is_refused(argv, tmp_path, capsys):
    """Battery 14, J8: `--cache t31/cdir/` (or --audio-report dir/) wrote a FILE named without the slash."""
    argv = [a.format(tmp=tmp_path).replace("RUN", str(tmp_path / "r")) for a in argv]
    with pytest.raises(SystemExit) as stopped:  # refused by the parser
        main(argv)
    assert stopped.value.code == 2
    assert "a folder's name (it ends in a slash); give a file name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_sid_summary_whose_fir_its_own_counts_contradict_is_refused(tmp_path):
    """Battery 14, J9: summary.json edited to FIR 0.000 (its counts: 20 false alarms of 20 clips) was
    reported as the detector's score without a word."""
    from ihbench.summaries import SummaryFileError, read_summary

    scores = {"fir": 1.0, "irl": None, "apt": 5.09, "definition": "notebook", "n_clips": 20, "n_break": 20,
              "n_nonbreak": 0, "false_alarms": 20, "false_alarms_nonbreak": 0, "early_detections": 20, "misses": 0,
              "hits_within_tolerance": 0, "late_hits": 0, "correct_rejections": 0}
    summary = {"kind": "sid", "format_version": 1, "detector": {"detector": "energy"}, "n_clips": 20,
               "scores": {"notebook": scores, "readme": {**scores, "definition": "readme", "fir": None}}}
    path = tmp_path / "summary.json"
    path.write_text(__import__("json").dumps(summary))
    read_summary(path)  # as `ihbench sid` wrote it
    for edit, said in (({"fir": 0.0}, "fir is 0.0, but false_alarms 20 of n_clips 20 give 1"),
                       ({"n_break": 19}, "n_break 19 + n_nonbreak 0 is not n_clips 20"),
                       ({"misses": 3}, "its outcomes add up to 23 clips, not n_clips 20")):
        summary["scores"]["notebook"] = {**scores, **edit}
        path.write_text(__import__("json").dumps(summary))
        with pytest.raises(SummaryFileError, match=re.escape(said)):
            read_summary(path)


def test_a_key_a_server_echoes_in_its_error_is_never_recorded(official, tmp_path, capsys, monkeypatch):
    """Battery 14, J16: a proxy's 500 that echoed the request's key (`Bearer sk-...`) was written into
    responses.jsonl (and judgments, runtime.json, barge_in.jsonl, generate's discarded.jsonl)."""
    from openai_test_server import Reply

    key = "sk-SECRETKEY-b14-0123456789"
    monkeypatch.setenv("MY_KEY_VARIABLE", key)  # a variable not named like a secret: known as the one in use
    echo = lambda body: Reply(status=500, content=f"overloaded (request auth Bearer {key}; key {key})")  # noqa: E731
    with OpenAITestServer(respond=echo) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--option", "max_retries=0", "--option", "api_key_env=MY_KEY_VARIABLE", "--quiet"]) == 1
    written = "".join(p.read_text() for p in (tmp_path / "r").rglob("*") if p.is_file())
    assert key not in written and key not in "".join(capsys.readouterr())
    assert "overloaded (request auth Bearer <redacted>; key <redacted>)" in written


def test_load_items_refuses_arguments_that_cannot_apply_to_its_source(official):
    """Battery 14, J15: `load_items(folder, revision=...)` and a Dataset given with config=, split= or
    revision= ignored them silently."""
    import datasets

    from ihbench.dataset import load_items
    from ihbench.dataset.load import DataSourceError

    with pytest.raises(DataSourceError, match="a revision picks a Hub dataset's branch, tag or commit, and .* is a "
                                              "local folder"):
        load_items(str(official), revision="nonexistent-branch")
    rows = datasets.load_dataset(str(official), "conversations", split="test")
    for argument in ({"config": "interruptions"}, {"split": "test"}, {"revision": "x"}):
        with pytest.raises(DataSourceError, match=f"^{next(iter(argument))}: not for a Dataset given itself"):
            load_items(rows, **argument)
    assert load_items(rows, config="conversations") == load_items(rows)


def test_an_ipv6_host_for_the_space_is_refused_before_serving(official, capsys):
    """Battery 14, J12: `--host ::1` passed the check, then gradio said no port was free in the range."""
    assert main(["space", "--data", str(official), "--host", "::1", "--port", "18599"]) == 2
    assert "--host: ::1 is an IPv6 address; the Space's server (gradio) listens on IPv4 ones" in \
        capsys.readouterr().err


@pytest.mark.parametrize("which", ["data/knowledge_base.txt", "turns.py", "audio/turn_001.wav"])
def test_a_benchmark_file_that_is_no_regular_file_is_said_so(which, tmp_path, capsys):
    """Battery 14, J13: convbench-import called a knowledge base that is a folder (or a FIFO) "not found", and a
    turns.py FIFO "not a ConversationBench layout"."""
    import os

    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "repo")
    (folder / which).unlink()
    os.mkfifo(folder / which) if which != "data/knowledge_base.txt" else (folder / which).mkdir()
    argv = ["convbench-import", str(folder), "--out", str(tmp_path / "out"), "--name", "kb"]
    assert main(argv + ([] if which.startswith("audio") else ["--text-only"])) == 2
    err = capsys.readouterr().err
    kind = "a folder" if which == "data/knowledge_base.txt" else "a named pipe"
    assert f"{folder / which}: {kind}, not a regular file" in err, err
    assert not (tmp_path / "out").exists()


def test_a_staging_dir_inside_a_dataset_is_refused_before_a_lock_is_made_there(official, tmp_path, capsys):
    """Battery 14, J20: the lock beside --staging-dir was made (and removed) inside the dataset before the
    refusal, changing it; in a read-only dataset the refusal named the lock instead of the reason."""
    import os
    import shutil

    data = tmp_path / "data"
    shutil.copytree(official, data)
    before = os.stat(data).st_mtime_ns
    assert main(["publish-metrics", "--namespace", "a", "--dry-run", "--staging-dir", str(data / "stg")]) == 2
    assert "is inside" in capsys.readouterr().err and os.stat(data).st_mtime_ns == before


def test_two_reports_into_one_folder_at_once_are_refused(official, tmp_path, capsys):
    """Battery 14, J18: two `ihbench report --out F` at once each wrote half of F (one's report.md beside the
    other's figures): the report folder has a lock, as run folders do."""
    from ihbench.dataset.io import exclusive, lock_file_for

    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--quiet"]) == 0
    out = tmp_path / "rep"
    with exclusive(lock_file_for(out), f"report folder {out}"):  # another report writing there now
        capsys.readouterr()
        assert main(["report", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 2
    assert f"report folder {out}" in capsys.readouterr().err and not (out / "report.md").exists()
    assert main(["report", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 0


def test_two_runs_of_one_model_on_one_dataset_are_told_apart_by_folder(official, tmp_path, monkeypatch):
    """Battery 14, J17: two runs of one model on one dataset had the same label in every row of report.md,
    and their folders were named nowhere."""
    monkeypatch.chdir(tmp_path)
    with OpenAITestServer() as server:
        for name in ("first", "second"):
            assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", name,
                         "--epochs", "1", "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    assert main(["report", "first", "second", "--out", "rep", "--quiet"]) == 0
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "| m (audio, first) |" in report and "| m (audio, second) |" in report, report[:900]


def test_a_damaged_generate_json_is_said_not_replaced(tmp_path, capsys):
    """Battery 14, J19: a damaged generate.json (the suite's history: one entry per run with command, seeds,
    tokens, cost) was silently replaced by a new one holding only the last run."""
    import json

    from generate_script import GenerationScript
    from test_generate import generate

    out = tmp_path / "suite"
    out.mkdir()
    (out / "generate.json").write_text('{"runs": [{"command": ["ihbench", "generate"]}], "bad json')
    with OpenAITestServer(respond=GenerationScript(["cooperative"])) as server:
        assert generate(server, out) == 2
    assert f"{out / 'generate.json'}: not valid JSON" in capsys.readouterr().err
    assert (out / "generate.json").read_text().endswith('"bad json')  # left as it was, for the user to repair
    (out / "generate.json").write_text(json.dumps({"runs": [{"command": ["ihbench", "generate"]}]}))
    with OpenAITestServer(respond=GenerationScript(["cooperative"])) as server:
        assert generate(server, out) == 0
    assert len(json.loads((out / "generate.json").read_text())["runs"]) == 2  # the history kept, this run added


def test_the_space_sends_its_owners_key_only_to_its_owners_endpoint(built, tmp_path, monkeypatch):
    """Battery 14, J22: the Space sent its owner's OPENAI_API_KEY to whatever server URL a visitor typed (the
    openai family's server, the judge endpoint): on a public Space anyone could collect it."""
    from judging import ScriptedJudge

    from ihbench import ui

    key = "sk-SPACEOWNER-SECRET-777"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("IHBENCH_DATA", str(built))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path / "runs"))
    with OpenAITestServer() as visitors_model, OpenAITestServer(respond=ScriptedJudge(faults=False)) as owners_judge, \
            OpenAITestServer(respond=ScriptedJudge(faults=False)) as visitors_judge:
        monkeypatch.setenv("IHBENCH_SPACE_ENDPOINT", owners_judge.base_url)
        runs = [list(ui.evaluate_stream("openai", "m", None, None, 1, 1, 8, visitors_model.base_url))[-1][2]
                for _ in range(2)]
        ui.judge_run_dir(runs[0], visitors_judge.base_url, "j")
        ui.judge_run_dir(runs[1], owners_judge.base_url + "/", "j")  # the owner's own server, however spelled
        ui.judge_run_dir(runs[1], owners_judge.base_url, "j")  # judged already: the scores again, no call
        with pytest.raises(ui.UserError, match="enter the server URL"):  # no default server: not OpenAI on the key
            list(ui.evaluate_stream("openai", "gpt-4o", None, None, 1, 1, 8, ""))
    assert visitors_model.authorizations and visitors_judge.authorizations
    assert all(key not in (a or "") for a in visitors_model.authorizations + visitors_judge.authorizations)
    assert all(a == f"Bearer {key}" for a in owners_judge.authorizations) and owners_judge.authorizations


def test_a_whole_last_record_without_its_newline_is_kept(official, tmp_path):
    """Battery 14, J26: a complete last record saved without its final newline (an editor) was taken as torn:
    the report left its verdicts out and the next run asked the item again."""
    with OpenAITestServer() as server:
        argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                str(tmp_path / "r"), "--epochs", "1", "--limit", "2", "--base-url", server.base_url, "--quiet"]
        assert main(argv) == 0
        path = tmp_path / "r" / "responses.jsonl"
        path.write_bytes(path.read_bytes().rstrip(b"\n"))
        asked = len(server.requests)
        assert main(argv) == 0
        assert len(server.requests) == asked  # nothing asked again
    lines = path.read_text().split("\n")
    assert lines[-1] == "" and len([line for line in lines if line]) == 2  # the writer put the newline back


def test_a_run_folder_that_lost_its_run_json_is_said_so_by_judge(official, tmp_path, capsys):
    """Battery 14, J27: judge said "not a run directory; run `ihbench run` first", and `ihbench run` then refused
    the folder as holding files; report said it right (put run.json back)."""
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--quiet"]) == 0
    (tmp_path / "r" / "run.json").unlink()
    capsys.readouterr()
    assert main(["judge", str(tmp_path / "r"), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1",
                 "--cache", str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'r' / 'run.json'}: missing" in err and "put it back" in err and "run `ihbench run` first" \
        not in err, err


def test_tf_on_items_without_a_baseline_is_refused_before_any_call(official, tmp_path, capsys):
    """Battery 14, J24: items without a baseline response became judge_errors promised a retry that could never
    pass (not retryable; the next judge skipped them as done)."""
    import shutil

    import yaml

    data = tmp_path / "data"
    shutil.copytree(official, data)
    card = (data / "README.md").read_text()
    head, meta, body = card.split("---", 2)
    parsed = yaml.safe_load(meta)
    parsed["configs"] = [c for c in parsed["configs"] if c["config_name"] != "baseline"]
    (data / "README.md").write_text(f"---\n{yaml.safe_dump(parsed)}---{body}")
    shutil.rmtree(data / "baseline", ignore_errors=True)
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--quiet"]) == 0
    capsys.readouterr()
    with OpenAITestServer() as judge:
        argv = ["judge", str(tmp_path / "r"), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                str(tmp_path / "c.sqlite"), "--quiet"]
        assert main(argv) == 2
        assert judge.requests == []
    err = capsys.readouterr().err
    assert "have no baseline response" in err and "judge RQ alone (--axes rq)" in err, err
    assert not (tmp_path / "r" / "judgments.jsonl").exists()
    from judging import ScriptedJudge

    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        argv[5] = judge.base_url
        assert main([*argv, "--axes", "rq"]) == 0  # the remedy works


def test_a_judgments_file_holding_two_judges_verdicts_is_refused(official, tmp_path, capsys):
    """Battery 14, J25: two judges' files joined by hand were reported as one judge's (the last line won, and
    the provenance named only one)."""
    from judging import ScriptedJudge

    run = tmp_path / "r"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--epochs", "1", "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        for model, out in (("j", run / "judgments.jsonl"), ("j2", run / "judgments-j2.jsonl")):
            assert main(["judge", str(run), "--judge-model", model, "--judge-base-url", judge.base_url, "--cache",
                         str(tmp_path / f"{model}.sqlite"), "--out", str(out), "--quiet"]) == 0
    with (run / "judgments.jsonl").open("a") as joined:
        joined.write((run / "judgments-j2.jsonl").read_text())
    (run / "judgments-j2.jsonl").unlink()
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    assert f"{run / 'judgments.jsonl'}: holds judgments by j, j2; one judge per file" in capsys.readouterr().err


def test_only_turns_in_another_order_resume_the_same_run(tmp_path):
    """Battery 14, J4 (its second part): `--only-turns 5,4,3` played turns 3,4,5 but recorded [5, 4, 3], and the
    same turns given as 3,4,5 were "a different run"."""
    import json

    from convbench_layout import write_benchmark_folder
    from test_convbench_run import golden_replay, spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, text_only=True, progress=False)
    out = tmp_path / "run"
    with OpenAITestServer(respond=golden_replay()) as server:
        run_convbench(spec(data, out, server, only_turns=[3, 1, 0]), progress=False)
        assert json.loads((out / "run.json").read_text())["convbench"]["only_turns"] == [0, 1, 3]
        again = run_convbench(spec(data, out, server, only_turns=[0, 1, 3]), progress=False)
    assert again.written == 0 and again.skipped == 3


def test_an_unfinished_run_is_said_so_in_report_md(official, tmp_path):
    """Battery 14, J10 (its second part): a run killed at 8 of 20 answers was said unfinished on the terminal
    only; report.md showed its scores as a whole run's."""
    import json

    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "2", "--limit", "2", "--base-url", server.base_url,
                     "--quiet"]) == 0
    answers = tmp_path / "r" / "responses.jsonl"
    answers.write_text("".join(answers.read_text().splitlines(keepends=True)[:2]))  # as a run killed after 2 leaves it
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep"), "--quiet"]) == 0
    assert "is unfinished: 2 of 4 planned response(s) are in it" in (tmp_path / "rep" / "report.md").read_text()


def test_settings_that_cannot_apply_are_refused_or_said(official, tmp_path, capsys):
    """Battery 14, J28: build's SID options with --no-sid, and report's --sid-definition for IHBench runs or
    --n-bootstrap/--seed/--tost-margin for a ConversationBench run, were accepted and ignored."""
    assert main(["build", "--out", str(tmp_path / "b"), "--no-sid", "--sid-noise-clips", "5", "--quiet"]) == 2
    assert "--sid-noise-clips: for the SID configs, which --no-sid leaves out" in capsys.readouterr().err
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep"), "--sid-definition", "readme"]) == 2
    assert "--sid-definition: does not apply to IHBench runs" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep"), "--tost-margin", "0.1"]) == 0
    assert "note: --tost-margin: no audio and text run of one model" in capsys.readouterr().out
    assert not (tmp_path / "b").exists()


def test_the_space_on_sigterm_and_on_a_dataset_it_cannot_browse_says_what_is_true(tmp_path, capsys, monkeypatch):
    """Battery 14, J23: stopped by SIGTERM, the Space said the batch commands' "nothing of them was written",
    untrue for a server whose visitors' runs stay; a dataset it could not browse was "could not be opened
    (DataSourceError)" with advice about IHBENCH_DATA alone."""
    from convbench_layout import write_benchmark_folder

    import ihbench.cli.space as space_cli
    from ihbench import ui
    from ihbench.cli import Terminated
    from ihbench.dataset.convbench import import_convbench

    def stopped(args):
        raise Terminated()
    monkeypatch.setattr(space_cli, "main", stopped)
    monkeypatch.chdir(tmp_path)
    assert main(["space", "--port", "18597"]) == 143
    err = capsys.readouterr().err
    assert "the runs its visitors made stay in the runs folder" in err and "nothing of them was written" not in err
    data = tmp_path / "cb"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, text_only=True, progress=False)
    monkeypatch.setenv("IHBENCH_DATA", str(data))
    problem = ui.data_problem()
    assert "cannot be browsed here: <dataset>: no config 'conversations'; available: bike_bench" in problem
    assert "DataSourceError" not in problem
    assert "`ihbench space --data ...`" in problem


def test_a_tmpdir_inside_a_dataset_is_refused_before_a_staging_folder_is_made_there(official, tmp_path, capsys,
                                                                                    monkeypatch):
    """Battery 14, J20 (its second part): with TMPDIR inside a dataset, publish-space made its temporary staging
    folder there, then refused it as a staging folder the user never gave."""
    import shutil
    import tempfile

    data = tmp_path / "data"
    shutil.copytree(official, data)
    monkeypatch.setenv("TMPDIR", str(data))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    before = sorted(p.name for p in data.iterdir())
    assert main(["publish-space", "--repo", "a/b", "--data", str(data), "--dry-run"]) == 2
    # since battery 51, X6, by the rule every command keeps for TMPDIR (torch and matplotlib write there too)
    assert f"TMPDIR: {data} is a dataset folder" in capsys.readouterr().err
    assert sorted(p.name for p in data.iterdir()) == before
