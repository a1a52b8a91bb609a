"""Files and folders replaced whole: a reader, or a command run again after `kill -9`, finds the
old version or the new one, never part of either.

A file is written to a hidden temporary sibling, `.NAME.PID.tmp` (no `*.json` or `*.parquet`
pattern matches it, and the folder's writer may sweep what a killed process left by the `.tmp`
suffix), made durable (fsync) and renamed over its target; on any error the temporary file is
removed and the target is as it was.

A folder is filled in a hidden working sibling, `.NAME.building-PID`, and swapped in place of its
target whole: in one step where the system can (Linux `renameat2(RENAME_EXCHANGE)`), else by
renaming the old folder aside (`.NAME.old-PID`) first. On any error the working folder is removed
and the target is as it was.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union

PathLike = Union[str, os.PathLike]


def temporary_sibling(target: PathLike) -> Path:
    """Where `target`'s next version is written before it replaces `target`."""
    target = Path(target)
    return target.parent / f".{target.name}.{os.getpid()}.tmp"


@contextmanager
def atomic_path(target: PathLike) -> Iterator[Path]:
    """A path for writers that want a file name (Parquet, soundfile): the caller writes it in the
    block; when the block ends without error the file is synced and renamed over `target`."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_sibling(target)
    try:
        yield temporary
        _fsync(temporary)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)  # gone already after the rename


def write_atomic(target: PathLike, data: Union[bytes, str]) -> Path:
    """Replace `target` with `data` (text as UTF-8, newlines as given)."""
    with atomic_path(target) as temporary:
        temporary.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(target)


def write_json_atomic(target: PathLike, data) -> Path:
    """`data` as indented UTF-8 JSON and a final newline (run.json, summary.json, sources), with what the version it
    replaces hid still hidden: a command run again in a shell without the secret variable whose value an earlier run
    hid wrote it out in clear (battery 59, F2: run.json; battery 60, G6: generate.json; battery 61, H14: sid's
    summary.json). One rule for every record a command writes again (`redaction.hidden_as_before`)."""
    from ..redaction import hidden_as_before

    try:
        before = json.loads(Path(target).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):  # none yet, or not JSON (its reader says so): nothing was hidden in it
        before = None
    return write_atomic(target, json.dumps(hidden_as_before(before, data), indent=2, ensure_ascii=False) + "\n")


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@contextmanager
def staging_folder(target: PathLike) -> Iterator[Path]:
    """An empty working folder beside `target` for the caller to fill; when the block ends without
    error it takes `target`'s place (the previous folder, if any, is deleted). Working folders that
    killed writers left beside `target` are removed first (`remove_stale_staging`): a killed
    set-baseline or export left a hidden copy of a dataset that no later run removed."""
    target = Path(target)
    remove_stale_staging(target)
    work = target.parent / f".{target.name}.building-{os.getpid()}"
    try:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        yield work
        _swap_in(work, target)
    except BaseException:
        _remove_for_certain(work)
        raise


def _remove_for_certain(folder: Path) -> None:
    """`folder` removed even when a second stop (SIGTERM, Ctrl-C) lands while it is being removed:
    the first stop is the one that is reported, and the hidden folder is not left behind half-deleted."""
    while True:
        try:
            shutil.rmtree(folder, ignore_errors=True)
            return
        except KeyboardInterrupt:  # the CLI's SIGTERM is one too
            continue


def _swap_in(work: Path, target: Path) -> None:
    if not os.path.lexists(target):
        os.replace(work, target)
    elif _exchange(work, target):
        shutil.rmtree(work, ignore_errors=True)  # it holds the previous folder now
    else:
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
        try:
            os.replace(work, target)
        except BaseException:
            os.replace(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step; False where the system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library without it (glibc before 2.28)
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_cwd, exchange = -100, 2  # AT_FDCWD, RENAME_EXCHANGE
    if renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # a file system without exchange
        return False
    raise OSError(code, os.strerror(code), os.fspath(a), None, os.fspath(b))


def remove_stale_staging(target: PathLike) -> None:
    """Working folders beside `target` left by writers that were killed (their process is gone):
    a build's are hundreds of MB."""
    target = Path(target)
    for kind in ("building", "old"):
        for leftover in target.parent.glob(f".{target.name}.{kind}-*"):
            pid = leftover.name.rsplit("-", 1)[-1]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                shutil.rmtree(leftover, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
