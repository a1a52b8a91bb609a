"""The fourth battery of bad inputs (issue 23), litter and --quiet: a publish carries only the dataset's
own files and names anything else; a library's warnings stay out of --quiet and are one line without
it; a command leaves no side files (SQLite's -wal/-shm, matplotlib's temporary folder) behind."""
import os

import pytest
from official_layout import write_official_layout

from ihbench.cli import main
from ihbench.dataset.builddir import BuildDir


@pytest.fixture
def dataset(tmp_path):
    """A small dataset folder as the Hub has it (card with `configs:` and Parquet), plus what a user
    dropped into it: a visible note and a nested folder of their own, and hidden files."""
    folder = write_official_layout(tmp_path / "data")
    (folder / "notes.txt").write_text("mine\n")
    (folder / "extra").mkdir()
    (folder / "extra" / "weights.bin").write_bytes(b"\0" * 8)
    (folder / ".env").write_text("X=1\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref\n")
    return folder


def _one_error(capsys, command) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("Generating ")]
    assert len(lines) == 1 and lines[0].startswith(f"ihbench {command}: error: "), err
    return lines[0]


def test_the_dataset_is_its_card_and_the_files_its_configs_name(dataset, tmp_path):
    build = BuildDir(dataset)
    assert build.files() == ["README.md", "baseline/test-00000-of-00001.parquet",
                             "conversations/test-00000-of-00001.parquet"]
    assert build.foreign_files() == ["extra/weights.bin", "notes.txt"]
    build.copy_to(tmp_path / "copy")  # set-baseline's copy and publish-space's staging
    assert sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*")
                  if p.is_file()) == build.files()


@pytest.mark.parametrize("command", ["publish-dataset", "publish-space"])
def test_a_publish_refuses_a_dataset_folder_holding_a_users_files_and_names_them(command, dataset, tmp_path,
                                                                                  capsys):
    """Battery 4, finding 3: `publish-dataset --dry-run` listed notes.txt for upload and publish-space
    copied it into the Space; one rule for both, before anything is staged."""
    staging = tmp_path / "staging"
    argv = (["publish-dataset", str(dataset)] if command == "publish-dataset" else
            ["publish-space", "--data", str(dataset), "--staging-dir", str(staging)])
    assert main([*argv, "--repo", "me/x", "--dry-run", "--quiet"]) == 2
    error = _one_error(capsys, command)
    assert f"{dataset}: not the dataset's files: extra/weights.bin, notes.txt (only the card" in error
    assert ".env" not in error and ".git" not in error
    assert not staging.exists()


