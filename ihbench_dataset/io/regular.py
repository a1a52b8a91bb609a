"""Files the toolkit reads whole must be regular files: a device (/dev/zero) is read for ever and
fills the memory, a named pipe waits for ever for a writer, a folder cannot be read at all. Each
reader asks `irregular` first and refuses in one line naming the file and what it is."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Optional, Union

from ..errors import IHBenchError


class IrregularFileError(IHBenchError, ValueError):
    """A file to read that is a folder, a device, a named pipe or a socket."""


def irregular(path: Union[str, os.PathLike]) -> Optional[str]:
    """What `path` is when it is there but not a regular file (a link is followed), else None: a missing
    path is its reader's to name."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:  # a link to nothing is missing, its reader's to name; a loop is said as one
        return "a symlink loop (its links point at each other)" if error.errno == errno.ELOOP else None
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else \
        "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else \
        "not a regular file"
    link = f" (a link to {os.readlink(path)})" if Path(path).is_symlink() else ""
    return f"{kind}{link}"


def check_regular(path: Union[str, os.PathLike], what: str = "a file", error: type[Exception] = IrregularFileError) -> None:
    """Refuses `path` when it is there but not a regular file, before anything reads it."""
    kind = irregular(path)
    if kind is not None:
        raise error(f"{path}: is {kind}, not {what} (nothing can be read from it as one); replace it with the file, "
                    "or remove it")


def absent(path: Union[str, os.PathLike]) -> str:
    """How a path that cannot be read as a file is said: missing, a link to nothing, or what it is
    instead (a folder, a named pipe, a device, a socket), never a list of what it might be."""
    if not os.path.lexists(path):
        return "not found"
    kind = irregular(path)
    if kind is not None:
        return f"{kind}, not a regular file"
    if Path(path).is_symlink() and not os.path.exists(path):
        return f"a link to nothing (to {os.readlink(path)})"
    return "not readable as a file"


def check_inside(path: Path, root: Path, error: type[Exception]) -> None:
    """Refuses `path`, a file of a folder a user downloaded (a benchmark), when it is a link leading out
    of that folder: followed, an import would take in any file of the machine (a token linked as a
    knowledge base or a clip lands in the dataset, and `publish-dataset` uploads it). One rule for
    every importer; a path that stays inside (or is not there) passes."""
    if not os.path.lexists(path):
        return
    try:
        target = Path(path).resolve()
    except (RuntimeError, OSError):  # Python 3.11 raises RuntimeError on a loop (battery 65, L12: a traceback)
        raise error(f"{path}: is a symlink loop (its links point at each other); put the file itself in the "
                    "benchmark's folder") from None
    if not target.is_relative_to(Path(root).resolve()):
        raise error(f"{path}: a link to {target}, outside {root}; put the file itself in the benchmark's folder")
