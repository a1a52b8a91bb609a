"""A ConversationBench summary -> report.md, a per-dimension plot with intervals and a
category x dimension heatmap."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..convbench.judge.realign import DIMENSIONS
from .folder import one_writer


def _rate(cell: Optional[dict]) -> str:
    if not cell or cell.get("rate") is None:
        return "–"
    return f"{cell['rate']:.3f} [{cell['ci_low']:.3f}, {cell['ci_high']:.3f}] ({cell['passes']}/{cell['n']})"


def _dimensions(scores: dict) -> list[str]:
    return [d for d in DIMENSIONS if d in scores["per_dimension"]]


def plot_dimensions(summary: dict, path: Path) -> Optional[Path]:
    from ihbench.dataset.plotting import pyplot, save_figure

    scores = summary.get("scores")
    if not scores:
        return None
    plt = pyplot()
    names = [d for d in _dimensions(scores) if scores["per_dimension"][d]["applicable"]["rate"] is not None]
    cells = [scores["per_dimension"][d]["applicable"] for d in names] + [scores["pass_rows"]]
    labels = names + ["pass rows"]
    figure, axis = plt.subplots(figsize=(9, 4), constrained_layout=True)
    rates = [c["rate"] or 0.0 for c in cells]
    axis.bar(range(len(cells)), rates, yerr=[[r - c["ci_low"] for r, c in zip(rates, cells)],
                                              [c["ci_high"] - r for r, c in zip(rates, cells)]],
             capsize=4, color=["tab:blue"] * len(names) + ["tab:gray"])
    for x, cell in enumerate(cells):
        axis.text(x, 0.02, f"n={cell['n']}", ha="center", fontsize=8, color="white")
    axis.set_xticks(range(len(cells)), [label.replace("_", "\n") for label in labels], fontsize=8)
    axis.set_ylim(0, 1)
    axis.set_ylabel("pass rate (Wilson 95 % CI)")
    axis.set_title(f"{Path(str(summary['model'])).name} on {summary['benchmark']}: applicable turns")
    return save_figure(figure, path, dpi=100)


def plot_heatmap(summary: dict, path: Path) -> Optional[Path]:
    from ihbench.dataset.plotting import pyplot, save_figure

    scores = summary.get("scores")
    if not scores or not scores.get("per_category"):
        return None
    plt = pyplot()
    import numpy as np

    categories = sorted(scores["per_category"])
    names = _dimensions(scores) + ["pass_rows"]
    grid = np.full((len(categories), len(names)), np.nan)
    for row, category in enumerate(categories):
        entry = scores["per_category"][category]
        for column, name in enumerate(names):
            cell = entry["pass_rows"] if name == "pass_rows" else \
                entry["per_dimension"].get(name, {}).get("applicable")
            if cell and cell.get("rate") is not None:
                grid[row, column] = cell["rate"]
    figure, axis = plt.subplots(figsize=(1.3 * len(names) + 3, 0.4 * len(categories) + 1.8), constrained_layout=True)
    image = axis.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    for row in range(len(categories)):
        for column in range(len(names)):
            if not np.isnan(grid[row, column]):
                axis.text(column, row, f"{grid[row, column]:.2f}", ha="center", va="center", fontsize=7)
    axis.set_xticks(range(len(names)), [n.replace("_", "\n") for n in names], fontsize=8)
    axis.set_yticks(range(len(categories)), categories, fontsize=8)
    axis.set_title("pass rate by category (blank: not scored there)")
    figure.colorbar(image, ax=axis, fraction=0.03)
    return save_figure(figure, path, dpi=100)


def render_convbench_markdown(summary: dict, figures: dict) -> str:
    scores, judge, counts = summary.get("scores"), summary.get("judge"), summary["conversations"]
    note = [f"> **Note:** {summary['note']}", ""] if summary.get("note") else []
    lines = [f"# ConversationBench report: {Path(str(summary['model'])).name} on {summary['benchmark']}", "", *note,
             f"Run `{summary['run']}` ({summary['mode'].replace('_', '-')}, {summary['modality']}, tool results "
             f"{summary['tool_results']}); {summary['n_turns']} turns x {summary['epochs']} epoch(s); category mapping "
             f"{summary['mapping_version']}.", ""]
    lines += [f"Conversations: {counts['finished']} finished, {counts['judged']} judged, {counts['judge_error']} with a "
              f"judge_error, {counts['not_judged']} not judged yet, {counts['judged_before_replay']} judged on "
              f"other answers (played again since, or another run's), {counts['unfinished']} unfinished "
              f"({_why_unfinished(summary)}). Only judged conversations "
              "are scored; the others are never counted as failures: `ihbench run` and `ihbench judge` with the same "
              "options complete them.", ""]
    if judge:
        lines += [f"Judge: {judge['model']}, prompt {judge['prompt_version']} ({judge['prompt_hash']}), context: "
                  f"{', '.join(judge['context'])}; {judge['requests']}. turn_taking: {judge['turn_taking']}.", ""]
    if not scores:
        lines += ["No judged conversation yet: run `ihbench judge` on this run.", ""]
        return "\n".join(lines)
    lines += ["## Pass rates per dimension", "",
              "`applicable`: passes among turns where the dimension is scored (the successor's rule). `all`: the "
              "original's rule, where tool use counts every turn and a turn that expects no call passes.", "",
              "| dimension | applicable [95 % CI] (passes/n) | all [95 % CI] (passes/n) | null |", "|---|---|---|---|"]
    for name in _dimensions(scores):
        cell = scores["per_dimension"][name]
        lines.append(f"| {name} | {_rate(cell['applicable'])} | {_rate(cell.get('all'))} "
                     f"| {scores['nulls'].get(name, 0)} |")
    rows = scores["pass_rows"]
    lines += [f"| **pass rows** (no failing dimension) | {_rate(rows)} | | {rows.get('incomplete', 0)} incomplete |",
              "", "Intervals are Wilson score intervals; with several epochs each (turn, epoch) counts as a draw.", ""]
    if summary["normalised_to_null"]:
        lines += ["Scores the judge gave outside a turn's dimensions, set to null: " + ", ".join(
            f"{d} {n}" for d, n in sorted(summary["normalised_to_null"].items())) + ".", ""]
    if summary.get("round_cap_hits"):
        lines += [f"Turns that reached the tool-round cap (`--max-tool-rounds`) and ended without a final answer, "
                  f"judged as the model left them: {summary['round_cap_hits']}.", ""]
    if summary.get("never_answered"):
        lines += [f"Turns never answered because the model ended the session before them, failed on every "
                  f"dimension they score: {summary['never_answered']}.", ""]
    if summary.get("unscored_expected_calls"):
        lines += [f"Turns that expect a call, with no tool use verdict from the judge, left unscored on it as the "
                  f"reference leaves them: {summary['unscored_expected_calls']}.", ""]
    if summary.get("defaulted_to_false"):
        lines += ["Scores the judge left out, counted false as the reference counts them: " + ", ".join(
            f"{d} {n}" for d, n in sorted(summary["defaulted_to_false"].items())) + ".", ""]
    if figures.get("dimensions"):
        lines += [f"![per dimension]({figures['dimensions'].name})", ""]
    lines += ["## Per epoch", "", "| epoch | pass rows | " + " | ".join(_dimensions(scores)) + " |",
              "|---" * (len(_dimensions(scores)) + 2) + "|"]
    for epoch, entry in sorted(scores["per_epoch"].items(), key=lambda pair: int(pair[0])):
        cells = [entry["per_dimension"].get(d, {}).get("applicable") for d in _dimensions(scores)]
        lines.append(f"| {epoch} | {_short(entry['pass_rows'])} | " + " | ".join(_short(c) for c in cells) + " |")
    if scores.get("pass_hat_k"):
        hat = scores["pass_hat_k"]
        lines += ["", f"pass^{hat['k']} (turns passed in all {hat['k']} epochs): pass rows {_rate(hat['pass_rows'])}; "
                  + "; ".join(f"{d} {_short(c)}" for d, c in hat["per_dimension"].items()) + "."]
    elif scores.get("why_absent", {}).get("pass_hat_k"):
        lines += ["", f"pass^k: {scores['why_absent']['pass_hat_k']}."]
    if scores.get("per_category"):
        lines += ["", "## Per category", "", "| category | pass rows | " + " | ".join(_dimensions(scores)) + " |",
                  "|---" * (len(_dimensions(scores)) + 2) + "|"]
        for category, entry in sorted(scores["per_category"].items()):
            cells = [entry["per_dimension"].get(d, {}).get("applicable") for d in _dimensions(scores)]
            lines.append(f"| {category} | {_short(entry['pass_rows'])} | " + " | ".join(_short(c) for c in cells)
                         + " |")
        if figures.get("heatmap"):
            lines += ["", f"![category x dimension]({figures['heatmap'].name})"]
    latency = summary["latency"]
    lines += ["", "## Latency of the model's turns", "", "| | median (ms) | p90 (ms) | turns |", "|---|---|---|---|"]
    for name, label in (("ttfb", "time to first token"), ("total", "whole turn (tool rounds included)")):
        cell = latency.get(name)
        lines.append(f"| {label} | {cell['median_ms']} | {cell['p90_ms']} | {cell['n']} |" if cell else
                     f"| {label} | – | – | 0 (not recorded: `--option stream=true` records it) |")
    timing = summary.get("reply_timing")
    if timing:
        lines += ["", "## Timing of spoken replies (from the recording)", "",
                  "| epoch | pipeline TTFB (ms, median) | voice-to-voice (ms, median) | silent pad (ms, median) | "
                  "alignment ok | turns failing turn-taking |", "|---|---|---|---|---|---|"]
        for epoch, cell in sorted(timing.items(), key=lambda pair: int(pair[0])):
            lines.append(f"| {epoch} | {_ms(cell['pipeline_ttfb_ms_median'])} | {_ms(cell['wav_v2v_ms_median'])} | "
                         f"{_ms(cell['silent_pad_silero_ms_median'])} | {cell['alignment_ok']} | "
                         f"{', '.join(str(t) for t in cell['failed_turns'] or []) or 'none'} |")
    reference = summary.get("reference_judge")
    if reference:
        lines += ["", "## Agreement with the reference judge", "",
                  f"`{reference['file']}` judges epoch {reference['epoch']} ({reference['turns']} turns); each "
                  "dimension compared where both judges scored it.", "",
                  "| dimension | turns | agreement | Cohen's kappa | passes (ours / reference) | disagreeing turns |",
                  "|---|---|---|---|---|---|"]
        for name, cell in reference["per_dimension"].items():
            if cell is None:
                lines.append(f"| {name} | 0 | – | – | – | – |")
                continue
            kappa = "–" if cell["cohen_kappa"] is None else f"{cell['cohen_kappa']:.3f}"
            lines.append(f"| {name} | {cell['n']} | {cell['agreement']:.3f} | {kappa} | {cell['ours_pass']} / "
                         f"{cell['reference_pass']} | {', '.join(str(t) for t in cell['disagreements']) or 'none'} |")
    lines += ["", f"## Failing turns ({len(summary['failing_turns'])})", ""]
    for turn in summary["failing_turns"][:50]:
        notes = f" Realignment: {'; '.join(turn['notes'])}." if turn["notes"] else ""
        lines.append(f"- epoch {turn['epoch']}, turn {turn['turn']}: {', '.join(turn['failed'])}. "
                     f"{turn['reasoning'][:300]}{notes}")
    if len(summary["failing_turns"]) > 50:
        lines.append(f"- ... {len(summary['failing_turns']) - 50} more in summary.json")
    lines += ["", f"Scores by the `{summary['metric']}` metric module (version {summary['metric_version']})."]
    return "\n".join(lines) + "\n"


def _ms(value) -> str:
    return "–" if value is None else f"{value:.0f}"


def _short(cell: Optional[dict]) -> str:
    return "–" if not cell or cell.get("rate") is None else f"{cell['rate']:.2f} (n={cell['n']})"


@one_writer
def write_convbench_report(summary: dict, out: Path) -> dict[str, Path]:
    from .summary import write_json

    from .folder import FIGURES, begin_report

    begin_report(out)  # known as a report's, should it be stopped before its summary; no earlier report's figures
    figures = {"dimensions": plot_dimensions(summary, out / FIGURES["dimensions"]),
               "heatmap": plot_heatmap(summary, out / FIGURES["heatmap"])}
    write_json(out / "summary.json", summary)
    (out / "report.md").write_text(render_convbench_markdown(summary, figures), encoding="utf-8")
    return {"summary": out / "summary.json", "report": out / "report.md",
            **{k: v for k, v in figures.items() if v is not None}}


def _why_unfinished(summary: dict) -> str:
    writer = summary.get("being_played_by")
    return (f"still being played: {writer}" if writer else
            "stopped before their end: a failed turn, or the run was stopped")
