"""convbench_pass_rate: ConversationBench per-turn verdicts as pass rates, checked by hand."""
import math

import pytest
from metric_modules import load

TOOL, IF, KB, STATE = "tool_use_correct", "instruction_following", "kb_grounding", "state_tracking"


@pytest.fixture(scope="module")
def convbench():
    return load("convbench_pass_rate")


def _rows(table):
    """(turn, epoch, dimension, verdict[, call_expected[, categories]]) tuples -> compute columns."""
    columns = {"predictions": [r[3] for r in table], "dimensions": [r[2] for r in table],
               "turn_ids": [r[0] for r in table], "epochs": [r[1] for r in table]}
    if all(len(r) > 4 for r in table):
        columns["call_expected"] = [r[4] for r in table]
    if all(len(r) > 5 for r in table):
        columns["categories"] = [r[5] for r in table]
    return columns


def test_wilson_bounds_are_the_score_interval_computed_by_hand(convbench):
    # 7 of 10 at z = 1.96: p = 0.7, z^2 = 3.8416
    centre = (0.7 + 3.8416 / 20) / (1 + 3.8416 / 10)                          # 0.89208 / 1.38416
    half = 1.96 * math.sqrt(0.7 * 0.3 / 10 + 3.8416 / 400) / (1 + 3.8416 / 10)  # 1.96 * sqrt(0.030604) / 1.38416
    result = convbench.compute(predictions=[True] * 7 + [False] * 3, dimensions=[KB] * 10, turn_ids=list(range(10)))
    kb = result["per_dimension"][KB]["applicable"]
    assert (kb["passes"], kb["n"], kb["rate"]) == (7, 10, 0.7)
    assert kb["ci_low"] == pytest.approx(centre - half) and kb["ci_high"] == pytest.approx(centre + half)
    assert (round(kb["ci_low"], 4), round(kb["ci_high"], 4)) == (0.3968, 0.8922)


def test_wilson_bounds_at_zero_and_all_and_with_another_z(convbench):
    # 0 of 5: low 0, high = (z^2 / n) / (1 + z^2 / n) = 0.76832 / 1.76832
    none = convbench.compute(predictions=[False] * 5, dimensions=[KB] * 5, turn_ids=list(range(5)))
    assert none["per_dimension"][KB]["applicable"]["ci_low"] == 0.0
    assert none["per_dimension"][KB]["applicable"]["ci_high"] == pytest.approx(0.76832 / 1.76832)
    every = convbench.compute(predictions=[True] * 5, dimensions=[KB] * 5, turn_ids=list(range(5)))
    assert every["per_dimension"][KB]["applicable"]["ci_high"] == 1.0
    assert every["per_dimension"][KB]["applicable"]["ci_low"] == pytest.approx(1 - 0.76832 / 1.76832)
    # z = 2.576 (99 %), 7 of 10: z^2 = 6.635776
    wide = convbench.compute(predictions=[True] * 7 + [False] * 3, dimensions=[KB] * 10, turn_ids=list(range(10)),
                             z=2.576)
    low = ((0.7 + 6.635776 / 20) - 2.576 * math.sqrt(0.021 + 6.635776 / 400)) / (1 + 6.635776 / 10)
    assert wide["per_dimension"][KB]["applicable"]["ci_low"] == pytest.approx(low) and wide["z"] == 2.576


# Turn: expected call?, tool verdict. 0 call made; 1 call missed; 2 null on a call turn; 3 no call, null
# (the vacuous pass); 4 no call but a call made (unsolicited: False); 5 no call, judged True anyway.
TOOL_TURNS = [(0, True, True), (1, True, False), (2, True, None), (3, False, None), (4, False, False), (5, False, True)]
HAND_SET = [(turn, 0, TOOL, verdict, call) for turn, call, verdict in TOOL_TURNS] + \
           [(turn, 0, IF, turn != 3, call) for turn, call, _ in TOOL_TURNS] + \
           [(turn, 0, STATE, {0: True, 1: False}.get(turn), call) for turn, call, _ in TOOL_TURNS]


