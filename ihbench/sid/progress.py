"""`ihbench sid` clip by clip: each clip's prediction is recorded as it is made, so a detector run
stopped midway (SIGTERM, kill -9, a failed model call) goes on from the clips it has, and an audio LLM's
hundreds of calls are not made again. A clip whose answer is unknown (a failed call) is not kept: the
next run asks it again, and it is never scored.

    OUT/clips.jsonl   one record per clip: {"identity", "audio", "prediction", "calls", "seconds", "failed",
                      "errors", "check"}; the identity is the detector's description, the data and the config;
                      the check, a digest of the rest (an edited prediction is detected again, never scored)
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import UsageError

CLIPS = "clips.jsonl"


def identity_of(description: dict, data: str, config: str) -> str:
    """What the clips kept must have been made with: the detector, its model and options, the data and the
    config; not where the model is served (the same model may come back on another port)."""
    text = json.dumps({"detector": _unserved(description), "data": data, "config": config}, sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _unserved(value):
    if isinstance(value, dict):
        return {k: _unserved(v) for k, v in value.items() if k not in ("base_url", "endpoint")}
    return value


class ClipLog:
    """The clips of one sid output folder done so far (its writer holds the folder's lock)."""

    def __init__(self, folder: Path, identity: str):
        from ihbench.dataset.io import read_records

        self.path, self.identity = Path(folder) / CLIPS, identity
        self.done: dict[str, dict] = {}
        records = read_records(self.path, repair=True, check=_problem) if self.path.exists() else []
        for record in records:
            if record["identity"] != identity:
                raise UsageError(f"--out: {self.path.parent} holds the clips of a stopped `ihbench sid` of another "
                                 "detector, model, options, data or config; give another --out (or remove that "
                                 "folder first)")
            if not record["failed"]:
                self.done[record["audio"]] = record

    def detect(self, detector, clips, names: list[str], *, progress: bool) -> tuple[list[dict], dict]:
        """(predictions in clip order, totals {"calls", "seconds", "failed", "errors", "kept"}); the clips
        done before are taken from the log, every other one is detected and recorded at once."""
        from tqdm.auto import tqdm

        from ihbench.dataset.io import AppendLog
        from ihbench.dataset.schema import SAMPLING_RATE

        from ihbench.dataset.outputs import claim_output

        predictions, totals = [], {"calls": 0, "seconds": 0.0, "failed": 0, "errors": [], "kept": 0}
        kept_any = bool(self.done)
        with AppendLog(self.path) as log:
            for index in tqdm(range(len(names)), unit="clip", desc=detector.name, disable=not progress):
                name = names[index]
                record = self.done.get(name)
                if record is None:
                    record = self._detect(detector, clips[index], name, SAMPLING_RATE)
                    if not record["failed"]:  # a clip whose answer is unknown is asked again: nothing to keep
                        if not kept_any:  # the folder is known as a sid output from its first file on
                            claim_output(self.path.parent, "sid")
                            kept_any = True
                        log.append(record)
                else:
                    totals["kept"] += 1
                predictions.append({"audio": name, **record["prediction"]})
                totals["calls"] += record["calls"]
                totals["seconds"] += record["seconds"]
                totals["failed"] += record["failed"]
                totals["errors"] += record["errors"]
        return predictions, totals

    def _detect(self, detector, samples, name: str, sampling_rate: int) -> dict:
        calls, failed, errors = detector.calls, getattr(detector, "failed_clips", 0), len(getattr(detector, "errors", []))
        started = time.perf_counter()
        prediction = detector.detect(samples, sampling_rate)
        record = {"identity": self.identity, "audio": name, "prediction": prediction,
                  "calls": detector.calls - calls, "seconds": round(time.perf_counter() - started, 6),
                  "failed": getattr(detector, "failed_clips", 0) > failed,
                  "errors": list(getattr(detector, "errors", [])[errors:])}
        return {**record, "check": _check(record)}


def _check(record: dict) -> str:
    """What the record held when the detector made it: a prediction edited by hand (one no model call
    produced) no longer matches, and the clip is detected again, never scored."""
    text = json.dumps({k: v for k, v in record.items() if k != "check"}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _problem(record: dict) -> Optional[str]:
    fields = {"identity": str, "audio": str, "prediction": dict, "calls": int, "seconds": (int, float),
              "failed": bool, "errors": list}
    for name, kind in fields.items():
        if not isinstance(record.get(name), kind):
            return f"field {name!r} missing or of the wrong type"
    if record.get("check") != _check(record):  # written before checks were, or edited since
        return ("its prediction does not match the check the detector wrote with it (edited by hand, or written by "
                "an older ihbench); left out, and detected again")
    return None
