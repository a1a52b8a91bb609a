"""The cross-benchmark report on disk: report.md, summary.json, the correlation heatmap.

When IHBench runs are among the inputs, their full single-benchmark report (per type, depth,
diagnostics, paper tables) follows the cross-benchmark tables, rendered by `render.py` itself.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import UsageError

from ..summaries import CrossSummary
from .benchmark_runs import BENCHMARKS
from .convbench_summary import not_scored_line
from .folder import one_writer
from .markdown import cell as md_cell

ARROWS = {"higher": " ↑", "lower": " ↓", None: ""}


def _number(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.3f}"


def _cell(cell: dict) -> str:
    """Value [CI] where the benchmark gives an interval; "–" where the model has no such run."""
    if cell["value"] is None:
        return "–"
    if cell.get("ci_low") is None or cell.get("ci_high") is None:
        return _number(cell["value"])
    return f"{cell['value']:.3f} [{cell['ci_low']:.3f}, {cell['ci_high']:.3f}]"


def _labels(metrics: list[dict]) -> dict[str, str]:
    return {m["key"]: m["label"] for m in metrics}


def plot_correlations(report: dict, path: Path) -> Optional[Path]:
    """Heatmap of Spearman's rho between metrics (the paper's Figure 5 layout); a cell without a
    rho (too few models with both, or no ranking) is left grey and marked."""
    import numpy as np

    from ihbench.dataset.plotting import pyplot, save_figure

    correlations = report["correlations"]
    pairs = correlations["pairs"]
    if not any(p["rho"] is not None for p in pairs):
        return None
    keys = list(correlations["mean_rho"])
    labels = _labels(report["metrics"])
    index = {key: i for i, key in enumerate(keys)}
    matrix = np.full((len(keys), len(keys)), np.nan)
    counts = np.zeros((len(keys), len(keys)), dtype=int)
    np.fill_diagonal(matrix, 1.0)
    for pair in pairs:
        i, j = index[pair["a"]], index[pair["b"]]
        counts[i, j] = counts[j, i] = pair["n"]
        if pair["rho"] is not None:
            matrix[i, j] = matrix[j, i] = pair["rho"]
    plt = pyplot()
    size = 1.6 + 0.95 * len(keys)
    figure, axis = plt.subplots(figsize=(size + 1.2, size), constrained_layout=True)
    colormap = plt.get_cmap("RdBu_r").with_extremes(bad="#dddddd")
    image = axis.imshow(np.ma.masked_invalid(matrix), cmap=colormap, vmin=-1, vmax=1)
    for i in range(len(keys)):
        for j in range(len(keys)):
            if i == j:
                continue
            text = "–" if np.isnan(matrix[i, j]) else f"{matrix[i, j]:+.2f}"
            axis.text(j, i, f"{text}\nn={counts[i, j]}", ha="center", va="center", fontsize=8,
                      color="white" if abs(np.nan_to_num(matrix[i, j])) > 0.6 else "black")
    names = [labels[k] for k in keys]
    axis.set_xticks(range(len(keys)), names, rotation=40, ha="right", fontsize=8)
    axis.set_yticks(range(len(keys)), names, fontsize=8)
    axis.set_title(f"Spearman rank correlation across {correlations['n_models']} models")
    figure.colorbar(image, ax=axis, shrink=0.8, label="ρ")
    return save_figure(figure, path, dpi=100, metadata={"Software": None})


def render_cross_markdown(report: dict, figures: dict[str, Optional[Path]]) -> str:
    metrics, models, correlations = report["metrics"], report["models"], report["correlations"]
    labels = _labels(metrics)
    lines = ["# Cross-benchmark report", "",
             f"{len(models)} model(s). IHBench gives TF and RQ (95 % item-bootstrap CIs from the metric modules); "
             f"SID-Bench gives FIR, IRL and APT ({report['sid_definition']} definition; SID-Bench reports no "
             "intervals); turn-taking (`ihbench turns`) gives the judge-free timing figures with their CIs. "
             "↑ / ↓: which direction is better. – : the model has no run of that benchmark.", "",
             "## Scores per model", "",
             "| model | " + " | ".join(m["label"] + ARROWS[m["better"]] for m in metrics) + " |",
             "|---" * (len(metrics) + 1) + "|"]
    for model in models:
        scores = " | ".join(_cell(model["metrics"][m["key"]]) for m in metrics)
        lines.append(f"| **{md_cell(model['model'])}** | {scores} |")
    for model in models:
        lines += ["", f"### {md_cell(model['model'])}", "", "| metric | value | 95 % CI | n | run |",
                  "|---|---|---|---|---|"]
        for metric in metrics:
            cell = model["metrics"][metric["key"]]
            interval = "–" if cell.get("ci_low") is None else f"[{cell['ci_low']:.3f}, {cell['ci_high']:.3f}]"
            n = "–" if cell.get("n") is None else f"{cell['n']} {cell.get('unit', '')}".strip()
            lines.append(f"| {metric['label']} | {_number(cell['value'])} | {interval} | {n} | "
                         f"{md_cell(cell.get('run', '–'))} |")

    lines += ["", "## Rank correlations across models (Spearman)", ""]
    if correlations["note"]:
        lines.append(correlations["note"])
    else:
        lines += [f"Over the {correlations['n_models']} models, each pair on the models that have both (n). "
                  "Correlations are of raw values (for a ↓ metric, a negative ρ with a ↑ metric means both favour "
                  "the same models). p-values are two-sided permutation tests: exact over every ordering for up to seven "
                  "models, else 9,999 seeded random orderings (the t-approximation is far off for a handful of "
                  "models).", "",
                  "| metric | metric | ρ | p-value | n (models) |", "|---|---|---|---|---|"]
        for pair in correlations["pairs"]:
            rho = pair["reason"] if pair["rho"] is None else f"{pair['rho']:+.3f}"
            p = "–" if pair["p_value"] is None else f"{pair['p_value']:.3g}"
            lines.append(f"| {labels[pair['a']]} | {labels[pair['b']]} | {rho} | {p} | {pair['n']} |")
        lines += ["", "Mean correlation of each metric with the others (the paper's Section 5.5: the lowest marks "
                  "the most distinct capability axis): " + ", ".join(
                      f"{labels[k]} {'–' if v is None else format(v, '+.3f')}" for k, v in correlations["mean_rho"].items())
                  + "."]
        if figures.get("correlations"):
            lines += ["", f"![Rank correlations]({figures['correlations'].name})"]

    lines += _agreement_markdown(report["runs"])
    lines += ["", "## Runs", ""]
    for run in report["runs"]:
        details = "; ".join(f"{k} {v}" for k, v in run["details"].items() if v is not None)
        left = not_scored_line(run) if run["kind"] == "convbench" else None
        lines.append(f"- {md_cell(run['model'])} ({BENCHMARKS[run['kind']]}, named by {run['named_by']}): "
                     f"{md_cell(run['run'])}"
                     + (f" — {details}" if details else "")
                     + (f". **{left}**: only judged conversations are scored" if left else ""))
    return "\n".join(lines) + "\n"


def _agreement_markdown(runs: list[dict]) -> list[str]:
    """Talking Turns agreement of the turns runs that had a judge, one row per decision class; a
    metric the judge does not speak to is a row saying so, never a number."""
    lines = []
    for run in runs:
        agreement = run.get("agreement")
        if not agreement:
            continue
        model = agreement.get("judge_model")
        judge = (f"{model['judge']} (pipecat-ai {model['pipecat_ai']}, model sha256 {model['sha256'][:12]}, "
                 f"P(turn end) > {model['threshold']:g})" if model else agreement["judge"])
        lines += ["", f"## Turn-taking agreement ({run['model']})", "",
                  f"Judge: {judge}; {agreement['n_recordings']} recording(s), metric module "
                  f"`{agreement['metric']}` {agreement['metric_version']}. Agreement is the share of the system's "
                  "decisions of each class the judge agrees with (95 % Wilson CI).", "",
                  "| metric | decision | agreement | 95 % CI | n |", "|---|---|---|---|---|"]
        for name, result in agreement["metrics"].items():
            if "not_covered" in result:
                lines.append(f"| {name} | not covered | {result['not_covered']} | | |")
                continue
            for decision, cell in result.items():
                if isinstance(cell, dict):
                    interval = "–" if cell["ci_low"] is None else f"[{cell['ci_low']:.3f}, {cell['ci_high']:.3f}]"
                    lines.append(f"| {name} | {decision} | {_number(cell['agreement'])} | {interval} | {cell['n']} |")
        single = agreement["single_label"]
        if "not_covered" in single:
            lines.append(f"| single-label evaluation | not covered | {single['not_covered']} | | |")
        elif single.get("macro_f1") is not None:
            lines.append(f"| single-label evaluation | macro F1 | {single['macro_f1']:.3f} | – | {single['n_chunks']} |")
    return lines


def check_out(out: Path, run_dirs) -> None:
    """The report never writes into a folder it reads: that run's own summary.json would be lost."""
    if Path(out).resolve() in {Path(d).resolve() for d in run_dirs}:
        raise UsageError(f"--out: {out} is one of the runs being reported; its own files would be overwritten, "
                         "so give another folder")


