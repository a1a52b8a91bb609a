"""Battery 22 (issue 23): findings N… of the twenty-second battery of bad inputs, tried on an installed wheel
as a new user would (/work/battery22/LOG.md). Each test's docstring names its finding. The model under test
and the judges are STAND-INS (scripted OpenAI-compatible servers on loopback)."""
import json

import pytest
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from official_layout import write_official_layout


@pytest.fixture
def answered_run(tmp_path):
    from test_battery_round3 import _answered

    return _answered(write_official_layout(tmp_path / "official"), tmp_path / "run", "--limit", "1")


@pytest.mark.parametrize("where", ["--cache", "IHBENCH_CACHE"])
def test_a_cache_that_cannot_be_made_is_refused_before_any_judge_call(answered_run, tmp_path, capsys, monkeypatch,
                                                                       where):
    """Battery 22, N4 (P2) and N5: a --cache in a read-only folder was found at the first answer kept, after a
    judge call was paid for, with a traceback; under a read-only IHBENCH_CACHE the message named neither, and
    the refused judge left its record (judgments.asked.json) in the run. (/proc stands in for a read-only
    disk: it takes no new entry.)"""
    from judging import ScriptedJudge

    before = sorted(p.name for p in answered_run.iterdir())
    argv = ["judge", str(answered_run), "--judge-model", "j", "--quiet"]
    if where == "--cache":
        argv += ["--cache", "/proc/ihbench-no-such/c.sqlite"]
    else:
        monkeypatch.setenv("IHBENCH_CACHE", "/proc/ihbench-no-such")
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main([*argv, "--judge-base-url", server.base_url]) == 2
        assert server.requests == []
    err = capsys.readouterr().err
    assert f"{where}" in err and "cannot create /proc/ihbench-no-such" in err and "Traceback" not in err, err
    assert sorted(p.name for p in answered_run.iterdir()) == before


def test_a_cache_under_a_file_is_refused_when_the_cache_is_opened(tmp_path):
    """Battery 22, N4 (#46): --cache under a plain file was said as "File exists: …" at the first answer kept,
    after paid calls, by judge and barge-in (both open the cache before any work, so the check at opening is
    theirs, and generate's and verify's)."""
    from ihbench.dataset.outputs import OutputPathError
    from ihbench.llm import LLMCache

    (tmp_path / "afile").write_text("notes")
    with pytest.raises(OutputPathError, match=r"^--cache: cannot create .*afile/c\.sqlite \(.*afile is a file, not a "
                                              r"folder\)$"):
        LLMCache(tmp_path / "afile" / "c.sqlite")
    with pytest.raises(OutputPathError, match=r"cannot create /proc/ihbench-no-such/c\.sqlite"):
        LLMCache("/proc/ihbench-no-such/c.sqlite")
    assert not (tmp_path / "new").exists() and LLMCache(tmp_path / "new" / "c.sqlite") is not None
    assert not (tmp_path / "new").exists()  # made on the first answer kept, not when checked
