"""The metric modules as evaluate users call them: from the installed package by
`ihbench.metric_path`, incrementally with add/add_batch, and on SID predictions past the clip."""
import pytest
from metric_modules import load

import ihbench
from ihbench.resources import ResourceError


def test_metric_path_is_an_absolute_folder_evaluate_loads():
    import evaluate

    path = ihbench.metric_path("apt")
    assert path.startswith("/") and path.endswith("/apt")
    assert evaluate.load(path).compute(predictions=[{"total_nonbreak": True, "break_time": -1.0}],
                                       references=[{"total_nonbreak": True, "break_time": 3.0,
                                                    "duration": 3.0}])["apt"] == 0.0


def test_metric_path_names_the_shipped_modules_on_a_wrong_name():
    with pytest.raises(ResourceError, match="no metric module 'bleu'; shipped modules: apt, convbench_pass_rate, fir"):
        ihbench.metric_path("bleu")


RQ = [[True, True], [True, False], [False], [True]]
TF = ["model", "baseline", "tie", "model"]
IDS = ["a/1", "a/1", "b/2", "c/3"]
TYPES = ["filler", "filler", "pushback", "normal"]


@pytest.mark.parametrize("name, rows", [("rq_pass_rate", RQ), ("tf_win_rate", TF)])
def test_add_batch_then_compute_equals_one_compute(name, rows):
    module = load(name)
    expected = module.compute(predictions=rows, item_ids=IDS, interruption_types=TYPES)
    module.add_batch(predictions=rows[:2])
    module.add(prediction=rows[2])
    module.add_batch(predictions=rows[3:])
    assert module.compute(item_ids=IDS, interruption_types=TYPES) == expected
    assert expected["n_items"] == 3 and expected["n_rows"] == 4


@pytest.mark.parametrize("name, bad, message", [("rq_pass_rate", [[True], ["yes"]], r"predictions\[1\]\[0\]"),
                                                ("tf_win_rate", ["model", "win"], r"predictions\[1\]")])
def test_add_batch_checks_rows_and_names_the_index(name, bad, message):
    with pytest.raises(ValueError, match=message):
        load(name).add_batch(predictions=bad)


SID_PREDICTIONS = [{"total_nonbreak": False, "break_time": 1.02}, {"total_nonbreak": True, "break_time": -1.0},
                   {"total_nonbreak": False, "break_time": 3.5}]
SID_REFERENCES = [{"total_nonbreak": False, "break_time": 1.0, "duration": 3.0},
                  {"total_nonbreak": True, "break_time": 2.0, "duration": 2.0},
                  {"total_nonbreak": False, "break_time": 2.5, "duration": 3.0}]


@pytest.mark.parametrize("name", ["fir", "irl", "apt"])
def test_sid_modules_accumulate_batches(name):
    module = load(name)
    expected = module.compute(predictions=SID_PREDICTIONS, references=SID_REFERENCES)
    module.add_batch(predictions=SID_PREDICTIONS[:2], references=SID_REFERENCES[:2])
    module.add(prediction=SID_PREDICTIONS[2], reference=SID_REFERENCES[2])
    assert module.compute() == expected


def test_a_break_predicted_after_the_clip_ends_is_a_late_detection_and_counted():
    """The reference notebook charges the delay (3.5 - 2.5 = 1.0 s), as for any late detection."""
    result = load("apt").compute(predictions=SID_PREDICTIONS, references=SID_REFERENCES)
    assert result["predictions_past_duration"] == 1 and result["late_hits"] == 1
    assert result["irl"] == pytest.approx(1.0) and result["apt"] == pytest.approx(1.0 / 3)


def test_return_items_gives_the_epoch_averaged_score_of_each_item():
    result = load("tf_win_rate").compute(predictions=TF, item_ids=IDS, return_items=True)
    assert result["per_item"] == {"a/1": 0.5, "b/2": 0.5, "c/3": 1.0}  # a tie counts 0.5
    assert load("rq_pass_rate").compute(predictions=RQ, item_ids=IDS, return_items=True)["per_item"] == \
        {"a/1": 0.5, "b/2": 0.0, "c/3": 1.0}
    assert "per_item" not in load("rq_pass_rate").compute(predictions=RQ)


def test_load_metric_opens_the_shipped_module_once_per_config():
    from ihbench.resources import load_metric

    apt, readme = load_metric("apt"), load_metric("apt", "readme")
    assert load_metric("apt") is apt and readme is not apt and readme.config_name == "readme"
    assert type(apt).__module__.split(".")[-1] == "apt"
    with pytest.raises(ResourceError, match="no metric module 'bleu'"):
        load_metric("bleu")


def test_the_toolkit_opens_metric_modules_only_through_load_metric():
    """One wrapper of `evaluate.load` (ihbench.resources.load_metric); the modules' own widgets
    (metrics/*/app.py, the shape evaluate requires) are not the toolkit's code."""
    import ast
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    callers = []
    for folder in ("ihbench", "ihbench_dataset", "loaders", "spaces"):
        for path in sorted((repo / folder).rglob("*.py")):
            if path.relative_to(repo).parts[:2] in (("ihbench", "metrics"), ("ihbench", "spaces")):
                continue  # links to metrics/ and spaces/
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load"
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "evaluate"):
                    callers.append(str(path.relative_to(repo)))
    assert callers == ["ihbench/resources.py"]
