"""Finished configs kept next to the TTS renders, keyed by everything that made them.

Turning a few hundred MB of audio into Arrow rows and Parquet again on every rebuild cost more
than the rest of a cached rebuild together (`benchmarks/build.py`). A builder whose inputs, code
and writer versions are all unchanged would write the same bytes, so the build links (or copies)
the files it wrote last time instead. The key covers the source of the whole data layer, so editing
the code that makes a row can never hand back a stale file.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Iterable, Optional, Union

from .io import staging_folder

#: entries kept per builder: the current inputs and the previous ones, so switching between two
#: source sets (a branch and main) stays fast without the cache growing by ~0.7 GB per edit
KEEP = 2
MANIFEST = "manifest.json"


def source_digest() -> str:
    """The source of every module of the data layer (this package, found by walking it, so a new
    module is covered without anyone listing it): what a build's rows and mixes follow from."""
    digest = hashlib.sha256()
    for path in sorted(str(p) for p in Path(__file__).parent.rglob("*.py")):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def builder_code() -> str:
    """The data layer's source and the versions of the libraries that encode the Parquet bytes."""
    from importlib.metadata import version

    return source_digest() + f"/pyarrow {version('pyarrow')}/datasets {version('datasets')}"


class ConfigCache:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.code = builder_code()

    def key(self, builder: str, inputs: Iterable[Union[str, bytes]]) -> str:
        digest = hashlib.sha256(f"{self.code}\x1f{builder}".encode())
        for part in inputs:
            digest.update(b"\x1e")
            digest.update(part if isinstance(part, bytes) else str(part).encode("utf-8"))
        return digest.hexdigest()

    def fetch(self, builder: str, key: str, root: Path) -> Optional[tuple[dict[str, Path], dict]]:
        """Place the entry's files in `root/<config>/` and return ({config: placed file},
        statistics); None, with nothing left in `root`, when the entry is missing, damaged (a file
        gone, of another size, or touched since it was written and no longer the bytes its name's
        hash says: the dataset's files are hard links to these, so an edit there reaches here) or
        pruned by another build meanwhile."""
        entry = self.directory / builder / key
        placed: list[Path] = []
        try:
            manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
            files = {config: entry / config / record[0] for config, record in manifest["files"].items()}
            if any(_damaged(files[config], *record[1:]) for config, record in manifest["files"].items()):
                return None
            _mark_used(entry)  # before placing: pruning by a concurrent build now spares it
            for config, source in files.items():
                (root / config).mkdir(parents=True)
                placed.append(root / config)
                place(source, root / config / source.name)
            return {config: root / config / source.name for config, source in files.items()}, manifest["statistics"]
        except (OSError, ValueError, KeyError, TypeError):
            for folder in placed:
                shutil.rmtree(folder, ignore_errors=True)
            return None

    def put(self, builder: str, key: str, files: dict[str, Path], statistics: dict) -> None:
        """Best effort: a full disk or a read-only cache costs the next rebuild time, never this build."""
        entry = self.directory / builder / key
        try:
            with staging_folder(entry) as work:
                for config, path in files.items():
                    (work / config).mkdir()
                    place(path, work / config / path.name)
                manifest = {"files": {config: (path.name, path.stat().st_size, path.stat().st_mtime_ns)
                                      for config, path in files.items()},
                            "statistics": statistics}
                (work / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
            _mark_used(entry)
        except OSError:
            return
        self._prune(builder)

    def _prune(self, builder: str) -> None:
        entries = []
        for entry in (self.directory / builder).iterdir():
            if entry.name.startswith("."):
                continue  # another build's entry, still being written
            try:
                entries.append(((entry / MANIFEST).stat().st_mtime_ns, entry))
            except OSError:
                continue
        for _, entry in sorted(entries, reverse=True)[KEEP:]:
            shutil.rmtree(entry, ignore_errors=True)


def _damaged(file: Path, size: int, mtime_ns: Optional[int] = None) -> bool:
    """Another size, or touched since it was written (an entry of an older toolkit has no time) and
    no longer the bytes the hash in its name says: hashed only then, so an untouched entry costs a stat."""
    from .content_names import changed_since_named

    stat = file.stat()
    if stat.st_size != size:
        return True
    return stat.st_mtime_ns != mtime_ns and changed_since_named(file) is not None


def _mark_used(entry: Path) -> None:
    """An explicit time: the file system's own clock is coarse enough (milliseconds) that two
    builds in a row could tie, and pruning would then keep the wrong one."""
    now = time.time_ns()
    try:
        os.utime(entry / MANIFEST, ns=(now, now))
    except OSError:
        pass  # a read-only cache is still read


def place(source: Path, target: Path) -> None:
    """A hard link costs nothing and Parquet files are never written in place; across file
    systems (cache on another disk) it is a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
