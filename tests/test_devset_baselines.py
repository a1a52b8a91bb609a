"""Issue 28, "baselines by type run opposite to the paper's GPT-4o": the dev set's hand-written
baselines beside the paper's baseline per type, computed from the data (card) and shown with every
report of a run on the dev set, and nowhere else."""
import json
import shutil
import subprocess
import sys

import pytest
from conftest import REPO
from metric_modules import load
from openai_test_server import OpenAITestServer

from ihbench.dataset.build_info import BuildInfo
from ihbench.dataset.schema import INTERRUPTION_TYPES
from ihbench.dataset.sources import source_files
from ihbench.report.devset import (CARD_BEGIN, CARD_END, card_block, dev_set_of, run_warning, source_points,
                                   sources_baseline_rq)
from ihbench.runner import RunSpec, run

#: (type, verdicts) of the synthetic points, counted by hand below
POINTS = [("filler", [True, True]), ("filler", [True, False]), ("filler", [True, True, True]),
          ("pushback", [False, True]), ("pushback", [False, False]), ("normal", [True, True])]
BY_HAND = {"filler": (2 / 3, 3), "pushback": (0.0, 2), "normal": (1.0, 1)}


def _synthetic_sources(folder):
    """Two copies of a shipped conversation whose points carry the types and verdicts of POINTS."""
    template = json.loads(sorted(source_files(), key=lambda p: p.stat().st_size)[0].read_text())
    points, written = iter(POINTS), []
    for number in (1, 2):
        data = json.loads(json.dumps(template))
        data["conversation_id"] = f"synthetic-{number}"
        interrupted = [t for t in data["turns"] if "interruption" in t][:3]
        assert len(interrupted) == 3
        for turn in interrupted:
            kind, verdicts = next(points)
            turn["interruption"]["type"] = kind
            turn["interruption"]["rq_rubrics"] = [f"criterion {i}" for i in range(len(verdicts))]
            turn["interruption"]["baseline_rq_verdicts"] = [{"met": v, "reason": "r"} for v in verdicts]
        for turn in [t for t in data["turns"] if "interruption" in t][3:]:
            turn["interruption"].pop("baseline_rq_verdicts", None)  # unjudged points are left out
        written.append(folder / f"synthetic-{number}.json")
        written[-1].write_text(json.dumps(data))
    return written


def test_the_per_type_table_equals_a_hand_count_of_the_sources(tmp_path):
    paths = _synthetic_sources(tmp_path)
    result = sources_baseline_rq(paths)
    assert {k: v["n_items"] for k, v in result["per_type"].items()} == {k: n for k, (_, n) in BY_HAND.items()}
    assert {k: v["rq_pass_rate"] for k, v in result["per_type"].items()} == \
        pytest.approx({k: rate for k, (rate, _) in BY_HAND.items()})
    assert result["rq_pass_rate"] == pytest.approx(3 / 6) and result["n_items"] == 6
    # the interval is the metric module's, on the same rows
    points = source_points(paths)
    judged = sorted(i for i, p in points.items() if p.baseline_rq)
    direct = load("rq_pass_rate").compute(predictions=[points[i].baseline_rq for i in judged], item_ids=judged,
                                          interruption_types=[points[i].interruption_type for i in judged])
    assert result == direct
    block = card_block(paths)
    filler = result["per_type"]["filler"]
    assert f"| filler | 0.67 [{filler['ci_low']:.2f}, {filler['ci_high']:.2f}] (n=3) | 0.080 ± 0.08 |" in block
    assert "| pushback | 0.00 [0.00, 0.00] (n=2) | 0.710 ± 0.09 |" in block
    assert "| impatient | – | 0.640 ± 0.11 |" in block
    assert "**0.654 ± 0.05**" in block  # the paper's baseline overall (Table 1)
    assert "not comparable with the paper's" in block and "filler points more often" in block


def test_the_card_states_the_shipped_sources_numbers():
    """Fails when the sources change and the card does not: `python -m ihbench.report.devset` rewrites it."""
    card = (REPO / "dataset_card.md").read_text()
    start, end = card.index(CARD_BEGIN), card.index(CARD_END) + len(CARD_END) + 1
    assert card[start:end] == card_block(), "run `python -m ihbench.report.devset` to refresh the card"


