"""summary.json -> report.md and plots, with the paper's Table 1 and Table 4 rows beside."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from ihbench.dataset.schema import DEPTH_BINS, INTERRUPTION_TYPES

from ..summaries import SEALED_FIGURES, ReportSummary, seal
from .barge_in_compare import plot as plot_barge_in_vs_static
from .barge_in_compare import render as render_barge_in_vs_static
from .devset import NOT_COMPARABLE, by_type_table, differences, run_warning
from .folder import one_writer
from .markdown import cell as md_cell
from .paper import paper_cell as _paper
from .paper import paper_model as _paper_model
from .paper import paper_table


def _fmt(result: Optional[dict], key: str) -> str:
    if not result or result.get(key) is None:
        return "–"
    return f"{result[key]:.3f} [{result['ci_low']:.3f}, {result['ci_high']:.3f}]"


def _not_judged(run: dict) -> str:
    waiting = run.get("not_judged") or {}  # summaries written before it was counted have none
    return f"{waiting.get('tf', 0)}/{waiting.get('rq', 0)}"


def _heard(run: dict) -> str:
    """The user turns the model heard as audio, beside its scores (`summary.heard_as_audio`)."""
    heard = run.get("history_audio")  # summaries written before it was recorded have none
    if not heard:
        return "–"
    if heard["setting"] == "text" or "audio_turns_mean" not in heard:
        return heard["setting"]
    if heard["all_audio"] == heard["n"]:
        return f"all ({heard['setting']})"
    return (f"{heard['audio_turns_mean']:.1f} of {heard['user_turns_mean']:.1f} user turns, all in "
            f"{heard['all_audio']}/{heard['n']} answers ({heard['setting']})")


def _mixed_hearing(runs: list[dict]) -> Optional[str]:
    """Runs that heard different parts of the history as audio, said above their scores."""
    heard = [(run["run"], _heard(run)) for run in runs  # audio runs: a text run is another comparison, by design
             if run.get("history_audio") and run["history_audio"]["setting"] != "text"]
    kinds = {value.split(" (")[0] if value.startswith("all") else value for _, value in heard}
    if len(kinds) <= 1:
        return None
    return ("these runs heard different parts of the conversation history as audio ("
            + "; ".join(f"{Path(str(path)).name}: {value}" for path, value in heard)
            + "): their scores are not over the same input (see `--history-audio`)")


def _thinking(run: dict) -> str:
    """What the model did with thinking, when it did any or was asked to."""
    thinking = run.get("thinking") or {}
    if not any(thinking.get(key) for key in ("effective", "answers_with_reasoning", "empty_after_thinking")):
        return ""
    effect = f"thinking {thinking['effective']}, " if thinking.get("effective") else ""
    return (f"; {effect}{thinking.get('answers_with_reasoning', 0)} answer(s) with reasoning, "
            f"{thinking.get('empty_after_thinking', 0)} empty after thinking (failed, not scored)")


def _label(run: dict) -> str:
    """`_plain_label`, as report.md's Markdown shows it."""
    return md_cell(_plain_label(run))


def _plain_label(run: dict) -> str:
    """Model and modality; plus the data when the report mixes datasets, so rows can be told apart."""
    data = ""
    if run.get("mixed_data"):
        data = f", data {Path(str(run['data'])).name}@{str(run.get('data_fingerprint'))[:6]}"
    kind = ", barge-in" if run.get("barge_in") else ""  # the model's own sentences cut, beside its static run
    folder = f", {run['run']}" if run.get("named_by_folder") else ""  # two runs that would read the same
    return f"{Path(str(run['model'])).name} ({run['modality']}{kind}{data}{folder})"


