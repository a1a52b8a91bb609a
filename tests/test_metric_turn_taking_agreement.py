"""The Talking Turns agreement module: hand-computed sequences, the reference's defects, bad inputs.

Likelihood vectors are written with `p(...)` in the judge's order C, NA, I, BC, T; event and turn
sequences as space-separated strings. Chunks that are not instances get likelihoods that would
flip the result if they were wrongly counted.
"""
import math
import re
from pathlib import Path

import evaluate
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MODULE_DIR = Path(__file__).resolve().parents[1] / "metrics" / "turn_taking_agreement"
METRICS = ("speak_up", "backchannel", "interrupt", "convey_turn", "handle_interruption")


def load(config_name="default"):
    return evaluate.load(str(MODULE_DIR), config_name=config_name)


def module_source():
    """The module evaluate imported (it has a sibling file, so it is imported as a package member)."""
    import inspect

    return inspect.getmodule(type(load()))


def p(C=0.0, NA=0.0, I=0.0, BC=0.0, T=0.0):  # noqa: N803 - the judge's label names
    return [C, NA, I, BC, T]


FILLER = p(C=0.05, NA=0.05, I=0.9, BC=0.9, T=0.9)  # would be judged T / BC / I if counted


def rec(events, turns, end_times=()):
    events, turns = events.split(), turns.split()
    if len(turns) == 1:
        turns = turns * len(events)
    return {"events": events, "turns": turns, "end_times": list(end_times)}


def score(metric, predictions, references, **kwargs):
    return load().compute(predictions=predictions, references=references, metric=metric, **kwargs)


def class_view(result, name):
    entry = result[name]
    return entry["agreement"], entry["n"]


# --- the five metrics, by hand -------------------------------------------------------------

def test_speak_up_agreement_by_hand():
    # chunk:   0  1  2  3  4  5  6  7  8  9 10 11 12   (user B holds the floor throughout)
    # event:   C NA NA NA  T NA NA NA  C NA NA NA  C
    # instances (3 silent chunks before, event C or T): k=4 (T), k=8 (C), k=12 (C)
    # judge: k=4 T-C=0.6-0.2>0 -> T (agrees); k=8 0.5-0.3>0 -> T (system C: disagrees);
    #        k=12 0.1-0.7<0 -> C (agrees).  T: 1/1; C: 1/2, Wilson(1, 2) = (0.0945, 0.9055)
    probs = [FILLER] * 13
    probs[4], probs[8], probs[12] = p(C=0.2, T=0.6), p(C=0.3, T=0.5), p(C=0.7, T=0.1)
    result = score("speak_up", [probs], [rec("C NA NA NA T NA NA NA C NA NA NA C", "B")])
    assert result["metric"] == "speak_up" and result["threshold"] == 0.0
    assert result["n_instances"] == 3
    assert class_view(result, "T") == (1.0, 1)
    assert class_view(result, "C") == (0.5, 2)
    assert result["C"]["ci_low"] == pytest.approx(0.0945312, abs=1e-6)
    assert result["C"]["ci_high"] == pytest.approx(0.9054688, abs=1e-6)


def test_backchannel_agreement_by_hand():
    # chunk: 0  1  2  3  4  5  6
    # event: C BC BC  C  C NA NA
    # turn:  B  B  B  B  B  B  A
    # instances (turn B, previous event not BC): k=1 (BC), k=4 (not BC), k=5 (not BC);
    # k=0 has no previous chunk, k=2/3 follow a BC, k=6 is the AI's floor.
    # judge BC iff p[BC] > 0.1: k=1 0.3 -> BC (agrees); k=4 0.05 -> not (agrees);
    # k=5 0.2 -> BC (system not: disagrees).  BC: 1/1; not_BC: 1/2.
    probs = [FILLER] * 7
    probs[1], probs[4], probs[5] = p(BC=0.3), p(BC=0.05), p(BC=0.2)
    result = score("backchannel", [probs], [rec("C BC BC C C NA NA", "B B B B B B A")])
    assert result["n_instances"] == 3
    assert class_view(result, "BC") == (1.0, 1)
    assert class_view(result, "not_BC") == (0.5, 2)
    assert result["threshold"] == 0.1


