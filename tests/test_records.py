"""The run directory's typed records: every folder an earlier version wrote still reads, a
damaged line is refused with its reason, and a field a newer writer adds survives a round trip.

tests/fixtures/run-format-3 was written by `ihbench run` + `ihbench judge` of this version (the
official-layout fixture, the local test server as model and judge), run-format-2 by the version
before (judgments without response_hash); run-format-1 holds the same records as the writers
before record stamps wrote them (no format_version, no item_hash, optional keys only when set).
None may be regenerated: they are what users' folders look like.
"""
import json
import shutil

import pytest

from conftest import FIXTURES
from ihbench.records import RECORD_FORMAT, JudgmentRecord, RecordError, ResponseRecord, RunInfo
from ihbench.rundir import RunDir, RunDirError, read_judgments


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_folder_written_by_an_earlier_version_reads_as_typed_records(version, tmp_path):
    folder = shutil.copytree(FIXTURES / f"run-format-{version}", tmp_path / "run")
    run = RunDir(folder)
    responses = run.responses()
    judgments = run.judgments()
    assert [r.key for r in responses] == [("conv-a/2", 0), ("conv-b/1", 0), ("conv-b/4", 0)]
    assert all(r.format_version == version and r.response.startswith("heard ") and r.error is None
               for r in responses)
    assert all((r.item_hash is not None) == (version >= 2) for r in responses + judgments)
    assert all((j.response_hash is not None) == (version >= 3) for j in judgments)
    assert len(run.judgments(responses=responses)) == 6  # each judges the answer that is there
    assert len(judgments) == 6 and all(j.judged and j.settled and j.judge_model == "judge-x" for j in judgments)
    rq = [j for j in judgments if j.axis == "rq"]
    assert all(j.verdict == "fail" and j.criteria == [False, True] for j in rq)
    assert {j.order for j in judgments if j.axis == "tf"} <= {"model_first", "baseline_first"}
    info = run.info()
    assert info.n_items == 3 and info.loader == "openai" and info.format_version == (1 if version == 1 else 2)


def test_format_3_records_round_trip_and_todays_writers_write_format_5():
    for line in (FIXTURES / "run-format-3" / "responses.jsonl").read_text().splitlines():
        assert ResponseRecord.from_json(json.loads(line)).to_json() == json.loads(line)
    for line in (FIXTURES / "run-format-3" / "judgments.jsonl").read_text().splitlines():
        assert JudgmentRecord.from_json(json.loads(line)).to_json() == json.loads(line)
    assert RECORD_FORMAT == 5
    line = {"id": "a/1", "epoch": 0, "response": "hi", "error": None, "audio_turns": 2, "format_version": 4}
    assert ResponseRecord.from_json(line).to_json()["audio_turns"] == 2
    written = ResponseRecord.from_json({**line, "format_version": 5, "check": ResponseRecord.from_json(line).digest})
    assert written.to_json()["check"] == written.digest  # format 5: a check of what it holds
    with pytest.raises(RecordError, match="missing field 'check'"):  # a format-5 line that lost it was edited
        ResponseRecord.from_json({**line, "format_version": 5})
    with pytest.raises(RecordError, match="audio_turns"):
        ResponseRecord.from_json({**line, "audio_turns": -1})


def test_a_field_a_newer_writer_adds_is_kept():
    data = {"id": "a/1", "epoch": 0, "response": "hi", "error": None, "format_version": 3, "audio_out": "x.wav"}
    record = ResponseRecord.from_json(data)
    assert record.extra == {"audio_out": "x.wav"} and record.to_json()["audio_out"] == "x.wav"


@pytest.mark.parametrize("data, reason", [
    ({"epoch": 0, "response": "x", "error": None}, "missing field 'id'"),
    ({"id": "a/1", "epoch": True, "response": "x", "error": None}, "field 'epoch' must be int"),
    ({"id": "a/1", "epoch": -1, "response": "x", "error": None}, "'epoch' must be >= 0"),
    ({"id": "a/1", "epoch": 0, "response": None, "error": None}, "neither a response nor an error"),
    ({"id": "a/1", "epoch": 0, "response": 3, "error": None}, "field 'response' has the wrong type"),
])
def test_a_damaged_response_line_is_refused_with_its_reason(data, reason):
    with pytest.raises(RecordError, match=reason):
        ResponseRecord.from_json(data)


def test_a_damaged_judgment_is_reported_with_file_and_line_and_left_out(tmp_path, caplog):
    base = {"id": "a/1", "epoch": 0, "judge_model": "j", "outcome": "judged"}
    lines = [{**base, "axis": "tf", "verdict": "model"},
             {**base, "axis": "rq", "verdict": "pass", "criteria": [True, False]},
             {**base, "axis": "xx"}]
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level("WARNING", logger="ihbench"):
        kept = read_judgments(path)
    assert [j.axis for j in kept] == ["tf"]
    assert f"{path} line 2: verdict and criteria disagree" in caplog.text
    assert f"{path} line 3: field 'axis' must be tf or rq" in caplog.text


def test_run_json_round_trips_and_names_what_is_wrong(tmp_path):
    data = json.loads((FIXTURES / "run-format-3" / "run.json").read_text())
    assert RunInfo.from_json(data).to_json() == data
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({**data, "seed": "zero"}))
    with pytest.raises(RunDirError, match=r"run.json: field 'seed' has the wrong type"):
        RunDir(folder).info()
    (folder / "run.json").write_text(json.dumps({"loader": "openai"}))
    with pytest.raises(RunDirError, match=r"run.json: not a run description \(no 'data' field\)"):
        RunDir(folder).info()


