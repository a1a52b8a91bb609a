"""The four kinds of summary.json as types: every file today's commands write reads back as its
type and is written again unchanged; an SID summary from before `kind` existed still reads; a
damaged one is refused naming the file and the field; readers tell run kinds apart by `kind`.

tests/fixtures/summaries/ was written by the commands of the version before these types, with
relative paths: `sid/` by `ihbench sid --detector energy` on the four clips of test_report_cross's
SID-Bench folder, `turns/` by `ihbench turns --model-name alpha` on a 14 s synthetic call (flite
voices, one barge-in), `report/` by `ihbench report` of one run over the official-layout fixture
(the local test server as model, judged by test_report_cross's script), `cross/` by `ihbench report`
over those and a scored prediction file; `sid-format-1/` is that scored prediction file's summary
as versions before the kind field wrote it. None may be regenerated: they are what users' folders
look like.
"""
import json
import re
import shutil

import pytest
from conftest import FIXTURES

from ihbench.summaries import (
    SUMMARY_FORMAT,
    CrossSummary,
    ReportSummary,
    SidSummary,
    SummaryError,
    SummaryFileError,
    TurnsSummary,
    UnknownSummaryKind,
    read_summary,
)

SUMMARIES = FIXTURES / "summaries"
TYPES = {"sid": SidSummary, "sid-format-1": SidSummary, "turns": TurnsSummary, "report": ReportSummary,
         "cross": CrossSummary}


