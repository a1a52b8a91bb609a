"""`ihbench run`: a model over interruption points x epochs into a resumable run directory.

    runs/<name>/run.json          what was run (model, loader, data, generation, versions)
    runs/<name>/responses.jsonl   one line per (item id, epoch), appended and fsynced

Running the same command again resumes: finished (item, epoch) records are skipped, so none is
written twice; a torn last line from a crash is repaired first.
"""
from __future__ import annotations

import hashlib
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ihbench_dataset.schema import EvalItem, canonical_interruption_type

from .jsonl import AppendLog, read_records, write_json_atomic

RESPONSES = "responses.jsonl"
RUN_JSON = "run.json"
# Fields that define a run: resuming with any of them changed would mix two experiments.
IDENTITY = ("loader", "model_path", "data", "config", "split", "modality", "generation", "seed", "types")


class RunConfigError(ValueError):
    pass


@dataclass
class RunSpec:
    loader: str
    model_path: str
    data: str
    out: Path
    config: Optional[str] = None
    split: Optional[str] = None
    epochs: int = 3
    limit: Optional[int] = None
    types: Optional[list[str]] = None
    modality: str = "audio"
    generation: dict = field(default_factory=dict)
    seed: int = 0
    loader_options: dict = field(default_factory=dict)
    command: Optional[list[str]] = None


@dataclass
class RunSummary:
    out: Path
    planned: int
    written: int
    skipped: int
    errors: int
    seconds: float


def record_seed(seed: int, item_id: str, epoch: int) -> int:
    """A seed per (item, epoch), stable across resumes and independent of run order."""
    digest = hashlib.sha256(f"{seed}:{item_id}:{epoch}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


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


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": platform.python_version()}
    for package in ("ihbench", "torch", "transformers", "datasets", "torchcodec", "openai", "peft"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            pass
    return versions


def _check_same_run(existing: dict, identity: dict, path: Path) -> None:
    for key in IDENTITY:
        if existing.get(key) != identity.get(key):
            raise RunConfigError(
                f"{path} belongs to a different run: {key} is {existing.get(key)!r} there but {identity.get(key)!r} "
                "now; use another --out (or the same options to resume)")


def run(spec: RunSpec, *, loader=None, items: Optional[list[EvalItem]] = None, progress: bool = True) -> RunSummary:
    from loaders import GenerationConfig, build_conversation, get
    from loaders.base import EmptyAudioError, Response

    started = time.perf_counter()
    out = Path(spec.out)
    generation = GenerationConfig(**spec.generation)
    identity = {"loader": spec.loader, "model_path": spec.model_path, "data": spec.data, "config": spec.config,
                "split": spec.split, "modality": spec.modality, "generation": generation.to_dict(),
                "seed": spec.seed, "types": sorted(spec.types) if spec.types else None}
    existing = None
    if (out / RUN_JSON).exists():
        import json

        existing = json.loads((out / RUN_JSON).read_text(encoding="utf-8"))
        _check_same_run(existing, identity, out / RUN_JSON)
    if spec.epochs < 1:
        raise RunConfigError(f"--epochs: must be >= 1, got {spec.epochs}")

    if loader is None:
        loader = get(spec.loader)(spec.model_path, **spec.loader_options)  # fails fast on a missing model
    loader.check_modality(spec.modality)
    if items is None:
        from ihbench_dataset import load_items

        items = load_items(spec.data, config=spec.config, split=spec.split)
    items = select_items(items, spec.types, spec.limit)

    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / RUN_JSON, {
        **identity,
        "epochs": spec.epochs,
        "limit": spec.limit,
        "model": loader.describe(),
        "data_fingerprint": items_fingerprint(items),
        "n_items": len(items),
        "versions": _versions(),
        "command": spec.command or sys.argv,
        "created": existing.get("created") if existing else time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    })

    done = {(r["id"], r["epoch"]) for r in read_records(out / RESPONSES)}
    todo = [(item, epoch) for item in items for epoch in range(spec.epochs) if (item.id, epoch) not in done]
    planned = len(items) * spec.epochs
    written = errors = 0
    from tqdm.auto import tqdm

    with AppendLog(out / RESPONSES) as log, tqdm(total=planned, initial=planned - len(todo), unit="response",
                                                 desc=f"{spec.loader} {Path(spec.model_path).name}",
                                                 disable=not progress) as bar:
        for start in range(0, len(todo), max(1, loader.batch_size)):
            batch = todo[start:start + max(1, loader.batch_size)]
            seeds = [record_seed(spec.seed, item.id, epoch) for item, epoch in batch]
            responses: list[Optional[Response]] = [None] * len(batch)
            ready, conversations = [], []
            for position, (item, _) in enumerate(batch):
                built = time.perf_counter()
                try:
                    conversations.append(build_conversation(item, spec.modality))
                    ready.append(position)
                except EmptyAudioError as error:
                    responses[position] = Response.failure(error, built)
            for position, response in zip(ready, loader.generate_batch(conversations, generation,
                                                                        [seeds[p] for p in ready])):
                responses[position] = response
            for (item, epoch), seed, response in zip(batch, seeds, responses):
                log.append({
                    "id": item.id, "epoch": epoch, "seed": seed, "response": response.text, "error": response.error,
                    "latency_s": round(response.latency_s, 4), "input_tokens": response.input_tokens,
                    "output_tokens": response.output_tokens, "modality": spec.modality,
                    "conversation_id": item.conversation_id, "interruption_type": item.interruption_type,
                    "depth": item.depth,
                })
                written += 1
                errors += response.error is not None
                bar.update(1)
    return RunSummary(out=out, planned=planned, written=written, skipped=planned - len(todo), errors=errors,
                      seconds=time.perf_counter() - started)
