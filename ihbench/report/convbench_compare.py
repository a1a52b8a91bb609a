"""Our ConversationBench judge beside the reference's, on the same transcript: per-dimension
agreement and Cohen's kappa. This is how a user checks that our numbers mean what the
leaderboard's mean before comparing a model with it.

The reference judge writes `<judge>_judged.jsonl`: each transcript line plus `scores` (the six
dimensions, true, false or null). The file is matched to one of the run's conversations by its
turns and assistant texts (a file of another transcript is refused), and each dimension is
compared on the turns where both judges gave a verdict.
"""
from __future__ import annotations

from pathlib import Path

from ihbench.dataset.errors import UsageError

from .. import stats
from ..convbench.judge.realign import DIMENSIONS


def read_reference_judged(path: Path) -> dict[int, dict]:
    """turn -> {"assistant_text", "scores"} of a reference judge's `*_judged.jsonl`."""
    from ihbench.dataset.io import json_lines

    path = Path(path)
    if not path.exists():
        raise UsageError(f"--compare-judge: {path}: no such file")
    rows, lines = {}, {}
    # the one reader of hand-made JSON lines: a pipe or device, bad UTF-8, a key twice, JSON nested too deep
    for number, row in json_lines(path, UsageError, where="--compare-judge: {path} line {number}"):
        turn, scores = row.get("turn") if isinstance(row, dict) else None, row.get("scores") if isinstance(
            row, dict) else None
        if not isinstance(turn, int) or isinstance(turn, bool) or not isinstance(scores, dict):
            raise UsageError(f"--compare-judge: {path} line {number}: not a judged turn (needs `turn` and `scores`, "
                             "as the reference judge's *_judged.jsonl has)")
        unknown = sorted(set(scores) - set(DIMENSIONS))
        if unknown:  # a dimension misspelled (or of another harness) would be compared on nothing, silently
            raise UsageError(f"--compare-judge: {path} line {number}: scores.{unknown[0]} is not a dimension of the "
                             f"benchmark ({', '.join(DIMENSIONS)})")
        for name, value in scores.items():
            if value is not None and not isinstance(value, bool):
                raise UsageError(f"--compare-judge: {path} line {number}: scores.{name} must be true, false or null")
        if turn in rows:  # a judged transcript scores each turn once: which line would count?
            raise UsageError(f"--compare-judge: {path} line {number}: turn {turn} again (also line {lines[turn]}); a "
                             "judged transcript scores each turn once")
        rows[turn], lines[turn] = {"assistant_text": row.get("assistant_text"), "scores": scores}, number
    if not rows:
        raise UsageError(f"--compare-judge: {path}: no judged turns")
    if not any(row["scores"] for row in rows.values()):
        raise UsageError(f"--compare-judge: {path}: no turn has a score (every `scores` is empty)")
    return rows


def compare_judges(source, judged: list, path: Path) -> dict:
    """`judged`: our judged records (ConvJudgmentRecord) of `source`'s conversations."""
    reference = read_reference_judged(path)
    ours_by_epoch: dict[int, dict] = {}
    for record in judged:
        ours_by_epoch.setdefault(record.epoch, {})[record.turn] = record
    match = None
    for conversation in source.conversations:
        lines = conversation.records
        if set(reference) <= set(lines) and all(
                reference[t]["assistant_text"] in (None, lines[t].get("assistant_text")) for t in reference):
            match = conversation.epoch
            break
    if match is None:
        raise UsageError(f"--compare-judge: {path} judges another transcript: its turns and replies match none of "
                         f"{source.path}'s conversations")
    ours = ours_by_epoch.get(match)
    if not ours:
        raise UsageError(f"--compare-judge: the matching conversation (epoch {match}) of {source.path} is not judged "
                         "yet; run `ihbench judge` first")
    result = {"file": str(path), "epoch": match, "turns": len(reference), "per_dimension": {}}
    for dimension in DIMENSIONS:
        pairs = [(ours[t].scores.get(dimension), reference[t]["scores"].get(dimension), t) for t in sorted(reference)
                 if t in ours]
        both = [(a, b, t) for a, b, t in pairs if a is not None and b is not None]
        if not both:
            result["per_dimension"][dimension] = None
            continue
        left, right = [a for a, _, _ in both], [b for _, b, _ in both]
        result["per_dimension"][dimension] = {
            "n": len(both), "agreement": sum(a == b for a, b in zip(left, right)) / len(both),
            "cohen_kappa": stats.cohen_kappa(left, right),
            "ours_pass": sum(left), "reference_pass": sum(right),
            "disagreements": [t for a, b, t in both if a != b],
            "scored_by_one_only": sum((a is None) != (b is None) for a, b, _ in pairs)}
    return result