def test_a_build_keeps_the_table_only_when_its_numbers_are_the_builds(tmp_path):
    """The build's own statistics (counts and pass rates per type, by hand here) against the card's table."""
    from ihbench.dataset.card import OTHER_BASELINES, _baselines_block

    paths = _synthetic_sources(tmp_path)
    text = "# card\n\n" + card_block(paths) + "\n## next\n"
    counts = {k: sum(kind == k for kind, _ in POINTS) for k in INTERRUPTION_TYPES}
    rates = {k: rate for k, (rate, _) in BY_HAND.items()}
    same = {"interruption_types": counts, "baseline_rq_pass_rate": {"per_type": rates}}
    assert _baselines_block(text, same) == text
    other = {"interruption_types": {**counts, "filler": 4}, "baseline_rq_pass_rate": {"per_type": rates}}
    for statistics in (other, {"interruption_types": counts},  # another count; a build without verdicts
                       {**same, "baseline_rq_pass_rate": {"per_type": {**rates, "pushback": 0.5}}}):
        kept = _baselines_block(text, statistics)
        assert OTHER_BASELINES in kept and "| filler |" not in kept and kept.endswith("\n## next\n")


def _with_build_info(data, folder, **changes):
    """A copy of the dataset `data` whose build_info.json says what `changes` make it say (an edit by hand)."""
    shutil.copytree(data, folder)
    path = folder / "build_info.json"
    record = json.loads(path.read_text()) if path.exists() else \
        BuildInfo(builder="test", sources_fingerprint="x", conversations=[], split="dev",
                  configs=["conversations"]).to_json()
    path.write_text(json.dumps({**record, **changes}))
    return str(folder)


def test_the_dev_set_is_known_by_the_conversations_its_data_holds(built, tmp_path):
    """Battery 30, Z2: the report's dev-set label (its warning, table and plot) followed build_info.json's list
    of conversations, which an edit by hand turned on for a user's own data or off for the dev set."""
    from official_layout import write_official_layout

    shipped = sorted(p.stem for p in source_files())
    assert dev_set_of(str(built))["baselines"] is None and dev_set_of(str(built))["conversations"] == 2
    assert dev_set_of(_with_build_info(built, tmp_path / "ghost", conversations=["ghost-01"]))["conversations"] == 2
    own = write_official_layout(tmp_path / "official")  # conv-a, conv-b, conv-c: a user's own conversations
    assert dev_set_of(_with_build_info(own, tmp_path / "claimed", conversations=shipped[:3])) is None
    assert dev_set_of(str(built), barge_in=True) is None
    assert dev_set_of("bosonai/IHBench") is None and dev_set_of(str(tmp_path)) is None
    replaced = dev_set_of(_with_build_info(built, tmp_path / "rebased", baselines="Replaced by set-baseline, model X"))
    note = run_warning({"dev_set": replaced}, "m (audio)")
    assert "model X" in note and "hand-written" not in note


@pytest.fixture(scope="module")
def dev_report(judged_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("dev-report")
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "report", str(judged_run["root"] / "run"),
                             "--out", str(out), "--n-bootstrap", "200"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out, json.loads((out / "summary.json").read_text()), result


def test_a_report_on_a_dev_set_run_warns_and_shows_both_baselines_per_type(dev_report):
    out, summary, result = dev_report
    run = summary["runs"][0]
    assert run["dev_set"]["baselines"] is None
    text = (out / "report.md").read_text()
    warning = text[:text.index("## Scores")]
    assert "**Warning:**" in warning and "hand-written baselines" in warning and "not comparable" in warning
    section = text[text.index("## Against the dev set's hand-written baselines"):text.index("## Depth")]
    ours, theirs = run["rq_pass_rate"]["per_type"], run["baseline_rq_pass_rate"]["per_type"]
    for kind in ours:
        row = next(line for line in section.splitlines() if line.startswith(f"| {kind} |"))
        assert f"{ours[kind]['rq_pass_rate']:.2f} [" in row.split("|")[2]
        assert f"{theirs[kind]['rq_pass_rate']:.2f} [" in row.split("|")[3]
    assert "| filler |" in section and "0.080 ± 0.08 |" in section
    assert "![Dev set beside both baselines](dev_set.png)" in text and (out / "dev_set.png").stat().st_size > 0
    assert "ran on the in-house dev set" in result.stderr and "not comparable with the paper's" in result.stderr


def test_a_run_on_other_data_gets_no_dev_set_warning(tmp_path):
    from official_layout import write_official_layout

    from ihbench.report import write_report
    from ihbench.report.summary import summarize

    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer() as server:
        run(RunSpec(loader="openai", model_path="m", data=str(data), out=tmp_path / "run", epochs=1,
                    loader_options={"base_url": server.base_url}), progress=False)
    report = summarize([tmp_path / "run"], n_bootstrap=20)
    assert report.runs[0]["dev_set"] is None
    paths = write_report(report, tmp_path / "report")
    text = paths["report"].read_text()
    assert "in-house dev set" not in text and "hand-written" not in text and "dev_set" not in paths
