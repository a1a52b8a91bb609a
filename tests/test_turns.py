"""`ihbench turns` on two-channel conversations made of real TTS speech with known intervals.

The conversation (see `_script`): the AI greets, the user asks, the AI answers after 0.8 s; the
user says "Uh-huh" inside that answer (a backchannel), then barges in 0.4 s before the AI's
answer ends where its text ends (a yield, timed to the end of the AI's speech); the AI answers
after 0.5 s; the user tries to barge in again but the AI talks on to the end of its turn (a
talk-over), and the user speaks again once it is done (a new turn, not the same barge-in).
The same conversation is also analysed under a -50 dBFS noise floor.

Timings are compared within 80 ms: a latency is the difference of two boundaries, each found to
within one 40 ms chunk of the floor labels (silero scores 32 ms windows).
"""
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from ihbench.dataset.audio import AudioError
from ihbench.dataset.errors import IHBenchError
from turns_synth import AI_VOICE, USER_VOICE, SyntheticCall, render, with_noise

from ihbench.turns.audio import TwoChannel, plan_recordings, read_pair, read_stereo
from ihbench.turns.judge import JudgeFileError, TurnTakingJudge
from ihbench.turns.run import analyze, analyze_intervals, run_turns
from ihbench.turns.stats import statistics, timing_summary

AI = {"greet": "Thanks for calling Highline Rail, how can I help you today?",
      "answer": "The five fifteen to Seattle was cancelled because a mudslide closed the tracks near Kelso.",
      "offer": "Yes. There is a bus at nine thirty tonight and your bike can ride with you at no charge."}
USER = {"ask": "My train to Seattle was just cancelled tonight.", "uh-huh": "Uh-huh.",
        "barge": "Wait, is there a bus tonight instead?", "failed": "Hold on a second please.",
        "thanks": "That works for me."}
DURATION = 27.0
TIMING = 0.08  # s: two boundaries, each within a 40 ms chunk
NOISE_DBFS = -50.0


def _script(ai: dict, user: dict) -> tuple[SyntheticCall, dict]:
    c = SyntheticCall(DURATION)
    end = c.place("A", ai["greet"], 0.5)
    end = c.place("B", user["ask"], end + 0.6)
    answer = end + 0.8
    c.place("B", user["uh-huh"], answer + 2.0)
    answer_end = c.place("A", ai["answer"], answer)  # ends where its text ends
    barge = answer_end - 0.4
    end = c.place("B", user["barge"], barge)
    offer = end + 0.5
    offer_end = c.place("A", ai["offer"], offer)
    talk_over = offer + 1.5
    c.place("B", user["failed"], talk_over)
    c.place("B", user["thanks"], offer_end + 0.6)
    return c, {"latencies": [0.8, 0.5], "barge": barge, "stop_latency": 0.4, "ai_stop": answer_end,
               "talk_over": talk_over, "offer_end": offer_end}


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
def noisy(conversation, vad):
    """The conversation under a -50 dBFS noise floor on both channels."""
    c, _ = conversation
    return analyze(TwoChannel.from_samples("noisy", with_noise(c.a, NOISE_DBFS, 1), with_noise(c.b, NOISE_DBFS, 2)), vad)


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


def test_silero_recovers_the_rendered_speech_intervals(detected, noisy, truth):
    """silero finds the IPUs; their starts and ends are measured on the frame energy, so neither
    its late onsets on soft sounds ("uh-huh") nor its hangover after the last word remain:
    within two 10 ms frames of the rendered speech, in silence and under a -50 dBFS floor."""
    for analysis in (detected, noisy):
        for channel in (0, 1):
            found, expected = analysis.ipus[channel], truth.ipus[channel]
            assert _close(found, expected, 0.02), (analysis.name, found, expected)


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
    assert len(latencies) == 2 and all(abs(a - b) <= TIMING for a, b in zip(latencies, script["latencies"]))
    yielded, talked_over = timing["barge_ins"]
    assert yielded["outcome"] == "yield" and abs(yielded["user_start"] - script["barge"]) <= TIMING
    assert abs(yielded["stop_latency_s"] - script["stop_latency"]) <= TIMING
    summary = timing_summary([timing])
    assert summary["turn_over_rate"]["value"] == 0.5 and summary["turn_over_rate"]["n"] == 2
    assert summary["response_latency_s"]["n"] == 2 and summary["stop_latency_s"]["n"] == 1
    assert summary["talk_overs"] == 1


