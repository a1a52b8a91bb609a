"""SID-Bench scoring (FIR, IRL, APT) shared by the `fir`, `irl` and `apt` modules.

Canonical copy in `metrics/_shared/`; each module folder links to it. The three modules compute
the same table of outcomes and differ only in which number they put first, so a user who loads
`apt` still sees FIR and IRL beside it.

Two definitions, chosen by config name:
- `notebook` (default): the rule of SID-Bench's reference notebook, which produced the published
  numbers. Per row, first match wins: within tolerance -> 0; both "no break" -> 0; truth "no
  break", prediction "break" -> false alarm, penalty = duration; truth "break", prediction "no
  break" -> miss, penalty = duration - break_time; both "break" and predicted at or after the truth
  -> late hit, penalty = delay; predicted before the truth -> false alarm (early), penalty =
  duration. FIR = false alarms / all rows; IRL = mean delay of late hits; APT = mean penalty.
- `readme`: SID-Bench README's wording. FIR = false alarms on non-break clips / non-break clips;
  IRL = mean |predicted - true| over true positives (both "break", within tolerance). APT as above.
"""
import math

import datasets
import evaluate
import numpy as np

DEFINITIONS = ("notebook", "readme")

PREDICTION_FEATURES = {"total_nonbreak": datasets.Value("bool"), "break_time": datasets.Value("float64")}
REFERENCE_FEATURES = {"total_nonbreak": datasets.Value("bool"), "break_time": datasets.Value("float64"),
                      "duration": datasets.Value("float64")}

CITATION = """\
@misc{xia2026sid,
  title         = {Semantic-Aware Interruption Detection in Spoken Dialogue Systems: Benchmark, Metric, and Model},
  author        = {Kangxiang Xia and Bingshen Mu and Xian Shi and Jin Xu and Lei Xie},
  year          = {2026},
  eprint        = {2603.24144},
  archivePrefix = {arXiv},
  primaryClass  = {cs.SD}
}
"""

KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `dict`): per clip, the detector's output {"total_nonbreak": bool,
        "break_time": float seconds}. When total_nonbreak is True, give break_time -1, as SID-Bench
        files do: the reference notebook compares the times before the flags, so a "no break"
        prediction whose break_time lies within tolerance of the true break counts as a hit, in
        both definitions. A break_time past the clip's duration (a detector that waited for
        trailing silence) is scored as a late detection, as the reference notebook does. Other
        keys of a row (a dataset row's audio or id) are left out.
    references (`list` of `dict`): per clip, the ground truth {"total_nonbreak": bool,
        "break_time": float, "duration": float}, aligned with predictions (join by audio file
        first). SID-Bench stores break_time == duration on non-break clips; that is accepted.
        Other keys are left out, so a SID config's rows can be given as they are.
    tolerance (`float`, default 0.05): a prediction within +-tolerance seconds of the true break
        counts as exact (checked as `true - tol <= predicted <= true + tol`, as the notebook does).
Returns:
    fir (`float` in [0, 1] or None): false interruption rate (lower is better).
    irl (`float` >= 0 seconds, or None when nothing qualifies): interruption response latency.
    apt (`float` >= 0 seconds): average penalty time over all clips.
    definition (`str`): "notebook" or "readme".
    n_clips, n_break, n_nonbreak (`int`): clips, and clips whose truth has / has no break.
    false_alarms (`int`): all false alarms (on non-break clips and early detections).
    false_alarms_nonbreak (`int`), early_detections (`int`): the two kinds of false alarm.
    misses (`int`), hits_within_tolerance (`int`), late_hits (`int`), correct_rejections (`int`).
    predictions_past_duration (`int`): break predictions later than the clip's end.
Examples:
    >>> module = evaluate.load("{name}")
    >>> predictions = [{"total_nonbreak": False, "break_time": 1.02}, {"total_nonbreak": False, "break_time": 2.5},
    ...                {"total_nonbreak": True, "break_time": -1.0}, {"total_nonbreak": False, "break_time": 0.4}]
    >>> references = [{"total_nonbreak": False, "break_time": 1.0, "duration": 3.0},
    ...               {"total_nonbreak": False, "break_time": 2.0, "duration": 4.0},
    ...               {"total_nonbreak": False, "break_time": 1.5, "duration": 2.0},
    ...               {"total_nonbreak": True, "break_time": 5.0, "duration": 5.0}]
    >>> result = module.compute(predictions=predictions, references=references)
    >>> result["fir"], result["irl"], result["apt"]
    (0.25, 0.5, 1.5)
    >>> result = evaluate.load("{name}", "readme").compute(predictions=predictions, references=references)
    >>> result["fir"], round(result["irl"], 6), result["apt"]
    (1.0, 0.02, 1.5)
"""


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise ValueError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _flag(value, where):
    if not isinstance(value, (bool, np.bool_)):  # NumPy 2 names its bool type "bool"
        raise ValueError(f"{where}: expected a bool, got {value!r}")
    return bool(value)


def check_tolerance(tolerance):
    _number(tolerance, "tolerance")
    if tolerance < 0:
        raise ValueError(f"tolerance: must be >= 0, got {tolerance}")


def check_inputs(predictions, references):
    """Validate raw rows; errors name the argument, the index and the field."""
    if predictions is None or references is None:
        raise ValueError("predictions and references: both are required")
    if len(predictions) == 0:
        raise ValueError("predictions: empty input; at least one clip is needed")
    if len(predictions) != len(references):
        raise ValueError(f"predictions has {len(predictions)} rows but references has {len(references)}")
    for index, (prediction, reference) in enumerate(zip(predictions, references)):
        for name, row, fields in (("predictions", prediction, PREDICTION_FEATURES),
                                  ("references", reference, REFERENCE_FEATURES)):
            if not isinstance(row, dict):
                raise ValueError(f"{name}[{index}]: expected a dict with {', '.join(fields)}")
            missing = [field for field in fields if field not in row]
            if missing:
                raise ValueError(f"{name}[{index}]: missing {', '.join(missing)}")
        truth_nonbreak = _flag(reference["total_nonbreak"], f"references[{index}]['total_nonbreak']")
        duration = _number(reference["duration"], f"references[{index}]['duration']")
        truth_time = _number(reference["break_time"], f"references[{index}]['break_time']")
        if duration <= 0:
            raise ValueError(f"references[{index}]['duration']: must be > 0, got {duration}")
        if truth_time > duration:
            raise ValueError(f"references[{index}]['break_time']: {truth_time} is past the clip's duration {duration}")
        if truth_time < 0 and not (truth_nonbreak and truth_time == -1):
            raise ValueError(f"references[{index}]['break_time']: negative time {truth_time}")
        predicted_nonbreak = _flag(prediction["total_nonbreak"], f"predictions[{index}]['total_nonbreak']")
        predicted_time = _number(prediction["break_time"], f"predictions[{index}]['break_time']")
        if not predicted_nonbreak and predicted_time < 0:
            raise ValueError(f"predictions[{index}]['break_time']: negative time {predicted_time} on a break prediction")


def only_fields(rows, fields):
    """The scored fields of each row: `evaluate` encodes rows by the module's features and fails
    with a bare KeyError on any other key (a dataset row's audio, id)."""
    return [{field: row[field] for field in fields} for row in rows]


def _mean(values):
    """Left-to-right sum, as the reference notebook does, so published numbers match bit for bit."""
    return sum(values) / len(values) if values else None


def score(predictions, references, tolerance=0.05, definition="notebook"):
    if definition not in DEFINITIONS:
        raise ValueError(f"config_name: unknown definition {definition!r}; expected one of {', '.join(DEFINITIONS)}")
    penalties, delays, exact_errors = [], [], []
    counts = dict(false_alarms_nonbreak=0, early_detections=0, misses=0, hits_within_tolerance=0,
                  late_hits=0, correct_rejections=0)
    for prediction, reference in zip(predictions, references):
        truth_nonbreak, truth = reference["total_nonbreak"], reference["break_time"]
        predicted_nonbreak, predicted = prediction["total_nonbreak"], prediction["break_time"]
        duration = reference["duration"]
        if truth - tolerance <= predicted <= truth + tolerance:
            counts["hits_within_tolerance"] += 1
            penalties.append(0.0)
            if not truth_nonbreak and not predicted_nonbreak:
                exact_errors.append(abs(predicted - truth))
        elif predicted_nonbreak and truth_nonbreak:
            counts["correct_rejections"] += 1
            penalties.append(0.0)
        elif truth_nonbreak:
            counts["false_alarms_nonbreak"] += 1
            penalties.append(duration)
        elif predicted_nonbreak:
            counts["misses"] += 1
            penalties.append(duration - truth)
        elif predicted >= truth:
            counts["late_hits"] += 1
            delays.append(predicted - truth)
            penalties.append(predicted - truth)
        else:
            counts["early_detections"] += 1
            penalties.append(duration)
    # A detector that waits for trailing silence may fire after the clip ends; the reference
    # notebook scores that as a late detection, so do we, and say how often it happened.
    past_duration = sum(1 for p, r in zip(predictions, references)
                        if not p["total_nonbreak"] and p["break_time"] > r["duration"])
    n = len(predictions)
    n_nonbreak = sum(1 for r in references if r["total_nonbreak"])
    false_alarms = counts["false_alarms_nonbreak"] + counts["early_detections"]
    if definition == "notebook":
        fir = false_alarms / n
        irl = _mean([d for d in delays if d > 0])
    else:
        fir = counts["false_alarms_nonbreak"] / n_nonbreak if n_nonbreak else None
        irl = _mean(exact_errors)
    return {"fir": fir, "irl": irl, "apt": _mean(penalties), "definition": definition, "n_clips": n,
            "n_break": n - n_nonbreak, "n_nonbreak": n_nonbreak, "false_alarms": false_alarms,
            "predictions_past_duration": past_duration, **counts}


class SidMetric:
    """Mixin of the fir / irl / apt modules: same inputs, same outcome table.

    Not itself an `evaluate.Metric`: evaluate loads the first Metric subclass it finds in a module's
    namespace, and imported names come first, so only the module's own class may be one.
    """

    description = ""
    citation = ""
    kwargs_description = ""

    def _info(self):
        definition = "notebook" if self.config_name == "default" else self.config_name
        if definition not in DEFINITIONS:
            raise ValueError(f"config_name: unknown definition {self.config_name!r}; "
                             f"expected one of {', '.join(DEFINITIONS)}")
        return evaluate.MetricInfo(
            description=self.description,
            citation=self.citation,
            inputs_description=self.kwargs_description,
            features=datasets.Features({"predictions": PREDICTION_FEATURES, "references": REFERENCE_FEATURES}),
            reference_urls=["https://github.com/xkx-hub/SID-bench", "https://huggingface.co/datasets/kxxia/SID-bench"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Rows are checked as they arrive, so an error names the index in this batch."""
        check_inputs(predictions, references)
        return super().add_batch(predictions=only_fields(predictions, PREDICTION_FEATURES),
                                 references=only_fields(references, REFERENCE_FEATURES), **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """One row, checked as it arrives."""
        if "predictions" in kwargs or "references" in kwargs:  # add_batch's names: said, not read as a missing row
            raise ValueError("add() takes one row, as prediction= (and reference=); predictions= and references= "
                             "are add_batch()'s")
        check_inputs([prediction], [reference])
        (prediction,), (reference,) = only_fields([prediction], PREDICTION_FEATURES), \
            only_fields([reference], REFERENCE_FEATURES)
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Check the raw rows first, so errors name the argument, the index and the field.
        Without inputs, the rows come from earlier `add`/`add_batch` calls (checked there)."""
        check_tolerance(kwargs.get("tolerance", 0.05))
        if predictions is None and references is None:
            return super().compute(**kwargs)
        check_inputs(predictions, references)
        return super().compute(predictions=only_fields(predictions, PREDICTION_FEATURES),
                               references=only_fields(references, REFERENCE_FEATURES), **kwargs)

    def _compute(self, predictions, references, tolerance=0.05):
        definition = "notebook" if self.config_name == "default" else self.config_name
        return score(predictions, references, tolerance, definition)
