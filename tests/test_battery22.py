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


def _silent_wav() -> bytes:
    import io

    import numpy as np
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, np.zeros(0, np.float32), 16000, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def test_an_empty_turn_clip_is_refused_by_import_and_verify_naming_its_file(tmp_path, capsys):
    """Battery 22, N3: a 0-sample turn WAV passed `convbench-import` and `verify` (sid-import refuses one)."""
    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "repo")
    clip = folder / "audio" / "turn_001.wav"
    clip.write_bytes(_silent_wav())
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "data"), "--quiet"]) == 2
    assert f"{clip}: no audio (0 samples)" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()
    assert main(["verify", str(folder)]) == 1
    assert f"{clip}: no audio (0 samples)" in capsys.readouterr().err
    assert main(["verify", "--no-audio", str(folder)]) == 0  # its text is sound


def test_a_damaged_turn_clip_is_a_failed_turn_naming_it(tmp_path):
    """Battery 22, N3: the ConversationBench run stopped with "the audio bytes: no audio (0 samples)" (no
    config, turn or file named; no failed turn recorded). Now the turn fails, named, and a rerun tries it."""
    import dataclasses

    from convbench_layout import write_benchmark_folder

    from ihbench.convbench.run import ConvRunSpec, run_convbench
    from ihbench.dataset.convbench import import_convbench, load_benchmark

    data = tmp_path / "data"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), data, progress=False)
    benchmark = load_benchmark(str(data), "bike_bench")  # one clip damaged as a copied dataset may hold it
    turns = list(benchmark.turns)
    turns[1] = dataclasses.replace(turns[1], audio={"bytes": _silent_wav(), "path": "turn_001.wav"})
    benchmark = dataclasses.replace(benchmark, turns=turns)
    with OpenAITestServer() as server:
        spec = ConvRunSpec(loader="openai", model_path="m", data=str(data), config="bike_bench", out=tmp_path / "run",
                           only_turns=[0, 1, 2], loader_options={"base_url": server.base_url})
        summary = run_convbench(spec, benchmark=benchmark, progress=False)
        assert summary.errors == 1 and summary.on_data_audio == 1  # battery 23: said apart, as it fails again
        assert len(server.requests) == 1  # turn 0 only: the conversation stops at the failed turn
    records = [json.loads(line) for line in (tmp_path / "run" / "responses.jsonl").open()]
    assert [(r["turn"], r["status"]) for r in records] == [(0, "answered"), (1, "error")]
    assert records[1]["error"].startswith(f"DamagedAudioError: {data} [bike_bench]: turn 1 (turn_001.wav): no audio "
                                          "(0 samples)"), records[1]["error"]


@pytest.mark.parametrize("text, said", [
    ('{"model": "m", "epochs": 1}', "expected a list of turn rows, as the Hub layout's benchmark/turns.json holds, "
                                    "got a JSON dict"),
    ('[{"x": 1}]', "not ConversationBench turn rows (no row has input_text)"),
    ("[" + "9" * 5000 + "]", "a number too long to read"),
])
def test_a_json_file_that_is_no_turn_rows_is_named_as_such(text, said, tmp_path, capsys):
    """Battery 22, N2: any .json (a run.json) was taken for Hub turn rows, and the user sent after --setup."""
    path = tmp_path / "some.json"
    path.write_text(text)
    assert main(["convbench-import", str(path), "--out", str(tmp_path / "data"), "--quiet"]) == 2
    assert f"{path}: {said}" in capsys.readouterr().err and not (tmp_path / "data").exists()


def _with_a_silent_clip(built, tmp_path, config="conversations", column="user_turn_1_audio"):
    """A copy of the shared build whose first row's `column` in `config` holds no sample, renamed by its
    content and named so in the card, as a dataset edited with the toolkit's own conventions would be."""
    import hashlib
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "data"
    shutil.copytree(built, data)
    parquet = next((data / config).glob("*.parquet"))
    table = pq.read_table(parquet)
    index = table.schema.get_field_index(column)
    cells = table.column(index).to_pylist()
    cells[0] = {"bytes": _silent_wav(), "path": cells[0]["path"]}
    pq.write_table(table.set_column(index, table.schema.field(index),
                                    pa.array(cells, type=table.schema.field(index).type)), parquet)
    old = parquet.stem.split("-", 1)[1]
    new = hashlib.sha256(parquet.read_bytes()).hexdigest()[:16]
    parquet.rename(parquet.with_name(f"{parquet.stem.split('-', 1)[0]}-{new}.parquet"))
    for name in ("README.md", "build_info.json"):
        if (data / name).exists():  # an imported dataset has the card only
            (data / name).write_text((data / name).read_text().replace(old, new))
    return data


