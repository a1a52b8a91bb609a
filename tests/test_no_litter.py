"""Nothing written into a dataset, and no litter (issue 23.4): an output inside one of the toolkit's own
folders is refused naming both; a refused command leaves nothing behind; a lock is gone with its
command; a publish stages only into a new or empty folder."""
import json

import pytest
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from ihbench.dataset.outputs import OutputPathError, check_output_path, folder_kind


@pytest.fixture
def official(tmp_path):
    return write_official_layout(tmp_path / "official")


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    """A user's working folder holding a build, a run and the outputs of sid, turns and report."""
    folder = tmp_path / "work"
    for name, files in {
        "data": {"build_info.json": "{}", "README.md": "---\nconfigs:\n- config_name: conversations\n---\n"},
        "imported": {"README.md": "---\nlicense: mit\nconfigs:\n- config_name: sid_en\n---\n# SID\n"},
        "runs/a": {"run.json": "{}"},
        "sid-out": {"summary.json": json.dumps({"kind": "sid"})},
        "turns-out": {"summary.json": json.dumps({"kind": "turns"})},
        "report": {"summary.json": json.dumps({"kind": "cross_benchmark"})},
    }.items():
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text)
    monkeypatch.chdir(folder)
    return folder


def _listing(folder):
    """Every file and folder, hidden ones included, with its size: what a command may not change."""
    return sorted((p.relative_to(folder).as_posix(), p.stat().st_size if p.is_file() else -1)
                  for p in folder.rglob("*"))


def _refused(argv, capsys):
    parsed = True
    try:
        code = main([*argv, "--quiet"])
    except SystemExit as stop:  # refused by the parser (an option's value checked when parsed)
        code, parsed = stop.code, False
    err = [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("Generating ")]
    if not parsed:  # argparse's usage block, then its one line
        assert err and err[0].startswith("usage: ") and all(line.startswith(" ") for line in err[1:-1]), err
        err = err[-1:]
    assert code == 2 and len(err) == 1 and err[0].startswith(f"ihbench {argv[0]}: error: "), err
    return err[0]


def test_the_toolkit_knows_its_own_folders(cwd):
    assert {name: folder_kind(cwd / name) for name in ("data", "imported", "runs/a", "sid-out", "turns-out", "report",
                                                       "runs", ".")} == {
        "data": "dataset", "imported": "dataset", "runs/a": "run", "sid-out": "sid", "turns-out": "turns",
        "report": "report", "runs": None, ".": None}
    (cwd / "notes").mkdir()
    (cwd / "notes" / "README.md").write_text("---\ntitle: configs\n---\nconfigs: in the text, not the header\n")
    (cwd / "notes" / "summary.json").write_text('{"kind": "something else"}')
    assert folder_kind(cwd / "notes") is None


def test_an_output_may_be_its_own_kind_of_folder_but_never_inside_one(cwd):
    check_output_path("runs/a", "--out", may_be=("run",))  # a resumed run
    check_output_path("data", "--out", may_be=("dataset",))  # a rebuild
    check_output_path("runs/b", "--out", may_be=("run",))  # new, beside the other run
    with pytest.raises(OutputPathError, match=r"^--out: runs/a is a run folder \(run\.json\); expected an "
                                              r"`ihbench sid` output folder or a new folder$"):
        check_output_path("runs/a", "--out", may_be=("sid",))
    # (the fixture's build_info.json is a stand-in, no build's record: said as such since battery 61, H9)
    with pytest.raises(OutputPathError, match=rf"^--out: data/x/y is inside {cwd / 'data'}, a folder whose "
                                              r"build_info\.json is not a build's record .* \(`ihbench publish-dataset` "
                                              r"would upload"):
        check_output_path("data/x/y", "--out", may_be=("dataset",))
    (cwd / "link").symlink_to(cwd / "runs" / "a")
    with pytest.raises(OutputPathError, match=f"inside {cwd / 'runs' / 'a'}, a run folder"):
        check_output_path("link/out", "--out")


DATA = "<the official layout>"
SOURCES = "<the shipped sources>"

#: each command that writes an output, pointed inside one of the toolkit's folders
INSIDE = {
    "run": ["run", "--model", "openai", "--model-path", "m", "--data", DATA, "--out", "data/runs/x",
            "--base-url", "http://127.0.0.1:9/v1"],
    "set-baseline": ["set-baseline", "runs/a", "--data", "data", "--out", "data/rebased"],
    "make-tiny-model": ["make-tiny-model", "qwen2-text", "--out", "data/model"],
    "build": ["build", "--out", "runs/a/data", "--sources", SOURCES],
    "sid-import": ["sid-import", "sid-out", "--out", "imported/more"],
    "sid": ["sid", "--data", DATA, "--out", "turns-out/sid", "--predictions", "p.jsonl"],
    "turns": ["turns", "a.wav", "--out", "sid-out/turns"],
    "judge": ["judge", "runs/a", "--judge-model", "j", "--out", "data/judgments.jsonl"],
    "report": ["report", "runs/a", "--out", "sid-out"],
    "report-cross": ["report", "sid-out", "turns-out", "--out", "data/report"],
    "export": ["export", DATA, "--out", "imported/demo"],
    "generate": ["generate", "--llm-model", "x", "--domain", "telecom", "--goal", "g", "--out", "report/gen"],
    "publish-metrics": ["publish-metrics", "--namespace", "acme", "--dry-run", "--staging-dir", "data/stage"],
    "publish-space": ["publish-space", "--repo", "acme/s", "--dry-run", "--staging-dir", "runs/a/stage"],
}


