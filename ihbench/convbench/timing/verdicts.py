"""The reference's failure rules (`detect_turn_taking_issues`): which turns fail turn-taking, and why.

The issue strings are the reference's, character for character, because its judge prompt lists
them and people compare runs by them. One rule cannot fire, here as there: tags are matched only
within ±150 ms, so a matched tag's `tag_alignment_ms` is never beyond the 150 ms that
`alignment_drift` needs; a tag drifted further is unmatched and its turn fails as
`missing_bot_wav_tag` instead. Global issues (overlaps, orphan and unprompted bot speech, a
greeting timeout) make `turn_taking_ok` false but fail no turn by themselves.
"""
from __future__ import annotations

from typing import Optional, Sequence

ALIGNMENT_DRIFT_MS = 150
MAX_SILENT_PAD_MS = 5000


def issue_thresholds() -> dict:
    return {"alignment_drift_ms": ALIGNMENT_DRIFT_MS, "max_silent_pad_ms": MAX_SILENT_PAD_MS}


def turn_issues(row: dict, overlaps: Sequence[dict] = ()) -> list[str]:
    """The issue strings of one turn's metrics row (empty: the turn passes)."""
    issues = []
    ttfb = row.get("pipeline_ttfb_ms")
    if ttfb is None:
        issues.append("missing_timing_data")
    elif ttfb < 0:
        issues.append(f"negative_ttfb ({ttfb:.0f}ms)")
    alignment = row.get("tag_alignment_ms")
    if alignment is not None and abs(alignment) > ALIGNMENT_DRIFT_MS:
        issues.append(f"alignment_drift ({alignment:.0f}ms)")
    if row.get("bot_tag_wav_ms") is None and row.get("bot_tag_log_ms") is not None:
        issues.append("missing_bot_wav_tag")
    pad = row.get("silent_pad_silero_ms")
    if pad is not None and pad > MAX_SILENT_PAD_MS:
        issues.append(f"high_silent_pad ({pad:.0f}ms)")
    start, end = row.get("user_start_ms"), row.get("bot_silero_end_ms")
    if start is not None and end is not None:
        for overlap in overlaps:  # flagged once per turn, for the first overlap inside it
            if overlap.get("overlap_start_ms", 0) >= start and overlap.get("overlap_end_ms", 0) <= end:
                issues.append(f"audio_overlap ({overlap.get('overlap_ms', 0):.0f}ms)")
                break
    reasons = row.get("retry_reasons") or []
    for reason in ("empty_response", "no_response"):
        if count := reasons.count(reason):
            issues.append(f"{reason} ({count} retries)")
    if (count := reasons.count("reconnection")) and row.get("turn", -1) != 0:  # turn 0's is the first connection
        issues.append(f"reconnection ({count} retries)")
    return issues


def turn_taking_block(run_dir: str, rows: Sequence[dict], summary: dict, greeting_timeout: bool,
                      error: Optional[str] = None) -> dict:
    """The reference's turn-taking analysis: {run_dir, turn_taking_ok, failed_turns, per_turn,
    error, global_issues, overlaps, unmatched_bot_segments, unprompted_bot_segments}.
    `turn_taking_ok` is null when nothing was measured (`error` says why), where the reference
    reports true: a text-mode run has not passed turn-taking, it was not tested."""
    overlaps = summary.get("overlaps", [])
    unmatched, unprompted = summary.get("unmatched_bot_segments", []), summary.get("unprompted_bot_segments", [])
    global_issues = []
    if overlaps:
        total = sum(o.get("overlap_ms", 0) for o in overlaps)
        global_issues.append(f"audio_overlap: {len(overlaps)} instances, {total:.0f}ms total")
    if unmatched:
        global_issues.append(f"unmatched_bot_segments: {len(unmatched)} orphan segments")
    if unprompted:
        global_issues.append(f"unprompted_bot_responses: {len(unprompted)} segments without user trigger")
    if greeting_timeout:
        global_issues.append("greeting_timeout: bot started greeting but never completed (30s timeout)")
    per_turn, failed = {}, []
    for row in rows:
        turn = row.get("turn", -1)
        if not isinstance(turn, int) or turn < 0:
            continue
        issues = turn_issues(row, overlaps)
        if turn == 0 and greeting_timeout:
            issues.append("greeting_timeout")
        per_turn[turn] = {"turn": turn, "turn_taking": not issues, "issues": issues}
        if issues:
            failed.append(turn)
    ok = None if error is not None else not global_issues and not failed  # None: not measured (the reference says true)
    return {"run_dir": run_dir, "turn_taking_ok": ok,
            "failed_turns": sorted(failed), "per_turn": per_turn, "error": error, "global_issues": global_issues,
            "overlaps": overlaps, "unmatched_bot_segments": unmatched, "unprompted_bot_segments": unprompted}


def turn_taking_verdicts(analysis) -> dict[int, tuple[bool, list[str]]]:
    """{turn: (turn_taking, issues)} for the judge, from a `TimingAnalysis`. Empty when the analysis is not supported (see
    `analysis.supported` and `analysis.reason`): the caller then marks turn_taking unsupported.
    A turn without a row (never played, or beyond the tags in tag-order mode) is absent; the
    reference's judge counts such a turn as passing."""
    if not analysis.supported:
        return {}
    return {turn: (entry["turn_taking"], list(entry["issues"]))
            for turn, entry in analysis.turn_taking.get("per_turn", {}).items()}