def test_publishing_a_dataset_with_a_clip_a_run_refuses_is_refused_naming_it(built, tmp_path, capsys):
    """Battery 20 Q2 / battery 22 #29, #43: a dataset with a 0-sample clip (which `run` and `export` refuse)
    passed publish-dataset's and publish-space's pre-upload check ("checked readable before upload")."""
    data = _with_a_silent_clip(built, tmp_path)
    assert main(["publish-dataset", str(data), "--repo", "me/ds", "--dry-run", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "1 clip(s) a run would refuse: " in err and "column 'user_turn_1_audio': no audio (0 samples)" in err, err
    assert "nothing was uploaded" in err
    assert main(["publish-space", "--repo", "me/sp", "--data", str(data), "--dry-run", "--quiet",
                 "--staging-dir", str(tmp_path / "stage")]) == 2
    assert "column 'user_turn_1_audio': no audio (0 samples)" in capsys.readouterr().err
    assert main(["publish-dataset", str(built), "--repo", "me/ds", "--dry-run", "--quiet"]) == 0


def test_a_metric_named_twice_is_refused(tmp_path, capsys):
    """Battery 22 nit: `publish-metrics … apt apt` staged and listed me/apt twice."""
    assert main(["publish-metrics", "--namespace", "me", "--dry-run", "apt", "fir", "apt",
                 "--staging-dir", str(tmp_path / "stage")]) == 2
    assert "metric(s) named twice: apt; name each once" in capsys.readouterr().err
    assert not (tmp_path / "stage").exists()


def test_what_a_stopped_turns_or_barge_in_says_it_kept_is_what_it_kept(tmp_path):
    """Battery 22 nits: `turns` stopped before its first recording said "what was written is kept"; barge-in
    said "goes on from there" where a conversation stopped midway is played again from its start."""
    import argparse

    from ihbench.cli import build_parser
    from ihbench.cli.turns import _stopped

    out = tmp_path / "turns"
    args = argparse.Namespace(out=str(out))
    assert _stopped(args).startswith("no recording was finished")
    (out / "call-1").mkdir(parents=True)
    (out / "call-1" / "events.json").write_text("{}")
    assert _stopped(args).startswith("the 1 recording(s) analysed are kept")
    parsed = build_parser().parse_args(["barge-in", "--data", "d", "--model", "openai", "--model-path", "m",
                                        "--sim-model", "s", "--out", str(tmp_path / "b")])
    assert "(those stopped midway from their start)" in parsed.stopped


def test_a_full_disk_says_where_it_was_writing_and_what_is_kept(answered_run, tmp_path, capsys, monkeypatch):
    """Battery 23, S3: every ENOSPC was the bare "error: No space left on device", naming no folder and not
    what was kept. (The full disk is a STAND-IN: the judge's writer raises the system's error.)"""
    import errno

    import ihbench.judge as judge

    async def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(judge, "judge_run", full)
    assert main(["judge", str(answered_run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1",
                 "--cache", str(tmp_path / "c.sqlite"), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ihbench judge: error: No space left on device (writing in {answered_run}); free some space: whole records "
        "written so far are kept, and the same command goes on from them")


def test_a_full_disk_before_a_new_runs_first_record_does_not_say_records_are_kept(tmp_path, capsys, monkeypatch):
    """Battery 24 nit (try 2): `run --out NEW` on a full disk said "whole records written so far are kept" while
    the new run's folder had been removed. (The full disk is a STAND-IN: the runner raises the system's error.)"""
    import errno

    import ihbench.runner as runner

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(runner, "run", full)
    out, data = tmp_path / "new-run", write_official_layout(tmp_path / "official")
    capsys.readouterr()
    assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                 str(data), "--out", str(out), "--quiet"]) == 2
    assert not out.exists()
    assert capsys.readouterr().err.strip() == (
        f"ihbench run: error: No space left on device (writing in {out}); free some space: the same command starts "
        "again")


def test_publishing_checks_the_clips_of_the_long_layout_too(built, tmp_path, capsys):
    """Battery 23, S7: the pre-upload check decoded the conversations config's clips only; a clip that
    `run --config interruptions` refuses was published."""
    data = _with_a_silent_clip(built, tmp_path, "interruptions", "interruption_audio")
    assert main(["publish-dataset", str(data), "--repo", "me/ds", "--dry-run", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "[interruptions]: row 0" in err and "column 'interruption_audio': no audio (0 samples)" in err, err


def test_a_name_typed_into_the_space_is_bounded(built, monkeypatch, tmp_path):
    """Battery 23, S6 (P2): a 3 MB judge or model name from a Space visitor was written into every record of
    the run (15-21 MB per call) and sent with every request to the owner's endpoint."""
    from ihbench import ui

    monkeypatch.setenv("IHBENCH_DATA", str(built))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path / "runs"))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    with pytest.raises(ui.UserError, match="the judge model is 3,000,000 characters long; at most 256"):
        ui.judge_run_dir(str(tmp_path / "run"), "http://127.0.0.1:9/v1", "y" * 3_000_000)
    with pytest.raises(ui.UserError, match="the model name is 300 characters long; at most 256"):
        list(ui.evaluate_stream("openai", "p" * 300, None, None, 2, 1, 16, "http://127.0.0.1:9/v1"))
    with pytest.raises(ui.UserError, match="holds a line break"):
        ui.visitor_model("owner/name\nx")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_read_only_library_cache_is_no_reason_to_refuse_a_command(built, monkeypatch, capsys):
    """The check of battery 22's N4 first asked every cache folder to take a new entry, the libraries' too: a
    shared read-only HF_HUB_CACHE (models downloaded once for a cluster) refused every command. Only a
    cache the command writes is asked. (/proc stands in for a folder that takes no new entry.)"""
    monkeypatch.setenv("HF_HUB_CACHE", "/proc")
    assert main(["info", str(built)]) == 0
    assert "HF_HUB_CACHE" not in capsys.readouterr().err


def test_judge_and_report_say_a_conversation_stopped_on_the_datas_clip_fails_again(tmp_path, capsys):
    """Battery 24, T1: after a ConversationBench run stopped on a damaged clip of the dataset, judge and report
    still advised running it again, which fails the same way."""
    from convbench_layout import write_benchmark_folder

    from ihbench.dataset.convbench import import_convbench

    source = tmp_path / "imported"
    import_convbench(write_benchmark_folder(tmp_path / "repo"), source, progress=False)
    data = _with_a_silent_clip(source, tmp_path, "bike_bench", "audio")
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--config", "bike_bench", "--only-turns", "0,1", "--epochs", "1", "--out",
                     str(tmp_path / "run"), "--quiet"]) == 1
    said = capsys.readouterr()
    assert "note: 1 of them: they stopped on a turn whose audio in the dataset is damaged or silent" in said.out, said
    # battery 25 nit: the run's last line, too, no longer says a plain rerun tries them again
    assert said.err.strip().endswith("nothing failed is counted, and the same command tries them again once the "
                                     "dataset is mended"), said.err
    with OpenAITestServer() as judge:
        main(["judge", str(tmp_path / "run"), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
              str(tmp_path / "c.sqlite"), "--quiet"])
    said = capsys.readouterr().out
    assert "1 conversation(s) stopped on a failed turn and are not judged; they stopped on a turn whose audio" in said
    assert "plays them again" not in said
    main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep"), "--quiet"])
    said = "".join(capsys.readouterr())
    assert "1 stopped on a failed turn in the run; they stopped on a turn whose audio" in said, said


