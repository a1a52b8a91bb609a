"""Judgments cached in sqlite: judging the same run again costs no call.

The key hashes only what changes a verdict: the judge backend's full identity (model name, server
URL, temperature, structured-output mode: two servers that both call their model "default" are
different judges), the prompt hash, axis, the exact inputs (context, criterion or criteria,
responses in their order) and the epoch.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Optional

from ihbench.dataset.io import cache_root


def default_cache_path() -> Path:
    return cache_root() / "judge_cache.sqlite"


def cache_key(judge: dict, prompt_hash: str, axis: str, messages: list[dict], epoch: int) -> str:
    """`judge`: the backend's `describe()`."""
    payload = json.dumps([judge, prompt_hash, axis, messages, epoch], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class JudgeCache:
    def __init__(self, path: Optional[Path] = None):
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        # WAL + NORMAL: a commit does not wait for the disk. A crash can lose the last few cached
        # verdicts (they are also in judgments.jsonl, fsynced), never corrupt the cache.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS judgments (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> Optional[dict]:
        row = self._db.execute("SELECT value FROM judgments WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict) -> None:
        self._db.execute("INSERT OR REPLACE INTO judgments (key, value) VALUES (?, ?)", (key, json.dumps(value)))
        self._db.commit()

    def close(self) -> None:
        self._db.close()
