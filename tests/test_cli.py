"""The command line behaves like the tools users know: --version, help for every option, --quiet
on every command, a description written for users."""
import subprocess
import sys

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


# --- ihbench cache (ihbench/cli_cache.py: registered when the CLI becomes ihbench/cli/) ----------

def _cache_args(argv):
    import argparse

    from ihbench import cli_cache

    parser = argparse.ArgumentParser(prog="ihbench")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bars")
    commands = parser.add_subparsers(dest="command", required=True)
    command = cli_cache.add_parser(lambda name, **kw: commands.add_parser(name, parents=[common], **kw))
    assert [a.option_strings or a.dest for a in command._actions if not a.help] == []
    return parser.parse_args(["cache", *argv])


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
