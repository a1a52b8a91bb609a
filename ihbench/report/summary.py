"""`ihbench report`: scores of one or more judged runs, computed by the metric modules.

The arithmetic of TF win rate and RQ pass rate lives in `metrics/`; this module only selects
rows (judged verdicts, a depth bin, a type) and hands them to `evaluate`. Judge errors are
counted and left out: they are never a loss for the model.
"""
from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Optional, Sequence

from ihbench.dataset.schema import DEPTH_BINS, depth_bin

from .. import stats
from ..resources import load_metric, metric_version
from ..records import JudgmentRecord, ResponseRecord
from ..rundir import RunDir
from ..summaries import ReportSummary
from .devset import baseline_rq, dev_set_of, run_console_line
from .diagnostics import diagnose
from .not_judged import not_judged_why

log = logging.getLogger("ihbench")



def _rates(rows: list[JudgmentRecord], items: dict, axis: str, n_bootstrap: int, seed: int) -> Optional[dict]:
    if not rows:
        return None
    kwargs = dict(item_ids=[r.id for r in rows], interruption_types=[items[r.id].interruption_type for r in rows],
                  n_bootstrap=n_bootstrap, seed=seed)
    if axis == "tf":
        return load_metric("tf_win_rate").compute(predictions=[r.verdict for r in rows], **kwargs)
    return load_metric("rq_pass_rate").compute(predictions=[r.criteria for r in rows], **kwargs)


def per_item_scores(rows: list[JudgmentRecord], axis: str) -> dict[str, float]:
    """Epoch-averaged outcome per item (for slopes, TOST and rank correlations), from the metric
    module itself: the outcome values (a tie is 0.5) live there and nowhere else."""
    if not rows:
        return {}
    name, field = ("tf_win_rate", "verdict") if axis == "tf" else ("rq_pass_rate", "criteria")
    return load_metric(name).compute(predictions=[getattr(r, field) for r in rows], item_ids=[r.id for r in rows],
                                n_bootstrap=1, return_items=True)["per_item"]


def _fingerprint(run_dir: Path, info, items: dict) -> Optional[str]:
    """The fingerprint of the items the run answers, as the data holds them now: the one run.json
    recorded at the run's last start, or, when they differ (the data changed since, or run.json was
    edited), the current one, said."""
    from ihbench.barge_in.points import is_barge_in
    from ihbench.runner import RunConfigError, items_fingerprint, run_selection

    if is_barge_in(info) or not items:  # its points are its own conversations' (run.json's is of those)
        return info.data_fingerprint
    try:
        now = items_fingerprint(run_selection(list(items.values()), info))
    except RunConfigError:
        return info.data_fingerprint
    if info.data_fingerprint is not None and now != info.data_fingerprint:
        log.warning("%s: run.json's data_fingerprint %s is not that of the items the run answers as %s holds them now "
                    "(%s): the data changed since the run's last start, or run.json was edited; the report names the "
                    "current one", run_dir, info.data_fingerprint, info.data, now)
    return now


def unfinished_note(run: dict, name: str) -> Optional[str]:
    """Said on the terminal and in report.md: the scores of an unfinished run cover part of it."""
    planned = run.get("n_planned")
    if planned and run["n_responses"] < planned:
        writer = run.get("being_written_by")
        then = f"a run is writing it now ({writer}); report again when it ends" if writer else \
            "`ihbench run` with the same options goes on"
        failed = run.get("generation_errors") or 0
        answered = f" ({run['n_responses'] - failed} answered, {failed} failed)" if failed else ""
        lines = run.get("cut_response_lines") or []
        damaged = (f"; {len(lines)} line(s) of its responses.jsonl ({', '.join(map(str, lines[:5]))}"
                   f"{', ...' if len(lines) > 5 else ''}) cut mid-line, left out") if lines else ""
        return (f"{name} is unfinished: {run['n_responses']} of {planned} planned response(s) are in it{answered}"
                f"{damaged}; the scores cover the answered ones ({then})")  # (battery 62, I13: the line unsaid)
    return None


