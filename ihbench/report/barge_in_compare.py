"""A model's recovery from its own sentence beside its recovery from a scripted one (issue 29).

`ihbench report STATIC_RUN BARGE_IN_RUN`: for each barge-in run and each static run of the same
model (loader and model) in the report, per interruption type, the barge-in run's RQ pass rate
minus the static run's, with the interval the metric module computes (`rq_pass_rate`'s
`compare_predictions`: the on-policy points are other items than the suite's, so the two runs are
resampled independently, not in pairs). Each run is labelled with the suite it ran on (its data and
the fingerprint its run.json records), so a comparison across suite versions is seen as one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..resources import load_metric
from ..rundir import RunDir


def pairs(runs: list[dict]) -> list[tuple[dict, dict]]:
    """(static run, barge-in run) summaries of the same model, in the report's order."""
    return [(static, live) for live in runs if live.get("barge_in")
            for static in runs if not static.get("barge_in")
            and (static["loader"], static["model"]) == (live["loader"], live["model"])]


def suite_label(run: dict) -> str:
    """The suite a run ran on: its data folder's name and the fingerprint of what it read."""
    return f"{Path(str(run['data'])).name}@{str(run.get('data_fingerprint'))[:8]}"


def _rq_rows(run_dir: Path) -> tuple[list, list, list]:
    """(criteria verdicts, item ids, types) of a run's judged RQ verdicts (first judgments file)."""
    run = RunDir(run_dir)
    _, responses, items = run.load()
    files = run.judgment_files()
    rows = [j for j in (run.judgments(files[0], responses=responses) if files else []) if j.axis == "rq" and j.judged]
    return [j.criteria for j in rows], [j.id for j in rows], [items[j.id].interruption_type for j in rows]


def compare(static: dict, live: dict, *, n_bootstrap: int, seed: int) -> Optional[dict]:
    """The comparison of one pair, or None when either run has no judged RQ verdict yet."""
    mine, theirs = _rq_rows(Path(live["run"])), _rq_rows(Path(static["run"]))
    if not mine[0] or not theirs[0]:
        return None
    result = load_metric("rq_pass_rate").compute(
        predictions=mine[0], item_ids=mine[1], interruption_types=mine[2], compare_predictions=theirs[0],
        compare_item_ids=theirs[1], compare_interruption_types=theirs[2], n_bootstrap=n_bootstrap, seed=seed)
    return {"static_run": static["run"], "barge_in_run": live["run"], "static_suite": suite_label(static),
            "barge_in_suite": suite_label(live), "difference": result["difference"]}


def render(comparisons: list[dict], runs: list[dict], figure: Optional[Path]) -> list[str]:
    """report.md's section: per type, both rates and the difference with its interval."""
    from ihbench.dataset.schema import INTERRUPTION_TYPES

    by_path = {run["run"]: run for run in runs}
    lines = []
    for pair in comparisons:
        static, live = by_path[pair["static_run"]], by_path[pair["barge_in_run"]]
        lines += ["", f"## Recovery from its own sentence vs a scripted one ({Path(str(live['model'])).name})", "",
                  f"Barge-in run {pair['barge_in_run']} (suite {pair['barge_in_suite']}) minus static run "
                  f"{pair['static_run']} (suite {pair['static_suite']}): RQ pass rate per type, the difference "
                  "with its 95 % bootstrap interval (the two runs' items resampled independently: they are "
                  "different points).", "",
                  "| type | static RQ (n) | barge-in RQ (n) | barge-in − static [95 % CI] |", "|---|---|---|---|"]
        rates = [(run.get("rq_pass_rate") or {}).get("per_type", {}) for run in (static, live)]
        rows = [("all", [(run.get("rq_pass_rate") or {}) for run in (static, live)], pair["difference"])]
        rows += [(kind, [r.get(kind) for r in rates], pair["difference"].get("per_type", {}).get(kind))
                 for kind in INTERRUPTION_TYPES if any(r.get(kind) for r in rates)]
        for kind, (a, b), d in rows:
            cells = ["–" if not x else f"{x['rq_pass_rate']:.2f} (n={x['n_items']})" for x in (a, b)]
            diff = "–" if not d else (f"{d['rq_pass_rate_difference']:+.2f} [{d['ci_low']:+.2f}, "
                                      f"{d['ci_high']:+.2f}]")
            lines.append(f"| {kind} | {cells[0]} | {cells[1]} | {diff} |")
    if figure and lines:
        lines += ["", f"![Barge-in vs static]({figure.name})"]
    return lines


def plot(comparisons: list[dict], runs: list[dict], path: Path) -> Optional[Path]:
    """Both runs' RQ per type (95 % CIs) for each pair, and the difference with its interval."""
    if not comparisons:
        return None
    from ihbench.dataset.plotting import plot_text, pyplot, save_figure
    from ihbench.dataset.schema import INTERRUPTION_TYPES

    plt = pyplot()
    by_path = {run["run"]: run for run in runs}
    figure, axes = plt.subplots(len(comparisons), 2, figsize=(12, 3.5 * len(comparisons)), squeeze=False,
                                constrained_layout=True)
    for (rates_axis, diff_axis), pair in zip(axes, comparisons):
        for offset, (key, name) in enumerate((("static_run", "static"), ("barge_in_run", "barge-in"))):
            per_type = (by_path[pair[key]].get("rq_pass_rate") or {}).get("per_type", {})
            kinds = [k for k in INTERRUPTION_TYPES if k in per_type]
            values = [per_type[k]["rq_pass_rate"] for k in kinds]
            errors = [[v - per_type[k]["ci_low"] for k, v in zip(kinds, values)],
                      [per_type[k]["ci_high"] - v for k, v in zip(kinds, values)]]
            suite = pair["static_suite" if key == "static_run" else "barge_in_suite"]
            rates_axis.bar([INTERRUPTION_TYPES.index(k) + 0.4 * offset for k in kinds], values, 0.4, yerr=errors,
                           capsize=3, label=plot_text(f"{name} ({suite})"))
        rates_axis.set_xticks([p + 0.2 for p in range(len(INTERRUPTION_TYPES))], INTERRUPTION_TYPES, fontsize=8)
        rates_axis.set_ylim(0, 1)
        rates_axis.set_ylabel("RQ pass rate (95 % CI)")
        rates_axis.legend(fontsize=8)
        differences = pair["difference"].get("per_type", {})
        kinds = list(differences)
        values = [differences[k]["rq_pass_rate_difference"] for k in kinds]
        diff_axis.errorbar(range(len(kinds)), values, fmt="o", capsize=4,
                           yerr=[[v - differences[k]["ci_low"] for k, v in zip(kinds, values)],
                                 [differences[k]["ci_high"] - v for k, v in zip(kinds, values)]])
        diff_axis.axhline(0, color="grey", linewidth=0.8)
        diff_axis.set_xticks(range(len(kinds)), kinds, fontsize=8)
        diff_axis.set_ylim(-1, 1)
        diff_axis.set_ylabel("barge-in − static (95 % CI)")
        diff_axis.set_title(Path(str(by_path[pair["barge_in_run"]]["model"])).name, fontsize=9)
    return save_figure(figure, path, dpi=100)
