"""Battery 59 (issue 23): findings F… of the fifty-ninth battery of bad inputs, tried on an installed wheel as a new
user would (/work/battery59/LOG.md). Each test's docstring names its finding. (F1-F5 are in test_battery58.py,
test_battery56.py and test_battery7.py, beside the findings they follow.)"""
import pytest

from ihbench.cli import main


@pytest.mark.parametrize("option, said", [
    ("floor_dbfs=0", "--option floor_dbfs: expected a number in [-120, 0), got 0"),
    ("floor_dbfs=10", "--option floor_dbfs: expected a number in [-120, 0), got 10"),
    ("margin_db=1000", "--option margin_db: expected a number in [0, 60], got 1000"),
    ("margin_db=-5", "--option margin_db: expected a number in [0, 60], got -5"),
])
def test_the_energy_detector_s_levels_are_checked_before_any_work(option, said, tmp_path, capsys):
    """Battery 59, F6 (P2): a floor at or above 0 dBFS, or a margin of 1000 dB, made the energy detector deaf: every
    clip was scored a miss, with no word."""
    assert main(["sid", "--data", str(tmp_path / "none"), "--detector", "energy", "--option", option, "--out",
                 str(tmp_path / "sid")]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "sid").exists()


@pytest.mark.parametrize("name, said", [("README.md", "is a named pipe, not the dataset's card (README.md)"),
                                        ("build_info.json", "is a named pipe, not the build's record")])
@pytest.mark.parametrize("command", [["info", "{ds}"], ["publish-dataset", "{ds}", "--repo", "me/x", "--dry-run"],
                                     ["verify", "--audio", "{ds}"]])
