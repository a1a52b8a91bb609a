"""The built dataset folder as a type (`BuildDir`): what is a build, its record read back from older
folders, its one writer.

tests/fixtures/build-format-1 holds the build_info.json and README.md (the card) that `ihbench build`
wrote before build_info.json carried `format_version` (the conftest subset, sid and duplex
included); its Parquet files are left out. It may not be regenerated: it is what users' folders
look like.
"""
import json
import os
import shutil

import pytest

from conftest import FIXTURES
from ihbench.dataset.build import build
from ihbench.dataset.build_info import BUILD_INFO_FORMAT, BuildInfo
from ihbench.dataset.builddir import BuildDir, BuildDirError
from ihbench.dataset.io import LockedError
from ihbench.dataset.rebaseline import replace_baselines

OLD = FIXTURES / "build-format-1"
CONFIGS = ["conversations", "baseline", "interruptions", "sid_dev_en", "sid_dev_noise", "duplex"]


def test_a_folder_that_is_not_a_build_is_refused_with_its_name(tmp_path):
    folder = tmp_path / "my-notes"
    folder.mkdir()
    (folder / "README.md").write_text("# not a dataset\n")
    with pytest.raises(BuildDirError, match=f"{folder}: not an ihbench build \\(no build_info.json\\)"):
        BuildDir(folder).info()
    assert not BuildDir(folder).may_be_replaced() and BuildDir(tmp_path / "new").may_be_replaced()


def test_set_baseline_refuses_a_dataset_that_is_not_a_build_before_writing(tmp_path):
    """A folder with a baseline config but no build_info.json (the official layout as downloaded)
    was copied whole and then failed with a FileNotFoundError; now it is refused by name at once."""
    from official_layout import write_official_layout

    official = write_official_layout(tmp_path / "official")
    with pytest.raises(BuildDirError, match=f"{official}: not an ihbench build"):
        replace_baselines(official, tmp_path / "rebased", {"conv-a/2": "new"}, "test")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["official"]  # no copy, no lock, no working folder


def test_an_old_build_info_reads_as_version_1(tmp_path):
    folder = shutil.copytree(OLD, tmp_path / "old")
    assert "format_version" not in json.loads((folder / "build_info.json").read_text())
    info = BuildDir(folder).info()
    assert info.format_version == 1 and info.split == "dev" and info.kept == []
    data = json.loads((folder / "build_info.json").read_text())
    (folder / "build_info.json").write_text(json.dumps({**data, "format_version": None}))
    # battery 34: null was a TypeError traceback; battery 46: read as 1, unlike run.json's null, refused
    with pytest.raises(BuildDirError, match=r"build_info.json.*field 'format_version' is null; ihbench writes a "
                                            r"number there"):
        BuildDir(folder).info()
    (folder / "build_info.json").write_text(json.dumps(data))
    assert info.configs == sorted(CONFIGS) and info.statistics["interruption_points"] == 13
    assert BuildDir(folder).config_names() == CONFIGS  # in the card's order: the first is the default
    assert BuildDir(folder).written_by_build() == set(CONFIGS) | {"README.md", "stats.png", "build_info.json"}


def test_the_earliest_build_info_without_files_reads_and_is_not_filled_in(tmp_path):
    data = json.loads((OLD / "build_info.json").read_text())
    del data["files"], data["kept"]
    folder = tmp_path / "older"
    folder.mkdir()
    (folder / "build_info.json").write_text(json.dumps(data))
    info = BuildDir(folder).info()
    assert info.files is None and info.kept is None
    assert BuildDir(folder).written_by_build() == set(data["configs"]) | {"README.md", "stats.png", "build_info.json"}
    BuildDir(folder).write_info(info)
    assert json.loads((folder / "build_info.json").read_text()) == {**data, "format_version": BUILD_INFO_FORMAT}


def test_a_round_trip_keeps_every_field_and_what_a_newer_writer_added(tmp_path):
    data = {**json.loads((OLD / "build_info.json").read_text()), "format_version": 1, "made_by_a_newer_ihbench": [1]}
    info = BuildInfo.from_json(data)
    assert info.extra == {"made_by_a_newer_ihbench": [1]}
    assert info.to_json() == data and list(info.to_json())[:5] == list(data)[:5]


@pytest.mark.parametrize("change, reason", [
    (lambda data: data.pop("configs"), "missing field 'configs'"),
    (lambda data: data.update(statistics=[1]), "field 'statistics' has the wrong type"),
    (lambda data: data.update(format_version=True), "field 'format_version' has the wrong type"),
    # battery 33, C4: a later or a negative version was read as this one
    (lambda data: data.update(format_version=99), "field 'format_version' must be 1, got "
                                                  "99: written by a newer ihbench\? upgrade it"),
    (lambda data: data.update(format_version=0), "field 'format_version' must be 1, got 0 "
                                                 "\(edited by hand\?\)"),
])
def test_a_damaged_build_info_is_refused_with_the_file_and_reason(tmp_path, change, reason):
    data = json.loads((OLD / "build_info.json").read_text())
    change(data)
    (tmp_path / "build_info.json").write_text(json.dumps(data))
    with pytest.raises(BuildDirError, match=f"{tmp_path / 'build_info.json'}: {reason}"):
        BuildDir(tmp_path).info()


def test_the_lock_refuses_a_second_writer_and_build_takes_it(tmp_path):
    out = tmp_path / "data"
    with BuildDir(out).writing():
        with pytest.raises(LockedError, match=f"dataset directory {out} is in use .*pid {os.getpid()}"):
            with BuildDir(out).writing():
                pass
        with pytest.raises(LockedError, match=f"dataset directory {out} is in use"):
            build(out, [tmp_path / "no-such-source.json"], progress=False)  # refused before reading its sources
    assert list(tmp_path.iterdir()) == []  # the lock removed by its holder, and no folder made
    with BuildDir(out).writing():  # released with the command
        pass


def test_config_files_are_those_the_card_names(tmp_path):
    folder = tmp_path / "data"
    (folder / "baseline").mkdir(parents=True)
    for name in ("dev-aaaa.parquet", "dev-bbbb.parquet"):
        (folder / "baseline" / name).write_bytes(b"x")
    (folder / "README.md").write_text(
        "---\nconfigs:\n"
        "- config_name: baseline\n  data_files:\n  - split: dev\n    path: baseline/dev-bbbb.parquet\n"
        "- config_name: all\n  data_files: baseline/dev-*\n"
        "---\n")
    target = BuildDir(folder)
    assert target.config_files("baseline") == [folder / "baseline" / "dev-bbbb.parquet"]
    assert [p.name for p in target.config_files("all")] == ["dev-aaaa.parquet", "dev-bbbb.parquet"]
    assert target.config_files("conversations") == []
    (folder / "baseline" / ".dev.parquet.123.tmp").write_bytes(b"a writer's unfinished file")
    assert target.files() == ["README.md", "baseline/dev-aaaa.parquet", "baseline/dev-bbbb.parquet"]