def _written(summary) -> str:
    """What the commands write: `write_json_atomic`'s layout."""
    return json.dumps(summary.to_json(), indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("folder", ["sid", "turns", "report", "cross"])
def test_todays_summaries_read_as_their_type_and_are_written_back_unchanged(folder):
    path = SUMMARIES / folder / "summary.json"
    summary = read_summary(path)
    assert type(summary) is TYPES[folder] and summary.format_version == SUMMARY_FORMAT == 1
    assert summary.extra == {} and _written(summary) == path.read_text(encoding="utf-8")


def test_what_the_readers_read_is_typed():
    sid = read_summary(SUMMARIES / "sid" / "summary.json")
    assert sid.model_label == "energy" and sid.n_clips == 4 and sid.config == "sid_en"
    assert sid.scores["notebook"].fir == 0.5 and sid.scores["readme"].hits_within_tolerance == 2
    turns = read_summary(SUMMARIES / "turns" / "summary.json")
    assert turns.model_label == "alpha" and turns.recordings == 1 and turns.agreement is None
    assert turns.timing.response_latency_s.n == 2 and turns.timing.stop_latency_s.ci_low is None
    assert turns.timing.turn_over_rate.value == 1.0
    report = read_summary(SUMMARIES / "report" / "summary.json")
    assert [run["model"] for run in report.runs] == ["alpha"] and report.mixed_data is None
    cross = read_summary(SUMMARIES / "cross" / "summary.json")
    assert isinstance(cross.ihbench, ReportSummary) and cross.ihbench.runs == report.runs
    assert [m["model"] for m in cross.models] == ["alpha", "energy"] and cross.sid_definition == "notebook"


def test_an_sid_summary_from_before_kind_reads_as_version_1():
    path = SUMMARIES / "sid-format-1" / "summary.json"
    assert "kind" not in json.loads(path.read_text())
    summary = read_summary(path)
    assert isinstance(summary, SidSummary) and summary.format_version == 1
    assert summary.model_label is None  # a scored prediction file records no model
    assert summary.detector == {"predictions_file": "predictions.jsonl"} and summary.scores["notebook"].fir == 0.25
    assert summary.to_json() == {"kind": "sid", "format_version": 1, **json.loads(path.read_text())}


def test_a_report_from_before_kind_reads_as_an_ihbench_report(tmp_path):
    """What the Space's leaderboard found in runs folders before reports named their kind."""
    path = tmp_path / "summary.json"
    old = json.loads((SUMMARIES / "report" / "summary.json").read_text())
    del old["kind"], old["format_version"]
    path.write_text(json.dumps(old))
    summary = read_summary(path)
    assert isinstance(summary, ReportSummary) and summary.format_version == 1 and summary.runs == old["runs"]


def _damaged(tmp_path, folder, change):
    """A copy of a fixture with `change` made to its JSON."""
    data = json.loads((SUMMARIES / folder / "summary.json").read_text())
    change(data)
    path = tmp_path / folder / "summary.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("folder, change, field", [
    ("sid-format-1", lambda d: d["scores"]["readme"].pop("apt"), "scores.readme.apt is missing"),
    ("sid", lambda d: d["scores"].pop("notebook"), "scores.notebook is missing or not an object"),
    ("sid", lambda d: d["scores"]["notebook"].update(n_clips=-1), "scores.notebook.n_clips must be a count or null"),
    ("sid", lambda d: d["detector"].update(detector=3), "detector.detector must be a string, got 3"),
    # battery 10: impossible figures, and a newer writer's format
    ("sid", lambda d: d["scores"]["notebook"].update(fir=7.5), "scores.notebook.fir must be a number from 0 to 1 or "
     "null, got 7.5"),
    ("sid", lambda d: d["scores"]["readme"].update(apt=-3.0), "scores.readme.apt must be a number 0 or more or null, "
     "got -3.0"),
    ("sid", lambda d: d.update(format_version=999), "format_version is 999: written by a newer ihbench"),
    ("turns", lambda d: d["timing"]["turn_over_rate"].update(ci_high=1.5),
     "timing.turn_over_rate.ci_high must be a number from 0 to 1 or null, got 1.5"),
    ("turns", lambda d: d.pop("timing"), "timing is missing or not an object (is this `ihbench turns` output?)"),
    # battery 12, H36: an interval running from high to low
    ("turns", lambda d: d["timing"]["response_latency_s"].update(ci_low=3.0, ci_high=-9.0),
     "timing.response_latency_s.ci_low: 3.0 is above ci_high -9.0; an interval runs from low to high"),
    ("turns", lambda d: d["timing"]["turn_over_rate"].update(value="high"),
     "timing.turn_over_rate.value must be a number or null, got 'high'"),
    ("turns", lambda d: d.update(model_name=7), "model_name must be a string, got 7"),
    ("report", lambda d: d["runs"][0].pop("modality"), "runs[0].modality is missing"),
    ("report", lambda d: d["runs"][0]["tf_win_rate"].update(tf_win_rate="0.5"),
     "runs[0].tf_win_rate.tf_win_rate must be a number or null"),
    # battery 34, D7 and D8: what the Space's leaderboard shows (one such file took the whole board down)
    ("report", lambda d: d["runs"][0].update(dev_set="yes"), "runs[0].dev_set must be an object, got str"),
    ("report", lambda d: d["runs"][0]["tf_win_rate"].update(tf_win_rate=5.0),
     "runs[0].tf_win_rate.tf_win_rate must be a number from 0 to 1 or null, got 5.0"),
    ("report", lambda d: d["runs"][0]["rq_pass_rate"].update(rq_pass_rate=float("nan")),
     "runs[0].rq_pass_rate.rq_pass_rate must be a number from 0 to 1 or null, got nan"),
    ("report", lambda d: d["runs"][0].update(n_items="many"), "runs[0].n_items must be a count or null, got 'many'"),
    ("report", lambda d: d["runs"][0].update(model=None), "runs[0].model must be a model's name on one line, got "
     "None"),
    # battery 35, E1
    ("report", lambda d: d["runs"][0].update(model="m\nINJECT"), "runs[0].model must be a model's name on one line"),
    ("report", lambda d: d["runs"][0].update(model=""), "runs[0].model must be a model's name on one line"),
    ("report", lambda d: d["runs"][0].update(modality="banana"), "runs[0].modality must be audio or text, got "
     "'banana'"),
    ("cross", lambda d: d["ihbench"].update(runs={}), "ihbench.runs is missing or not a list"),
    ("cross", lambda d: d.update(sid_definition="paper"), "sid_definition must be one of notebook, readme"),
])
def test_a_damaged_summary_is_refused_naming_the_file_and_the_field(tmp_path, folder, change, field):
    path = _damaged(tmp_path, folder, change)
    with pytest.raises(SummaryFileError) as refused:
        read_summary(path)
    assert str(refused.value).startswith(f"{path}: field {field}")


def test_a_file_that_is_no_summary_is_refused_naming_it(tmp_path):
    path = tmp_path / "summary.json"
    for text, message in (("{", "not valid JSON"), ("[1]", r"not a JSON object \(an array\)"),
                          ('{"kind": "asr"}', "unknown kind 'asr'"), ('{"kind": ["sid"]}', r"unknown kind \['sid'\]"),
                          ('{"wer": 0.1}', "no kind field")):
        path.write_text(text)
        with pytest.raises(SummaryFileError, match="^" + re.escape(str(path)) + ": " + message):
            read_summary(path)
    with pytest.raises(UnknownSummaryKind) as unknown:
        read_summary(path)
    assert unknown.value.kind is None


def test_a_summary_of_another_kind_is_not_read_as_this_one():
    data = json.loads((SUMMARIES / "turns" / "summary.json").read_text())
    with pytest.raises(SummaryError, match="field kind is 'turns', not 'sid'"):
        SidSummary.from_json(data)


