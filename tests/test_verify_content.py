"""`ihbench verify`'s lexical content checks (issue 28): each flags a planted defect, the shipped
dev set passes them, a justified finding is silent and a justification that cannot settle
anything is refused."""
import json
import shutil

import pytest

from ihbench.dataset.checks.consistency import sentences
from ihbench.dataset.checks.numbers import quantities
from ihbench.dataset.sources import source_files
from ihbench.dataset.verify import verify_paths

SHIPPED = source_files()


def _copy(tmp_path, source=None):
    source = source or SHIPPED[0]
    target = tmp_path / source.name
    shutil.copy(source, target)
    return target


def _rewrite(path, mutate):
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data, indent=2))
    return data


def _problems(path, check):
    return [p for p in verify_paths([path], check_audio=False).problems if p.message.startswith(f"{check}:")]


def _point(data, after_plain=0):
    """(index, turn) of the first interrupted turn with at least `after_plain` plain turns before it."""
    for index, turn in enumerate(data["turns"]):
        plain = sum("interruption" not in t for t in data["turns"][:index])
        if "interruption" in turn and plain >= after_plain:
            return index, turn
    raise AssertionError("no such point")


def test_the_shipped_dev_set_passes_the_content_checks():
    problems = [p for p in verify_paths(check_audio=False).problems if ":" in p.message and
                p.message.split(":")[0] in ("quotes_unheard", "restates_heard", "unsupported_number",
                                              "inconsistent_verdict")]
    assert problems == []


@pytest.mark.parametrize("written, spoken", [
    ("$45", "forty-five dollars"), ("3 pm", "three p.m."), ("$412.87", "four hundred twelve dollars and eighty-seven cents"),
    ("6.49 percent", "six point four nine percent"), ("$318", "three eighteen"), ("2207 Sycamore", "twenty-two oh seven"),
    ("July 22, 1988", "July twenty-second, nineteen eighty-eight"), ("the 25th", "the twenty-fifth"),
])
def test_a_number_written_and_spoken_is_one_value(written, spoken):
    values = lambda text: {v for q in quantities(text) for v in q.values}  # noqa: E731
    assert values(written) & values(spoken)


def test_a_code_read_digit_by_digit_is_a_digit_run():
    (code,) = quantities("member number six three five eight two two four one")
    assert code.digits and code.value == "63582241"


def test_a_number_the_agent_was_never_given_is_flagged_with_its_turn(tmp_path):
    path = _copy(tmp_path)
    _rewrite(path, lambda d: d["turns"][1].update(assistant=d["turns"][1]["assistant"] +
                                                   " The fee is ninety-seven dollars and thirteen cents."))
    (problem,) = _problems(path, "unsupported_number")
    assert problem.turn == 2 and problem.field == "turns[1].assistant"
    assert "'ninety-seven dollars and thirteen cents'" in problem.message


def test_a_number_the_knowledge_base_holds_is_not_flagged(tmp_path):
    path = _copy(tmp_path)

    def plant(d):
        d["knowledge_base"]["guidelines"].append("The restocking fee is $97.13.")
        d["turns"][1]["assistant"] += " The fee is ninety-seven dollars and thirteen cents."
    _rewrite(path, plant)
    assert _problems(path, "unsupported_number") == []


def test_a_criterion_quoting_unheard_words_the_model_cannot_know_is_flagged(tmp_path):
    path = _copy(tmp_path)

    def plant(d):
        index, turn = _point(d)
        turn["assistant"] += " We also offer the Quillmore warranty."
        turn["interruption"]["rq_rubrics"][0] = "Continues with 'the Quillmore warranty' instead of starting over."
        return index
    _rewrite(path, plant)
    (problem,) = _problems(path, "quotes_unheard")
    assert problem.field.endswith("interruption.rq_rubrics[0]") and "'Quillmore'" in problem.message


def test_a_criterion_quoting_unheard_words_the_model_can_know_is_not_flagged(tmp_path):
    path = _copy(tmp_path)

    def plant(d):
        _, turn = _point(d)
        d["system_message"] += " We sell the Quillmore warranty."
        turn["assistant"] += " We also offer the Quillmore warranty."
        turn["interruption"]["rq_rubrics"][0] = "Continues with 'the Quillmore warranty' instead of starting over."
    _rewrite(path, plant)
    assert _problems(path, "quotes_unheard") == []


@pytest.mark.parametrize("known", [False, True])
def test_a_criterion_quoting_an_identifier_from_the_unheard_part_is_flagged_unless_the_model_has_it(tmp_path, known):
    """A written identifier (letters and digits, "RX-7731") is neither a number nor a word to the
    other comparisons; the model cannot read it out unless its context holds it."""
    path = _copy(tmp_path)

    def plant(d):
        _, turn = _point(d)
        if known:
            d["system_message"] += " Returns use the form RX-7731."
        turn["assistant"] += " The form is RX-7731."
        turn["interruption"]["rq_rubrics"][0] = "Reads out the form 'RX-7731' it was about to name."
    _rewrite(path, plant)
    problems = _problems(path, "quotes_unheard")
    if known:
        assert problems == []
    else:
        (problem,) = problems
        assert "does not hold 'RX-7731'" in problem.message


