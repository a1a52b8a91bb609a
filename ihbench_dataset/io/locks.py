"""One writer per directory: an exclusive lock held for the life of a command, gone when it ends.

`flock` locks belong to the open file, so the kernel releases them when the holder exits, however
it exits: a lock left by a killed process is simply free again (taken over by the next writer, who
removes it in its turn). The lock file keeps the holder's pid and command, so a refused second
writer can say who holds it.

The holder removes the file when it is done, while it still holds the lock, so nothing is left
behind. That is safe because a writer only counts a lock as taken once the file it locked is still
the one at the path (same device and inode): a writer that opened the file just before it was
removed locks a file nobody can see any more, notices, and starts again on the path's new file.
Two writers can therefore never each hold "the" lock of one path.
"""
from __future__ import annotations

import errno
import fcntl
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Union

from ..errors import IHBenchError


class LockedError(IHBenchError, RuntimeError):
    """Another process is writing to the same place."""


def lock_file_for(target: Union[str, Path]) -> Path:
    """The lock of a file or directory that is replaced as a whole: a hidden sibling."""
    target = Path(target)
    return target.parent / f".{target.name}.lock"


def holder(lock_path: Union[str, Path]) -> Optional[str]:
    """Who holds the lock at `lock_path` ("pid N: ihbench run ..."), or None when nobody does; looks
    without making the file or taking the lock from anyone."""
    try:
        descriptor = os.open(lock_path, os.O_RDONLY)
    except OSError:  # no lock file: no writer
        return None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.pread(descriptor, 512, 0).decode("utf-8", "replace").strip() or "an unknown process"
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return None
    finally:
        os.close(descriptor)


def _lock(lock_path: Path, what: str) -> int:
    """An open descriptor of the file at `lock_path`, locked; LockedError when another process holds it."""
    while True:
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                holder = os.pread(descriptor, 512, 0).decode("utf-8", "replace").strip() or "an unknown process"
                raise LockedError(f"{what} is in use by another process ({holder}); wait for it to finish, "
                                  f"or stop it and run the command again") from None
            if _same_file(descriptor, lock_path):
                return descriptor
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)  # its holder removed it after we opened it: lock the path's file now


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        at_path = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(descriptor)
    return (mine.st_dev, mine.st_ino) == (at_path.st_dev, at_path.st_ino)


@contextmanager
def exclusive(lock_path: Union[str, Path], what: str) -> Iterator[None]:
    lock_path = Path(lock_path)
    descriptor = _lock(lock_path, what)
    try:
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"pid {os.getpid()}: {' '.join(Path(sys.argv[0]).name.split() + sys.argv[1:3])}\n"
                  .encode(), 0)
        yield
    finally:
        try:
            if _same_file(descriptor, lock_path):  # always, unless someone removed it by hand
                os.unlink(lock_path)  # while we hold it: whoever opened it meanwhile will see it gone
        finally:
            os.close(descriptor)  # releases the lock
