"""Battery 6 (issue 23): what a user changes by hand is read as it is now, or named; never answered
from what was there before."""
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ihbench.cli import main
from test_battery4_files import _one_error


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


def _set_goal(parquet, goal):
    table = pq.read_table(parquet)
    goals = table.column("goal").to_pylist()
    goals[0] = goal
    pq.write_table(table.set_column(table.schema.get_field_index("goal"), "goal", pa.array(goals)), parquet)


def _goal(folder):
    from ihbench.dataset.load import load_conversations

    return load_conversations(folder)[0].goal


# --- finding 3: a hand-edited file is not answered from the `datasets` cache --------------------

@pytest.fixture
def content_named(official):
    """The official fixture with its conversations file named by its bytes, as `ihbench build` names them."""
    from ihbench.dataset.content_names import name_by_content

    name_by_content(official / "conversations" / "test-00000-of-00001.parquet", "test")
    return official


@pytest.mark.parametrize("command", [["info", "{data}"], ["publish-dataset", "{data}", "--repo", "me/x", "--dry-run"],
                                     ["export", "{data}", "--out", "{tmp}/exported"]])
def test_a_built_file_edited_since_it_was_read_is_named_not_served_from_the_cache(command, content_named, tmp_path,
                                                                                    capsys):
    assert _goal(content_named) == "Move a line to a new plan"  # the cache now holds it
    parquet = next((content_named / "conversations").glob("test-*.parquet"))
    _set_goal(parquet, "EDITED GOAL")
    capsys.readouterr()
    argv = [part.format(data=content_named, tmp=tmp_path) for part in command]
    assert main(argv) == 2
    error = _one_error(capsys, command[0])
    assert f"{parquet}: changed since it was written (its name holds the hash of the bytes `ihbench build` wrote" in error
    assert "; rebuild the dataset or copy it again" in error
    assert not (tmp_path / "exported").exists()


def test_a_copy_of_an_edited_build_under_the_same_folder_name_elsewhere_is_refused_too(content_named, tmp_path):
    from ihbench.dataset.load import DataSourceError

    _goal(content_named)
    elsewhere = tmp_path / "alt" / "official"
    shutil.copytree(content_named, elsewhere)
    _set_goal(next((elsewhere / "conversations").glob("test-*.parquet")), "EDITED GOAL")
    with pytest.raises(DataSourceError, match="changed since it was written"):
        _goal(elsewhere)
    assert _goal(content_named) == "Move a line to a new plan"  # the untouched one still reads


def test_a_file_not_named_by_its_bytes_is_read_as_it_is_now_each_folder_its_own(official, tmp_path):
    """The official layout's names (`test-00000-of-00001.parquet`) say nothing of the bytes: the cache
    is remade when the files it was made from changed, and two folders of one name never share rows.
    (With a card naming the file exactly, as builds do, `datasets` keys its cache on the name alone.)"""
    card = official / "README.md"
    card.write_text(card.read_text().replace("conversations/test-*", "conversations/test-00000-of-00001.parquet"))
    parquet = official / "conversations" / "test-00000-of-00001.parquet"
    assert _goal(official) == "Move a line to a new plan"
    _set_goal(parquet, "EDITED GOAL")
    assert _goal(official) == "EDITED GOAL"
    elsewhere = tmp_path / "alt" / "official"
    shutil.copytree(official, elsewhere)
    _set_goal(elsewhere / "conversations" / "test-00000-of-00001.parquet", "ANOTHER GOAL")
    assert _goal(elsewhere) == "ANOTHER GOAL"
    assert _goal(official) == "EDITED GOAL"
    assert _goal(official) == "EDITED GOAL"  # read twice: the second from the cache, now recorded as this folder's