def test_a_run_json_of_todays_format_with_no_modality_is_refused():
    """Battery 35, E5: run.json's modality edited to null was accepted by judge and report, which then
    published the run as modality None (and an IHBench text run's history-audio column as if heard)."""
    from ihbench.records import RUN_INFO_FORMAT

    data = json.loads((FIXTURES / "run-format-3" / "run.json").read_text())
    today = {**RunInfo.from_json(data).to_json(), "format_version": RUN_INFO_FORMAT}
    assert RunInfo.from_json(today).modality in ("audio", "text")
    with pytest.raises(RecordError, match=r"field 'modality' is null; the run always writes audio or text"):
        RunInfo.from_json({**today, "modality": None})


@pytest.mark.parametrize("version", [None, 1, 2])
def test_a_run_json_of_any_format_with_no_modality_is_refused(version):
    """Battery 36, F1: with format_version edited to 1 (or removed) beside modality null, judge and report
    scored the run under the label "m (None)". Every runner since the first has written the modality, so
    no format lacks it; a format_version below 1 is an edit too."""
    from ihbench.records import RUN_INFO_FORMAT

    data = json.loads((FIXTURES / "run-format-1" / "run.json").read_text())
    data = {k: v for k, v in data.items() if k != "format_version"}
    if version is not None:
        data["format_version"] = version
    assert RunInfo.from_json(data).modality in ("audio", "text")
    with pytest.raises(RecordError, match=r"field 'modality' is null; the run always writes audio or text"):
        RunInfo.from_json({**data, "modality": None})
    with pytest.raises(RecordError, match=r"field 'modality' is missing; the run always writes it"):
        RunInfo.from_json({k: v for k, v in data.items() if k != "modality"})
    for low in (0, -7):
        with pytest.raises(RecordError, match=rf"field 'format_version' must be from 1 to {RUN_INFO_FORMAT}, got {low} \(edited"):
            RunInfo.from_json({**data, "format_version": low})


@pytest.mark.parametrize("name", ["loader", "model_path", "config", "split"])
@pytest.mark.parametrize("value", ["", "  "])
def test_a_run_json_name_edited_to_nothing_is_refused(name, value):
    """Battery 35/36 nit: an IHBench run.json whose config was edited to '' was judged and reported as
    if it named the default config. The command line writes a name or null in each of these fields."""
    data = json.loads((FIXTURES / "run-format-3" / "run.json").read_text())
    with pytest.raises(RecordError, match=rf"field '{name}' is '{value}'; the run writes a name there \(edited by"):
        RunInfo.from_json({**data, name: value})


def test_a_format_version_edited_to_null_is_refused_in_every_record_kind(tmp_path):
    """Battery 43 nit: run.json `"format_version": null` was read as a run of format 1, checked by that
    format's rules (no field is required), and judged; absent (written before the field) is still read."""
    run = json.loads((FIXTURES / "run-format-3" / "run.json").read_text())
    response = {"id": "a/1", "epoch": 0, "response": "hi", "error": None, "format_version": 3}
    judgment = {"id": "a/1", "epoch": 0, "judge_model": "j", "outcome": "judged", "axis": "tf", "verdict": "model",
                "format_version": 3}
    for kind, data in ((RunInfo, run), (ResponseRecord, response), (JudgmentRecord, judgment)):
        assert kind.from_json({k: v for k, v in data.items() if k != "format_version"})
        with pytest.raises(RecordError, match=r"field 'format_version' is null; ihbench writes a number there"):
            kind.from_json({**data, "format_version": None})
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({**run, "format_version": None}))
    with pytest.raises(RunDirError, match=r"run.json: field 'format_version' is null"):
        RunDir(folder).info()


@pytest.mark.parametrize("field, value, said", [
    ("epochs", 10 ** 30, "field 'epochs': expected a whole number from 1 to 1000"),
    ("epochs", None, "field 'epochs' is null; the run always writes how many"),
    ("history_audio", "last:0", "field 'history_audio' must be auto or last:K with K >= 1, got \"last:0\""),
    ("history_audio", 3, "field 'history_audio' must be auto or last:K with K >= 1, got 3"),
    ("history_audio", "all", "field 'history_audio' must be auto or last:K with K >= 1, got \"all\""),
    ("types", [], "field 'types' is []; the run writes the types it chose, or null for all"),
    ("endpoint", 5, "field 'endpoint' must be a server's address or a list of them, got 5"),
    ("loader_options", "x", "field 'loader_options' must be an object, got \"x\""),
    ("model", None, "field 'model' is null; the run always writes the loader's description"),
])
def test_run_json_settings_the_command_line_cannot_write_are_refused(field, value, said):
    """Battery 45, R8: judge and report read these without a word (planning "40 of 2e31", labelling the run
    by them); `ihbench run` checks the same values with its options' own types."""
    from ihbench.records import RUN_INFO_FORMAT

    data = json.loads((FIXTURES / "run-format-3" / "run.json").read_text())
    today = {**RunInfo.from_json(data).to_json(), "format_version": RUN_INFO_FORMAT}
    assert RunInfo.from_json(today)
    with pytest.raises(RecordError) as refused:
        RunInfo.from_json({**today, field: value})
    assert said in str(refused.value) and str(refused.value).endswith("(edited by hand?)"), refused.value
