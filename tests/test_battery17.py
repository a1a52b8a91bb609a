"""Battery 17 (issue 23): findings M… of the seventeenth battery of bad inputs, tried on an installed wheel as a
new user would (/work/battery17/LOG.md). Each test's docstring names its finding. The model under test and
the judges are STAND-INS (scripted OpenAI-compatible servers on loopback)."""
import json

import pytest
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from official_layout import write_official_layout


def test_runs_of_one_dataset_with_other_limits_are_said_to_answer_other_items(tmp_path, capsys):
    """Battery 17, M4: two runs of one dataset with --limit 2 and --limit 5 were said to have "used different
    data", as if the dataset had changed between them."""
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as server:
        for limit in ("1", "2"):
            assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out",
                         str(tmp_path / f"r{limit}"), "--limit", limit, "--epochs", "1", "--quiet", "--base-url",
                         server.base_url]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r1"), str(tmp_path / "r2"), "--out", str(tmp_path / "rep"), "--quiet",
                 "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert f"these runs answered different items of {data} (--limit 1 / --limit 2)" in err, err
    assert "used different data" not in err
