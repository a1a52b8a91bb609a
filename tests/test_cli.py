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
