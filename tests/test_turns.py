"""`ihbench turns` on two-channel conversations made of real TTS speech with known intervals.

The conversation (see `_script`): the AI greets, the user asks, the AI answers after 0.8 s; the
user says "Uh-huh" inside that answer (a backchannel), then barges in and the AI stops 0.4 s
later; the AI answers after 0.5 s; the user tries to barge in again but the AI talks on.
"""
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from ihbench.dataset.audio import AudioError
from ihbench.dataset.errors import IHBenchError
from turns_synth import AI_VOICE, USER_VOICE, SyntheticCall, render

from ihbench.turns.audio import TwoChannel, plan_recordings, read_pair, read_stereo
from ihbench.turns.judge import JudgeFileError, TurnTakingJudge
from ihbench.turns.run import analyze, analyze_intervals, run_turns
from ihbench.turns.stats import statistics, timing_summary

AI = {"greet": "Thanks for calling Highline Rail, how can I help you today?",
      "answer": "The five fifteen to Seattle was cancelled because a mudslide closed the tracks near Kelso, "
                "and crews expect to reopen them tomorrow morning.",
      "offer": "Yes. There is a bus at nine thirty tonight and your bike can ride with you at no charge."}
USER = {"ask": "My train to Seattle was just cancelled tonight.", "uh-huh": "Uh-huh.",
        "barge": "Wait, is there a bus tonight instead?", "failed": "Hold on a second please."}
DURATION = 27.0


def _script(ai: dict, user: dict) -> tuple[SyntheticCall, dict]:
    c = SyntheticCall(DURATION)
    end = c.place("A", ai["greet"], 0.5)
    end = c.place("B", user["ask"], end + 0.6)
    answer = end + 0.8
    c.place("B", user["uh-huh"], answer + 2.0)
    barge = answer + 5.0
    c.place("A", ai["answer"], answer, cut=barge + 0.4)
    end = c.place("B", user["barge"], barge)
    offer = end + 0.5
    c.place("A", ai["offer"], offer)
    c.place("B", user["failed"], offer + 1.5)
    return c, {"latencies": [0.8, 0.5], "barge": barge, "stop_latency": 0.4}


@pytest.fixture(scope="module")
def conversation():
    ai = {key: render(text, AI_VOICE) for key, text in AI.items()}
    user = {key: render(text, USER_VOICE) for key, text in USER.items()}
    return _script(ai, user)


@pytest.fixture(scope="module")
def vad():
    from ihbench.turns.vad import ChannelVad

    return ChannelVad()


@pytest.fixture(scope="module")
def recording(conversation):
    c, _ = conversation
    return TwoChannel.from_samples("conv", c.a, c.b)


@pytest.fixture(scope="module")
def detected(recording, vad):
    return analyze(recording, vad)


@pytest.fixture(scope="module")
def truth(conversation):
    c, _ = conversation
    return analyze_intervals("conv", DURATION, c.truth)


@pytest.fixture(scope="module")
def files(conversation, tmp_path_factory):
    c, _ = conversation
    folder = tmp_path_factory.mktemp("audio")
    c.write(folder / "conv.wav")
    c.write(folder / "swapped.wav", swap=True)
    soundfile.write(str(folder / "call_ai.wav"), c.a, 16000)
    soundfile.write(str(folder / "call_user.wav"), c.b, 16000)
    return folder


def _close(found, expected, tolerance):
    return len(found) == len(expected) and all(abs(f[0] - e[0]) <= tolerance and abs(f[1] - e[1]) <= tolerance
                                               for f, e in zip(found, expected))


def test_silero_recovers_the_rendered_speech_intervals(detected, truth):
    for channel in (0, 1):
        # silero is a few windows late on soft onsets ("uh-huh"), hence 150 ms
        assert _close(detected.ipus[channel], truth.ipus[channel], 0.15), (detected.ipus[channel], truth.ipus[channel])


def test_events_agree_with_floor_labels_of_the_true_intervals(detected, truth):
    events, expected = np.array(detected.labels.events), np.array(truth.labels.events)
    assert detected.labels.end_times == truth.labels.end_times
    agreement = float(np.mean(events == expected))
    print(f"per-chunk event agreement with the true intervals: {agreement:.3f} over {events.size} chunks")
    assert agreement >= 0.93  # a dense conversation: ~14 boundaries in 27 s, each off by a chunk at most
    assert float(np.mean(np.array(detected.labels.turns) == np.array(truth.labels.turns))) >= 0.97
    for event in ("T", "I", "BC"):
        assert event in detected.labels.events


