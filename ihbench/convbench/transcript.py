"""A run's conversations in the reference harness's own files, so its analysis tools read our runs:

    RUN/epoch_<e>/transcript.jsonl   one line per turn, the reference's fields
    RUN/epoch_<e>/runtime.json       {model_name, turns, note} (+ mode for rehydrated runs, status)

Both are made again from `responses.jsonl` after every conversation, and when a run stops on a
failure, so they always say what the records say; a turn that failed is left out (the reference
writes none either) and `runtime.json` carries `status` and `error`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ihbench.dataset.io import write_atomic, write_json_atomic

from .records import TurnRecord, utc_stamp
from .session import ENDED, ENDED_EARLY

NOTE = "runtime-only; scoring is performed post-run"


def transcript_line(record: TurnRecord, model_name: str) -> dict:
    marker = {"ended_session": ENDED, "ended_early": ENDED_EARLY}.get(record.status)
    return {
        "ts": record.time or utc_stamp(),
        "turn": record.turn,
        "model_name": model_name,
        "user_text": record.user_text,
        "assistant_text": marker or record.text,
        "tool_calls": [{"name": c["name"], "args": c["args"], **({"is_duplicate": True} if c["is_duplicate"] else {})}
                       for c in record.tool_calls],
        "tool_results": [{"name": c["name"], "response": {"tool_call_id": c["id"], "result": c["result"],
                                                          "properties": None, "is_duplicate": c["is_duplicate"]}}
                         for c in record.tool_calls],
        "tokens": None if record.input_tokens is None else {
            "prompt_tokens": record.input_tokens, "completion_tokens": record.output_tokens,
            "total_tokens": record.input_tokens + (record.output_tokens or 0),
            "cache_read_input_tokens": None, "cache_creation_input_tokens": None},
        "ttfb_ms": None if record.ttfb_s is None else round(record.ttfb_s * 1000),
        "latency_ms": round(record.latency_s * 1000),
        "reconnection_count": 0,
    }


def write_transcript(folder: Path, records: list[TurnRecord], model_name: str, *, mode: str, status: str,
                     error: Optional[str] = None, attempted: Optional[int] = None) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    done = sorted((r for r in records if r.done), key=lambda r: r.turn)
    lines = "".join(json.dumps(transcript_line(r, model_name), ensure_ascii=False) + "\n" for r in done)
    write_atomic(folder / "transcript.jsonl", lines.encode("utf-8"))
    runtime = {"model_name": model_name, "turns": len(done), "note": NOTE, "status": status}
    if mode == "rehydrated":
        runtime.update(mode="rehydrated", total_attempted=attempted, failed_turns=sorted(
            r.turn for r in records if not r.done))
    if error:
        runtime["error"] = error
    write_json_atomic(folder / "runtime.json", runtime)
