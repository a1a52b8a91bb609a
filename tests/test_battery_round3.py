"""The third round of bad inputs (issue 23): what the second battery left, and what a fresh battery
found, each as a user met it. Each is one line naming the file, field or option, never a traceback,
a library's log line, a silent default or a file written."""
import os

import pytest

from ihbench.cli import main


def _one_error(capsys, command) -> str:
    """The one error line of `command`, after checking nothing else was said but argparse's usage."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(f"ihbench {command}: error: ")]
    assert len(errors) == 1, err
    others = [line for line in lines if line not in errors and not line.startswith((f"usage: ihbench {command}", " "))]
    assert others == [], err
    return errors[0]


def _exit_code(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def _files(folder) -> list[str]:
    return sorted(os.path.relpath(os.path.join(root, name), folder) for root, dirs, names in os.walk(folder)
                  for name in dirs + names)


@pytest.mark.parametrize("command", ["run", "generate", "make-tiny-model", "report"])
@pytest.mark.parametrize("value", [str(2**64), "-1", "99999999999999999999999999"])
def test_a_seed_out_of_range_is_refused_when_parsed_with_the_range(command, value, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _exit_code([command, "--seed", value]) == 2
    error = _one_error(capsys, command)
    assert f"argument --seed: expected a whole number from 0 to {2**64 - 1}, got '{value}'" in error
    assert os.listdir(tmp_path) == []