def test_backchannel_heuristic_finds_the_uh_huh_and_not_the_barge_ins(detected, truth, conversation):
    assert len(detected.backchannels[1]) == 1 and _close(detected.backchannels[1], truth.backchannels[1], 0.15)
    assert detected.backchannels[0] == []


def test_timing_figures_match_the_script(detected, conversation):
    _, script = conversation
    timing = detected.timing
    latencies = [r["latency_s"] for r in timing["responses"]]
    assert len(latencies) == 2 and all(abs(a - b) <= 0.08 for a, b in zip(latencies, script["latencies"]))
    yielded, failed = timing["barge_ins"]
    assert yielded["user_took_floor"] and abs(yielded["user_start"] - script["barge"]) <= 0.08
    assert abs(yielded["stop_latency_s"] - script["stop_latency"]) <= 0.08
    assert not failed["user_took_floor"] and failed["stop_latency_s"] is None
    summary = timing_summary([timing])
    assert summary["turn_over_rate"]["value"] == 0.5 and summary["turn_over_rate"]["n"] == 2
    assert summary["response_latency_s"]["n"] == 2 and summary["stop_latency_s"]["n"] == 1


def test_statistics_on_a_hand_checkable_case():
    # A: three IPUs; B: a 0.3 s "mm-hm" inside A's first, a reply in A's gap, a failed barge-in.
    a = [(0.0, 2.0), (2.5, 4.0), (6.0, 9.0)]
    b = [(1.0, 1.3), (4.5, 5.5), (7.0, 8.5)]
    analysis = analyze_intervals("hand", 10.0, (a, b))
    assert analysis.backchannels == ([], [(1.0, 1.3)])
    stats = statistics(analysis.totals, 10.0)
    ai, user = stats["speakers"]["ai"], stats["speakers"]["user"]
    assert (ai["ipu"]["count"], ai["ipu"]["duration_s"], ai["ipu"]["per_minute"]) == (3, 6.5, 18.0)
    assert (ai["pause"]["count"], ai["pause"]["duration_s"]) == (1, 0.5)  # 2.0 -> 2.5
    assert (ai["gap"]["count"], ai["gap"]["duration_s"]) == (1, 0.5)  # user 5.5 -> AI 6.0
    assert (user["gap"]["count"], user["gap"]["duration_s"]) == (1, 0.5)  # AI 4.0 -> user 4.5
    assert (user["overlap"]["count"], user["overlap"]["duration_s"]) == (2, pytest.approx(1.8))
    assert ai["overlap"]["count"] == 0 and user["pause"]["count"] == 0
    assert (user["backchannel"]["count"], user["backchannel"]["share"]) == (1, pytest.approx(0.03))
    assert user["ipu"]["share"] == pytest.approx(0.28) and stats["both"]["gap"]["count"] == 2
    timing = analysis.timing
    assert [r["latency_s"] for r in timing["responses"]] == [0.5]  # the mm-hm is no turn to answer
    assert [b["user_took_floor"] for b in timing["barge_ins"]] == [False]


def test_a_barge_in_runs_on_through_the_users_pause():
    from ihbench.turns.stats import timing_events

    # "Wait, (pause) is there a bus?": the AI stops at 5.0, inside the user's pause: it yielded
    (attempt,) = timing_events([(0.0, 5.0), (8.0, 10.0)], [(3.0, 4.8), (5.1, 7.0)])["barge_ins"]
    assert attempt["user_took_floor"] and attempt["stop_latency_s"] == 2.0 and attempt["user_end"] == 7.0
    # the AI starts again in the user's pause: it did not yield to the first attempt
    first, second = timing_events([(0.0, 5.0), (5.5, 10.0)], [(3.0, 4.8), (6.0, 7.0)])["barge_ins"]
    assert not first["user_took_floor"] and not second["user_took_floor"]


def test_backchannels_by_words_from_a_transcripts_file(tmp_path, files, detected):
    uh_huh = detected.backchannels[1][0]
    failed = detected.speech[1][-1]
    lines = [{"recording": "conv", "channel": "B", "words": [
        {"word": "Uh-huh.", "start": uh_huh[0], "end": uh_huh[1]},
        {"word": "Hold", "start": failed[0], "end": failed[0] + 0.2},
        {"word": "on.", "start": failed[0] + 0.2, "end": failed[0] + 0.4}]}]
    path = tmp_path / "words.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    summary = run_turns([files / "conv.wav"], tmp_path / "out", transcripts=path, progress=False)
    events = json.loads((tmp_path / "out" / "conv" / "events.json").read_text())
    assert events["intervals"]["B"]["backchannel_method"] == "words"
    assert events["intervals"]["A"]["backchannel_method"].startswith("heuristic")
    assert len(events["intervals"]["B"]["backchannels"]) == 1
    assert summary["transcripts"] == str(path)
    path.write_text('{"recording": "conv", "channel": "C", "words": []}\n')
    with pytest.raises(IHBenchError, match=r"words.jsonl:1: field 'channel'"):
        run_turns([files / "conv.wav"], tmp_path / "out", transcripts=path, progress=False)


