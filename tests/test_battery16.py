"""Battery 16 (issue 23): findings L… of the sixteenth battery of bad inputs, tried on an installed wheel as a
new user would (/work/battery16/LOG.md). Each test's docstring names its finding."""
import json

import pytest

import numpy as np
from test_battery5_files import _sid_noise, _wav

from ihbench.cli import main


def _lines(root):
    annotations = root / "test_wavs" / "silence_noise_test.jsonl"
    return annotations, [json.loads(line) for line in annotations.read_text().splitlines()]


def test_sid_import_refuses_an_annotation_naming_a_wav_outside_the_benchmark(tmp_path, capsys):
    """Battery 16 (try 12): a row whose `audio` was an absolute path elsewhere was imported, the outside file
    embedded in the dataset as one of its clips."""
    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "n1.wav": np.full(32_000, 0.01)})
    elsewhere = tmp_path / "ext" / "zz.wav"
    elsewhere.parent.mkdir()
    _wav(elsewhere, np.full(32_000, 0.01))
    for name in (str(elsewhere), "../../ext/zz.wav"):
        annotations, rows = _lines(root)
        rows[1]["audio"] = name
        annotations.write_text("".join(json.dumps(row) + "\n" for row in rows))
        assert main(["sid-import", str(root), "--out", str(tmp_path / "d"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"line 2: audio {name!r} is not a file name in the benchmark's WAV folder" in err, err
        assert not (tmp_path / "d").exists()


def test_sid_import_warns_of_a_listed_duration_on_a_line_of_its_own(tmp_path, capsys):
    """Battery 16 (try 11): the warning that a clip is not as long as its line says was printed inside the
    progress bar's line, where a user read past it."""
    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "n1.wav": np.full(32_000, 0.01)})
    annotations, rows = _lines(root)
    rows[1]["duration"] = 2.5  # within a second of the audio: scored as listed, and said
    annotations.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["sid-import", str(root), "--out", str(tmp_path / "d")]) == 0
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "differ from the listed duration" in line]
    assert warned and warned[0].startswith("ihbench sid-import: warning:"), err
    assert "n1.wav (2.000s, listed 2.5s)" in warned[0]


