"""Per-turn reply timing of a speech-to-speech run: the reference's `analyze_turn_metrics`, as a
library, with rows mapped to turns by the logged turn index when the events carry it.

`analyze_run` reads the folder; `measure` is the arithmetic on what was read (pure, so the rules
can be checked without audio). The selection rules are the reference's, kept even where they are
odd, so a run measured here and there gives the same numbers:

- the greeting is the first bot segment when it starts before the first user segment ends; its
  log tag and RMS onset are then dropped (tag-order mode) or were never a turn's (turn-index mode);
- a turn's bot segment is the one starting closest after its *log* tag (from 500 ms before it);
- its user segment is the one ending closest before that bot segment starts, among those ending
  after the previous turn's bot segment;
- a reconnected turn (`reconnection_count` > 0 in the transcript) keeps its raw positions but no
  derived timing; a retried turn's WAV V2V counts from its first queued user-audio end.

Turn-index mode (events.jsonl) departs on purpose where tag order goes wrong: a turn that was
played (a tag, a queued user WAV or a retry logged for it) gets a row even without a tag, so a
silent bot fails as `missing_timing_data` instead of shifting every later row; when a retried
turn has several tags, the last one (the reply that was kept) is the turn's; its RMS onset is the
first one logged for the turn at or after that tag. Every tag except the greeting's still enters
the alignment check. In both modes the greeting is not an unmatched bot segment (the reference
lists it, which makes `turn_taking_ok` false for every model that greets; no turn changes).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ihbench.dataset.errors import MissingFileError

import ihbench.convbench.timing.segments as seg
import ihbench.convbench.timing.tags as tg
from .inputs import Mark, RunLog, read_conversation, read_events, read_run_log, read_transcript
from .verdicts import issue_thresholds, turn_taking_block

ANALYSIS_VERSION = 1
BOT_SEGMENT_LEAD_MS = 500  # silero may open a reply's segment this much before its tag
SUMMARY_METRICS = ("server_ttfb_ms", "pipeline_ttfb_ms", "wav_v2v_ms", "silent_pad_rms_ms", "silent_pad_silero_ms")
ROW_KEYS = ("turn", "server_ttfb_ms", "pipeline_ttfb_ms", "wav_v2v_ms", "silent_pad_rms_ms", "silent_pad_silero_ms",
            "tag_alignment_ms", "has_tool_call", "user_start_ms", "user_end_ms", "bot_tag_log_ms", "bot_tag_wav_ms",
            "bot_rms_onset_ms", "bot_silero_start_ms", "bot_silero_end_ms", "retry_count", "retry_reasons",
            "first_user_end_time", "reconnection_count")


@dataclass
class TimingAnalysis:
    """The analysis of one run folder. `supported` is false (with `reason`) when the folder is not a
    speech-to-speech run or lacks the tag log; `summary`, `alignment` and `turns` are then empty."""

    run_dir: str
    supported: bool
    reason: Optional[str] = None
    source: Optional[str] = None  # "events.jsonl" | "run.log"
    row_mapping: Optional[str] = None  # "turn_index" | "tag_order"
    sampling_rate: Optional[int] = None
    summary: dict = field(default_factory=dict)
    alignment: dict = field(default_factory=dict)
    turns: list[dict] = field(default_factory=list)
    turn_taking: dict = field(default_factory=dict)

    @classmethod
    def unsupported(cls, run_dir, reason: str) -> "TimingAnalysis":
        return cls(str(run_dir), False, reason, turn_taking=turn_taking_block(str(run_dir), [], {}, False, error=reason))

    def to_json(self) -> dict:
        """`summary`, `alignment` and `turns` are the reference's `--json` output; `turn_taking` its
        turn-taking analysis (`per_turn` keyed by the turn as a string, as JSON has it)."""
        block = dict(self.turn_taking)
        block["per_turn"] = {str(k): v for k, v in block.get("per_turn", {}).items()}
        return {"run_dir": self.run_dir, "supported": self.supported, "reason": self.reason, "source": self.source,
                "row_mapping": self.row_mapping, "sampling_rate": self.sampling_rate, "parameters": parameters(),
                "summary": self.summary, "alignment": self.alignment, "turns": self.turns, "turn_taking": block}


def parameters() -> dict:
    return {"analysis_version": ANALYSIS_VERSION,
            "tags": {"freq_hz": tg.FREQ_HZ, "window_ms": tg.WINDOW_MS, "hop_ms": tg.HOP_MS, "band_hz": tg.BAND_HZ,
                     "ratio": tg.RATIO, "min_level_dbfs": tg.MIN_LEVEL_DBFS, "merge_ms": tg.MERGE_MS,
                     "match_ms": tg.MATCH_MS, "alignment_tolerance_ms": tg.ALIGNMENT_TOLERANCE_MS},
            "vad": seg.vad_parameters(), "overlap_min_ms": seg.OVERLAP_MIN_MS,
            "unprompted_gap_ms": seg.UNPROMPTED_GAP_MS, "bot_segment_lead_ms": BOT_SEGMENT_LEAD_MS,
            **issue_thresholds()}


def analyze_run(run_dir, *, vad=None) -> TimingAnalysis:
    """Measure a run folder: `conversation.wav` + `transcript.jsonl` + `events.jsonl` (or, failing
    that, the reference's `run.log`). `vad` is a `segments.reference_vad()` to reuse across runs."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise MissingFileError(f"{run_dir}: no such run folder")
    wav = run_dir / "conversation.wav"
    if not wav.is_file():
        return TimingAnalysis.unsupported(run_dir, f"not a speech-to-speech run: no conversation.wav in {run_dir}")
    events, log_file = run_dir / "events.jsonl", run_dir / "run.log"
    if not events.is_file() and not log_file.is_file():
        return TimingAnalysis.unsupported(run_dir, f"no events.jsonl or run.log in {run_dir}: the bot tags' logged "
                                                   "positions are needed to find the replies")
    recording = read_conversation(wav)
    log = read_events(events, recording.rate) if events.is_file() else read_run_log(log_file)
    transcript = read_transcript(run_dir / "transcript.jsonl")
    bot_wav = tg.detect_tags(recording.bot, recording.rate)
    # user tags are legacy: looked for only when the log has some, as the reference does
    user_wav = tg.detect_tags(recording.user, recording.rate) if log.user_tags else []
    user_segments, bot_segments = seg.speech_segments([recording.user, recording.bot], recording.rate, vad)
    result = measure(log, transcript, bot_wav, user_wav, user_segments, bot_segments, run_dir=str(run_dir))
    result.sampling_rate = recording.rate
    return result


def measure(log: RunLog, transcript: dict, bot_wav: Sequence[float], user_wav: Sequence[float],
            user_segments: Sequence[dict], bot_segments: Sequence[dict], *, run_dir: str = "") -> TimingAnalysis:
    greeting = None
    if bot_segments and user_segments and bot_segments[0]["start_ms"] < user_segments[0]["end_ms"]:
        greeting = bot_segments[0]
    tags, onsets, greeting_tag = _without_greeting(log, greeting is not None)
    alignment, bot_map = tg.check_alignment([t.ms for t in tags], bot_wav, [t.ms for t in log.user_tags], user_wav)

    rows, previous_bot_end = [], None
    for turn, index, onset in _plan(log, tags, onsets):
        row = _row(turn, transcript.get(turn), log)
        if index is not None:
            row["bot_tag_log_ms"] = tags[index].ms
            if index in bot_map:
                row["bot_tag_wav_ms"] = bot_wav[bot_map[index]]
                row["tag_alignment_ms"] = row["bot_tag_log_ms"] - row["bot_tag_wav_ms"]
            row["bot_rms_onset_ms"] = onset
            _pick_segments(row, user_segments, bot_segments, previous_bot_end)
        if row["reconnection_count"] <= 0:
            _derive(row, log.baseline)
        if row["bot_silero_end_ms"] is not None:
            previous_bot_end = row["bot_silero_end_ms"]
        rows.append(row)

    chosen = {r["bot_silero_start_ms"] for r in rows if r["bot_silero_start_ms"] is not None}
    summary = {"run_dir": run_dir, "num_turns": len(rows), "user_segments": len(user_segments),
               "bot_segments": len(bot_segments), "greeting_detected": greeting is not None,
               "greeting": None if greeting is None else {
                   **seg.span(greeting), "tag_log_ms": None if greeting_tag is None else greeting_tag.ms},
               "overlaps": seg.find_overlaps(user_segments, bot_segments),
               "unmatched_bot_segments": [seg.span(b) for b in bot_segments
                                          if b["start_ms"] not in chosen and b is not greeting],
               "unprompted_bot_segments": seg.unprompted_segments(user_segments, bot_segments, greeting)}
    for name in SUMMARY_METRICS:  # absent, not null, when no turn has the metric (the reference's shape)
        values = [r[name] for r in rows if r[name] is not None]
        if values:
            summary.update({f"{name}_median": float(np.median(values)), f"{name}_mean": float(np.mean(values)),
                            f"{name}_min": float(np.min(values)), f"{name}_max": float(np.max(values))})
    return TimingAnalysis(run_dir, True, source=log.source,
                          row_mapping="turn_index" if log.turn_indexed else "tag_order",
                          summary=summary, alignment=vars(alignment).copy(), turns=rows,
                          turn_taking=turn_taking_block(run_dir, rows, summary, log.greeting_timeout))


def _without_greeting(log: RunLog, greeting: bool) -> tuple[list[Mark], list[Mark], Optional[Mark]]:
    """The tags and onsets that belong to turns (and enter the alignment check), and the greeting's tag."""
    tags, onsets = list(log.bot_tags), list(log.onsets)
    if not greeting:
        return tags, onsets, None
    if not log.turn_indexed:
        return tags[1:], onsets[1:], (tags[0] if tags else None)
    first = next((k for k, t in enumerate(tags) if t.turn is None), None)
    if first is None:
        return tags, onsets, None
    return tags[:first] + tags[first + 1:], onsets, tags[first]


def _plan(log: RunLog, tags: list[Mark], onsets: list[Mark]) -> list[tuple[int, Optional[int], Optional[float]]]:
    """(turn, index of its tag in `tags`, its RMS onset ms) per row."""
    if not log.turn_indexed:
        return [(i, i, onsets[i].ms if i < len(onsets) else None) for i in range(len(tags))]
    played = {t.turn for t in tags if t.turn is not None} | set(log.first_user_end) | set(log.retries)
    plan = []
    for turn in sorted(played):
        own = [k for k, t in enumerate(tags) if t.turn == turn]
        index = own[-1] if own else None
        onset = None if index is None else next(
            (o.ms for o in onsets if o.turn == turn and o.ms >= tags[index].ms), None)
        plan.append((turn, index, onset))
    return plan


def _row(turn: int, entry: Optional[dict], log: RunLog) -> dict:
    row = dict.fromkeys(ROW_KEYS)
    reasons = list(log.retries.get(turn, []))
    row.update(turn=turn, has_tool_call=False, retry_count=len(reasons), retry_reasons=reasons,
               first_user_end_time=log.first_user_end.get(turn), reconnection_count=0)
    if entry is not None:
        row.update(server_ttfb_ms=entry.get("ttfb_ms"), has_tool_call=len(entry.get("tool_calls") or []) > 0,
                   reconnection_count=entry.get("reconnection_count") or 0)
    return row


def _pick_segments(row: dict, user_segments, bot_segments, previous_bot_end: Optional[float]) -> None:
    tag = row["bot_tag_log_ms"]
    bot = _closest((b for b in bot_segments if b["start_ms"] - tag >= -BOT_SEGMENT_LEAD_MS),
                   lambda b: b["start_ms"] - tag)
    if bot is None:
        return
    row["bot_silero_start_ms"], row["bot_silero_end_ms"] = bot["start_ms"], bot["end_ms"]
    start = bot["start_ms"]
    user = _closest((u for u in user_segments if (previous_bot_end is None or u["end_ms"] > previous_bot_end)
                     and start - u["end_ms"] >= 0), lambda u: start - u["end_ms"])
    if user is not None:
        row["user_start_ms"], row["user_end_ms"] = user["start_ms"], user["end_ms"]


def _closest(candidates, distance):
    """The first candidate with the smallest distance (the reference's strict `<` scan)."""
    best, best_distance = None, float("inf")
    for candidate in candidates:
        if distance(candidate) < best_distance:
            best, best_distance = candidate, distance(candidate)
    return best


def _derive(row: dict, baseline: Optional[float]) -> None:
    tag, wav_tag, user_end, bot_start = (row["bot_tag_log_ms"], row["bot_tag_wav_ms"], row["user_end_ms"],
                                         row["bot_silero_start_ms"])
    if tag is not None and user_end is not None:
        row["pipeline_ttfb_ms"] = tag - user_end
    if bot_start is not None and user_end is not None:
        if row["retry_count"] > 0 and row["first_user_end_time"] is not None and baseline is not None:
            row["wav_v2v_ms"] = bot_start - (row["first_user_end_time"] - baseline) * 1000
        else:
            row["wav_v2v_ms"] = bot_start - user_end
    if row["bot_rms_onset_ms"] is not None and tag is not None:
        row["silent_pad_rms_ms"] = row["bot_rms_onset_ms"] - tag
    if bot_start is not None and wav_tag is not None:
        row["silent_pad_silero_ms"] = bot_start - wav_tag
