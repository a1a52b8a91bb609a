"""`ihbench turns --judge smart-turn`: Smart Turn v3.2 (the real model in the installed pipecat-ai
wheel, no stand-in) as a Talking Turns judge of the turn change at each pause.

The agreement is measured on one recording of the shared build's duplex renders (real TTS, known
floor labels), asserted loosely (the model is real: this says what it does, not what we wish), and
printed; the exact figures are recorded in the README. Refusals need no model and no audio.
"""
import json
import subprocess
import sys
from types import SimpleNamespace

import datasets
import numpy as np
import pytest

from ihbench.dataset.floor import FloorLabels
from ihbench.turns.smart_turn_judge import COVERED, NEUTRAL, NOT_COVERED, PauseQuery, likelihood_rows, pause_queries

NOT_COVERED_METRICS = ("backchannel", "interrupt", "handle_interruption")


@pytest.fixture(scope="module")
def duplex_row(built, tmp_path_factory):
    """The clean recording of the build (the other lies under a noise floor), as the FLAC file a
    user would give `ihbench turns`, and its ground truth."""
    duplex = datasets.load_dataset(str(built), "duplex", split="dev")
    raw = duplex.cast_column("audio", datasets.Audio(decode=False))
    index = next(i for i, noise in enumerate(duplex["noise_dbfs"]) if noise is None)
    row = raw[index]
    path = tmp_path_factory.mktemp("duplex") / f"{row['conversation_id']}.flac"
    path.write_bytes(row["audio"]["bytes"])
    return path, duplex.remove_columns("audio")[index]


@pytest.fixture(scope="module")
def judged(duplex_row, tmp_path_factory):
    path, _ = duplex_row
    out = tmp_path_factory.mktemp("judged") / "run"
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "turns", str(path), "--judge", "smart-turn",
                             "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result, json.loads((out / "summary.json").read_text()), out


def _truth_agreement(path, row):
    """The same judge on the renders' own floor labels and speech intervals, through the metric module."""
    from ihbench.turns.audio import read_recording
    from ihbench.turns.run import agreement
    from ihbench.turns.smart_turn_judge import SmartTurnJudge

    labels = FloorLabels(row["events"], row["turns"], row["end_times"])
    speech = tuple([(s["start"], s["end"]) for s in row[key]] for key in ("assistant_speech", "user_speech"))
    truth = SimpleNamespace(name=row["conversation_id"], labels=labels, speech=speech)
    judge = SmartTurnJudge()
    rows, _ = judge.judge(read_recording([path]), truth)
    return agreement([truth], {truth.name: rows}, source="ground truth", judge=judge)


def test_agreement_with_the_duplex_ground_truth_on_one_recording(judged, duplex_row, capsys):
    result, summary, _ = judged
    found = summary["agreement"]
    truth = _truth_agreement(*duplex_row)
    with capsys.disabled():
        for name in COVERED:
            for source, figures in (("found", found), ("truth", truth)):
                metric = figures["metrics"][name]
                print(f"\nsmart-turn {name} ({source} labels): " + ", ".join(
                    f"{c} {metric[c]['agreement']:.4f} (n={metric[c]['n']})" for c in ("C", "T")), end="")
        print()
    for name in COVERED:
        ours, reference = found["metrics"][name], truth["metrics"][name]
        # the analysis finds the renders' pauses: the same instances, give or take one split or merged pause
        assert abs(ours["n_instances"] - reference["n_instances"]) <= 2 and reference["n_instances"] >= 10
        for decision in ("C", "T"):
            assert reference[decision]["n"] >= 3
            assert abs(ours[decision]["agreement"] - reference[decision]["agreement"]) <= 0.2
            assert 0 < reference[decision]["agreement"] < 1  # neither always "complete" nor never
    pooled = sum(truth["metrics"][n][c]["agreement"] * truth["metrics"][n][c]["n"] for n in COVERED for c in "CT")
    assert pooled / sum(truth["metrics"][n]["n_instances"] for n in COVERED) >= 0.4
    # what it does here: the agent's (flite) turn ends sound complete more often than its pauses
    # within a turn; the user's do not (its multi-sentence barge-ins pause after complete sentences)
    convey = truth["metrics"]["convey_turn"]
    assert convey["T"]["agreement"] > 1 - convey["C"]["agreement"]
    assert "agreement speak_up: C " in result.stdout and "agreement convey_turn: C " in result.stdout
    assert "smart-turn" in result.stderr and "pause" in result.stderr  # its progress bar


