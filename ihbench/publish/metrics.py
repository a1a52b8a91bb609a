"""`ihbench publish-metrics`: each metric folder as an evaluate Space under the user's namespace.

In the toolkit a folder links to shared arithmetic (`metrics/_shared/`) and its widget loads the
folder it sits in. Staging copies the link targets and rewrites the widget, the card and the
modules' usage examples (docstrings) for the namespace, so what lands on the Hub is self-contained
and `evaluate.load("NAMESPACE/apt")` (never evaluate's own `evaluate-metric/apt`) is what it tells
people to type.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Optional, Sequence

from ihbench.dataset.errors import MissingFileError, UsageError

from ..resources import metric_names, metrics_root
from .hub import PublishPlan, begin_staging, check_namespace, mark_staged, staging_lock, staging_root, upload

_APP = '''import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("{repo_id}")
launch_gradio_widget(module)
'''


def for_namespace(text: str, namespace: str, names: Sequence[str]) -> str:
    """Card or module text that names the published modules: `NAMESPACE/x` and bare `evaluate.load("x"`
    (also the `evaluate.load("{name}"` template of the shared SID docstring), which the Hub would
    resolve to `evaluate-metric/x`, somebody else's module."""
    text = text.replace("NAMESPACE/", f"{namespace}/").replace("--namespace NAMESPACE", f"--namespace {namespace}")
    pattern = "|".join(re.escape(name) for name in [*names, "{name}"])
    return re.sub(rf'evaluate\.load\("({pattern})"', rf'evaluate.load("{namespace}/\1"', text)


def stage_metric(name: str, namespace: str, target: Path) -> list[str]:
    source = metrics_root() / name
    names = metric_names()
    target.mkdir(parents=True, exist_ok=True)
    for required in (f"{name}.py", "README.md", "requirements.txt"):
        if not (source / required).is_file():
            raise MissingFileError(f"{source}: missing {required}; every metric folder needs it to run as a Space")
    for path in sorted(source.glob("*.py")):  # links become real files; usage examples name the namespace
        if path.name != "app.py":
            code = path.resolve().read_text(encoding="utf-8")
            (target / path.name).write_text(for_namespace(code, namespace, names), encoding="utf-8")
    shutil.copyfile(source / "requirements.txt", target / "requirements.txt")
    card = (source / "README.md").read_text(encoding="utf-8")
    (target / "README.md").write_text(for_namespace(card, namespace, names), encoding="utf-8")
    (target / "app.py").write_text(_APP.format(repo_id=f"{namespace}/{name}"), encoding="utf-8")
    return sorted(p.name for p in target.iterdir())


def publish_metrics(namespace: str, names: Optional[Sequence[str]] = None, *, dry_run: bool = False,
                    token: Optional[str] = None, api=None, staging_dir: Optional[Path] = None) -> list[PublishPlan]:
    available = metric_names()
    names = list(names) if names else available
    unknown = sorted(set(names) - set(available))
    if unknown:
        raise UsageError(f"unknown metric(s) {', '.join(unknown)}; available: {', '.join(available)}")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:  # staged and uploaded twice otherwise
        raise UsageError(f"metric(s) named twice: {', '.join(twice)}; name each once")
    check_namespace(namespace, names=names)
    with staging_lock(staging_dir):
        root = staging_root(staging_dir, "ihbench-metrics-")
        try:
            if staging_dir is not None:
                begin_staging(root)
            plans = [PublishPlan(name, f"{namespace}/{name}", "space", root / name,
                                 stage_metric(name, namespace, root / name)) for name in names]
            if staging_dir is not None:
                mark_staged(root)
            if not dry_run:
                for plan in plans:
                    upload(plan, api=api, token=token, space_sdk="gradio")
        except BaseException:  # refused or failed: our temporary folder goes
            if staging_dir is None:
                shutil.rmtree(root, ignore_errors=True)
            raise
        if staging_dir is None:  # uploaded or listed: of no further use (--staging-dir keeps a staging to look at)
            shutil.rmtree(root, ignore_errors=True)
    return plans