def summarize_run(run_dir: Path, *, n_bootstrap: int = 1000, seed: int = 0, data: Optional[str] = None) -> dict:
    """`data`: where the run's dataset is now, when it moved from where run.json says (`RunDir`)."""
    from ihbench.barge_in.points import failed_rounds

    run = RunDir(run_dir, data=data)
    info, responses, items = run.load()
    files = run.judgment_files()
    judgments = run.judgments(files[0], responses=responses) if files else []
    judged = {axis: [j for j in judgments if j.axis == axis and j.judged] for axis in ("tf", "rq")}
    summary = {
        "run": str(run_dir),
        "model": info.model.get("model_path", info.model_path),
        "loader": info.loader,
        "modality": info.modality,
        "data": data or info.data,
        "data_fingerprint": _fingerprint(run_dir, info, items),
        # which of the data's items it answers: runs of one dataset with other selections answer other items
        "selection": {"limit": info.limit, "types": info.types,
                      **({"item_ids": info.item_ids} if info.item_ids is not None else {})},
        "n_items": len({r.id for r in responses}),
        "n_responses": len(responses),
        # what the run set out to answer (items x epochs at its last start): more than n_responses
        # when it is unfinished, and the report says so beside its scores
        "n_planned": (info.n_items or 0) * (info.epochs or 0) or None,
        # the run's writer at work now (its missing responses are coming, not failed): said, not advised to rerun
        "being_written_by": run.writer(),
        # lines of responses.jsonl cut mid-line by a crash, left out: said beside "unfinished" (a damaged line is
        # warned of by the reader, naming why)
        "cut_response_lines": sorted(getattr(run, "torn_responses", [])),
        # (item, epoch) whose run record is an error: never judged nor scored, tried again by a rerun
        "generation_errors": sum(not r.answered for r in responses) + failed_rounds(info),
        "retried_by": info.retried_by,
        "failed_unit": info.failed_unit,
        # of those, failed on the data's own audio (a clip damaged or silent): a rerun fails them again
        "data_audio_errors": sum(r.on_data_audio for r in responses),
        "judgments_file": str(files[0]) if files else None,
        "judges": sorted({(j.judge_model, j.prompt_version, j.prompt_hash) for j in judgments}),
        "judge_errors": {axis: sum(j.axis == axis and j.outcome == "judge_error" for j in judgments)
                         for axis in ("tf", "rq")},
        # who failed them: the judge command that asks again is theirs (battery 61, H5)
        "judge_errors_by": sorted({j.judge_model for j in judgments if j.outcome == "judge_error"}),
        # answers with no verdict yet on an axis (judged before they existed, or never judged): not in
        # the scores, and `ihbench judge` judges only those
        "not_judged": {axis: len({r.key for r in responses if r.answered}
                                 - {(j.id, j.epoch) for j in judgments if j.axis == axis}) for axis in ("tf", "rq")},
        "metric_versions": {name: metric_version(name) for name in ("tf_win_rate", "rq_pass_rate")},
    }
    torn = (getattr(run, "torn_judgments", {}) or {}).get(files[0], []) if files else []
    for line in torn:  # said once here, by a reader: the judge (the writer) repairs it and judges it again
        log.warning("%s line %d: incomplete (cut mid-line: the judge stopped while writing it, or the file was "
                    "cut); the record is left out, and `ihbench judge` judges that answer again", files[0], line)
    damaged = sorted((getattr(run, "damaged_judgments", {}) or {}).get(files[0], []) + torn) if files else []
    summary["not_judged_why"] = not_judged_why(run_dir, responses, judgments, damaged,
                                               files[0] if files else run.judgments_path())
    summary["judges"] = [{"judge_model": m, "prompt_version": v, "prompt_hash": h} for m, v, h in summary["judges"]]
    if isinstance(info.extra.get("barge_in"), dict):  # on-policy points: the cuts planned, placed, and why not
        from ihbench.barge_in.points import cut_counts

        summary["barge_in"] = cut_counts(run_dir, info)
        # conversations whose records are not scored (a last line cut off, a damaged line, an older suite)
        summary["barge_in"]["held_back"] = dict(sorted((info.extra.get("held_back") or {}).items()))
    summary["history_audio"] = heard_as_audio(info.history_audio, info.modality, responses, items)
    summary["thinking"] = {"effective": info.model.get("thinking_effective"),
                           "answers_with_reasoning": sum(bool(r.reasoning) for r in responses if r.answered),
                           "empty_after_thinking": sum((r.error or "").startswith("EmptyAfterThinkingError")
                                                       for r in responses)}
    # over exactly the items the run's RQ pass rate covers (a current RQ verdict): not those failed,
    # not judged yet, or whose RQ judgments all failed (judge_error); none of those, no anchor
    summary["baseline_rq_pass_rate"] = baseline_rq(sorted({j.id for j in judged["rq"]}), items, n_bootstrap, seed)
    # a run on the in-house dev set: its TF is against hand-written baselines, not the paper's model
    summary["dev_set"] = dev_set_of(info.data, barge_in=isinstance(info.extra.get("barge_in"), dict))
    for axis, key in (("tf", "tf_win_rate"), ("rq", "rq_pass_rate")):
        summary[key] = _rates(judged[axis], items, axis, n_bootstrap, seed)
        summary[f"{key}_by_depth"] = {}
        for low, high in DEPTH_BINS:
            label = f"{low}-{high}"
            rows = [j for j in judged[axis] if depth_bin(items[j.id].depth) == label]
            result = _rates(rows, items, axis, n_bootstrap, seed)
            summary[f"{key}_by_depth"][label] = None if result is None else \
                {k: result[k] for k in (key, "ci_low", "ci_high", "n_items")}
    tf_items = per_item_scores(judged["tf"], "tf")
    if len(tf_items) >= 2:
        fit = stats.logistic_slope([items[i].depth for i in tf_items], list(tf_items.values()))
        summary["tf_depth_slope"] = {"slope_per_turn": fit.slope, "intercept": fit.intercept, "n_items": fit.n,
                                     "converged": fit.converged}
    summary["diagnostics"] = _diagnostics([r for r in responses if r.answered], items)
    if len(files) >= 2:
        second = run.judgments(files[1], responses=responses)
        judges = [{(j.judge_model, j.prompt_version) for j in side} for side in (judgments, second)]
        same = judges[0] == judges[1] and judges[0]
        # one judge twice (the same model and prompt, its answers likely cached) agrees with itself by construction
        summary["inter_judge"] = {} if same else inter_judge(judgments, second)
        summary["inter_judge"]["files"] = [str(files[0]), str(files[1])]
        summary["inter_judge"]["judges"] = [", ".join(sorted({j.judge_model for j in side})) or "no verdicts"
                                            for side in (judgments, second)]
        failed = [j for j in second if j.outcome == "judge_error"]
        if same and failed and len(failed) == len(second):  # its judge failed: not one agreeing (battery 59, F8;
            # another judge's failures are said by `nothing_to_compare`)
            summary["inter_judge"]["notes"] = [
                f"{files[1].name}: {len(failed)} judge error(s) and no verdict, so no inter-judge comparison; the "
                f"`ihbench judge` command that wrote it (its --judge-model {failed[0].judge_model}, its server), run "
                "again, asks again"]
        elif same:
            summary["inter_judge"]["notes"] = [
                f"{files[1].name} is by the same judge as {files[0].name} "
                f"({', '.join(f'{m}, prompt {v}' for m, v in sorted(judges[0]))}): no inter-judge comparison (a judge "
                "agrees with itself by construction)"]
        else:
            summary["inter_judge"]["notes"] = nothing_to_compare(summary["inter_judge"], (files[0], judgments),
                                                                 (files[1], second))
        summary["inter_judge"]["notes"] += _second_unfinished(run, run_dir, responses, second, files[1])
        if len(files) > 2:  # one comparison a run: the others were left out without a word
            summary["inter_judge"]["notes"].append(
                f"{run_dir} holds {len(files)} judgments files; the agreement is of the first two ({files[0].name}, "
                f"{files[1].name}), and {', '.join(f.name for f in files[2:])} "
                f"{'is' if len(files) == 3 else 'are'} left out: move {'it' if len(files) == 3 else 'them'} out of "
                "the run, or rename the one to compare to sort first")
        for note in summary["inter_judge"]["notes"]:
            log.warning("%s", note)
    return summary