def test_stereo_pair_and_swap_read_the_same_channels(files, recording):
    plain, swapped = read_stereo(files / "conv.wav"), read_stereo(files / "swapped.wav", swap=True)
    pair = read_pair(files / "call_ai.wav", files / "call_user.wav")
    reversed_pair = read_pair(files / "call_user.wav", files / "call_ai.wav", swap=True)
    for other in (swapped, pair, reversed_pair):
        assert np.array_equal(plain.a, other.a) and np.array_equal(plain.b, other.b)
    assert np.max(np.abs(plain.a - recording.a)) < 1e-3  # 16-bit WAV round trip
    assert (plain.name, pair.name) == ("conv", "call")
    assert not np.array_equal(read_stereo(files / "swapped.wav").a, plain.a)


def test_bad_audio_is_named(tmp_path, files):
    mono = tmp_path / "mono.wav"
    soundfile.write(str(mono), np.zeros(16000, np.float32), 16000)
    with pytest.raises(AudioError, match=r"mono.wav: 1 channel\(s\), expected a stereo file.*--pair"):
        read_stereo(mono)
    three = tmp_path / "three.wav"
    soundfile.write(str(three), np.zeros((16000, 3), np.float32), 16000)
    with pytest.raises(AudioError, match="three.wav: 3 channel"):
        read_stereo(three)
    with pytest.raises(AudioError, match="conv.wav: 2 channels; --pair expects one mono file"):
        read_pair(files / "conv.wav", mono)
    short = tmp_path / "short.wav"
    soundfile.write(str(short), np.zeros((3000, 2), np.float32), 16000)
    with pytest.raises(AudioError, match="short.wav: 0.188 s is too short"):
        read_stereo(short)
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF not really a wav file")
    with pytest.raises(AudioError, match="broken.wav: cannot decode audio"):
        read_stereo(broken)
    with pytest.raises(AudioError, match="missing.wav: file not found"):
        plan_recordings([files / "conv.wav", tmp_path / "missing.wav"])
    with pytest.raises(IHBenchError, match="odd number"):
        plan_recordings([files / "call_ai.wav"], pair=True)
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "conv.wav").write_bytes((files / "conv.wav").read_bytes())
    with pytest.raises(IHBenchError, match="both make recording 'conv'"):
        plan_recordings([files / "conv.wav", tmp_path / "again" / "conv.wav"])


class _OracleJudge(TurnTakingJudge):
    """Puts all likelihood on the event the system did in each chunk: the judge always agrees."""

    name = "oracle"

    def __init__(self, labels):
        self.labels = labels

    def likelihoods(self, a_channel, b_channel, sampling_rate):
        order = ("C", "NA", "I", "BC", "T")
        rows = np.zeros((len(self.labels.events), 5))
        rows[np.arange(len(rows)), [order.index(e) for e in self.labels.events]] = 1.0
        return rows


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_judge_likelihoods_from_npy_npz_jsonl_and_a_judge_object_agree(tmp_path, files, detected, vad):
    n = len(detected.labels.end_times)
    rows = np.random.default_rng(0).dirichlet(np.ones(5), size=n)
    np.save(tmp_path / "j.npy", rows)
    np.savez(tmp_path / "j.npz", conv=rows)
    (tmp_path / "j.jsonl").write_text(json.dumps({"recording": "conv", "likelihoods": rows.tolist()}) + "\n")
    results = [run_turns([files / "conv.wav"], tmp_path / f"out-{suffix}", judge_likelihoods=tmp_path / f"j.{suffix}",
                         progress=False)["agreement"] for suffix in ("npy", "npz", "jsonl")]
    for result in results:
        result.pop("judge")
        assert result == results[0]
    agreement = results[0]
    assert set(agreement["metrics"]) == {"speak_up", "backchannel", "interrupt", "convey_turn", "handle_interruption"}
    assert agreement["n_chunks"] == n and agreement["single_label"]["n_chunks"] == n
    labels = analyze(read_stereo(files / "conv.wav"), vad).labels
    oracle = run_turns([files / "conv.wav"], tmp_path / "out-oracle", judge=_OracleJudge(labels), progress=False)
    single = oracle["agreement"]["single_label"]
    assert oracle["agreement"]["judge"] == "judge oracle"
    assert np.count_nonzero(np.array(single["confusion_matrix"]) - np.diag(np.diag(single["confusion_matrix"]))) == 0


