"""ConversationBench per-turn judge verdicts as pass rates, as an `evaluate` metric module."""
import math
import numbers

import datasets
import evaluate
import numpy as np

from .wilson import wilson_interval

_CITATION = """\
@misc{conversationbench,
  title        = {ConversationBench (Audio Arena): a long spoken conversation with a knowledge base and tools},
  author       = {{Arcada Labs}},
  howpublished = {\\url{https://github.com/Design-Arena/conversation-bench}},
  note         = {Per-turn LLM judge on tool use, instruction following, KB grounding, state tracking,
                  ambiguity handling and turn taking; successor: Design-Arena/audio-agent-bench}
}
"""

_DESCRIPTION = """\
Pass rates from ConversationBench (Audio Arena). A voice agent holds one long conversation
(75 turns) with a knowledge base and tools; a judge gives each turn a verdict per dimension:
tool_use_correct, instruction_following, kb_grounding, state_tracking, ambiguity_handling and
turn_taking (True, False, or null where the dimension is not scored on that turn). The module
reports each dimension under both denominators the reference uses (`applicable`: non-null
verdicts, the successor's rule; `all`: the original rule, where every turn counts for tool use
and a turn with no expected call passes), the share of pass rows (no False among a turn's
non-null verdicts), per category, per epoch and pass^k over epochs, each with a Wilson score
interval.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `bool` or `None`): one row per (turn, epoch, dimension): the judge's
        verdict; None = not scored (outside the turn's dimensions).
    dimensions (`list` of `str`): the dimension of each row: tool_use_correct,
        instruction_following, kb_grounding, state_tracking, ambiguity_handling, turn_taking
        (other non-empty names are accepted and reported like the always-scored ones).
    turn_ids (`list` of `int`): the benchmark turn index of each row (from 0).
    epochs (`list` of `int`, optional): the epoch (run) of each row, from 0. Default: all 0.
    call_expected (`list` of `bool`, optional): whether the row's turn has a required function
        call. Needed for the `all` denominator of tool_use_correct; without it that figure is
        None and `why_absent` says so.
    categories (`list` of `list` of `str`, optional): the categories of the row's turn; a turn
        with several categories counts in each. When given, `per_category` is returned.
    z (`float`, default 1.96): the normal quantile of the Wilson score intervals.
Returns:
    per_dimension (`dict`): dimension -> {"applicable": rate, "all": rate or None}, where a rate
        is {"passes", "n", "rate" (None when n is 0), "ci_low", "ci_high"} (Wilson interval).
        applicable: True verdicts / non-null verdicts. all: for tool_use_correct every
        (turn, epoch) counts and passes when no call is expected, or the verdict is True or
        null; for the other dimensions it equals applicable.
    pass_rows (`dict`): a rate over (turn, epoch) rows with no False among their non-null
        verdicts, plus "incomplete" (rows whose verdicts are all null, left out of n).
    per_category (`dict`, only with categories): category -> {"pass_rows", "per_dimension"}.
    per_epoch (`dict`): epoch -> {"pass_rows", "per_dimension"}: one run each, the figures
        comparable with one reference run.
    pass_hat_k (`dict` or None): {"k", "pass_rows", "per_dimension"}: turns that pass in all k
        epochs, among turns scored in all k; None when a turn lacks an epoch.
    why_absent (`dict`): the path of each figure that is None -> the reason.
    n_turns, n_epochs, n_rows (`int`); nulls (`dict`): dimension -> null verdicts; z (`float`).
Examples:
    >>> convbench = evaluate.load("convbench_pass_rate")
    >>> result = convbench.compute(
    ...     predictions=[True, True, None, False, False, True],
    ...     dimensions=["tool_use_correct", "instruction_following"] * 3,
    ...     turn_ids=[0, 0, 1, 1, 2, 2],
    ...     call_expected=[True, True, False, False, False, False])
    >>> tool = result["per_dimension"]["tool_use_correct"]
    >>> tool["applicable"]["rate"], tool["all"]["rate"], tool["all"]["n"]
    (0.5, 1.0, 3)
    >>> result["pass_rows"]["passes"], result["pass_rows"]["n"], round(result["pass_rows"]["ci_low"], 4)
    (1, 3, 0.0615)
    >>> result = convbench.compute(
    ...     predictions=[True, True, True, False], dimensions=["kb_grounding"] * 4,
    ...     turn_ids=[0, 1, 0, 1], epochs=[0, 0, 1, 1])
    >>> result["per_epoch"][1]["per_dimension"]["kb_grounding"]["applicable"]["rate"]
    0.5
    >>> result["pass_hat_k"]["k"], result["pass_hat_k"]["pass_rows"]["rate"], result["why_absent"]
    (2, 0.5, {})
"""

