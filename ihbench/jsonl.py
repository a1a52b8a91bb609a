"""Append-only JSONL logs that survive crashes: the run directory's responses and judgments.

Every record is flushed and fsynced before the next is produced, so after `kill -9` the file
holds every finished record plus at most one torn last line, which `read_records` repairs
(truncates) before the run appends again. A damaged line anywhere else is not guessed at.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Callable, Iterable, Optional

from ihbench.dataset.errors import IHBenchError

log = logging.getLogger("ihbench")


class CorruptLogError(IHBenchError, ValueError):
    pass


def read_records(path: Path, *, repair: bool = False,
                 check: Optional[Callable[[dict], Optional[str]]] = None) -> list[dict]:
    """All complete records. A torn final line (no newline) is cut off when `repair` is set (only
    the file's writer, holding its lock, may do that) and otherwise ignored: a reader may be looking
    at a line still being written. `check(record)` returns why a record is unusable, or None; such
    a record is reported (file and line, on the `ihbench` logger) and left out, so nothing built on
    it counts as done."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data) and repair:
        with open(path, "r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
    data = data[:end]
    records = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise CorruptLogError(f"{path}: line {number} is not valid JSON ({error.msg}); "
                                  "the file was edited or damaged, not torn by a crash") from None
        problem = "not a JSON object" if not isinstance(record, dict) else (check(record) if check else None)
        if problem:
            log.warning("%s line %d: %s; the record is left out and will be redone", path, number, problem)
            continue
        records.append(record)
    return records


class AppendLog:
    """Open once, append records one by one, each durable before `append` returns."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: Optional[object] = None

    def __enter__(self) -> "AppendLog":
        self._handle = open(self.path, "a", encoding="utf-8")
        return self

    def __exit__(self, *exc) -> None:
        self._handle.close()

    def append(self, record: dict) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def extend(self, records: Iterable[dict]) -> None:
        for record in records:
            self.append(record)


def write_json_atomic(path: Path, data: dict) -> None:
    path = Path(path)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