def test_a_talked_over_barge_in_is_a_talk_over_not_a_yield(detected, truth, conversation):
    """The user speaks again once the AI has finished: before the fix, that reply was taken for
    the rest of the barge-in, which then counted as a yield with a stop latency of seconds."""
    _, script = conversation
    for analysis in (truth, detected):
        (_, talked_over) = analysis.timing["barge_ins"]
        assert talked_over["outcome"] == "talk_over" and not talked_over["user_took_floor"]
        assert talked_over["stop_latency_s"] is None and abs(talked_over["user_start"] - script["talk_over"]) <= TIMING
        assert abs(talked_over["ai_stop"] - script["offer_end"]) <= TIMING  # the AI talked on to its turn's end
        assert talked_over["user_end"] < script["offer_end"] - 1.0  # the barge-in is "Hold on", not the reply
        summary = timing_summary([analysis.timing])
        assert (summary["talk_overs"], summary["stop_latency_s"]["n"], summary["turn_over_rate"]["n"]) == (1, 1, 2)
        assert abs(summary["stop_latency_s"]["mean"] - script["stop_latency"]) <= TIMING


def test_a_yield_in_light_noise_is_timed_to_the_end_of_the_ais_speech(detected, noisy, conversation):
    """Under a -50 dBFS floor silero's segment outlasts the AI's last word by 0.1 s or more; the
    stop is where the speech ends, in silence and in noise alike."""
    _, script = conversation
    for analysis in (detected, noisy):
        yielded, talked_over = analysis.timing["barge_ins"]
        assert (yielded["outcome"], talked_over["outcome"]) == ("yield", "talk_over"), analysis.name
        assert abs(yielded["ai_stop"] - script["ai_stop"]) <= TIMING, analysis.name
        assert abs(yielded["stop_latency_s"] - script["stop_latency"]) <= TIMING, analysis.name
        summary = timing_summary([analysis.timing])
        assert (summary["stop_latency_s"]["n"], summary["talk_overs"], summary["turn_over_rate"]["value"]) == (1, 1, 0.5)
    assert noisy.labels.events == detected.labels.events  # the noise floor changes no event


def test_speech_boundaries_leave_out_the_detectors_hangover():
    from ihbench.turns.boundaries import speech_boundaries

    rate = 16_000
    t = np.arange(3 * rate) / rate
    speech = np.where((t >= 1.0) & (t < 2.0), 0.1 * np.sin(2 * np.pi * 220 * t), 0.0).astype(np.float32)
    # the detector's segment starts 60 ms late and ends 150 ms late; a second one holds nothing but the floor
    late = [(1.06, 2.15), (2.5, 2.7)]
    for samples in (speech, with_noise(speech, NOISE_DBFS, 3)):
        assert speech_boundaries(samples, late) == [(1.0, 2.0), (2.5, 2.7)]
    # a soft start is looked for at most half a second before the detector's onset
    assert speech_boundaries(speech, [(1.8, 2.1)]) == [(1.3, 2.0)]
    # "Oh, (150 ms) and that balance...": the detector hears the second part; the IPU starts with "Oh,"
    oh = np.where((t >= 0.6) & (t < 0.8), 0.05 * np.sin(2 * np.pi * 180 * t), 0.0).astype(np.float32)
    assert speech_boundaries(speech + oh, [(1.0, 2.15)]) == [(0.6, 2.0)]
    assert speech_boundaries(speech + np.roll(oh, -int(0.1 * rate)), [(1.0, 2.15)]) == [(1.0, 2.0)]  # 300 ms: another IPU


