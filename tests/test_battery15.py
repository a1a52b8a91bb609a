"""Battery 15 (issue 23): findings K… of the fifteenth battery of bad inputs, tried on an installed wheel as a
new user would (/work/battery15/LOG.md). Each test's docstring names its finding."""
import pytest
from test_battery10 import official  # noqa: F401 (fixture: a dataset in the official layout)

from ihbench.cli import main


def test_sid_import_says_a_wav_that_is_a_folder_is_no_regular_file(tmp_path, capsys):
    """Battery 15 (try 18): a b.wav that is a folder was "not found"."""
    import numpy as np
    from test_battery5_files import _sid_noise

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01), "b.wav": np.full(32_000, 0.01)})
    wav = root / "test_wavs" / "silence_or_noise" / "b.wav"
    wav.unlink()
    wav.mkdir()
    assert main(["sid-import", str(root), "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert f"line 2: {wav} is not a regular file (a folder" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_verify_audio_with_its_report_and_plot_at_one_path_is_refused(official, tmp_path, capsys):
    """Battery 15 (try 29): the plot silently replaced the report written to the same file."""
    same = tmp_path / "same.png"
    assert main(["verify", "--audio", str(official), "--audio-report", str(same), "--audio-plot", str(same)]) == 2
    assert "--audio-report and --audio-plot: both name" in capsys.readouterr().err and not same.exists()


def test_verify_audio_stopped_says_it_starts_again(official, monkeypatch, capsys):
    """Battery 15 (try 28): SIGTERM said "what was written is kept, and the same command goes on", yet
    `verify --audio` writes only at its end and a rerun computes everything again."""
    import ihbench.cli.verify as verify_cli
    from ihbench.cli import Terminated

    def stopped(args):
        raise Terminated()
    monkeypatch.setattr(verify_cli, "_verify_audio", stopped)
    assert main(["verify", "--audio", str(official)]) == 143
    assert "starts again from the beginning" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["missing", "dataset"])
def test_judge_names_what_a_folder_that_is_no_run_is(what, official, tmp_path, capsys):
    """Battery 15 (try 27): judge said "not a run directory; run `ihbench run` first" for a SID output, a
    dataset, a report and a path that does not exist."""
    folder = tmp_path / "nothing" if what == "missing" else official
    assert main(["judge", str(folder), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1",
                 "--cache", str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err
    said = "no such folder" if what == "missing" else "is a dataset folder"
    assert said in err and "run `ihbench run` first" not in err, err
