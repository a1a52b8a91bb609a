"""Folders a command makes for its output, and nothing left behind when it wrote nothing there."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union


@contextmanager
def new_folders(path: Union[str, os.PathLike]) -> Iterator[Path]:
    """`path`, made with any missing parents; when the block ends (however it ends) the folders made
    here that are still empty are removed again, deepest first: a command refused, or one that
    failed before writing anything, leaves no empty folder behind. A folder that was there before,
    or that holds anything now (another writer's lock included), stays."""
    path = Path(path)
    made = []
    for folder in reversed([path, *path.parents]):
        if not os.path.lexists(folder):
            made.append(folder)
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    finally:
        for folder in reversed(made):
            try:
                folder.rmdir()
            except OSError:  # not empty (or gone): it is kept, and so are its parents
                break
