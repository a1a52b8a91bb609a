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

from ..convbench.judge.realign import DIMENSIONS
from ..convbench.judge.run import conversations_of, read_conv_judgments
from ..resources import load_metric
from ..rundir import RunDir, RunDirError, read_typed

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


def summarize_convbench(run_dir: Path, *, judgments: Optional[Path] = None) -> dict:
    from ihbench.dataset.convbench import load_benchmark

    from ..convbench.records import TurnRecord
    from ..convbench.run import benchmark_hash
    from .summary import metric_version

    run = RunDir(run_dir)
    info = run.info()
    benchmark = load_benchmark(info.data, info.config)
    if benchmark_hash(benchmark) != info.convbench.get("benchmark_hash"):
        raise RunDirError(f"{run.path}: {info.data} [{info.config}] changed since this run played it; its turns "
                          "cannot be scored against the benchmark as it is now")
    conversations, unfinished, targets = conversations_of(run, info, benchmark)
    path = Path(judgments) if judgments else (run.judgment_files() or [run.judgments_path()])[0]
    latest = read_conv_judgments(path) if path.exists() else {}
    current = {c.epoch: c.digest for c in conversations}
    judged, errors, stale, not_judged = [], set(), set(), set()
    for conversation in conversations:
        records = [latest.get((conversation.epoch, t)) for t in targets]
        if any(r is None for r in records):
            not_judged.add(conversation.epoch)
        elif any(r.conversation_hash != current[conversation.epoch] for r in records):
            stale.add(conversation.epoch)
        elif any(not r.judged for r in records):
            errors.add(conversation.epoch)
        else:
            judged += records
    scores = None
    if judged:
        scores = load_metric(METRIC).compute(**convbench_rows(benchmark, judged))
    first = judged[0] if judged else None
    played = [r for r in read_typed(run.responses_path, TurnRecord) if r.status in ("answered", "ended_session")
              and r.epoch in {record.epoch for record in judged}]
    normalised = {}
    for record in judged:
        for dimension in record.normalised:
            normalised[dimension] = normalised.get(dimension, 0) + 1
    failing = [{"epoch": r.epoch, "turn": r.turn, "failed": [d for d, v in r.scores.items() if v is False],
                "reasoning": r.reasoning, "notes": r.notes} for r in judged if False in r.scores.values()]
    return {
        "kind": "convbench", "run": str(run.path), "model": info.model_path, "loader": info.loader,
        "modality": info.modality, "data": info.data, "config": info.config, "benchmark": benchmark.name,
        "mapping_version": benchmark.mapping_version, "mode": "rehydrated" if info.convbench.get("rehydrate")
        else "on_policy", "tool_results": info.convbench.get("tool_results"),
        "n_turns": len(targets), "epochs": info.epochs,
        "conversations": {"finished": len(conversations), "unfinished": unfinished, "judged": len({r.epoch for r in judged}),
                          "judge_error": len(errors), "not_judged": len(not_judged),
                          "judged_before_replay": len(stale)},
        "judge": None if first is None else {
            "file": str(path), "model": first.judge_model, "prompt_version": first.prompt_version,
            "prompt_hash": first.prompt_hash, "context": first.judge_context or ["none (as the original)"],
            "requests": _plan(first), "turn_taking": "from the recording" if first.turn_taking_supported else
            "not measured: no recording (text or audio-in run)"},
        "scores": scores, "metric": METRIC, "metric_version": metric_version(METRIC),
        "normalised_to_null": normalised,
        "realigned_turns": sum(1 for r in judged if any(not n.startswith("rehydrated") for n in r.notes)),
        "latency": {"ttfb": _percentiles([r.ttfb_s for r in played if r.ttfb_s is not None]),
                    "total": _percentiles([r.latency_s for r in played])},
        "failing_turns": failing,
        "turns": [{"epoch": r.epoch, "turn": r.turn, "scores": r.scores} for r in judged],
    }


def _plan(record) -> str:
    if record.windows == 1:
        return (f"whole conversation in one request (about {record.request_tokens:,} tokens; the judge's context "
                f"{record.context_tokens:,})")
    return (f"{record.windows} windows per conversation: the whole conversation did not fit the judge's context of "
            f"{record.context_tokens:,} tokens")
