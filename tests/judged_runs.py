"""A small IHBench run of the official-layout fixture, answered by the local OpenAI-compatible TEST DOUBLE and
judged by the scripted judge (tests/judging.py), one judgments file per judge asked: what the report's
tests of several judgments files start from."""
from pathlib import Path

from judging import ScriptedJudge
from openai_test_server import OpenAITestServer

from ihbench.cli import main
from official_layout import write_official_layout


def judged_run(root: Path, judges: tuple = (("j", None),), limit: int = 2) -> Path:
    """`root`/r answered (`limit` points), judged once per (judge model, judgments file name or None)."""
    data = write_official_layout(root / "official")
    run = root / "r"
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(data), "--out", str(run),
                     "--limit", str(limit), "--quiet", "--base-url", server.base_url]) == 0
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        for name, out in judges:
            assert main(["judge", str(run), "--judge-model", name, "--judge-base-url", judge.base_url, "--cache",
                         str(root / "c.sqlite"), "--quiet", *(["--out", str(run / out)] if out else [])]) == 0
    return run
