"""One writer per directory: an exclusive lock held for the life of a command.

`flock` locks belong to the open file, so the kernel releases them when the holder exits, however
it exits: a lock left by a killed process is simply free again (taken over, nothing to clean up).
The lock file keeps the holder's pid and command, so a refused second writer can say who holds it.
The file itself stays (deleting it while another process waits on it would let two processes
lock two different files).
"""
from __future__ import annotations

import errno
import fcntl
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union

from ..errors import IHBenchError


class LockedError(IHBenchError, RuntimeError):
    """Another process is writing to the same place."""


def lock_file_for(target: Union[str, Path]) -> Path:
    """The lock of a file or directory that is replaced as a whole: a hidden sibling."""
    target = Path(target)
    return target.parent / f".{target.name}.lock"


@contextmanager
def exclusive(lock_path: Union[str, Path], what: str) -> Iterator[None]:
    lock_path = Path(lock_path)
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
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"pid {os.getpid()}: {' '.join(Path(sys.argv[0]).name.split() + sys.argv[1:3])}\n"
                  .encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
