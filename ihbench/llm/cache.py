"""LLM answers cached in sqlite: asking the same question again costs no call.

The key hashes only what changes an answer: the backend's full identity (`describe()`: model
name, server URL, temperature, structured-output mode; two servers that both call their model
"default" are different LLMs), the prompt hash, the task (a judge axis, "review",
"generate/<agent>"), the exact messages and the epoch. Judging, review and generation share one
file, `judge_cache.sqlite` under `$IHBENCH_CACHE` (default `~/.cache/ihbench`), whose name and
table are kept from the judge-only days so existing caches keep their hits.

Each entry records when it was last used (`used`, seconds since the epoch), so `prune_cache`
can drop what nobody asked for lately; entries from before that column existed count as used
when this version first opened the file.

An entry that cannot be used (its value is not JSON, or not of the shape its reader needs: a file
damaged or edited by hand) is a miss, never a crash nor a score: it is removed, asked again, and
said in one warning per command (`LLMCache.discard`, `report_unusable`).
"""
from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import cache_root
from ihbench.dataset.outputs import check_cache_path

__all__ = ["CacheFileError", "LLMCache", "cache_info", "cache_key", "default_cache_path", "prune_cache"]

log = logging.getLogger("ihbench")

_TABLE = "judgments"  # the on-disk name since the cache served judges only


def default_cache_path() -> Path:
    return cache_root() / "judge_cache.sqlite"