@pytest.mark.parametrize("case", list(INSIDE))
def test_no_command_writes_inside_another_of_the_toolkit_s_folders(case, official, cwd, capsys):
    from ihbench.dataset.sources import SOURCES_DIR

    argv = [str(official) if arg == DATA else str(SOURCES_DIR) if arg == SOURCES else arg for arg in INSIDE[case]]
    before = _listing(cwd)
    line = _refused(argv, capsys)
    assert "--out: " in line or "--staging-dir: " in line
    assert (" is inside " in line and str(cwd) in line) or " is an `ihbench sid` output folder" in line, line
    assert _listing(cwd) == before


def _bad_inputs(official):
    """Inputs refused after the output was named: every output path is new and nested."""
    data = str(official)
    return [
        ["run", "--model", "no-such-loader", "--model-path", "m", "--data", data, "--out", "new/runs/a"],
        ["run", "--model", "openai", "--model-path", "m", "--data", "no-such-data", "--out", "new/runs/b",
         "--base-url", "http://127.0.0.1:9/v1"],
        ["set-baseline", "runs/a", "--data", data, "--out", "new/rebased"],
        ["build", "--out", "new/deeper/data", "--sources", "no-such.json"],
        ["sid-import", "no-such-folder", "--out", "new/imported"],
        ["sid", "--data", data, "--out", "new/sid", "--predictions", "no-such.jsonl"],
        ["turns", "no-such.wav", "--out", "new/turns"],
        ["judge", "runs/a", "--judge-model", "j", "--out", "new/judgments.jsonl"],
        ["judge", "no-such-run", "--judge-model", "j"],
        ["judge", "no-such-run", "--judge-model", "j", "--cache", "new/cache.sqlite"],
        ["export", data, "--conversation", "no-such", "--out", "new/demo"],
        ["report", "no-such-run", "--out", "new/report"],
        ["generate", "--llm-model", "x", "--out", "new/generated"],
        ["publish-metrics", "--namespace", "not a name", "--dry-run", "--staging-dir", "new/stage"],
        ["publish-space", "--repo", "no-namespace", "--dry-run", "--staging-dir", "new/stage"],
        ["publish-space", "--repo", "acme/s", "--data", "not/a/folder/or/id", "--dry-run", "--staging-dir", "new/s"],
    ]


def test_a_refused_command_leaves_nothing_behind(official, cwd, capsys):
    for argv in _bad_inputs(official):
        before = _listing(cwd)
        _refused(argv, capsys)
        assert _listing(cwd) == before, argv


def test_the_lock_is_gone_after_a_successful_command(official, cwd, capsys):
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--epochs", "1",
                     "--limit", "1", "--out", "runs/b", "--base-url", server.base_url, "--quiet"]) == 0
    assert sorted(p.name for p in (cwd / "runs" / "b").iterdir()) == ["responses.jsonl", "run.json"]
    assert not [p for p in cwd.rglob(".*")]


@pytest.mark.parametrize("command", ["publish-metrics", "publish-space"])
def test_a_publish_stages_only_into_a_new_or_empty_folder(command, cwd, capsys):
    (cwd / "stage").mkdir()
    (cwd / "stage" / "stale.txt").write_text("from last time")
    target = ["--namespace", "acme", "apt"] if command == "publish-metrics" else ["--repo", "acme/space"]
    line = _refused([command, *target, "--dry-run", "--staging-dir", "stage"], capsys)
    assert line.endswith("--staging-dir: stage is not empty; everything in it would be uploaded, so give a new or "
                         "empty folder (or one an earlier publish staged into)")
    assert [p.name for p in (cwd / "stage").iterdir()] == ["stale.txt"]


def test_a_report_never_replaces_another_run_s_results(cwd, capsys):
    """Found by the bad-input battery: `report full --out r3` replaced r3's summary.json and report.md."""
    (cwd / "runs" / "b").mkdir()
    (cwd / "runs" / "b" / "run.json").write_text("{}")
    before = _listing(cwd)
    line = _refused(["report", "runs/a", "--out", "runs/b"], capsys)
    assert line == ("ihbench report: error: --out: runs/b is another run's folder, not one of the runs reported; "
                    "its summary.json and report.md would be replaced: give a new folder or that run itself")
    assert _listing(cwd) == before


