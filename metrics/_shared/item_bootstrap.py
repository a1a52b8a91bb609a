"""Per-item rates with a seeded percentile bootstrap, shared by `rq_pass_rate` and `tf_win_rate`.

Canonical copy lives in `metrics/_shared/`; each module folder links to it so the folder can be
pushed to the Hub on its own (the link is resolved on upload).

Rows that share an item id are epochs of one item: an item's score is the mean of its rows,
and the rate is the mean over items. The bootstrap resamples items, not rows, because epochs of
one item are not independent evidence.
"""
import math

import numpy as np

INTERRUPTION_TYPES = ("normal", "impatient", "correction", "topic_switch", "filler", "pushback")
_ALIASES = {"topicswitch": "topic_switch", "topic_change": "topic_switch", "topic_shift": "topic_switch",
            "backchannel": "filler", "push_back": "pushback", "corrections": "correction"}


def canonical_type(value, index):
    """Accept the official spellings ("Topic Switch", "topic-switch") of the six types."""
    if not isinstance(value, str):
        raise ValueError(f"interruption_types[{index}]: expected a string, got {type(value).__name__}")
    key = "_".join(value.strip().lower().replace("-", " ").replace("_", " ").split())
    key = _ALIASES.get(key, key)
    if key not in INTERRUPTION_TYPES:
        raise ValueError(f"interruption_types[{index}]: unknown interruption type {value!r}; "
                         f"expected one of {', '.join(INTERRUPTION_TYPES)}")
    return key