def test_a_short_ipu_that_opens_a_turn_or_a_barge_in_is_no_backchannel():
    from ihbench.dataset.ipus import backchannels_by_heuristic

    ai = [(0.0, 5.15), (9.0, 12.0)]
    # "Yeah," 0.25 s, the AI stops 0.15 s later and the user goes on: a barge-in, not a backchannel
    assert backchannels_by_heuristic([(4.7, 4.95), (5.2, 7.0)], ai) == []
    # "That was my son. He set it up-" over the AI, which talks on: the short opening is the barge-in's
    assert backchannels_by_heuristic([(1.0, 1.8), (2.1, 3.8)], [(0.0, 6.0)]) == []
    # "Mm-hm" in the AI's speech, the AI talks on: a backchannel; "mm-hm ... yeah": two
    assert backchannels_by_heuristic([(2.0, 2.3), (5.6, 7.0)], ai) == [(2.0, 2.3)]
    assert backchannels_by_heuristic([(1.0, 1.3), (1.8, 2.1)], [(0.0, 6.0)]) == [(1.0, 1.3), (1.8, 2.1)]
    # the AI pauses right after "mm-hm" but starts again before the user says more: still a backchannel
    assert backchannels_by_heuristic([(4.7, 4.95), (5.8, 7.5)], [(0.0, 5.0), (5.6, 12.0)]) == [(4.7, 4.95)]


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
    # the AI talks 0.3 s past "Wait." and starts again in the user's pause: it yielded to neither attempt
    first, second = timing_events([(0.0, 5.1), (5.5, 10.0)], [(3.0, 4.8), (6.0, 7.0)])["barge_ins"]
    assert not first["user_took_floor"] and not second["user_took_floor"]


def test_a_yield_is_a_stop_while_the_user_still_holds_the_barge_in():
    from ihbench.dataset.floor import HELD_PAUSE_S, YIELD_TOLERANCE_S, barge_ins
    from ihbench.dataset.ipus import MAX_BACKCHANNEL_S, MIN_SILENCE_S

    assert YIELD_TOLERANCE_S == MIN_SILENCE_S == 0.2  # the IPU rule: the user's speech has not ended yet
    assert HELD_PAUSE_S == MAX_BACKCHANNEL_S == 1.0  # a pause inside a turn, as the backchannel heuristic bridges
    # "Wait.": the AI stops 0.15 s after it and the user says no more: a yield
    (attempt,) = barge_ins([(0.0, 4.95), (6.5, 8.0)], [(3.0, 4.8)])
    assert (attempt["outcome"], attempt["stop_latency_s"], attempt["user_end"]) == ("yield", 1.95, 4.8)
    # the AI stops 0.3 s after "Wait." ends, in the user's pause, and the user goes on 0.4 s later: a yield
    (attempt,) = barge_ins([(0.0, 5.1)], [(3.0, 4.8), (5.5, 7.0)])
    assert (attempt["outcome"], attempt["stop_latency_s"], attempt["user_end"]) == ("yield", 2.1, 7.0)
    # the AI talks on for 2.5 s after "Wait." and the user answers once it is done: a talk-over
    (attempt,) = barge_ins([(0.0, 7.3)], [(3.0, 4.8), (7.8, 10.0)])
    assert (attempt["outcome"], attempt["stop_latency_s"], attempt["user_end"], attempt["ai_stop"]) == \
        ("talk_over", None, 4.8, 7.3)
    # 0.3 s past "Wait." and the user silent for 1.2 s: the user had let go, a talk-over
    (attempt,) = barge_ins([(0.0, 5.1)], [(3.0, 4.8), (6.0, 7.0)])
    assert attempt["outcome"] == "talk_over" and attempt["user_end"] == 4.8
    summary = timing_summary([{"responses": [], "barge_ins": barge_ins([(0.0, 7.3), (8.0, 9.0)],
                                                                      [(3.0, 4.8), (8.5, 9.5)])}])
    assert (summary["talk_overs"], summary["turn_over_rate"]["value"], summary["stop_latency_s"]["mean"]) == (1, 0.5, 0.5)


