"""Reply timing of speech-to-speech ConversationBench runs (`ihbench.convbench.timing`), on stereo
recordings made of real TTS speech with 2 kHz tags mixed into the bot channel at known samples,
and the events.jsonl / run.log a recorder would have written for them.

Tolerances. Tag positions: one 5 ms hop, around the detector's lead (it reports the start of the
first 20 ms frame the tone dominates, 11-16 ms before a clean tag at 24 kHz). VAD-based figures:
100 ms, about three of silero's 32 ms windows: at threshold 0.7 its onset comes 0-3 windows after
the energy onset and its offset 1-2 windows after the energy offset (measured on these renders:
+8..+76 ms and +18..+72 ms). Figures read from the logs are exact. The recordings' tests are marked slow (TTS renders, ~25 s);
the rules on hand-made segments and the input errors are not.
"""
import json
import shutil

import numpy as np
import pytest
import soundfile
from ihbench.dataset.audio import AudioError, resample
from ihbench.dataset.errors import UsageError
from turns_synth import AI_VOICE, USER_VOICE, render, speech_spans, trim

from ihbench.convbench.timing import (
    analyze_run,
    measure,
    reference_vad,
    tag_tone,
    turn_issues,
    turn_taking_verdicts,
)
from ihbench.convbench.timing.inputs import Mark, RunLog

RATE = 24_000
LEAD_MS = 14  # where the detector puts a clean tag, before its first sample, at 24 kHz (tags.py)
HOP_MS = 5
VAD_MS = 100
BASELINE = 1000.0  # the recorder's monotonic clock at the recording's first sample

USER = {"keynote": "Where is the keynote tomorrow morning?",
        "book": "Can you book me a seat at the robotics workshop?",
        "cancel": "Please cancel my dinner booking.",
        "hold": "Hold on a second please.",
        "wait": "Wait, which room was that?"}
BOT = {"greet": "Thanks for calling, how can I help?",
       "keynote": "The keynote is in the main hall at nine.",
       "booked": "Done, your seat at the robotics workshop is booked.",
       "bye": "You are welcome, enjoy the conference.",
       "long": "The workshop runs all afternoon in room twelve, and the lab sessions after it are open to "
               "everyone with a badge, so you can stay as long as you like.",
       "late": "By the way, the exhibition hall opens at ten."}


@pytest.fixture(scope="module")
def clips():
    from ihbench.dataset.tts import RenderCache

    cache = RenderCache()
    rendered = {("user", k): render(t, USER_VOICE, cache) for k, t in USER.items()}
    rendered.update({("bot", k): render(t, AI_VOICE, cache) for k, t in BOT.items()})
    return {key: trim(x) for key, x in rendered.items()}


@pytest.fixture(scope="module")
def vad():
    return reference_vad()