TOOL = "tool_use_correct"
# The reference's six scores; other names sort after these, alphabetically.
DIMENSIONS = (TOOL, "instruction_following", "kb_grounding", "state_tracking", "ambiguity_handling", "turn_taking")
_OPTIONAL = ("epochs", "call_expected", "categories")
_COLUMNS = ("predictions", "dimensions", "turn_ids", *_OPTIONAL)
Z_DEFAULT = 1.96  # the reference scripts' value (scripts/compare_model_runs.py)


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


def _is_int(value):
    return type(value) is int or (isinstance(value, numbers.Integral) and not _is_bool(value))


def _given(values):
    """An optional column's rows (none when absent); arrays have no truth value to test."""
    return () if values is None else values


def _sized(name, values):
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name}: expected a list with one value per row, got {type(values).__name__}")


def check_rows(predictions, dimensions, turn_ids, epochs=None, call_expected=None, categories=None,
               allow_empty=False):
    """Row by row, before evaluate converts them, so an error names the argument and the index.

    An optional column passed as None is absent; inside a given column None is refused (except a
    null verdict in `predictions`), since absence must be all or nothing.
    """
    if predictions is None:
        raise ValueError("predictions: required; one verdict (True, False or None) per row")
    _sized("predictions", predictions)
    n = len(predictions)
    if n == 0 and not allow_empty:
        raise ValueError("predictions: empty input; at least one row is needed")
    columns = {"dimensions": dimensions, "turn_ids": turn_ids, "epochs": epochs, "call_expected": call_expected,
               "categories": categories}
    for name, values in columns.items():
        if values is None:
            if name in ("dimensions", "turn_ids"):
                raise ValueError(f"{name}: required; one per row")
            continue
        _sized(name, values)
        if len(values) != n:
            raise ValueError(f"{name}: length {len(values)} differs from predictions ({n})")
    for index, verdict in enumerate(predictions):
        if verdict is not None and not _is_bool(verdict):
            raise ValueError(f"predictions[{index}]: expected True, False or None (not scored), got {verdict!r}")
    for index, name in enumerate(dimensions):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"dimensions[{index}]: expected a non-empty dimension name such as "
                             f"{', '.join(DIMENSIONS)}; got {name!r}")
    for column in ("turn_ids", "epochs"):
        for index, value in enumerate(_given(columns[column])):
            if not _is_int(value) or value < 0:  # turns and epochs count from 0
                raise ValueError(f"{column}[{index}]: expected an integer >= 0, got {value!r}")
    for index, value in enumerate(_given(call_expected)):
        if not _is_bool(value):
            raise ValueError(f"call_expected[{index}]: expected True or False, got {value!r}")
    for index, names in enumerate(_given(categories)):
        if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
            raise ValueError(f"categories[{index}]: expected a list of category names, got {names!r}")
        for name in names:
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"categories[{index}]: expected non-empty category names, got {name!r}")


def check_z(z):
    if _is_bool(z) or not isinstance(z, numbers.Real) or not math.isfinite(z) or z <= 0:
        raise ValueError(f"z: expected a positive number (1.96 for 95 %), got {z!r}")


def _filled(columns):
    """Plain Python values for Arrow; absent optional columns get placeholders (epoch 0; None,
    which `_compute` reads as "not given")."""
    n = len(columns["predictions"])
    epochs, call_expected, categories = (columns[name] for name in _OPTIONAL)
    return {
        "predictions": [None if v is None else bool(v) for v in columns["predictions"]],
        "dimensions": [str(v).strip() for v in columns["dimensions"]],
        "turn_ids": [int(v) for v in columns["turn_ids"]],
        "epochs": [0] * n if epochs is None else [int(v) for v in epochs],
        "call_expected": [None] * n if call_expected is None else [bool(v) for v in call_expected],
        "categories": [None] * n if categories is None else [[str(c).strip() for c in v] for v in categories],
    }