def test_tool_use_under_both_denominators(convbench):
    tool = convbench.compute(**_rows(HAND_SET))["per_dimension"][TOOL]
    # applicable (successor): non-null verdicts 0, 1, 4, 5; True on 0 and 5
    assert (tool["applicable"]["passes"], tool["applicable"]["n"], tool["applicable"]["rate"]) == (2, 4, 0.5)
    # all (main): every turn; only turn 1 (a call expected, verdict False) fails
    assert (tool["all"]["passes"], tool["all"]["n"]) == (5, 6) and tool["all"]["rate"] == pytest.approx(5 / 6)


def test_other_dimensions_have_all_equal_to_applicable(convbench):
    result = convbench.compute(**_rows(HAND_SET))
    follow, state = result["per_dimension"][IF], result["per_dimension"][STATE]
    assert (follow["applicable"]["passes"], follow["applicable"]["n"]) == (5, 6)
    assert follow["all"] == follow["applicable"]
    assert (state["applicable"]["passes"], state["applicable"]["n"]) == (1, 2) and state["all"] == state["applicable"]
    assert result["nulls"] == {TOOL: 2, IF: 0, STATE: 4}
    assert list(result["per_dimension"]) == [TOOL, IF, STATE]
    assert (result["n_turns"], result["n_epochs"], result["n_rows"]) == (6, 1, 18) and result["why_absent"] == {}


def test_without_call_expected_the_all_rate_of_tool_use_is_absent_and_says_why(convbench):
    rows = [row[:4] for row in HAND_SET]
    result = convbench.compute(**_rows(rows))
    assert result["per_dimension"][TOOL]["all"] is None
    assert result["per_dimension"][TOOL]["applicable"]["rate"] == 0.5
    assert "call_expected not given" in result["why_absent"]["per_dimension.tool_use_correct.all"]
    assert result["per_dimension"][IF]["all"] == result["per_dimension"][IF]["applicable"]


def test_a_turn_without_a_tool_row_counts_as_a_null_verdict_in_all(convbench):
    rows = [(0, 0, TOOL, False, True), (0, 0, IF, True, True), (1, 0, IF, True, False), (2, 0, IF, True, True)]
    tool = convbench.compute(**_rows(rows))["per_dimension"][TOOL]
    assert (tool["all"]["passes"], tool["all"]["n"]) == (2, 3)  # turn 1: no call; turn 2: null on a call turn
    assert (tool["applicable"]["passes"], tool["applicable"]["n"]) == (0, 1)


def test_pass_rows_count_no_false_among_non_null_and_keep_incomplete_apart(convbench):
    rows = [(0, 0, TOOL, None), (0, 0, IF, True), (0, 0, STATE, None),   # pass: nulls do not fail a row
            (1, 0, TOOL, True), (1, 0, IF, False),                       # fail
            (2, 0, TOOL, None), (2, 0, IF, None),                        # incomplete: all null
            (3, 0, IF, True), (3, 0, KB, True)]                          # pass
    pass_rows = convbench.compute(**_rows(rows))["pass_rows"]
    assert (pass_rows["passes"], pass_rows["n"], pass_rows["incomplete"]) == (2, 3, 1)
    assert pass_rows["rate"] == pytest.approx(2 / 3)


def test_hand_set_pass_rows_fail_an_unsolicited_call(convbench):
    # turn 0 pass; 1 tool False; 2 pass; 3 IF False; 4 unsolicited call False; 5 pass
    pass_rows = convbench.compute(**_rows(HAND_SET))["pass_rows"]
    assert (pass_rows["passes"], pass_rows["n"], pass_rows["incomplete"]) == (3, 6, 0)