def test_interrupt_agreement_by_hand():
    # chunk: 0 1 2 3 4 5 6   (user B holds the floor)
    # event: C C I I C C T
    # instances (previous event C, event C or I): k=1 (C), k=2 (I), k=5 (C); k=6 is T.
    # judge I iff p[I]-p[C] > -0.45: k=1 0.1-0.8=-0.7 -> C (agrees); k=2 0.3-0.5=-0.2 -> I
    # (agrees); k=5 0.2-0.6=-0.4 -> I (system C: disagrees).  I: 1/1; C: 1/2.
    probs = [FILLER] * 7
    probs[1], probs[2], probs[5] = p(C=0.8, I=0.1), p(C=0.5, I=0.3), p(C=0.6, I=0.2)
    probs[6] = p(C=0.0, I=1.0)
    result = score("interrupt", [probs], [rec("C C I I C C T", "B")])
    assert result["n_instances"] == 3
    assert class_view(result, "I") == (1.0, 1)
    assert class_view(result, "C") == (0.5, 2)


def test_convey_turn_agreement_by_hand():
    # chunk: 0  1  2  3 4  5  6  7 8   (the AI, A, holds the floor and pauses twice)
    # event: C NA NA NA C NA NA NA T
    # instances: k=4 (C), k=8 (T).  judge T iff p[T]-p[C] > 0 (strict):
    # k=4 0.3-0.3=0 -> C (agrees: the comparison is strict); k=8 0.2-0.6 -> C (system T:
    # disagrees).  C: 1/1; T: 0/1, Wilson(0, 1) = (0, 0.7935).
    probs = [FILLER] * 9
    probs[4], probs[8] = p(C=0.3, T=0.3), p(C=0.6, T=0.2)
    result = score("convey_turn", [probs], [rec("C NA NA NA C NA NA NA T", "A")])
    assert result["n_instances"] == 2
    assert class_view(result, "C") == (1.0, 1)
    assert class_view(result, "T") == (0.0, 1)
    assert result["T"]["ci_low"] == 0.0
    assert result["T"]["ci_high"] == pytest.approx(0.7934507, abs=1e-6)


def test_handle_interruption_agreement_by_hand():
    # Three recordings; the user (B) overlaps the AI's floor, turn AB from the 2nd overlap chunk.
    # r0: C I I I T, turns A A AB AB AB: k=4 (T), judge 0.3-0.35=-0.05 > -0.1 -> T (agrees)
    # r1: C I I I C, same turns:         k=4 (C), judge 0.4-0.45=-0.05 -> T (disagrees)
    # r2: C I I C,   turns A A AB AB:    k=3 has only two I before it -> no instance
    # C: 0/1; T: 1/1.
    floor = "A A AB AB AB"
    predictions = [[FILLER] * 4 + [p(C=0.35, T=0.3)], [FILLER] * 4 + [p(C=0.45, T=0.4)],
                   [FILLER] * 3 + [p(C=0.0, T=1.0)]]
    references = [rec("C I I I T", floor), rec("C I I I C", floor), rec("C I I C", "A A AB AB")]
    result = score("handle_interruption", predictions, references)
    assert result["n_instances"] == 2
    assert class_view(result, "T") == (1.0, 1)
    assert class_view(result, "C") == (0.0, 1)
    assert result["threshold"] == -0.1


# --- the reference implementation's defects ------------------------------------------------

def test_no_wrap_around_for_k_below_3():
    # chunk: 0  1 2 3  4  5  6 (user B). With wrap-around, k=2 would look back at chunks
    # 6, 0, 1 (all NA) and count as a T instance; a look-back before chunk 0 must fail instead.
    events = "NA NA T C NA NA NA"
    probs = [p(C=0.0, T=1.0)] * 7
    result = score("speak_up", [probs], [rec(events, "B")])
    assert result["n_instances"] == 0
    # One more silent chunk in front gives k=3 three real silent chunks: now it counts.
    result = score("speak_up", [[p(C=0.0, T=1.0)] * 8], [rec("NA " + events, "B")])
    assert result["n_instances"] == 1 and class_view(result, "T") == (1.0, 1)


def test_no_wrap_around_at_start_of_first_chunk():
    # k=0 is T; wrap-around would read chunks 2, 3, 4 (NA NA NA) and count it.
    result = score("speak_up", [[p(T=1.0)] * 5], [rec("T C NA NA NA", "B")])
    assert result["n_instances"] == 0