def test_a_field_a_newer_writer_adds_survives_a_round_trip(tmp_path):
    def newer(data):
        data["energy_kwh"] = 0.2
        data["timing"]["stop_latency_s"]["p90"] = 1

    path = _damaged(tmp_path, "turns", newer)
    summary = read_summary(path)
    assert summary.extra == {"energy_kwh": 0.2} and summary.timing.stop_latency_s.extra == {"p90": 1}
    assert summary.to_json() == json.loads(path.read_text())


def test_the_cross_report_tells_runs_apart_by_kind(tmp_path):
    from ihbench.report.benchmark_runs import RunKindError, read_run

    runs = {name: shutil.copytree(SUMMARIES / name, tmp_path / name) for name in TYPES}
    assert (read_run(runs["sid"]).kind, read_run(runs["sid"]).recorded_name) == ("sid", "energy")
    assert (read_run(runs["sid-format-1"]).kind, read_run(runs["sid-format-1"]).recorded_name) == ("sid", None)
    assert (read_run(runs["turns"]).kind, read_run(runs["turns"]).recorded_name) == ("turns", "alpha")
    assert isinstance(read_run(runs["turns"]).record, TurnsSummary)
    for report in ("report", "cross"):  # a report's own folder is not a run
        with pytest.raises(RunKindError, match="^" + re.escape(f"{runs[report]}: holds a report")):
            read_run(runs[report])
    shutil.copy(FIXTURES / "run-format-3" / "run.json", runs["report"] / "run.json")
    run = read_run(runs["report"])  # run.json makes it an IHBench run; its summary.json is an earlier report
    assert run.kind == "ihbench" and run.record.format_version == 2


def test_the_leaderboard_lists_reports_and_leaves_other_summaries_out(tmp_path, monkeypatch):
    from ihbench.ui import leaderboard

    for name in TYPES:
        shutil.copytree(SUMMARIES / name, tmp_path / name)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "summary.json").write_text('{"runs": [{"model": "x"}]}')
    edited = json.loads((SUMMARIES / "report" / "summary.json").read_text())
    edited["runs"][0]["dev_set"] = "yes"  # battery 34, D7: the whole board failed on it
    (tmp_path / "edited").mkdir()
    (tmp_path / "edited" / "summary.json").write_text(json.dumps(edited))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path))
    local = [row for row in leaderboard() if row[5].startswith("runs/")]
    report = json.loads((tmp_path / "report" / "summary.json").read_text())["runs"][0]
    assert local == [["alpha (audio)", round(report["tf_win_rate"]["tf_win_rate"], 3),
                      round(report["rq_pass_rate"]["rq_pass_rate"], 3), report["n_items"],
                      "official; not the paper's test set, baseline or judge", "runs/report"]]


def test_a_space_run_is_ranked_after_the_papers_rows_with_its_items_and_data(tmp_path, monkeypatch):
    """Battery 24 T4: a visitor's judged run over a few dev items (an echo server, TF 1.0) was
    ranked first among the paper's official-test-set rows, with no item count."""
    from ihbench.ui import PAPER_POINTS, leaderboard

    shutil.copytree(SUMMARIES / "report", tmp_path / "visitor")
    path = tmp_path / "visitor" / "summary.json"
    summary = json.loads(path.read_text())
    run = summary["runs"][0]
    run["model"], run["n_items"] = "visitor-spam", 2
    run["tf_win_rate"]["tf_win_rate"] = 1.0
    run["dev_set"] = {"conversations": 2, "of_shipped": 10, "baselines": None, "paper_baseline": "x"}
    path.write_text(json.dumps(summary))
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path))
    rows = leaderboard()
    sources = [row[5] for row in rows]
    assert sources[-1] == "runs/visitor" and set(sources[:-1]) == {"paper"}
    assert [row[1] for row in rows[:-1]] == sorted((row[1] for row in rows[:-1]), reverse=True)
    assert {row[3] for row in rows[:-1]} == {PAPER_POINTS} and rows[0][4].startswith("official test set")
    assert rows[-1][:5] == ["visitor-spam (audio)", 1.0, round(run["rq_pass_rate"]["rq_pass_rate"], 3), 2,
                            "in-house dev set; TF against hand-written baselines, not comparable with the paper's"]


@pytest.mark.parametrize("edit", [lambda run: run.update(n_items=10**30),
                                  lambda run: run.update(dev_set={"conversations": 2, "of_shipped": 10,
                                                                  "baselines": "x", "paper_baseline": "x"}),
                                  lambda run: run.update(model="renamed")])
