"""`ihbench verify`: the shipped set passes; broken copies, one fault each, are rejected by name."""
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from hypothesis import given, settings
from hypothesis import strategies as st
from ihbench.dataset.sources import SOURCES_DIR, SourceError, load_conversation, source_files
from ihbench.dataset.verify import verify_paths

SHIPPED = source_files()


def test_the_shipped_dev_set_passes_and_is_big_enough():
    report = verify_paths()
    assert report.ok, "\n".join(map(str, report.problems))
    conversations = report.conversations
    points = [t for c in conversations for t in c.interrupted_turns]
    assert len(conversations) >= 12
    assert {c.domain_name for c in conversations} == {
        "saas", "financial_services", "healthcare", "telecom", "e_commerce",
        "travel", "education", "government", "subscription_media", "professional_services"}
    assert len(points) >= 100
    for kind in ("normal", "impatient", "correction", "topic_switch", "filler", "pushback"):
        assert sum(t.interruption.type == kind for t in points) >= 8, kind
    assert all(16 <= 2 * len(c.turns) <= 40 for c in conversations)
    depths = {t.index for t in points}
    assert {0, 4, 5, 9, 10, 14}.issubset(depths) and any(d >= 15 for d in depths)


def test_no_two_shipped_conversations_are_alike():
    """A goal may have several callers (the paper's several intents per goal), never twice the same."""
    conversations = [load_conversation(p) for p in SHIPPED]
    by_goal = {}
    for c in conversations:
        by_goal.setdefault(c.goal, []).append(c)
    assert any(len(group) >= 2 for group in by_goal.values())
    for group in by_goal.values():
        assert len({c.user_intent["profile"] for c in group}) == len(group)
        assert len({json.dumps(c.user_intent["interruption_probabilities"], sort_keys=True) for c in group}) == len(group)
    first_user_lines = [c.turns[0].user for c in conversations]
    assert len(set(first_user_lines)) == len(first_user_lines)


PAPER_TYPES = {"pushback": 24.5, "impatient": 19.6, "normal": 18.9, "topic_switch": 17.1, "filler": 14.0,
               "correction": 5.8}  # the IHBench paper, Appendix A (percent of 428 points)
PAPER_DEPTH = {"0-4": 39.5, "5-9": 30.4, "10-14": 18.7, "15-19": 11.4}


def test_the_dev_set_is_a_faithful_miniature_of_the_paper():
    from collections import Counter

    from ihbench.dataset.schema import depth_bin

    conversations = [load_conversation(p) for p in SHIPPED]
    points = [t for c in conversations for t in c.interrupted_turns]
    assert len(conversations) >= 28 and len(points) >= 250
    assert min(Counter(c.domain_name for c in conversations).values()) >= 2 and \
        len({c.domain_name for c in conversations}) == 10
    types, bins = Counter(t.interruption.type for t in points), Counter(depth_bin(t.index) for t in points)
    for kind, percent in PAPER_TYPES.items():
        assert abs(100 * types[kind] / len(points) - percent) <= 5, kind
    for label, percent in PAPER_DEPTH.items():
        assert abs(100 * bins[label] / len(points) - percent) <= 5, label
    fillers = Counter(t.user.strip().lower().rstrip(".!") for t in points if t.interruption.type == "filler")
    assert fillers.most_common(1)[0][1] <= len(points) // 20  # no single stock backchannel
    firsts = Counter(c.interrupted_turns[0].index for c in conversations)
    assert all(3 * c.interrupted_turns[0].index < len(c.turns) for c in conversations)  # in the first third
    assert len(firsts) >= 3 and max(firsts.values()) <= 0.4 * len(conversations), firsts  # and not one stock place
    lasts = [len(c.turns) - c.interrupted_turns[-1].index for c in conversations]
    assert max(Counter(lasts).values()) <= 0.5 * len(conversations), Counter(lasts)


def test_system_prompts_say_nothing_about_handling_interruptions():
    import re

    hint = re.compile(r"interrupt|\bcuts? in\b|cut you off|uh-huh|mm-hm|backchannel|face value|already (know|heard)|"
                      r"where you left off", re.IGNORECASE)
    for path in SHIPPED:
        message = load_conversation(path).system_message
        assert not hint.search(message), f"{path.name}: {hint.search(message).group(0)!r}"


def test_every_point_is_reviewed_and_its_baseline_judged():
    points = [t for p in SHIPPED for t in load_conversation(p).interrupted_turns]
    for turn in points:
        review = turn.interruption.review
        assert review and all(review[q].strip() for q in ("leakage", "user_knowledge", "type", "grounding"))
        assert review.get("finding") is None or review.get("resolution")
        assert len(turn.interruption.baseline_rq_verdicts) == len(turn.interruption.rq_rubrics)
    passed = sum(all(v.met for v in t.interruption.baseline_rq_verdicts) for t in points) / len(points)
    assert 0.5 <= passed <= 0.8, passed  # a decent model's baseline, as in the paper (about 0.65)


