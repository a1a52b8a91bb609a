"""Nothing lost, nothing doubled: the faults and misuse of issue 11, one test per promise."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from official_layout import write_official_layout
from openai_test_server import OpenAITestServer, SilentServer

from ihbench.dataset.io import read_records
from ihbench.runner import RunConfigError, RunSpec, run

CLI = [sys.executable, "-m", "ihbench.cli"]


@pytest.fixture
def official(tmp_path):
    return write_official_layout(tmp_path / "official")


def _run_command(data, out, url, epochs=3):
    return [*CLI, "run", "--model", "openai", "--model-path", "test-model", "--data", str(data), "--epochs", str(epochs),
            "--out", str(out), "--base-url", url, "--concurrency", "1", "--quiet", "--option", "max_retries=0"]


def _wait_for_lines(path, n, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline and (not path.exists() or path.read_text().count("\n") < n):
        time.sleep(0.05)


# --- 1. a rebuild keeps what it did not write ---------------------------------------------------

def test_a_rebuild_keeps_imported_configs_and_user_files(built, subset, tts_cache, tmp_path):
    import datasets
    from ihbench.dataset.build import build
    from ihbench.dataset.sid import update_readme_configs

    out = tmp_path / "data"
    shutil.copytree(built, out)
    (out / "sid_en").mkdir()
    datasets.Dataset.from_dict({"audio_file": ["a.wav"], "total_nonbreak": [True], "break_time": [1.0],
                                "duration": [1.0]}).to_parquet(out / "sid_en" / "test-00000-of-00001.parquet")
    update_readme_configs(out / "README.md", ["sid_en"])  # exactly what `ihbench sid-import` does
    (out / "my-notes.txt").write_text("mine")
    result = build(out, subset, cache_dir=tts_cache, progress=False, convbench=[], sid=False)
    assert (out / "my-notes.txt").read_text() == "mine"
    assert "sid_en" in (out / "README.md").read_text() and any("kept" in note for note in result.notes)
    assert datasets.load_dataset(str(out), "sid_en", split="test")["audio_file"] == ["a.wav"]
    assert len(datasets.load_dataset(str(out), "interruptions", split="dev")) > 0
    info = json.loads((out / "build_info.json").read_text())
    assert info["kept"] == ["my-notes.txt", "sid_en"] and "sid_dev_en" not in info["configs"]  # --no-sid this time
    build(out, subset, cache_dir=tts_cache, progress=False, convbench=[], sid=False)  # and again: still kept
    assert (out / "my-notes.txt").exists() and (out / "sid_en").is_dir()


def test_stale_work_folders_of_killed_builds_are_removed(built, subset, tts_cache, tmp_path):
    from ihbench.dataset.build import build

    out = tmp_path / "data"
    shutil.copytree(built, out)
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid now belongs to nobody: a killed build's leftover
    alive = subprocess.Popen(["sleep", "60"])  # a build still running elsewhere: not ours to delete
    try:
        stale, running = tmp_path / f".data.building-{gone.pid}", tmp_path / f".data.building-{alive.pid}"
        for folder in (stale, running):
            (folder / "conversations").mkdir(parents=True)
            (folder / "conversations" / "big.parquet").write_bytes(b"x" * 1000)
        build(out, subset, cache_dir=tts_cache, progress=False, convbench=[], sid=False)
        assert not stale.exists() and running.exists()
    finally:
        alive.kill()


# --- 2. one writer per run directory and per judgments file ---------------------------------------

@pytest.mark.slow  # more than 10 s: two `ihbench run` processes against a slow server
def test_a_second_run_on_the_same_directory_fails_at_once_and_nothing_doubles(official, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer(delay=0.2) as slow:
        first = subprocess.Popen(_run_command(official, out, slow.base_url), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        _wait_for_lines(out / "responses.jsonl", 1)
        started = time.time()
        second = subprocess.run(_run_command(official, out, slow.base_url), capture_output=True, text=True)
        assert time.time() - started < 30
        assert second.returncode == 2 and f"pid {first.pid}" in second.stderr and "in use" in second.stderr
        assert first.wait(timeout=120) == 0
    keys = [(r["id"], r["epoch"]) for r in read_records(out / "responses.jsonl")]
    assert len(keys) == len(set(keys)) == 3 * 3


@pytest.mark.slow  # more than 10 s: a run killed, then run again, in fresh processes
def test_a_lock_left_by_a_killed_run_is_taken_over(official, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer(delay=0.2) as slow:
        process = subprocess.Popen(_run_command(official, out, slow.base_url), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        _wait_for_lines(out / "responses.jsonl", 2)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert f"pid {process.pid}" in (out / ".lock").read_text()  # the dead holder's note is still there
        again = subprocess.run(_run_command(official, out, slow.base_url), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    keys = [(r["id"], r["epoch"]) for r in read_records(out / "responses.jsonl")]
    assert len(keys) == len(set(keys)) == 9


@pytest.mark.slow  # more than 10 s: two `ihbench judge` processes against a slow judge
def test_a_second_judge_on_the_same_file_fails_at_once(official, tmp_path):
    from judging import ScriptedJudge

    out = tmp_path / "run"
    with OpenAITestServer() as model:
        run(RunSpec(loader="openai", model_path="m", data=str(official), out=out, epochs=2,
                    loader_options={"base_url": model.base_url}), progress=False)
    judge_answers, answered, second_done = ScriptedJudge(faults=False), [], threading.Event()

    def respond(body):  # the first answer at once, the rest only after the second command has ended
        if answered:
            second_done.wait(120)
        answered.append(body)
        return judge_answers(body)

    with OpenAITestServer(respond=respond) as judge:
        command = [*CLI, "judge", str(out), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                   "--cache", str(tmp_path / "cache.sqlite"), "--concurrency", "1", "--quiet"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_for_lines(out / "judgments.jsonl", 1)
            second = subprocess.run(command, capture_output=True, text=True)
        finally:
            second_done.set()
        assert second.returncode == 2 and "judgments file" in second.stderr and f"pid {first.pid}" in second.stderr
        assert first.wait(timeout=120) == 0
    keys = [(r["id"], r["epoch"], r["axis"]) for r in read_records(out / "judgments.jsonl")]
    assert len(keys) == len(set(keys)) == 3 * 2 * 2


# --- 3. model folders are checked before anything loads ---------------------------------------------

def test_a_model_folder_without_config_fails_at_once_naming_the_file(tmp_path):
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "data")  # a dataset that passes --data's check, which comes first
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.safetensors").write_bytes(b"\0" * 16)
    started = time.time()
    result = subprocess.run([*CLI, "run", "--model", "qwen2-audio", "--model-path", str(tmp_path / "model"), "--data",
                             str(data), "--out", str(tmp_path / "run")], capture_output=True, text=True)
    assert result.returncode == 2 and "no config.json" in result.stderr and "Traceback" not in result.stderr
    assert time.time() - started < 60 and not (tmp_path / "run").exists()


def test_a_truncated_weights_file_is_named(tmp_path):
    from ihbench.loaders import ModelFolderError, resolve_model_path
    from ihbench.loaders.tiny import make_tiny_model

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    weights = next(model.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(ModelFolderError, match=rf"{weights.name}: truncated"):
        resolve_model_path(str(model))


# --- 4. records of the wrong shape are never trusted -------------------------------------------------

def test_a_response_record_of_the_wrong_shape_is_reported_and_redone(official, tmp_path, caplog):
    out = tmp_path / "run"
    with OpenAITestServer() as server:
        spec = RunSpec(loader="openai", model_path="m", data=str(official), out=out, epochs=1,
                       loader_options={"base_url": server.base_url})
        run(spec, progress=False)
        lines = (out / "responses.jsonl").read_text().splitlines()
        broken = json.loads(lines[1])
        broken["epoch"] = "zero"
        lines[1] = json.dumps(broken)
        (out / "responses.jsonl").write_text("\n".join(lines) + "\n")
        with caplog.at_level("WARNING", logger="ihbench"):
            summary = run(spec, progress=False)
    assert summary.written == 1 and "responses.jsonl line 2: field 'epoch' has the wrong type" in caplog.text
    good = read_records(out / "responses.jsonl", check=lambda r: None if isinstance(r["epoch"], int) else "bad")
    assert sorted((r["id"], r["epoch"]) for r in good) == sorted({(r["id"], r["epoch"]) for r in good})


# --- 6. misuse ends in one clear line, state intact ----------------------------------------------------

def test_out_naming_a_file_and_an_unknown_loader_option_are_one_line(official, tmp_path):
    (tmp_path / "file").write_text("x")
    with OpenAITestServer() as server:
        as_file = subprocess.run(_run_command(official, tmp_path / "file", server.base_url), capture_output=True,
                                 text=True)
        option = subprocess.run(_run_command(official, tmp_path / "run", server.base_url) + ["--option", "api_key=s3"],
                                capture_output=True, text=True)
    assert as_file.returncode == 2 and "argument --out: expected a folder, got" in as_file.stderr  # when parsed
    assert option.returncode == 2 and "--option api_key: not an option of the openai loader" in option.stderr
    assert "s3" not in option.stderr and "Traceback" not in option.stderr + as_file.stderr
    assert not (tmp_path / "run").exists() and (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("code_name, text", [("ENOSPC", "No space left on device"), ("EROFS", "Read-only file system"),
                                             ("EACCES", "Permission denied")])
def test_a_disk_fault_during_a_build_is_one_line_and_the_previous_build_survives(built, tmp_path, monkeypatch, capsys,
                                                                                 code_name, text):
    """The fault is injected where the build writes (tests run as root, which ignores permissions)."""
    import errno

    import ihbench.dataset.build as builder

    from ihbench.cli import main

    out = tmp_path / "data"
    shutil.copytree(built, out)
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))

    def fault(*args, **kwargs):
        raise OSError(getattr(errno, code_name), text, str(tmp_path / ".data.building-1" / "x.parquet"))

    monkeypatch.setattr(builder, "_write", fault)
    code = main(["build", "--out", str(out), "--no-sid", "--no-convbench", "--quiet", "--sources", *map(str, _sources(built))])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and text in err and "x.parquet" in err
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert not list(tmp_path.glob(".data.building-*"))


def _sources(built):
    from ihbench.dataset.sources import source_files

    ids = set(json.loads((built / "build_info.json").read_text())["conversations"])
    return [p for p in source_files() if p.stem in ids]


# --- 7. a report that mixes datasets says so -----------------------------------------------------------

def test_a_report_over_different_data_warns_labels_and_refuses_the_tost(official, tmp_path, caplog):
    from ihbench.report import summarize
    from ihbench.report.render import render_markdown

    import pyarrow as pa
    import pyarrow.parquet as pq

    other = tmp_path / "other"
    shutil.copytree(official, other)
    parquet = other / "conversations" / "test-00000-of-00001.parquet"  # an edited copy: one rubric reworded
    table = pq.read_table(parquet)
    column = table.schema.get_field_index("turn_2_tf_rubric")
    rubrics = table.column(column).to_pylist()
    rubrics[0] = (rubrics[0] or "") + " (reworded)"
    pq.write_table(table.set_column(column, "turn_2_tf_rubric", pa.array(rubrics, type=pa.string())), parquet)
    runs = []
    with OpenAITestServer() as server:
        for data, modality in ((official, "audio"), (other, "text")):
            out = tmp_path / f"run-{modality}"
            run(RunSpec(loader="openai", model_path="m", data=str(data), out=out, epochs=1, modality=modality,
                        loader_options={"base_url": server.base_url}), progress=False)
            runs.append(out)
    fingerprint = json.loads((runs[1] / "run.json").read_text())["data_fingerprint"]
    with caplog.at_level("WARNING", logger="ihbench"):
        report = summarize(runs, n_bootstrap=50)
    assert report.mixed_data and "different data" in caplog.text
    assert report.modality_tost == [] and "no audio-vs-text TOST" in report.refused[0]
    markdown = render_markdown(report.to_json(), {})
    assert "**Warning:**" in markdown and f"@{fingerprint[:6]}" in markdown


# --- 8. a changed endpoint is part of the run's identity -------------------------------------------------

def test_resuming_with_another_base_url_is_refused_unless_allowed(official, tmp_path):
    out = tmp_path / "run"
    with OpenAITestServer() as first, OpenAITestServer() as second:
        run(RunSpec(loader="openai", model_path="m", data=str(official), out=out, epochs=1,
                    loader_options={"base_url": first.base_url}), progress=False)
        assert json.loads((out / "run.json").read_text())["endpoint"] == first.base_url
        moved = RunSpec(loader="openai", model_path="m", data=str(official), out=out, epochs=2,
                        loader_options={"base_url": second.base_url})
        with pytest.raises(RunConfigError, match="endpoint .*--allow-endpoint-change"):
            run(moved, progress=False)
        moved.allow_endpoint_change = True
        summary = run(moved, progress=False)
    assert summary.written == 3 and len(second.requests) == 3


def test_sigterm_stops_a_run_as_ctrl_c_does_leaving_no_lock_and_no_cache_side_files(tmp_path):
    """Battery 6, finding 4: `kill` (SIGTERM: `timeout`, a CI cancel) left the run folder's .lock and the
    cache's -wal/-shm; it now unwinds as Ctrl-C does, says so in one line and exits 143; the records
    written stay, and the same command goes on from there."""
    import signal

    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    data = write_official_layout(tmp_path / "data")
    out = tmp_path / "run"
    with OpenAITestServer(delay=0.5) as server:
        process = subprocess.Popen([*CLI, "run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url,
                                    "--data", str(data), "--out", str(out), "--epochs", "3", "--concurrency", "1",
                                    "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while time.time() < deadline and not ((out / "responses.jsonl").exists()
                                              and (out / "responses.jsonl").read_text().count("\n") >= 1):
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr
    assert stderr.strip().endswith("ihbench run: stopped (SIGTERM); anything it wrote is kept, and the same command "
                                   "goes on from there") and "Traceback" not in stderr
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    assert (out / "responses.jsonl").read_text().count("\n") >= 1


def test_answers_received_beside_a_request_that_hangs_are_kept_when_the_run_is_stopped(tmp_path):
    """Battery 54, A13: with one request of a batch stuck, the answers already received were written only once the
    whole batch was done, and SIGTERM then lost them (the run folder held only run.json). Each is written as it
    arrives. The TEST DOUBLE server answers at once, except the second request it gets, which it holds 600 s."""
    from openai_test_server import Reply

    data = write_official_layout(tmp_path / "data")
    out = tmp_path / "run"
    asked = []

    def respond(body):
        asked.append(body)
        return Reply(delay=600 if len(asked) == 2 else 0)

    with OpenAITestServer(respond=respond) as server:
        process = subprocess.Popen([*CLI, "run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url,
                                    "--data", str(data), "--out", str(out), "--epochs", "2", "--concurrency", "4",
                                    "--option", "timeout=600", "--option", "max_retries=0", "--quiet"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for_lines(out / "responses.jsonl", 3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["response"] for r in records), records


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_ctrl_c_stops_a_run_whose_server_never_answers(concurrency, tmp_path):
    """Battery 45, R6: against a server that accepts and never answers, Ctrl-C was held until every request in
    flight had spent its timeout and its retries (121 s with timeout=30; with the default, still running five
    minutes on, a second Ctrl-C doing nothing): the interpreter waited for the worker threads at exit. Here each
    request would wait 600 s; the run stops at once, what it wrote kept."""
    data = write_official_layout(tmp_path / "data")
    out = tmp_path / "run"
    with SilentServer() as server:
        # a command started in the background by a shell without job control (CI's) ignores SIGINT, and so
        # would this child: Ctrl-C's default action is given back to it
        process = subprocess.Popen([*CLI, "run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url,
                                    "--data", str(data), "--out", str(out), "--concurrency", concurrency,
                                    "--option", "timeout=600", "--quiet"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + 120
        while time.time() < deadline and server.connections < min(int(concurrency), 3):  # the requests in flight
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("the run went on waiting for its server after Ctrl-C")
    assert process.returncode == 130, stderr
    assert stderr.strip().endswith("ihbench run: stopped (Ctrl-C); anything it wrote is kept, and the same command "
                                   "goes on from there") and "Traceback" not in stderr, stderr
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
