"""`ihbench publish-metrics`: push each metric folder to the Hub as an evaluate Space.

A folder links to the shared arithmetic in `metrics/_shared/`; staging copies the link targets,
so what lands on the Hub is self-contained and `evaluate.load("NAMESPACE/apt")` works anywhere.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

METRICS_DIR = Path(__file__).resolve().parents[1] / "metrics"
PUBLISHED_FILES = ("*.py", "README.md", "requirements.txt")


@dataclass
class PublishPlan:
    name: str
    repo_id: str
    files: list[str]
    staged: Path


def metric_names(metrics_dir: Path = METRICS_DIR) -> list[str]:
    """Folders that hold a module named after themselves (`apt/apt.py`)."""
    return sorted(p.name for p in metrics_dir.iterdir()
                  if p.is_dir() and not p.name.startswith(("_", ".")) and (p / f"{p.name}.py").is_file())


def stage(name: str, target: Path, metrics_dir: Path = METRICS_DIR) -> list[str]:
    source = metrics_dir / name
    target.mkdir(parents=True, exist_ok=True)
    files = []
    for pattern in PUBLISHED_FILES:
        for path in sorted(source.glob(pattern)):
            shutil.copyfile(path.resolve(), target / path.name)  # resolve: links become real files
            files.append(path.name)
    for required in (f"{name}.py", "README.md", "app.py", "requirements.txt"):
        if required not in files:
            raise FileNotFoundError(f"{source}: missing {required}; every metric folder needs it to run as a Space")
    return sorted(files)


def publish_metrics(
    namespace: str,
    names: Optional[Sequence[str]] = None,
    *,
    dry_run: bool = False,
    token: Optional[str] = None,
    api=None,
    staging_dir: Optional[Path] = None,
) -> list[PublishPlan]:
    available = metric_names()
    names = list(names) if names else available
    unknown = sorted(set(names) - set(available))
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; available: {', '.join(available)}")
    if not namespace or "/" in namespace:
        raise ValueError(f"namespace: expected a user or organization name, got {namespace!r}")
    root = Path(staging_dir) if staging_dir else Path(tempfile.mkdtemp(prefix="ihbench-metrics-"))
    plans = [PublishPlan(name, f"{namespace}/{name}", stage(name, root / name), root / name) for name in names]
    if dry_run:
        return plans
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    for plan in plans:
        api.create_repo(plan.repo_id, repo_type="space", space_sdk="gradio", exist_ok=True)
        api.upload_folder(repo_id=plan.repo_id, repo_type="space", folder_path=str(plan.staged),
                          commit_message=f"Publish {plan.name} from the IHBench toolkit")
    return plans