def test_verdicts_must_match_the_criteria(tmp_path):
    path = _copy(tmp_path)
    data = json.loads(path.read_text())
    turn = next(t for t in data["turns"] if "interruption" in t)
    turn["interruption"]["baseline_rq_verdicts"] = [{"met": True, "reason": "ok"}]
    path.write_text(json.dumps(data))
    report = verify_paths([path], check_audio=False)
    assert any(p.field.endswith("baseline_rq_verdicts") and "one per criterion" in p.message for p in report.problems)


def test_cli_exit_status(tmp_path):
    good = subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", str(SHIPPED[0])], capture_output=True, text=True)
    assert good.returncode == 0 and "OK: 1 conversation" in good.stdout
    bad = _copy(tmp_path)
    data = json.loads(bad.read_text())
    data["turns"][0]["user"] += " [NAME]"
    bad.write_text(json.dumps(data))
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "verify", str(bad)], capture_output=True, text=True)
    assert result.returncode == 1 and "[NAME]" in result.stderr and str(bad) in result.stderr


# --- one fault per copy ----------------------------------------------------------------------

def _copy(tmp_path, source=None):
    source = source or SHIPPED[0]
    target = tmp_path / source.name
    shutil.copy(source, target)
    return target


def _interrupted_index(data, kind=None):
    for index, turn in enumerate(data["turns"]):
        if "interruption" in turn and (kind is None or turn["interruption"]["type"] == kind):
            return index
    raise AssertionError("no interrupted turn")


def _break(tmp_path, mutate):
    path = _copy(tmp_path)
    data = json.loads(path.read_text())
    index = mutate(data)
    path.write_text(json.dumps(data, indent=1))
    report = verify_paths([path])
    assert len(report.problems) == 1, "\n".join(map(str, report.problems))
    problem = report.problems[0]
    assert problem.path == path
    if index is not None:
        assert problem.turn == index + 1 and problem.field.startswith(f"turns[{index}]")
    return problem


