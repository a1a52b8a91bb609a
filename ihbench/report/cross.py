"""One report across IHBench, SID-Bench and turn-taking: a table per model, rank correlations.

Runs are grouped by model name (`--model-name RUN=NAME`, else the name the run records), at most
one run of each benchmark per model. The correlations follow the IHBench paper's cross-benchmark
analysis (Section 5.5): Spearman's rho across models between every pair of metrics, on the models
that have both, with n and a permutation p-value (exact for up to seven models), plus each metric's mean correlation with the others (the
paper's test of whether a metric is a distinct capability axis). Rank correlations over fewer
than three models are meaningless, so none are given then. The correlations are of raw values:
for a "lower is better" metric a negative rho with TF means the two agree on which model is better.
"""
from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Optional, Sequence

from ihbench.dataset.characters import escaped, name_problem
from ihbench.dataset.errors import UsageError
from ihbench.dataset.redaction import credential_in

from .. import stats
from ..convbench.judge.source import is_convbench_run
from ..records import RunInfo
from ..rundir import RunDir
from ..summaries import SID_DEFINITIONS, CrossSummary, SidSummary
from .benchmark_runs import (
    A_RUN,
    METRICS,
    BenchmarkRun,
    RunKindError,
    convbench_cells,
    ihbench_cells,
    read_run,
    sid_cells,
    turns_cells,
)

MIN_MODELS = 3


def wants_cross_report(run_dirs: Sequence[Path], model_names: Optional[Sequence[str]], forced: bool) -> bool:
    """The single-benchmark IHBench report stays what it was: it is used whenever every folder is an
    IHBench run and no cross-benchmark option is given."""
    if forced or model_names:
        return True
    if len(run_dirs) == 1 and is_convbench_run(run_dirs[0]):
        return False  # its own report
    if not all(RunDir(d).exists() for d in run_dirs):
        return True
    # several runs with a ConversationBench one among them: one row per model across benchmarks
    return len(run_dirs) > 1 and any(is_convbench_run(d) for d in run_dirs)


def parse_model_names(pairs: Optional[Sequence[str]], run_dirs: Sequence[Path]) -> dict[Path, str]:
    """`--model-name RUN=NAME` -> {resolved run folder: name}; RUN must be one of the folders given."""
    given = {Path(d).resolve(): Path(d) for d in run_dirs}
    names: dict[Path, str] = {}
    for pair in pairs or []:
        run, equals, name = pair.rpartition("=")
        found = credential_in(pair)
        if found:  # before any refusal quotes it; a name would be written into report.md and summary.json in clear
            raise UsageError(f"--model-name {escaped(run) if run and not credential_in(run) else '...'}=...: holds "
                             f"{found} (a credential; not shown); a model's name holds none")
        if not equals or not run or not name.strip():
            raise UsageError(f"--model-name expects RUN=NAME, got {escaped(pair)}")
        problem = name_problem(name)
        if problem:  # a line break in a name starts a heading of its own in report.md
            raise UsageError(f"--model-name {escaped(pair)}: the name holds {problem}; give the name on one line, as "
                             "it reads")
        key = Path(run).resolve()
        if key not in given:
            raise UsageError(f"--model-name {pair}: {run} is not one of the run folders given")
        if key in names and names[key] != name.strip():
            raise UsageError(f"--model-name: {run} is named twice ({names[key]!r} and {name.strip()!r})")
        names[key] = name.strip()
    return names


def group_by_model(runs: Sequence[BenchmarkRun], names: dict[Path, str]) -> dict[str, dict[str, BenchmarkRun]]:
    """{model: {kind: run}} in command-line order; two runs of one kind for one model is an error."""
    models: dict[str, dict[str, BenchmarkRun]] = {}
    for run in runs:
        name = names.get(run.path.resolve(), run.recorded_name)
        if not name:
            raise RunKindError(f"{run.path}: {A_RUN[run.kind]} that records no model name; give --model-name "
                               f"{run.path}=NAME")
        earlier = models.setdefault(name, {}).get(run.kind)
        if earlier is not None:
            raise RunKindError(f"{run.path}: model {name!r} already has {A_RUN[run.kind]} ({earlier.path}); one run of "
                               "each benchmark per model (use --model-name RUN=NAME to tell models apart)")
        models[name][run.kind] = run
    return models


def rank_correlations(models: list[dict], keys: Sequence[str]) -> dict:
    """Spearman's rho between every pair of `keys` over the models that have both values."""
    result = {"method": "spearman", "n_models": len(models), "min_models": MIN_MODELS, "pairs": [], "mean_rho": {},
              "note": None}
    if len(models) < MIN_MODELS:
        result["note"] = (f"Spearman rank correlations across models need at least {MIN_MODELS} models; this report "
                          f"has {len(models)}, so none are given.")
        return result
    labels = {m.key: m.label for m in METRICS}
    for a, b in combinations(keys, 2):
        shared = [m for m in models if m["metrics"][a]["value"] is not None and m["metrics"][b]["value"] is not None]
        x, y = [m["metrics"][a]["value"] for m in shared], [m["metrics"][b]["value"] for m in shared]
        entry = {"a": a, "b": b, "rho": None, "p_value": None, "n": len(shared),
                 "models": [m["model"] for m in shared], "reason": None}
        if len(shared) < MIN_MODELS:
            entry["reason"] = f"only {len(shared)} model(s) have both; at least {MIN_MODELS} are needed"
        elif len(set(x)) == 1 or len(set(y)) == 1:
            same = labels[a] if len(set(x)) == 1 else labels[b]
            entry["reason"] = f"{same} is the same for every model that has both, so there is no ranking"
        else:
            test = stats.spearman_permutation(x, y)
            entry.update(rho=test.statistic, p_value=test.p_value)
        result["pairs"].append(entry)
    for key in keys:
        values = [p["rho"] for p in result["pairs"] if key in (p["a"], p["b"]) and p["rho"] is not None]
        result["mean_rho"][key] = sum(values) / len(values) if values else None
    return result


