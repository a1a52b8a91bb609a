"""`ihbench report`: numbers come from the metric modules; per type, depth, diagnostics, plots,
paper tables, inter-judge agreement and the audio-vs-text TOST."""
import json
import subprocess
import sys

import pytest
from metric_modules import load

from ihbench.dataset.io import read_records
from ihbench.report.diagnostics import acknowledges, continues_remainder, redelivery_ratio


@pytest.fixture(scope="module")
def reported(judged_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "report", str(judged_run["root"] / "run"),
                             "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out, json.loads((out / "summary.json").read_text()), result.stdout


def test_report_numbers_equal_the_metric_modules_on_the_same_verdicts(judged_run, reported):
    _, summary, _ = reported
    run = summary["runs"][0]
    judgments = [j for j in read_records(judged_run["root"] / "run" / "judgments.jsonl") if j["outcome"] == "judged"]
    from ihbench.dataset import load_items

    items = {i.id: i for i in load_items(json.loads((judged_run["root"] / "run" / "run.json").read_text())["data"])}
    tf = [j for j in judgments if j["axis"] == "tf"]
    rq = [j for j in judgments if j["axis"] == "rq"]
    expected_tf = load("tf_win_rate").compute(predictions=[j["verdict"] for j in tf], item_ids=[j["id"] for j in tf],
                                              interruption_types=[items[j["id"]].interruption_type for j in tf])
    expected_rq = load("rq_pass_rate").compute(predictions=[j["criteria"] for j in rq], item_ids=[j["id"] for j in rq],
                                               interruption_types=[items[j["id"]].interruption_type for j in rq])
    assert run["tf_win_rate"] == expected_tf and run["rq_pass_rate"] == expected_rq
    assert run["judge_errors"]["tf"] + run["judge_errors"]["rq"] == judged_run["first"].judge_errors


def test_report_files_tables_and_provenance(reported):
    out, summary, stdout = reported
    text = (out / "report.md").read_text()
    for expected in ("TF win rate", "Beside the paper (Table 1)", "GPT Realtime 2 (medium)", "Table 4 layout",
                     "this report", "Judge-free diagnostics", "Provenance", "judge-x", "![RQ by type](per_type.png)",
                     "![Depth](depth.png)", "Inter-judge agreement"):
        assert expected in text, expected
    from conftest import png_size

    assert png_size(out / "per_type.png") == (1000, 400) and png_size(out / "depth.png") == (1100, 400)
    run = summary["runs"][0]
    assert set(run["tf_win_rate_by_depth"]) == {"0-4", "5-9", "10-14", "15-19"}
    assert run["metric_versions"]["tf_win_rate"] and run["judges"][0]["prompt_hash"]
    assert "TF win rate" in stdout


def _latest_judged(path):
    from ihbench.rundir import read_judgments

    return [j.to_json() for j in read_judgments(path) if j.judged]


def _write(path, records):
    """Judgments written as the judge writes them: each with the check of what it now holds (a line
    edited without it would be refused as damaged)."""
    from dataclasses import replace

    from ihbench.records import RECORD_FORMAT, JudgmentRecord

    stamped = [replace(JudgmentRecord.from_json({k: v for k, v in r.items() if k not in ("check", "format_version")}),
                       format_version=RECORD_FORMAT) for r in records]
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in stamped))


def _flip(record):
    """The other verdict, with criteria that agree with it."""
    flipped = dict(record)
    if record["axis"] == "tf":
        flipped["verdict"] = "baseline" if record["verdict"] == "model" else "model"
    elif record["verdict"] == "pass":
        flipped["verdict"], flipped["criteria"] = "fail", [False] + record["criteria"][1:]
    else:
        flipped["verdict"], flipped["criteria"] = "pass", [True] * len(record["criteria"])
    return flipped


def _kappa(pairs):
    """Cohen's kappa by its definition: (observed - chance agreement) / (1 - chance agreement)."""
    n = len(pairs)
    labels = {x for pair in pairs for x in pair}
    observed = sum(a == b for a, b in pairs) / n
    chance = sum((sum(a == label for a, _ in pairs) / n) * (sum(b == label for _, b in pairs) / n) for label in labels)
    return (observed - chance) / (1 - chance)