def plot_per_type(report: dict, path: Path) -> Optional[Path]:
    from ihbench.dataset.plotting import plot_text, pyplot, save_figure

    plt = pyplot()

    runs = [r for r in report["runs"] if r.get("rq_pass_rate")]
    if not runs:
        return None
    figure, axis = plt.subplots(figsize=(10, 4), constrained_layout=True)
    width = 0.8 / len(runs)
    for index, run in enumerate(runs):
        per_type = run["rq_pass_rate"].get("per_type", {})
        xs, ys, low, high = [], [], [], []
        for position, kind in enumerate(INTERRUPTION_TYPES):
            if kind in per_type:
                value = per_type[kind]
                xs.append(position + index * width)
                ys.append(value["rq_pass_rate"])
                low.append(value["rq_pass_rate"] - value["ci_low"])
                high.append(value["ci_high"] - value["rq_pass_rate"])
        axis.bar(xs, ys, width, yerr=[low, high], capsize=3, label=plot_text(_plain_label(run)))
    axis.set_xticks([p + width * (len(runs) - 1) / 2 for p in range(len(INTERRUPTION_TYPES))], INTERRUPTION_TYPES)
    axis.set_ylim(0, 1)
    axis.set_ylabel("RQ pass rate (95 % CI)")
    axis.set_title("Recovery quality by interruption type")
    axis.legend(fontsize=8)
    return save_figure(figure, path, dpi=100)


def _hand_written(run: dict) -> bool:
    return bool(run.get("dev_set")) and not run["dev_set"].get("baselines")


def plot_dev_set(report: dict, path: Path) -> Optional[Path]:
    """Per type, each dev-set run's RQ beside its hand-written baselines' and the paper's baseline's."""
    from ihbench.dataset.plotting import plot_text, pyplot, save_figure

    from .paper import PAPER_BASELINE_MODEL, paper_baseline

    runs = [r for r in report["runs"] if _hand_written(r)][:4]
    if not runs:
        return None
    plt = pyplot()
    paper = paper_baseline("table4")
    figure, axes = plt.subplots(1, len(runs), figsize=(10 * len(runs), 4), constrained_layout=True, squeeze=False)
    for axis, run in zip(axes[0], runs):
        series = [(plot_text(_plain_label(run)), (run.get("rq_pass_rate") or {}).get("per_type", {})),
                  ("dev-set baseline (same items)", (run.get("baseline_rq_pass_rate") or {}).get("per_type", {}))]
        width = 0.8 / 3
        for index, (name, per_type) in enumerate(series):
            kinds = [k for k in INTERRUPTION_TYPES if k in per_type]
            values = [per_type[k]["rq_pass_rate"] for k in kinds]
            errors = [[v - per_type[k]["ci_low"] for k, v in zip(kinds, values)],
                      [per_type[k]["ci_high"] - v for k, v in zip(kinds, values)]]
            axis.bar([INTERRUPTION_TYPES.index(k) + index * width for k in kinds], values, width, yerr=errors,
                     capsize=3, label=name)
        axis.bar([p + 2 * width for p in range(len(INTERRUPTION_TYPES))],
                 [float(paper[k]) for k in INTERRUPTION_TYPES], width,
                 yerr=[float(paper[k + "_ci"]) for k in INTERRUPTION_TYPES], capsize=3,
                 label=f"paper: {PAPER_BASELINE_MODEL} baseline", hatch="//", alpha=0.6)
        axis.set_xticks([p + width for p in range(len(INTERRUPTION_TYPES))], INTERRUPTION_TYPES)
        axis.set_ylim(0, 1)
        axis.set_ylabel("RQ pass rate (95 % CI)")
        axis.set_title(f"{plot_text(_plain_label(run))} on the dev set: recovery quality beside both baselines")
        axis.legend(fontsize=8)
    return save_figure(figure, path, dpi=100)


def plot_depth(report: dict, path: Path) -> Optional[Path]:
    from ihbench.dataset.plotting import plot_text, pyplot, save_figure

    plt = pyplot()

    labels = [f"{low}-{high}" for low, high in DEPTH_BINS]
    figure, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    drawn = False
    for axis, key, title in ((axes[0], "tf_win_rate", "Task fulfillment win rate"),
                             (axes[1], "rq_pass_rate", "Recovery quality pass rate")):
        lines = 0
        for run in report["runs"]:
            bins = run.get(f"{key}_by_depth") or {}
            points = [(i, bins[b]) for i, b in enumerate(labels) if bins.get(b)]
            if not points:
                continue
            drawn, lines = True, lines + 1
            xs = [i for i, _ in points]
            ys = [p[key] for _, p in points]
            errors = [[p[key] - p["ci_low"] for _, p in points], [p["ci_high"] - p[key] for _, p in points]]
            axis.errorbar(xs, ys, yerr=errors, marker="o", capsize=3, label=plot_text(_plain_label(run)))
        axis.set_xticks(range(len(labels)), labels)
        axis.set_xlabel("depth (user-turn index)")
        axis.set_ylim(0, 1)
        axis.set_title(title)
        if lines:  # an empty legend is a warning on the user's terminal (an unjudged axis has none)
            axis.legend(fontsize=8)
    if not drawn:
        plt.close(figure)
        return None
    return save_figure(figure, path, dpi=100)


