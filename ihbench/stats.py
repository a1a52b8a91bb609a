"""Statistics the reports use beside the metric modules: depth slopes, t-tests, TOST, agreement.

These compare runs (models, judges, modalities) rather than score one, so they live on the
orchestration side; the scores themselves come only from `metrics/`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.argtypes import number, whole
from ihbench.dataset.argtypes import seed as seed_type
from ihbench.dataset.errors import UsageError


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float
    n: int


@dataclass(frozen=True)
class LogisticFit:
    intercept: float
    slope: float  # change in log-odds per unit of x (per user turn of depth)
    n: int
    converged: bool


def _vector(values, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):  # a string, None, a ragged list: said as the others are, naming the item
        bad = next((i for i, value in enumerate(values) if not _is_number(value)), 0) \
            if isinstance(values, (list, tuple)) else None
        where = f"{name}[{bad}]" if bad is not None else name
        raise UsageError(f"{where}: not a number") from None
    if array.ndim != 1 or array.size == 0:
        raise UsageError(f"{name}: expected a non-empty 1-D sequence of numbers")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise UsageError(f"{name}[{bad[0]}]: not a finite number")
    return array


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _setting(kind, name: str, value):
    """A parameter checked by an option's rule (`argtypes`), numpy scalars taken as the numbers they
    are: a seed of -1 was numpy's own error, a mean of inf a p-value of 0, max_iter=0 a fit never made."""
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    return kind.check(name, value)


def _same_length(a: np.ndarray, b: np.ndarray, names: str) -> None:
    if a.size != b.size:
        raise UsageError(f"{names}: lengths differ ({a.size} vs {b.size})")


def logistic_slope(x: Sequence[float], y: Sequence[float], *, max_iter: int = 100, tol: float = 1e-10) -> LogisticFit:
    """Maximum-likelihood logistic regression of y (0/1, or epoch-averaged fractions) on x.

    Newton-Raphson on two parameters. When the outcome is perfectly separated by x the MLE does
    not exist; the fit then reports `converged=False` instead of a huge meaningless slope.
    """
    max_iter = _setting(whole(min=1), "max_iter", max_iter)
    tol = _setting(number(min=0, min_open=True), "tol", tol)
    x, y = _vector(x, "x"), _vector(y, "y")
    _same_length(x, y, "x, y")
    if np.any((y < 0) | (y > 1)):
        raise UsageError(f"y[{int(np.flatnonzero((y < 0) | (y > 1))[0])}]: outcomes must be in [0, 1]")
    design = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-design @ beta))
        weights = p * (1.0 - p)
        hessian = design.T @ (design * weights[:, None])
        if np.linalg.cond(hessian) > 1e12:
            return LogisticFit(float(beta[0]), float(beta[1]), int(x.size), False)
        step = np.linalg.solve(hessian, design.T @ (y - p))
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            return LogisticFit(float(beta[0]), float(beta[1]), int(x.size), True)
    return LogisticFit(float(beta[0]), float(beta[1]), int(x.size), False)


def one_sample_t_test(values: Sequence[float], mean: float = 0.0) -> TestResult:
    """Are per-model depth slopes different from zero (the paper's test)?"""
    from scipy import stats

    mean = _setting(number(), "mean", mean)
    values = _vector(values, "values")
    if values.size < 2:
        raise UsageError("values: need at least 2 for a t-test")
    result = stats.ttest_1samp(values, mean)
    return TestResult(float(result.statistic), float(result.pvalue), int(values.size))


def welch_t_test(a: Sequence[float], b: Sequence[float]) -> TestResult:
    """Two groups with unequal variances (closed- vs open-weight slopes)."""
    from scipy import stats

    a, b = _vector(a, "a"), _vector(b, "b")
    if a.size < 2 or b.size < 2:
        raise UsageError("a, b: need at least 2 values in each group")
    result = stats.ttest_ind(a, b, equal_var=False)
    return TestResult(float(result.statistic), float(result.pvalue), int(a.size + b.size))


@dataclass(frozen=True)
class TostResult:
    mean_difference: float
    margin: float
    p_lower: float  # H0: difference <= -margin
    p_upper: float  # H0: difference >= +margin
    p_value: Optional[float]  # max of the two: equivalence is shown when it is below alpha; None: not testable
    n: int

    def equivalent(self, alpha: float = 0.05) -> bool:
        return self.p_value is not None and self.p_value < alpha


