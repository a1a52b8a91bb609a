"""Battery 60 (issue 23): its P3 findings, tried on an installed wheel as a new user would. (G1-G4 and G6 are in
test_battery59.py, beside the findings they follow.)"""
import sys

import pytest

from ihbench.cli import main


@pytest.fixture
def resumed(tmp_path, monkeypatch, capsys):
    """Starts a run of one point against the test server (a stand-in for a remote model), then runs `ihbench run` again
    into the same folder with `extra` words; returns (exit code, stderr) of the second."""
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    data = write_official_layout(tmp_path / "official")

    def resume(*extra: str):
        with OpenAITestServer() as server:
            def run(*words: str) -> int:
                argv = ["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                        str(data), "--out", str(tmp_path / "r"), "--limit", "1", "--quiet", *words]
                monkeypatch.setattr(sys, "argv", ["ihbench", *argv])
                return main(argv)

            assert run() == 0
            capsys.readouterr()
            return run(*extra), capsys.readouterr().err

    return resume


@pytest.mark.parametrize("extra", [["--config", "conversations"], ["--split", "test"],
                                   ["--config", "conversations", "--split", "test"]])
def test_a_resume_that_spells_out_a_default_is_the_same_run(extra, resumed):
    """Battery 60, G5 (P3): a run started without --config/--split, resumed with the values the defaults picked
    (`--config conversations`, `--split test`), was refused as "a different run: config is not given there"."""
    code, err = resumed(*extra)
    assert code == 0 and "different run" not in err, err


def test_a_resume_with_another_split_is_still_another_run(resumed):
    code, err = resumed("--split", "dev")
    assert code == 2 and "belongs to a different run: split is not given there but 'dev' now" in err, err
