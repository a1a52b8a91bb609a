"""`ihbench report` on a ConversationBench run: the judged turns handed to the `convbench_pass_rate`
metric module (the arithmetic lives there), plus what a reader needs beside the rates: the judge's
identity and request plan, what was left out and why, and the latency of the model's turns.

Only the verdicts of finished conversations as they are now count: a conversation played again
after its judgment is not scored until it is judged again, a judge_error is counted and left out,
and a conversation that stopped on a failed turn is counted as unfinished. turn_taking is a
dimension only where a recording was analysed: a text or audio-in run has none, and reporting the
reference's default "true" there would be a number nobody measured.
"""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Optional

from ..convbench.judge.realign import DIMENSIONS, NEVER_ANSWERED, UNSCORED_CALL
from ..convbench.judge.run import read_conv_judgments
from ..convbench.judge.source import open_source
from ..dataset.errors import UsageError
from ..resources import load_metric
from .convbench_compare import compare_judges

METRIC = "convbench_pass_rate"


def _percentiles(values: list[float]) -> Optional[dict]:
    if not values:
        return None
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered) + 0.5) - 1))]  # nearest rank
    return {"median_ms": round(statistics.median(ordered) * 1000, 1), "p90_ms": round(p90 * 1000, 1),
            "n": len(ordered)}


def convbench_rows(benchmark, judged: list) -> dict:
    """The metric module's long-form inputs: one row per (turn, epoch, dimension)."""
    turns = {turn.index: turn for turn in benchmark.turns}
    rows = {"predictions": [], "dimensions": [], "turn_ids": [], "epochs": [], "call_expected": [], "categories": []}
    for record in judged:
        turn = turns[record.turn]
        for dimension in DIMENSIONS:
            if dimension == "turn_taking" and not record.turn_taking_supported:
                continue
            rows["predictions"].append(record.scores.get(dimension))
            rows["dimensions"].append(dimension)
            rows["turn_ids"].append(record.turn)
            rows["epochs"].append(record.epoch)
            rows["call_expected"].append(bool(turn.required_calls))
            rows["categories"].append(list(turn.categories) or ["(none)"])
    return rows


def _cap_hits(source, epochs: set) -> int:
    """Turns of the scored conversations that reached the tool-round cap: the model kept calling tools
    and was stopped, so its turn ends without a final answer (a reference harness run records none)."""
    if source.kind != "ihbench":
        return 0
    from ..convbench.records import TurnRecord
    from ..records import read_typed

    latest = {r.key: r for r in read_typed(source.run.responses_path, TurnRecord)}
    return sum(r.round_cap_hit for (epoch, _), r in latest.items() if epoch in epochs and r.done)