def _second_unfinished(run, run_dir: Path, responses: list[ResponseRecord], second: list[JudgmentRecord],
                       path: Path) -> list[str]:
    """Answers the compared judgments file has no verdict of, and why (as for the main file): an
    agreement over the few answers a killed second judge reached reads as a finished comparison."""
    damaged = sorted((getattr(run, "damaged_judgments", {}) or {}).get(path, [])
                     + (getattr(run, "torn_judgments", {}) or {}).get(path, []))
    causes: dict = {}
    for axis, reasons in not_judged_why(run_dir, responses, second, damaged, path).items():
        for reason in reasons:
            count, axes = causes.get(reason["why"], (0, []))
            causes[reason["why"]] = (max(count, reason["n"]), axes + [axis])
    answered = sum(r.answered for r in responses)

    def then(why: str, axes: list) -> str:
        if why.startswith("the last judge ran with --axes"):  # run again as it was, it leaves them out again
            return (f"the `ihbench judge` command that wrote {path.name}, with --axes {','.join(axes)}, judges the "
                    "rest")
        return f"the `ihbench judge` command that wrote {path.name}, run again, judges the rest"

    return [f"{path.name}: {n} of {answered} answer(s) have no {'/'.join(a.upper() for a in axes)} judgment in it "
            f"({why}); the agreement covers only the answers both files judged ({then(why, axes)})"
            for why, (n, axes) in causes.items()]