def rate(passes, n, z):
    low, high = wilson_interval(passes, n, z)
    return {"passes": int(passes), "n": int(n), "rate": passes / n if n else None, "ci_low": low, "ci_high": high}


def _label(column, value):
    return bool(value) if column == "call_expected" else frozenset(value)


class RowLedger:
    """What the rows added so far fix, so that a duplicate or a turn contradicting itself is
    refused at `add` / `add_batch`, before it is written: evaluate leaves its cache locked when
    `_compute` raises, which would spoil the module for the next call."""

    def __init__(self):
        self.n_rows = 0
        self.first_row = {}  # (turn, epoch, dimension) -> row
        self.per_turn = {"call_expected": {}, "categories": {}}  # column -> turn -> (label, value, row)
        self.given = {"call_expected": None, "categories": None}  # column -> given with the rows so far?

    def extend(self, columns):
        """Rows already checked one by one; an error names the index in this batch and the row
        (counted over all rows added) it conflicts with. Nothing is kept unless all rows pass."""
        n = len(columns["predictions"])
        if n == 0:
            return
        for column in self.given:
            present = columns[column] is not None
            if self.given[column] is not None and self.given[column] != present:
                raise ValueError(f"{column}: {'given' if present else 'not given'} here but "
                                 f"{'given' if self.given[column] else 'not given'} with the {self.n_rows} rows added "
                                 f"before; give it with every add/add_batch call or with none")
        epochs = columns["epochs"] if columns["epochs"] is not None else [0] * n
        first_row = {}
        for index, (dim, turn, epoch) in enumerate(zip(columns["dimensions"], columns["turn_ids"], epochs)):
            key = (int(turn), int(epoch), dim.strip())
            at = self.first_row.get(key, first_row.get(key))
            if at is not None:
                raise ValueError(f"predictions[{index}]: a second verdict for turn {key[0]}, epoch {key[1]}, "
                                 f"{key[2]} (the first is at row {at})")
            first_row[key] = self.n_rows + index
        per_turn = {column: {} for column in self.per_turn}
        for column, seen in self.per_turn.items():
            for index, (turn, value) in enumerate(zip(columns["turn_ids"], _given(columns[column]))):
                label = _label(column, value)
                known = seen.get(int(turn)) or per_turn[column].get(int(turn))
                if known is None:
                    per_turn[column][int(turn)] = (label, value, self.n_rows + index)
                elif known[0] != label:
                    raise ValueError(f"{column}[{index}]: turn {turn} has {value!r} here "
                                     f"but {known[1]!r} at row {known[2]}")
        self.first_row.update(first_row)
        for column in self.per_turn:
            self.per_turn[column].update(per_turn[column])
            self.given[column] = columns[column] is not None
        self.n_rows += n


def _per_turn(column, values, turns):
    """The turn property a column gives, or None when it was not given. The ledger refuses
    disagreements as rows arrive; this guards rows that reach `_compute` another way."""
    given = [index for index, value in enumerate(values) if value is not None]
    if not given:
        return None
    if len(given) < len(values):
        missing = next(index for index, value in enumerate(values) if value is None)
        raise ValueError(f"{column}[{missing}]: missing here but given at row {given[0]}; "
                         f"give it for every row (every add/add_batch call) or for none")
    first = {}
    for index, (turn, value) in enumerate(zip(turns, values)):
        known = first.setdefault(turn, (_label(column, value), value, index))
        if known[0] != _label(column, value):
            raise ValueError(f"{column}[{index}]: turn {turn} has {value!r} here but {known[1]!r} at row {known[2]}")
    return {turn: label for turn, (label, _, _) in first.items()}


def _ordered(dimensions):
    present = set(dimensions)
    return [d for d in DIMENSIONS if d in present] + sorted(present - set(DIMENSIONS))


