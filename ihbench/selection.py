"""Which interruption points a run answers (`--types`, `--limit`) and the fingerprint of their
content run.json records: what a resume, a report and a moved dataset are checked against."""
from __future__ import annotations

import hashlib
from typing import Optional, Sequence

from ihbench.dataset.errors import IHBenchError
from ihbench.dataset.schema import EvalItem, canonical_interruption_type


class RunConfigError(IHBenchError, ValueError):
    pass


class PickedItemsError(RunConfigError):
    """run.json's item_ids name points the data does not hold."""


def items_fingerprint(items: Sequence[EvalItem]) -> str:
    digest = hashlib.sha256()
    for item in items:
        for part in (item.id, item.interrupted.delivered, item.interruption.transcript, item.rubric.tf,
                     *item.rubric.rq, item.baseline or ""):
            digest.update(part.encode("utf-8") + b"\x1f")
    return digest.hexdigest()[:16]


def select_items(items: list[EvalItem], types: Optional[Sequence[str]], limit: Optional[int]) -> list[EvalItem]:
    if types:
        wanted = {canonical_interruption_type(t) for t in types}
        items = [item for item in items if item.interruption_type in wanted]
    if limit is not None:
        if limit < 1:
            raise RunConfigError(f"--limit: must be >= 1, got {limit}")
        items = items[:limit]
    if not items:
        raise RunConfigError("no interruption points selected (check --types and --limit)")
    return items


def run_selection(items: Sequence[EvalItem], info) -> list[EvalItem]:
    """The points a run answers among the data's `items`, by what its run.json records: the ids a caller
    handed it (the Space's picks), else --types and --limit. The one rule every check of a run's items
    (its fingerprint, a moved dataset, answers outside it) reads."""
    if info.item_ids is not None:
        by_id = {item.id: item for item in items}
        missing = [i for i in info.item_ids if i not in by_id]
        if missing:  # edited by hand, or the data is another now: its answers are not to be read as gone
            raise PickedItemsError(f"item_ids names {len(missing)} point(s) the data does not have (e.g. "
                                   f"{missing[0]}): edited by hand, or the data changed since the run")
        return [by_id[i] for i in info.item_ids]
    return select_items(list(items), info.types, info.limit)