class Call:
    """A 24 kHz stereo recording (0 the user, 1 the bot) built utterance by utterance, with the
    true speech interval (s) of each from the clean render's energy."""

    def __init__(self, clips, duration: float):
        self.clips = clips
        self.channels = np.zeros((2, int(duration * RATE)), np.float32)

    def say(self, who: str, key: str, start: float) -> tuple[float, float]:
        clip = self.clips[(who, key)]
        first = int(round(start * RATE))
        samples = resample(clip, 16_000, RATE)
        self.channels[0 if who == "user" else 1, first:first + samples.size] += samples
        spans = speech_spans(clip)
        return start + spans[0][0], start + spans[-1][1]

    def tag(self, ms: int) -> None:
        tone = tag_tone(RATE)
        self.channels[1, ms * RATE // 1000:ms * RATE // 1000 + tone.size] += tone

    def write(self, folder):
        folder.mkdir(parents=True, exist_ok=True)
        soundfile.write(str(folder / "conversation.wav"), self.channels.T, RATE, subtype="PCM_16")
        return folder


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _transcript(folder, ttfbs, tools=()):
    _jsonl(folder / "transcript.jsonl", [
        {"ts": "2026-01-09T16:09:48.123Z", "turn": i, "model_name": "test", "user_text": "", "assistant_text": "",
         "tool_calls": [{"name": "register_for_session", "args": {}}] if i in tools else [], "tool_results": [],
         "tokens": None, "ttfb_ms": ttfb, "latency_ms": 4000, "reconnection_count": 0}
        for i, ttfb in enumerate(ttfbs)])


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


# --- a clean call: a greeting, then three turns ----------------------------------------------

PAD_MS, TTFB_MS = 120, 700  # tag -> bot speech; user end -> tag


@pytest.fixture(scope="module")
def clean(clips, tmp_path_factory):
    """The recording, its truth, and two run folders over it: one with events.jsonl, one with run.log."""
    call = Call(clips, 27.0)  # 2 s of silence after the last reply, or silero runs its segment to the end
    greeting_tag = 400
    call.tag(greeting_tag)
    _, end = call.say("bot", "greet", (greeting_tag + PAD_MS) / 1000)
    turns = []
    for user, bot in (("keynote", "keynote"), ("book", "booked"), ("cancel", "bye")):
        user_start, user_end = call.say("user", user, end + 1.2)
        tag = _ms(user_end) + TTFB_MS
        call.tag(tag)
        bot_start, end = call.say("bot", bot, (tag + PAD_MS) / 1000)
        turns.append({"user": (user_start, user_end), "tag": tag, "bot": (bot_start, end)})
    ttfbs = [431, 518, 377]

    events = [{"event": "baseline", "monotonic": BASELINE},
              {"event": "bot_tag", "sample_pos": greeting_tag * RATE // 1000, "turn": None},
              {"event": "bot_onset", "sample_pos_ms": greeting_tag + PAD_MS, "turn": None}]
    log = [f"2026-01-09 16:09:48.000 | INFO | Recording baseline set at monotonic={BASELINE:.3f}",
           f"2026-01-09 16:09:48.400 | DEBUG | [NullAudioOutput] Bot turn tag: sample_pos={greeting_tag}ms, "
           "freq=2000Hz, duration=15ms",
           f"Bot speech onset: T+{greeting_tag + PAD_MS}ms (sample_pos={greeting_tag + PAD_MS}ms, "
           f"silent_padding={PAD_MS}ms, rms=-23.5dB)"]
    for i, t in enumerate(turns):
        queued = BASELINE + t["user"][1]
        events += [{"event": "user_audio_queued", "turn": i, "predicted_end": queued},
                   {"event": "bot_tag", "sample_pos": t["tag"] * RATE // 1000, "turn": i},
                   {"event": "bot_onset", "sample_pos_ms": t["tag"] + PAD_MS, "turn": i, "silent_padding_ms": PAD_MS,
                    "rms_db": -21.0}]
        log += [f"[USER_AUDIO_QUEUED] turn={i} predicted_end={queued:.6f}",
                f"[NullAudioOutput] Bot turn tag: sample_pos={t['tag']}ms, freq=2000Hz, duration=15ms",
                f"Bot speech onset: T+{t['tag'] + PAD_MS}ms (sample_pos={t['tag'] + PAD_MS}ms, "
                f"silent_padding={PAD_MS}ms, rms=-21.0dB)"]
    root = tmp_path_factory.mktemp("clean")
    with_events = call.write(root / "events")
    _jsonl(with_events / "events.jsonl", events)
    _transcript(with_events, ttfbs, tools={1})
    with_log = root / "log"
    with_log.mkdir()
    shutil.copy(with_events / "conversation.wav", with_log)
    shutil.copy(with_events / "transcript.jsonl", with_log)
    (with_log / "run.log").write_text("\n".join(log) + "\n")
    return {"turns": turns, "ttfbs": ttfbs, "greeting_tag": greeting_tag, "events": with_events, "log": with_log}


@pytest.fixture(scope="module")
def clean_analysis(clean, vad):
    return analyze_run(clean["events"], vad=vad)


@pytest.mark.slow  # real TTS renders
def test_clean_call_gives_every_metric(clean, clean_analysis):
    result = clean_analysis
    assert result.supported and result.source == "events.jsonl" and result.row_mapping == "turn_index"
    assert result.sampling_rate == RATE
    assert [r["turn"] for r in result.turns] == [0, 1, 2]
    for row, truth, ttfb in zip(result.turns, clean["turns"], clean["ttfbs"]):
        user_start, user_end = (1000 * x for x in truth["user"])
        bot_start = 1000 * truth["bot"][0]
        assert row["server_ttfb_ms"] == ttfb
        assert row["bot_tag_log_ms"] == truth["tag"]
        assert abs(row["bot_tag_wav_ms"] - (truth["tag"] - LEAD_MS)) <= HOP_MS
        assert abs(row["tag_alignment_ms"] - LEAD_MS) <= HOP_MS
        assert row["bot_rms_onset_ms"] == truth["tag"] + PAD_MS and row["silent_pad_rms_ms"] == PAD_MS
        assert abs(row["user_start_ms"] - user_start) <= VAD_MS and abs(row["user_end_ms"] - user_end) <= VAD_MS
        assert abs(row["bot_silero_start_ms"] - bot_start) <= VAD_MS
        assert abs(row["bot_silero_end_ms"] - 1000 * truth["bot"][1]) <= VAD_MS
        assert abs(row["pipeline_ttfb_ms"] - TTFB_MS) <= VAD_MS
        assert abs(row["wav_v2v_ms"] - (TTFB_MS + PAD_MS)) <= VAD_MS
        assert abs(row["silent_pad_silero_ms"] - (PAD_MS + LEAD_MS)) <= VAD_MS
        assert row["retry_count"] == 0 and row["retry_reasons"] == [] and row["reconnection_count"] == 0
        assert row["first_user_end_time"] == pytest.approx(BASELINE + truth["user"][1])
    assert [r["has_tool_call"] for r in result.turns] == [False, True, False]

    summary = result.summary
    assert summary["num_turns"] == 3 and summary["user_segments"] == 3 and summary["bot_segments"] == 4
    assert summary["server_ttfb_ms_median"] == 431 and summary["server_ttfb_ms_min"] == 377
    assert summary["silent_pad_rms_ms_mean"] == PAD_MS
    assert abs(summary["wav_v2v_ms_median"] - (TTFB_MS + PAD_MS)) <= VAD_MS
    for name in ("pipeline_ttfb_ms", "wav_v2v_ms", "silent_pad_silero_ms"):
        values = [r[name] for r in result.turns]
        assert summary[f"{name}_min"] == min(values) and summary[f"{name}_max"] == max(values)
    assert summary["overlaps"] == [] and summary["unmatched_bot_segments"] == [] and summary["unprompted_bot_segments"] == []

    alignment = result.alignment
    assert (alignment["bot_tags_log"], alignment["bot_tags_wav"], alignment["matched_bot_tags"]) == (3, 4, 3)
    assert alignment["alignment_ok"] is True
    assert abs(alignment["bot_alignment_mean_ms"] - LEAD_MS) <= HOP_MS
    [issue] = alignment["issues"]  # the greeting's tag, in the WAV but not a turn's
    assert issue.startswith("WAV detected 1 unmatched bot tags at positions: [")
    assert abs(json.loads(issue.split(": ", 1)[1])[0] - (clean["greeting_tag"] - LEAD_MS)) <= HOP_MS

    assert turn_taking_verdicts(result) == {0: (True, []), 1: (True, []), 2: (True, [])}
    assert result.turn_taking["turn_taking_ok"] is True and result.turn_taking["global_issues"] == []
    text = json.dumps(result.to_json())
    assert set(json.loads(text)) >= {"summary", "alignment", "turns", "turn_taking", "parameters"}
    assert json.loads(text)["parameters"]["vad"]["threshold"] == 0.7


@pytest.mark.slow  # real TTS renders
def test_greeting_is_dropped_from_the_turns(clean, clean_analysis):
    """The bot speaks before the user's first utterance ends: that segment and its tag are the
    greeting, no turn's, and not an unprompted reply."""
    summary = clean_analysis.summary
    assert summary["greeting_detected"] is True
    greeting = summary["greeting"]
    assert greeting["tag_log_ms"] == clean["greeting_tag"]
    assert abs(greeting["start_ms"] - (clean["greeting_tag"] + PAD_MS)) <= VAD_MS
    assert greeting["duration_ms"] == greeting["end_ms"] - greeting["start_ms"]
    assert clean_analysis.turns[0]["bot_tag_log_ms"] == clean["turns"][0]["tag"]


@pytest.mark.slow  # real TTS renders
def test_run_log_fallback_gives_the_same_numbers(clean, clean_analysis, vad):
    from_log = analyze_run(clean["log"], vad=vad)
    assert from_log.source == "run.log" and from_log.row_mapping == "tag_order"
    assert from_log.turns == clean_analysis.turns
    assert {k: v for k, v in from_log.summary.items() if k != "run_dir"} == \
        {k: v for k, v in clean_analysis.summary.items() if k != "run_dir"}
    assert from_log.alignment == clean_analysis.alignment
    assert turn_taking_verdicts(from_log) == turn_taking_verdicts(clean_analysis)


# --- a call with one fault per turn ----------------------------------------------------------

@pytest.fixture(scope="module")
def faults(clips, tmp_path_factory, vad):
    """Turn 0 answers 5.3 s after its tag; turn 1's tag is logged but not in the WAV; turn 2's
    log tag is 200 ms after its WAV tag, turn 3's 80 ms; in turn 4 the user talks twice over a
    long reply; then the bot speaks again with nobody asking."""
    call = Call(clips, 56.0)
    events = [{"event": "baseline", "monotonic": BASELINE}]
    truth = []

    def turn(i, user, bot, start, *, pad=PAD_MS, ttfb=600, drift=0, tone=True):
        user_start, user_end = call.say("user", user, start)
        tag = _ms(user_end) + ttfb
        if tone:
            call.tag(tag)
        bot_start, bot_end = call.say("bot", bot, (tag + pad) / 1000)
        events.extend([{"event": "user_audio_queued", "turn": i, "predicted_end": BASELINE + user_end},
                       {"event": "bot_tag", "sample_pos_ms": tag + drift, "turn": i}])
        truth.append({"user": (user_start, user_end), "tag": tag, "bot": (bot_start, bot_end)})
        return bot_end

    end = turn(0, "keynote", "keynote", 0.5, pad=5300, ttfb=300)
    end = turn(1, "book", "booked", end + 1.2, tone=False)
    end = turn(2, "cancel", "keynote", end + 1.2, drift=200)
    end = turn(3, "keynote", "bye", end + 1.2, drift=80)
    end = turn(4, "book", "long", end + 1.2)
    bot_start = truth[4]["bot"][0]
    interjections = [call.say("user", "hold", bot_start + 1.6), call.say("user", "wait", bot_start + 5.4)]
    late = call.say("bot", "late", end + 4.5)
    folder = call.write(tmp_path_factory.mktemp("faults") / "run")
    _jsonl(folder / "events.jsonl", events)
    _transcript(folder, [400, 410, 420, 430, 440])
    return {"analysis": analyze_run(folder, vad=vad), "truth": truth, "interjections": interjections, "late": late}


@pytest.mark.slow  # real TTS renders
def test_high_silent_pad_fails_its_turn(faults):
    row = faults["analysis"].turns[0]
    expected = 5300 + LEAD_MS
    assert abs(row["silent_pad_silero_ms"] - expected) <= VAD_MS
    assert row["silent_pad_rms_ms"] is None  # no onset logged for it
    ok, issues = turn_taking_verdicts(faults["analysis"])[0]
    assert not ok and issues == [f"high_silent_pad ({row['silent_pad_silero_ms']:.0f}ms)"]


@pytest.mark.slow  # real TTS renders
def test_missing_wav_tag_fails_its_turn(faults):
    row = faults["analysis"].turns[1]
    assert row["bot_tag_log_ms"] == faults["truth"][1]["tag"] and row["bot_tag_wav_ms"] is None
    assert row["tag_alignment_ms"] is None and row["silent_pad_silero_ms"] is None
    assert abs(row["pipeline_ttfb_ms"] - 600) <= VAD_MS  # the timing that needs no WAV tag is still there
    assert turn_taking_verdicts(faults["analysis"])[1] == (False, ["missing_bot_wav_tag"])


@pytest.mark.slow  # real TTS renders
def test_alignment_drift(faults):
    """A tag drifted by more than 150 ms cannot be matched (the match window is ±150 ms), so its
    turn fails as `missing_bot_wav_tag` and the WAV tag is reported unmatched; a drift of 80 ms
    breaks the global ±20 ms check but not the turn. The `alignment_drift` rule itself is kept
    (and exact) for any row that carries a larger alignment."""
    analysis = faults["analysis"]
    verdicts = turn_taking_verdicts(analysis)
    assert analysis.turns[2]["bot_tag_wav_ms"] is None
    assert verdicts[2] == (False, ["missing_bot_wav_tag"])
    drifted = analysis.turns[3]
    assert abs(drifted["tag_alignment_ms"] - (80 + LEAD_MS)) <= HOP_MS
    assert verdicts[3] == (True, [])
    alignment = analysis.alignment
    assert alignment["alignment_ok"] is False
    assert (alignment["bot_tags_log"], alignment["bot_tags_wav"], alignment["matched_bot_tags"]) == (5, 4, 3)
    issues = alignment["issues"]
    assert issues[0].startswith("Bot tag alignment outside ±20ms: ")
    wav_tag = analysis.turns[2]["bot_tag_log_ms"] - 200 - LEAD_MS
    assert issues[1].startswith("WAV detected 1 unmatched bot tags at positions: [")
    assert abs(json.loads(issues[1].split(": ", 1)[1])[0] - wav_tag) <= HOP_MS
    assert issues[2] == "Missing bot tags: 2 log tags not found in WAV"
    assert turn_issues({"turn": 7, "pipeline_ttfb_ms": 500.0, "tag_alignment_ms": -212.4, "bot_tag_log_ms": 1.0,
                        "bot_tag_wav_ms": 213.4}) == ["alignment_drift (-212ms)"]


@pytest.mark.slow  # real TTS renders
def test_overlap_is_flagged_once_on_its_turn(faults):
    analysis = faults["analysis"]
    overlaps = analysis.summary["overlaps"]
    assert len(overlaps) == 2
    for overlap, (start, end) in zip(overlaps, faults["interjections"]):
        assert abs(overlap["overlap_start_ms"] - 1000 * start) <= VAD_MS
        assert abs(overlap["overlap_end_ms"] - 1000 * end) <= VAD_MS
        assert overlap["overlap_ms"] == overlap["overlap_end_ms"] - overlap["overlap_start_ms"] >= 100
    verdicts = turn_taking_verdicts(analysis)
    assert verdicts[4] == (False, [f"audio_overlap ({overlaps[0]['overlap_ms']:.0f}ms)"])
    assert all("audio_overlap" not in " ".join(issues) for turn, (_, issues) in verdicts.items() if turn != 4)
    total = sum(o["overlap_ms"] for o in overlaps)
    assert f"audio_overlap: 2 instances, {total:.0f}ms total" in analysis.turn_taking["global_issues"]


@pytest.mark.slow  # real TTS renders
def test_unprompted_bot_segment_is_reported(faults):
    analysis = faults["analysis"]
    late_start = 1000 * faults["late"][0]
    unprompted = analysis.summary["unprompted_bot_segments"]
    # turn 0's reply (5.6 s after the user stopped) counts too, as in the reference
    assert len(unprompted) == 2
    assert [abs(s["start_ms"] - 1000 * t) <= VAD_MS for s, t in zip(unprompted, (faults["truth"][0]["bot"][0],
                                                                                 faults["late"][0]))] == [True, True]
    last = unprompted[-1]
    assert abs(last["gap_from_last_user_ms"] - (late_start - 1000 * faults["interjections"][1][1])) <= 2 * VAD_MS
    assert last["gap_from_last_user_ms"] > 5000
    unmatched = analysis.summary["unmatched_bot_segments"]
    assert len(unmatched) == 1 and abs(unmatched[0]["start_ms"] - late_start) <= VAD_MS
    block = analysis.turn_taking
    assert block["turn_taking_ok"] is False and block["failed_turns"] == [0, 1, 2, 4]
    assert "unprompted_bot_responses: 2 segments without user trigger" in block["global_issues"]
    assert "unmatched_bot_segments: 1 orphan segments" in block["global_issues"]


# --- mapping rows to turns, retries, reconnections (the arithmetic, without audio) ----------

def _segments(*spans):
    return [{"start_ms": float(s), "end_ms": float(e)} for s, e in spans]


USER_SEGMENTS = _segments((1000, 3000), (8000, 10000), (15000, 17000))
BOT_SEGMENTS = _segments((3800, 6000), (10900, 13000), (17800, 20000))


def test_turn_index_mapping_survives_a_retry_that_adds_a_tag():
    """Turn 1 was retried: its first attempt left a tag (at 10,100 ms) before the kept reply's
    (10,800 ms). By turn index, turn 2 keeps its own tag; by tag order every later row shifts."""
    tags = [(3700, 0), (10100, 1), (10800, 1), (17700, 2)]
    events = RunLog("events.jsonl", bot_tags=[Mark(ms, turn) for ms, turn in tags],
                    onsets=[Mark(3780, 0), Mark(10180, 1), Mark(10880, 1), Mark(17780, 2)],
                    retries={1: ["no_response"]}, first_user_end={0: 3.0, 1: 9.5, 2: 17.0}, baseline=0.0)
    wav = [ms - 14 for ms, _ in tags]
    result = measure(events, {}, wav, [], USER_SEGMENTS, BOT_SEGMENTS)
    assert [r["bot_tag_log_ms"] for r in result.turns] == [3700, 10800, 17700]
    retried = result.turns[1]
    assert retried["bot_rms_onset_ms"] == 10880 and retried["silent_pad_rms_ms"] == 80
    assert retried["pipeline_ttfb_ms"] == 800 and retried["wav_v2v_ms"] == 10900 - 9500  # from the first queueing
    assert result.alignment["matched_bot_tags"] == 4
    assert turn_taking_verdicts(result) == {0: (True, []), 1: (False, ["no_response (1 retries)"]), 2: (True, [])}

    as_log = RunLog("run.log", bot_tags=[Mark(ms) for ms, _ in tags], onsets=[Mark(ms) for ms in (3780, 10180, 10880, 17780)],
                    retries={1: ["no_response"]})
    shifted = measure(as_log, {}, wav, [], USER_SEGMENTS, BOT_SEGMENTS)
    assert [r["bot_tag_log_ms"] for r in shifted.turns] == [3700, 10100, 10800, 17700]
    assert len(shifted.turns) == 4  # one row too many: turn 2's row holds turn 1's kept reply


def test_played_turn_without_a_tag_fails_instead_of_shifting_rows():
    events = RunLog("events.jsonl", bot_tags=[Mark(3700, 0), Mark(17700, 2)], first_user_end={0: 3.0, 1: 10.0, 2: 17.0})
    result = measure(events, {}, [3686, 17686], [], USER_SEGMENTS, BOT_SEGMENTS)
    assert [r["turn"] for r in result.turns] == [0, 1, 2]
    assert result.turns[2]["bot_tag_log_ms"] == 17700
    assert turn_taking_verdicts(result)[1] == (False, ["missing_timing_data"])


def test_reconnections_and_greeting_timeout():
    transcript = {0: {"turn": 0, "ttfb_ms": 300, "tool_calls": [], "reconnection_count": 0},
                  2: {"turn": 2, "ttfb_ms": 300, "tool_calls": None, "reconnection_count": 1}}
    events = RunLog("events.jsonl", bot_tags=[Mark(3700, 0), Mark(10800, 1), Mark(17700, 2)],
                    retries={0: ["reconnection"], 2: ["reconnection"]}, greeting_timeout=True)
    result = measure(events, transcript, [3686, 10786, 17686], [], USER_SEGMENTS, BOT_SEGMENTS)
    reconnected = result.turns[2]
    assert reconnected["bot_silero_start_ms"] == 17800 and reconnected["tag_alignment_ms"] == 14
    assert reconnected["pipeline_ttfb_ms"] is None and reconnected["wav_v2v_ms"] is None
    verdicts = turn_taking_verdicts(result)
    assert verdicts[0] == (False, ["greeting_timeout"])  # turn 0's reconnection is the first connection
    assert verdicts[2] == (False, ["missing_timing_data", "reconnection (1 retries)"])
    assert "greeting_timeout: bot started greeting but never completed (30s timeout)" in \
        result.turn_taking["global_issues"]


# --- folders that are not speech-to-speech runs, and bad inputs -------------------------------

def test_folder_without_conversation_wav_is_not_a_speech_to_speech_run(tmp_path):
    _transcript(tmp_path, [100, 200])
    result = analyze_run(tmp_path)
    assert not result.supported and result.reason.startswith("not a speech-to-speech run: no conversation.wav")
    assert turn_taking_verdicts(result) == {}
    block = json.loads(json.dumps(result.to_json()))["turn_taking"]
    assert block["error"] == result.reason and block["turn_taking_ok"] is None and block["per_turn"] == {}


def test_wav_without_tag_log_is_not_supported(tmp_path):
    soundfile.write(str(tmp_path / "conversation.wav"), np.zeros((RATE, 2), np.float32), RATE, subtype="PCM_16")
    result = analyze_run(tmp_path)
    assert not result.supported and "no events.jsonl or run.log" in result.reason


def test_mono_or_non_audio_wav_is_one_line_naming_the_file(tmp_path):
    soundfile.write(str(tmp_path / "conversation.wav"), np.zeros(RATE, np.float32), RATE, subtype="PCM_16")
    (tmp_path / "run.log").write_text("")
    with pytest.raises(AudioError, match=r"conversation\.wav: 1 channel\(s\); .* stereo"):
        analyze_run(tmp_path)
    (tmp_path / "conversation.wav").write_text("not audio at all")
    with pytest.raises(AudioError, match=r"conversation\.wav: not a readable audio file"):
        analyze_run(tmp_path)


@pytest.mark.parametrize("line, message", [
    ("{not json", r"events\.jsonl:2: not a JSON line"),
    ('{"event": "bot_tagg", "sample_pos_ms": 5}', r"events\.jsonl:2: event 'bot_tagg' is not one of bot_tag, "),
    ('{"event": "bot_tag", "turn": 0}', r"events\.jsonl:2: give exactly one of 'sample_pos_ms'"),
    ('{"event": "retry", "turn": "3", "reason": "no_response"}', r"events\.jsonl:2: 'turn' must be a turn index"),
    ('{"event": "retry", "turn": 3, "reason": "timeout"}', r"events\.jsonl:2: retry reason 'timeout'"),
])
def test_malformed_events_line_names_file_and_line(tmp_path, line, message):
    soundfile.write(str(tmp_path / "conversation.wav"), np.zeros((RATE, 2), np.float32), RATE, subtype="PCM_16")
    (tmp_path / "events.jsonl").write_text('{"event": "baseline", "monotonic": 1.0}\n' + line + "\n")
    with pytest.raises(UsageError, match=message) as error:
        analyze_run(tmp_path)
    assert "\n" not in str(error.value)


def test_tag_tone_and_detector_at_other_rates():
    """The tone is 15 ms at -12 dBFS; a clean tag is found one hop-wide window before its first
    sample at 16, 24 and 48 kHz, and nothing is found in silence or in a level below -40 dBFS."""
    from ihbench.convbench.timing import detect_tags

    for rate, lead in ((16_000, 11), (24_000, LEAD_MS), (48_000, 16)):
        tone = tag_tone(rate)
        assert tone.size == rate * 15 // 1000 and abs(np.max(np.abs(tone)) - 10 ** (-12 / 20)) < 0.01
        track = np.zeros(rate * 2, np.float32)
        track[rate:rate + tone.size] += tone
        assert [abs(t - (1000 - lead)) <= HOP_MS for t in detect_tags(track, rate)] == [True]
        assert detect_tags(track * 10 ** (-40 / 20), rate) == []  # tone RMS now below -40 dBFS
        assert detect_tags(np.zeros(rate, np.float32), rate) == []