def test_delivered_that_is_not_a_prefix(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        data["turns"][i]["delivered"] = "Something the assistant never planned to say"
        return i
    assert "not a prefix" in _break(tmp_path, mutate).message


def test_delivered_that_is_the_whole_message(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        data["turns"][i]["delivered"] = data["turns"][i]["assistant"]
        return i
    assert "whole message" in _break(tmp_path, mutate).message


def test_delivered_cut_at_a_sentence_end(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        turn = data["turns"][i]
        turn["assistant"] = "Here is a complete first sentence. " + turn["assistant"]
        turn["delivered"] = "Here is a complete first sentence."
        return i
    assert "sentence boundary" in _break(tmp_path, mutate).message


def test_unknown_interruption_type(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        data["turns"][i]["interruption"]["type"] = "sarcasm"
        return i
    problem = _break(tmp_path, mutate)
    assert problem.field.endswith("interruption.type") and "sarcasm" in problem.message


@pytest.mark.parametrize("count", [1, 5])
def test_rq_criteria_outside_two_to_four(tmp_path, count):
    def mutate(data):
        i = _interrupted_index(data)
        data["turns"][i]["interruption"]["rq_rubrics"] = [f"criterion {n}" for n in range(count)]
        data["turns"][i]["interruption"].pop("baseline_rq_verdicts", None)  # one fault at a time
        return i
    problem = _break(tmp_path, mutate)
    assert problem.field.endswith("rq_rubrics") and f"has {count} criteria" in problem.message


@pytest.mark.parametrize("criterion,kind", [(1, "an integer"), (None, "null"), (["a"], "a list"),
                                            ({"c": 1}, "an object"), (True, "true or false")])
def test_a_criterion_that_is_not_text_is_named_not_a_traceback(tmp_path, criterion, kind):
    """Battery 25, U3 (P2): a number, null, a list, an object or a bool among rq_rubrics (a hand edit, a careless
    script) ended verify, build and a resumed generate in a TypeError traceback from the quote check."""
    def mutate(data):
        i = _interrupted_index(data)
        data["turns"][i]["interruption"]["rq_rubrics"][0] = criterion
        mutate.index = i
    problem = _break(tmp_path, mutate)  # a structure problem: the file's shape, before any content check
    assert problem.message == f"turns[{mutate.index}].interruption.rq_rubrics[0]: must be a string, got {kind}"


def test_empty_tf_criterion(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        data["turns"][i]["interruption"]["tf_rubric"] = "  "
        return i
    assert _break(tmp_path, mutate).field.endswith("tf_rubric")


@pytest.mark.parametrize("token", ["[NAME]", "{account}", "XXX", "<customer name>", "[criterion]", "[...]",
                                   "{{name}}", "TODO", "todo", "FixMe"])
def test_placeholder_tokens(tmp_path, token):
    def mutate(data):
        data["turns"][2]["user"] += f" My details are {token}."
        return None
    problem = _break(tmp_path, mutate)
    assert problem.field == "turns[2].user" and token in problem.message


def test_interruption_quoting_undelivered_words(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        turn = data["turns"][i]
        turn["assistant"] += " Your reference will be QZ-48213 from Thornbury."
        turn["user"] = "Wait, what is QZ-48213 and why Thornbury?"
        return i
    problem = _break(tmp_path, mutate)
    assert problem.field.endswith(".user") and "QZ-48213" in problem.message and "Thornbury" in problem.message


def test_duplicate_conversation_ids(tmp_path):
    first = _copy(tmp_path)
    other = tmp_path / "copy"
    other.mkdir()
    second = _copy(other)
    report = verify_paths([first, second])
    assert [p.field for p in report.problems] == ["conversation_id"]
    assert "duplicate id" in report.problems[0].message and report.problems[0].path == second


def test_turn_count_outside_eight_to_twenty(tmp_path):
    def mutate(data):
        data["turns"] = data["turns"][:5]
        return None
    assert _break(tmp_path, mutate).field == "turns"


def test_malformed_json_names_file_and_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"conversation_id": "broken",\n  "goal": }')
    with pytest.raises(SourceError, match=r"broken\.json: malformed JSON \(.* at line 2 column"):
        load_conversation(path)
    assert verify_paths([path]).problems[0].field == "structure"


def test_missing_field_names_file_and_field(tmp_path):
    path = _copy(tmp_path)
    data = json.loads(path.read_text())
    del data["turns"][3]["user"]
    path.write_text(json.dumps(data))
    with pytest.raises(SourceError, match=rf"{path.name}: turns\[3\]\.user: missing"):
        load_conversation(path)


# --- recorded user audio ---------------------------------------------------------------------

def _with_recording(tmp_path, write):
    path = _copy(tmp_path)
    data = json.loads(path.read_text())
    audio = tmp_path / "audio"
    audio.mkdir(exist_ok=True)
    write(audio / "turn0.wav")
    data["turns"][0]["user_audio"] = "audio/turn0.wav"
    path.write_text(json.dumps(data))
    return verify_paths([path])


def _speech_like(seconds=1.0, rate=16000):
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 220 * t) * (1 + np.sin(2 * np.pi * 3 * t)) / 2).astype(np.float32)


@pytest.mark.parametrize("fault,writer,expected", [
    ("corrupt", lambda p: p.write_bytes(b"RIFF\x00\x00\x00\x00WAVEnot really audio at all"), "cannot decode"),
    ("empty", lambda p: p.write_bytes(b""), "file is empty"),
    ("nan", lambda p: soundfile.write(p, np.full(1600, np.nan, dtype=np.float32), 16000, subtype="FLOAT"), "NaN"),
    ("silent", lambda p: soundfile.write(p, np.zeros(16000, dtype=np.float32), 16000), "silent"),
])
def test_bad_recordings_are_rejected(tmp_path, fault, writer, expected):
    report = _with_recording(tmp_path, writer)
    assert len(report.problems) == 1, fault
    problem = report.problems[0]
    assert problem.field == "turns[0].user_audio" and expected in problem.message and "turn0.wav" in problem.message


def test_stereo_and_8k_recordings_are_converted_and_said_so(tmp_path):
    stereo = np.stack([_speech_like(rate=8000), _speech_like(rate=8000)], axis=1)
    report = _with_recording(tmp_path, lambda p: soundfile.write(p, stereo, 8000))
    assert report.ok
    assert any("mixed down to mono" in n for n in report.notes)
    assert any("resampled from 8000 Hz to 16000 Hz" in n for n in report.notes)


def test_a_missing_recording_is_named(tmp_path):
    path = _copy(tmp_path)
    data = json.loads(path.read_text())
    data["turns"][1]["user_audio"] = "audio/nowhere.wav"
    path.write_text(json.dumps(data))
    problem = verify_paths([path]).problems[0]
    assert problem.field == "turns[1].user_audio" and "file not found" in problem.message


def test_sources_dir_is_inside_the_package():
    assert SOURCES_DIR.is_dir() and SOURCES_DIR.parent.parent == Path(importlib.util.find_spec("ihbench.dataset").origin).parent


def test_a_name_or_number_reused_across_goals_is_a_problem(tmp_path):
    first, second = (json.loads(p.read_text()) for p in SHIPPED[:2])
    assert first["goal"] != second["goal"]
    second["knowledge_base"]["user_data"].append(dict(first["knowledge_base"]["user_data"][0]))
    for data, path in ((first, SHIPPED[0]), (second, SHIPPED[1])):
        (tmp_path / path.name).write_text(json.dumps(data))
    report = verify_paths([tmp_path], check_audio=False)
    value = str(first["knowledge_base"]["user_data"][0]["value"])
    assert any("also appears in" in p.message and p.path.name == SHIPPED[1].name for p in report.problems), value


# --- generation guards (issue 28, part 5): they live here, so they protect hand-written data too ----

def test_a_cut_that_leaves_only_the_final_punctuation_unheard_is_not_mid_sentence(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        data["turns"][i]["delivered"] = data["turns"][i]["assistant"].rstrip(".?!")
        return i
    problem = _break(tmp_path, mutate)
    assert problem.field.endswith("delivered") and "unheard: the sentence was finished" in problem.message


def test_a_baseline_that_says_the_interrupted_message_again_is_refused(tmp_path):
    def mutate(data):
        i = _interrupted_index(data)
        turn = data["turns"][i]
        turn["interruption"]["baseline"] = turn["assistant"].replace(".", ",", 1) + " Okay?"
        return i
    problem = _break(tmp_path, mutate)
    assert problem.field.endswith("interruption.baseline") and "says the interrupted message again" in problem.message


def test_a_baseline_that_goes_on_from_the_cut_is_not_a_repeat():
    from ihbench.dataset.verify import repeats_the_message

    assistant = "I can move your delivery to Thursday morning between eight and noon if that works for you."
    delivered = "I can move your delivery to"
    assert not repeats_the_message(assistant[len(delivered):], assistant, delivered)  # a filler's continuation
    assert repeats_the_message(assistant, assistant, delivered)


@pytest.mark.parametrize("invisible", ["\u200b\u200b", " \u2060 ", "\ufeff", "\u00a0\u200c"])
def test_a_string_made_only_of_invisible_characters_is_empty(tmp_path, invisible):
    def mutate(data):
        data["goal"] = invisible
        return None
    problem = _break(tmp_path, mutate)
    assert problem.field == "goal" and "only invisible characters" in problem.message


def test_every_text_field_has_a_length_limit(tmp_path):
    def mutate(data):
        data["turns"][2]["user"] = "Well, " + "and so on " * 120
        return None
    problem = _break(tmp_path, mutate)
    assert problem.field == "turns[2].user" and "the limit for this field is 1,000" in problem.message


def _naive_positions(text):
    """The leak check's word positions as first written (quadratic): the reference for the linear one."""
    from ihbench.dataset.verify import _WORD

    for match in _WORD.finditer(text):
        before = text[: match.start()].rstrip(" \"'“”‘’(")
        yield match.group(0), (not before) or before[-1] in ".?!…—-:"


@given(st.text(alphabet=st.sampled_from(list("aZ9 .?!-:'’\"“(,\n…—")), max_size=80))
@settings(max_examples=300, deadline=None)
def test_the_linear_word_positions_equal_the_quadratic_ones(text):
    from ihbench.dataset.verify import _words_with_position

    assert list(_words_with_position(text)) == list(_naive_positions(text))


@pytest.mark.parametrize("place, misspelled, meant", [
    (lambda data: data, "provenence", "provenance"),
    (lambda data: data["turns"][_interrupted_index(data)], "user_adio", "user_audio"),
    (lambda data: data["turns"][_interrupted_index(data)]["interruption"]["review"], "resolutoin", "resolution"),
    (lambda data: data["knowledge_base"]["workflow_stages"][0], "skip_condition", "skip_conditions"),
])
def test_a_misspelled_optional_field_is_named_with_the_field_it_resembles(tmp_path, place, misspelled, meant):
    """Battery 21 R9: a field the format lacks was dropped without a word (the build went on
    without the recording or review the author believed was there)."""
    def mutate(data):
        place(data)[misspelled] = "x"
        return _interrupted_index(data) if misspelled in ("user_adio", "resolutoin") else None
    problem = _break(tmp_path, mutate)
    assert problem.field.endswith(misspelled) and f"did you mean {meant!r}" in problem.message


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_number_json_has_not_is_refused_naming_the_file(tmp_path, constant):
    """Battery 21 R9: Python's reader took `NaN` as a probability, which passes every range check."""
    path = _copy(tmp_path)
    path.write_text(path.read_text().replace('"normal": ', f'"normal": {constant}, "was": ', 1))
    with pytest.raises(SourceError, match=rf"^{path}: {constant} is not a JSON number"):
        load_conversation(path)