def test_a_dataset_s_card_or_record_that_is_a_named_pipe_is_said_so(name, said, command, tmp_path, capsys):
    """Battery 59, F9 (P2): a named pipe as a dataset's card or build_info.json was said "missing", "not an ihbench
    build", or "is a dataset folder ..., not a dataset"."""
    import os

    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: conversations\n  data_files: c/*.parquet\n---\n")
    (folder / "build_info.json").write_text("{}")
    (folder / name).unlink()
    os.mkfifo(folder / name)
    assert main([part.format(ds=folder) for part in command]) == 2
    err = capsys.readouterr().err
    assert f"{name}: {said}" in err and "Traceback" not in err, err


@pytest.mark.parametrize("name", ["a\u200bb", "a\u202eb", "a\u00a0b"])
def test_a_new_path_with_an_invisible_or_reordering_character_is_refused(name, tmp_path, monkeypatch, capsys):
    """Battery 59, F12 (P3): `runs/a<zero-width space>b` (which reads as `runs/ab`) and a right-to-left override were
    made as folders, while --data refused the same characters."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--base-url", "http://127.0.0.1:9/v1",
              "--out", f"runs/{name}"])
    assert "an invisible or direction-changing character, or a space other than the plain one" in \
        capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["実験-一", "run-\U0001F399", "cafe\u0301",
                                  # battery 60, G1: a ZWJ emoji sequence, a subdivision flag's tags, Persian's ZWNJ
                                  "\U0001F469\u200d\U0001F52C-run",
                                  "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F-eval",
                                  "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"])
def test_new_paths_in_other_scripts_are_still_names(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(["run", "--model", "openai", "--model-path", "m", "--data", "d", "--base-url", "http://127.0.0.1:9/v1",
          "--out", f"runs/{name}"])
    assert "no such dataset directory" in capsys.readouterr().err  # refused for the data, not for the name


def test_a_refused_json_option_value_is_shown_as_json(tmp_path, capsys):
    """Battery 59, with F5: `device_map={"model": "cpu"}` was refused quoting Python's `{'model': 'cpu'}`."""
    assert main(["run", "--model", "qwen2-audio", "--model-path", str(tmp_path / "m"), "--data", "d", "--out",
                 str(tmp_path / "r"), "--option", 'device_map={"model": "cpu"}']) == 2
    assert 'got {"model": "cpu"}' in capsys.readouterr().err


@pytest.mark.parametrize("repo", ["me/-x", "me/.x", ".me/x"])
def test_a_repo_part_that_starts_with_a_dot_or_dash_is_refused_saying_so(repo, tmp_path, capsys):
    """Battery 59, F11 (P3): `me/-x` was refused as not "letters, digits, '.', '_', '-'", which it is."""
    assert main(["publish-dataset", str(tmp_path), "--repo", repo, "--dry-run"]) == 2
    assert "each part starting with a letter or digit" in capsys.readouterr().err


def test_a_second_judgments_file_of_judge_errors_only_is_said_as_such(tmp_path, capsys):
    """Battery 59, F8 (P3): a second judgments file whose judge never answered (every record a judge error) was
    said to be "by the same judge ... a judge agrees with itself by construction", its failures never said."""
    from judged_runs import judged_run
    from openai_test_server import OpenAITestServer

    import json

    run = judged_run(tmp_path, limit=2)
    down = run / "judgments-down.jsonl"
    first = next(run.glob("judgments*.jsonl"))
    judge = json.loads(first.read_text().splitlines()[0])["judge_model"]  # the same judge, asked again
    with OpenAITestServer(fail_when=lambda body: 400) as server:  # ... and refusing every question now
        assert main(["judge", str(run), "--judge-model", judge, "--judge-base-url", server.base_url, "--out",
                     str(down), "--cache", str(tmp_path / "c.sqlite"), "--quiet"]) == 1
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert "judgments-down.jsonl: " in err and "judge error(s) and no verdict, so no inter-judge comparison" in err, err
    assert "agrees with itself" not in err


def test_a_goal_too_long_is_said_as_a_sentence(tmp_path, capsys):
    """Battery 59, F13 (P3): a 15,000-character --goal was refused saying "a name or path has at most 4,096"."""
    with pytest.raises(SystemExit):
        main(["generate", "--domain", "telecom", "--goal", "word " * 3000, "--llm-model", "m", "--out",
              str(tmp_path / "g")])
    assert "characters (not shown); a sentence has at most 4,096" in capsys.readouterr().err


def test_a_resume_with_more_words_on_its_command_line_keeps_hidden_what_the_first_start_hid(tmp_path, monkeypatch,
                                                                                           capsys):
    """Battery 60, G2 (P1): F2 held only for a resumed command line of as many words as the first; with a flag added
    (`--concurrency 3`), the first start's hidden extra_body word was written out in run.json's command."""
    import json
    import sys

    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    data = write_official_layout(tmp_path / "official")
    value = "bluebird-horse-30371149"

    def run(*extra: str) -> int:
        argv = ["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data", str(data),
                "--out", str(tmp_path / "r"), "--epochs", "1", "--quiet", "--option",
                f"extra_body={json.dumps({'user': value})}", *extra]
        monkeypatch.setattr(sys, "argv", ["ihbench", *argv])  # run.json records the command line as typed
        return main(argv)

    with OpenAITestServer() as server:
        monkeypatch.setenv("DB_PASSWORD", value)
        assert run("--limit", "1") == 0
        monkeypatch.delenv("DB_PASSWORD")
        assert run("--limit", "2", "--concurrency", "3") == 0, capsys.readouterr().err
    assert value not in (tmp_path / "r" / "run.json").read_text()


def test_a_resumed_suite_keeps_hidden_what_its_first_run_hid(tmp_path, monkeypatch):
    """Battery 60, G6 (P1): `generate` resumed in a shell without the secret variable whose value stood in the LLM's
    address wrote it into generate.json and the new conversation's provenance (which `build` copies)."""
    from generate_script import GenerationScript
    from openai_test_server import OpenAITestServer

    value = "bluebird-horse-55512345"

    def generate(conversations: int) -> int:
        return main(["generate", "--domain", "government", "--goal", "Set up a property tax installment plan",
                     "--intents", "1", "--conversations", str(conversations), "--llm-model", "scripted",
                     "--llm-base-url", server.base_url.replace("/v1", f"/{value}/v1"), "--out",
                     str(tmp_path / "suite"), "--cache", str(tmp_path / "c.sqlite"), "--quiet"])

    with OpenAITestServer(respond=GenerationScript(["cooperative"])) as server:
        monkeypatch.setenv("DB_PASSWORD", value)
        assert generate(1) == 0
        monkeypatch.delenv("DB_PASSWORD")
        assert generate(2) == 0
    written = [path.read_text() for path in (tmp_path / "suite").rglob("*.json")]
    assert len(written) >= 3 and not [text for text in written if value in text]
    # battery 61, H2 (P3): the provenance marks the hidden part of the address, not names another endpoint
    import json

    said = [json.loads(path.read_text())["provenance"]["llm"]
            for path in (tmp_path / "suite" / "conversations").glob("*.json")]
    assert len(said) == 2 and all("/(hidden)/v1" in line for line in said), said


def test_a_folder_holding_a_file_named_build_info_json_is_no_build_to_replace(tmp_path, capsys):
    """Battery 60, G4 (P2): any folder with a file named build_info.json (empty, `{"hello": 1}`) was taken for an
    earlier build: `build` wrote a dataset among the user's files, `convbench-import` added to it."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "build_info.json").write_text('{"hello": 1}')
    (folder / "notes.txt").write_text("mine")
    assert main(["build", "--out", str(folder), "--no-sid", "--no-convbench", "--no-duplex", "--quiet"]) == 2
    assert "exists and is not an ihbench build (its build_info.json is not a build's record)" in \
        capsys.readouterr().err
    from convbench_layout import write_benchmark_folder

    assert main(["convbench-import", str(write_benchmark_folder(tmp_path / "repo")), "--out", str(folder),
                 "--quiet"]) == 2
    assert "its build_info.json is not a build's record, so it is no dataset to add to" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["build_info.json", "notes.txt"]