def test_per_category_counts_a_multi_category_turn_in_each(convbench):
    cats = {0: ["tool_use", "basic_qa"], 1: ["tool_use", "long_range_memory"], 2: ["long_range_memory"]}
    rows = [(0, 0, TOOL, True, True, cats[0]), (0, 0, IF, True, True, cats[0]),
            (1, 0, TOOL, False, True, cats[1]), (1, 0, IF, True, True, cats[1]), (1, 0, STATE, True, True, cats[1]),
            (2, 0, TOOL, None, False, cats[2]), (2, 0, IF, True, False, cats[2]), (2, 0, STATE, False, False, cats[2])]
    per_category = convbench.compute(**_rows(rows))["per_category"]
    assert list(per_category) == ["basic_qa", "long_range_memory", "tool_use"]
    memory, tool_use = per_category["long_range_memory"], per_category["tool_use"]
    assert (memory["pass_rows"]["passes"], memory["pass_rows"]["n"]) == (0, 2)  # turn 1 tool False, turn 2 state False
    assert (tool_use["pass_rows"]["passes"], tool_use["pass_rows"]["n"]) == (1, 2)
    assert (memory["per_dimension"][STATE]["applicable"]["passes"], memory["per_dimension"][STATE]["applicable"]["n"]) \
        == (1, 2)
    assert (tool_use["per_dimension"][TOOL]["applicable"]["passes"],
            tool_use["per_dimension"][TOOL]["applicable"]["n"]) == (1, 2)
    state = tool_use["per_dimension"][STATE]["applicable"]
    assert (state["passes"], state["n"]) == (1, 1)
    # basic_qa holds turn 0 only, which scores no state: n 0, no rate, no interval
    assert per_category["basic_qa"]["per_dimension"][STATE]["applicable"] == \
        {"passes": 0, "n": 0, "rate": None, "ci_low": None, "ci_high": None}
    assert (memory["per_dimension"][TOOL]["all"]["passes"], memory["per_dimension"][TOOL]["all"]["n"]) == (1, 2)


# Two epochs of three turns. Turn 0 passes both; turn 1 passes epoch 0, fails epoch 1 (IF);
# turn 2 passes both on IF, but its state is null in epoch 1.
TWO_EPOCHS = [(0, 0, IF, True), (0, 0, STATE, True), (0, 1, IF, True), (0, 1, STATE, True),
              (1, 0, IF, True), (1, 0, STATE, True), (1, 1, IF, False), (1, 1, STATE, True),
              (2, 0, IF, True), (2, 0, STATE, False), (2, 1, IF, True), (2, 1, STATE, None)]


def test_pass_hat_k_with_two_epochs_by_hand(convbench):
    result = convbench.compute(**_rows(TWO_EPOCHS))
    hat = result["pass_hat_k"]
    assert hat["k"] == 2 and result["n_epochs"] == 2
    # pass rows: turn 0 pass/pass; turn 1 pass/fail; turn 2 fail (state False)/pass -> 1 of 3
    assert (hat["pass_rows"]["passes"], hat["pass_rows"]["n"]) == (1, 3)
    # IF: turns 0 and 2 True in both epochs, turn 1 not -> 2 of 3
    assert (hat["per_dimension"][IF]["passes"], hat["per_dimension"][IF]["n"]) == (2, 3)
    # state: turn 2 is null in epoch 1, so only turns 0 and 1 count; both True twice
    assert (hat["per_dimension"][STATE]["passes"], hat["per_dimension"][STATE]["n"]) == (2, 2)
    # pooled: rows as independent draws; fails are (1, 1) and (2, 0) -> 4 of 6
    assert (result["pass_rows"]["passes"], result["pass_rows"]["n"]) == (4, 6)


def test_pass_hat_k_leaves_out_a_turn_incomplete_in_one_epoch(convbench):
    rows = [(0, 0, IF, True), (0, 1, IF, True), (1, 0, IF, True), (1, 1, IF, None)]
    hat = convbench.compute(**_rows(rows))["pass_hat_k"]
    assert (hat["pass_rows"]["passes"], hat["pass_rows"]["n"]) == (1, 1)