def test_two_judges_that_disagree_give_the_agreement_and_kappa_computed_by_hand(judged_run, tmp_path):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(judged_run["root"] / "run", run_dir)
    (run_dir / "judgments-again.jsonl").unlink()
    first = _latest_judged(run_dir / "judgments.jsonl")
    # every third verdict of each axis differs (counted per axis: the file's order across axes is the
    # order the judge's answers arrived in, which varies from run to run)
    seen = {"tf": 0, "rq": 0}
    second = []
    for r in first:
        second.append(_flip(r) if seen[r["axis"]] % 3 == 0 else r)
        seen[r["axis"]] += 1
    _write(run_dir / "judgments-other.jsonl", [{**r, "judge_model": "judge-y"} for r in second])
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "report", str(run_dir), "--out", str(tmp_path / "r"),
                             "--quiet"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    agreement = json.loads((tmp_path / "r" / "summary.json").read_text())["runs"][0]["inter_judge"]
    for axis in ("tf", "rq"):
        pairs = [(a["verdict"], b["verdict"]) for a, b in zip(first, second) if a["axis"] == axis]
        assert agreement[axis]["n"] == len(pairs)
        assert agreement[axis]["agreement"] == pytest.approx(sum(a == b for a, b in pairs) / len(pairs))
        assert agreement[axis]["agreement"] < 0.75
        assert agreement[axis]["cohen_kappa"] == pytest.approx(_kappa(pairs))


def test_audio_and_text_runs_of_one_model_get_a_tost_on_their_real_difference(judged_run, tmp_path):
    import shutil

    audio, text = tmp_path / "audio", tmp_path / "text"
    for target in (audio, text):
        shutil.copytree(judged_run["root"] / "run", target)
        (target / "judgments-again.jsonl").unlink()
    info = json.loads((text / "run.json").read_text())
    info["modality"] = "text"
    (text / "run.json").write_text(json.dumps(info))
    judged = _latest_judged(text / "judgments.jsonl")
    _write(text / "judgments.jsonl", [_flip(r) if r["axis"] == "rq" and r["verdict"] == "fail" else r for r in judged])
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "report", str(audio), str(text), "--out",
                             str(tmp_path / "both")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "both" / "summary.json").read_text())
    (tost,) = summary["modality_tost"]

    def per_item(path):
        scores = {}
        for r in _latest_judged(path):
            if r["axis"] == "rq":
                scores.setdefault(r["id"], []).append(r["verdict"] == "pass")
        return {k: sum(v) / len(v) for k, v in scores.items()}

    a, t = per_item(audio / "judgments.jsonl"), per_item(text / "judgments.jsonl")
    by_hand = sum(a[k] - t[k] for k in a) / len(a)
    assert by_hand < -0.5  # the text run passes everything, the audio run mostly fails
    assert tost["rq"]["mean_difference_audio_minus_text"] == pytest.approx(by_hand)
    assert tost["rq"]["equivalent_at_0.05"] is False
    assert "Audio vs text" in (tmp_path / "both" / "report.md").read_text()


def test_diagnostics_by_hand():
    delivered = "The next flight leaves at"
    assert redelivery_ratio(delivered, "The next flight leaves at nine fifteen.") == 1.0
    assert redelivery_ratio(delivered, "nine fifteen from gate B12.") == 0.0
    assert continues_remainder(" nine fifteen from gate B12.", "nine fifteen from gate B12, boarding at nine.")
    assert not continues_remainder(" nine fifteen from gate B12.", "Sorry, as I said, the next flight leaves at nine.")
    assert acknowledges("Great, so the flight leaves at nine fifteen.")
    assert not acknowledges("nine fifteen from gate B12.")


def test_report_shows_the_baselines_own_rq_pass_rate_beside_the_run(judged_run, reported):
    """Computed by hand from the verdicts that ship with the data, on the items the run's RQ covers:
    those with an RQ verdict (not those whose RQ judgments all failed: battery 5, finding 3)."""
    from ihbench.dataset import load_items
    from ihbench.rundir import read_judgments

    out, summary, stdout = reported
    run = summary["runs"][0]
    ids = {j.id for j in read_judgments(judged_run["root"] / "run" / "judgments.jsonl") if j.axis == "rq" and j.judged}
    assert run["rq_pass_rate"]["n_items"] == len(ids)
    items = [i for i in load_items(json.loads((judged_run["root"] / "run" / "run.json").read_text())["data"]) if i.id in ids]
    assert all(item.baseline_rq for item in items)
    by_hand = sum(all(item.baseline_rq) for item in items) / len(items)
    assert run["baseline_rq_pass_rate"]["rq_pass_rate"] == pytest.approx(by_hand)
    assert run["baseline_rq_pass_rate"]["n_items"] == len(items)
    assert "baseline RQ (same items)" in (out / "report.md").read_text()
    assert f"baseline RQ on the same items {by_hand:.3f}" in stdout
