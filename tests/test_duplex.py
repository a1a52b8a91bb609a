"""The `duplex` config of `ihbench build`: two-channel renders whose turn-taking is known exactly.

Runs on the shared two-conversation build (`built` in conftest.py): real flite/Piper renders,
real Parquet, `load_dataset` offline. Of its two recordings one lies under the -50 dBFS noise
floor and one is digitally silent between clips; each has one talked-over interruption point.
Timings found by `ihbench turns` are compared within 80 ms: a latency is the difference of two
boundaries, each within one 40 ms chunk of the floor labels (as in test_turns.py).
"""
import hashlib
import io
import json
import shutil
import subprocess
import sys

import datasets
import numpy as np
import pytest
import soundfile
from ihbench.dataset import load_items
from ihbench.dataset.duplex import DuplexError, _clip, continuation
from ihbench.dataset.load import load_conversations
from ihbench.dataset.schema import SAMPLING_RATE

from ihbench.dataset.floor import YIELD_TOLERANCE_S, barge_ins, floor_labels

pytestmark = pytest.mark.slow
SPEAKING = 0.01  # RMS: the renders speak at 0.05-0.3; between clips, digital zero or a -50 dBFS floor (0.003)
TIMING = 0.08  # s: two boundaries, each within a 40 ms chunk


@pytest.fixture(scope="module")
def duplex(built):
    return datasets.load_dataset(str(built), "duplex", split="dev")


@pytest.fixture(scope="module")
def recordings(duplex):
    """(row, samples[n, 2]) per conversation, decoded from the stored FLAC with libsndfile."""
    raw = duplex.cast_column("audio", datasets.Audio(decode=False))
    return [(row, soundfile.read(io.BytesIO(audio["bytes"]), dtype="float32")[0])
            for row, audio in zip(duplex.remove_columns("audio"), raw["audio"])]


def _rms(samples, start, end):
    window = samples[int(round(start * SAMPLING_RATE)): int(round(end * SAMPLING_RATE))]
    return float(np.sqrt(np.mean(window.astype(np.float64) ** 2))) if len(window) else 0.0


def _pairs(intervals):
    return [(i["start"], i["end"]) for i in intervals]


def _silent(row, samples, start, end):
    """Nothing but the recording's floor: digital zero, or the noise at its stated level."""
    window = samples[int(round(start * SAMPLING_RATE)): int(round(end * SAMPLING_RATE))]
    if row["noise_dbfs"] is None:
        return np.max(np.abs(window), initial=0.0) == 0
    return _rms(samples, start, end) <= 1.2 * 10 ** (row["noise_dbfs"] / 20)


def test_duplex_loads_with_load_dataset_as_two_channels_of_the_stated_length(duplex, built):
    assert duplex.num_rows == 2
    assert sorted(duplex["conversation_id"]) == sorted({item.conversation_id for item in load_items(built)})
    for row in duplex:
        samples = row["audio"].get_all_samples()
        assert samples.sample_rate == SAMPLING_RATE
        assert samples.data.shape[0] == 2
        assert samples.data.shape[1] == round(row["duration"] * SAMPLING_RATE)
        assert row["end_times"][-1] <= row["duration"] - 0.04


def test_every_interruption_point_is_in_the_recording(built, duplex):
    stored = {point["id"]: point["interruption_type"] for row in duplex for point in row["interruptions"]}
    assert stored == {item.id: item.interruption_type for item in load_items(built)}


def test_each_overlap_is_where_the_data_says_and_the_assistant_is_silent_after_its_stop(recordings):
    checked = 0
    for row, samples in recordings:
        assistant, user = samples[:, 0], samples[:, 1]
        for point in row["interruptions"]:
            if point["outcome"] != "yield":
                continue
            start, end = point["overlap_start"], point["overlap_end"]
            assert start == point["user_start"] and end == point["assistant_stop"] == point["cut_point"]
            assert point["stop_latency"] == pytest.approx(end - start) and 0.04 <= end - start <= 1.0
            assert _rms(assistant, start, end) > SPEAKING and _rms(user, start, end) > SPEAKING, point["id"]
            assert _silent(row, user, start - 0.2, start), point["id"]  # the user was silent before cutting in
            later = [s["start"] for s in row["segments"] if s["channel"] == 0 and s["start"] > end]
            silent_until = min(later, default=row["duration"])
            assert silent_until > point["user_end"]  # the assistant waits until the user is done
            assert _silent(row, assistant, end, silent_until), point["id"]
            # the stored speech intervals agree: the assistant's last speech before the stop ends at the stop
            assert max(e for s, e in _pairs(row["assistant_speech"]) if s < end) == pytest.approx(end)
            checked += 1
    assert checked >= 6