def test_lookbacks_do_not_cross_recording_boundaries():
    # r0 = C NA NA NA (ends in a pause), r1 = T C NA NA NA T.
    # Separate: r1's first chunk (T) has no look-back -> only r1's k=5 counts: T 1/1.
    # Concatenated into one recording, chunk 4 (r1's T) follows three NA -> T 2/2.
    probs0, probs1 = [FILLER] * 4, [p(T=1.0)] + [FILLER] * 4 + [p(T=1.0)]
    separate = score("speak_up", [probs0, probs1], [rec("C NA NA NA", "B"), rec("T C NA NA NA T", "B")])
    joined = score("speak_up", [probs0 + probs1], [rec("C NA NA NA T C NA NA NA T", "B")])
    assert separate["n_instances"] == 1 and class_view(separate, "T") == (1.0, 1)
    assert joined["n_instances"] == 2 and class_view(joined, "T") == (1.0, 2)
    # Depth-1 look-backs too: r0 ends in C, r1 starts with I -> no interrupt instance across.
    separate = score("interrupt", [[FILLER] * 2, [FILLER] * 2], [rec("C C", "B"), rec("I C", "B")])
    assert separate["n_instances"] == 1  # only r0's k=1


def test_lookbacks_do_not_cross_gaps_in_end_times():
    events, probs = rec("C NA NA NA T", "B"), [FILLER] * 4 + [p(T=1.0)]
    contiguous = [0.24 + 0.04 * i for i in range(5)]  # float noise stays within 1e-6 s
    gap = [0.24, 0.28, 0.32, 0.60, 0.64]  # chunks skipped between chunk 2 and chunk 3
    for end_times, expected in (([], 1), (contiguous, 1), (gap, 0)):
        result = score("speak_up", [probs], [{**events, "end_times": end_times}])
        assert result["n_instances"] == expected, end_times
    # A gap right before the decision breaks a depth-1 look-back as well.
    result = score("interrupt", [[FILLER, p(C=1.0)]], [rec("C C", "B", [1.0, 1.5])])
    assert result["n_instances"] == 0


def test_empty_decision_class_gives_none_with_n_zero():
    result = score("speak_up", [[FILLER] * 4 + [p(T=1.0)]], [rec("C NA NA NA T", "B")])
    assert result["C"] == {"agreement": None, "n": 0, "ci_low": None, "ci_high": None}
    result = score("backchannel", [[FILLER] * 3], [rec("C C C", "A")])
    assert result["n_instances"] == 0
    assert result["BC"]["agreement"] is None and result["not_BC"]["agreement"] is None


def test_in_and_i_give_identical_results():
    floor = "A A AB AB AB"
    predictions = [[FILLER] * 4 + [p(C=0.35, T=0.3)], [FILLER] * 4 + [p(C=0.45, T=0.4)]]
    with_i = [rec("C I I I T", floor), rec("C I I I C", floor)]
    with_in = [rec("C IN IN IN T", floor), rec("C I IN I C", floor)]
    for metric in METRICS:
        assert score(metric, predictions, with_i) == score(metric, predictions, with_in)
    labeler = load("single_label")
    assert labeler.compute(predictions=predictions, references=with_i) == \
        labeler.compute(predictions=predictions, references=with_in)
    assert score("handle_interruption", predictions, with_in)["n_instances"] == 2


# --- thresholds ----------------------------------------------------------------------------

def test_threshold_override_changes_labels():
    # The interrupt example: k=5 has p[I]-p[C] = -0.4, an I at -0.45 but a C at -0.3,
    # which then agrees with the system's C: C 2/2. k=2 (-0.2) stays I.
    probs = [FILLER] * 7
    probs[1], probs[2], probs[5] = p(C=0.8, I=0.1), p(C=0.5, I=0.3), p(C=0.6, I=0.2)
    references = [rec("C C I I C C T", "B")]
    result = score("interrupt", [probs], references, thresholds={"interrupt": -0.3})
    assert result["threshold"] == -0.3
    assert class_view(result, "C") == (1.0, 2) and class_view(result, "I") == (1.0, 1)
    # Another metric's threshold does not touch this one.
    unrelated = score("interrupt", [probs], references, thresholds={"speak_up": 0.9})
    assert unrelated == score("interrupt", [probs], references)
    # single_label: lowering C's operating point to 0.05 relabels p(C=0.1, NA=0.9) from NA to C.
    labeler = load("single_label")
    kwargs = {"predictions": [[p(C=0.1, NA=0.9)]], "references": [rec("NA", "B")]}
    assert labeler.compute(**kwargs)["confusion_matrix"][0][0] == 1
    assert labeler.compute(**kwargs, thresholds={"C": 0.05})["confusion_matrix"][1][0] == 1


