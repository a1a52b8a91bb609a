"""Battery 9 (issue 23): output paths and staging folders refused before any work."""
import os

import pytest

from ihbench.cli import main
from test_battery4_files import _files, _one_error


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


# --- finding 11: an --out that is a dangling symlink ---------------------------------------------

def test_an_out_that_is_a_dangling_symlink_is_refused_by_every_command_before_any_work(official, tmp_path, capsys):
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "run", "--limit", "1")
    dangling = tmp_path / "dang"
    dangling.symlink_to(tmp_path / "nowhere" / "zz")
    dangling2 = tmp_path / "dang2"
    dangling2.symlink_to(tmp_path / "nowhere" / "yy")
    before = _files(tmp_path)
    with OpenAITestServer() as server:
        url = [server.base_url]
        commands = {
            "run": (["run", "--model", "openai", "--model-path", "m", "--data", str(official), "--epochs", "1",
                     "--base-url", *url], dangling),
            "barge-in": (["barge-in", "--data", str(official), "--model", "openai", "--model-path", "m",
                          "--base-url", *url, "--sim-model", "s", "--sim-base-url", *url, "--modality", "text",
                          "--limit", "1"], dangling),
            "report": (["report", str(run)], dangling),
            "judge": (["judge", str(run), "--judge-model", "j", "--judge-base-url", *url], dangling2),
        }
        capsys.readouterr()
        for command, (argv, out) in commands.items():
            assert main([*argv, "--out", str(out), "--quiet"]) == 2, command
            assert _one_error(capsys, command) == (f"ihbench {command}: error: --out: {out} is a symlink to "
                                                   f"{os.readlink(out)}, which does not exist")
        assert server.requests == []
    assert _files(tmp_path) == before
    assert main(["report", str(run), "--out", str(dangling / "sub"), "--quiet"]) == 2
    assert _one_error(capsys, "report").endswith(f"--out: {dangling / 'sub'}: its folder {dangling} is a symlink to "
                                                 f"{os.readlink(dangling)}, which does not exist")
    assert _files(tmp_path) == before


# --- finding 12: an --out whose name fits but whose derived names do not --------------------------

def test_an_out_too_long_for_the_names_derived_from_it_is_refused_before_any_judge_call(official, tmp_path, capsys):
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    from ihbench.dataset.outputs import _BESIDE, ADDED_BYTES
    from ihbench.judge.asked import SUFFIX

    assert ".{}" + SUFFIX + ".{pid}.tmp" in _BESIDE  # the judge's record: the data layer cannot import its name
    run = _answered(official, tmp_path / "run", "--limit", "1")
    limit = os.pathconf(run, "PC_NAME_MAX") - ADDED_BYTES
    before = _files(tmp_path)
    with OpenAITestServer() as server:
        for name in ("judgments_" + "a" * 239 + ".jsonl", "judgments_" + "c" * 232 + ".jsonl",
                     "judgments_" + "d" * (limit - 15) + ".jsonl"):
            out = run / name
            capsys.readouterr()
            assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                         str(tmp_path / "jc.sqlite"), "--out", str(out), "--quiet"]) == 2
            said = _one_error(capsys, "judge")  # the path, 300 characters and more, by its start (battery 57, D10)
            assert said.startswith(f"ihbench judge: error: --out: {str(out)[:200]}"), said
            assert said.endswith(f"file name of {len(name)} bytes, too long once ihbench adds its own suffixes (at "
                                 f"most {limit} bytes here)"), said
        assert server.requests == []
    assert _files(tmp_path) == before
    fits = run / ("judgments_" + "e" * (limit - 16) + ".jsonl")
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--out", str(fits),
                     "--quiet"]) == 0
    assert fits.is_file() and fits.with_name(fits.stem + SUFFIX).is_file()


# --- finding 3: a staging folder's sub-folder replaced by a symlink ------------------------------

def test_a_symlink_inside_a_staging_folder_is_refused_and_nothing_is_written_through_it(tmp_path, capsys):
    staging = tmp_path / "stg5"
    assert main(["publish-metrics", "--namespace", "me", "--dry-run", "--staging-dir", str(staging), "--quiet"]) == 0
    mine = tmp_path / "myirl"
    mine.mkdir()
    for name in ("README.md", "app.py", "irl.py", "requirements.txt", "sid_scoring.py", "extra_user.txt"):
        (mine / name).write_text(f"USER {name}")
    marker = (staging / ".ihbench-staging").read_text()
    for path in sorted((staging / "irl").iterdir()):
        path.unlink()
    (staging / "irl").rmdir()
    (staging / "irl").symlink_to("../myirl")
    before = _files(tmp_path)
    capsys.readouterr()
    assert main(["publish-metrics", "--namespace", "me", "--dry-run", "--staging-dir", str(staging), "irl",
                 "--quiet"]) == 2
    assert _one_error(capsys, "publish-metrics") == (
        f"ihbench publish-metrics: error: --staging-dir: {staging / 'irl'} is a symlink (to ../myirl); a staging "
        "folder holds only what ihbench staged: remove it")
    assert capsys.readouterr().out == ""  # extra_user.txt never listed
    assert (mine / "irl.py").read_text() == "USER irl.py"
    assert _files(tmp_path) == before and (staging / ".ihbench-staging").read_text() == marker
    (staging / "irl").unlink()
    (staging / "fir" / "deep.md").symlink_to(mine / "README.md")  # a file, one level down
    assert main(["publish-space", "--repo", "me/s", "--dry-run", "--staging-dir", str(staging), "--quiet"]) == 2
    assert _one_error(capsys, "publish-space").endswith(
        f"--staging-dir: {staging / 'fir' / 'deep.md'} is a symlink (to {mine / 'README.md'}); a staging folder "
        "holds only what ihbench staged: remove it")
    assert (mine / "README.md").read_text() == "USER README.md"