def nothing_to_compare(agreement: dict, *files: tuple[Path, list[JudgmentRecord]]) -> list[str]:
    """Why an axis has no inter-judge row: a judge whose verdicts on it all failed (judge_error)
    or that never judged it, said rather than left as a table of headers only."""
    notes = []
    for axis in ("tf", "rq"):
        if agreement.get(axis):
            continue
        why = []
        for path, rows in files:
            judged = sum(j.axis == axis and j.judged for j in rows)
            errors = sum(j.axis == axis and j.outcome == "judge_error" for j in rows)
            if not judged:
                why.append(f"{path}: {errors} {axis.upper()} judge error(s), no verdict" if errors else
                           f"{path}: no {axis.upper()} judgment")
        notes.append(f"no {axis.upper()} inter-judge agreement: " + ("; ".join(why) if why else
                     "no answer has a verdict of both judges") + " to compare")
    return notes


def heard_as_audio(setting: Optional[str], modality: Optional[str], responses: list[ResponseRecord],
                   items: dict) -> dict:
    """How much of each answered item's history the model heard as audio: the setting, and over the
    answers that record it (format 4 on) the mean user turns heard as audio against the mean there
    were, and how many answers heard them all. Scores over different hearings are not the same test."""
    answered = [r for r in responses if r.answered and r.audio_turns is not None]
    result = {"setting": "text" if modality == "text" else setting or "all", "n": len(answered)}
    if not answered or modality == "text":
        return result
    turns = [sum(m.role == "user" for m in items[r.id].history) + 1 for r in answered]
    heard = [r.audio_turns for r in answered]
    result.update(audio_turns_mean=sum(heard) / len(heard), user_turns_mean=sum(turns) / len(turns),
                  audio_turns_min=min(heard), all_audio=sum(h >= t for h, t in zip(heard, turns)))
    return result