def test_sid_import_refuses_a_listed_duration_that_is_not_of_its_wav(tmp_path, capsys):
    """Battery 16, L1 (try 11): a row listing 30 s for a 2 s WAV was imported (with a warning) and `sid` then
    scored with 30 s: APT 8.000 s against the true 1.000 s. More than a second off, as for a break time past
    the audio, the annotation is another clip's."""
    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "n1.wav": np.full(32_000, 0.01)})
    annotations, rows = _lines(root)
    rows[1]["duration"] = 30.0
    annotations.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["sid-import", str(root), "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert f"{annotations} line 2: duration 30.0 s, but n1.wav holds 2.000 s of audio; the annotation is not of this " \
           "file" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_a_warning_said_while_a_progress_bar_is_drawn_gets_a_line_of_its_own():
    """Battery 16 (try 11), the general rule: every command's warnings go through one handler, which writes
    them beside the progress bars, never onto the end of a bar's line."""
    import io
    import logging

    from tqdm import tqdm

    from ihbench.cli import BesideProgressBars

    stream = io.StringIO()
    logger = logging.getLogger("ihbench.test-beside-bars")
    handler = BesideProgressBars(stream)
    handler.setFormatter(logging.Formatter("ihbench x: warning: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with tqdm(total=3, file=stream, desc="working", mininterval=0) as bar:
            bar.update(1)
            logger.warning("something to read")
            bar.update(2)
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().replace("\r", "\n").split("\n")
    assert "ihbench x: warning: something to read" in lines, stream.getvalue()


def test_a_space_others_visit_opens_typed_paths_of_its_runs_folder_only(tmp_path, monkeypatch):
    """Battery 16 (try 23): on a Space, a visitor typing `/work/.../cb1` in the ConversationBench tab saw a run
    outside the runs folder, and the answers told missing paths from present ones. Served to others (on
    Hugging Face, or listening beyond loopback), typed runs must be of the runs folder and models Hub ids;
    every other path gets one answer, whether it exists or not. Served locally, any path still opens."""
    import pytest

    from ihbench import ui, ui_convbench

    runs = tmp_path / "runs"
    (runs / "mine").mkdir(parents=True)
    monkeypatch.setenv("IHBENCH_RUNS", str(runs))
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.setenv("GRADIO_SERVER_NAME", "127.0.0.1")
    assert not ui.served_to_others()
    assert ui_convbench.run_path(None, str(tmp_path)) == tmp_path.resolve()
    assert ui.visitor_model(str(tmp_path)) == str(tmp_path)
    for served in ({"SPACE_ID": "someone/ihbench"}, {"GRADIO_SERVER_NAME": "0.0.0.0"}):
        for name, value in served.items():
            monkeypatch.setenv(name, value)
        assert ui.served_to_others()
        answers = set()
        for typed in ("/etc", "/no/such/folder", str(tmp_path), f"{runs}/../", "~"):
            with pytest.raises(ui.UserError) as refused:
                ui_convbench.run_path(None, typed)
            answers.add(str(refused.value))
        assert answers == {"this Space opens only the runs of its runs folder: pick one of the list"}
        assert ui_convbench.run_path(None, str(runs / "mine")) == (runs / "mine").resolve()
        for model in ("/etc", "./models/x", "~/m", "../x/y", "a/b/c"):
            with pytest.raises(ui.UserError, match="by their Hub id"):
                ui.visitor_model(model)
        assert ui.visitor_model(" Qwen/Qwen2-Audio-7B-Instruct ") == "Qwen/Qwen2-Audio-7B-Instruct"
        with pytest.raises(ui.UserError, match="by their Hub id"):  # refused before any run folder is made
            next(ui_convbench.run_stream("qwen2-audio", "/etc", False, None, 1, 8))
        monkeypatch.delenv("SPACE_ID", raising=False)
        monkeypatch.setenv("GRADIO_SERVER_NAME", "127.0.0.1")
    assert not runs.joinpath("convbench").exists() and sorted(p.name for p in runs.iterdir()) == ["mine"]


def test_a_single_valued_option_given_twice_with_different_values_is_refused(tmp_path, capsys):
    """Battery 16 (try 36): `--epochs 1 --epochs 2` ran with 2 and `judge --out A --out B` wrote B, without a
    word. Every command's single-valued options follow one rule; the same value twice is harmless, and
    the options meant to repeat (--option, --base-url) still do."""
    import pytest

    from ihbench.cli import build_parser

    for argv, said in [
        (["run", "--model", "openai", "--model-path", "m", "--data", str(tmp_path), "--out", str(tmp_path / "r"),
          "--epochs", "1", "--epochs", "2"], "--epochs 1 and --epochs 2: the option is given twice"),
        (["judge", str(tmp_path), "--judge-model", "j", "--out", str(tmp_path / "a.jsonl"),
          f"--out={tmp_path / 'b.jsonl'}"], "the option is given twice with different values"),
        (["sid", "--detector", "energy", "--data", str(tmp_path), "--config", "sid_dev_en", "--out", str(tmp_path / "s"),
          "--tolerance", "0.05", "--tolerance", "0.1"], "--tolerance 0.05 and --tolerance 0.1"),
    ]:
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []
    args = build_parser().parse_args(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "o",
                                      "--epochs", "2", "--epochs", "2", "--option", "timeout=5", "--option",
                                      "max_retries=1", "--base-url", "http://a:1/v1", "--base-url", "http://b:1/v1"])
    assert args.epochs == 2 and len(args.option) == 2 and len(args.base_url) == 2


def test_build_sources_given_without_a_value_is_refused(tmp_path, capsys):
    """Battery 16 (try 38): `--sources` with nothing after it (`--sources $EMPTY`) built the shipped dev set."""
    import pytest

    with pytest.raises(SystemExit) as stopped:
        main(["build", "--sources", "--out", str(tmp_path / "x")])
    assert stopped.value.code == 2
    assert "argument --sources: expected at least one argument" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_run_json_with_a_generation_setting_no_run_can_have_is_refused_naming_it(tmp_path, capsys):
    """Battery 16 (try 27): run.json's `generation.temperature: "hot"` left every answer out as "drawn with other
    generation settings ... copied from another run?" and "damaged or cut off", with "left out" said twice;
    a top-level field of the wrong type was already refused in one line naming run.json."""
    import pytest
    from openai_test_server import OpenAITestServer
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run), "--limit",
                     "2", "--quiet", "--base-url", server.base_url]) == 0
    info = json.loads((run / "run.json").read_text())
    for value, said in [("hot", "field 'generation.temperature' has the wrong type (str)"),
                        (-3, "field 'generation.temperature': expected a number in [0, 2], got -3"),
                        (True, "field 'generation.temperature' has the wrong type (bool)")]:
        (run / "run.json").write_text(json.dumps({**info, "generation": {**info["generation"], "temperature": value}}))
        capsys.readouterr()
        assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"{run / 'run.json'}: {said}" in err and "copied from another run" not in err, err
        assert not (tmp_path / "rep").exists()