def test_the_metrics_it_does_not_cover_are_reported_as_not_covered(judged):
    result, summary, out = judged
    agreement = summary["agreement"]
    for name in NOT_COVERED_METRICS:
        entry = agreement["metrics"][name]
        assert entry == {"metric": name, "not_covered": NOT_COVERED[name]}  # a reason, no number
        assert f"agreement {name}: not covered (" in result.stdout
    assert set(agreement["single_label"]) == {"not_covered"}
    assert "single-label evaluation: not covered (" in result.stdout
    model = agreement["judge_model"]
    assert model["sha256"] == "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"
    assert model["pipecat_ai"] == "1.14.0" and model["threshold"] == 0.5
    assert agreement["metrics"]["speak_up"]["threshold"] == 0.0  # P > 0.5 as p[T] - p[C] > 0
    (recording,) = summary["per_recording"]
    events = json.loads((out / recording["events"]).read_text())
    pauses = events["turn_end"]["pauses"]
    assert pauses and all(0.0 <= p["probability"] <= 1.0 and p["time"] >= p["speech_end"] for p in pauses)


def test_the_cross_report_shows_covered_and_not_covered_agreement(judged, tmp_path):
    from ihbench.report.cross import cross_report
    from ihbench.report.cross_render import cross_stdout, render_cross_markdown

    _, _, out = judged
    report = cross_report([out], model_names=[f"{out}=duplex-renders"])
    text = render_cross_markdown(report.to_json(), {})
    assert "## Turn-taking agreement" in text and "| speak_up | C |" in text
    assert "| backchannel | not covered |" in text and "| single-label evaluation | not covered |" in text
    assert any("backchannel not covered" in line for line in cross_stdout(report))


def _a_file(tmp_path):
    path = tmp_path / "call.wav"
    path.write_bytes(b"RIFF")  # never read: the refusals come first
    return path


def test_judge_and_judge_likelihoods_together_are_refused_before_anything_is_written(tmp_path, capsys):
    from ihbench.cli import main

    likelihoods = tmp_path / "l.npy"
    np.save(likelihoods, np.zeros((3, 5)))
    out = tmp_path / "missing" / "run"
    assert main(["turns", str(_a_file(tmp_path)), "--judge", "smart-turn", "--judge-likelihoods", str(likelihoods),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == "ihbench turns: error: --judge and --judge-likelihoods: give one judge, not both\n"
    assert not (tmp_path / "missing").exists()


def test_a_missing_smart_turn_extra_is_one_line_saying_how_to_install_it(tmp_path, capsys, monkeypatch):
    from importlib import metadata

    from ihbench.cli import main

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", absent)
    out = tmp_path / "missing" / "run"
    assert main(["turns", str(_a_file(tmp_path)), "--judge", "smart-turn", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install "ihbench[smart-turn]" (pipecat-ai==1.14.0)' in err
    assert not (tmp_path / "missing").exists()


def test_each_pause_is_asked_once_without_look_ahead():
    """A hand-made recording: A speaks, pauses 0.4 s (goes on), stops; B answers after 0.6 s."""
    ends = [round(0.24 + 0.04 * k, 6) for k in range(60)]  # 0.24 .. 2.60
    events = ["C"] * 10 + ["NA"] * 10 + ["C"] * 10 + ["NA"] * 15 + ["T"] + ["C"] * 14
    turns = ["A"] * 46 + ["B"] * 14
    speech = ([(0.2, ends[10]), (ends[20], ends[30])], [(ends[45], 2.64)])
    queries = pause_queries(FloorLabels(events, turns, ends), speech, stop_s=0.2, pre_speech_s=0.7)
    assert [(q.speaker, q.speech_end) for q in queries] == [("A", ends[10]), ("A", ends[30])]
    for query, (silence, resumed) in zip(queries, ((10, 20), (30, 45))):
        assert query.time == pytest.approx(ends[silence] + 0.2)
        assert query.last_row == resumed  # the row of the first chunk of speech: the metric's instance
        assert ends[query.first_row] >= query.time - 1e-9 > ends[query.first_row - 1]  # nothing before it is asked
    rows = likelihood_rows(len(events), [PauseQuery(**{**q.__dict__, "probability": 0.8}) for q in queries])
    assert rows[45].tolist() == [pytest.approx(0.2), 0.0, 0.0, 0.0, 0.8] 
    assert rows[33].tolist() == list(NEUTRAL) == rows[25].tolist()  # before it was asked; speech
