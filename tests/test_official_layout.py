"""The reader on a dataset in exactly the official bosonai/IHBench column layout."""
import re

import datasets
import numpy as np
import pytest
from ihbench.dataset import DataSourceError, SchemaError, load_items
from official_layout import BASELINE_ROWS, official_features, official_rows, write_official_layout


@pytest.fixture
def official_dir(tmp_path):
    return write_official_layout(tmp_path / "official")


def test_items_come_out_in_conversation_then_turn_order(official_dir):
    items = load_items(official_dir)
    assert [item.id for item in items] == ["conv-a/2", "conv-b/1", "conv-b/4"]
    assert [item.interruption_type for item in items] == ["correction", "topic_switch", "filler"]
    assert [item.depth for item in items] == [1, 0, 3]
    assert [item.domain for item in items] == ["telecom", "travel", "travel"]


def test_delivered_text_is_the_transcript_and_original_is_the_plan(official_dir):
    item = load_items(official_dir)[2]
    assert item.interrupted.delivered == "The next flight leaves at"
    assert item.interrupted.original == "The next flight leaves at nine fifteen from gate B12."
    assert item.interrupted.undelivered == " nine fifteen from gate B12."
    assert item.interruption.transcript == "Mm-hm."


def test_history_holds_what_the_user_heard_and_said_before_the_interrupted_turn(official_dir):
    item = load_items(official_dir)[2]  # conv-b turn 4
    assert [m.role for m in item.history] == ["assistant", "user"] * 3
    # the earlier interrupted turn appears as delivered, not as planned
    assert item.history[0].text == "Welcome. Before we start, could you"
    assert item.history[1].text == "Oh, also, is the lounge open?"
    assert all(m.audio is None for m in item.history if m.role == "assistant")
    user_audio = [m.audio for m in item.history if m.role == "user"]
    assert all(clip is not None for clip in user_audio)
    samples = user_audio[0].decode()
    assert samples.dtype == np.float32 and abs(len(samples) - 9600) < 200
    assert load_items(official_dir)[1].history == []


def test_rubric_and_baseline_are_attached(official_dir):
    items = {item.id: item for item in load_items(official_dir)}
    assert items["conv-a/2"].rubric.tf == "Use 555-0143 and continue with the plan price."
    assert items["conv-a/2"].rubric.rq == ["Accepts 555-0143", "Does not argue"]
    assert items["conv-b/4"].baseline == BASELINE_ROWS[2]["response"]
    assert all(item.baseline for item in items.values())


def test_a_dataset_object_reads_the_same_as_the_directory(official_dir):
    from_dir = load_items(official_dir)
    dataset = datasets.Dataset.from_list(official_rows(), features=official_features())
    from_object = load_items(dataset, baseline=datasets.Dataset.from_list(BASELINE_ROWS))
    assert [(i.id, i.rubric, i.baseline, i.interrupted) for i in from_object] == \
        [(i.id, i.rubric, i.baseline, i.interrupted) for i in from_dir]


def test_unknown_type_names_row_and_column():
    rows = official_rows()
    rows[1]["user_turn_4_interruption_type"] = "sarcasm"
    with pytest.raises(SchemaError, match=r"conv-b.*user_turn_4_interruption_type.*sarcasm"):
        load_items(datasets.Dataset.from_list(rows, features=official_features()))


def test_null_inside_num_turns_names_the_column():
    rows = official_rows()
    rows[0]["user_turn_3_transcript"] = None
    with pytest.raises(SchemaError, match=r"conv-a.*'user_turn_3_transcript' is null"):
        load_items(datasets.Dataset.from_list(rows, features=official_features()))


def test_missing_directory_and_offline_hub_id_fail_clearly(tmp_path):
    with pytest.raises(DataSourceError, match="no such dataset directory"):
        load_items(tmp_path / "nope")
    with pytest.raises(DataSourceError, match="bosonai/IHBench"):
        load_items("bosonai/IHBench")


def test_unknown_config_and_split_are_named(official_dir):
    with pytest.raises(DataSourceError, match="no config 'nonsense'.*conversations"):
        load_items(official_dir, config="nonsense")
    with pytest.raises(DataSourceError, match="no split 'dev'.*test"):
        load_items(official_dir, split="dev")


def _interrupted_turn(row) -> int:
    return next(n for n in range(1, row["num_turns"] + 1) if row[f"user_turn_{n}_interruption_type"])


@pytest.mark.parametrize("column, said", [
    ("user_turn_{n}_transcript", "is empty on an interruption turn (the words the model recovers from)"),
    ("turn_{n}_tf_rubric", "is empty on an interruption turn"),
    ("conversation_id", "is empty (every point's id begins with it)"),
])
def test_a_blank_text_a_point_needs_is_named(column, said):
    """Battery 22, N10 (P2) and N11: an interruption whose words were empty was answered and would have been
    scored as a recovery from nothing (its empty rubric was refused); an empty conversation id gave points
    named "/3"."""
    rows = official_rows()
    column = column.format(n=_interrupted_turn(rows[0]))
    rows[0][column] = " \n"
    with pytest.raises(SchemaError, match=re.escape(f"column {column!r} {said}")):
        load_items(datasets.Dataset.from_list(rows, features=official_features()))


@pytest.mark.parametrize("column, said", [
    ("interruption_transcript", "is empty (the words the model recovers from)"),
    ("id", "is empty (a point is found by it)"),
    ("rq_rubrics", "must be a non-empty list of non-empty strings"),
])
def test_the_long_layout_names_the_same_blank_texts(column, said):
    from ihbench.dataset.long import interruption_row, items_from_interruption_rows

    items = load_items(datasets.Dataset.from_list(official_rows(), features=official_features()))
    rows = [interruption_row(item) for item in items]
    rows[0][column] = [" "] if column == "rq_rubrics" else ""
    with pytest.raises(SchemaError, match=re.escape(f"column {column!r} {said}")):
        items_from_interruption_rows(rows)


def test_the_long_layout_refuses_a_point_id_given_twice():
    """Battery 23, S1: two rows of one id were both answered under it (one point lost to the judge)."""
    from ihbench.dataset.long import interruption_row, items_from_interruption_rows

    items = load_items(datasets.Dataset.from_list(official_rows(), features=official_features()))
    rows = [interruption_row(item) for item in items]
    rows[0]["id"] = rows[1]["id"]
    with pytest.raises(SchemaError, match=re.escape(f"row 1 (conversation {rows[1]['conversation_id']}): column 'id' "
                                                    f"repeats {rows[1]['id']!r} (also row 0)")):
        items_from_interruption_rows(rows)