def _group(keys, verdicts, dims, call_expected, z):
    """Pass rows and both denominators over a set of (turn, epoch) rows.

    `all` of tool use keeps the original rule: every (turn, epoch) is in the denominator and a
    missing row counts as a null verdict, so the figure does not shrink when a caller omits the
    rows the judge left null.
    """
    passed = failed = incomplete = 0
    for key in keys:
        scored = [v for v in verdicts[key].values() if v is not None]
        if not scored:
            incomplete += 1
        elif all(scored):
            passed += 1
        else:
            failed += 1
    pass_rows = {**rate(passed, passed + failed, z), "incomplete": incomplete}
    per_dimension = {}
    for dim in dims:
        values = [verdicts[key].get(dim) for key in keys]
        applicable = rate(sum(v is True for v in values), sum(v is not None for v in values), z)
        if dim != TOOL:
            every = dict(applicable)
        elif call_expected is None:
            every = None
        else:
            every = rate(sum(not call_expected[turn] or v is not False for (turn, _), v in zip(keys, values)),
                         len(keys), z)
        per_dimension[dim] = {"applicable": applicable, "all": every}
    return {"pass_rows": pass_rows, "per_dimension": per_dimension}


def _pass_hat_k(turns, epochs, verdicts, statuses, dims, z):
    """A turn counts only when it is scored in every epoch: pass^k asks whether the agent gets
    the turn right every time, which a missing epoch cannot answer."""
    k = len(epochs)
    passed = scored = 0
    for turn in turns:
        states = [statuses[(turn, epoch)] for epoch in epochs]
        if "incomplete" not in states:
            scored += 1
            passed += all(state == "pass" for state in states)
    per_dimension = {}
    for dim in dims:
        dim_passed = dim_scored = 0
        for turn in turns:
            values = [verdicts[(turn, epoch)].get(dim) for epoch in epochs]
            if all(v is not None for v in values):
                dim_scored += 1
                dim_passed += all(values)
        per_dimension[dim] = rate(dim_passed, dim_scored, z)
    return {"k": k, "pass_rows": rate(passed, scored, z), "per_dimension": per_dimension}


