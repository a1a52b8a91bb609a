"""Battery 10 (issue 23): findings of the tenth battery of bad inputs, tried on an installed wheel as a
new user would. The model under test and the judge are STAND-INS (scripted OpenAI-compatible servers
on loopback); the data, the run folders and the judges' HTTP are real."""
import json
import re

import pytest
from judging import ScriptedJudge
from openai_test_server import OpenAITestServer

from ihbench.cli import main


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


def _judged(official, run, *extra):
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run), "--limit",
            "2", "--quiet", *extra]
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(run.parent / "c.sqlite"), "--quiet"]) == 0
    return argv


# --- F3: a run's own judgments, some of whose answers are left out, are not "another run's" ------------

@pytest.mark.parametrize("cause", ["torn last line", "fewer epochs"])
def test_a_runs_own_judgments_are_kept_when_some_of_its_answers_are_left_out(cause, official, tmp_path, capsys):
    """A responses.jsonl whose last line a crash cut off, or a rerun with a lower --epochs, leaves some
    judgments without their answer: the report says why and scores the rest, never "another run's
    judgments file; move it out of the way" (which throws valid verdicts away)."""
    run = tmp_path / "run"
    argv = _judged(official, run, "--epochs", "2")
    responses = (run / "responses.jsonl").read_bytes()
    if cause == "torn last line":
        (run / "responses.jsonl").write_bytes(responses[:-40])
        said = "are damaged or cut off (line(s) 4) and left out; `ihbench run` with the same options answers them again"
    else:
        with OpenAITestServer() as server:
            assert main([*argv[:-2], "--epochs", "1", "--allow-endpoint-change", "--base-url", server.base_url]) == 0
        said = "judgment(s) of epochs beyond the run's --epochs 1 (from an earlier start) are left out"
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert said in err and "another run's" not in err and "Traceback" not in err, err
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]
    assert summary["tf_win_rate"]["tf_win_rate"] is not None
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c2.sqlite"), "--quiet"]) == 0
        assert judge.requests == []  # nothing of the kept answers judged twice


# --- F4, F9, F77: caches placed where they cannot work, or where they would be litter ---------------------

@pytest.mark.parametrize("cache", ["dangling link", "name too long"])
def test_a_cache_that_cannot_be_made_is_refused_before_any_work_and_leaves_nothing(cache, official, tmp_path,
                                                                                   capsys):
    import os

    from test_battery4_files import _files

    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--limit", "1", "--quiet", "--base-url", server.base_url]) == 0
    if cache == "dangling link":
        path = tmp_path / "c.sqlite"
        path.symlink_to(tmp_path / "gone" / "c.sqlite")
        said = f"--cache: {path} is a symlink to {os.readlink(path)}, which does not exist"
    else:
        path = tmp_path / ("C" * (os.pathconf(tmp_path, "PC_NAME_MAX") - 7) + ".sqlite")
        # (the path, 300 characters and more, is quoted by its first ones: battery 57, D10)
        said = f"file name of {len(path.name)} bytes, too long once ihbench adds its own suffixes"
    before = _files(tmp_path)
    capsys.readouterr()
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(path), "--quiet"]) == 2
        assert judge.requests == []
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err
    assert _files(tmp_path) == before