def test_pass_hat_k_is_absent_when_a_turn_lacks_an_epoch(convbench):
    result = convbench.compute(**_rows(TWO_EPOCHS[:-2]))  # turn 2 has no epoch 1
    assert result["pass_hat_k"] is None
    assert "turn 2 has 1 of the 2 epochs" in result["why_absent"]["pass_hat_k"]


def test_per_epoch_equals_a_compute_of_that_epoch_alone(convbench):
    result = convbench.compute(**_rows(TWO_EPOCHS))
    assert list(result["per_epoch"]) == [0, 1]
    for epoch in (0, 1):
        alone = convbench.compute(**_rows([row for row in TWO_EPOCHS if row[1] == epoch]))
        assert result["per_epoch"][epoch] == {"pass_rows": alone["pass_rows"], "per_dimension": alone["per_dimension"]}
    assert result["per_epoch"][1]["per_dimension"][IF]["applicable"]["rate"] == pytest.approx(2 / 3)


def test_add_batch_and_add_equal_one_compute(convbench):
    cats = [["tool_use"], ["tool_use", "basic_qa"], ["basic_qa"]]
    rows = [(turn, epoch, dim, verdict, turn != 2, cats[turn])
            for (turn, epoch, dim, verdict) in TWO_EPOCHS]
    columns = _rows(rows)
    expected = convbench.compute(**columns, z=1.5)
    convbench.add_batch(**{name: values[:5] for name, values in columns.items()})
    convbench.add(prediction=columns["predictions"][5], **{name: values[5] for name, values in columns.items()
                                                           if name != "predictions"})
    convbench.add_batch(**{name: values[6:] for name, values in columns.items()})
    assert convbench.compute(z=1.5) == expected
    assert expected["per_category"]["basic_qa"]["pass_rows"]["n"] == 4 and expected["z"] == 1.5


def test_add_batch_without_the_optional_columns_uses_their_defaults(convbench):
    convbench.add_batch(predictions=[True, None], dimensions=[IF, TOOL], turn_ids=[0, 0])
    convbench.add(prediction=None, dimensions=TOOL, turn_ids=1)
    result = convbench.compute()
    assert result["per_epoch"].keys() == {0} and "per_category" not in result
    assert result["nulls"][TOOL] == 2 and result["per_dimension"][TOOL]["all"] is None


def test_numpy_columns_score_like_lists(convbench):
    import numpy as np

    columns = _rows(HAND_SET)
    arrays = {name: np.array(values, dtype=object if name == "predictions" else None)
              for name, values in columns.items()}
    assert convbench.compute(**arrays) == convbench.compute(**columns)


def test_the_shipped_module_loads_through_load_metric():
    from ihbench.resources import load_metric, metric_names

    assert "convbench_pass_rate" in metric_names()
    result = load_metric("convbench_pass_rate").compute(predictions=[True], dimensions=[KB], turn_ids=[0])
    assert result["per_dimension"][KB]["applicable"]["rate"] == 1.0


