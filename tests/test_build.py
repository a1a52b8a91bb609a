"""`ihbench build` + `datasets.load_dataset`: real Piper/flite renders, real Parquet, offline."""
import hashlib
import json
import shutil
import subprocess
import sys

import datasets
import numpy as np
import pytest
from ihbench.dataset import load_items
from ihbench.dataset.build import BuildError, build
from ihbench.dataset.build_info import BUILD_INFO_FORMAT
from ihbench.dataset.builddir import BuildDir
from ihbench.dataset.load import load_conversations
from ihbench.dataset.sources import source_files

pytestmark = pytest.mark.slow


def _digest(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_config_opens_with_load_dataset_offline_and_decodes_audio(built):
    conversations = datasets.load_dataset(str(built), "conversations", split="dev")
    baseline = datasets.load_dataset(str(built), "baseline", split="dev")
    points = datasets.load_dataset(str(built), "interruptions", split="dev")
    assert conversations.num_rows == baseline.num_rows == 2
    assert isinstance(conversations.features["user_turn_1_audio"], datasets.Audio)
    samples = conversations[0]["user_turn_1_audio"].get_all_samples()
    assert samples.sample_rate == 16000 and samples.data.shape[0] == 1 and samples.data.shape[1] > 8000
    row = points[points.num_rows - 1]
    assert row["interruption_audio"].get_all_samples().sample_rate == 16000
    user_history = [m for m in row["history"] if m["role"] == "user"]
    assert user_history and all(m["audio"] is not None for m in user_history)
    assert all(m["audio"] is None for m in row["history"] if m["role"] == "assistant")


def test_wide_columns_follow_the_official_contract(built):
    conversations = datasets.load_dataset(str(built), "conversations", split="dev")
    short, long_ = sorted(conversations, key=lambda r: r["num_turns"])
    max_turns = long_["num_turns"]
    for n in range(1, max_turns + 1):
        for column in ("assistant_turn_{n}_transcript", "assistant_turn_{n}_original", "user_turn_{n}_transcript",
                       "user_turn_{n}_audio", "user_turn_{n}_interruption_type", "turn_{n}_tf_rubric",
                       "turn_{n}_rq_rubrics"):
            assert column.format(n=n) in conversations.column_names
    past = short["num_turns"] + 1
    assert short[f"user_turn_{past}_transcript"] is None and short[f"user_turn_{past}_audio"] is None
    types = [short[f"user_turn_{n}_interruption_type"] for n in range(1, short["num_turns"] + 1)]
    assert "" in types and any(types)
    for n in range(1, short["num_turns"] + 1):
        if short[f"user_turn_{n}_interruption_type"]:
            assert short[f"assistant_turn_{n}_original"].startswith(short[f"assistant_turn_{n}_transcript"])
            assert len(short[f"assistant_turn_{n}_original"]) > len(short[f"assistant_turn_{n}_transcript"])


def test_long_config_and_reader_agree_item_for_item(built):
    items = load_items(built)
    points = datasets.load_dataset(str(built), "interruptions", split="dev")
    assert [i.id for i in items] == points["id"]
    for item, row in zip(items, points.select_columns(["interrupted_delivered", "tf_rubric", "rq_rubrics",
                                                       "baseline_response", "depth", "interruption_type"])):
        assert (item.interrupted.delivered, item.rubric.tf, item.rubric.rq, item.baseline, item.depth,
                item.interruption_type) == tuple(row.values())
    assert all(item.baseline for item in items)
    assert all(item.interrupted.audio is not None for item in items)


def test_card_has_configs_features_statistics_and_voices(built):
    card = (built / "README.md").read_text()
    for expected in ("config_name: conversations", "config_name: baseline", "config_name: interruptions",
                     "`user_turn_N_audio` | Audio(16000 Hz)", "Interruption points", "piper:joe", "flite:slt",
                     "flite:rms", "written blind to the rubric", "Baseline RQ pass rate", "stats.png"):
        assert expected in card, expected
    info = json.loads((built / "build_info.json").read_text())
    assert info["statistics"]["interruption_points"] == len(load_items(built))
    assert info["format_version"] == BUILD_INFO_FORMAT == BuildDir(built).info().format_version
    from conftest import png_size

    assert png_size(built / "stats.png") == (1400, 400)  # the three panels at figsize 14 x 4, 100 dpi


def test_rebuild_is_byte_identical_and_uses_the_cache(built, tts_cache, tmp_path, subset):
    from conftest import FIXTURES

    again = build(tmp_path / "again", subset, cache_dir=tts_cache, progress=False, convbench=[],
                  sid_sources=FIXTURES / "sid_small.json", sid_noise_clips=7)
    assert again.renders == 0 and again.cache_hits > 0
    assert _digest(again.out) == _digest(built)


def test_tts_engines_are_deterministic():
    from ihbench.dataset.audio import encode_flac
    from ihbench.dataset.tts import get_engine

    for voice in ("piper:joe", "flite:slt"):
        engine = get_engine(voice)
        first, second = engine.synthesize("Mm-hm, go on."), engine.synthesize("Mm-hm, go on.")
        assert encode_flac(first) == encode_flac(second)
        assert np.max(np.abs(first)) > 0.05


def test_a_failed_build_leaves_the_previous_build_untouched(built, tmp_path, tts_cache, subset):
    out = tmp_path / "dataset"
    shutil.copytree(built, out)
    before = _digest(out)
    broken = tmp_path / "broken.json"
    data = json.loads(subset[0].read_text())
    data["conversation_id"] = "broken"
    data["turns"][0]["user"] = "call me at {phone}"
    broken.write_text(json.dumps(data))
    with pytest.raises(BuildError, match=r"broken\.json.*placeholder"):
        build(out, [broken], cache_dir=tts_cache, progress=False, convbench=[], sid=False)
    assert _digest(out) == before
    # no working folder left, and no lock: its holder removed it (see ihbench.dataset.io.locks)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_crash_while_writing_leaves_nothing_half_made(tmp_path, tts_cache, monkeypatch, subset):
    import ihbench.dataset.build as builder

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(builder, "plot_statistics", explode, raising=False)
    monkeypatch.setattr("ihbench.dataset.stats.plot_statistics", explode)
    with pytest.raises(RuntimeError, match="disk full"):
        build(tmp_path / "new", subset[:1], cache_dir=tts_cache, progress=False, convbench=[], sid=False)
    assert [p.name for p in tmp_path.iterdir()] == []  # no output, no working folder, no lock


def test_build_refuses_to_replace_a_directory_it_did_not_make(tmp_path, tts_cache, subset):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("do not delete")
    with pytest.raises(BuildError, match="not an ihbench build"):
        build(precious, subset[:1], cache_dir=tts_cache, progress=False, convbench=[], sid=False)
    assert (precious / "thesis.tex").read_text() == "do not delete"


def test_info_and_export_cli(built, tmp_path):
    info = subprocess.run([sys.executable, "-m", "ihbench.cli", "info", str(built)], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    assert "Interruption points" in info.stdout and "Type: filler" in info.stdout
    first = load_conversations(built)[0]
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "export", str(built), "--out", str(tmp_path / "demo")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "demo" / first.conversation_id
    assert len(list(folder.glob("turn_*_user.wav"))) == len(first.turns)
    text = (folder / "conversation.md").read_text()
    assert "TF criterion" in text and "Planned:" in text
    wav = datasets.Audio(sampling_rate=16000).decode_example({"path": str(folder / "turn_01_user.wav"), "bytes": None})
    assert wav.get_all_samples().data.shape[1] > 8000


def test_the_interruptions_config_reads_back_into_identical_items(built):
    wide = load_items(built)
    long_ = load_items(built, config="interruptions")
    assert long_ == wide  # dataclass equality: texts, rubric, baseline and the audio clips' bytes
    assert long_[-1].history[-1].audio.bytes == wide[-1].history[-1].audio.bytes


def test_a_recorded_stereo_8k_user_turn_is_converted_and_said_so(tmp_path, tts_cache, subset):
    import soundfile

    source = tmp_path / subset[0].name
    data = json.loads(subset[0].read_text())
    t = np.arange(8000 * 2) / 8000
    tone = (0.3 * np.sin(2 * np.pi * 330 * t)).astype(np.float32)
    soundfile.write(tmp_path / "turn1.wav", np.stack([tone, tone], axis=1), 8000)
    data["turns"][0]["user_audio"] = "turn1.wav"
    source.write_text(json.dumps(data))
    result = build(tmp_path / "out", [source], cache_dir=tts_cache, progress=False, convbench=[], sid=False)
    assert any("mixed down to mono" in n for n in result.notes)
    assert any("resampled from 8000 Hz to 16000 Hz" in n for n in result.notes)
    import io

    stored = load_conversations(result.out)[0].turns[0].user_audio.bytes
    info = soundfile.info(io.BytesIO(stored))
    assert (info.channels, info.samplerate, info.format) == (1, 16000, "FLAC")
    assert abs(info.frames - 32000) < 400


def test_a_rebuild_in_place_is_never_read_back_from_the_datasets_cache(tmp_path, tts_cache):
    """`datasets` keys a local folder's cache on the card's data-file paths: the build names each
    file by its bytes and writes that name into the card, so changed data is loaded as changed."""
    shortest = min(source_files(), key=lambda p: len(json.loads(p.read_text())["turns"]))
    sources = tmp_path / "sources"
    sources.mkdir()
    source = sources / shortest.name
    shutil.copy(shortest, source)
    out = tmp_path / "data"
    options = dict(cache_dir=tts_cache, progress=False, convbench=[], sid=False, duplex=False)
    datasets.enable_progress_bars()
    build(out, [source], **options)
    # progress=False silences the build's own bars, not the caller's: a notebook, or the next test in
    # this worker (tests/test_cli.py's quiet test failed in the clean-clone CI after a build here)
    assert not datasets.are_progress_bars_disabled()
    before = datasets.load_dataset(str(out), "interruptions", split="dev")["tf_rubric"][0]
    document = json.loads(source.read_text())
    first = next(t for t in document["turns"] if "interruption" in t)
    first["interruption"]["tf_rubric"] = "Changed: " + first["interruption"]["tf_rubric"]
    source.write_text(json.dumps(document))
    build(out, [source], **options)

    after = datasets.load_dataset(str(out), "interruptions", split="dev")["tf_rubric"][0]

    assert after == "Changed: " + before