@pytest.mark.parametrize("command", ["build", "barge-in"])
def test_a_render_cache_inside_a_dataset_is_refused_before_any_work(command, built, official, tmp_path, capsys,
                                                                    monkeypatch):
    """IHBENCH_CACHE inside a built dataset: the LLM cache there was refused, the TTS renders were written
    there (and publish-dataset then refused the dataset)."""
    from test_battery4_files import _files

    monkeypatch.setenv("IHBENCH_CACHE", str(official / "cachedir"))
    before = _files(tmp_path)
    capsys.readouterr()
    if command == "build":
        argv = ["build", "--out", str(tmp_path / "new"), "--quiet"]
    else:
        argv = ["barge-in", "--data", str(built), "--model", "openai", "--model-path", "m", "--base-url",
                "http://127.0.0.1:9/v1", "--sim-model", "s", "--sim-base-url", "http://127.0.0.1:9/v1",
                "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "bi"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    # said at the start of every command, as the variable it is (battery 14, J1: the toolkit's own too)
    assert f"IHBENCH_CACHE: {official / 'cachedir'} is inside {official}" in err and "Traceback" not in err, err
    assert _files(tmp_path) == before


# --- F5: a cache whose last-use times are damaged -------------------------------------------------------

@pytest.mark.parametrize("used", ["'abc'", "1e20"])
def test_cache_info_and_prune_read_a_cache_whose_last_use_times_are_damaged(used, tmp_path, capsys):
    import sqlite3

    from ihbench.llm.cache import LLMCache

    path = tmp_path / "c.sqlite"
    cache = LLMCache(path, clock=lambda: 1_000_000.0)
    cache.put("a", {"n": 1})
    cache.put("b", {"n": 2})
    cache.close()
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE judgments SET used = {used} WHERE key = 'a'")
    db.close()
    capsys.readouterr()
    assert main(["cache", "info", "--cache", str(path)]) == 0
    out = capsys.readouterr()
    assert "2 answer(s)" in out.out and "last used 1970-01-12T13:46:40+00:00 .. 1970-01-12T13:46:40+00:00" in out.out
    assert "Traceback" not in out.err
    assert main(["cache", "prune", "--cache", str(path), "--max-entries", "1"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    with sqlite3.connect(path) as db:  # every time damaged: "None .. None" was printed (battery 24 nit)
        db.execute(f"UPDATE judgments SET used = {used}")
    db.close()
    assert main(["cache", "info", "--cache", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("on disk; last use not recorded") and "None" not in out, out


# --- F1: a command that needs an optional extra not installed ------------------------------------------

def test_every_optional_extra_s_package_is_known_by_its_import_name():
    import configparser
    import re
    from pathlib import Path

    from ihbench.cli import OPTIONAL_MODULES

    config = configparser.ConfigParser()
    config.read(Path(__file__).parents[1] / "setup.cfg")
    imports = {"piper-tts": "piper", "pipecat-ai": "pipecat"}
    for extra, block in config["options.extras_require"].items():
        if extra == "dev":
            continue
        for line in block.split("\n"):
            name = re.split(r"[<>=!~\[; ]", line.split("#")[0].strip())[0]
            if name:
                module = imports.get(name, name.replace("-", "_"))
                assert OPTIONAL_MODULES.get(module) == extra, (extra, name)


@pytest.mark.parametrize("command, module, extra", [(["make-tiny-model", "qwen2-text"], "transformers", "models"),
                                                    (["space", "--data", "{data}"], "gradio", "space")])
def test_a_command_whose_extra_is_not_installed_says_which_to_install(command, module, extra, official, tmp_path,
                                                                     capsys, monkeypatch):
    """Stand-in for an install without the extra: the module's import is made to fail as it then does."""
    import builtins
    import sys

    from test_battery4_files import _files

    real = builtins.__import__

    def without(name, *args, **kwargs):
        if name == module or name.startswith(module + "."):
            raise ModuleNotFoundError(f"No module named {module!r}", name=module)
        return real(name, *args, **kwargs)

    for loaded in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setattr(builtins, "__import__", without)
    before = _files(tmp_path)
    capsys.readouterr()
    argv = [part.format(data=official) for part in command]
    assert main([*argv, "--out", str(tmp_path / "out")] if command[0] == "make-tiny-model" else argv) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (f"ihbench {command[0]}: error: this needs {module}, which comes with the "
                                            f"optional extra {extra!r}: pip install 'ihbench[{extra}]'"), err
    assert "Traceback" not in err and _files(tmp_path) == before


# --- F2, F10: a URL no server can be at, a timeout no socket takes -------------------------------------

@pytest.mark.parametrize("option, value, said", [
    ("--base-url", "http://127.0.0.1:0/v1", "port 0 is no server's port"),
    ("--base-url", "http://exa mple.com/v1", "a space or a character no host name has"),
    # battery 50, W6: a label over 63 characters ended each item in the client's UnicodeError traceback
    ("--base-url", "http://" + "a" * 64 + "/v1", "a host name's labels (between dots) are 1 to 63 characters"),
    ("--base-url", "http://a..b/v1", "a host name's labels (between dots) are 1 to 63 characters"),
    ("--option", "timeout=1e10", "--option timeout: expected a number in (0, 86400]"),
    # battery 50, W12: argparse's own message naming an internal class, and the whole 5000 digits echoed
    ("--option", 'extra_body={"a": ' + "9" * 5000 + "}", "extra_body: its JSON holds a number too long to read "
                                                          "(thousands of digits"),
])
def test_a_server_option_no_request_could_use_is_refused_before_the_run_begins(option, value, said, official,
                                                                                tmp_path, capsys):
    capsys.readouterr()
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(tmp_path / "run"),
            "--limit", "1", "--quiet", option, value]
    if option != "--base-url":
        argv += ["--base-url", "http://127.0.0.1:9/v1"]
    try:
        status = main(argv)
    except SystemExit as refused:  # the option's type refused it as the command line was parsed
        status = refused.code
    assert status == 2
    err = capsys.readouterr().err
    assert said in err.strip().splitlines()[-1] and "Traceback" not in err, err  # after argparse's usage lines
    assert not (tmp_path / "run").exists()


def test_every_request_timeout_has_the_same_top():
    from ihbench.cli import build_parser
    from ihbench.dataset.argtypes import MAX_TIMEOUT_S, ArgumentValueError, timeout_seconds

    assert timeout_seconds()(str(MAX_TIMEOUT_S)) == MAX_TIMEOUT_S
    with pytest.raises(ArgumentValueError):
        timeout_seconds()(str(MAX_TIMEOUT_S * 2))
    for command, option in [("judge", "--timeout"), ("verify", "--timeout"), ("generate", "--timeout"),
                            ("barge-in", "--sim-timeout")]:
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, option, "1e10"])


# --- F6: barge-in rounds copied from another model's (or another seed's) run -----------------------------

@pytest.mark.parametrize("source", ["another model", "another seed"])
def test_barge_in_rounds_copied_from_another_run_are_played_again_not_scored(source, built, tmp_path, capsys):
    from pathlib import Path

    from barge_in_script import scripts
    from test_barge_in import rounds

    def play(model, sim, out, model_path="scripted", *extra):
        return main(["barge-in", "--data", str(built), "--model", "openai", "--model-path", model_path,
                     "--base-url", model.base_url, "--sim-model", "scripted-sim", "--sim-base-url", sim.base_url,
                     "--modality", "text", "--limit", "1", "--out", str(out),
                     "--cache", str(Path(out).parent / f"{Path(out).name}.sqlite"), "--quiet", *extra])

    model_script, sim_script = scripts()
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert play(model, sim, mine) == 0
        other = ("other-model",) if source == "another model" else ("scripted", "--seed", "7")
        assert play(model, sim, theirs, *other) == 0
        played = len(rounds(mine))
        (mine / "barge_in.jsonl").write_bytes((theirs / "barge_in.jsonl").read_bytes())
        capsys.readouterr()
        assert play(model, sim, mine) == 0
        said = capsys.readouterr()
    why = ("played by openai:other-model, and this run's model is openai:scripted" if source == "another model"
           else "its seed is not the one this run (--seed 0) draws for it")
    # every line left out for one reason is said once (battery 58, E7)
    assert re.search(r"barge_in\.jsonl \d+ lines \(1, 2, ", said.err) and why in said.err, said.err
    assert "0 already done" in said.out, said.out
    kept = rounds(mine)[len(rounds(theirs)):]
    assert len(kept) == played and all(r["model"] == "openai:scripted" for r in kept)


# --- F15: a run's records file that is a symlink -----------------------------------------------------------

@pytest.mark.parametrize("records", ["responses.jsonl", "judgments.jsonl"])
def test_a_records_file_that_is_a_symlink_is_never_written_through(records, official, tmp_path, capsys):
    """A run's responses.jsonl or judgments.jsonl linked into a dataset (or another run's file): the run
    and the judge wrote through it, inside the dataset. Refused, naming the link; nothing written."""
    import shutil

    from test_battery4_files import _files

    run = tmp_path / "run"
    argv = _judged(official, run)
    inside = official / "conversations" / "leak.jsonl"
    if records == "responses.jsonl":
        shutil.copy(run / records, inside)
    (run / records).unlink()
    (run / records).symlink_to(inside)
    before = _files(official), _files(run), inside.read_bytes() if inside.exists() else None
    capsys.readouterr()
    if records == "responses.jsonl":
        with OpenAITestServer() as server:
            assert main([*argv, "--epochs", "2", "--allow-endpoint-change", "--base-url", server.base_url]) == 2
            assert server.requests == []
    else:
        with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
            assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                         str(tmp_path / "c.sqlite"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{run / records} is a symlink (to {inside}); a run's records are written only into its own file" in err, err
    assert "Traceback" not in err
    assert (_files(official), _files(run), inside.read_bytes() if inside.exists() else None) == before


# --- F17: a damaged render in the TTS cache ------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["emptied", "random bytes", "cut off"])
def test_a_damaged_render_in_the_tts_cache_is_made_again_and_said(damage, tmp_path, caplog):
    import numpy as np

    from ihbench.dataset.tts import RenderCache, get_engine

    cache, voice = RenderCache(tmp_path / "tts"), get_engine("flite:slt")
    good = cache.render(voice, "Your order ships tomorrow.")
    (path,) = (tmp_path / "tts").glob("*.flac")
    path.write_bytes({"emptied": b"", "random bytes": bytes(np.random.default_rng(0).integers(0, 256, 100,
                                                                                              dtype=np.uint8)),
                      "cut off": good[:len(good) // 2]}[damage])
    again = RenderCache(tmp_path / "tts")
    assert again.samples(voice, "Your order ships tomorrow.").size > 0 and (again.hits, again.misses) == (0, 1)
    assert path.read_bytes() == good  # made again, in place
    assert f"{path}: a damaged render in the TTS cache" in caplog.text


# --- F18: a plot's file name in a format nothing draws --------------------------------------------------------

def test_a_plot_file_in_a_format_matplotlib_cannot_write_is_refused_when_parsed(capsys):
    from ihbench.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["verify", "--audio", ".", "--audio-plot", "x.txt"])
    assert "argument --audio-plot: expected a file name ending in an image format (.avif, " in capsys.readouterr().err
    assert build_parser().parse_args(["verify", "--audio", ".", "--audio-plot", "x.PNG"]).audio_plot.name == "x.PNG"


def test_the_plot_formats_are_matplotlib_s_own():
    import matplotlib.pyplot as plt

    from ihbench.dataset.argtypes import PLOT_FORMATS

    assert set(PLOT_FORMATS) == set(plt.figure().canvas.get_supported_filetypes())
    plt.close("all")


# --- F7: a repo id the Hub refuses ---------------------------------------------------------------------------

@pytest.mark.parametrize("argv, said", [
    (["publish-metrics", "--namespace", "x--y"], "--namespace: Cannot have -- or .. in repo_id: 'x--y'"),
    (["publish-metrics", "--namespace", "n" * 120], "maximum length is 96"),
    (["publish-space", "--repo", "me/" + "y" * 120, "--data", "me/ds"], "maximum length is 96"),
    (["publish-dataset", "{data}", "--repo", "me/x..y"], "--repo: Cannot have -- or .. in repo_id: 'me/x..y'"),
])
def test_a_repo_id_the_hub_refuses_is_refused_by_the_dry_run_too(argv, said, official, tmp_path, capsys):
    capsys.readouterr()
    assert main([part.format(data=official) for part in argv] + ["--dry-run", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and "would upload" not in err, err


# --- F19: a resume whose dataset folder is gone -----------------------------------------------------------

def test_a_resume_whose_dataset_is_gone_says_so_not_a_different_run(official, tmp_path, capsys, monkeypatch):
    import shutil

    monkeypatch.chdir(tmp_path)
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", "official", "--out", "run", "--limit", "1",
            "--quiet", "--allow-endpoint-change"]
    with OpenAITestServer() as server:
        assert main([*argv, "--base-url", server.base_url]) == 0
        shutil.rmtree(official)
        capsys.readouterr()
        assert main([*argv, "--base-url", server.base_url]) == 2
    err = capsys.readouterr().err
    assert "official: no such dataset directory" in err and "different run" not in err, err


# --- F13: a config name too long ----------------------------------------------------------------------------

def test_a_config_name_too_long_is_refused_saying_the_limit():
    from ihbench.dataset.convbench.importing import check_name
    from ihbench.dataset.errors import UsageError

    assert check_name("a" * 64) == "a" * 64
    with pytest.raises(UsageError, match=r"1 to 64 lower-case letters.*\(65 character\(s\)\)$"):
        check_name("a" * 65)


# --- battery 11: a model name that Markdown reads as table syntax ------------------------------------------

def test_a_model_name_with_a_pipe_or_a_newline_stays_in_its_column(official, tmp_path):
    from ihbench.report.markdown import cell

    assert cell("my|model\n(text)") == "my\\|model (text)"
    # battery nits: a name's Markdown was rendered (bold, a link, HTML), and one starting '#' became a heading
    assert cell("**big** [x](y) <b>") == "\\*\\*big\\*\\* \\[x\\](y) \\<b\\>"
    assert cell("# head") == "\\# head" and cell("qwen2_audio") == "qwen2_audio"
    # battery 43, N5 and N6: `_it_` rendered in italics; figures showed the Markdown escapes, hid a legend
    # entry starting '_' (matplotlib's "No artists with labels found") and read '$...$' as mathematics
    from ihbench.dataset.plotting import plot_text

    assert cell("_it_") == "\\_it\\_" and cell("a_b c_") == "a_b c\\_"
    # battery 44 nit: `$x$` rendered as mathematics (GitHub, the Hub), `~~x~~` struck through
    assert cell("$x$ ~~y~~") == "\\$x\\$ \\~\\~y\\~\\~"
    assert plot_text("_it_ (audio)") == " _it_ (audio)" and plot_text("**b** $x$") == "**b** \\$x\\$"
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "my|model", "--data", str(official), "--out",
                     str(run), "--limit", "1", "--quiet", "--base-url", server.base_url]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    rows = [line for line in (tmp_path / "rep" / "report.md").read_text().splitlines() if "model" in line
            and line.startswith("| my")]
    assert rows and all(row.startswith("| my\\|model (audio) |") for row in rows), rows


# --- battery 11, tries 20-21: a key given twice in what a user writes ---------------------------------------

def test_a_key_given_twice_in_a_workflow_or_a_source_is_refused_naming_it(tmp_path, capsys):
    from ihbench.dataset.sources import SourceError, load_conversation
    from ihbench.generate.workflow import load_workflow

    workflow = tmp_path / "w.yaml"
    workflow.write_text("goal: book a table\ngoal: cancel a table\n")
    with pytest.raises(Exception, match=r"line 2 column 1.*the key 'goal' is given twice"):
        load_workflow(workflow)
    source = tmp_path / "c.json"
    source.write_text('{"conversation_id": "a", "conversation_id": "b"}')
    with pytest.raises(SourceError, match="the key 'conversation_id' is given twice"):
        load_conversation(source)
    from ihbench.dataset.io import read_json_object

    (tmp_path / "run.json").write_text('{"data": "x", "data": "y"}')
    with pytest.raises(ValueError, match="run.json: the key 'data' is given twice"):
        read_json_object(tmp_path / "run.json", ValueError)


def test_ihbench_cache_with_a_tilde_the_shell_did_not_expand_means_home(monkeypatch):
    from pathlib import Path

    from ihbench.dataset.io import cache_root

    monkeypatch.setenv("IHBENCH_CACHE", "~/ihb-cache")
    assert cache_root() == Path.home() / "ihb-cache"


def test_report_of_several_runs_refuses_the_options_of_one_convbench_run(official, tmp_path, capsys):
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        for out in (run, tmp_path / "run2"):
            assert main(["run", "--model", "openai", "--model-path", out.name, "--data", str(official), "--out",
                         str(out), "--limit", "1", "--quiet", "--base-url", server.base_url]) == 0
    (tmp_path / "cj.jsonl").write_text("{}\n")
    capsys.readouterr()
    assert main(["report", str(run), str(tmp_path / "run2"), "--compare-judge", str(tmp_path / "cj.jsonl"),
                 "--model-name", f"{run}=a", "--quiet"]) == 2
    # battery 17, M12: only the option given is named
    assert "--compare-judge: for one ConversationBench run, and 2 runs given here" in capsys.readouterr().err


def test_an_out_at_the_root_of_the_file_system_is_refused_in_one_line(official, tmp_path, capsys):
    """Battery 11: `--out /` ended in a bare StopIteration."""
    for argv in (["build", "--out", "/"], ["make-tiny-model", "qwen2-text", "--out", "/"]):
        capsys.readouterr()
        assert main([*argv, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "StopIteration" not in err and "Traceback" not in err and "--out: /" in err, err


def test_convbench_import_refuses_the_name_of_the_in_house_benchmark_build_writes(built, tmp_path, capsys):
    """Battery 11: importing the in-house benchmark's own folder under its own name into a built dataset
    replaced the build's config (with audio) by a text-only one, without a word."""
    import os
    import shutil

    from test_battery4_files import _files

    from ihbench.dataset.convbench.rendered import shipped_folders

    (folder,) = [f for f in shipped_folders() if f.name == "convbench_dev"]
    data = shutil.copytree(built, tmp_path / "d", copy_function=os.link)
    before = _files(data)
    capsys.readouterr()
    assert main(["convbench-import", str(folder), "--out", str(data), "--text-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'convbench_dev' is reserved for a config `ihbench build` writes" in err, err
    assert _files(data) == before


def test_a_recording_named_after_the_turns_summary_is_refused_before_the_analysis(tmp_path, capsys):
    """Battery 11: `summary.json.wav` ran the whole analysis, then failed on a temporary file's name."""
    import numpy as np
    import soundfile

    wav = tmp_path / "summary.json.wav"
    soundfile.write(wav, np.zeros((16_000, 2), np.float32), 16_000)
    capsys.readouterr()
    assert main(["turns", str(wav), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "makes the recording name 'summary.json', which cannot name its output folder" in err, err
    assert not (tmp_path / "out").exists()


def test_transcript_words_past_the_recording_are_refused_before_the_analysis(tmp_path, capsys):
    """Battery 11: times in milliseconds counted no backchannel at all, silently."""
    import numpy as np
    import soundfile

    wav = tmp_path / "call.wav"
    soundfile.write(wav, np.zeros((64_000, 2), np.float32), 16_000)
    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text(json.dumps({"recording": "call", "channel": "B",
                                       "words": [{"word": "mm-hm", "start": 1300, "end": 1720}]}) + "\n")
    capsys.readouterr()
    assert main(["turns", str(wav), "--transcripts", str(transcripts), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "recording 'call' has a word ending at 1720 s, past its 4.0 s of audio (times are seconds; " \
           "milliseconds?)" in err, err
    assert not (tmp_path / "out").exists()


# --- battery 11, tries 64-65: what the environment gives the HTTP client ------------------------------------

@pytest.mark.parametrize("environment, said", [
    ({"MYKEY": "sk-\u201cabc\u201d"}, "$MYKEY: the key holds a character an HTTP header cannot carry"),
    ({"MYKEY": "sk-abc\ndef"}, "$MYKEY: the key holds a character an HTTP header cannot carry"),
    ({"ALL_PROXY": "socks5://127.0.0.1:1", "MYKEY": "k"}, "a SOCKS proxy is set in the environment (ALL_PROXY)"),
    ({"HTTP_PROXY": "http://proxy:badport", "MYKEY": "k"}, "a proxy set in the environment (HTTP_PROXY) is not a URL"),
])
def test_a_key_or_proxy_the_http_client_cannot_use_is_one_line_before_any_request(environment, said, official,
                                                                                  tmp_path, capsys, monkeypatch):
    import importlib.util

    if "ALL_PROXY" in environment and importlib.util.find_spec("socksio"):
        pytest.skip("httpx's socks extra is installed here: a SOCKS proxy is usable")
    for name in ("ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                 str(tmp_path / "run"), "--limit", "1", "--quiet", "--base-url", "http://example.invalid/v1",
                 "--option", "api_key_env=MYKEY"]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and "sk-" not in err, err
    assert not (tmp_path / "run").exists()


# --- battery 11, tries 66-71: the environment, and options a text run cannot use ------------------------------

@pytest.mark.parametrize("argv, said", [
    (["run", "--model", "openai", "--model-path", "m", "--modality", "text", "--history-audio", "last:1"],
     "--history-audio says which user turns are heard as audio; with --modality text none is"),
    (["barge-in", "--model", "openai", "--model-path", "m", "--modality", "text", "--user-voice", "piper:joe",
      "--sim-model", "s", "--sim-base-url", "http://127.0.0.1:9/v1"],
     "--user-voice renders the caller's turns as audio; with --modality text none is"),
])
def test_an_audio_option_given_to_a_text_run_is_refused(argv, said, official, tmp_path, capsys):
    capsys.readouterr()
    assert main([*argv, "--data", str(official), "--out", str(tmp_path / "r"), "--base-url", "http://127.0.0.1:9/v1",
                 "--quiet"]) == 2
    assert said in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_an_inherited_matplotlib_backend_does_not_break_the_plots(monkeypatch, tmp_path):
    import subprocess
    import sys

    code = "from ihbench.dataset.plotting import pyplot; plt = pyplot(); plt.figure(); plt.savefig(%r)" % str(
        tmp_path / "p.png")
    env = {**__import__("os").environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "p.png").is_file()


@pytest.mark.parametrize("environment, said", [
    ({"SSL_CERT_FILE": "/nowhere/ca.pem"}, "SSL_CERT_FILE=/nowhere/ca.pem: no such file"),
    ({}, "no base URL was given, so the server is OpenAI's own, and $OPENAI_API_KEY is not set"),
])
def test_the_judge_checks_its_environment_before_any_work(environment, said, official, tmp_path, capsys,
                                                         monkeypatch):
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "1")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    argv = ["judge", str(run), "--judge-model", "j", "--cache", str(tmp_path / "c.sqlite"), "--quiet"]
    if environment:
        argv += ["--judge-base-url", "http://127.0.0.1:9/v1"]
    capsys.readouterr()
    assert main(argv) == 2
    assert said in capsys.readouterr().err
    assert not (run / "judgments.jsonl").exists() and not (run / "judgments.asked.json").exists()


def test_a_turns_output_stopped_before_its_summary_is_gone_on_with_by_the_same_command(tmp_path, capsys):
    """Battery 11: a turns killed after its first recording left a folder its own rerun refused."""
    import numpy as np
    import soundfile

    from ihbench.dataset.outputs import TURNS_MARKER, folder_kind

    from ihbench.dataset.tts import RenderCache, get_engine

    speech = RenderCache(tmp_path / "tts").samples(get_engine("flite:slt"), "Hello, I would like to book a table.")
    wav = tmp_path / "call.wav"
    soundfile.write(wav, np.stack([speech, np.zeros_like(speech)], axis=1), 16_000)
    out = tmp_path / "out"
    assert main(["turns", str(wav), "--out", str(out), "--quiet"]) in (0, 1)
    assert (out / TURNS_MARKER).is_file()
    (out / "summary.json").unlink()  # as a run stopped before its summary leaves it
    assert folder_kind(out) == "turns"
    capsys.readouterr()
    assert main(["turns", str(wav), "--out", str(out), "--quiet"]) in (0, 1)
    assert "not a folder this command wrote" not in capsys.readouterr().err


def test_a_server_named_by_openai_base_url_is_recorded_as_the_run_s_endpoint(official, tmp_path, capsys,
                                                                           monkeypatch):
    """Battery 11, try 70: run.json said null (OpenAI's own) while the variable's server answered, and a
    resume against another server through the variable was not caught."""
    run = tmp_path / "run"
    argv = ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run), "--limit",
            "1", "--quiet"]
    with OpenAITestServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(argv) == 0
        assert json.loads((run / "run.json").read_text())["endpoint"] == server.base_url
    with OpenAITestServer() as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
        capsys.readouterr()
        assert main(argv) == 2
        assert "belongs to a different run: endpoint is" in capsys.readouterr().err


def test_turns_into_another_systems_output_is_refused_not_replaced(tmp_path, capsys):
    """Battery 11, try 61: sid keeps another detector's results; turns replaced another system's silently."""
    import numpy as np
    import soundfile

    from ihbench.dataset.tts import RenderCache, get_engine

    speech = RenderCache(tmp_path / "tts").samples(get_engine("flite:slt"), "Hello, I would like to book a table.")
    wav = tmp_path / "call.wav"
    soundfile.write(wav, np.stack([speech, np.zeros_like(speech)], axis=1), 16_000)
    out = tmp_path / "out"
    assert main(["turns", str(wav), "--out", str(out), "--model-name", "A", "--quiet"]) in (0, 1)
    summary = (out / "summary.json").read_bytes()
    capsys.readouterr()
    assert main(["turns", str(wav), "--out", str(out), "--model-name", "B", "--quiet"]) == 2
    assert "holds the turns results of A; this command would replace them with B's" in capsys.readouterr().err
    assert (out / "summary.json").read_bytes() == summary
    assert main(["turns", str(wav), "--out", str(out), "--model-name", "A", "--quiet"]) in (0, 1)  # a rerun


@pytest.mark.parametrize("variable", ["HF_DATASETS_CACHE", "HF_HOME", "XDG_CACHE_HOME",
                                      "TMPDIR", "MPLCONFIGDIR", "XDG_CONFIG_HOME"])  # battery 51, X6; 52, Y4
def test_a_library_cache_moved_inside_a_dataset_is_refused_before_any_work(variable, official, tmp_path, capsys,
                                                                          monkeypatch):
    """Battery 11, G4: with HF_DATASETS_CACHE inside a built dataset, `info` and `run` wrote Arrow files
    into it, which `publish-dataset` would then upload."""
    from test_battery4_files import _files

    before = _files(official)
    monkeypatch.setenv(variable, str(official / "cache"))
    for argv in (["info", str(official)],
                 ["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out",
                  str(tmp_path / "run"), "--base-url", "http://127.0.0.1:9/v1"]):
        capsys.readouterr()
        assert main([*argv, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"{variable}: {official / 'cache'} is inside {official}, a dataset folder" in err, err
    assert _files(official) == before and not (tmp_path / "run").exists()
    new = tmp_path / "new"  # the folder a build is about to make
    monkeypatch.setenv(variable, str(new / "cache"))
    capsys.readouterr()
    assert main(["build", "--out", str(new), "--quiet"]) == 2
    assert f"{variable}: {new / 'cache'} is inside the dataset folder being written" in capsys.readouterr().err
    assert not new.exists()


def test_pairs_given_in_a_shell_glob_s_order_are_refused_saying_the_order(tmp_path, capsys):
    """Battery 11, G9: `*.wav` lists every AI file before every user file; the message said "rename one",
    a remedy that would let two AI tracks pass as a conversation."""
    import numpy as np
    import soundfile

    files = [tmp_path / f"c{n}_{side}.wav" for side in ("ai", "user") for n in (1, 2)]  # the glob's order
    for wav in files:
        soundfile.write(wav, np.zeros(16_000, np.float32), 16_000)
    capsys.readouterr()
    assert main(["turns", *map(str, files), "--pair", "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "both make recording 'c'; --pair reads the files two by two, each conversation's AI file followed by " \
           "its user file" in err and "rename one" not in err, err
    assert not (tmp_path / "out").exists()


def test_judgments_outside_the_run_s_folder_are_refused_as_nothing_reads_them(official, tmp_path, capsys):
    """Battery 11, G12: `judge --out elsewhere.jsonl` judged the run, then `report` called it unjudged."""
    run = tmp_path / "run"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", str(run),
                     "--limit", "1", "--base-url", server.base_url, "--quiet"]) == 0
    out = tmp_path / "elsewhere.jsonl"
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        capsys.readouterr()
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--out", str(out),
                     "--quiet"]) == 2
        assert judge.requests == []
    err = capsys.readouterr().err
    assert f"--out: {out} is outside the run's folder ({run}), and `ihbench report` reads a run's judgments only " \
           f"from its own folder (judgments*.jsonl); give a name there, such as {run / 'judgments-MODEL.jsonl'}" \
           in err, err
    assert not out.exists() and not list(tmp_path.glob("*.asked.json"))


def test_export_into_the_root_of_the_file_system_is_refused(official, capsys):
    """Noticed in battery 11: export's --out is shared (one subfolder per conversation), and `/` took them."""
    import os

    before = set(os.listdir("/"))
    capsys.readouterr()
    assert main(["export", str(official), "--out", "/", "--quiet"]) == 2
    assert "--out: / is the file system's root; give a folder of its own" in capsys.readouterr().err
    assert set(os.listdir("/")) == before