def summarize_convbench(run_dir: Path, *, judgments: Optional[Path] = None, data: Optional[str] = None,
                        config: Optional[str] = None, compare_judge: Optional[Path] = None) -> dict:
    """`run_dir`: our run folder or a reference harness's (its benchmark from `data`/`config`, or as
    its judgments recorded it). `compare_judge`: the reference judge's `*_judged.jsonl` of one of
    its conversations, for agreement with ours."""
    from ..resources import metric_version

    source = open_source(run_dir, data=data, config=config, judgments=judgments)
    run = source.run
    path = Path(judgments) if judgments else (run.judgment_files() or [run.judgments_path()])[0]
    if compare_judge and path.exists() and Path(compare_judge).resolve() == path.resolve():  # agrees with itself
        raise UsageError(f"--compare-judge: {compare_judge} is this run's own judgments file, the one the report "
                         "scores; give the reference judge's *_judged.jsonl of the same transcript")
    latest = read_conv_judgments(path, said=True) if path.exists() else {}
    judged, errors, stale, not_judged = [], set(), set(), set()
    for conversation in source.conversations:
        records = [latest.get((conversation.epoch, t)) for t in source.targets]
        if any(r is None for r in records):
            not_judged.add(conversation.epoch)
        elif any(r.conversation_hash != conversation.digest for r in records):
            stale.add(conversation.epoch)
        elif any(not r.judged for r in records):
            errors.add(conversation.epoch)
        else:
            judged += records
    scores = load_metric(METRIC).compute(**convbench_rows(source.benchmark, judged)) if judged else None
    first = judged[0] if judged else None
    lines = [line for c in source.conversations if c.epoch in {r.epoch for r in judged} for line in c.records.values()
             if not str(line.get("assistant_text", "")).startswith("[MODEL_ENDED_SESSION_EARLY")]
    normalised, defaulted = {}, {}
    for record in judged:
        for dimension in record.normalised:
            normalised[dimension] = normalised.get(dimension, 0) + 1
        for dimension in (record.initial or {}).get("defaulted", []):
            defaulted[dimension] = defaulted.get(dimension, 0) + 1
    unscored_calls = sum(UNSCORED_CALL in record.notes for record in judged)
    never_answered = sum(any(n.startswith(NEVER_ANSWERED) for n in record.notes) for record in judged)
    cap_hits = _cap_hits(source, {r.epoch for r in judged})
    failing = [{"epoch": r.epoch, "turn": r.turn, "failed": [d for d, v in r.scores.items() if v is False],
                "reasoning": r.reasoning, "notes": r.notes, "turn_taking_issues": r.turn_taking_issues}
               for r in judged if False in r.scores.values()]
    return {
        "kind": "convbench", "run": str(run.path), "source": source.kind, "model": source.model,
        "modality": source.modality, "data": source.data, "config": source.config,
        "benchmark": source.benchmark.name, "mapping_version": source.benchmark.mapping_version, "mode": source.mode,
        "tool_results": source.tool_results, "n_turns": len(source.targets), "epochs": source.epochs,
        "note": source.note,
        "on_data_audio": source.on_data_audio,  # unfinished on the data's own damaged clip: a rerun fails again
        "conversations": {"finished": len(source.conversations), "unfinished": source.unfinished,
                          "judged": len({r.epoch for r in judged}), "judge_error": len(errors),
                          "not_judged": len(not_judged), "judged_before_replay": len(stale)},
        "judge": None if first is None else {
            "file": str(path), "model": first.judge_model, "prompt_version": first.prompt_version,
            "prompt_hash": first.prompt_hash, "context": first.judge_context or ["none (as the original)"],
            "requests": _plan(first), "turn_taking": first.turn_taking_reason or "not measured"},
        "scores": scores, "metric": METRIC, "metric_version": metric_version(METRIC),
        "normalised_to_null": normalised,
        # scores the judge left out on always-scored dimensions: failures by the reference's rule, counted
        "defaulted_to_false": defaulted,
        # turns that expect a call whose tool use the judge left without a value: unscored, as the reference does
        "unscored_expected_calls": unscored_calls,
        # turns that ended at the tool-round cap (--max-tool-rounds), judged as the model left them
        "round_cap_hits": cap_hits,
        # turns after the model's end_session call: never played, failed on every dimension they score
        "never_answered": never_answered,
        # who is playing the run now (its unfinished conversations are not failed, only not done yet)
        "being_played_by": source.run.writer() if source.kind == "ihbench" else None,
        "realigned_turns": sum(1 for r in judged if any(not n.startswith("rehydrated") for n in r.notes)),
        "latency": {"ttfb": _percentiles([line["ttfb_ms"] / 1000 for line in lines if line.get("ttfb_ms") is not None]),
                    "total": _percentiles([line["latency_ms"] / 1000 for line in lines
                                           if line.get("latency_ms") is not None])},
        "reply_timing": _reply_timing(source, {r.epoch for r in judged}),
        "failing_turns": failing,
        "reference_judge": compare_judges(source, judged, compare_judge) if compare_judge else None,
        "turns": [{"epoch": r.epoch, "turn": r.turn, "scores": r.scores} for r in judged],
    }


def _reply_timing(source, epochs: set) -> Optional[dict]:
    """The recording's per-run summary (voice-to-voice latency, silent pad...) where the judge analysed one."""
    import json

    from ..convbench.judge.run import TIMING_FILE

    found = {}
    for conversation in source.conversations:
        file = conversation.folder / TIMING_FILE
        if conversation.epoch in epochs and file.is_file():
            analysis = json.loads(file.read_text(encoding="utf-8"))
            summary = analysis.get("summary") or {}
            found[conversation.epoch] = {key: summary.get(key) for key in (
                "pipeline_ttfb_ms_median", "wav_v2v_ms_median", "silent_pad_silero_ms_median",
                "server_ttfb_ms_median")} | {"failed_turns": (analysis.get("turn_taking") or {}).get("failed_turns"),
                                             "alignment_ok": (analysis.get("alignment") or {}).get("alignment_ok"),
                                             "file": str(file)}
    return found or None


def _plan(record) -> str:
    if record.windows == 1:
        return (f"whole conversation in one request (about {record.request_tokens:,} tokens; the judge's context "
                f"{record.context_tokens:,})")
    return (f"{record.windows} windows per conversation: the whole conversation did not fit the judge's context of "
            f"{record.context_tokens:,} tokens")


def not_scored_line(summary: dict) -> Optional[str]:
    """How many conversations of a ConversationBench run are left out of its scores, and why (one
    wording for its own report and the cross-benchmark one, where its row is otherwise dashes)."""
    counts = summary["conversations"]
    left = counts["judge_error"] + counts["not_judged"] + counts["judged_before_replay"] + counts["unfinished"]
    if not left:
        return None
    playing = f" ({summary['being_played_by']} is playing the run now)" if summary.get("being_played_by") else ""
    return (f"{left} conversation(s) not scored{playing} ({counts['unfinished']} unfinished, "
            f"{counts['judge_error']} judge_error, {counts['not_judged']} not judged yet, "
            f"{counts['judged_before_replay']} judged on other answers: played again since, or another run's)")