def check_grouping(n_rows, item_ids, interruption_types, n_bootstrap, seed, prefix=""):
    """Validate the optional per-row arguments; returns (item_ids, types) as lists or None.
    `prefix` names the arguments of a second set of rows (`compare_`)."""
    if n_rows == 0:
        raise ValueError(f"{prefix}predictions: empty input; at least one row is needed")
    for name, values in (("item_ids", item_ids), ("interruption_types", interruption_types)):
        if values is not None and len(values) != n_rows:
            raise ValueError(f"{prefix}{name}: length {len(values)} differs from {prefix}predictions ({n_rows})")
    if item_ids is not None:
        for index, value in enumerate(item_ids):
            if value is None or (isinstance(value, float) and math.isnan(value)) or \
                    (isinstance(value, str) and not value.strip()):
                raise ValueError(f"{prefix}item_ids[{index}]: missing item id")
            if isinstance(value, bool) or not isinstance(value, (str, int, np.integer)):
                # a list or a dict is no id (it cannot be grouped on), a float one only by accident
                raise ValueError(f"{prefix}item_ids[{index}]: expected a string or an integer, got "
                                 f"{type(value).__name__} {value!r:.60}")
        kinds = {type(value) for value in item_ids if isinstance(value, str)} | \
            {int for value in item_ids if not isinstance(value, str)}
        if len(kinds) > 1:  # 1 and "1" would count as two items
            raise ValueError(f"{prefix}item_ids: mixes strings and integers; give every id as one kind")
    types = None
    if interruption_types is not None:
        types = []
        for index, value in enumerate(interruption_types):
            try:
                types.append(canonical_type(value, index))
            except ValueError as error:
                raise ValueError(f"{prefix}{error}") from None
        if item_ids is not None:
            first = {}
            for index, (item, kind) in enumerate(zip(item_ids, types)):
                if first.setdefault(item, (kind, index))[0] != kind:
                    raise ValueError(f"{prefix}interruption_types[{index}]: item {item!r} is {kind!r} here but "
                                     f"{first[item][0]!r} at index {first[item][1]}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or n_bootstrap < 1:
        raise ValueError(f"n_bootstrap: expected a positive integer, got {n_bootstrap!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed: expected an integer, got {seed!r}")
    return (list(item_ids) if item_ids is not None else None), types


def item_means(row_scores, item_ids):
    """Epoch-averaged score per item, items in order of first appearance."""
    scores = np.asarray(row_scores, dtype=np.float64)
    if item_ids is None:
        return scores
    codes = {}
    index = np.fromiter((codes.setdefault(item, len(codes)) for item in item_ids), dtype=np.int64, count=len(item_ids))
    sums = np.bincount(index, weights=scores, minlength=len(codes))
    counts = np.bincount(index, minlength=len(codes))
    return sums / counts


def bootstrap_ci(values, n_bootstrap=1000, seed=0, confidence=0.95):
    """Percentile bootstrap of the mean, vectorized; resampling in blocks bounds memory.

    With very few resamples the percentile interval can miss the point estimate by resampling
    noise; the interval is then widened to include it, so `ci_low <= estimate <= ci_high` always.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    estimate = float(values.mean())
    if n == 1 or np.all(values == values[0]):
        return estimate, estimate
    means = _resampled_means(values, n_bootstrap, np.random.default_rng(seed))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(min(low, estimate)), float(max(high, estimate))


def _resampled_means(values, n_bootstrap, rng):
    """The mean of each of `n_bootstrap` resamples (with replacement) of `values`."""
    n = values.size
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size * 8 <= n:
        # Few distinct values (pass/fail averaged over a few epochs): drawing n items with
        # replacement is the same as drawing multinomial counts over the distinct values, which
        # costs B x K numbers instead of B x n.
        draws = rng.multinomial(n, counts / n, size=n_bootstrap)
        means = draws @ distinct / n
    else:
        means = np.empty(n_bootstrap, dtype=np.float64)
        # ~130k draws per block keeps indices and gathered values in cache: faster than one
        # big draw, and memory stays flat however many items there are.
        block = max(1, min(n_bootstrap, 131_072 // n))
        for start in range(0, n_bootstrap, block):
            stop = min(n_bootstrap, start + block)
            index = rng.integers(0, n, size=(stop - start, n), dtype=np.int32 if n < 2**31 else np.int64)
            means[start:stop] = values[index].mean(axis=1)
    return means


def difference_ci(values, other, n_bootstrap=1000, seed=0, confidence=0.95):
    """Percentile bootstrap of mean(values) - mean(other) for two samples of different items (two
    runs over different points): each is resampled on its own, unpaired, with one seeded generator.
    Widened to contain the estimate, as `bootstrap_ci`."""
    values, other = np.asarray(values, dtype=np.float64), np.asarray(other, dtype=np.float64)
    estimate = float(values.mean() - other.mean())
    rng = np.random.default_rng(seed)
    means = _resampled_means(values, n_bootstrap, rng) - _resampled_means(other, n_bootstrap, rng)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(min(low, estimate)), float(max(high, estimate))


def difference_with_types(scores, item_ids, types, other_scores, other_ids, other_types, n_bootstrap, seed, key):
    """`{key}_difference` (this rate minus the other's, over item-averaged scores), its interval,
    both item counts; `per_type` for the types both sides have, when both give types."""

    def entry(rows, other_rows):
        mine = item_means([scores[i] for i in rows], [item_ids[i] for i in rows] if item_ids is not None else None)
        theirs = item_means([other_scores[i] for i in other_rows],
                            [other_ids[i] for i in other_rows] if other_ids is not None else None)
        low, high = difference_ci(mine, theirs, n_bootstrap, seed)
        return {f"{key}_difference": float(mine.mean() - theirs.mean()), "ci_low": low, "ci_high": high,
                "n_items": int(mine.size), "n_items_compared": int(theirs.size)}

    result = entry(range(len(scores)), range(len(other_scores)))
    if types is not None and other_types is not None:
        result["per_type"] = {}
        for kind in INTERRUPTION_TYPES:
            rows = [i for i, t in enumerate(types) if t == kind]
            other_rows = [i for i, t in enumerate(other_types) if t == kind]
            if rows and other_rows:
                result["per_type"][kind] = entry(rows, other_rows)
    return result


def summarize(row_scores, item_ids, n_bootstrap, seed, key):
    """`{key, ci_low, ci_high, n_items, n_rows}` for one group of rows."""
    per_item = item_means(row_scores, item_ids)
    low, high = bootstrap_ci(per_item, n_bootstrap, seed)
    return {key: float(per_item.mean()), "ci_low": low, "ci_high": high,
            "n_items": int(per_item.size), "n_rows": int(len(row_scores))}


def rate_with_types(row_scores, item_ids, types, n_bootstrap, seed, key, return_items=False):
    """Overall summary, plus `per_type` (types in canonical order) when types are given, plus
    `per_item` (item id -> epoch-averaged score) when asked."""
    result = summarize(row_scores, item_ids, n_bootstrap, seed, key)
    if return_items:
        ids = list(dict.fromkeys(item_ids)) if item_ids is not None else list(range(len(row_scores)))
        result["per_item"] = dict(zip(ids, item_means(row_scores, item_ids).tolist()))
    if types is not None:
        per_type = {}
        for kind in INTERRUPTION_TYPES:
            rows = [i for i, t in enumerate(types) if t == kind]
            if rows:
                ids = [item_ids[i] for i in rows] if item_ids is not None else None
                per_type[kind] = summarize([row_scores[i] for i in rows], ids, n_bootstrap, seed, key)
        result["per_type"] = per_type
    return result


class RowCheckedMetric:
    """Mixin of the rq_pass_rate / tf_win_rate modules: raw rows are checked before evaluate
    converts them (so an error names the argument and the index), in one call or incrementally.

    Not itself an `evaluate.Metric`: evaluate loads the first Metric subclass it finds in a module's
    namespace, so only the module's own class may be one. The module sets `check_rows`.
    """

    check_rows = None

    def _check_no_config(self, name: str):
        """These metrics have one definition: a config name would be accepted by evaluate and mean
        nothing (the SID metrics, which have several, refuse an unknown one)."""
        if self.config_name != "default":
            raise ValueError(f"config_name: {self.config_name!r}, but {name} has no configurations; leave it out")

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Rows are checked as they arrive, so an error names the index in this batch."""
        type(self).check_rows(predictions)
        return super().add_batch(predictions=predictions, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """One row, checked as it arrives."""
        if "predictions" in kwargs or "references" in kwargs:  # add_batch's names: said, not read as a missing row
            raise ValueError("add() takes one row, as prediction= (and reference=); predictions= and references= "
                             "are add_batch()'s")
        type(self).check_rows([prediction])
        return super().add(prediction=prediction, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Check the raw rows first. Without predictions, the rows come from earlier `add` /
        `add_batch` calls (checked there)."""
        if "return_items" in kwargs and not isinstance(kwargs["return_items"], bool):
            raise ValueError(f"return_items: expected True or False, got {kwargs['return_items']!r}")
        for name in ("compare_item_ids", "compare_interruption_types"):
            if kwargs.get(name) is not None and kwargs.get("compare_predictions") is None:
                raise ValueError(f"{name}: given without compare_predictions, the rows it would group")
        if predictions is None:
            return super().compute(**kwargs)
        type(self).check_rows(predictions)
        check_grouping(len(predictions), kwargs.get("item_ids"), kwargs.get("interruption_types"),
                       kwargs.get("n_bootstrap", 1000), kwargs.get("seed", 0))
        return super().compute(predictions=predictions, **kwargs)