@one_writer
def write_cross_report(summary: CrossSummary, out: Path) -> dict[str, Path]:
    """report.md, summary.json, correlations.png; with IHBench runs also per_type.png and depth.png."""
    from .render import plot_depth, plot_per_type, render_markdown
    from .summary import write_json

    report = summary.to_json()  # rendered from what summary.json holds
    out = Path(out)
    check_out(out, [Path(r["run"]) for r in report["runs"]])
    from .folder import FIGURES, begin_report

    begin_report(out)  # known as a report's, should it be stopped before its summary; no earlier report's figures
    figures = {"correlations": plot_correlations(report, out / FIGURES["correlations"])}
    text = render_cross_markdown(report, figures)
    if report.get("ihbench"):
        ihbench_figures = {"per_type": plot_per_type(report["ihbench"], out / FIGURES["per_type"]),
                           "depth": plot_depth(report["ihbench"], out / FIGURES["depth"])}
        figures.update(ihbench_figures)
        detail = render_markdown(report["ihbench"], ihbench_figures)
        text += "\n" + "\n".join("#" + line if line.startswith("#") else line for line in detail.splitlines()) + "\n"
    write_json(out / "summary.json", report)
    (out / "report.md").write_text(text, encoding="utf-8")
    return {"summary": out / "summary.json", "report": out / "report.md",
            **{k: v for k, v in figures.items() if v is not None}}


def cross_stdout(report: CrossSummary) -> list[str]:
    """One line per model, then what became of the correlations."""
    labels = _labels(report.metrics)
    lines = []
    for model in report.models:
        shown = [f"{labels[k]} {_cell(c)}" for k, c in model["metrics"].items() if c["value"] is not None]
        lines.append(f"{model['model']}: " + ("; ".join(shown) or "no figures"))
    for run in report.runs:
        if run.get("agreement"):
            shown = [f"{name} not covered" if "not_covered" in result else
                     f"{name} " + ", ".join(f"{k} {_number(v['agreement'])} (n={v['n']})"
                                            for k, v in result.items() if isinstance(v, dict))
                     for name, result in run["agreement"]["metrics"].items()]
            lines.append(f"{run['model']} turn-taking agreement ({run['agreement']['judge']}): " + "; ".join(shown))
    correlations = report.correlations
    if correlations["note"]:
        lines.append(correlations["note"])
    else:
        done = sum(p["rho"] is not None for p in correlations["pairs"])
        lines.append(f"Spearman correlations over {correlations['n_models']} models: {done} of "
                     f"{len(correlations['pairs'])} metric pairs computed")
    return lines