def _barge_in_cuts(runs: list[dict]) -> list[str]:
    """`ihbench barge-in` runs: the cuts their planner set out to make, and why some were not made."""
    rows = [run for run in runs if run.get("barge_in")]
    if not rows:
        return []
    lines = ["## On-policy barge-in: the cuts", "",
             "| run | planned cuts | placed (scored) | placed: clock | not placed: why | interjections refused "
             "(leaked the unheard part) |",
             "|---|---|---|---|---|---|"]
    for run in rows:
        cuts = run["barge_in"]
        why = ", ".join(f"{reason} {n}" for reason, n in cuts["not_placed_by_reason"].items()) or "–"
        clocks = ", ".join(f"{clock} {n}" for clock, n in cuts.get("placed_by_clock", {}).items()) or "–"
        lines.append(f"| {_label(run)} | {cuts['planned']} | {cuts['placed']} | {clocks} | {why} "
                     f"| {cuts['refused_interjections']} |")
    lines += ["", "The model spoke its own turns; at the suite's points the caller cut into its own sentence, "
                  "and each placed cut was scored on the model's next message, against a baseline written "
                  "live for it.", ""]
    for run in rows:
        held = run["barge_in"].get("held_back") or {}
        if held:  # not among the rows above: counted here, and `ihbench barge-in` plays them again
            lines += [f"{_label(run)}: {len(held)} conversation(s) left out, not scored (`ihbench barge-in` with the "
                      "same --out plays them again): " + "; ".join(f"{cid} ({why})" for cid, why in held.items()), ""]
    return lines


