"""The seed of one record: runs (item, epoch), judges (the TF order) and generation (a call) derive
theirs from the user's base seed here, so a resume, a re-judge or a rerun draws the same numbers."""
from __future__ import annotations

import hashlib


def record_seed(seed: int, item_id: str, epoch: int) -> int:
    """A seed per (item, epoch), stable across resumes and independent of run order."""
    digest = hashlib.sha256(f"{seed}:{item_id}:{epoch}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
