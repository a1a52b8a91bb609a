"""The command line behaves like the tools users know: --version, help for every option, --quiet
on every command, a description written for users."""
import subprocess
import sys
from pathlib import Path

import pytest

from ihbench import __version__
from ihbench.cli import build_parser


def _commands():
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices


def test_version():
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == f"ihbench {__version__}"


def test_top_level_help_is_written_for_users():
    text = build_parser().format_help()
    assert "does a voice agent recover" in text and "thin wrappers" not in text
    for name in _commands():
        assert name in text


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_option_has_help_and_every_command_has_quiet(name):
    command = _commands()[name]
    undocumented = [a.option_strings or a.dest for a in command._actions if not a.help]
    assert undocumented == []
    assert any("--quiet" in a.option_strings for a in command._actions)


def test_every_command_is_one_module_in_the_cli_package_listed_once():
    import ihbench.cli

    names = [module.__name__.rsplit(".", 1)[-1].replace("_", "-") for module in ihbench.cli.COMMANDS]
    assert names == list(_commands())  # the tuple's order is the order of --help
    for module in ihbench.cli.COMMANDS:
        assert module.__file__.startswith(str(Path(ihbench.cli.__file__).parent))
        assert callable(module.add_parser) and callable(module.main)


def test_help_and_version_import_nothing_heavy():
    code = ("import sys; from ihbench.cli import build_parser; build_parser().format_help(); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'evaluate', 'transformers', 'datasets', 'gradio', "
            "'torch', 'matplotlib', 'huggingface_hub', 'openai', 'httpx'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr


def _user_error(kind: str, tmp_path) -> list[str]:
    if kind == "IHBenchError":  # a missing source file
        return ["verify", str(tmp_path / "missing.json")]
    (tmp_path / "a-file").write_text("")  # OSError: a staging folder inside a file
    return ["publish-metrics", "--namespace", "acme", "--dry-run", "--staging-dir", str(tmp_path / "a-file" / "x"), "apt"]


@pytest.mark.parametrize("kind", ["IHBenchError", "OSError"])
@pytest.mark.parametrize("debug", ["none", "--traceback", "IHBENCH_DEBUG=1", "IHBENCH_DEBUG=0"])
def test_a_user_error_is_one_line_and_its_traceback_on_request(kind, debug, tmp_path, monkeypatch, capsys):
    from ihbench.cli import main

    argv = _user_error(kind, tmp_path)
    monkeypatch.delenv("IHBENCH_DEBUG", raising=False)
    if debug == "--traceback":
        argv.insert(1, "--traceback")
    elif debug.startswith("IHBENCH_DEBUG="):
        monkeypatch.setenv("IHBENCH_DEBUG", debug.partition("=")[2])
    assert main(argv) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"ihbench {argv[0]}: error: ")
    if debug in ("--traceback", "IHBENCH_DEBUG=1"):
        assert err.startswith("Traceback (most recent call last):") and "cli/__init__.py" in err
    else:
        assert "Traceback" not in err and err.count("\n") == 1


# --- ihbench cache ---------------------------------------------------------------------------

def _cache_args(argv):
    from ihbench.cli import build_parser

    return build_parser().parse_args(["cache", *argv])


def test_cache_info_and_prune(tmp_path, capsys):
    from ihbench.dataset.errors import UsageError
    from ihbench.llm import LLMCache

    path = tmp_path / "judge_cache.sqlite"
    args = _cache_args(["info", "--cache", str(path)])
    assert args.func(args) == 0 and capsys.readouterr().out == f"{path}: no cache yet\n" and not path.exists()
    now = [1_700_000_000.0]
    cache = LLMCache(path, clock=lambda: now[0])
    for key in ("a", "b", "c"):
        now[0] += 60
        cache.put(key, {"verdict": key})
    cache.close()
    args = _cache_args(["info", "--cache", str(path)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: 3 answer(s), ") and " on disk; last used 2023-11-14T22:14:20+00:00 .. " \
        "2023-11-14T22:16:20+00:00\n" in out
    args = _cache_args(["prune", "--cache", str(path), "--max-entries", "1"])
    assert args.func(args) == 0 and capsys.readouterr().out.startswith(f"2 answer(s) removed; {path}: 1 answer(s), ")
    for argv in (["prune", "--cache", str(path)], ["info", "--cache", str(path), "--older-than", "3"]):
        args = _cache_args(argv)
        with pytest.raises(UsageError):
            args.func(args)


def test_main_leaves_the_ihbench_logger_as_it_found_it(capsys):
    """Called twice in one process (tests, a notebook), main() must not stack handlers (every
    warning printed twice) nor keep the logger from reaching the caller's own handlers."""
    import logging

    from ihbench.cli import main

    logger = logging.getLogger("ihbench")
    before = (list(logger.handlers), logger.level, logger.propagate)
    assert main(["models"]) == 0 and main(["models"]) == 0
    assert (list(logger.handlers), logger.level, logger.propagate) == before


def test_quiet_silences_the_libraries_progress_bars_too(tmp_path):
    """datasets' "Generating ... split" and transformers' "Loading weights" are not ours, but --quiet
    promises results and errors only. Each command in its own process, with a new datasets cache."""
    import os

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")}

    def ihbench(*argv):
        result = subprocess.run([sys.executable, "-m", "ihbench.cli", *argv], capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr
        return result.stderr

    assert ihbench("info", str(data), "--quiet") == ""
    env["HF_DATASETS_CACHE"] = str(tmp_path / "cache2")
    assert "Generating" in ihbench("info", str(data))  # the bar that --quiet hides is there without it
    assert ihbench("make-tiny-model", "qwen2-text", "--out", str(tmp_path / "tiny"), "--quiet") == ""


def test_quiet_leaves_the_libraries_as_it_found_them(tmp_path, capsys):
    import datasets
    from huggingface_hub import utils as hub
    from transformers.utils import logging as transformers_logging

    from ihbench.cli import main

    datasets.enable_progress_bars()  # as a process starts; what another test left is its own test's to catch
    assert main(["models", "--quiet"]) == 0
    assert not datasets.are_progress_bars_disabled() and not hub.are_progress_bars_disabled()
    assert transformers_logging.is_progress_bar_enabled()


def test_the_space_command_help_names_every_tab_of_the_space(capsys):
    """`ihbench --help` listed the Space's tabs by hand and had lost Turns and ConversationBench (battery 27)."""
    import re

    from ihbench.cli import main

    tabs = re.findall(r'gr\.Tab\("([^"]+)"\)', (Path(__file__).parents[1] / "spaces" / "app.py").read_text())
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = re.search(r"space\s+serve the Gradio Space locally \(([^)]+)\)", capsys.readouterr().out)
    assert listed, "the space command's help line"
    assert [t.strip() for t in re.sub(r"\s+", " ", listed.group(1)).split(",")] == [t for t in tabs if t != "Setup"]


def test_quiet_leaves_datasets_bars_on_when_the_command_imported_it(tmp_path):
    """CI, order-dependent: a --quiet command that was the first to import datasets left its bars off for
    the rest of the process (datasets keeps the variable it was imported under)."""
    import subprocess
    import sys

    from official_layout import write_official_layout

    official = write_official_layout(tmp_path / "official")
    code = ("import sys; from ihbench.cli import main; assert 'datasets' not in sys.modules; "
            f"main(['info', {str(official)!r}, '--quiet']); import datasets; "
            "sys.exit(3 if datasets.are_progress_bars_disabled() else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0