def test_fillers_overlap_without_stopping_the_assistant(recordings, built):
    planned = {(c.conversation_id, t.number): t for c in load_conversations(built) for t in c.turns}
    fillers = 0
    for row, samples in recordings:
        for point in (p for p in row["interruptions"] if p["interruption_type"] == "filler"):
            fillers += 1
            assert point["assistant_stop"] is None and point["stop_latency"] is None
            assert point["outcome"] == "backchannel"
            message = next(s for s in row["segments"] if s["channel"] == 0 and s["turn"] == point["turn"])
            turn = planned[(row["conversation_id"], point["turn"])]
            assert message["kind"] == "planned" and turn.original.endswith(message["text"])
            assert message["text"].endswith(turn.original[len(turn.heard):].strip())  # the rest of the plan plays
            assert message["end"] > point["cut_point"] + 0.3  # and goes on past the interruption point
            assert _rms(samples[:, 0], point["cut_point"], message["end"]) > SPEAKING
            start, end = point["overlap_start"], point["overlap_end"]
            assert _rms(samples[:, 0], start, end) > SPEAKING and _rms(samples[:, 1], start, end) > SPEAKING
            assert (point["user_start"], point["user_end"]) in _pairs(row["user_backchannels"])
            chunks = [k for k, t in enumerate(row["end_times"]) if start <= t < end - 0.04]
            assert chunks and {row["events"][k] for k in chunks} == {"BC"}
            assert {row["turns"][k] for k in chunks} == {"A"}  # the floor never leaves the assistant
    assert fillers >= 1


def test_one_point_per_recording_is_talked_over(recordings, built):
    planned = {(c.conversation_id, t.number): t for c in load_conversations(built) for t in c.turns}
    for row, samples in recordings:
        (point,) = [p for p in row["interruptions"] if p["outcome"] == "talk_over"]
        assert point["assistant_stop"] is None and point["stop_latency"] is None and point["interruption_type"] != "filler"
        segments = [s for s in row["segments"] if s["turn"] == point["turn"]]
        assert [s["kind"] for s in segments] == ["planned", "talked_over", "interruption"]
        message, attempt, again = segments
        turn = planned[(row["conversation_id"], point["turn"])]
        assert message["text"].endswith(turn.original[len(turn.heard):].strip())  # the whole plan plays
        assert (attempt["start"], attempt["end"]) == (point["user_start"], point["user_end"])
        said = [(s, e) for s, e in _pairs(row["user_speech"]) if attempt["start"] <= s < attempt["end"]]
        assert said and said[0][0] == attempt["start"] and said[-1][1] == attempt["end"]  # speech, not backchannels
        assert said[-1][1] - said[-1][0] > 1.0 and attempt["end"] - attempt["start"] <= 3.2  # no "mm-hm"; gives up
        # the assistant is still speaking well after the user has let go, and the user waits for it to finish
        assert _rms(samples[:, 0], attempt["end"] + YIELD_TOLERANCE_S, attempt["end"] + 0.5) > SPEAKING
        assert message["end"] > attempt["end"] + 1.0 and again["start"] > message["end"]
        assert again["text"] == attempt["text"] == turn.user_text and again["channel"] == attempt["channel"] == 1


def test_half_the_recordings_lie_under_a_light_noise_floor(recordings):
    floors = {row["conversation_id"]: row["noise_dbfs"] for row, _ in recordings}
    assert sorted(floors.values(), key=str) == [-50.0, None]
    for row, samples in recordings:
        tail = samples[-int(0.4 * SAMPLING_RATE):]  # the last 0.4 s: nobody speaks
        for channel in (0, 1):
            level = float(np.sqrt(np.mean(tail[:, channel].astype(np.float64) ** 2)))
            if row["noise_dbfs"] is None:
                assert level == 0.0
            else:
                assert 20 * np.log10(level) == pytest.approx(-50.0, abs=0.5)