def test_backchannels_by_words_from_a_transcripts_file(tmp_path, files, detected):
    uh_huh = detected.backchannels[1][0]
    failed = detected.speech[1][-2]  # "Hold on a second please." (the user's last IPU is "That works for me.")
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
    assert not [n for n in summary["notes"] if "transcript" in n]  # its words lie in the user's speech
    path.write_text('{"recording": "conv", "channel": "C", "words": []}\n')
    with pytest.raises(IHBenchError, match=r"words.jsonl:1: field 'channel'"):
        run_turns([files / "conv.wav"], tmp_path / "out", transcripts=path, progress=False)


def test_a_transcript_line_with_no_word_in_its_channels_speech_is_said(tmp_path, files, capsys):
    """Battery 24 T3: a channel's line whose words fall in none of its speech (times shifted, the
    wrong recording's line) switched its backchannel detection off without a word."""
    from ihbench.cli import main

    path = tmp_path / "words.jsonl"
    path.write_text(json.dumps({"recording": "conv", "channel": "B",
                                "words": [{"word": "Uh-huh.", "start": 26.5, "end": 26.9}]}) + "\n")
    assert main(["turns", str(files / "conv.wav"), "--transcripts", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "note: conv: channel B's transcript has no word inside any of its" in out
    assert "1 word(s) in all" in out and "seconds from the recording's start" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [n for n in summary["notes"] if "channel B's transcript" in n]
    assert not [n for n in summary["notes"] if "channel A" in n]  # channel A had no line: the heuristic


def test_an_empty_words_list_on_a_speaking_channel_is_said_and_a_silent_one_is_not():
    ipus = [(1.0, 2.0), (3.0, 4.0)]
    said = analyze_intervals("rec", 10.0, (ipus, []), words={"A": [], "B": []})
    assert len(said.notes) == 1 and said.notes[0].startswith("rec: channel A's transcript has no word inside any of "
                                                             "its 2 speech stretch(es) (0 word(s) in all)")
    heard = analyze_intervals("rec", 10.0, (ipus, []), words={"A": [{"word": "yes", "start": 3.1, "end": 3.4}]})
    assert heard.notes == ()


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
    # battery 45, R9: a copy that did not finish was analysed as the whole call
    whole = tmp_path / "whole.wav"
    noise = np.random.default_rng(0).uniform(-0.1, 0.1, (64000, 2)).astype(np.float32)
    soundfile.write(str(whole), noise, 16000, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[:len(whole.read_bytes()) // 3])
    with pytest.raises(AudioError, match=r"cut.wav: cut short: its header gives 4.00 s and the file holds 1.33 s"):
        read_stereo(cut)
    from ihbench.cli import main

    assert main(["turns", str(cut), "--out", str(tmp_path / "cut-out"), "--quiet"]) == 2
    assert not (tmp_path / "cut-out").exists()
    assert read_stereo(whole).duration == 4.0
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
    # battery 16 (try 50): values that cannot be likelihoods changed the agreement scores without a word
    (lambda n: np.vstack([np.full((3, 5), 0.2), [[0.2, -0.5, 0.2, 0.2, 0.2]], np.full((n - 4, 5), 0.2)]),
     r"j.npz: recording 'conv': row 3: likelihood of NA is -0.5, outside \[0, 1\]; logits\?"),
    (lambda n: np.full((n, 5), 20.0), r"row 0: likelihood of C is 20, outside \[0, 1\]; percentages\? give them divided"),
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
    assert "talk-overs (the AI kept speaking over a barge-in; no stop latency): 1" in result.stdout
    assert "s of audio" in result.stderr  # the progress bar
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "turns" and summary["model_name"] == "cascade-v1" and summary["recordings"] == 1
    assert summary["agreement"] is None
    assert summary["format_version"] == 2 and summary["timing"]["talk_overs"] == 1
    assert summary["per_recording"][0]["talk_overs"] == 1 and summary["per_recording"][0]["barge_ins"] == 2
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


def test_the_talk_over_count_reaches_the_space_and_the_cross_report(tmp_path, files):
    from ihbench.report.benchmark_runs import turns_cells
    from ihbench.summaries import TurnsSummary, read_summary
    from ihbench.ui_turns import timing_rows

    summary = run_turns([files / "conv.wav"], tmp_path / "out", progress=False)
    assert timing_rows(summary["timing"])[-1] == ["talk-overs (barge-ins the AI talked over)", 1, None, None, 2]
    cell = turns_cells(read_summary(tmp_path / "out" / "summary.json"))["turn_over_rate"]
    assert (cell["value"], cell["n"], cell["talk_overs"]) == (0.5, 2, 1)
    older = {**{k: v for k, v in summary.items() if k != "sealed"},  # written before seals were, too
             "format_version": 1, "timing": {k: v for k, v in summary["timing"].items() if k != "talk_overs"}}
    assert turns_cells(TurnsSummary.from_json(older))["turn_over_rate"]["talk_overs"] is None  # not counted then
    assert len(timing_rows(older["timing"])) == 3


@pytest.mark.parametrize("edit", ["timing", "events", "folder", "model_name"])
def test_a_turns_output_edited_after_it_was_written_is_refused_by_the_report(edit, files, tmp_path, capsys):
    """Battery 16 (try 34): report took a turns output's timing from summary.json unchecked: an edited latency,
    a recording's events.json changed or its folder deleted were reported as written. A display name set
    by hand (`model_name`) is allowed."""
    import json
    import shutil

    from ihbench.cli import main

    out = tmp_path / "t"
    assert main(["turns", str(files / "conv.wav"), "--model-name", "tm", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    if edit == "timing":
        summary["timing"]["response_latency_s"]["mean"] = 0.1
    elif edit == "model_name":
        summary["model_name"] = "my agent"
    elif edit == "events":
        events = json.loads((out / "conv" / "events.json").read_text())
        events["timing"]["responses"] = []
        (out / "conv" / "events.json").write_text(json.dumps(events))
    else:
        shutil.rmtree(out / "conv")
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    capsys.readouterr()
    code = main(["report", str(out), "--out", str(tmp_path / "rep"), "--quiet"])
    err = capsys.readouterr().err
    if edit == "model_name":
        assert code == 0 and "my agent" in (tmp_path / "rep" / "report.md").read_text(), err
        return
    assert code == 2 and not (tmp_path / "rep" / "report.md").exists(), err
    said = {"timing": "not the figures `ihbench turns` wrote", "events": "conv/events.json: not the file",
            "folder": "conv/events.json: missing, while"}[edit]
    assert said in err and "`ihbench turns` writes" in err, err


def test_a_damaged_second_recording_is_refused_before_the_first_is_analysed(files, tmp_path, capsys):
    """Battery 16 (try 87): `turns good.wav damaged.wav` left the first recording's events and timeline in --out,
    with no summary; every recording is now read and checked before any is analysed."""
    from ihbench.cli import main

    damaged = tmp_path / "damaged.wav"
    samples = np.zeros((16_000, 2), dtype=np.float32)
    samples[100, 0] = np.nan
    soundfile.write(str(damaged), samples, 16_000, subtype="FLOAT")
    out = tmp_path / "out"
    assert main(["turns", str(files / "conv.wav"), str(damaged), "--out", str(out), "--quiet"]) == 2
    assert "samples are not finite numbers" in capsys.readouterr().err
    assert not out.exists()


def test_one_call_given_twice_under_two_names_is_refused(files, tmp_path, capsys):
    """Battery 17, M5: `turns u7.wav u7b.wav` (a copy) counted the call twice: n doubled and the interval
    narrowed, without a word."""
    import shutil

    from ihbench.cli import main

    shutil.copy(files / "conv.wav", tmp_path / "copy.wav")
    assert main(["turns", str(files / "conv.wav"), str(tmp_path / "copy.wav"), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    assert "AUDIO: copy.wav holds the same audio as recording 'conv' (the same call twice?)" in \
        capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc")
def test_a_transcripts_file_that_cannot_be_read_is_named():
    """Battery 47, T9: `--transcripts /proc/self/mem` said "Input/output error", naming no file."""
    from ihbench.turns.transcripts import TranscriptError, read_transcripts

    with pytest.raises(TranscriptError, match=r"^/proc/self/mem: cannot be read \(Input/output error\)$"):
        read_transcripts("/proc/self/mem")
