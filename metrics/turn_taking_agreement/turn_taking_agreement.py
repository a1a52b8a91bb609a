"""Talking Turns turn-taking agreement metrics, as an `evaluate` metric module."""
import math
from collections.abc import Mapping

import datasets
import evaluate
import numpy as np

from .recordings import JUDGE_ORDER
from .recordings import LABELS
from .recordings import parse_recordings
from .recordings import _COLUMN
from .recordings import _EVENT_CODE
from .recordings import _TURN_CODE
from .wilson import wilson_interval

_CITATION = """\
@inproceedings{arora2025talkingturns,
  title     = {Talking Turns: Benchmarking Audio Foundation Models on Turn-Taking Dynamics},
  author    = {Arora, Siddhant and Lu, Zhiyun and Chiu, Chung-Cheng and Pang, Ruoming and Watanabe, Shinji},
  booktitle = {The Thirteenth International Conference on Learning Representations (ICLR)},
  year      = {2025},
  eprint    = {2503.01174},
  archivePrefix = {arXiv}
}
"""

_DESCRIPTION = """\
Turn-taking agreement from Talking Turns (Arora et al., 2025). A judge model trained on
human-human conversation gives, for every 40 ms chunk of a human-AI recording, five likelihoods
of what should happen next: continuation (C), silence (NA), interruption (I), backchannel (BC)
and turn change (T). Where the AI system made a turn-taking decision of a given kind (speak up
after the user paused, backchannel, interrupt, keep or yield the floor after its own pause,
yield or not to a user interruption), the judge's likelihoods are turned into a label with a
tuned threshold, and the metric is the share of the system's decisions that the judge agrees
with, per decision class, with a 95 % Wilson score interval.

The `single_label` configuration instead labels every chunk with the judge's operating points
and compares those labels with the system's decisions: a confusion matrix and per-label F1.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `list` of `float`): one row per recording, one entry per
        40 ms chunk, each the judge's 5 likelihoods (each in [0, 1]) in the order C, NA, I, BC, T.
    references (`list` of `dict`): one dict per recording with
        - `events` (`list` of `str`): the system's actual event in each chunk, one of NA, C, T,
          I, BC (`IN` is read as `I`);
        - `turns` (`list` of `str`): who held the floor before each chunk: A (the AI), B (the
          human), AB (A held it and B started overlapping), BA (the reverse) or NA;
        - `end_times` (`list` of `float`): each chunk's end time in seconds, or `[]` for
          contiguous chunks ending at 0.2 + 0.04 * (i + 1) s. Consecutive end times that are not
          0.04 s apart (within 1e-6 s) mark a gap that no look-back crosses.
    metric (`str`, default configuration only): speak_up, backchannel, interrupt, convey_turn
        or handle_interruption.
    thresholds (`dict`, optional): overrides of the judge's thresholds. Default configuration:
        metric name -> threshold (defaults speak_up 0, backchannel 0.1, interrupt -0.45,
        convey_turn 0, handle_interruption -0.1). `single_label`: label (C, NA, I, BC, T) ->
        operating point (defaults C 0.2, NA 0.45, I 0.4, BC 0.4, T 0.4).
Returns:
    Default configuration:
        metric (`str`), threshold (`float`): what was scored.
        n_instances (`int`): instances of the metric over all recordings.
        one entry per decision class of the metric (speak_up, convey_turn, handle_interruption:
        "C" and "T"; backchannel: "BC" and "not_BC"; interrupt: "I" and "C"), each a dict:
            agreement (`float` in [0, 1] or None): share of the class's instances where the
                judge label equals the system's decision; None when the class has no instance.
            n (`int`): instances of the class.
            ci_low, ci_high (`float` in [0, 1] or None): 95 % Wilson score interval.
    `single_label` configuration:
        labels (`list` of `str`): NA, C, T, I, BC, the order of every matrix axis.
        confusion_matrix (`list` of `list` of `int`): rows = judge label, columns = system event.
        confusion_matrix_row_normalized (`list` of `list` of `float`): each row divided by its
            sum; a row with no chunk stays all zeros.
        f1 (`dict`): label -> binary F1 of that label against the rest, in [0, 1]; None when
            neither the judge nor the system used the label.
        macro_f1 (`float` or None): mean of the F1 values that are not None.
        n_chunks (`int`): chunks scored.
Examples:
    >>> tt = evaluate.load("turn_taking_agreement")
    >>> silence, speak, wait = [0.1, 0.8, 0.0, 0.0, 0.1], [0.2, 0.1, 0.0, 0.0, 0.7], [0.6, 0.3, 0.0, 0.0, 0.1]
    >>> predictions = [[silence, silence, silence, silence, speak],
    ...                [silence, silence, silence, silence, speak]]
    >>> references = [{"events": ["C", "NA", "NA", "NA", "T"], "turns": ["B"] * 5, "end_times": []},
    ...               {"events": ["C", "NA", "NA", "NA", "C"], "turns": ["B"] * 5, "end_times": []}]
    >>> result = tt.compute(predictions=predictions, references=references, metric="speak_up")
    >>> result["n_instances"], result["T"]["agreement"], result["C"]["agreement"], result["C"]["n"]
    (2, 1.0, 0.0, 1)
    >>> round(result["T"]["ci_low"], 4), result["T"]["ci_high"]
    (0.2065, 1.0)
    >>> labeler = evaluate.load("turn_taking_agreement", "single_label")
    >>> result = labeler.compute(predictions=[[silence, speak, wait]],
    ...                          references=[{"events": ["NA", "T", "T"], "turns": ["B", "B", "A"], "end_times": []}])
    >>> result["labels"], result["confusion_matrix"][1]
    (['NA', 'C', 'T', 'I', 'BC'], [0, 0, 1, 0, 0])
    >>> {label: None if f1 is None else round(f1, 4) for label, f1 in result["f1"].items()}
    {'NA': 1.0, 'C': 0.0, 'T': 0.6667, 'I': None, 'BC': None}
    >>> round(result["macro_f1"], 4)
    0.5556
"""