def render_markdown(report: dict, figures: dict[str, Optional[Path]]) -> str:
    runs = report["runs"]
    warning = [f"> **Warning:** {report['mixed_data']}", ""] if report.get("mixed_data") else []
    hearing = _mixed_hearing(runs)
    warning += [f"> **Warning:** {hearing}", ""] if hearing else []
    from .summary import unfinished_note

    for run in runs:
        for note in (unfinished_note(run, _label(run)), run_warning(run, _label(run))):
            warning += [f"> **Warning:** {note}", ""] if note else []
    lines = ["# IHBench report", "", *warning, "## Scores", "",
             "| run | items | responses | TF win rate [95 % CI] | RQ pass rate [95 % CI] | baseline RQ (same items) | "
             "heard as audio | judge errors (TF/RQ) | not judged yet (TF/RQ) | failed responses (not scored) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        errors = run["judge_errors"]
        lines.append(f"| {_label(run)} | {run['n_items']} | {run['n_responses']} "
                     f"| {_fmt(run['tf_win_rate'], 'tf_win_rate')} | {_fmt(run['rq_pass_rate'], 'rq_pass_rate')} "
                     f"| {_fmt(run.get('baseline_rq_pass_rate'), 'rq_pass_rate')} | {_heard(run)} "
                     f"| {errors['tf']}/{errors['rq']} | {_not_judged(run)} | {run['generation_errors']} |")
    lines += ["", "Judge errors, answers not judged yet and failed items (no answer: the model, its input, or in a "
              "barge-in run the caller's simulator failed; the record names which) are left out of the scores, "
              "never counted as a loss for the model; `ihbench judge` and `ihbench run` (or `ihbench barge-in`) "
              "try them again. The "
              "baseline's "
              "RQ pass rate (its verdicts ship with the data) is the anchor TF is relative to: TF 0.5 is parity with "
              "a baseline of that quality. \"Heard as audio\": the user turns the model heard as audio (the others as "
              "transcripts, `--history-audio`), over its answers.", ""]
    lines += _barge_in_cuts(runs)

    lines += ["## Beside the paper (Table 1)", "",
              "The paper's numbers are on the official test set with GPT-4o Audio as baseline and its own judge; "
              "a dev-set run is comparable in shape, not in value.", "",
              "| model | TF win rate | RQ pass rate | source |", "|---|---|---|---|"]
    rows = [(float(r["tf_win_rate"]), f"| {_paper_model(r)} | {_paper(r['tf_win_rate'], r['tf_ci_halfwidth'])} "
             f"| {_paper(r['rq_pass_rate'], r['rq_ci_halfwidth'])} | paper |") for r in paper_table("table1")]
    rows += [(run["tf_win_rate"]["tf_win_rate"] if run.get("tf_win_rate") else -1.0,
              f"| **{_label(run)}** | {_fmt(run['tf_win_rate'], 'tf_win_rate')} | "
              f"{_fmt(run['rq_pass_rate'], 'rq_pass_rate')} | this report |") for run in runs]
    lines += [row for _, row in sorted(rows, key=lambda pair: -pair[0])]

    lines += ["", "## Recovery quality by interruption type (Table 4 layout)", "",
              "| model | " + " | ".join(INTERRUPTION_TYPES) + " |", "|---" * (len(INTERRUPTION_TYPES) + 1) + "|"]
    for run in runs:
        per_type = (run.get("rq_pass_rate") or {}).get("per_type", {})
        cells = [f"{per_type[k]['rq_pass_rate']:.2f} (n={per_type[k]['n_items']})" if k in per_type else "–"
                 for k in INTERRUPTION_TYPES]
        lines.append(f"| **{_label(run)}** | " + " | ".join(cells) + " |")
    for row in paper_table("table4"):
        lines.append(f"| {_paper_model(row)} (paper) | " + " | ".join(_paper(row[k], row[k + "_ci"]) for k in INTERRUPTION_TYPES) + " |")
    if figures.get("per_type"):
        lines += ["", f"![RQ by type]({figures['per_type'].name})"]
    lines += render_barge_in_vs_static(report.get("barge_in_vs_static") or [], runs, figures.get("barge_in_vs_static"))

    for run in [r for r in runs if _hand_written(r)]:
        lines += ["", f"## Against the dev set's hand-written baselines ({_label(run)})", "",
                  *by_type_table(run.get("baseline_rq_pass_rate"), run=run.get("rq_pass_rate") or {},
                                 run_label="this run", baseline_label="dev-set baseline (same items)"),
                  "", NOT_COMPARABLE + " " + differences(run.get("baseline_rq_pass_rate"))]
    if figures.get("dev_set"):
        lines += ["", f"![Dev set beside both baselines]({figures['dev_set'].name})"]

    lines += ["", "## Depth", "", "| run | " + " | ".join(f"TF {a}-{b}" for a, b in DEPTH_BINS) + " | TF slope / turn |",
              "|---" * (len(DEPTH_BINS) + 2) + "|"]
    for run in runs:
        bins = run.get("tf_win_rate_by_depth") or {}
        cells = [f"{bins[f'{a}-{b}']['tf_win_rate']:.2f} (n={bins[f'{a}-{b}']['n_items']})" if bins.get(f"{a}-{b}") else "–"
                 for a, b in DEPTH_BINS]
        slope = run.get("tf_depth_slope")
        slope_text = "–" if not slope else f"{slope['slope_per_turn']:+.3f}" + ("" if slope["converged"] else " (not converged)")
        lines.append(f"| {_label(run)} | " + " | ".join(cells) + f" | {slope_text} |")
    if report.get("depth_slope_test"):
        t = report["depth_slope_test"]
        lines += ["", f"One-sample t-test of the depth slopes against 0: mean {t['mean_slope']:+.3f}, t = {t['t']:.2f}, "
                  f"p = {t['p_value']:.3g} ({t['n_runs']} runs)."]
    if figures.get("depth"):
        lines += ["", f"![Depth]({figures['depth'].name})"]

    lines += ["", "## Judge-free diagnostics", "",
              "| run | re-delivery ratio (mean) | filler: continues the cut sentence | filler: acknowledges the filler |",
              "|---|---|---|---|"]
    for run in runs:
        d = run["diagnostics"]

        def cell(key):
            value = d[key]
            return "–" if value["mean"] is None else f"{value['mean']:.2f} (n={value['n']})"
        lines.append(f"| {_label(run)} | {cell('redelivery_ratio')} | {cell('filler_continues')} | "
                     f"{cell('filler_acknowledges')} |")

    for tost in report.get("modality_tost", []):
        lines += ["", f"## Audio vs text ({tost['audio_run']} vs {tost['text_run']}, margin ±{tost['margin']})", ""]
        for axis in ("tf", "rq"):
            r = tost.get(axis)
            if r:
                if r["p_value"] is None:  # every paired difference equal: no variance to test with
                    lines.append(f"- {axis.upper()}: audio − text = {r['mean_difference_audio_minus_text']:+.3f} over "
                                 f"{r['n_items']} items; TOST not testable: every paired difference is the same (no "
                                 "variance)")
                    continue
                verdict = "equivalent" if r["equivalent_at_0.05"] else "not shown equivalent"
                lines.append(f"- {axis.upper()}: audio − text = {r['mean_difference_audio_minus_text']:+.3f} over "
                             f"{r['n_items']} items; TOST p = {r['p_value']:.3g} → {verdict} at α = 0.05")
    for reason in report.get("refused", []):
        lines += ["", f"- Refused: {reason}."]
    for run in runs:
        if run.get("inter_judge"):
            compared = run["inter_judge"]
            pair = " and ".join(f"{judge} ({Path(file).name})" for judge, file in
                                zip(compared.get("judges") or ["?", "?"], compared.get("files") or ["?", "?"]))
            lines += ["", f"## Inter-judge agreement ({_label(run)})", "", f"Judges compared: {pair}."]
            if any(compared.get(axis) for axis in ("tf", "rq")):
                lines += ["", "| axis | n | agreement | Cohen's κ | Spearman (items) |", "|---|---|---|---|---|"]
            for axis in ("tf", "rq"):
                a = run["inter_judge"].get(axis)
                if a:
                    kappa = "–" if a["cohen_kappa"] is None else f"{a['cohen_kappa']:.3f}"
                    rho = a.get("spearman_items")
                    lines.append(f"| {axis.upper()} | {a['n']} | {a['agreement']:.3f} | {kappa} | "
                                 f"{'–' if not rho else format(rho['rho'], '.3f')} |")
            notes = run["inter_judge"].get("notes") or []
            lines += [""] + [f"- {note}" for note in notes] if notes else []

    lines += ["", "## Provenance", ""]
    for run in runs:
        judges = ", ".join(f"{j['judge_model']} (prompt {j['prompt_version']}, {j['prompt_hash']})" for j in run["judges"])
        versions = ", ".join(f"{k} {v}" for k, v in run["metric_versions"].items())
        lines.append(f"- {_label(run)}: data {run['data']} (fingerprint {run['data_fingerprint']}); judges: "
                     f"{judges or 'none'}; metric modules: {versions}{_thinking(run)}")
    return "\n".join(lines) + "\n"


@one_writer
def write_report(summary: ReportSummary, out: Path) -> dict[str, Path]:
    from .summary import write_json

    from .folder import FIGURES, begin_report

    report = summary.to_json()  # rendered from what summary.json holds
    begin_report(out)  # known as a report's, should it be stopped before its summary; no earlier report's figures
    figures = {"per_type": plot_per_type(report, out / FIGURES["per_type"]),
               "depth": plot_depth(report, out / FIGURES["depth"]),
               "dev_set": plot_dev_set(report, out / FIGURES["dev_set"]),
               "barge_in_vs_static": plot_barge_in_vs_static(report.get("barge_in_vs_static") or [], report["runs"],
                                                           out / FIGURES["barge_in_vs_static"])}
    sealed = seal(json.loads(json.dumps(report, default=str)), out, SEALED_FIGURES["report"], [])
    write_json(out / "summary.json", sealed)
    (out / "report.md").write_text(render_markdown(report, figures), encoding="utf-8")
    return {"summary": out / "summary.json", "report": out / "report.md",
            **{k: v for k, v in figures.items() if v is not None}}
