"""When the bot answered, in a ConversationBench speech-to-speech run: the reference's turn-taking
analysis (`scripts/analyze_turn_metrics.py` + `judging/turn_taking.py`) as a library, so the judge
calls a function instead of shelling out to `uv run` and silently passing every turn when that
fails (reference §4, §7 E).

    tags.py      the 2 kHz tag: tone, detector, log↔WAV matching, the alignment block
    segments.py  silero-vad segments at the reference's settings; overlaps, unprompted bot speech
    inputs.py    conversation.wav, transcript.jsonl, events.jsonl or run.log, read into one shape
    analyze.py   `analyze_run` -> `TimingAnalysis`: per-turn metrics, summary, alignment
    verdicts.py  the failure rules and `turn_taking_verdicts` (what the judge's turn_taking takes)

A run folder holds a stereo `conversation.wav` (channel 0 the user, channel 1 the bot, 16-bit,
any rate), `transcript.jsonl` (the reference's lines: turn, ttfb_ms, tool_calls,
reconnection_count) and `events.jsonl`, or the reference's `run.log` when there is no
events.jsonl. Without conversation.wav the run is not speech-to-speech: the result is
`supported=False` with a `reason`, never an exception.

events.jsonl: one JSON object per line, written by the recorder as things happen; unknown keys
are ignored, an unknown `event` is an error. Positions are on the recording's own timeline
(its first sample is 0): `sample_pos_ms` in ms, or `sample_pos` in samples at the WAV's rate
(exactly one of the two). `turn` is the benchmark turn index (as in transcript.jsonl).

    {"event": "baseline", "monotonic": 8123.456}
        the recording's first sample, in the recorder's monotonic clock (s); first line wins
    {"event": "bot_tag", "sample_pos_ms": 5230, "turn": 0}
        a tag mixed into the bot channel (first bot frame after the user stopped); "turn": null
        (or no turn) for the greeting's tag
    {"event": "bot_onset", "sample_pos_ms": 5310, "turn": 0, "silent_padding_ms": 80, "rms_db": -24.1}
        the first bot frame above −30 dB RMS after a tag (only sample_pos[_ms] and turn are read)
    {"event": "user_audio_queued", "turn": 0, "predicted_end": 8128.9}
        a user WAV queued (each attempt); the first per turn is the turn's user end (monotonic s)
    {"event": "retry", "turn": 3, "reason": "empty_response" | "no_response", "retry_count": 1}
    {"event": "reconnection", "turn": 5}
        the session reconnected and the turn is replayed
    {"event": "greeting_timeout"}
        the greeting did not complete

With events.jsonl rows are mapped to turns by `turn` (`row_mapping: "turn_index"`); with run.log
by tag order, as the reference does (`"tag_order"`; row i is turn i, so a retry that adds a tag
shifts every later row). `TimingAnalysis.to_json()`::

    {"run_dir", "supported", "reason", "source": "events.jsonl" | "run.log" | null,
     "row_mapping": "turn_index" | "tag_order" | null, "sampling_rate", "parameters",
     "summary": {run_dir, num_turns, user_segments, bot_segments, greeting_detected,
                 greeting: null | {start_ms, end_ms, duration_ms, tag_log_ms}, overlaps,
                 unmatched_bot_segments, unprompted_bot_segments,
                 <metric>_median/_mean/_min/_max for server_ttfb_ms, pipeline_ttfb_ms, wav_v2v_ms,
                 silent_pad_rms_ms, silent_pad_silero_ms (absent when no turn has the metric)},
     "alignment": {bot_tags_log, bot_tags_wav, user_tags_log, user_tags_wav, matched_bot_tags,
                   matched_user_tags, bot_alignment_min_ms/_max_ms/_mean_ms, user_alignment_…,
                   alignment_ok, issues},
     "turns": [{turn, server_ttfb_ms, pipeline_ttfb_ms, wav_v2v_ms, silent_pad_rms_ms,
                silent_pad_silero_ms, tag_alignment_ms, has_tool_call, user_start_ms, user_end_ms,
                bot_tag_log_ms, bot_tag_wav_ms, bot_rms_onset_ms, bot_silero_start_ms,
                bot_silero_end_ms, retry_count, retry_reasons, first_user_end_time,
                reconnection_count}],
     "turn_taking": {run_dir, turn_taking_ok, failed_turns, per_turn: {"<turn>": {turn,
                     turn_taking, issues}}, error, global_issues, overlaps,
                     unmatched_bot_segments, unprompted_bot_segments}}

All times are ms on the recording's timeline except `first_user_end_time` (monotonic s).
"""
from .analyze import TimingAnalysis, analyze_run, measure
from .segments import reference_vad, speech_segments
from .tags import detect_tags, tag_tone
from .verdicts import turn_issues, turn_taking_verdicts

__all__ = ["TimingAnalysis", "analyze_run", "detect_tags", "measure", "reference_vad", "speech_segments",
           "tag_tone", "turn_issues", "turn_taking_verdicts"]