DEFAULT_THRESHOLDS = {"speak_up": 0.0, "backchannel": 0.1, "interrupt": -0.45, "convey_turn": 0.0,
                      "handle_interruption": -0.1}
OPERATING_POINTS = {"C": 0.2, "NA": 0.45, "I": 0.4, "BC": 0.4, "T": 0.4}
# First match wins, so the order is part of the labelling rule, not a presentation choice.
_CASCADE = ("C", "NA", "I", "BC", "T")

# floor holder at k; event that k-1 .. k-depth must (or, with `negate`, must not) all show;
# the two decision classes (positive first: the one the judge's score argues for); the judge
# score is p[positive] - p[rival], or p[positive] alone when there is no rival.
_METRICS = {
    "speak_up": {"turn": "B", "history": "NA", "depth": 3, "negate": False,
                 "positive": "T", "rival": "C", "classes": ("C", "T")},
    "backchannel": {"turn": "B", "history": "BC", "depth": 1, "negate": True,
                    "positive": "BC", "rival": None, "classes": ("BC", "not_BC")},
    "interrupt": {"turn": "B", "history": "C", "depth": 1, "negate": False,
                  "positive": "I", "rival": "C", "classes": ("I", "C")},
    "convey_turn": {"turn": "A", "history": "NA", "depth": 3, "negate": False,
                    "positive": "T", "rival": "C", "classes": ("C", "T")},
    "handle_interruption": {"turn": "AB", "history": "I", "depth": 3, "negate": False,
                            "positive": "T", "rival": "C", "classes": ("C", "T")},
}


def _shift(values, steps, fill):
    shifted = np.full_like(values, fill)
    shifted[steps:] = values[:-steps]
    return shifted


def _history_holds(events, reach, event, depth, negate):
    """Whether the `depth` chunks before each chunk all show (or all avoid) `event`."""
    match = (events != _EVENT_CODE[event]) if negate else (events == _EVENT_CODE[event])
    holds = reach >= depth
    for steps in range(1, depth + 1):
        holds &= _shift(match, steps, False)
    return holds


def _class_summary(agree, in_class):
    n = int(in_class.sum())
    successes = int(agree[in_class].sum())
    low, high = wilson_interval(successes, n)
    return {"agreement": successes / n if n else None, "n": n, "ci_low": low, "ci_high": high}


def agreement(likelihoods, events, turns, reach, metric, threshold):
    """Agreement pooled over recordings, as the paper reports it, but kept apart per decision
    class: the classes are very unbalanced, and a pooled share would hide the rare decisions."""
    spec = _METRICS[metric]
    instance = turns == _TURN_CODE[spec["turn"]]
    instance &= _history_holds(events, reach, spec["history"], spec["depth"], spec["negate"])
    score = likelihoods[:, _COLUMN[spec["positive"]]]
    if spec["rival"] is not None:
        score = score - likelihoods[:, _COLUMN[spec["rival"]]]
        # Only the two named decisions are instances; other events are not a choice between them.
        instance &= np.isin(events, [_EVENT_CODE[spec["positive"]], _EVENT_CODE[spec["rival"]]])
    judge_positive = score > threshold
    system_positive = events == _EVENT_CODE[spec["positive"]]
    agree = judge_positive == system_positive
    result = {"metric": metric, "threshold": float(threshold), "n_instances": int(instance.sum())}
    for name in spec["classes"]:
        wanted = system_positive if name == spec["positive"] else ~system_positive
        result[name] = _class_summary(agree, instance & wanted)
    return result


