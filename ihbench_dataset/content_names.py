"""Parquet files named by their bytes (`dev-<sha256 prefix>.parquet`) and named exactly in the card.

`datasets` keys a local folder's cache on the card's file paths, not on the files' contents: a
folder deleted and written again with new data under the same names is read back from the old
cache. A name that changes with the bytes makes every `load_dataset` see what is on disk.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Optional

#: the hash part of a content name: `dev-69079664e7792117.parquet`
_NAMED = re.compile(r"^[^-]+-([0-9a-f]{16})\.parquet$")
_MATCHED: set[tuple] = set()  # files seen to match their names, as (path, size, mtime, inode): hashed once a process


def content_hash(path: Path) -> str:
    """The first 16 hex digits of the file's sha256: what its content name holds."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def name_by_content(written: Path, split: str) -> Path:
    """Rename a finished file in its folder to `<split>-<hash>.parquet`; returns the new path."""
    final = written.with_name(f"{split}-{content_hash(written)}.parquet")
    written.rename(final)
    return final


def hash_in_name(path: Path) -> Optional[str]:
    """The hash a content name holds; None for a file named otherwise (the Hub's `test-00000-of-00001`)."""
    match = _NAMED.match(Path(path).name)
    return match.group(1) if match else None


def changed_since_named(path: Path) -> Optional[str]:
    """The file's hash when its bytes no longer match the hash in its name (edited or damaged since it
    was written), else None. `datasets` caches a local folder under its file names, so such a file
    would be read back as it was, not as it is; a file named otherwise is not checked here."""
    named = hash_in_name(path)
    if named is None:
        return None
    stat = Path(path).stat()
    seen = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if seen in _MATCHED:
        return None
    actual = content_hash(path)
    if actual != named:
        return actual
    _MATCHED.add(seen)
    return None


def split_of(path: Path) -> str:
    """The split a file named by `name_by_content` (or an older `dev.parquet`) holds."""
    return path.name.split("-")[0].split(".")[0]
