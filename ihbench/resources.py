"""Files the toolkit ships beside its code, found the same way in a checkout and in a wheel.

`metrics/` at the top of the repository is the home of the evaluate modules; it is packaged as
`ihbench/metrics` (a link in the checkout, real files in the wheel), so an installed toolkit
scores with exactly the modules its card describes. Everything that needs a shipped file asks
one of these functions; nothing computes a path from `__file__`.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import IHBenchError


class ResourceError(IHBenchError, LookupError):
    """A shipped file or module is missing: the installation is incomplete, or the name is wrong."""


def _package_dir(*parts: str) -> Path:
    # `as_file` is unnecessary: setuptools installs package data as ordinary files.
    return Path(str(resources.files("ihbench").joinpath(*parts)))


def metrics_root() -> Path:
    return _package_dir("metrics")


def metric_names() -> list[str]:
    """Folders that hold a module named after themselves (`apt/apt.py`)."""
    root = metrics_root()
    if not root.is_dir():
        raise ResourceError(f"{root}: the metric modules are not installed with this copy of ihbench")
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(("_", ".")) and (p / f"{p.name}.py").is_file())


def metric_path(name: str) -> str:
    """Absolute folder of a shipped metric module, for `evaluate.load(metric_path("apt"))`.

    Absolute on purpose: evaluate sends a bare or relative name that is not found locally to the
    Hub (`evaluate-metric/<name>`), which is somebody else's module or a network error offline.
    """
    folder = metrics_root() / name
    if not (folder / f"{name}.py").is_file():
        raise ResourceError(f"no metric module {name!r}; shipped modules: {', '.join(metric_names())}")
    return str(folder.resolve())


@lru_cache(maxsize=None)
def load_metric(name: str, config: Optional[str] = None, *, folder: Optional[str] = None):
    """The shipped metric module `name` (with its `config`, e.g. apt's "readme"), opened with
    `evaluate.load` on its absolute folder exactly as users open it; one load per module and config.

    `folder` scores with another copy of the module instead (an absolute folder holding `<name>.py`).
    """
    import evaluate  # ~7 s to import: only scoring needs it

    return evaluate.load(folder or metric_path(name), config)


@lru_cache(maxsize=None)
def metric_version(name: str) -> str:
    """Hash of the module's code (links resolved), stamped on every score it produced."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(Path(metric_path(name)).glob("*.py")):
        digest.update(path.name.encode() + path.resolve().read_bytes())
    return digest.hexdigest()[:12]


def reference_table(name: str) -> Path:
    """The paper's tables as CSV (`table1`, `table4`), shown beside a user's runs."""
    path = _package_dir("reference", f"ihbench_{name}.csv")
    if not path.is_file():
        raise ResourceError(f"no reference table {name!r} (looked for {path.name})")
    return path


def space_dir() -> Path:
    """The Gradio Space's app and card (`spaces/` in the repository), staged by `publish-space`."""
    path = _package_dir("spaces")
    if not (path / "app.py").is_file():
        raise ResourceError(f"{path}: the Space's app.py is not installed with this copy of ihbench")
    return path