def cross_report(run_dirs: Sequence[Path], *, model_names: Optional[Sequence[str]] = None,
                 sid_definition: str = "notebook", tost_margin: float = 0.05, n_bootstrap: int = 1000,
                 seed: int = 0) -> CrossSummary:
    """Everything `write_cross_report` writes (its summary.json)."""
    from .convbench_summary import summarize_convbench
    from .summary import summarize

    if sid_definition not in SID_DEFINITIONS:
        raise UsageError(f"--sid-definition: expected one of {', '.join(SID_DEFINITIONS)}, got {sid_definition!r}")
    names = parse_model_names(model_names, run_dirs)
    runs = [read_run(d) for d in run_dirs]  # every folder is checked before anything slow starts
    by_folder = {}
    if len(runs) == 1 and not runs[0].recorded_name and not names:  # one row, nothing to group: its folder names it
        by_folder = {runs[0].path.resolve(): runs[0].path.resolve().name}
    grouped = group_by_model(runs, {**names, **by_folder})
    ihbench_runs = [r for r in runs if r.kind == "ihbench"]
    ihbench = summarize([r.path for r in ihbench_runs], tost_margin=tost_margin, n_bootstrap=n_bootstrap,
                        seed=seed) if ihbench_runs else None
    by_path = {r.path: s for r, s in zip(ihbench_runs, ihbench.runs)} if ihbench else {}
    convbench = {r.path: summarize_convbench(r.path) for r in runs if r.kind == "convbench"}
    models = []
    for name, kinds in grouped.items():
        cells = {m.key: {"value": None, "ci_low": None, "ci_high": None, "n": None} for m in METRICS}
        if "ihbench" in kinds:
            cells.update(ihbench_cells(by_path[kinds["ihbench"].path]))
        if "sid" in kinds:
            cells.update(sid_cells(kinds["sid"].record, sid_definition))
        if "turns" in kinds:
            cells.update(turns_cells(kinds["turns"].record))
        if "convbench" in kinds:
            cells.update(convbench_cells(convbench[kinds["convbench"].path]))
        for metric in METRICS:
            if metric.kind in kinds:
                cells[metric.key]["run"] = str(kinds[metric.kind].path)
        models.append({"model": name, "runs": {kind: str(run.path) for kind, run in kinds.items()}, "metrics": cells})
    present = [m.key for m in METRICS if any(model["metrics"][m.key]["value"] is not None for model in models)]
    return CrossSummary(
        sid_definition=sid_definition,
        metrics=[{"key": m.key, "label": m.label, "benchmark": m.kind, "better": m.better} for m in METRICS],
        models=models,
        correlations=rank_correlations(models, present),
        runs=[{"run": str(r.path), "kind": r.kind,
               "model": {**names, **by_folder}.get(r.path.resolve(), r.recorded_name),
               "named_by": "--model-name" if r.path.resolve() in names else
               "its folder" if r.path.resolve() in by_folder else "the run",
               "details": _details(r), **_agreement(r), **_conversations(convbench.get(r.path))} for r in runs],
        ihbench=ihbench,
    )


def _agreement(run: BenchmarkRun) -> dict:
    """A turns run's judge agreement as its command computed it (through the metric module), metrics
    its judge does not cover included as such; nothing for other runs or a turns run without a judge."""
    if run.kind != "turns" or not run.record.agreement:
        return {}
    return {"agreement": run.record.agreement}


def _conversations(summary: Optional[dict]) -> dict:
    """A ConversationBench run's conversation counts, and why some are unfinished: its row of the
    table shows dashes where nothing is scored, and the report says why, as its own report does."""
    if summary is None:
        return {}
    return {"conversations": summary["conversations"], "being_played_by": summary.get("being_played_by"),
            "on_data_audio": summary.get("on_data_audio", 0)}


def _details(run: BenchmarkRun) -> dict:
    """What a reader needs to know where a run's figures came from."""
    record = run.record
    if run.kind == "convbench":
        return {"data": record.data, "config": record.config, "modality": record.modality, "epochs": record.epochs,
                "mode": record.mode, "harness": "ihbench" if record.kind == "ihbench" else "reference"}
    if isinstance(record, RunInfo):
        return {"data": record.data, "modality": record.modality, "epochs": record.epochs}
    if isinstance(record, SidSummary):
        return {"data": record.data, "config": record.config, "detector": record.detector or None,
                "n_clips": record.n_clips, "tolerance": record.tolerance}
    return {"recordings": record.recordings}