@pytest.mark.parametrize("kwargs, message", [
    (dict(predictions=[True, False], dimensions=[KB], turn_ids=[0, 1]),
     r"dimensions: length 1 differs from predictions \(2\)"),
    (dict(predictions=[True], dimensions=[KB], turn_ids=[0], epochs=[0, 1]), r"epochs: length 2 differs"),
    (dict(predictions=[True, 1], dimensions=[KB, KB], turn_ids=[0, 1]),
     r"predictions\[1\]: expected True, False or None"),
    (dict(predictions=[True, "true"], dimensions=[KB, KB], turn_ids=[0, 1]), r"predictions\[1\]"),
    (dict(predictions=[True, True], dimensions=[KB, ""], turn_ids=[0, 1]), r"dimensions\[1\]: expected a non-empty"),
    (dict(predictions=[True, True], dimensions=[KB, "  "], turn_ids=[0, 1]), r"dimensions\[1\]"),
    (dict(predictions=[True, True], dimensions=[KB, None], turn_ids=[0, 1]), r"dimensions\[1\]"),
    (dict(predictions=[True, False, True], dimensions=[KB, IF, KB], turn_ids=[3, 3, 3]),
     r"predictions\[2\]: a second verdict for turn 3, epoch 0, kb_grounding \(the first is at row 0\)"),
    (dict(predictions=[True, True], dimensions=[KB, KB], turn_ids=[0, 1.5]), r"turn_ids\[1\]: expected an integer"),
    (dict(predictions=[True, True], dimensions=[KB, KB], turn_ids=[0, 1], epochs=[0, True]), r"epochs\[1\]"),
    (dict(predictions=[True, True], dimensions=[KB, TOOL], turn_ids=[0, 0], call_expected=[True, None]),
     r"call_expected\[1\]: expected True or False"),
    (dict(predictions=[True, True], dimensions=[KB, TOOL], turn_ids=[0, 0], call_expected=[True, False]),
     r"call_expected\[1\]: turn 0 has False here but True at row 0"),
    (dict(predictions=[True, True], dimensions=[KB, TOOL], turn_ids=[0, 0], categories=[["a"], "a"]),
     r"categories\[1\]: expected a list of category names"),
    (dict(predictions=[True, True], dimensions=[KB, TOOL], turn_ids=[0, 0], categories=[["a"], ["b"]]),
     r"categories\[1\]: turn 0 has"),
    (dict(predictions=[], dimensions=[], turn_ids=[]), r"predictions: empty input"),
    (dict(predictions=[True], turn_ids=[0]), r"dimensions: required"),
    (dict(predictions=[True], dimensions=[KB], turn_ids=[0], z=0), r"z: expected a positive number"),
    (dict(predictions=[True], dimensions=[KB], turn_ids=[0], references=[True]), r"references: not used"),
    (dict(predictions=[True], dimensions=[KB], turn_ids=[0], item_ids=["a"]), r"item_ids: unknown argument"),
])
def test_bad_input_names_the_argument_and_the_row(convbench, kwargs, message):
    with pytest.raises(ValueError, match=message):
        convbench.compute(**kwargs)


def test_add_batch_names_the_row_in_its_batch_and_refuses_a_duplicate_of_an_earlier_batch(convbench):
    with pytest.raises(ValueError, match=r"predictions\[1\]: expected True, False or None"):
        convbench.add_batch(predictions=[True, "no"], dimensions=[KB, KB], turn_ids=[0, 1])
    convbench.add_batch(predictions=[True, True], dimensions=[KB, IF], turn_ids=[0, 0])
    with pytest.raises(ValueError, match=r"predictions\[0\]: a second verdict for turn 0, epoch 0, "
                                         r"instruction_following \(the first is at row 1\)"):
        convbench.add_batch(predictions=[False], dimensions=[IF], turn_ids=[0])
    with pytest.raises(ValueError, match=r"call_expected: given here but not given with the 2 rows added before"):
        convbench.add(prediction=True, dimensions=TOOL, turn_ids=1, call_expected=True)
    # refused rows were never written: the module goes on with the good ones
    assert convbench.compute()["n_rows"] == 2
    assert convbench.compute(predictions=[False], dimensions=[IF], turn_ids=[0])["n_rows"] == 1


def test_a_turn_keeps_its_call_expected_across_batches(convbench):
    convbench.add_batch(predictions=[True], dimensions=[TOOL], turn_ids=[4], call_expected=[True])
    with pytest.raises(ValueError, match=r"call_expected\[1\]: turn 4 has False here but True at row 0"):
        convbench.add_batch(predictions=[True, True], dimensions=[KB, IF], turn_ids=[5, 4],
                            call_expected=[False, False])
    assert convbench.compute()["per_dimension"][TOOL]["all"]["n"] == 1