def _heard_twice(d, criterion):
    index, turn = _point(d, after_plain=2)
    d["system_message"] += " The restocking fee is seventy-three dollars."
    for earlier in [t for t in d["turns"][:index] if "interruption" not in t][:2]:
        earlier["assistant"] += " The restocking fee is seventy-three dollars."
    turn["interruption"]["rq_rubrics"][1] = criterion
    return index


def test_a_criterion_demanding_a_number_heard_twice_is_flagged(tmp_path):
    path = _copy(tmp_path)
    data = _rewrite(path, lambda d: _heard_twice(d, "Gives the seventy-three dollar restocking fee."))
    index, _ = _point(data, after_plain=2)
    (problem,) = _problems(path, "restates_heard")
    assert problem.turn == index + 1 and problem.field == f"turns[{index}].interruption.rq_rubrics[1]"
    assert "'seventy-three'" in problem.message


@pytest.mark.parametrize("criterion", [
    "Mentions the restocking fee (seventy-three dollars, heard twice, may be said again or not).",
    "Does not repeat the seventy-three dollar restocking fee.",
    "Keeps any mention of the seventy-three dollar fee short.",
])
def test_a_criterion_that_does_not_demand_the_number_is_not_flagged(tmp_path, criterion):
    path = _copy(tmp_path)
    _rewrite(path, lambda d: _heard_twice(d, criterion))
    assert _problems(path, "restates_heard") == []


def test_a_justified_finding_is_silent(tmp_path):
    path = _copy(tmp_path)

    def plant(d):
        _heard_twice(d, "Gives the seventy-three dollar restocking fee.")
        _, turn = _point(d, after_plain=2)
        turn["interruption"]["review"].setdefault("accepted", []).append(
            {"check": "restates_heard", "criterion": 1, "reason": "The fee is the answer to her question."})
        d["turns"][1]["assistant"] += " That is ninety-seven dollars and thirteen cents."
        d["turns"][1].setdefault("accepted", []).append(
            {"check": "unsupported_number", "text": "ninety-seven dollars and thirteen cents", "reason": "A sum."})
    _rewrite(path, plant)
    assert verify_paths([path], check_audio=False).ok


@pytest.mark.parametrize("entry, where, expected", [
    ({"check": "made_up", "criterion": 0, "reason": "x"}, "point", "unknown check 'made_up'"),
    ({"check": "restates_heard", "criterion": 0, "reason": " \u200b"}, "point", "reason: is empty"),
    ({"check": "restates_heard", "criterion": 9, "reason": "x"}, "point", "criterion: must be"),
    ({"check": "unsupported_number", "text": "five", "reason": "x"}, "point", "settled in the turn's accepted"),
    ({"check": "restates_heard", "criterion": 0, "reason": "x"}, "turn", "settled in the point's"),
    ({"check": "unsupported_number", "reason": "x"}, "turn", "text: is missing"),
    ({"check": "unsupported_number", "text": "five", "reason": "x", "note": "y"}, "turn", "note: unknown key"),
])
def test_an_invalid_justification_is_refused_naming_its_field(tmp_path, entry, where, expected):
    path = _copy(tmp_path)

    def plant(d):
        index, turn = _point(d)
        target = turn["interruption"]["review"] if where == "point" else turn
        target.setdefault("accepted", []).append(entry)
        return index
    data = _rewrite(path, plant)
    index, _ = _point(data)
    problems = [p for p in verify_paths([path], check_audio=False).problems if expected in str(p)]
    assert any(p.turn == index + 1 for p in problems) and all(".accepted[" in p.field for p in problems)


def _length_pair(tmp_path, passed_baseline, failed_baseline):
    """The problems naming both planted points: one passed, one failed under the same length rule."""
    first, second = _copy(tmp_path, SHIPPED[1]), _copy(tmp_path, SHIPPED[2])
    planted = []
    for path, baseline, met in ((first, passed_baseline, True), (second, failed_baseline, False)):
        def plant(d, baseline=baseline, met=met):
            _, turn = _point(d, after_plain=3)
            turn["interruption"]["rq_rubrics"][0] = "Keeps the reply to a sentence or two."
            turn["interruption"]["baseline"] = baseline
            turn["interruption"]["baseline_rq_verdicts"][0] = {"met": met, "reason": "length"}
        data = _rewrite(path, plant)
        planted.append(f"{path.name} turn {_point(data, after_plain=3)[0] + 1} rq_rubrics[0]")
    return [p for p in verify_paths([first, second], check_audio=False).problems
            if p.message.startswith("inconsistent_verdict:") and all(where in p.message for where in planted)]


def test_a_length_rule_judged_two_ways_is_flagged_at_the_later_point(tmp_path):
    problems = _length_pair(tmp_path, "Sure. It is done. The refund posts Friday. Thanks for calling.",
                            "Sure, it is done. Thanks for calling.")
    assert len(problems) == 1 and "4 sentence(s)" in problems[0].message and "2 at" in problems[0].message
    assert problems[0].field.endswith("baseline_rq_verdicts[0]")


def test_a_length_rule_judged_the_same_way_is_not_flagged(tmp_path):
    assert _length_pair(tmp_path, "Sure, it is done.", "Sure. It is done. The refund posts Friday. Thanks.") == []


def test_sentences_are_counted_as_spoken():
    assert sentences("It is at 4:30 p.m. with Dr. Moss. Yes! P.O. Box 6318, Raleigh") == 3
