"""The in-house dev set's hand-written baselines beside the paper's GPT-4o Audio baseline, per type.

A TF win rate is relative to its baseline. The dev set's baselines were written by hand, and they
continue a cut sentence far better than the model the paper used (filler above all), so a TF win
rate on the dev set is measured against another anchor than the paper's. The dataset card and
`ihbench report` show the two baselines' RQ per type side by side from this one module: the card
over the shipped sources, the report over the points a run covered. The RQ arithmetic and its
interval come from the `rq_pass_rate` metric module (`baseline_rq` hands it the verdicts).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ihbench.dataset.schema import INTERRUPTION_TYPES

from ..resources import load_metric
from .paper import PAPER_BASELINE, PAPER_BASELINE_MODEL, paper_baseline, paper_cell

CARD_BEGIN = "<!-- baselines by type (python -m ihbench.report.devset rewrites this block) -->"
CARD_END = "<!-- end baselines by type -->"

NOT_COMPARABLE = ("The dev set's hand-written baselines continue a sentence cut by a filler far better than the "
                  f"paper's baseline model, {PAPER_BASELINE_MODEL} (the filler row), and their pass rates differ by "
                  "type, so TF win rates on the dev set are measured against another anchor and are not comparable "
                  "with the paper's, even where the pass rates over all types agree.")


def baseline_rq(ids: Sequence[str], items: dict, n_bootstrap: int, seed: int) -> Optional[dict]:
    """The baseline's own RQ pass rate on the items this run covered: the anchor its TF is relative to
    (a TF of 0.5 against a baseline that passes 0.3 of the time is not parity with a decent model)."""
    judged = [i for i in ids if items[i].baseline_rq]
    if not judged:
        return None
    return load_metric("rq_pass_rate").compute(predictions=[list(items[i].baseline_rq) for i in judged], item_ids=judged,
                                               interruption_types=[items[i].interruption_type for i in judged],
                                               n_bootstrap=n_bootstrap, seed=seed)


@dataclass(frozen=True)
class _Point:
    """What `baseline_rq` reads of an interruption point, taken from a source file without a build."""

    interruption_type: str
    baseline_rq: Optional[list[bool]]


def source_points(paths: Optional[Sequence] = None) -> dict:
    """{item id: point} of source files (default: the shipped dev set), with the verdicts they record."""
    from ihbench.dataset.schema import item_id
    from ihbench.dataset.sources import load_conversation, source_files

    points = {}
    for path in source_files(paths):
        conversation = load_conversation(path)
        for turn in conversation.interrupted_turns:
            verdicts = turn.interruption.baseline_rq_verdicts
            points[item_id(conversation.conversation_id, turn.number)] = _Point(
                turn.interruption.type, [v.met for v in verdicts] if verdicts else None)
    return points


def sources_baseline_rq(paths: Optional[Sequence] = None, *, n_bootstrap: int = 1000, seed: int = 0) -> Optional[dict]:
    """The baselines' RQ pass rate (overall and per type, with the metric's interval) of source files."""
    points = source_points(paths)
    return baseline_rq(sorted(points), points, n_bootstrap, seed)


def dev_set_of(data: str, *, barge_in: bool = False) -> Optional[dict]:
    """Whether a run's data is a build of the shipped dev set, and whose baselines it holds.

    The marker is the build's conversations, as its data holds them (not the list `build_info.json`
    keeps, which an edit by hand would make claim anything): every one is one of the shipped sources
    (a subset or an earlier edition counts; a generated suite, the official data or a user's own
    sources do not). `baselines` is None while they are the hand-written ones, or what `ihbench
    set-baseline` recorded when a model's responses replaced them. A barge-in run writes its own
    points and baselines, so it is not a run on the dev set's baselines."""
    from ihbench.dataset.builddir import BuildDir
    from ihbench.dataset.errors import IHBenchError
    from ihbench.dataset.load import load_conversations
    from ihbench.dataset.sources import source_files

    folder = Path(data)
    if barge_in or not folder.is_dir() or not BuildDir(folder).is_build():
        return None
    try:
        info = BuildDir(folder).info()
        built = {c.conversation_id for c in load_conversations(str(folder))}
    except (IHBenchError, ValueError, OSError):  # a damaged build: refused by the loader already; no claim
        return None
    shipped = {path.stem for path in source_files()}
    if not built or not built <= shipped:
        return None
    return {"conversations": len(built), "of_shipped": len(shipped), "baselines": info.baselines,
            "paper_baseline": PAPER_BASELINE}


def _cell(result: Optional[dict], n: bool = True) -> str:
    if not result or result.get("rq_pass_rate") is None:
        return "–"
    return (f"{result['rq_pass_rate']:.2f} [{result['ci_low']:.2f}, {result['ci_high']:.2f}]"
            + (f" (n={result['n_items']})" if n else ""))