def cache_key(llm: dict, prompt_hash: str, task: str, messages: list[dict], epoch: int) -> str:
    """`llm`: the backend's `describe()`."""
    payload = json.dumps([llm, prompt_hash, task, messages, epoch], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CacheFileError(UsageError):
    """A cache path that is not an LLM answer cache: a folder, a file of another kind, another
    program's database. Nothing is written to it."""


class LLMCache:
    def __init__(self, path: Optional[Path] = None, *, clock: Callable[[], float] = time.time,
                 read_only: bool = False):
        """`read_only`: for looking only (`cache info`): the file is opened so that SQLite cannot
        write to it, and nothing is made or upgraded in it (an empty file stays an empty file)."""
        self.path = Path(path) if path else default_cache_path()
        self.read_only = read_only
        if self.path.is_dir():
            raise CacheFileError(f"{self.path}: is a folder; the cache is one SQLite file "
                                 f"(e.g. {self.path / default_cache_path().name})")
        if not read_only:  # never written inside a dataset folder: it would be uploaded (looking is harmless)
            check_cache_path(self.path, "--cache" if path else "IHBENCH_CACHE (its judge_cache.sqlite)", file=True,
                             writes=True)
        self._clock = clock
        self._db: Optional[sqlite3.Connection] = None
        self.empty = False  # read-only: the file holds no table yet (a new or 0-byte file)
        self.unusable = 0  # entries found unusable (and removed) since the last warning said so
        self._watch = None  # the async generator whose closing at the event loop's end says them
        if self.path.exists():  # checked now, so a wrong --cache is refused before any work
            self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The database, made on the first answer stored when the file is new: a command refused
        after opening its cache leaves no cache file (nor folder) behind."""
        if self._db is not None:
            return self._db
        try:
            if self.read_only:
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                           timeout=BUSY_SECONDS)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, timeout=BUSY_SECONDS)
            self._open()
        except OSError as error:  # its folder went away or turned read-only since it was checked
            raise CacheFileError(f"{self.path}: cannot be made ({error.strerror or error})") from None
        except sqlite3.DatabaseError as error:
            self.close()  # with the side files a read-only look made: refused, the file is left as it was
            if _locked(error):
                raise CacheFileError(_locked_message(self.path)) from None
            if isinstance(error, sqlite3.OperationalError):
                raise CacheFileError(f"{self.path}: cannot be opened as the LLM answer cache ({error})") from None
            raise CacheFileError(f"{self.path}: not an SQLite database ({error}); give the cache's own file or a "
                                 "new file name") from None
        except CacheFileError:
            self.close()
            raise
        return self._db

    def _open(self) -> None:
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and _TABLE not in tables:  # another program's database: leave it as it is
            raise CacheFileError(f"{self.path}: an SQLite database, but not an LLM answer cache "
                                 f"(its tables: {', '.join(sorted(tables)[:5])}); give the cache's own file or a new "
                                 "file name")
        if self.read_only:
            self.empty = not tables
            if tables:
                self._check_columns()
            return
        # WAL + NORMAL: a commit does not wait for the disk. A crash can lose the last few cached
        # answers (judge verdicts are also in judgments.jsonl, fsynced), never corrupt the cache.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"CREATE TABLE IF NOT EXISTS {_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL, used REAL)")
        if "used" not in self._check_columns():  # a cache written before last use was recorded
            self._db.execute(f"ALTER TABLE {_TABLE} ADD COLUMN used REAL")
            self._db.execute(f"UPDATE {_TABLE} SET used = ?", (self._clock(),))
        self._db.commit()

    def _check_columns(self) -> set:
        columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({_TABLE})")}
        if not {"key", "value"} <= columns:
            raise CacheFileError(f"{self.path}: its table {_TABLE!r} is not an LLM answer cache's (columns: "
                                 f"{', '.join(sorted(columns))})")
        return columns

    def get(self, key: str) -> Optional[Any]:
        if self._db is None and not self.path.exists():
            return None  # nothing stored yet, and nothing made for a lookup
        with damaged_as_error(self.path):
            row = self._connect().execute(f"SELECT value FROM {_TABLE} WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            self._db.execute(f"UPDATE {_TABLE} SET used = ? WHERE key = ?", (self._clock(), key))
            self._db.commit()
        try:
            return json.loads(row[0])
        except (ValueError, TypeError):  # not JSON (a damaged file, an edit by hand): asked again
            self.discard(key)
            return None

    def discard(self, key: str) -> None:
        """Removes an entry its reader cannot use (not JSON, or not of the shape the reader's answers
        have), so the fresh answer takes its place, and counts it for the command's one warning
        (`report_unusable`)."""
        if not self.read_only:
            with damaged_as_error(self.path):
                self._connect().execute(f"DELETE FROM {_TABLE} WHERE key = ?", (key,))
                self._db.commit()
        self.unusable += 1

    async def report_unusable_at_loop_end(self) -> None:
        """Arranges for `report_unusable` to run once the running event loop ends: `asyncio.run`
        closes the async generators still open (`shutdown_asyncgens`), so the unusable entries one
        command met are said in one line, with their number, before the command's summary. Later
        calls while that is arranged do nothing."""
        if self._watch is not None:
            return
        async def watch():
            try:
                yield
            finally:
                self._watch = None
                self.report_unusable()

        self._watch = watch()
        await self._watch.__anext__()

    def report_unusable(self) -> None:
        """One warning naming the file and how many of its answers could not be used since the last one."""
        if self.unusable:
            log.warning(f"{self.path}: {self.unusable} cached answer(s) could not be read (damaged or edited by "
                        "hand); asked again")
            self.unusable = 0

    def put(self, key: str, value: Any) -> None:
        with damaged_as_error(self.path):
            self._connect().execute(f"INSERT OR REPLACE INTO {_TABLE} (key, value, used) VALUES (?, ?, ?)",
                                    (key, json.dumps(value), self._clock()))
            self._db.commit()

    def close(self) -> None:
        """A read-only connection to a WAL database makes its -wal and -shm side files but, unlike a
        writer's, cannot remove them when it closes: a writable connection is opened and closed after
        it, and SQLite removes them itself (the log checkpointed first) when that is the last connection;
        another process using the cache keeps them, as it must. Side files an older toolkit left go too.
        A file refused when opened (damaged, another program's) is closed here too: a writer's
        connection takes its side files with it, a read-only one (`cache info`, `cache prune`) left
        them beside the file it refused."""
        self.report_unusable()  # a caller that closes its cache before its event loop ends
        if self._db is None:
            return
        self._db.close()
        self._db = None
        if self.read_only and any(side.exists() for side in _side_files(self.path)):
            try:
                tidy = sqlite3.connect(self.path)
                try:
                    tidy.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
                finally:
                    tidy.close()
            except sqlite3.Error:  # a folder we may not write to: the files stay, as SQLite leaves them
                pass


@contextmanager
def damaged_as_error(path: Path) -> Iterator[None]:
    """A cache file that SQLite opens but finds damaged inside ("database disk image is malformed"),
    or that another program holds locked past BUSY_SECONDS, is one line naming the file, not a
    traceback; other operational errors (a disk that failed) stay as they are."""
    try:
        yield
    except sqlite3.DatabaseError as error:
        if _locked(error):
            raise CacheFileError(_locked_message(path)) from None
        if isinstance(error, sqlite3.OperationalError):
            raise
        raise CacheFileError(f"{path}: a damaged SQLite database ({error}); delete it (its answers are asked "
                             "again) or give another --cache") from None


#: how long a command waits for another writer of its cache (other ihbench commands sharing the
#: cache write for milliseconds; a program holding it longer has it open in a write of its own)
BUSY_SECONDS = 30.0


def _locked(error: sqlite3.DatabaseError) -> bool:
    return isinstance(error, sqlite3.OperationalError) and "locked" in str(error)


def _locked_message(path: Path) -> str:
    return (f"{path}: the cache is locked by another program (waited {BUSY_SECONDS:g} s: an SQLite shell or browser "
            "with a write open?); close it there, or give another --cache; the same command goes on from what is "
            "written")


def _side_files(path: Path) -> tuple[Path, Path]:
    """SQLite's write-ahead log and its index, beside the database while a connection has it open."""
    return Path(f"{path}-wal"), Path(f"{path}-shm")


def _size_on_disk(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, *_side_files(path)) if p.exists())


_LAST_SECOND = 253402300799  # 9999-12-31T23:59:59Z, the last time `datetime` can show


def _when(seconds: Optional[float]) -> Optional[str]:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def cache_info(path: Optional[Path] = None) -> dict:
    """Entries, bytes on disk (the database and its WAL files), the oldest and newest last use
    (ISO 8601, UTC) and how many entries cannot be read (not JSON: asked again when a command meets
    them). A missing file is an empty cache; it is not created."""
    path = Path(path) if path else default_cache_path()
    if not path.exists():
        return {"path": str(path), "exists": False, "entries": 0, "bytes": 0, "oldest_use": None, "newest_use": None,
                "unreadable": 0}
    cache = LLMCache(path, read_only=True)
    try:
        with damaged_as_error(path):
            entries, oldest, newest, unreadable = 0, None, None, 0
            if not cache.empty:
                # from before `used` was kept: none; a damaged one (text, a time past year 9999) is no last use
                used = (f"CASE WHEN typeof(used) IN ('integer', 'real') AND used BETWEEN 0 AND {_LAST_SECOND} "
                        "THEN used END") if "used" in cache._check_columns() else "NULL"
                entries, oldest, newest = cache._db.execute(
                    f"SELECT COUNT(*), MIN({used}), MAX({used}) FROM {_TABLE}").fetchone()
                unreadable = _unreadable(cache._db)
    finally:
        cache.close()
    return {"path": str(path), "exists": True, "empty": cache.empty, "entries": entries,
            "bytes": _size_on_disk(path), "oldest_use": _when(oldest), "newest_use": _when(newest),
            "unreadable": unreadable}


def _unreadable(db: sqlite3.Connection) -> int:
    """The entries whose value `LLMCache.get` cannot read: SQLite's own `json_valid` picks the
    candidates in one pass (Python's reader is the judge of each: it also reads NaN, which SQLite's
    strict JSON does not); an SQLite without JSON functions has every value read in Python."""
    def unreadable(values) -> int:
        count = 0
        for (value,) in values:
            try:
                json.loads(value)
            except (ValueError, TypeError):
                count += 1
        return count

    try:
        return unreadable(db.execute(f"SELECT value FROM {_TABLE} WHERE NOT json_valid(value)"))
    except sqlite3.OperationalError as error:
        if "json_valid" not in str(error):
            raise
        return unreadable(db.execute(f"SELECT value FROM {_TABLE}"))


def prune_cache(path: Optional[Path] = None, *, older_than_days: Optional[float] = None,
                max_entries: Optional[int] = None, clock: Callable[[], float] = time.time) -> int:
    """Removes the entries not used for `older_than_days`, then the least recently used beyond
    `max_entries`; returns how many were removed. The file shrinks on disk (VACUUM) when any was."""
    if older_than_days is None and max_entries is None:
        raise UsageError("prune needs --older-than DAYS and/or --max-entries N")
    if older_than_days is not None and older_than_days < 0:
        raise UsageError(f"--older-than: must be >= 0 days, got {older_than_days}")
    if max_entries is not None and max_entries < 0:
        raise UsageError(f"--max-entries: must be >= 0, got {max_entries}")
    path = Path(path) if path else default_cache_path()
    if not path.exists() or cache_info(path)["empty"]:
        return 0  # nothing to remove, and nothing made of an empty file
    cache = LLMCache(path, clock=clock)
    db = cache._db
    removed = 0
    try:
        with damaged_as_error(path):
            if older_than_days is not None:
                removed += db.execute(f"DELETE FROM {_TABLE} WHERE used < ?",
                                      (clock() - older_than_days * 86400,)).rowcount
            if max_entries is not None:
                removed += db.execute(f"DELETE FROM {_TABLE} WHERE key NOT IN (SELECT key FROM {_TABLE} "
                                      "ORDER BY used DESC, rowid DESC LIMIT ?)", (max_entries,)).rowcount
            db.commit()
            if removed:
                db.execute("VACUUM")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        cache.close()
    return removed
