"""ihbench.stats: the comparisons reports make (depth slope, t-tests, TOST, kappa, correlations)."""
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from ihbench import stats


def test_logistic_slope_solves_the_score_equations():
    rng = np.random.default_rng(0)
    depth = rng.integers(0, 20, 400).astype(float)
    outcome = (rng.random(400) < 1 / (1 + np.exp(-(1.0 - 0.08 * depth)))).astype(float)
    fit = stats.logistic_slope(depth, outcome)
    assert fit.converged and fit.n == 400
    p = 1 / (1 + np.exp(-(fit.intercept + fit.slope * depth)))
    assert abs(np.sum(outcome - p)) < 1e-6 and abs(np.sum(depth * (outcome - p))) < 1e-6
    assert -0.15 < fit.slope < -0.02  # the generating slope is -0.08


def test_logistic_slope_accepts_epoch_averaged_fractions():
    fit = stats.logistic_slope([0, 0, 1, 1, 2, 2], [1, 2 / 3, 2 / 3, 1 / 3, 1 / 3, 0])
    assert fit.converged and fit.slope < 0


def test_perfect_separation_is_reported_not_hidden():
    fit = stats.logistic_slope([0, 1, 2, 3], [1, 1, 0, 0])
    assert not fit.converged


def test_t_tests_match_scipy():
    slopes = [-0.05, -0.02, -0.04, 0.01, -0.03]
    result = stats.one_sample_t_test(slopes)
    expected = scipy_stats.ttest_1samp(slopes, 0)
    assert math.isclose(result.statistic, expected.statistic) and math.isclose(result.p_value, expected.pvalue)
    welch = stats.welch_t_test([-0.05, -0.06, -0.04], [-0.01, 0.0, -0.02, -0.015])
    expected = scipy_stats.ttest_ind([-0.05, -0.06, -0.04], [-0.01, 0.0, -0.02, -0.015], equal_var=False)
    assert math.isclose(welch.p_value, expected.pvalue)


def test_tost_by_hand():
    # differences 0.01, -0.01, 0.02, 0.0: mean 0.005, sd 0.01291, se 0.006455, df 3
    a = [0.51, 0.49, 0.52, 0.50]
    b = [0.50, 0.50, 0.50, 0.50]
    result = stats.tost_paired(a, b, margin=0.05)
    se = np.std(np.subtract(a, b), ddof=1) / 2
    assert math.isclose(result.p_lower, scipy_stats.t.sf((0.005 + 0.05) / se, 3))
    assert math.isclose(result.p_upper, scipy_stats.t.cdf((0.005 - 0.05) / se, 3))
    assert result.equivalent(0.05)
    assert not stats.tost_paired(a, b, margin=0.004).equivalent(0.05)


def test_tost_with_no_variance_is_not_testable():
    """Battery 17, M15: five items whose every paired difference is 0 gave "TOST p = 0 → equivalent": with no
    variance the test is degenerate, not a proof of equivalence."""
    result = stats.tost_paired([1, 0, 1, 1, 0], [1, 0, 1, 1, 0], margin=0.05)
    assert result.p_value is None and not result.equivalent(0.05) and result.mean_difference == 0.0


def test_cohen_kappa_by_hand():
    # table [[20, 5], [10, 15]]: po = 0.7, pe = (30*25 + 20*25)/2500 = 0.5, kappa = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert math.isclose(stats.cohen_kappa(a, b), 0.4)
    assert stats.cohen_kappa(["x", "x"], ["x", "x"]) is None


def test_correlations_match_scipy():
    a, b = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    assert math.isclose(stats.spearman(a, b).statistic, scipy_stats.spearmanr(a, b).statistic)
    assert math.isclose(stats.pearson(a, b).p_value, scipy_stats.pearsonr(a, b).pvalue)


@pytest.mark.parametrize("call,message", [
    (lambda: stats.logistic_slope([0, 1], [0, float("nan")]), r"y\[1\]: not a finite number"),
    (lambda: stats.logistic_slope([0, 1], [0, 2]), r"y\[1\]: outcomes must be in \[0, 1\]"),
    (lambda: stats.tost_paired([1, 2], [1], 0.1), "lengths differ"),
    (lambda: stats.tost_paired([1, 2], [1, 2], -1), "margin: expected a number > 0, got -1"),
    (lambda: stats.cohen_kappa([], []), "empty input"),
])
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
