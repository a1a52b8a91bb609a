"""Finished configs reused from the cache (ihbench_dataset/config_cache.py): only when nothing that
decides their bytes changed, byte-identical to making them again, and never a damaged file."""
import hashlib
import json
import shutil

import datasets
import pytest
from conftest import FIXTURES
from ihbench.dataset.build import build
from ihbench.dataset.config_cache import KEEP, ConfigCache

ALL = ["ihbench", "sid", "duplex"]

pytestmark = pytest.mark.slow


def _digest(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _small(tts_cache, **options):
    return dict(cache_dir=tts_cache, progress=False, convbench=[], sid_sources=FIXTURES / "sid_small.json",
                sid_noise_clips=7,
                **options)


def test_an_unchanged_rebuild_reuses_every_config_and_equals_making_them_again(built, tts_cache, tmp_path, subset):
    # Other tests' builds share this cache and may have pruned the entries `built` left (KEEP per builder).
    build(tmp_path / "first", subset, **_small(tts_cache))
    reused = build(tmp_path / "reused", subset, **_small(tts_cache))
    made = build(tmp_path / "made", subset, **_small(tts_cache, reuse=False))

    assert reused.reused == ALL and made.reused == []
    assert _digest(reused.out) == _digest(made.out) == _digest(built)
    assert reused.statistics == made.statistics


def test_an_edited_source_remakes_its_configs_and_reuses_the_others(tts_cache, tmp_path, subset):
    sources = tmp_path / "sources"
    sources.mkdir()
    source = sources / subset[0].name
    shutil.copy(subset[0], source)
    original = source.read_text()
    options = _small(tts_cache, duplex=False)
    first = build(tmp_path / "first", [source], **options)

    document = json.loads(original)
    point = next(t for t in document["turns"] if "interruption" in t)
    point["interruption"]["tf_rubric"] = "Edited: " + point["interruption"]["tf_rubric"]
    source.write_text(json.dumps(document))
    edited = build(tmp_path / "edited", [source], **options)
    source.write_text(original)
    back = build(tmp_path / "back", [source], **options)

    assert "ihbench" not in edited.reused and "sid" in edited.reused
    rubrics = datasets.load_dataset(str(edited.out), "interruptions", split="dev")["tf_rubric"]
    assert any(r.startswith("Edited: ") for r in rubrics)
    assert back.reused == ["ihbench", "sid"]  # the previous inputs' entry is kept (KEEP = 2)
    assert _digest(back.out) == _digest(first.out)


def test_changed_builder_code_makes_every_config_again(tts_cache, tmp_path, subset, monkeypatch):
    build(tmp_path / "before", subset[:1], **_small(tts_cache, duplex=False))
    monkeypatch.setattr("ihbench.dataset.config_cache.builder_code", lambda: "a different conversation_row")

    after = build(tmp_path / "after", subset[:1], **_small(tts_cache, duplex=False))

    assert after.reused == []


def test_a_damaged_cache_entry_is_made_again_not_served(tmp_path, subset):
    cache = tmp_path / "tts"
    out = build(tmp_path / "data", subset[:1], cache_dir=cache, progress=False, convbench=[], sid=False,
                duplex=False).out
    entry = next((cache / "configs" / "ihbench").iterdir())
    damaged = next((entry / "interruptions").glob("*.parquet"))
    damaged.unlink()  # a hard link of the build's file: the build itself keeps its copy
    damaged.write_bytes(b"PAR1 truncated")

    again = build(tmp_path / "again", subset[:1], cache_dir=cache, progress=False, convbench=[], sid=False,
                  duplex=False)

    assert again.reused == []
    assert _digest(again.out) == _digest(out)
    assert datasets.load_dataset(str(again.out), "interruptions", split="dev").num_rows > 0


def test_the_cache_keeps_the_most_recently_used_entries_per_builder(tmp_path):
    cache = ConfigCache(tmp_path / "configs")
    parquet = tmp_path / "dev-0123.parquet"
    parquet.write_bytes(b"table")
    keys = [cache.key("sid", [f"inputs {n}"]) for n in range(KEEP + 2)]
    cache.put("sid", keys[0], {"sid_dev_en": parquet}, {"sid": {"clips": 1}})
    for key in keys[1:]:
        cache.fetch("sid", keys[0], tmp_path / "fetched")  # keys[0] stays the most recently used
        shutil.rmtree(tmp_path / "fetched")
        cache.put("sid", key, {"sid_dev_en": parquet}, {"sid": {"clips": 1}})

    kept = sorted(p.name for p in (tmp_path / "configs" / "sid").iterdir())

    assert kept == sorted([keys[0], keys[-1]])
    files, statistics = cache.fetch("sid", keys[-1], tmp_path / "build")
    assert files["sid_dev_en"] == tmp_path / "build" / "sid_dev_en" / "dev-0123.parquet"
    assert files["sid_dev_en"].read_bytes() == b"table" and statistics == {"sid": {"clips": 1}}
    assert cache.fetch("sid", keys[1], tmp_path / "other") is None and not (tmp_path / "other").exists()


@pytest.mark.parametrize("inputs", [["a", "b"], ["ab"], ["a", b"b"]])
def test_keys_separate_their_inputs(tmp_path, inputs):
    cache = ConfigCache(tmp_path)
    assert (cache.key("x", inputs) == cache.key("x", ["a", "b"])) == (inputs != ["ab"])


def test_an_entry_that_vanishes_while_placed_leaves_nothing_behind(tmp_path, monkeypatch):
    """Another build pruning the entry between the size check and the links: a miss, not half a config set."""
    import ihbench.dataset.config_cache as config_cache

    cache = ConfigCache(tmp_path / "configs")
    for name in ("a", "b"):
        (tmp_path / f"{name}.parquet").write_bytes(name.encode())
    key = cache.key("ihbench", ["x"])
    cache.put("ihbench", key, {"conversations": tmp_path / "a.parquet", "baseline": tmp_path / "b.parquet"}, {})
    real_place, calls = config_cache.place, []

    def vanishing(source, target):
        calls.append(source)
        if len(calls) == 2:
            raise FileNotFoundError(source)
        real_place(source, target)

    monkeypatch.setattr(config_cache, "place", vanishing)
    (tmp_path / "build").mkdir()

    assert cache.fetch("ihbench", key, tmp_path / "build") is None
    assert list((tmp_path / "build").iterdir()) == []


def test_an_entry_whose_bytes_changed_at_the_same_size_is_not_reused(tmp_path):
    """Battery 14, J14: a byte flipped in a cached config (the dataset's files are hard links to it, so an
    edit there reaches the cache) was reused by size alone, and every rebuild gave the same broken dataset."""
    import hashlib
    import os

    cache = ConfigCache(tmp_path / "configs")
    data = b"parquet bytes of a finished config"
    parquet = tmp_path / f"dev-{hashlib.sha256(data).hexdigest()[:16]}.parquet"
    parquet.write_bytes(data)
    key = cache.key("ihbench", ["x"])
    cache.put("ihbench", key, {"interruptions": parquet}, {})
    assert cache.fetch("ihbench", key, tmp_path / "first") is not None  # untouched: reused
    placed = tmp_path / "first" / "interruptions" / parquet.name
    with placed.open("r+b") as handle:  # the dataset's file, edited in place: the same inode as the cache's
        handle.seek(3)
        handle.write(b"X")
    assert placed.stat().st_size == len(data)
    assert cache.fetch("ihbench", key, tmp_path / "second") is None and not (tmp_path / "second").exists()
    fresh = tmp_path / "fresh" / parquet.name  # the bytes as named, touched since: still reused
    fresh.parent.mkdir()
    fresh.write_bytes(data)
    cache.put("ihbench", key, {"interruptions": fresh}, {})
    os.utime(fresh, ns=(1, 1))
    assert cache.fetch("ihbench", key, tmp_path / "third") is not None


def test_a_rebuild_from_other_sources_says_which_conversations_it_replaces(built, tts_cache, tmp_path, subset):
    """Battery 25 U7: `build --out` an existing dataset with other --sources replaced its conversations (and
    the baselines set-baseline had written) without a word; the build's record knew what was there."""
    from ihbench.dataset.builddir import BuildDir

    out = shutil.copytree(built, tmp_path / "copy")
    info = json.loads((out / "build_info.json").read_text())
    info["baselines"] = "the answers of run r (model m)."
    (out / "build_info.json").write_text(json.dumps(info))
    result = build(out, subset[:1], **_small(tts_cache, sid=False, duplex=False))
    gone = sorted(set(BuildDir(built).info().conversations) - set(BuildDir(out).info().conversations))
    assert len(gone) == 1
    assert f"{out.resolve()} held 2 conversation(s) built from other sources; 1 of them are not in these sources and " \
           f"are gone from it ({gone[0]})" in result.replaced
    assert f"{out.resolve()}'s baselines were set by `ihbench set-baseline` (the answers of run r (model m)); the " \
           "rebuild puts back the sources' own" in result.replaced
    assert not any("other sources" in note for note in BuildDir(out).info().notes)  # said, not recorded
    again = build(out, subset[:1], **_small(tts_cache, sid=False, duplex=False))
    assert again.replaced == []