def _diagnostics(responses: list[ResponseRecord], items: dict) -> dict:
    rows = [diagnose(items[r.id], r.response) for r in responses]

    def mean(key):
        values = [row[key] for row in rows if row[key] is not None]
        return {"mean": sum(values) / len(values) if values else None, "n": len(values)}

    return {"redelivery_ratio": mean("redelivery_ratio"), "filler_continues": mean("filler_continues"),
            "filler_acknowledges": mean("filler_acknowledges")}


def inter_judge(first: list[JudgmentRecord], second: list[JudgmentRecord]) -> dict:
    """Sample-level agreement and Cohen's kappa on shared (item, epoch) verdicts; Spearman on
    per-item epoch-averaged scores (how well the two judges rank the same items)."""
    result = {}
    for axis in ("tf", "rq"):
        a = {(j.id, j.epoch): j.verdict for j in first if j.axis == axis and j.judged}
        b = {(j.id, j.epoch): j.verdict for j in second if j.axis == axis and j.judged}
        shared = sorted(set(a) & set(b))
        if not shared:
            result[axis] = None
            continue
        left, right = [a[k] for k in shared], [b[k] for k in shared]
        entry = {"n": len(shared), "agreement": sum(x == y for x, y in zip(left, right)) / len(shared),
                 "cohen_kappa": stats.cohen_kappa(left, right)}
        per_a = per_item_scores([j for j in first if j.axis == axis and j.judged], axis)
        per_b = per_item_scores([j for j in second if j.axis == axis and j.judged], axis)
        common = sorted(set(per_a) & set(per_b))
        if len(common) >= 3 and len({per_a[k] for k in common}) > 1 and len({per_b[k] for k in common}) > 1:
            rho = stats.spearman([per_a[k] for k in common], [per_b[k] for k in common])
            entry["spearman_items"] = {"rho": rho.statistic, "p_value": rho.p_value, "n": rho.n}
        result[axis] = entry
    return result


def modality_tost(audio_dir: Path, text_dir: Path, margin: float) -> dict:
    """Audio vs text of the same model on the same items: paired per-item differences, TOST."""
    result = {"audio_run": str(audio_dir), "text_run": str(text_dir), "margin": margin}
    for axis in ("tf", "rq"):
        scores = []
        for run_dir in (audio_dir, text_dir):
            run = RunDir(run_dir)
            files = run.judgment_files()
            rows = [j for j in (run.judgments(files[0]) if files else []) if j.axis == axis and j.judged]
            scores.append(per_item_scores(rows, axis))
        common = sorted(set(scores[0]) & set(scores[1]))
        if len(common) < 2:
            result[axis] = None
            continue
        test = stats.tost_paired([scores[0][k] for k in common], [scores[1][k] for k in common], margin)
        result[axis] = {"mean_difference_audio_minus_text": test.mean_difference, "p_value": test.p_value,
                        "p_lower": test.p_lower, "p_upper": test.p_upper, "n_items": test.n,
                        "equivalent_at_0.05": test.equivalent(0.05)}
    return result


def _different_items(runs: list[dict], datasets: list) -> str:
    """Why the runs' scores are over different items, in the words that fit: one dataset, of which the runs
    answered other selections (--limit, --types), is not "different data"."""
    selections = sorted({json.dumps(run.get("selection") or {}, sort_keys=True) for run in runs})
    if len({d for d, _ in datasets}) == 1 and len(selections) > 1:
        def said(selection: dict) -> str:
            if selection.get("item_ids") is not None:
                return f"{len(selection['item_ids'])} point(s) picked in the Space"
            return ", ".join(f"--{k} {','.join(v) if isinstance(v, list) else v}" for k, v in selection.items()
                             if v is not None) or "all items"
        shown = " / ".join(said(json.loads(selection)) for selection in selections)
        return (f"these runs answered different items of {datasets[0][0]} ({shown}): their scores are over different "
                "items and are not directly comparable")
    return ("these runs used different data (" + "; ".join(f"{d} @ {f[:6]}" for d, f in datasets)
            + "): their scores are over different items and are not directly comparable")