def tost_paired(a: Sequence[float], b: Sequence[float], margin: float) -> TostResult:
    """Two one-sided tests on paired differences a - b (audio vs text of the same items)."""
    from scipy import stats

    a, b = _vector(a, "a"), _vector(b, "b")
    _same_length(a, b, "a, b")
    margin = _setting(number(min=0, min_open=True), "margin", margin)
    diff = a - b
    n = diff.size
    if n < 2:
        raise UsageError("a, b: need at least 2 pairs")
    mean = float(diff.mean())
    se = float(diff.std(ddof=1) / np.sqrt(n))
    if se == 0.0:  # every paired difference equal: no variance to test with, and p = 0 would read as proof
        return TostResult(mean, margin, None, None, None, n)
    p_lower = float(stats.t.sf((mean + margin) / se, n - 1))
    p_upper = float(stats.t.cdf((mean - margin) / se, n - 1))
    return TostResult(mean, margin, p_lower, p_upper, max(p_lower, p_upper), n)


def cohen_kappa(a: Sequence, b: Sequence) -> Optional[float]:
    """Agreement of two raters beyond chance; None when chance agreement is already perfect."""
    if len(a) != len(b):
        raise UsageError(f"a, b: lengths differ ({len(a)} vs {len(b)})")
    if len(a) == 0:
        raise UsageError("a, b: empty input")
    for name, labels_given in (("a", a), ("b", b)):  # NaN != NaN: each would be a label of its own
        bad = next((i for i, label in enumerate(labels_given) if label is None or
                    isinstance(label, (float, np.floating)) and not np.isfinite(label)), None)
        if bad is not None:
            raise UsageError(f"{name}[{bad}]: not a label ({labels_given[bad]!r})")
    labels = sorted(set(a) | set(b), key=str)
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for left, right in zip(a, b):
        table[index[left], index[right]] += 1
    total = table.sum()
    observed = np.trace(table) / total
    expected = float((table.sum(axis=0) * table.sum(axis=1)).sum() / total**2)
    if expected == 1.0:
        return None
    return float((observed - expected) / (1.0 - expected))


def spearman(a: Sequence[float], b: Sequence[float]) -> TestResult:
    from scipy import stats

    a, b = _vector(a, "a"), _vector(b, "b")
    _same_length(a, b, "a, b")
    result = stats.spearmanr(a, b)
    return TestResult(float(result.statistic), float(result.pvalue), int(a.size))


def pearson(a: Sequence[float], b: Sequence[float]) -> TestResult:
    from scipy import stats

    a, b = _vector(a, "a"), _vector(b, "b")
    _same_length(a, b, "a, b")
    result = stats.pearsonr(a, b)
    return TestResult(float(result.statistic), float(result.pvalue), int(a.size))


def spearman_permutation(a: Sequence[float], b: Sequence[float], *, n_resamples: int = 9999,
                         seed: int = 0) -> TestResult:
    """Spearman's rho with a two-sided permutation p-value, for correlations across a handful of
    models: scipy's t-approximation is far off there (three models in perfect order get p = 0; the
    exact p is 1/3). Exact over every pairing when n! <= n_resamples (n <= 7 by default), else
    `n_resamples` seeded random pairings. Rho is Pearson's r of the ranks (ties get average ranks),
    which is scipy's spearmanr."""
    from scipy import stats

    n_resamples = _setting(whole(min=1), "n_resamples", n_resamples)
    seed = _setting(seed_type(), "seed", seed)
    a, b = _vector(a, "a"), _vector(b, "b")
    _same_length(a, b, "a, b")
    if a.size < 3:
        raise UsageError("a, b: need at least 3 pairs")
    ranks_b = stats.rankdata(b) - (a.size + 1) / 2

    def rho(ranks_a, axis=-1):
        centred = ranks_a - (a.size + 1) / 2
        return (centred * ranks_b).sum(axis=axis) / np.sqrt((centred ** 2).sum(axis=axis) * (ranks_b ** 2).sum())

    if np.all(ranks_b == 0) or np.all(a == a[0]):
        raise UsageError("a, b: a constant sequence has no ranking")
    result = stats.permutation_test((stats.rankdata(a),), rho, permutation_type="pairings", vectorized=True,
                                    n_resamples=n_resamples, rng=np.random.default_rng(seed))
    return TestResult(float(result.statistic), float(result.pvalue), int(a.size))
