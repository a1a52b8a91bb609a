"""Judge throughput: 1,284 judge calls against a local OpenAI-compatible server answering in
200 ms, at concurrency 16; then the same again from the cache.

Run: .venv/bin/python benchmarks/judge.py [--data DIR]
ideal = calls x latency / concurrency. Targets (issue 5): wall <= 1.2 x ideal; 0 calls cached.
Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from pathlib import Path

from _data import dataset_dir

CALLS, LATENCY, CONCURRENCY = 1284, 0.2, 16


def scripted_answer(body):
    from openai_test_server import Reply

    from ihbench.judge.prompts import TF_SYSTEM

    user = body["messages"][1]["content"]
    if body["messages"][0]["content"] == TF_SYSTEM:
        return Reply(delay=LATENCY, content=json.dumps({"winner": "A", "reasoning": "r", "loser_deficiency":
                                                        "It repeats what the user already heard"}))
    count = len(re.findall(r"^\d+\. ", user.split("## Criteria", 1)[1], re.MULTILINE))
    return Reply(delay=LATENCY, content=json.dumps({"criteria": [{"index": n + 1, "met": True, "reason": "ok"}
                                                                 for n in range(count)]}))


def make_run(data: Path, root: Path) -> Path:
    """A run directory with CALLS / 2 distinct responses, each judged on TF and RQ."""
    from ihbench.dataset import load_items

    from ihbench.dataset.io import AppendLog, write_json_atomic

    items = load_items(data)
    out = root / "run"
    out.mkdir(parents=True)
    write_json_atomic(out / "run.json", {"loader": "none", "model_path": "bench", "data": str(data), "config": None,
                                         "split": None, "modality": "audio", "seed": 0})
    with AppendLog(out / "responses.jsonl") as log:
        for n in range(CALLS // 2):
            item = items[n % len(items)]
            log.append({"id": item.id, "epoch": n // len(items), "response": f"response {n} to {item.id}",
                        "error": None})
    return out


async def judge(run_dir: Path, base_url: str, cache_path: Path, out: Path):
    from ihbench.judge import judge_run
    from ihbench.llm import LLMCache, OpenAICompatibleLLM

    backend = OpenAICompatibleLLM("bench-judge", base_url=base_url, timeout=30)
    try:
        return await judge_run(run_dir, backend, concurrency=CONCURRENCY, cache=LLMCache(cache_path), out=out,
                               progress=False)
    finally:
        await backend.close()


def serve() -> None:
    """The judge server runs in its own process, as a real one would: it must not share our GIL."""
    from openai_test_server import OpenAITestServer

    with OpenAITestServer(respond=scripted_answer) as server:
        print(server.base_url, flush=True)
        while True:
            time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="built dataset directory (default: data/ihbench-dev or a small build)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve()
    import subprocess
    import sys

    root = Path(tempfile.mkdtemp(prefix="ihbench-bench-judge-"))
    run_dir = make_run(dataset_dir(args.data), root)
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        started = time.perf_counter()
        first = asyncio.run(judge(run_dir, base_url, root / "cache.sqlite", run_dir / "judgments.jsonl"))
        wall = time.perf_counter() - started
        started = time.perf_counter()
        cached = asyncio.run(judge(run_dir, base_url, root / "cache.sqlite", run_dir / "judgments-2.jsonl"))
        cached_wall = time.perf_counter() - started
    finally:
        server.kill()
    ideal = first.calls * LATENCY / CONCURRENCY
    print(f"first pass: {first.calls} calls, {first.judged} judged, {first.judge_errors} errors in {wall:.2f} s "
          f"(ideal {ideal:.2f} s)")
    print(f"cached pass: {cached.calls} calls, {cached.cached} from cache in {cached_wall:.2f} s")
    print(f"wall_over_ideal={wall / ideal:.3f} cached_calls={cached.calls} wall_s={wall:.2f} ideal_s={ideal:.2f} "
          f"cached_wall_s={cached_wall:.2f}")


if __name__ == "__main__":
    main()
