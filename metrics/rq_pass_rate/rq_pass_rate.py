"""IHBench recovery-quality (RQ) pass rate, as an `evaluate` metric module."""
import datasets
import evaluate
import numpy as np

from .item_bootstrap import check_grouping
from .item_bootstrap import difference_with_types
from .item_bootstrap import RowCheckedMetric
from .item_bootstrap import rate_with_types

_CITATION = """\
@misc{ihbench2026,
  title  = {IHBench: Evaluating Post-Interruption Recovery in Voice Agents with Structured Workflows},
  author = {{Boson AI}},
  year   = {2026},
  note   = {Recovery quality pass rate: all type-specific criteria met, 3 epochs, 1000-sample percentile bootstrap}
}
"""

_DESCRIPTION = """\
Recovery quality (RQ) pass rate from IHBench. After a user interrupts a voice agent mid-sentence,
an LLM judge checks the agent's next response against the interruption's 2-4 type-specific
criteria (e.g. for a filler: continues exactly where it was cut, does not repeat, does not
acknowledge the backchannel). A response passes only if every criterion is met. The pass rate is
the mean over interruption points of the epoch-averaged pass, with a 95 % percentile-bootstrap
confidence interval over interruption points.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `bool`): one row per (interruption point, epoch): the judge's
        met / not-met verdict for each criterion. A row passes iff all its verdicts are True.
    item_ids (`list`, optional): one id per row; rows with the same id are epochs of one
        interruption point and are averaged first. Default: every row is its own item.
    interruption_types (`list` of `str`, optional): one type per row (normal, impatient,
        correction, topic_switch, filler, pushback; official spellings such as "Topic Switch"
        are accepted). When given, `per_type` is returned.
    n_bootstrap (`int`, default 1000): bootstrap resamples of the items.
    return_items (`bool`, default False): also return `per_item`, the epoch-averaged score of each item
        (for depth slopes, paired tests and rank correlations on the same numbers).
    seed (`int`, default 0): seed of the bootstrap; the same inputs and seed give the same CI.
    compare_predictions (`list` of `list` of `bool`, optional): the rows of a second run to compare
        with (e.g. the same model's static run beside its barge-in run), over other items.
    compare_item_ids, compare_interruption_types (`list`, optional): its item ids and types, as above.
Returns:
    rq_pass_rate (`float` in [0, 1]): mean over items of the epoch-averaged pass.
    ci_low, ci_high (`float` in [0, 1]): 95 % percentile-bootstrap interval over items.
    n_items (`int`), n_rows (`int`): items and rows scored.
    per_type (`dict`, only with interruption_types): type -> the same five fields.
    difference (`dict`, only with compare_predictions): rq_pass_rate_difference (this rate minus the
        compared run's), ci_low, ci_high (95 % percentile bootstrap, the two runs' items resampled
        independently), n_items, n_items_compared; per_type for the types both runs have, when both
        give interruption types.
Examples:
    >>> rq = evaluate.load("rq_pass_rate")
    >>> result = rq.compute(predictions=[[True, True], [True, False], [True, True, True]])
    >>> round(result["rq_pass_rate"], 4), result["n_items"]
    (0.6667, 3)
    >>> result = rq.compute(predictions=[[True], [False], [True]], item_ids=["a", "a", "b"],
    ...                     interruption_types=["filler", "filler", "pushback"])
    >>> result["rq_pass_rate"], result["per_type"]["filler"]["rq_pass_rate"], result["n_rows"]
    (0.75, 0.5, 3)
    >>> result = rq.compute(predictions=[[True], [True], [False], [True]], compare_predictions=[[False], [True]])
    >>> result["difference"]["rq_pass_rate_difference"], result["difference"]["n_items_compared"]
    (0.25, 2)
"""


def _check_rows(predictions, name="predictions"):
    if predictions is None:
        raise ValueError(f"{name}: required")
    for index, row in enumerate(predictions):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise ValueError(f"{name}[{index}]: expected a list of criterion verdicts (bools)")
        if len(row) == 0:
            raise ValueError(f"{name}[{index}]: no criterion verdicts")
        for position, verdict in enumerate(row):
            if not isinstance(verdict, (bool, np.bool_)):  # NumPy 2 names its bool type "bool"
                raise ValueError(f"{name}[{index}][{position}]: expected a bool, got {verdict!r}")


def _same_criteria(predictions, item_ids, name="predictions"):
    """The epochs of one item are judged against one rubric: verdicts for another number of criteria
    belong to another item (or another version of it), and pooled they would be averaged as one."""
    first = {}
    for index, (item, row) in enumerate(zip(item_ids or [], predictions)):
        count, at = first.setdefault(item, (len(row), index))
        if len(row) != count:
            raise ValueError(f"{name}[{index}]: item {item!r} has {len(row)} criterion verdict(s) here but {count} "
                             f"at index {at}; the rows of one item are judged against one rubric")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RqPassRate(RowCheckedMetric, evaluate.Metric):
    def _info(self):
        self._check_no_config("rq_pass_rate")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Sequence(datasets.Value("bool"))}),
            reference_urls=["https://huggingface.co/datasets/bosonai/IHBench"],
        )

    check_rows = staticmethod(_check_rows)

    def _compute(self, predictions, item_ids=None, interruption_types=None, n_bootstrap=1000, seed=0,
                 return_items=False, compare_predictions=None, compare_item_ids=None,
                 compare_interruption_types=None):
        item_ids, types = check_grouping(len(predictions), item_ids, interruption_types, n_bootstrap, seed)
        _same_criteria(predictions, item_ids)
        passed = [1.0 if all(row) else 0.0 for row in predictions]
        result = rate_with_types(passed, item_ids, types, n_bootstrap, seed, "rq_pass_rate", return_items)
        if compare_predictions is not None:
            _check_rows(compare_predictions, "compare_predictions")
            other_ids, other_types = check_grouping(len(compare_predictions), compare_item_ids,
                                                    compare_interruption_types, n_bootstrap, seed, "compare_")
            _same_criteria(compare_predictions, other_ids, "compare_predictions")
            other = [1.0 if all(row) else 0.0 for row in compare_predictions]
            result["difference"] = difference_with_types(passed, item_ids, types, other, other_ids, other_types,
                                                         n_bootstrap, seed, "rq_pass_rate")
        return result
