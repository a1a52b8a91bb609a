"""fir / irl / apt: the published SID-Bench numbers, both definitions, hand cases, bad input."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_modules import load, shared

# SID-Bench's example prediction file (zh_our_res.jsonl) joined by audio name to its ground truth
# (zh_test_lines.jsonl), reduced to the scored numbers: {"prediction": {...}, "reference": {...}}.
EXAMPLE = Path(__file__).resolve().parent / "fixtures" / "sid_zh_example.jsonl"
sid = shared("sid_scoring")


def _published_example():
    rows = [json.loads(line) for line in EXAMPLE.read_text().splitlines()]
    return [r["prediction"] for r in rows], [r["reference"] for r in rows]


@pytest.mark.parametrize("name", ["fir", "irl", "apt"])
def test_notebook_definition_reproduces_the_published_numbers_exactly(name):
    predictions, references = _published_example()
    result = load(name).compute(predictions=predictions, references=references)
    assert result["definition"] == "notebook"
    assert result["fir"] == 0.1375
    assert result["irl"] == 0.33837436932391457
    assert result["apt"] == 0.6561522135416662
    assert result["n_clips"] == 1600


def test_readme_definition_differs_in_fir_denominator_and_irl_detections():
    predictions, references = _published_example()
    notebook = load("fir").compute(predictions=predictions, references=references)
    readme = load("fir", "readme").compute(predictions=predictions, references=references)
    assert readme["definition"] == "readme" and readme["apt"] == notebook["apt"]
    assert readme["fir"] == notebook["false_alarms_nonbreak"] / notebook["n_nonbreak"]
    assert readme["fir"] != notebook["fir"] and readme["irl"] != notebook["irl"]
    assert readme["irl"] <= 0.05  # mean error of detections within tolerance


def test_tolerance_boundary_uses_the_notebooks_comparison_form():
    """1.6500000000000001 is within 0.05 of 1.6 as `true - tol <= p <= true + tol`, not as abs()."""
    result = sid.score([{"total_nonbreak": False, "break_time": 1.6500000000000001}],
                       [{"total_nonbreak": False, "break_time": 1.6, "duration": 3.0}])
    assert result["hits_within_tolerance"] == 1 and result["apt"] == 0


def test_hand_computed_outcomes_for_every_rule():
    predictions = [
        {"total_nonbreak": False, "break_time": 1.03},  # hit within tolerance
        {"total_nonbreak": True, "break_time": -1},     # correct rejection
        {"total_nonbreak": False, "break_time": 0.5},   # false alarm on a non-break clip: penalty 4
        {"total_nonbreak": True, "break_time": -1},     # miss: penalty 3 - 1 = 2
        {"total_nonbreak": False, "break_time": 1.5},   # late by 0.5
        {"total_nonbreak": False, "break_time": 0.2},   # early: false alarm, penalty 6
    ]
    references = [
        {"total_nonbreak": False, "break_time": 1.0, "duration": 2.0},
        {"total_nonbreak": True, "break_time": 3.0, "duration": 3.0},
        {"total_nonbreak": True, "break_time": 4.0, "duration": 4.0},
        {"total_nonbreak": False, "break_time": 1.0, "duration": 3.0},
        {"total_nonbreak": False, "break_time": 1.0, "duration": 5.0},
        {"total_nonbreak": False, "break_time": 1.0, "duration": 6.0},
    ]
    result = sid.score(predictions, references)
    assert (result["hits_within_tolerance"], result["correct_rejections"], result["false_alarms_nonbreak"],
            result["misses"], result["late_hits"], result["early_detections"]) == (1, 1, 1, 1, 1, 1)
    assert result["fir"] == 2 / 6 and result["irl"] == 0.5 and result["apt"] == (0 + 0 + 4 + 2 + 0.5 + 6) / 6
    readme = sid.score(predictions, references, definition="readme")
    assert readme["fir"] == 1 / 2 and abs(readme["irl"] - 0.03) < 1e-12


def test_irl_is_none_when_nothing_qualifies():
    result = sid.score([{"total_nonbreak": True, "break_time": -1}],
                       [{"total_nonbreak": True, "break_time": 2.0, "duration": 2.0}])
    assert result["irl"] is None and result["fir"] == 0 and result["apt"] == 0


def test_unknown_definition_is_refused():
    import evaluate

    with pytest.raises(ValueError, match="config_name: unknown definition 'paper'"):
        evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "apt"), "paper")


GOOD_P = {"total_nonbreak": False, "break_time": 1.0}
GOOD_R = {"total_nonbreak": False, "break_time": 1.0, "duration": 2.0}


@pytest.mark.parametrize("predictions,references,tolerance,message", [
    ([GOOD_P], [GOOD_R, GOOD_R], 0.05, r"predictions has 1 rows but references has 2"),
    ([], [], 0.05, r"predictions: empty input"),
    ([GOOD_P, {"total_nonbreak": False}], [GOOD_R, GOOD_R], 0.05, r"predictions\[1\]: missing break_time"),
    ([GOOD_P, {"total_nonbreak": "no", "break_time": 1.0}], [GOOD_R, GOOD_R], 0.05,
     r"predictions\[1\]\['total_nonbreak'\]: expected a bool"),
    ([GOOD_P, {"total_nonbreak": False, "break_time": float("nan")}], [GOOD_R, GOOD_R], 0.05,
     r"predictions\[1\]\['break_time'\]: expected a finite number"),
    ([GOOD_P, {"total_nonbreak": False, "break_time": -0.5}], [GOOD_R, GOOD_R], 0.05,
     r"predictions\[1\]\['break_time'\]: negative time"),
    ([GOOD_P, GOOD_P], [GOOD_R, {"total_nonbreak": False, "break_time": 2.5, "duration": 2.0}], 0.05,
     r"references\[1\]\['break_time'\]: 2.5 is past the clip's duration 2.0"),
    ([GOOD_P, GOOD_P], [GOOD_R, {"total_nonbreak": False, "break_time": -1.0, "duration": 2.0}], 0.05,
     r"references\[1\]\['break_time'\]: negative time"),
    ([GOOD_P], [GOOD_R], -0.1, r"tolerance: must be >= 0"),
])
def test_bad_input_names_argument_index_and_field(predictions, references, tolerance, message):
    with pytest.raises(ValueError, match=message):
        load("apt").compute(predictions=predictions, references=references, tolerance=tolerance)


clips = st.lists(st.tuples(st.booleans(), st.floats(0.0, 10.0), st.floats(0.1, 20.0)), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(clips)
def test_perfect_predictions_give_fir_zero_and_apt_zero(data):
    references = [{"total_nonbreak": nonbreak, "break_time": min(t, d) if not nonbreak else d, "duration": d}
                  for nonbreak, t, d in data]
    predictions = [{"total_nonbreak": r["total_nonbreak"], "break_time": -1.0 if r["total_nonbreak"] else r["break_time"]}
                   for r in references]
    for definition in ("notebook", "readme"):
        result = sid.score(predictions, references, definition=definition)
        assert result["apt"] == 0 and result["fir"] in (0, None)


@settings(max_examples=80, deadline=None)
@given(clips, st.lists(st.tuples(st.booleans(), st.floats(0.0, 1.0)), min_size=30, max_size=30))
def test_rates_in_unit_interval_and_penalties_bounded_by_duration(data, guesses):
    references = [{"total_nonbreak": nonbreak, "break_time": min(t, d) if not nonbreak else d, "duration": d}
                  for nonbreak, t, d in data]
    predictions = [{"total_nonbreak": g_nonbreak, "break_time": -1.0 if g_nonbreak else fraction * r["duration"]}
                   for (g_nonbreak, fraction), r in zip(guesses, references)]
    sid.check_inputs(predictions, references)
    result = sid.score(predictions, references)
    assert 0.0 <= result["fir"] <= 1.0
    assert 0.0 <= result["apt"] <= max(r["duration"] for r in references)
    assert sum(result[k] for k in ("false_alarms_nonbreak", "early_detections", "misses", "hits_within_tolerance",
                                   "late_hits", "correct_rejections")) == len(references)


def test_numpy_booleans_are_flags_too():
    import numpy as np

    # NumPy 2 names its bool type "bool", not "bool_": a flag read from a numpy array is still a flag
    result = sid.score([{"total_nonbreak": np.bool_(True), "break_time": -1}],
                       [{"total_nonbreak": np.bool_(True), "break_time": 3.0, "duration": 3.0}])
    assert result["correct_rejections"] == 1