def test_a_report_summary_edited_after_it_was_written_is_left_off_the_leaderboard(edit, tmp_path, monkeypatch,
                                                                                 caplog):
    """Battery 36, F2: the leaderboard listed a summary whose n_items was edited to 10**30, or whose dev set
    was said to have set-baseline's baselines, as measured. `ihbench report` now seals its runs; a
    summary written before seals were is read as before."""
    from ihbench.report.render import write_report
    from ihbench.summaries import ReportSummary
    from ihbench.ui import leaderboard

    write_report(ReportSummary.from_json(json.loads((SUMMARIES / "report" / "summary.json").read_text())),
                 tmp_path / "sealed")
    path = tmp_path / "sealed" / "summary.json"
    assert read_summary(path).sealed["figures"] == ["runs"]
    monkeypatch.setenv("IHBENCH_RUNS", str(tmp_path))
    assert [row[5] for row in leaderboard() if row[5].startswith("runs/")] == ["runs/sealed"]
    data = json.loads(path.read_text())
    edit(data["runs"][0])
    path.write_text(json.dumps(data))
    with pytest.raises(SummaryFileError, match=r"field\(s\) runs: not the figures `ihbench report` wrote .*edited by "
                                               r"hand"):
        read_summary(path)
    with caplog.at_level("WARNING", logger="ihbench"):
        assert [row for row in leaderboard() if row[5].startswith("runs/")] == []
    assert f"the leaderboard leaves out {path}: field(s) runs: not the figures" in caplog.text


@pytest.mark.parametrize("folder", ["sid", "turns"])
def test_a_model_name_on_two_lines_is_refused_in_a_summary_and_as_an_option(folder, tmp_path, capsys):
    """Battery 37, G2: `ihbench turns --model-name "evil\\n# INJECT"` was taken and written into summary.json;
    `ihbench report` then printed the name over two lines and wrote "# INJECT ..." into report.md as a
    heading of its own. Every name option now refuses a line break (as report's --model-name did), and a
    summary holding one (written by hand, or before) is refused naming the field."""
    from ihbench.cli import main

    path = _damaged(tmp_path, folder, lambda data: data.update(model_name="evil\n# INJECT"))
    with pytest.raises(SummaryFileError,
                       match=r"field model_name must be a non-empty name on one line, got 'evil\\n# INJECT'"):
        read_summary(path)
    with pytest.raises(SystemExit) as stop:
        main(["turns", str(tmp_path / "none.wav"), "--out", str(tmp_path / "t"), "--model-name", "evil\n# INJECT"])
    assert stop.value.code == 2 and not (tmp_path / "t").exists()
    assert "argument --model-name: expected a non-empty name on one line, got 'evil\\n# INJECT' (a line break, a " \
           "tab, a control character or a space other than the plain one in it)" in capsys.readouterr().err


@pytest.mark.parametrize("folder, command", [("sid", "sid"), ("turns", "turns"), ("report", "report")])
@pytest.mark.parametrize("edit", [lambda seal: None, lambda seal: "x", lambda seal: [1], lambda seal: {},
                                  lambda seal: {"x": 1}, lambda seal: {**seal, "figures_sha256": None},
                                  lambda seal: {**seal, "figures": []}, lambda seal: {**seal, "files_sha256": None}])
def test_a_seal_edited_to_something_else_is_refused_not_read_as_no_seal(folder, command, edit, tmp_path):
    """Battery 38, H1: `"sealed": null` was read as a summary written before seals were, so an edited count
    beside it was listed by the leaderboard. Battery 39, J1: so was a seal emptied ({}), or with its digest
    nulled. A writer writes its whole seal, or (before seals were) no field at all."""
    from ihbench.summaries import SEALED_FIGURES, seal

    def damage(data):
        whole = seal(data, tmp_path, SEALED_FIGURES[command], [])["sealed"]
        data["sealed"] = edit(whole)

    path = _damaged(tmp_path, folder, damage)
    with pytest.raises(SummaryFileError, match=rf"field sealed is not the seal `ihbench {command}` writes \(the "
                                               r"figures .* and their digests\), got .*edited by hand"):
        read_summary(path)
    data = json.loads(path.read_text())
    data["sealed"] = seal(data, tmp_path, SEALED_FIGURES[command], [])["sealed"]  # whole again: read
    path.write_text(json.dumps(data))
    assert read_summary(path).sealed["figures"] == SEALED_FIGURES[command]


@pytest.mark.parametrize("name", [" ", "   ", "\u00a0"])
def test_a_blank_model_name_in_a_summary_is_refused(name, tmp_path):
    """Battery 38, H2: a turns summary whose model_name was edited to spaces was reported as a run named " "
    (a blank row name in report.md); the option itself refuses a blank name."""
    path = _damaged(tmp_path, "turns", lambda data: data.update(model_name=name))
    with pytest.raises(SummaryFileError, match=r"field model_name must be a non-empty name on one line, got"):
        read_summary(path)
