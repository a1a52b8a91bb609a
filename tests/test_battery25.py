"""Battery 25 (issue 23): findings U… of the twenty-fifth battery of bad inputs, tried on an installed wheel
as a new user would (/work/battery25/LOG.md). Each test's docstring names its finding. Model servers and
judges are STAND-INS (scripted OpenAI-compatible servers on loopback)."""
import pytest

from ihbench.cli import main


@pytest.mark.parametrize("argv", [
    ["info", "~nouser-ihbench/x"],
    ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
     "~nouser-ihbench/d", "--out", "{tmp}/r"],
    ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data", "{tmp}",
     "--out", "~nouser-ihbench/r"],
    ["report", "~nouser-ihbench/r"],
    ["doctor", "--model", "qwen2-audio", "--model-path", "~nouser-ihbench/m"],
])
def test_a_home_folder_of_no_user_is_named_not_a_traceback_or_a_symlink_loop(argv, tmp_path, capsys):
    """Battery 25, U6 (P2): `--data ~nouser/...` ended in pathlib's RuntimeError traceback ("Could not determine
    home directory"), and every other path option called it "a symlink loop"."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        code = main(argv)
    except SystemExit as stopped:  # argparse's own refusal of an option's value
        code = stopped.code
    assert code == 2
    err = capsys.readouterr().err
    assert "~nouser-ihbench is the home folder of a user this system does not have; give the path in full" in err, err
    assert "Traceback" not in err and "symlink loop" not in err
    assert not (tmp_path / "r").exists()
