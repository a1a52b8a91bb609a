"""rq_pass_rate and tf_win_rate: hand-computed cases, grouping, CI, bad input, properties."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_modules import load, shared

bootstrap = shared("item_bootstrap")


@pytest.fixture(scope="module")
def rq():
    return load("rq_pass_rate")


@pytest.fixture(scope="module")
def tf():
    return load("tf_win_rate")


def test_a_response_passes_only_if_every_criterion_is_met(rq):
    result = rq.compute(predictions=[[True, True], [True, False], [False, False], [True]])
    assert result["rq_pass_rate"] == 0.5 and result["n_items"] == 4 and result["n_rows"] == 4


def test_epochs_are_averaged_per_item_before_the_mean_over_items(rq):
    # item a: pass, fail, pass -> 2/3; item b: fail -> 0; mean (2/3 + 0) / 2 = 1/3
    result = rq.compute(predictions=[[True], [False], [True], [False]], item_ids=["a", "a", "a", "b"])
    assert math.isclose(result["rq_pass_rate"], 1 / 3) and result["n_items"] == 2 and result["n_rows"] == 4


def test_per_type_uses_the_same_fields_and_canonical_names(rq):
    result = rq.compute(predictions=[[True], [False], [True], [True]], item_ids=[1, 2, 3, 4],
                        interruption_types=["Topic Switch", "filler", "FILLER", "topic-switch"])
    assert list(result["per_type"]) == ["topic_switch", "filler"]
    assert result["per_type"]["topic_switch"] == {"rq_pass_rate": 1.0, "ci_low": 1.0, "ci_high": 1.0,
                                                  "n_items": 2, "n_rows": 2}
    assert result["per_type"]["filler"]["rq_pass_rate"] == 0.5


def test_tie_counts_half_and_verdicts_are_case_insensitive(tf):
    result = tf.compute(predictions=["Model", "baseline", "TIE", "model"])
    assert result["tf_win_rate"] == 0.625


def test_tf_grouping_matches_rq_grouping(tf):
    result = tf.compute(predictions=["model", "baseline", "model"], item_ids=[1, 1, 2],
                        interruption_types=["impatient", "impatient", "normal"])
    assert result["tf_win_rate"] == 0.75 and result["per_type"]["normal"]["tf_win_rate"] == 1.0


def test_bootstrap_is_seeded_and_resamples_items(rq):
    rows = [[bool(v)] for v in np.random.default_rng(1).integers(0, 2, 200)]
    first = rq.compute(predictions=rows, seed=7)
    again = rq.compute(predictions=rows, seed=7)
    other = rq.compute(predictions=rows, seed=8)
    assert (first["ci_low"], first["ci_high"]) == (again["ci_low"], again["ci_high"])
    assert (first["ci_low"], first["ci_high"]) != (other["ci_low"], other["ci_high"])
    # normal approximation for a proportion near 0.5 with n = 200: half-width about 0.07
    assert 0.05 < (first["ci_high"] - first["ci_low"]) / 2 < 0.09


def test_bootstrap_matches_a_plain_loop():
    values = np.random.default_rng(3).random(50)
    low, high = bootstrap.bootstrap_ci(values, n_bootstrap=500, seed=11)
    rng = np.random.default_rng(11)
    means = values[rng.integers(0, 50, size=(500, 50), dtype=np.int32)].mean(axis=1)
    assert (low, high) == tuple(np.quantile(means, [0.025, 0.975]))


@pytest.mark.parametrize("module,kwargs,message", [
    ("rq", dict(predictions=[]), r"predictions: empty input"),
    ("rq", dict(predictions=[[True], "yes"]), r"predictions\[1\]: expected a list"),
    ("rq", dict(predictions=[[True], []]), r"predictions\[1\]: no criterion verdicts"),
    ("rq", dict(predictions=[[True], [True, 1]]), r"predictions\[1\]\[1\]: expected a bool"),
    ("rq", dict(predictions=[[True]], item_ids=[1, 2]), r"item_ids: length 2 differs from predictions \(1\)"),
    ("rq", dict(predictions=[[True], [True]], interruption_types=["filler", "sarcasm"]),
     r"interruption_types\[1\]: unknown interruption type 'sarcasm'"),
    ("rq", dict(predictions=[[True], [True]], item_ids=["a", "a"], interruption_types=["filler", "normal"]),
     r"interruption_types\[1\]: item 'a' is 'normal' here but 'filler' at index 0"),
    ("rq", dict(predictions=[[True]], item_ids=[float("nan")]), r"item_ids\[0\]: missing item id"),
    ("rq", dict(predictions=[[True]], n_bootstrap=0), r"n_bootstrap: expected a positive integer"),
    # battery 24 nits: a list id was "unhashable type: 'list'", and 1 and "1" counted as two items
    ("rq", dict(predictions=[[True]], item_ids=[[1]]), r"item_ids\[0\]: expected a string or an integer, got list"),
    ("tf", dict(predictions=["model"], item_ids=[True]), r"item_ids\[0\]: expected a string or an integer, got bool"),
    ("rq", dict(predictions=[[True], [False]], item_ids=[1, "1"]), r"item_ids: mixes strings and integers"),
    ("tf", dict(predictions=["model", "judge_error"]), r"predictions\[1\]: expected 'model', 'baseline' or 'tie'"),
    ("tf", dict(predictions=["model", None]), r"predictions\[1\]"),
])
def test_bad_input_names_argument_and_index(rq, tf, module, kwargs, message):
    with pytest.raises(ValueError, match=message):
        (rq if module == "rq" else tf).compute(**kwargs)


def test_few_distinct_values_take_the_multinomial_path_with_the_same_distribution():
    """Resampling items is multinomial counts over distinct values: same interval, up to noise."""
    values = np.repeat([0.0, 1 / 3, 2 / 3, 1.0], [300, 200, 200, 300])
    low, high = bootstrap.bootstrap_ci(values, n_bootstrap=4000, seed=1)
    rng = np.random.default_rng(2)
    means = values[rng.integers(0, values.size, size=(4000, values.size))].mean(axis=1)
    plain_low, plain_high = np.quantile(means, [0.025, 0.975])
    assert abs(low - plain_low) < 0.004 and abs(high - plain_high) < 0.004
    assert low < values.mean() < high


rows = st.lists(st.tuples(st.integers(0, 8), st.sampled_from(["model", "baseline", "tie"]),
                          st.sampled_from(["normal", "impatient", "correction", "topic_switch", "filler", "pushback"])),
                min_size=1, max_size=40)


def _consistent(data):
    """One type per item (the first seen), as real data has."""
    first = {}
    return [(item, verdict, first.setdefault(item, kind)) for item, verdict, kind in data]


@settings(max_examples=60, deadline=None)
@given(rows, st.randoms(use_true_random=False))
def test_properties_rate_in_unit_interval_ci_contains_estimate_permutation_invariant(data, random):
    data = _consistent(data)
    scores = [{"model": 1.0, "baseline": 0.0, "tie": 0.5}[v] for _, v, _ in data]
    ids = [item for item, _, _ in data]
    types = [kind for _, _, kind in data]
    result = bootstrap.rate_with_types(scores, ids, types, 200, 0, "rate")
    for summary in [result, *result["per_type"].values()]:
        assert 0.0 <= summary["ci_low"] <= summary["rate"] <= summary["ci_high"] <= 1.0
    order = list(range(len(data)))
    random.shuffle(order)
    shuffled = bootstrap.rate_with_types([scores[i] for i in order], [ids[i] for i in order],
                                         [types[i] for i in order], 200, 0, "rate")
    assert math.isclose(shuffled["rate"], result["rate"])
    assert {k: round(v["rate"], 12) for k, v in shuffled["per_type"].items()} == \
           {k: round(v["rate"], 12) for k, v in result["per_type"].items()}


def test_numpy_booleans_are_verdicts_too(rq):
    # NumPy 2 names its bool type "bool", not "bool_": rows from a numpy array must still be accepted
    rows = [np.array([True, True]), np.array([True, False])]
    assert rq.compute(predictions=[list(row) for row in rows])["rq_pass_rate"] == 0.5


def test_the_difference_of_two_runs_has_an_unpaired_bootstrap_interval_per_type(rq):
    """A barge-in run beside its static run: different items, so each run is resampled on its own."""
    mine = [[True], [True], [False], [True], [False], [False]]
    kinds = ["filler", "filler", "filler", "pushback", "pushback", "pushback"]
    other = [[False], [True], [True], [True]]
    result = rq.compute(predictions=mine, item_ids=list("abcdef"), interruption_types=kinds,
                        compare_predictions=other, compare_item_ids=["s1", "s1", "s2", "s3"],
                        compare_interruption_types=["filler", "filler", "pushback", "correction"],
                        n_bootstrap=2000, seed=3)
    difference = result["difference"]
    assert math.isclose(difference["rq_pass_rate_difference"], 0.5 - 2.5 / 3)  # items: s1 averages its epochs
    assert difference["n_items"] == 6 and difference["n_items_compared"] == 3
    assert difference["ci_low"] < difference["rq_pass_rate_difference"] < difference["ci_high"]
    assert list(difference["per_type"]) == ["filler", "pushback"]  # correction: only the compared run has it
    assert math.isclose(difference["per_type"]["filler"]["rq_pass_rate_difference"], 2 / 3 - 0.5)
    pushback = difference["per_type"]["pushback"]
    assert math.isclose(pushback["rq_pass_rate_difference"], 1 / 3 - 1.0)
    assert (pushback["n_items"], pushback["n_items_compared"]) == (3, 1) and pushback["ci_low"] == -1.0
    # the interval is the percentile bootstrap of the difference, drawn by the shared helper
    low, high = bootstrap.difference_ci([1, 1, 0, 1, 0, 0], [0.5, 1, 1], 2000, 3)
    assert (difference["ci_low"], difference["ci_high"]) == (low, high)
    assert rq.compute(predictions=mine, compare_predictions=other, n_bootstrap=2000, seed=3)["difference"] == \
        rq.compute(predictions=mine, compare_predictions=other, n_bootstrap=2000, seed=3)["difference"]
    assert "difference" not in rq.compute(predictions=mine)


def test_a_bad_compared_run_is_named_as_such(rq):
    with pytest.raises(ValueError, match=r"compare_predictions\[1\]: no criterion verdicts"):
        rq.compute(predictions=[[True]], compare_predictions=[[True], []])
    with pytest.raises(ValueError, match=r"compare_interruption_types\[0\]: unknown interruption type"):
        rq.compute(predictions=[[True]], compare_predictions=[[True]], compare_interruption_types=["shout"])