# --- single label --------------------------------------------------------------------------

SINGLE_PROBS = [
    p(C=0.5, NA=0.3, T=0.2),                   # a: C > 0.2 -> C
    p(C=0.2, NA=0.5, I=0.1, BC=0.1, T=0.1),    # b: C not > 0.2; NA > 0.45 -> NA
    p(C=0.1, NA=0.1, I=0.45, BC=0.3, T=0.05),  # c: I > 0.4 -> I
    p(C=0.1, NA=0.2, I=0.2, BC=0.45, T=0.05),  # d: BC > 0.4 -> BC
    p(C=0.1, NA=0.1, I=0.1, BC=0.2, T=0.5),    # e: T > 0.4 -> T
    p(C=0.15, NA=0.25, I=0.35, BC=0.05, T=0.2),  # f: no operating point passed -> argmax I
]
SINGLE_EVENTS = "C NA C BC NA I"  # the system's events for a..f


def test_single_label_confusion_matrix_counts():
    # judge:  C NA I BC T I     system: C NA C BC NA I
    # rows (judge) / columns (system) in the order NA, C, T, I, BC:
    result = load("single_label").compute(predictions=[SINGLE_PROBS], references=[rec(SINGLE_EVENTS, "B")])
    assert result["labels"] == ["NA", "C", "T", "I", "BC"]
    assert result["confusion_matrix"] == [
        [1, 0, 0, 0, 0],  # judge NA: b (NA)
        [0, 1, 0, 0, 0],  # judge C: a (C)
        [1, 0, 0, 0, 0],  # judge T: e (NA)
        [0, 1, 0, 1, 0],  # judge I: c (C), f (I)
        [0, 0, 0, 0, 1],  # judge BC: d (BC)
    ]
    assert result["n_chunks"] == 6


def test_single_label_row_normalized_copy():
    result = load("single_label").compute(predictions=[SINGLE_PROBS], references=[rec(SINGLE_EVENTS, "B")])
    normalized = result["confusion_matrix_row_normalized"]
    assert normalized[3] == [0.0, 0.5, 0.0, 0.5, 0.0]
    assert normalized[0] == [1.0, 0.0, 0.0, 0.0, 0.0]
    # A judge label never assigned leaves a zero row: here nothing is judged T or BC.
    result = load("single_label").compute(predictions=[[p(NA=0.9), p(C=0.9)]], references=[rec("T BC", "B")])
    assert result["confusion_matrix_row_normalized"][2] == [0.0] * 5
    assert result["confusion_matrix_row_normalized"][4] == [0.0] * 5


def test_single_label_f1_per_label_by_hand():
    # F1 = 2 TP / (judge count + system count):
    # NA 2*1/(1+2) = 2/3; C 2*1/(1+2) = 2/3; T 0/(1+0) = 0; I 2*1/(2+1) = 2/3; BC 2/(1+1) = 1
    # macro = (3 * 2/3 + 0 + 1) / 5 = 0.6
    result = load("single_label").compute(predictions=[SINGLE_PROBS], references=[rec(SINGLE_EVENTS, "B")])
    expected = {"NA": 2 / 3, "C": 2 / 3, "T": 0.0, "I": 2 / 3, "BC": 1.0}
    assert result["f1"] == pytest.approx(expected)
    assert result["macro_f1"] == pytest.approx(0.6)


def test_single_label_absent_label_f1_is_none():
    # judge NA, C; system NA, BC. T and I are used by neither -> None (not 1.0);
    # BC is used by the system only -> 0.0. NA 2/(1+1) = 1; C 0/(1+0) = 0; macro (1+0+0)/3.
    result = load("single_label").compute(predictions=[[p(NA=0.9), p(C=0.9)]], references=[rec("NA BC", "B")])
    assert result["f1"] == {"NA": 1.0, "C": 0.0, "T": None, "I": None, "BC": 0.0}
    assert result["macro_f1"] == pytest.approx(1 / 3)


# --- properties ----------------------------------------------------------------------------

def check_wilson(successes, n):
    low, high = module_source().wilson_interval(successes, n)
    estimate = successes / n
    assert 0.0 <= low <= estimate <= high <= 1.0
    assert high - low > 0.0


