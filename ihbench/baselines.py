"""`ihbench set-baseline`: a real model's responses (one epoch of a run) become a dataset's baselines.

This is how a user with API access reproduces the paper's protocol exactly: run the fixed
baseline model (GPT-4o Audio there) through the `openai` loader, then make its responses the
anchor the TF win rate of every other model is measured against.
"""
from __future__ import annotations

import time
from pathlib import Path

from ihbench.dataset.errors import UsageError
from ihbench.dataset.redaction import credential_in_data, redact_text

from .records import ResponseRecord
from .rundir import RunDir
from .runner import items_fingerprint


def set_baseline(run_dir, data_dir, out_dir, *, epoch: int = 0) -> Path:
    from ihbench.dataset import load_items
    from ihbench.dataset.rebaseline import replace_baselines

    run = RunDir(run_dir)
    info = run.info()
    if isinstance(info.extra.get("barge_in"), dict):  # its points are its own live cuts, not the data's
        raise UsageError(f"{run.path} is an `ihbench barge-in` run: its points are cuts into the model's own replies, "
                         f"not {data_dir}'s points, so its answers cannot be their baselines; give an `ihbench run` "
                         "run of the model on that data")
    if info.convbench is not None:  # its turns are a ConversationBench benchmark's, not interruption points
        raise UsageError(f"{run.path} is a ConversationBench run ({info.config}): its turns answer a benchmark's "
                         f"user turns, not {data_dir}'s interruption points, so they cannot be their baselines; give "
                         "an `ihbench run` run of the model on the IHBench points")
    if info.epochs is not None and not 0 <= epoch < info.epochs:
        raise UsageError(f"--epoch: {run.path} has {info.epochs} epoch(s), numbered 0 to {info.epochs - 1}; "
                         f"there is no epoch {epoch}")
    items = load_items(str(Path(data_dir).resolve()))
    if info.data_fingerprint != items_fingerprint(items):
        raise UsageError(f"{run.path} did not run on every interruption point of {data_dir}: "
                         f"{_why_other_points(info, data_dir)}")
    current = run.current(run.responses(), {item.id: item for item in items}, str(data_dir))
    empty = [record for _, record, _ in run.damaged_responses
             if ResponseRecord.empty_answer(record) and record.get("epoch") == epoch]
    if empty:  # an answer with no text is no baseline (`ihbench verify` calls such a baseline empty)
        raise UsageError(f"{run.path}: {len(empty)} answer(s) of epoch {epoch} have no words (empty, or invisible "
                         f"characters or punctuation only), e.g. {empty[0].get('id')}: an answer with no text is a failed item, not "
                         "a baseline; `ihbench run` with the same options answers them again")
    responses = {r.id: r.response for r in current if r.epoch == epoch and r.answered}
    failed = sorted({item.id for item in items} - set(responses))
    if failed:
        raise UsageError(f"{run.path}: epoch {epoch} has no response for {len(failed)} point(s), e.g. "
                         f"{', '.join(failed[:3])} (errors or an unfinished run); finish or rerun it first")
    for item_id, text in sorted(responses.items()):  # battery 64, K10: written into the dataset's Parquet in clear
        found = credential_in_data(text)
        if found:
            raise UsageError(f"{run.responses_path}: the answer to {item_id} (epoch {epoch}) holds {found} (a "
                             "credential; not shown): a baseline is copied into a dataset, and a dataset holds none; "
                             "give a run whose answers hold no credential (`ihbench run` writes answers with any "
                             "hidden)")
    model = info.model
    provenance = (f"Replaced on {time.strftime('%Y-%m-%d')} by `ihbench set-baseline` with epoch {epoch} of the run "
                  f"`{run.path.name}`: loader `{info.loader}`, model `{info.model_path}`"
                  + (f" at `{info.endpoint}`" if info.endpoint else "")
                  + f", {info.modality} input, generation {info.generation}, run created "
                  f"{info.created}, ihbench {info.versions.get('ihbench')}"
                  + (f", dtype {model.get('dtype')}" if model.get("dtype") else "") + ".")
    # run.json is never trusted to be redacted (a copy, a hand edit): nothing secret goes into the card
    return replace_baselines(data_dir, out_dir, responses, redact_text(provenance))


def _why_other_points(info, data_dir) -> str:
    """The cause run.json shows, so the user fixes that one: a part of the points (--limit, --types),
    another dataset, or this dataset rebuilt since the run."""
    import os

    if info.limit is not None or info.types:
        chosen = " and ".join(([f"--limit {info.limit}"] if info.limit is not None else [])
                              + ([f"--types {','.join(info.types)}"] if info.types else []))
        return f"it ran with {chosen}, and a run of some points cannot replace a whole set of baselines"
    same = os.path.isdir(info.data) and Path(info.data).resolve() == Path(data_dir).resolve()
    if not same:
        return (f"it ran on another dataset, {info.data} (its run.json says so); a dataset's baselines come from a "
                "run on that dataset")
    return "its points have changed since the run (rebuilt from other sources?); run the model on it again"
