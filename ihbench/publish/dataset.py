"""`ihbench publish-dataset`: a built dataset folder (Parquet + card with `configs:`) to the Hub.

The folder is checked the way a user will open it (every IHBench config read back through
`load_items`) before anything is uploaded: a dataset on the Hub that the toolkit cannot read is
worse than none.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ihbench.dataset.builddir import CARD, BuildDir
from ihbench.dataset.errors import MissingFileError, UsageError

from .hub import PublishPlan, check_repo_id, upload

IGNORED = [".*", "**/.*", "*.lock", "**/__pycache__/**"]


def check_readable(folder: Path) -> int:
    from ihbench.dataset import load_items

    if not BuildDir(folder).has_card():
        raise MissingFileError(f"{folder}: no {CARD}; publish a folder written by `ihbench build`")
    try:
        items = load_items(str(folder))
    except Exception as error:
        raise UsageError(f"{folder}: the toolkit cannot read this dataset ({type(error).__name__}: {error}); "
                         "nothing was uploaded") from None
    if not items:
        raise UsageError(f"{folder}: no interruption points; nothing was uploaded")
    return len(items)


def publish_dataset(data_dir, repo_id: str, *, private: bool = False, dry_run: bool = False,
                    token: Optional[str] = None, api=None) -> PublishPlan:
    folder = Path(data_dir).resolve()
    check_repo_id(repo_id)
    if not folder.is_dir():
        raise MissingFileError(f"{data_dir}: not a directory")
    check_readable(folder)
    files = BuildDir(folder).files()
    plan = PublishPlan(folder.name, repo_id, "dataset", folder, files)
    if not dry_run:
        upload(plan, api=api, token=token, private=private, ignore_patterns=IGNORED)
    return plan