def by_type_table(baseline: Optional[dict], *, run: Optional[dict] = None, run_label: str = "this run",
                  baseline_label: str = "dev-set baseline") -> list[str]:
    """Markdown rows: per type and overall, the run's RQ (when given), the dev-set baseline's RQ and
    the paper's baseline RQ (Table 4 per type, Table 1 overall), each with its 95 % interval."""
    per_type, paper = (baseline or {}).get("per_type", {}), paper_baseline("table4")
    run_types = (run or {}).get("per_type", {})
    head = ["type"] + ([f"{run_label} RQ [95 % CI]"] if run is not None else []) + \
        [f"{baseline_label} RQ [95 % CI]", f"paper: {PAPER_BASELINE} RQ ± CI"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for kind in INTERRUPTION_TYPES:
        cells = [kind] + ([_cell(run_types.get(kind))] if run is not None else []) + \
            [_cell(per_type.get(kind)), paper_cell(paper[kind], paper[kind + "_ci"])]
        lines.append("| " + " | ".join(cells) + " |")
    overall = paper_baseline("table1")
    cells = ["all types"] + ([_cell(run)] if run is not None else []) + \
        [_cell(baseline), paper_cell(overall["rq_pass_rate"], overall["rq_ci_halfwidth"])]
    lines.append("| " + " | ".join(f"**{c}**" for c in cells) + " |")
    return lines


def run_warning(run: dict, label: str) -> Optional[str]:
    """What a report says above the scores of a run on the dev set (None for other data)."""
    dev = run.get("dev_set")
    if not dev:
        return None
    where = (f"{label} ran on the in-house dev set (a build of {dev['conversations']} of the {dev['of_shipped']} "
             "shipped conversations; the run's own items are counted in the table)")
    if dev.get("baselines"):
        return (f"{where} with its baselines replaced by `ihbench set-baseline`: its TF win rate is against that "
                f"model ({dev['baselines'].rstrip('.')}), comparable with the paper's only if it is the paper's "
                f"{PAPER_BASELINE_MODEL} run as the paper ran it.")
    return (f"{where}: its TF win rate is against the dev set's hand-written baselines, not the paper's "
            f"{PAPER_BASELINE_MODEL}. {NOT_COMPARABLE} RQ per type beside both baselines: the table under "
            "\"Against the dev set's hand-written baselines\".")


def run_console_line(run: dict, label: str) -> Optional[str]:
    """The same warning for the terminal, with the per-type numbers on one line."""
    dev = run.get("dev_set")
    if not dev or dev.get("baselines"):
        return run_warning(run, label)
    ours = (run.get("rq_pass_rate") or {}).get("per_type", {})
    theirs = (run.get("baseline_rq_pass_rate") or {}).get("per_type", {})
    paper = paper_baseline("table4")

    def value(result):
        return "–" if not result else f"{result['rq_pass_rate']:.2f}"

    cells = "; ".join(f"{kind} {value(ours.get(kind))} / {value(theirs.get(kind))} / {float(paper[kind]):.2f}"
                      for kind in INTERRUPTION_TYPES)
    return (f"{label} ran on the in-house dev set: TF win rates there are against hand-written baselines and not "
            f"comparable with the paper's. RQ by type, this run / dev-set baseline (same items) / paper's "
            f"{PAPER_BASELINE_MODEL}: {cells}")


def differences(baseline: Optional[dict]) -> str:
    """Which types the dev-set baseline passes more or less often than the paper's, beyond the paper's
    interval: said from the numbers, so the sentence stays true when the data changes."""
    per_type, paper = (baseline or {}).get("per_type", {}), paper_baseline("table4")
    above, below = [], []
    for kind in INTERRUPTION_TYPES:
        if kind in per_type:
            ours, theirs, width = per_type[kind]["rq_pass_rate"], float(paper[kind]), float(paper[kind + "_ci"])
            (above if ours > theirs + width else below if ours < theirs - width else []).append(kind)
    parts = [f"{', '.join(kinds)} points {how} often" for kinds, how in ((above, "more"), (below, "less")) if kinds]
    if not parts:
        return "By type, the dev-set baselines pass within the interval of the paper's baseline."
    return ("By type, the dev-set baselines pass " + " and ".join(parts) + " than the paper's baseline (outside its "
            "interval): a model's TF on those types is measured against a stronger or a weaker opponent than in the "
            "paper.")


def card_block(paths: Optional[Sequence] = None) -> str:
    """The card's section, computed from the sources: what a test compares the card against."""
    result = sources_baseline_rq(paths)
    return "\n".join([
        CARD_BEGIN,
        f"RQ pass rate (all of a point's criteria met) of the {result['n_items'] if result else 0} hand-written "
        "baselines, from their recorded verdicts (`baseline_rq_verdicts`), per interruption type, with the 95 % "
        f"percentile-bootstrap interval of the `rq_pass_rate` metric module; beside it the paper's baseline, "
        f"{PAPER_BASELINE_MODEL} (its Table 4 per type, Table 1 overall):",
        "",
        *by_type_table(result),
        "",
        NOT_COMPARABLE + " " + differences(result),
        CARD_END,
    ]) + "\n"


def refresh_card(path: Path, paths: Optional[Sequence] = None) -> bool:
    """Rewrite the card's block from the sources; True when it changed."""
    text = Path(path).read_text(encoding="utf-8")
    start, end = text.index(CARD_BEGIN), text.index(CARD_END) + len(CARD_END) + 1
    new = text[:start] + card_block(paths) + text[end:]
    if new != text:
        Path(path).write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":  # after editing the sources: python -m ihbench.report.devset
    from ihbench.dataset.card import TEMPLATE

    print(f"{TEMPLATE}: {'rewritten' if refresh_card(TEMPLATE) else 'unchanged'}")
