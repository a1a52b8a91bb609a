"""Parquet files named by their bytes (`dev-<sha256 prefix>.parquet`) and named exactly in the card.

`datasets` keys a local folder's cache on the card's file paths, not on the files' contents: a
folder deleted and written again with new data under the same names is read back from the old
cache. A name that changes with the bytes makes every `load_dataset` see what is on disk.
"""
from __future__ import annotations

import hashlib
from pathlib import Path


def name_by_content(written: Path, split: str) -> Path:
    """Rename a finished file in its folder to `<split>-<hash>.parquet`; returns the new path."""
    digest = hashlib.sha256()
    with written.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    final = written.with_name(f"{split}-{digest.hexdigest()[:16]}.parquet")
    written.rename(final)
    return final


def split_of(path: Path) -> str:
    """The split a file named by `name_by_content` (or an older `dev.parquet`) holds."""
    return path.name.split("-")[0].split(".")[0]