def check_result(result):
    classes = [key for key, value in result.items() if isinstance(value, dict)]
    assert len(classes) == 2
    assert sum(result[name]["n"] for name in classes) == result["n_instances"]
    for name in classes:
        entry = result[name]
        if entry["n"] == 0:
            assert entry == {"agreement": None, "n": 0, "ci_low": None, "ci_high": None}
        else:
            assert 0.0 <= entry["ci_low"] <= entry["agreement"] <= entry["ci_high"] <= 1.0


def check_recordings(metric, recordings):
    predictions = [probs for probs, _ in recordings]
    references = [reference for _, reference in recordings]
    result = score(metric, predictions, references)
    check_result(result)
    assert score(metric, predictions[::-1], references[::-1]) == result


EVENT_TOKENS = ("NA", "C", "T", "I", "IN", "BC")
TURN_TOKENS = ("B", "A", "AB", "BA", "NA")
# What each metric looks for, to weight the draws: the floor holder, and the events of its
# look-back and decision (all tokens stay possible).
METRIC_FLOOR = {"speak_up": "B", "backchannel": "B", "interrupt": "B", "convey_turn": "A", "handle_interruption": "AB"}
METRIC_EVENTS = {"speak_up": ("NA", "NA", "C", "T"), "backchannel": ("BC", "C"), "interrupt": ("C", "I"),
                 "convey_turn": ("NA", "NA", "C", "T"), "handle_interruption": ("I", "IN", "C", "T")}



@st.composite
def cases(draw):
    """A metric and 1-3 recordings built from runs of one event (1-4 chunks), as real event
    streams are, mostly under the floor holder the metric looks at, so that most draws
    contain instances."""
    metric = draw(st.sampled_from(METRICS))
    result = []
    for _ in range(draw(st.integers(1, 3))):
        tokens = st.sampled_from(EVENT_TOKENS + METRIC_EVENTS[metric])
        runs = draw(st.lists(st.tuples(tokens, st.integers(1, 4)), max_size=8))
        events = [event for event, length in runs for _ in range(length)]
        n = len(events)
        floor = METRIC_FLOOR[metric]
        turns = [draw(st.sampled_from(TURN_TOKENS)) if draw(st.integers(0, 9)) == 0 else floor for _ in range(n)]
        unit = st.floats(0.0, 1.0, allow_nan=False)
        probs = draw(st.lists(st.lists(unit, min_size=5, max_size=5), min_size=n, max_size=n))
        result.append((probs, {"events": events, "turns": turns, "end_times": []}))
    if all(len(probs) == 0 for probs, _ in result):
        result[0] = ([p(NA=1.0)], {"events": ["NA"], "turns": ["B"], "end_times": []})
    return metric, result

@settings(max_examples=50, deadline=None, database=None)
@given(st.integers(0, 10**6), st.integers(1, 10**6))
def test_wilson_interval_contains_estimate_within_unit_interval(successes, n):
    check_wilson(min(successes, n), n)