@pytest.mark.parametrize("content, message", [
    (lambda n: np.zeros((n, 4)), r"j.npz: recording 'conv': expected shape \(n_chunks, 5\)"),
    (lambda n: np.zeros((n - 3, 5)), r"j.npz: recording 'conv': \d+ rows, but the recording has \d+ chunks"),
    (lambda n: np.full((n, 5), np.nan), r"j.npz: recording 'conv': row 0: likelihood of C is not a finite number"),
])
def test_malformed_npz_is_named(tmp_path, files, detected, content, message):
    np.savez(tmp_path / "j.npz", conv=content(len(detected.labels.end_times)))
    with pytest.raises(JudgeFileError, match=message):
        run_turns([files / "conv.wav"], tmp_path / "out", judge_likelihoods=tmp_path / "j.npz", progress=False)


def test_malformed_judge_files_fail_before_any_audio_is_analysed(tmp_path, files):
    cases = {
        "j.jsonl": ('{"recording": "conv", "likelihoods": [[0.1, 0.2, 0.3, 0.2, 0.2]]}\n{"recording": 3}\n',
                    r"j.jsonl:2: expected"),
        "k.jsonl": ("not json\n", r"k.jsonl:1: not valid JSON"),
        "j.csv": ("1,2,3\n", r"j.csv: unknown format '.csv'"),
        "other.npz": (None, r"other.npz: no likelihoods for recording\(s\) 'conv'; it has 'other'"),
        "rows.jsonl": ('{"recording": "conv", "likelihoods": [[0.1, 0.2, 0.3, 0.2, 0.2], [1, "x", 0, 0, 0]]}\n',
                       r"rows.jsonl: recording 'conv': row 1: expected 5 numbers"),
    }
    np.savez(tmp_path / "other.npz", other=np.zeros((3, 5)))
    for name, (text, message) in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        with pytest.raises(JudgeFileError, match=message):
            run_turns([files / "conv.wav"], tmp_path / "out", judge_likelihoods=tmp_path / name, progress=False)
    np.save(tmp_path / "one.npy", np.zeros((3, 5)))
    with pytest.raises(JudgeFileError, match="one.npy: a .npy file holds one recording, but 2 were given"):
        run_turns([files / "conv.wav", files / "swapped.wav"], tmp_path / "out",
                  judge_likelihoods=tmp_path / "one.npy", progress=False)


def test_cli_end_to_end(tmp_path, files):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "ihbench.cli", "turns", str(files / "call_ai.wav"), str(files / "call_user.wav"),
               "--pair", "--model-name", "cascade-v1", "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "turn-over rate on user barge-ins: 0.500" in result.stdout and "response latency: mean" in result.stdout
    assert "s of audio" in result.stderr  # the progress bar
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "turns" and summary["model_name"] == "cascade-v1" and summary["recordings"] == 1
    assert summary["agreement"] is None
    assert set(summary["timing"]["response_latency_s"]) == {"mean", "median", "ci_low", "ci_high", "n"}
    assert set(summary["timing"]["stop_latency_s"]) == {"mean", "median", "ci_low", "ci_high", "n"}
    assert set(summary["timing"]["turn_over_rate"]) == {"value", "ci_low", "ci_high", "n"}
    assert set(summary["statistics"]["speakers"]) == {"ai", "user"}
    assert set(summary["statistics"]["both"]) == {"ipu", "pause", "gap", "overlap", "backchannel"}
    assert summary["real_time_factor"] < 0.5
    events = json.loads((out / "call" / "events.json").read_text())
    assert len(events["events"]) == len(events["turns"]) == len(events["end_times"]) > 500
    assert set(events["intervals"]) == {"A", "B"} and events["timing"]["barge_ins"]
    width, height = _png_size(out / "call" / "timeline.png")
    assert width >= 800 and 250 <= height <= 600 and (out / "call" / "timeline.png").stat().st_size > 10_000


def test_cli_quiet_and_errors_in_one_line(tmp_path, files, capsys):
    from ihbench.cli import main

    assert main(["turns", str(files / "conv.wav"), "--quiet", "--out", str(tmp_path / "q")]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "note:" not in captured.out and (tmp_path / "q" / "summary.json").is_file()
    assert main(["turns", str(tmp_path / "nope.wav"), "--out", str(tmp_path / "bad")]) == 2
    assert capsys.readouterr().err.strip() == f"ihbench turns: error: {tmp_path / 'nope.wav'}: file not found"
    assert main(["turns", str(files / "conv.wav"), "--pair", "--out", str(tmp_path / "bad")]) == 2
    assert "--pair takes files two by two" in capsys.readouterr().err