def test_a_publish_of_the_dataset_alone_lists_only_its_files(dataset, capsys):
    for name in ("notes.txt", "extra/weights.bin"):
        (dataset / name).unlink()
    assert main(["publish-dataset", str(dataset), "--repo", "me/x", "--dry-run", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "would upload README.md, baseline/test-00000-of-00001.parquet, " \
           "conversations/test-00000-of-00001.parquet  (from" in out


def _side_files(path):
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


@pytest.mark.parametrize("argv", [["info"], ["prune", "--older-than", "1e308"], ["prune", "--max-entries", "1"]])
def test_cache_info_and_prune_leave_no_sqlite_side_files(argv, tmp_path, capsys):
    """Battery 4, finding 20: `cache info` and `cache prune` left jc2.sqlite-shm and -wal beside the cache:
    the read-only look at it (info, and prune's count before and after) made them and could not remove them."""
    from ihbench.llm import LLMCache

    path = tmp_path / "cache" / "judge.sqlite"
    cache = LLMCache(path)
    for n in range(3):
        cache.put(f"k{n}", {"n": n})
    cache.close()
    assert _side_files(path) == []
    assert main(["cache", *argv, "--cache", str(path)]) == 0
    assert f"{path}: " in capsys.readouterr().out
    assert _side_files(path) == []


def test_cache_info_keeps_the_side_files_of_a_cache_another_process_has_open(tmp_path, capsys):
    """They are SQLite's while a writer (a judge running) has the cache open: never removed under it."""
    from ihbench.llm import LLMCache

    path = tmp_path / "judge.sqlite"
    writer = LLMCache(path)
    writer.put("k", {"n": 1})
    try:
        assert main(["cache", "info", "--cache", str(path)]) == 0
        assert ": 1 answer(s)" in capsys.readouterr().out
        assert _side_files(path) == ["judge.sqlite-shm", "judge.sqlite-wal"]
        writer.put("k2", {"n": 2})  # the writer goes on as before
    finally:
        writer.close()
    assert _side_files(path) == []


def _nearly_identical_ttest():
    """What `report` of two runs with the same scores asks of scipy: a warning from inside scipy."""
    import scipy.stats

    scipy.stats.ttest_1samp([0.4166666666666667] * 3, 0.4166666666666667)


@pytest.fixture
def noisy_command(monkeypatch):
    """`ihbench cache info` made to do what report did in battery 4 (twice, as a report of several
    runs does), with a warning of the toolkit's own among them."""
    import warnings

    import ihbench.cli.cache as command

    def run(args):
        _nearly_identical_ttest()
        _nearly_identical_ttest()
        exec(compile("warnings.warn('a note of the toolkit', stacklevel=1)", command.__file__, "exec"),
             {"__name__": "ihbench.cli.cache", "warnings": warnings})
        print("the result")
        return 0

    monkeypatch.setattr(command, "main", run)


def test_a_librarys_warning_is_not_shown_under_quiet(noisy_command, capsys):
    """Battery 4, finding 13: scipy's RuntimeWarning and its source line were printed under --quiet."""
    assert main(["cache", "info", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out == "the result\n"
    assert err == "ihbench cache: warning: a note of the toolkit\n"


def test_without_quiet_a_librarys_warning_is_one_line_once_naming_the_library(noisy_command, capsys):
    assert main(["cache", "info"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "ihbench cache: warning: Precision loss occurred in moment calculation due to catastrophic cancellation. "
        "This occurs when the data are nearly identical. Results may be unreliable. (RuntimeWarning from scipy)",
        "ihbench cache: warning: a note of the toolkit"]


def test_the_warning_rule_ends_with_the_command(noisy_command, capsys):
    import warnings

    filters, show = list(warnings.filters), warnings.showwarning
    main(["cache", "info", "--quiet"])
    assert (warnings.filters, warnings.showwarning) == (filters, show)
    assert "TRANSFORMERS_VERBOSITY" not in os.environ


def _python(code, env, tmp_path):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "TMPDIR": str(tmp_path / "tmp"), **env})


def test_an_unwritable_matplotlib_folder_is_replaced_by_the_toolkits_cache(tmp_path):
    """Battery 4, finding 14: with MPLCONFIGDIR unwritable matplotlib said so in two lines (under --quiet
    too) and made a /tmp/matplotlib-* folder."""
    (tmp_path / "tmp").mkdir()
    cache = tmp_path / "cache"
    result = _python("import os; from ihbench.dataset.plotting import pyplot; pyplot(); print(os.environ['MPLCONFIGDIR'])",
                     {"MPLCONFIGDIR": "/proc/nonexistent", "IHBENCH_CACHE": str(cache)}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == (f"{cache / 'matplotlib'}\n", "")
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("quiet", [True, False])
def test_a_librarys_log_line_is_one_line_and_kept_out_of_quiet(quiet, tmp_path):
    """A library that logs without a handler of its own (matplotlib, when even the toolkit's cache is not
    writable) is printed by Python's last resort as a bare line: now named, and not under --quiet."""
    code = ("import logging, sys\n"
            "import ihbench.cli.cache as command\n"
            "command.main = lambda args: logging.getLogger('somelib.sub').warning('a library line') or 0\n"
            "from ihbench.cli import main\n"
            f"sys.exit(main(['cache', 'info'{', ' + repr('--quiet') if quiet else ''}]))\n")
    result = _python(code, {}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("" if quiet else "ihbench cache: warning: (somelib) a library line\n")


def test_cache_info_removes_side_files_a_look_of_an_older_toolkit_left(tmp_path, capsys):
    """Battery 4 left o/jo.sqlite-shm and -wal from its tries: no process has the cache open, so they go."""
    import sqlite3

    from ihbench.llm import LLMCache

    path = tmp_path / "judge.sqlite"
    cache = LLMCache(path)
    cache.put("k", {"n": 1})
    cache.close()
    look = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)  # what `cache info` did until now
    look.execute("SELECT COUNT(*) FROM judgments").fetchall()
    look.close()
    assert _side_files(path) == ["judge.sqlite-shm", "judge.sqlite-wal"]
    assert main(["cache", "info", "--cache", str(path)]) == 0
    assert _side_files(path) == []