def summarize(run_dirs: Sequence[Path], *, tost_margin: float = 0.05, n_bootstrap: int = 1000,
              seed: int = 0, data: Optional[str] = None) -> ReportSummary:
    runs = [summarize_run(Path(d), n_bootstrap=n_bootstrap, seed=seed, data=data) for d in run_dirs]
    for run in runs:  # said on the terminal too: a dev-set TF read as the paper's would mislead
        line = run_console_line(run, run["run"])
        if line:
            log.warning("%s", line)
    mixed_data, modality_tosts, refused, depth_slope_test = None, [], [], None
    datasets = sorted({(str(r["data"]), str(r["data_fingerprint"])) for r in runs})
    if len(datasets) > 1:
        mixed_data = _different_items(runs, datasets)
        log.warning("%s", mixed_data)
        for run in runs:
            run["mixed_data"] = True
    labels = defaultdict(list)  # rows that would read the same (one model, modality and data): named by folder
    for run in runs:
        labels[(Path(str(run["model"])).name, run["modality"], bool(run.get("barge_in")), run.get("mixed_data") and
                (run["data"], run["data_fingerprint"]))].append(run)
    for same in labels.values():
        if len(same) > 1:
            for run in same:
                run["named_by_folder"] = True
    by_model = defaultdict(dict)
    for run in runs:
        by_model[(run["loader"], run["model"])].setdefault(run["modality"], []).append(run)
    for pair in by_model.values():
        for audio in pair.get("audio", []):
            for text in pair.get("text", []):
                if audio["data_fingerprint"] != text["data_fingerprint"]:
                    reason = (f"no audio-vs-text TOST for {audio['run']} and {text['run']}: they ran on different "
                              "data, and the test pairs the same items")
                    refused.append(reason)
                    log.warning("%s", reason)
                    continue
                modality_tosts.append(modality_tost(Path(audio["run"]), Path(text["run"]), tost_margin))
    slopes = [r["tf_depth_slope"]["slope_per_turn"] for r in runs
              if r.get("tf_depth_slope") and r["tf_depth_slope"]["converged"]]
    if len(slopes) >= 2:
        test = stats.one_sample_t_test(slopes)
        depth_slope_test = {"mean_slope": sum(slopes) / len(slopes), "t": test.statistic, "p_value": test.p_value,
                            "n_runs": test.n}
    return ReportSummary(runs=runs, modality_tost=modality_tosts, depth_slope_test=depth_slope_test,
                         mixed_data=mixed_data, refused=refused,
                         barge_in_vs_static=_barge_in_vs_static(runs, refused, n_bootstrap, seed))


def _barge_in_vs_static(runs: list[dict], refused: list[str], n_bootstrap: int, seed: int) -> Optional[list]:
    """Each barge-in run beside the same model's static runs (`barge_in_compare`); None without a pair."""
    from .barge_in_compare import compare, pairs

    found = pairs(runs)
    if not found:
        return None
    comparisons = []
    for static, live in found:
        result = compare(static, live, n_bootstrap=n_bootstrap, seed=seed)
        if result is None:
            refused.append(f"no barge-in vs static comparison for {live['run']} and {static['run']}: one of them has "
                           "no judged RQ verdict yet (run `ihbench judge` on it)")
        else:
            comparisons.append(result)
    return comparisons


def write_json(path: Path, data: dict) -> None:
    from ihbench.dataset.io import write_json_atomic

    write_json_atomic(path, json.loads(json.dumps(data, default=str)))