def test_a_record_left_out_is_said_to_be_left_out_once(tmp_path, caplog):
    """Battery 16 (try 27): "...; left out; the record is left out and will be redone"."""
    from ihbench.dataset.io.jsonlines import read_records

    log = tmp_path / "r.jsonl"
    log.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    problems = {2: "copied from another run?; left out, and answered again", 3: "not of this run"}
    with caplog.at_level("WARNING", logger="ihbench"):
        read_records(log, check=lambda record: problems.get(record["a"]))
    said = [record.getMessage() for record in caplog.records]
    assert said == [f"{log} line 2: copied from another run?; left out, and answered again",
                    f"{log} line 3: not of this run; the record is left out and will be redone"], said


@pytest.mark.parametrize("name, kind", [("responses.jsonl", "fifo"), ("judgments.jsonl", "/dev/zero"),
                                        ("run.json", "/dev/urandom"), ("run.json", "folder")])
def test_a_run_file_that_is_no_regular_file_is_refused_before_it_is_read(name, kind, tmp_path, capsys):
    """Battery 16 (try 48): report read a judgments.jsonl linked to /dev/zero until the machine ran out of memory,
    waited for ever on a responses.jsonl that was a named pipe (so did judge and run), and called a run.json
    linked to /dev/urandom "a folder"."""
    import os

    from openai_test_server import OpenAITestServer

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run), "--limit",
                     "1", "--quiet", "--base-url", server.base_url]) == 0
    (run / name).unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(run / name)
    elif kind == "folder":
        (run / name).mkdir()
    else:
        (run / name).symlink_to(kind)
    said = {"fifo": "is a named pipe", "folder": "is a folder", "/dev/zero": "is a device (a link to /dev/zero)",
            "/dev/urandom": "is a device (a link to /dev/urandom)"}[kind]
    capsys.readouterr()
    commands = [["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"],
                ["judge", str(run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--cache",
                 str(tmp_path / "c.sqlite"), "--quiet"]]
    for argv in commands:
        assert main(argv) == 2
        err = capsys.readouterr().err
        writes = argv[0] == "judge" and name == "judgments.jsonl"  # its writer refuses any link, first
        assert (f"{run / name} is a symlink" if writes else f"{run / name}: {said}, not ") in err, err
        assert "Traceback" not in err
    assert not (tmp_path / "rep").exists()


def reported_run(tmp_path, data=None):
    """A one-item run (answered by the loopback STAND-IN server) and its report in tmp_path/rep."""
    from openai_test_server import OpenAITestServer

    from official_layout import write_official_layout

    data = data or write_official_layout(tmp_path / "official")
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                     str(tmp_path / "r"), "--epochs", "1", "--limit", "1", "--base-url", server.base_url,
                     "--quiet"]) == 0
    out = tmp_path / "rep"
    assert main(["report", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.parametrize("when", ["before its first file", "midway"])
def test_a_report_stopped_says_what_it_did_with_the_earlier_report(when, tmp_path, capsys, monkeypatch):
    """Battery 16 (tries 45 and 48): stopped before it had touched the folder, report said the earlier report
    "is removed, with the one it was replacing" while it stood there intact (and said so with no report
    there at all)."""
    import ihbench.report.folder as folder
    import ihbench.report.render as render
    from ihbench.cli import Terminated

    out = reported_run(tmp_path)
    earlier = (out / "report.md").read_text()

    def stopped(*args, **kwargs):
        raise Terminated()
    monkeypatch.setattr(*((folder, "claim_output") if when == "before its first file" else
                          (render, "render_markdown")), stopped)
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 143
    err = capsys.readouterr().err
    if when == "midway":
        assert f"the report it was writing in {out} is removed; the earlier report there is kept" in err, err
    else:
        assert f"nothing of the report was written yet (the earlier report in {out} is kept)" in err, err
    assert (out / "report.md").read_text() == earlier
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "new"), "--quiet"]) == 143  # no report there
    said = "nothing of the report was written yet" if when == "before its first file" else \
        f"the report it was writing in {tmp_path / 'new'} is removed"
    assert f"{said}; the same command writes it again" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()  # battery 22, N6: a folder the stopped report made goes with it