def test_stored_labels_are_floor_labels_of_the_stored_intervals(duplex):
    for row in duplex.remove_columns("audio"):
        labels = floor_labels(_pairs(row["assistant_speech"]), _pairs(row["user_speech"]), row["duration"],
                              b_backchannels=_pairs(row["user_backchannels"]))
        assert labels.to_reference() == {key: row[key] for key in ("events", "turns", "end_times")}
        assert {"C", "T", "I", "NA", "BC"} <= set(row["events"])
        # and the outcomes are `barge_ins` of them: one per point that is not a filler, nothing else
        found = barge_ins(_pairs(row["assistant_speech"]), _pairs(row["user_speech"]))
        points = [p for p in row["interruptions"] if p["outcome"] != "backchannel"]
        assert [(b["user_start"], b["outcome"]) for b in found] == [(p["user_start"], p["outcome"]) for p in points]
        assert [b["stop_latency_s"] for b in found] == [None if p["stop_latency"] is None else
                                                         pytest.approx(p["stop_latency"], abs=1e-6) for p in points]


def test_speech_intervals_are_where_the_channels_have_sound(recordings):
    for row, samples in recordings:
        for channel, intervals in ((0, row["assistant_speech"]), (1, row["user_speech"] + row["user_backchannels"])):
            spans = sorted(_pairs(intervals))
            assert all(_rms(samples[:, channel], s, e) > SPEAKING for s, e in spans)
            silences = [(e, s) for (_, e), (s, _) in zip(spans, spans[1:])]
            assert all(s - e > 0.2 for e, s in silences)  # the 200 ms IPU rule
            quiet = np.array([_rms(samples[:, channel], e, s) for e, s in silences])
            assert np.all(quiet < SPEAKING / 2)  # a render's own pauses hold only its noise floor


def test_the_card_describes_the_duplex_config(built):
    card = (built / "README.md").read_text()
    for expected in ("config_name: duplex", "`audio` | Audio(16000 Hz, 2 channels)", "channel 0 the assistant",
                     "stop latency", "| Duplex recordings"):
        assert expected in card, expected
    assert "duplex" in json.loads((built / "build_info.json").read_text())["configs"]


def test_a_rebuild_without_the_mix_cache_gives_the_same_bytes(built, tts_cache, subset, tmp_path):
    """The cached rebuild reuses mixes; this one recomputes them from the cached renders."""
    from ihbench.dataset.build import build

    cache = tmp_path / "tts"
    shutil.copytree(tts_cache, cache)
    shutil.rmtree(cache / "duplex")
    again = build(tmp_path / "again", subset, cache_dir=cache, progress=False, convbench=[], sid=False, reuse=False)
    assert again.renders == 0  # every clip, the filler messages included, came from the render cache

    def digest(root):
        (parquet,) = (root / "duplex").glob("*.parquet")
        return hashlib.sha256(parquet.read_bytes()).hexdigest()

    assert digest(again.out) == digest(built)
    remade = {p.name for p in (cache / "duplex").iterdir()}  # the shared cache also holds other builds' mixes
    assert remade and remade <= {p.name for p in (tts_cache / "duplex").iterdir()}


def test_no_duplex_leaves_the_config_out(tts_cache, subset, tmp_path):
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "build", "--out", str(tmp_path / "data"),
                             "--cache-dir", str(tts_cache), "--quiet", "--no-sid", "--no-duplex", "--no-convbench",
                             "--sources", str(subset[0])], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "duplex" not in json.loads((tmp_path / "data" / "build_info.json").read_text())["configs"]
    assert "config_name: duplex" not in (tmp_path / "data" / "README.md").read_text()