@settings(max_examples=50, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_agreement_in_unit_interval_and_recording_order_irrelevant(case):
    check_recordings(*case)


def test_wilson_interval_by_hand():
    # p = 1/2, n = 2, z = 1.96: centre 0.5, half-width 1.96*sqrt(0.125 + z^2/16)/(1 + z^2/2) = 0.4055
    low, high = module_source().wilson_interval(1, 2)
    assert (low, high) == pytest.approx((0.0945312, 0.9054688), abs=1e-6)
    assert module_source().wilson_interval(0, 0) == (None, None)


# --- bad inputs ----------------------------------------------------------------------------

def good():
    return [[FILLER] * 3, [FILLER] * 4], [rec("C NA NA", "B"), rec("C NA NA T", "B")]


def broken(change):
    predictions, references = good()
    change(predictions, references)
    return predictions, references


def set_item(container, path, value):
    for key in path[:-1]:
        container = container[key]
    container[path[-1]] = value


BAD_INPUTS = [
    ("predictions[1][2]: expected 5 likelihoods, got 4",
     lambda P, R: set_item(P, [1, 2], [0.1, 0.2, 0.3, 0.4])),
    ("predictions[0][1][3]: likelihood of BC is nan", lambda P, R: set_item(P, [0, 1], p(BC=math.nan))),
    ("predictions[1][0][2]: expected a number, got 'x'", lambda P, R: set_item(P, [1, 0], [0.1, 0.1, "x", 0.1, 0.1])),
    ("predictions[1]: expected a list of chunks", lambda P, R: set_item(P, [1], 0.5)),
    # battery 22, N8: logits and percentages were scored as likelihoods (the CLI refused them)
    ("predictions[0][2][0]: likelihood of C is -1, outside [0, 1]; logits?", lambda P, R: set_item(P, [0, 2], [-1] * 5)),
    ("predictions[1][1][4]: likelihood of T is 80, outside [0, 1]; percentages?",
     lambda P, R: set_item(P, [1, 1], [0, 0, 0, 0, 80])),
    ("references[1]['events'][3]: unknown event 'X'", lambda P, R: set_item(R, [1, "events", 3], "X")),
    ("references[0]['turns'][1]: unknown turn 'C'", lambda P, R: set_item(R, [0, "turns", 1], "C")),
    ("references[1]['events']: length 3 differs from the 4 chunks", lambda P, R: R[1]["events"].pop()),
    ("references[0]['turns']: length 4 differs from the 3 chunks", lambda P, R: R[0]["turns"].append("B")),
    ("references[1]['end_times']: length 2 differs from the 4 chunks",
     lambda P, R: set_item(R, [1, "end_times"], [0.24, 0.28])),
    ("references[0]['end_times'][2]: end time 0.28 does not follow 0.28",
     lambda P, R: set_item(R, [0, "end_times"], [0.24, 0.28, 0.28])),
    ("references[0]['end_times'][1]: end time is nan",
     lambda P, R: set_item(R, [0, "end_times"], [0.24, math.nan, 0.32])),
    ("references[1]: missing key 'turns'", lambda P, R: R[1].pop("turns")),
    ("references[0]: expected a dict", lambda P, R: set_item(R, [0], ["C", "NA", "NA"])),
    ("references: 1 recordings, but predictions has 2", lambda P, R: R.pop()),
]


@pytest.mark.parametrize("message, change", BAD_INPUTS, ids=[message.split(":")[0] for message, _ in BAD_INPUTS])
def test_bad_inputs_raise_value_error_naming_argument_and_index(message, change):
    predictions, references = broken(change)
    with pytest.raises(ValueError, match=re.escape(message)):
        score("speak_up", predictions, references)


@pytest.mark.parametrize("kwargs, message", [
    ({"metric": "speakup"}, "metric: unknown metric 'speakup'"),
    ({}, "metric: required"),
    ({"metric": "speak_up", "thresholds": {"speed": 1.0}}, "thresholds['speed']: unknown metric"),
    ({"metric": "speak_up", "thresholds": {"speak_up": math.nan}}, "thresholds['speak_up']: expected a finite number"),
    ({"metric": "speak_up", "thresholds": 0.2}, "thresholds: expected a dict"),
    ({"metric": "speak_up", "thresholds": {"speak_up": 1.5}}, "thresholds['speak_up']: 1.5 is outside [-1, 1]"),
    ({"metric": "speak_up", "threshold": 0.2}, "threshold: unknown argument"),
])
def test_bad_options_raise_value_error_naming_argument(kwargs, message):
    predictions, references = good()
    with pytest.raises(ValueError, match=re.escape(message)):
        load().compute(predictions=predictions, references=references, **kwargs)


def test_empty_input_raises_value_error():
    with pytest.raises(ValueError, match=re.escape("predictions: empty input")):
        load().compute(predictions=[], references=[], metric="speak_up")
    with pytest.raises(ValueError, match=re.escape("predictions: empty input; no recording has a chunk")):
        load().compute(predictions=[[]], references=[rec("", "B")], metric="speak_up")


def test_single_label_rejects_metric_and_unknown_config():
    predictions, references = good()
    with pytest.raises(ValueError, match=re.escape("metric: not used by the single_label configuration")):
        load("single_label").compute(predictions=predictions, references=references, metric="speak_up")
    with pytest.raises(ValueError, match=re.escape("thresholds['speak_up']: unknown label")):
        load("single_label").compute(predictions=predictions, references=references, thresholds={"speak_up": 0.1})
    with pytest.raises(ValueError, match=re.escape("thresholds['T']: 5 is outside [0, 1]")):  # battery 22 nit
        load("single_label").compute(predictions=predictions, references=references, thresholds={"T": 5})
    with pytest.raises(ValueError, match=re.escape("config_name: unknown configuration 'multi'")):
        load("multi")