def test_a_report_killed_midway_leaves_the_earlier_report_for_the_next_one(tmp_path, capsys, monkeypatch):
    """Battery 23 S2 / 24 T5: a report replacing an earlier one, stopped midway, removed both. Killed
    outright (SIGKILL, no handler runs) the earlier report's files wait aside; a report stopped next
    puts them back, and one that completes replaces them."""
    import os
    import signal
    import subprocess
    import sys

    out = reported_run(tmp_path)
    earlier = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}
    killed = subprocess.run([sys.executable, "-c", (
        "import os, signal, sys\n"
        "import ihbench.report.render as render\n"
        "render.render_markdown = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from ihbench.cli import main\n"
        f"sys.exit(main(['report', {str(tmp_path / 'r')!r}, '--out', {str(out)!r}, '--quiet']))\n")],
        capture_output=True, text=True, env={**os.environ}, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (out / ".previous-report" / "report.md").read_bytes() == earlier["report.md"]
    assert not (out / "report.md").exists()  # killed between the figures and the text

    import ihbench.report.render as render
    from ihbench.cli import Terminated

    def stopped(*args, **kwargs):
        raise Terminated()
    with monkeypatch.context() as patched:
        patched.setattr(render, "render_markdown", stopped)
        assert main(["report", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 143
    assert "the earlier report there is kept" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")} == earlier
    assert not (out / ".previous-report").exists()
    assert main(["report", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 0
    assert (out / "report.md").is_file() and not (out / ".previous-report").exists()


def test_a_space_runs_folder_that_is_a_file_is_refused_before_serving(tmp_path, monkeypatch, capsys):
    """Battery 16 (try 59): IHBENCH_RUNS naming a file started the Space; every visitor's run then failed with a
    NotADirectoryError traceback in the server's log."""
    from ihbench import ui

    runs = tmp_path / "runs-file"
    runs.write_text("not a folder")
    monkeypatch.setenv("IHBENCH_RUNS", str(runs))
    assert main(["space", "--port", "18799", "--quiet"]) == 2
    assert f"IHBENCH_RUNS (the Space's runs folder): {runs} is a file, not a folder" in capsys.readouterr().err
    with pytest.raises(ui.UserError, match="this server cannot keep runs: .*, not a folder"):
        ui.new_run_folder("space", "openai")


@pytest.mark.parametrize("where", ["source", "predictions", "judgments", "run.json", "extra_body"])
def test_json_nested_past_the_parsers_limit_is_refused_in_one_line(where, built, tmp_path, capsys):
    """Battery 16 (try 60): a JSON file (or line) nested 200,000 levels deep ended every reader in a RecursionError
    traceback: verify and build on a source, sid --predictions, a run's judgments.jsonl and run.json."""
    deep = "[" * 200_000 + "]" * 200_000
    if where == "source":
        (tmp_path / "deep.json").write_text(deep)
        argv = ["verify", str(tmp_path / "deep.json"), "--no-audio"]
    elif where == "predictions":
        (tmp_path / "deep.jsonl").write_text('{"a": ' + deep + "}\n")
        argv = ["sid", "--predictions", str(tmp_path / "deep.jsonl"), "--data", str(built), "--config", "sid_dev_en",
                "--out", str(tmp_path / "s")]
    elif where == "extra_body":
        argv = ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                str(tmp_path), "--out", str(tmp_path / "r"), "--option", "extra_body=" + deep]
    else:
        from openai_test_server import OpenAITestServer

        from official_layout import write_official_layout

        data = write_official_layout(tmp_path / "official")
        run = tmp_path / "r"
        with OpenAITestServer() as server:
            assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run),
                         "--limit", "1", "--quiet", "--base-url", server.base_url]) == 0
        if where == "judgments":
            (run / "judgments.jsonl").write_text('{"a": ' + deep + "}\n")
        else:
            (run / "run.json").write_text('{"data": ' + deep + "}")
        argv = ["report", str(run), "--out", str(tmp_path / "rep")]
    capsys.readouterr()
    try:
        code = main([*argv, "--quiet"])
    except SystemExit as stopped:  # an option refused by argparse
        code = stopped.code
    err = capsys.readouterr().err
    assert code == (1 if where == "source" else 2), err[-2000:]  # verify: a problem found in the file it checks
    assert "nested too deeply to be read" in err and "Traceback" not in err, err[-2000:]
    assert len(err) < 2000


def test_a_card_path_leading_out_of_the_dataset_is_refused_by_every_reader(tmp_path, capsys):
    """Battery 16 (try 49): a card whose config path was `../x.parquet` was read from outside the dataset by
    run and sid without a word; publish refused it, calling the path "a link"."""
    import shutil

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    moved = tmp_path / "outside"
    shutil.move(str(data / "baseline"), str(moved))
    card = data / "README.md"
    card.write_text(card.read_text().replace("path: baseline/test-*", "path: ../outside/test-*"))
    expected = f"{card}: config 'baseline' names ../outside/test-*, a path outside the dataset folder"
    for argv in (["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                  str(data), "--out", str(tmp_path / "r")],
                 ["publish-dataset", str(data), "--repo", "a/b", "--dry-run"]):
        assert main([*argv, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert expected in err and "link" not in err, err
    assert not (tmp_path / "r").exists()


def test_a_report_names_the_two_judges_it_compares_and_the_judgments_file_it_leaves_out(tmp_path, capsys):
    """Battery 16 (try 37): with three judgments files one was left out without a word, and report.md named
    neither the two files compared nor the second judge."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, (("j", None), ("j2", "judgments-j2.jsonl"), ("j3", "judgments-j3.jsonl")))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "holds 3 judgments files; the agreement is of the first two (judgments.jsonl, judgments-j2.jsonl), and " \
           "judgments-j3.jsonl is left out" in err, err
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "Judges compared: j (judgments.jsonl) and j2 (judgments-j2.jsonl)." in text
    assert "judgments-j3.jsonl is left out" in text


def test_judge_of_an_unfinished_run_says_so(tmp_path, capsys):
    """Battery 16 (try 15): judge of a run holding 20 of its 40 planned answers (killed, or still running) said
    nothing of the missing half; report did."""
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    run = tmp_path / "r"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run),
                     "--limit", "3", "--epochs", "1", "--quiet", "--base-url", server.base_url]) == 0
    lines = (run / "responses.jsonl").read_text().splitlines(keepends=True)
    (run / "responses.jsonl").write_text("".join(lines[:2]))  # as a run killed after two answers leaves it
    capsys.readouterr()
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"note: {run} is unfinished: 2 of 3 planned response(s) are in it, and the answered ones were judged" in out
    # battery 51, X4: with a failed answer among them, it said "those were judged" of answers none of which was
    failing, asked = tmp_path / "r2", []
    with OpenAITestServer(fail_when=lambda request: asked.append(1) or (503 if len(asked) == 2 else None)) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(failing),
                     "--limit", "3", "--epochs", "1", "--quiet", "--base-url", server.base_url,
                     "--option", "max_retries=0", "--option", "concurrency=1"]) == 1
    lines = (failing / "responses.jsonl").read_text().splitlines(keepends=True)
    (failing / "responses.jsonl").write_text("".join(lines[:2]))  # one answered, one failed, one never asked
    capsys.readouterr()
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(failing), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"2 of 3 planned response(s) are in it (1 answered, 1 failed), and the answered ones were judged" in out, out
    assert main(["report", str(failing), "--out", str(tmp_path / "rep"), "--quiet"]) == 0
    said = capsys.readouterr()
    assert "2 of 3 planned response(s) are in it (1 answered, 1 failed); the scores cover the answered ones" in \
        said.out + said.err, said


@pytest.mark.parametrize("flag, value", [("--n-bootstrap", "50"), ("--tost-margin", "0.2"), ("--seed", "3")])
def test_report_settings_that_do_not_apply_to_a_sid_run_are_refused(flag, value, built, tmp_path, capsys):
    """Battery 16 (try 78): `report SID_RUN --n-bootstrap 50` (or --tost-margin) was accepted without a word, though
    SID-Bench has no interval and no TOST; a ConversationBench run already refused them."""
    out = tmp_path / "se"
    assert main(["sid", "--detector", "energy", "--data", str(built), "--config", "sid_dev_en", "--limit", "3",
                 "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(out), flag, value, "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{flag}: does not apply to these runs (SID-Bench: --n-bootstrap, --seed and --tost-margin act on IHBench " \
           "runs" in err, err
    assert not (tmp_path / "rep").exists()
    assert main(["report", str(out), "--sid-definition", "readme", "--out", str(tmp_path / "rep"), "--quiet"]) == 0


def test_info_checks_every_config_of_a_local_dataset_even_those_it_does_not_read(tmp_path, capsys):
    """Battery 16 (tries 51, 91): a changed `interruptions` Parquet passed `info` (which reads the conversations and
    baseline configs only; run, judge and report read those too, and `--config interruptions` refuses it).
    `info` is where a user asks whether a dataset is whole: it checks every config's files."""
    import shutil

    from official_layout import write_official_layout

    from ihbench.dataset.content_names import name_by_content

    data = write_official_layout(tmp_path / "official")
    (data / "extra").mkdir()
    source = next((data / "baseline").glob("*.parquet"))
    named = name_by_content(shutil.copy(source, data / "extra" / "test.parquet"), "test")
    card = data / "README.md"
    card.write_text(card.read_text().replace("---\n# ", f"- config_name: extra\n  data_files:\n  - split: test\n    path: "
                                                          f"extra/{named.name}\n---\n# ", 1))
    assert main(["info", str(data)]) == 0
    with open(named, "r+b") as handle:  # one byte changed, as a damaged copy has it
        handle.seek(200)
        byte = handle.read(1)
        handle.seek(200)
        handle.write(bytes([byte[0] ^ 0xFF]))
    capsys.readouterr()
    assert main(["info", str(data)]) == 2
    assert f"{named}: changed since it was written" in capsys.readouterr().err


def test_verify_audio_report_must_be_named_as_json(tmp_path, capsys):
    """Battery 16 (try 62, battery 15's K10 second half): `--audio-report r.png` wrote the JSON report under an
    image's name."""
    with pytest.raises(SystemExit) as stopped:
        main(["verify", "--audio", str(tmp_path), "--audio-report", str(tmp_path / "r.png")])
    assert stopped.value.code == 2
    assert "argument --audio-report: expected a file name ending in .json" in capsys.readouterr().err
    assert not (tmp_path / "r.png").exists()


def test_verify_audio_report_replaces_only_an_earlier_report_of_its_own(tmp_path, capsys):
    """Battery 17, M6: `--audio-report important.json` overwrote a JSON file of the user's without a word."""
    precious = tmp_path / "important.json"
    precious.write_text('{"my": "precious data"}')
    assert main(["verify", "--audio", str(tmp_path), "--audio-report", str(precious)]) == 2
    assert f"--audio-report: {precious} exists and is not a report of `verify --audio`" in capsys.readouterr().err
    assert precious.read_text() == '{"my": "precious data"}'


def test_a_typed_path_too_long_for_the_system_is_no_run_folder_and_a_pages_bug_keeps_its_traceback(caplog):
    """Battery 17, M3: a 5,001-character typed path answered "something went wrong (OSError)", and the server's
    log held only the page's error, not the OSError's own traceback."""
    import sys
    from pathlib import Path

    from ihbench import ui, ui_convbench

    with pytest.raises(ui.UserError, match="^there is no such run folder$"):
        ui_convbench.run_path(None, "x" + "a" * 5000)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spaces"))
    import app as space_app

    def broken():
        raise KeyError("a bug")
    with caplog.at_level("ERROR", logger="ihbench"), pytest.raises(Exception) as shown:
        space_app.shown(broken)()
    assert "something went wrong (KeyError); the server log has the traceback" in str(shown.value)
    assert any(record.exc_info and record.exc_info[0] is KeyError for record in caplog.records)


def test_a_page_needing_an_extra_the_server_lacks_names_the_extra():
    """Battery 17 (try with the ConversationBench tab's defaults on a Space without transformers): the page said
    "something went wrong (ModuleNotFoundError)", naming no module; the CLI names the extra to install."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spaces"))
    import app as space_app

    def needs_transformers():
        raise ModuleNotFoundError("No module named 'transformers'", name="transformers")
    with pytest.raises(Exception) as shown:
        space_app.shown(needs_transformers)()
    assert "this server has no transformers (the optional extra 'models' of ihbench, installed with pip install " \
           "'ihbench[models]')" in str(shown.value)