def judge_labels(likelihoods, operating_points):
    """Single label per chunk (codes in LABELS order) by the first-match cascade; a chunk that
    passes no operating point takes its most likely label (ties: the earlier of C, NA, I, BC, T)."""
    labels = np.full(len(likelihoods), -1, dtype=np.int64)
    for name in _CASCADE:
        take = (labels < 0) & (likelihoods[:, _COLUMN[name]] > operating_points[name])
        labels[take] = _EVENT_CODE[name]
    rest = labels < 0
    column_to_label = np.array([_EVENT_CODE[name] for name in JUDGE_ORDER])
    labels[rest] = column_to_label[np.argmax(likelihoods[rest], axis=1)]
    return labels


def single_label(likelihoods, events, operating_points):
    """Confusion matrix and per-label F1, judge labels as the reference: the judge stands in for
    the missing human ground truth. F1 is None for a label neither side used, since there is
    nothing to score (the reference's 1.0 there inflates the mean)."""
    size = len(LABELS)
    judge = judge_labels(likelihoods, operating_points)
    matrix = np.bincount(judge * size + events, minlength=size * size).reshape(size, size)
    row_sums = matrix.sum(axis=1, keepdims=True)
    normalized = np.divide(matrix, row_sums, out=np.zeros((size, size)), where=row_sums > 0)
    f1 = {}
    for code, name in enumerate(LABELS):
        used = row_sums[code, 0] + matrix[:, code].sum()
        f1[name] = float(2 * matrix[code, code] / used) if used else None
    present = [value for value in f1.values() if value is not None]
    return {"labels": list(LABELS), "confusion_matrix": matrix.tolist(),
            "confusion_matrix_row_normalized": normalized.tolist(), "f1": f1,
            "macro_f1": float(np.mean(present)) if present else None, "n_chunks": int(len(events))}


def _threshold_overrides(thresholds, allowed, what, low, high):
    """`low`..`high`: where the judge's score can lie (a likelihood, or a difference of two); a threshold
    beyond it makes every decision the same, which reads as a measured agreement."""
    if thresholds is None:
        return {}
    if not isinstance(thresholds, Mapping):
        raise ValueError(f"thresholds: expected a dict of {what} -> number, got {type(thresholds).__name__}")
    for key, value in thresholds.items():
        if key not in allowed:
            raise ValueError(f"thresholds[{key!r}]: unknown {what}; expected one of {', '.join(allowed)}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(value):
            raise ValueError(f"thresholds[{key!r}]: expected a finite number, got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"thresholds[{key!r}]: {value!r} is outside [{low:g}, {high:g}], where the judge's "
                             "score lies; every decision would be the same")
    return {key: float(value) for key, value in thresholds.items()}


def check_options(config_name, metric, thresholds):
    """Threshold (default config) or operating points (single_label) that will be used."""
    if config_name == "single_label":
        if metric is not None:
            raise ValueError("metric: not used by the single_label configuration, which labels every chunk")
        return {**OPERATING_POINTS, **_threshold_overrides(thresholds, tuple(OPERATING_POINTS), "label", 0, 1)}
    if metric is None:
        raise ValueError(f"metric: required; one of {', '.join(_METRICS)}")
    if metric not in _METRICS:
        raise ValueError(f"metric: unknown metric {metric!r}; expected one of {', '.join(_METRICS)}")
    return {**DEFAULT_THRESHOLDS, **_threshold_overrides(thresholds, tuple(_METRICS), "metric", -1, 1)}[metric]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TurnTakingAgreement(evaluate.Metric):
    def _info(self):
        if self.config_name not in ("default", "single_label"):
            raise ValueError(f"config_name: unknown configuration {self.config_name!r}; "
                             f"expected 'default' or 'single_label'")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Sequence(datasets.Sequence(datasets.Value("float64"))),
                "references": {
                    "events": datasets.Sequence(datasets.Value("string")),
                    "turns": datasets.Sequence(datasets.Value("string")),
                    "end_times": datasets.Sequence(datasets.Value("float64")),
                },
            }),
            reference_urls=["https://arxiv.org/abs/2503.01174"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Check the raw inputs first, so errors name the argument and the index before
        evaluate's own conversion turns them into less specific messages."""
        unknown = sorted(set(kwargs) - {"metric", "thresholds"})
        if unknown:
            raise ValueError(f"{unknown[0]}: unknown argument; expected metric and thresholds")
        check_options(self.config_name, kwargs.get("metric"), kwargs.get("thresholds"))
        self._parsed = None
        if predictions is not None or references is not None:
            # parsed once: evaluate hands _compute the same rows back after its Arrow round trip
            self._parsed = parse_recordings(predictions, references)
        try:
            return super().compute(predictions=predictions, references=references, **kwargs)
        finally:
            self._parsed = None

    def _compute(self, predictions, references, metric=None, thresholds=None):
        setting = check_options(self.config_name, metric, thresholds)
        parsed = getattr(self, "_parsed", None)  # None after add/add_batch: parse what was accumulated
        likelihoods, events, turns, reach = parsed if parsed is not None else parse_recordings(predictions, references)
        if self.config_name == "single_label":
            return single_label(likelihoods, events, setting)
        return agreement(likelihoods, events, turns, reach, metric, setting)