def pass_rates(predictions, dimensions, turn_ids, epochs, call_expected, categories, z):
    """Every figure from rows already checked one by one; the checks that need all rows
    (duplicates, a turn's properties agreeing) are made here."""
    call_expected = _per_turn("call_expected", call_expected, turn_ids)
    categories = _per_turn("categories", categories, turn_ids)
    verdicts, first_row = {}, {}
    for index, (verdict, dim, turn, epoch) in enumerate(zip(predictions, dimensions, turn_ids, epochs)):
        at = first_row.setdefault((turn, epoch, dim), index)
        if at != index:
            raise ValueError(f"predictions[{index}]: a second verdict for turn {turn}, epoch {epoch}, {dim} "
                             f"(the first is at row {at})")
        verdicts.setdefault((turn, epoch), {})[dim] = verdict
    dims = _ordered(dimensions)
    keys = sorted(verdicts)
    turns = sorted({turn for turn, _ in keys})
    epoch_values = sorted({epoch for _, epoch in keys})
    overall = _group(keys, verdicts, dims, call_expected, z)
    result = {"per_dimension": overall["per_dimension"], "pass_rows": overall["pass_rows"]}
    if categories is not None:
        names = sorted(set().union(*categories.values()))
        result["per_category"] = {name: _group([key for key in keys if name in categories[key[0]]], verdicts, dims,
                                               call_expected, z) for name in names}
    result["per_epoch"] = {epoch: _group([key for key in keys if key[1] == epoch], verdicts, dims, call_expected, z)
                           for epoch in epoch_values}
    why_absent = {}
    if TOOL in dims and call_expected is None:
        why_absent[f"per_dimension.{TOOL}.all"] = ("call_expected not given: every turn counts in this denominator, "
                                                   "and a turn with no expected call passes, so it must be known")
    epochs_of = {}
    for turn, _ in keys:
        epochs_of[turn] = epochs_of.get(turn, 0) + 1
    short = [(turn, epochs_of[turn]) for turn in turns if epochs_of[turn] < len(epoch_values)]
    if short:
        turn, count = short[0]
        why_absent["pass_hat_k"] = (f"{len(short)} turn(s) lack an epoch (turn {turn} has {count} of the "
                                    f"{len(epoch_values)} epochs {epoch_values}); "
                                    f"pass^k needs every turn in every epoch")
        result["pass_hat_k"] = None
    else:
        statuses = {}
        for key in keys:
            scored = [v for v in verdicts[key].values() if v is not None]
            statuses[key] = "incomplete" if not scored else "pass" if all(scored) else "fail"
        result["pass_hat_k"] = _pass_hat_k(turns, epoch_values, verdicts, statuses, dims, z)
    result["why_absent"] = why_absent
    result.update({"n_turns": len(turns), "n_epochs": len(epoch_values), "n_rows": len(predictions),
                   "nulls": {dim: sum(1 for v, d in zip(predictions, dimensions) if d == dim and v is None)
                             for dim in dims},
                   "z": float(z)})
    return result


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ConvbenchPassRate(evaluate.Metric):
    def _info(self):
        if self.config_name != "default":  # one definition: a config name would mean nothing
            raise ValueError(f"config_name: {self.config_name!r}, but convbench_pass_rate has no configurations; "
                             "leave it out")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Value("bool"),
                "dimensions": datasets.Value("string"),
                "turn_ids": datasets.Value("int64"),
                "epochs": datasets.Value("int64"),
                "call_expected": datasets.Value("bool"),
                "categories": datasets.Sequence(datasets.Value("string")),
            }),
            reference_urls=["https://github.com/Design-Arena/conversation-bench",
                            "https://huggingface.co/datasets/arcada-labs/conversation-bench"],
        )

    @staticmethod
    def _columns(predictions, references, kwargs, allowed=()):
        """Every column named, None when not passed: evaluate requires each feature in every call, so
        `_filled` gives the absent ones their placeholders."""
        if references is not None:
            raise ValueError("references: not used; the judge's verdicts are the predictions")
        unknown = sorted(set(kwargs) - set(_COLUMNS[1:]) - set(allowed))
        if unknown:
            raise ValueError(f"{unknown[0]}: unknown argument; expected {', '.join(_COLUMNS[1:] + tuple(allowed))}")
        return {"predictions": predictions, **{name: kwargs.get(name) for name in _COLUMNS[1:]}}

    def _ledger(self):
        if getattr(self, "_rows", None) is None:
            self._rows = RowLedger()
        return self._rows

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Rows are checked as they arrive, so an error names the index in this batch."""
        columns = self._columns(predictions, references, kwargs)
        check_rows(**columns, allow_empty=True)
        self._ledger().extend(columns)
        return super().add_batch(**_filled(columns))

    def add(self, *, prediction=None, reference=None, **kwargs):
        """One row (evaluate's convention: the other columns keep their plural names); None is a
        null verdict here, not a missing one."""
        if "predictions" in kwargs or "references" in kwargs:  # add_batch's names: said, not read as a missing row
            raise ValueError("add() takes one row, as prediction= (and reference=); predictions= and references= "
                             "are add_batch()'s")
        columns = self._columns([prediction], reference, kwargs)
        columns = {name: value if name == "predictions" or value is None else [value]
                   for name, value in columns.items()}
        check_rows(**columns)
        self._ledger().extend(columns)
        row = {name: values[0] for name, values in _filled(columns).items()}
        return super().add(prediction=row.pop("predictions"), **row)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Without any column, the rows come from earlier `add` / `add_batch` calls; with them,
        evaluate passes them through `add_batch` first, which checks them before any is written."""
        columns = self._columns(predictions, references, kwargs, allowed=("z",))
        check_z(kwargs.get("z", Z_DEFAULT))
        options = {"z": kwargs["z"]} if "z" in kwargs else {}
        if all(value is None for value in columns.values()):
            result = super().compute(**options)
        else:
            if predictions is not None and hasattr(predictions, "__len__") and len(predictions) == 0:
                raise ValueError("predictions: empty input; at least one row is needed")
            result = super().compute(**columns, **options)  # evaluate hands the rows to add_batch: checked there
        self._rows = None  # evaluate has emptied its cache: the next rows start afresh
        return result

    def _compute(self, predictions, dimensions, turn_ids, epochs, call_expected, categories, z=Z_DEFAULT):
        check_z(z)
        return pass_rates(predictions, dimensions, turn_ids, epochs, call_expected, categories, z)
