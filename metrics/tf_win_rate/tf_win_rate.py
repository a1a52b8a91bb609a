"""IHBench task-fulfillment (TF) win rate against the baseline, as an `evaluate` metric module."""
import datasets
import evaluate

from .item_bootstrap import check_grouping
from .item_bootstrap import RowCheckedMetric
from .item_bootstrap import rate_with_types

_CITATION = """\
@misc{ihbench2026,
  title  = {IHBench: Evaluating Post-Interruption Recovery in Voice Agents with Structured Workflows},
  author = {{Boson AI}},
  year   = {2026},
  note   = {Task fulfillment win rate against a baseline response, comparative LLM judge, 3 epochs}
}
"""

_DESCRIPTION = """\
Task fulfillment (TF) win rate from IHBench. For each interruption point a comparative LLM judge
sees the interruption's single task-fulfillment criterion (what the agent must do next) and two
responses in randomized order, the model's and a fixed baseline's, and picks the one that better
advances the task. The win rate is the mean over interruption points of the epoch-averaged
outcome (model win = 1, baseline win = 0, tie = 0.5), with a 95 % percentile-bootstrap confidence
interval over interruption points. 0.5 is parity with the baseline.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): one verdict per (interruption point, epoch): "model",
        "baseline" or "tie" (case-insensitive). A tie counts 0.5. Judge failures are not
        verdicts: leave those rows out (they must never count as a loss for the model).
    item_ids (`list`, optional): one id per row; rows with the same id are epochs of one
        interruption point and are averaged first. Default: every row is its own item.
    interruption_types (`list` of `str`, optional): one type per row (normal, impatient,
        correction, topic_switch, filler, pushback; official spellings accepted). When given,
        `per_type` is returned.
    n_bootstrap (`int`, default 1000): bootstrap resamples of the items.
    return_items (`bool`, default False): also return `per_item`, the epoch-averaged score of each item
        (for depth slopes, paired tests and rank correlations on the same numbers).
    seed (`int`, default 0): seed of the bootstrap.
Returns:
    tf_win_rate (`float` in [0, 1]): mean over items of the epoch-averaged outcome.
    ci_low, ci_high (`float` in [0, 1]): 95 % percentile-bootstrap interval over items.
    n_items (`int`), n_rows (`int`): items and rows scored.
    per_type (`dict`, only with interruption_types): type -> the same five fields.
Examples:
    >>> tf = evaluate.load("tf_win_rate")
    >>> tf.compute(predictions=["model", "baseline", "tie", "model"])["tf_win_rate"]
    0.625
    >>> result = tf.compute(predictions=["model", "baseline", "model"], item_ids=[1, 1, 2],
    ...                     interruption_types=["impatient", "impatient", "normal"])
    >>> result["tf_win_rate"], result["n_items"], result["per_type"]["impatient"]["tf_win_rate"]
    (0.75, 2, 0.5)
"""

OUTCOMES = {"model": 1.0, "baseline": 0.0, "tie": 0.5}


def _check_rows(predictions):
    if predictions is None:
        raise ValueError("predictions: required")
    for index, verdict in enumerate(predictions):
        if not isinstance(verdict, str) or verdict.strip().lower() not in OUTCOMES:
            raise ValueError(f"predictions[{index}]: expected 'model', 'baseline' or 'tie', got {verdict!r}")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TfWinRate(RowCheckedMetric, evaluate.Metric):
    def _info(self):
        self._check_no_config("tf_win_rate")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
            reference_urls=["https://huggingface.co/datasets/bosonai/IHBench"],
        )

    check_rows = staticmethod(_check_rows)

    def _compute(self, predictions, item_ids=None, interruption_types=None, n_bootstrap=1000, seed=0,
                 return_items=False):
        item_ids, types = check_grouping(len(predictions), item_ids, interruption_types, n_bootstrap, seed)
        outcomes = [OUTCOMES[verdict.strip().lower()] for verdict in predictions]
        return rate_with_types(outcomes, item_ids, types, n_bootstrap, seed, "tf_win_rate", return_items)