def test_a_run_folder_given_as_data_is_named_as_such(cwd, capsys):
    """Found by the bad-input battery: `info r3` said "r3: no config 'conversations'; available: default"."""
    line = _refused(["info", "runs/a"], capsys)
    assert line == ("ihbench info: error: runs/a: is a run folder (run.json), not a dataset; give the data folder it "
                    "was made from (its run.json names it)")


def test_a_command_owns_the_folder_it_writes(cwd):
    """An existing folder of the user's (a model's weights, notes) is not an output folder: its files
    would be mixed with the run's, or replaced. Empty, or holding only a killed writer's lock, is fine."""
    (cwd / "model").mkdir()
    (cwd / "model" / "config.json").write_text("{}")
    with pytest.raises(OutputPathError, match=r"^--out: model already holds files \(config\.json\) and is not a "
                                              r"folder this command wrote, nor a run folder to resume; give a new"):
        check_output_path("model", "--out", may_be=("run",))
    with pytest.raises(OutputPathError, match="already holds files"):
        check_output_path("model", "--out")
    check_output_path("model", "--out", shared=True)  # export: one subfolder per conversation
    (cwd / "empty").mkdir()
    check_output_path("empty", "--out", may_be=("run",))
    (cwd / "empty" / ".lock").write_text("")
    check_output_path("empty", "--out", may_be=("run",))
    with pytest.raises(OutputPathError, match=r"^--out: runs/a/run\.json is a file; give a folder$"):
        check_output_path("runs/a/run.json", "--out", may_be=("run",))
    (cwd / "gen").mkdir()
    (cwd / "gen" / "generate.json").write_text("{}")
    assert folder_kind(cwd / "gen") == "generated"
    check_output_path("gen", "--out", may_be=("generated",))  # a resumed generate


@pytest.mark.parametrize("argv", [
    ["run", "--model", "openai", "--model-path", "m", "--data", DATA, "--out", "model"],
    ["make-tiny-model", "qwen2-text", "--out", "model"],
    ["generate", "--llm-model", "m", "--out", "model"],
    ["sid", "--data", DATA, "--out", "model", "--detector", "energy"],
])
def test_no_command_writes_into_a_folder_of_the_user_s(argv, official, cwd, capsys):
    (cwd / "model").mkdir()
    (cwd / "model" / "config.json").write_text("{}")
    before = _listing(cwd)
    argv = [str(official) if a == DATA else a for a in argv]
    assert "model already holds files (config.json)" in _refused(argv, capsys)
    assert _listing(cwd) == before


def test_an_out_through_a_missing_folder_makes_no_empty_folder(official, cwd, capsys):
    """`--out q1/../rq` with no q1: what the user meant is rq, and no empty q1 is left behind."""
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--out", "q1/../rq",
                     "--limit", "1", "--epochs", "1", "--base-url", server.base_url, "--quiet"]) == 0
    assert (cwd / "rq" / "run.json").is_file() and not (cwd / "q1").exists()


@pytest.mark.parametrize("argv, message", [
    (["build", "--out", "new-data", "--cache-dir", "data/tts"], "--cache-dir: data/tts is inside"),
    (["build", "--out", "new-data", "--cache-dir", "new-data/tts"],
     "--cache-dir: new-data/tts is inside the dataset folder being written"),
    (["build", "--out", "new-data", "--cache-dir", "runs/a"], "--cache-dir: runs/a is a run folder"),
    (["judge", "runs/a", "--judge-model", "j", "--cache", "data/judge.sqlite"], "--cache: data/judge.sqlite is inside"),
    (["generate", "--llm-model", "m", "--domain", "telecom", "--goal", "g", "--out", "gen", "--cache",
      "imported/c.sqlite"],
     "--cache: imported/c.sqlite is inside"),
    (["verify", "--no-audio", "--judge-model", "j", "--cache", "data/c.sqlite"], "--cache: data/c.sqlite is inside"),
])
def test_a_cache_is_never_kept_inside_a_dataset(argv, message, cwd, capsys):
    """A cache inside a dataset folder is uploaded by publish-dataset with it."""
    before = _listing(cwd)
    assert message in _refused(argv, capsys)
    assert _listing(cwd) == before


def test_a_cache_may_live_anywhere_but_inside_a_toolkit_folder(cwd):
    """Battery 5 (finding 9): not in a run folder either, as --out may not: it is litter there that
    the run's own commands neither wrote nor remove."""
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.outputs import check_cache_path

    check_cache_path("caches/judge.sqlite", "--cache", file=True)
    check_cache_path("caches/tts", "--cache-dir", file=False, dataset="new-data")
    for inside in ("runs/a/judge.sqlite", "turns-out/c.sqlite", "sid-out/c.sqlite", "report/c.sqlite"):
        with pytest.raises(UsageError, match=f"--cache: {inside} is inside "):
            check_cache_path(inside, "--cache", file=True)