@pytest.mark.parametrize("linked", ["data/knowledge_base.txt", "audio/turn_001.wav"])
def test_a_link_out_of_a_benchmark_folder_is_refused(linked, tmp_path, capsys):
    """Battery 24, T6 (P2): a file of a ConversationBench folder linked to one outside it was followed: a token
    linked as the knowledge base landed in the dataset, and publish-dataset would have uploaded it."""
    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "repo")
    outside = tmp_path / "secret.txt"
    outside.write_bytes((folder / linked).read_bytes())
    (folder / linked).unlink()
    (folder / linked).symlink_to(outside)
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "data"), "--quiet"]) == 2
    assert f"{folder / linked}: a link to {outside}, outside {folder}" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()


def test_an_import_sweeps_what_a_killed_writer_left_half_written_in_the_dataset(tmp_path, capsys):
    """Battery 24 nit (try 12): after kill -9 of convbench-import, its hidden `.README.md.PID.tmp` and
    `CONFIG/.test.parquet.PID.tmp` stayed inside the dataset for good; the next writer of the folder (it holds
    the folder's lock, so nobody else is writing them) removes them. A user's own hidden file stays."""
    from convbench_layout import write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "repo")
    data = tmp_path / "data"
    assert main(["convbench-import", str(folder), "--out", str(data), "--quiet"]) == 0
    left = [data / ".README.md.22776.tmp", data / "bike_bench_setup" / ".test.parquet.22749.tmp"]
    for path in left:
        path.write_bytes(b"half a file")
    (data / ".notes").write_text("mine")
    assert main(["convbench-import", str(folder), "--out", str(data), "--quiet"]) == 0
    assert not any(path.exists() for path in left)
    assert (data / ".notes").read_text() == "mine"
    assert sorted(p.name for p in data.rglob(".*")) == [".notes"]


def test_a_config_folder_the_card_does_not_list_is_said_to_be_an_unfinished_import(tmp_path, capsys):
    """Battery 24 nit (try 13): `sid --config sid_en` on a dataset holding sid_en/ from a killed sid-import
    (its card not yet written) printed datasets' raw "BuilderConfig 'sid_en' not found"."""
    import shutil

    data = write_official_layout(tmp_path / "official")
    (data / "sid_en").mkdir()
    shutil.copy(next(data.glob("*/*.parquet")), data / "sid_en" / "test-9a2db5bd8fd69be7.parquet")
    assert main(["sid", "--data", str(data), "--config", "sid_en", "--detector", "energy", "--out",
                 str(tmp_path / "sid"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert (f"{data / 'sid_en'}: holds Parquet files of config 'sid_en', which README.md does not list: an import "
            "into this dataset that did not finish (killed); run the same `ihbench sid-import`") in err, err
    assert "BuilderConfig" not in err and not (tmp_path / "sid").exists()
    # battery 26 V5: `run --config` on it says the same, not "no config 'sid_en'; available: ..."
    assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                 str(data), "--config", "sid_en", "--out", str(tmp_path / "r"), "--quiet"]) == 2
    assert "an import into this dataset that did not finish (killed)" in capsys.readouterr().err