def test_words_already_spoken_are_not_said_twice():
    said = " a free exchange or a refund, and the choice is yours."
    assert continuation(said, "A free exchange, or a refund, and the choice is yours. The exchange ships Friday.") \
        == "The exchange ships Friday."
    assert continuation(said, "a free exchange or a refund, and the choice is yours!") is None
    assert continuation(said, "a free exchange or a", keep_some=True) == "a free exchange or a"
    assert continuation(said, "Anything else?") == "Anything else?"
    assert continuation("", "Anything else?") == "Anything else?"


def test_a_render_without_speech_is_named():
    from ihbench.dataset.audio import encode_flac

    with pytest.raises(DuplexError, match=r"conv\.json: turns\[3\] assistant"):
        _clip(encode_flac(np.zeros(SAMPLING_RATE, dtype=np.float32)), "conv.json: turns[3] assistant 'Hello'")


def test_ihbench_turns_recovers_the_stored_events(duplex, tmp_path, capsys):
    """`ihbench turns` (silero-vad on each channel) against the labels stored with the renders."""
    pytest.importorskip("ihbench.turns.run", reason="`ihbench turns` (issue 16, part 1) has not landed yet")
    from ihbench.turns.run import run_turns

    summary = run_turns(_recordings(duplex, tmp_path), tmp_path / "turns", progress=False)
    agree = total = 0
    for row in duplex.remove_columns("audio"):
        found = json.loads((tmp_path / "turns" / row["conversation_id"] / "events.json").read_text())
        assert found["end_times"] == row["end_times"]
        agree += sum(a == b for a, b in zip(found["events"], row["events"]))
        total += len(row["events"])
    stored = [p["stop_latency"] for row in duplex.remove_columns("audio") for p in row["interruptions"]
              if p["stop_latency"] is not None]
    with capsys.disabled():
        print(f"\n`ihbench turns` vs the duplex ground truth: per-chunk event agreement {agree / total:.4f} over "
              f"{total} chunks; stop latency {summary['timing']['stop_latency_s']['mean']:.3f} s found, "
              f"{np.mean(stored):.3f} s placed")
    assert agree / total >= 0.95


def test_ihbench_turns_finds_each_yield_and_talk_over_in_silence_and_in_light_noise(duplex, tmp_path):
    """Counts exact, each yield's stop latency within 80 ms of the placed one: a talk-over is no
    yield, and under the noise floor the stop is where the assistant's speech ends."""
    from ihbench.turns.run import run_turns

    summary = run_turns(_recordings(duplex, tmp_path), tmp_path / "turns", progress=False)
    noisy = 0
    for row in duplex.remove_columns("audio"):
        noisy += row["noise_dbfs"] is not None
        found = json.loads((tmp_path / "turns" / row["conversation_id"] / "events.json").read_text())["timing"]
        placed = [p for p in row["interruptions"] if p["outcome"] in ("yield", "talk_over")]
        assert [b["outcome"] for b in found["barge_ins"]] == [p["outcome"] for p in placed], row["conversation_id"]
        for barge_in, point in zip(found["barge_ins"], placed):
            assert abs(barge_in["user_start"] - point["user_start"]) <= TIMING, point["id"]
            if point["outcome"] == "yield":
                assert abs(barge_in["stop_latency_s"] - point["stop_latency"]) <= TIMING, point["id"]
                assert abs(barge_in["ai_stop"] - point["assistant_stop"]) <= TIMING, point["id"]
    points = [p for row in duplex.remove_columns("audio") for p in row["interruptions"]]
    timing = summary["timing"]
    assert timing["talk_overs"] == sum(p["outcome"] == "talk_over" for p in points) == 2
    assert timing["stop_latency_s"]["n"] == sum(p["outcome"] == "yield" for p in points)
    stored = np.mean([p["stop_latency"] for p in points if p["outcome"] == "yield"])
    assert abs(timing["stop_latency_s"]["mean"] - stored) <= TIMING and noisy == 1


def _recordings(duplex, folder):
    """The renders as the FLAC files a user would give `ihbench turns`."""
    files = []
    for row in duplex.cast_column("audio", datasets.Audio(decode=False)):
        files.append(folder / f"{row['conversation_id']}.flac")
        files[-1].write_bytes(row["audio"]["bytes"])
    return files
