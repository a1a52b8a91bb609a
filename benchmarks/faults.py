"""Fault suite: random kill -9s of `ihbench run` and `ihbench judge` and random concurrent starts on
one run directory, against a local OpenAI-compatible server that misbehaves on 30 % of replies
(429 with Retry-After, 500, replies slower than the client's timeout, and for the judge answers
that are not JSON). Then the same commands run to completion, and the files are audited.

Run: .venv/bin/python benchmarks/faults.py [--rounds 20] [--seed 0]
Target (issue 11): records_found = records_expected; duplicates, torn_lines, lost all 0.
Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import _data  # noqa: F401  (puts the tests' test doubles on the path)

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
       "HF_HUB_DISABLE_TELEMETRY": "1"}
EPOCHS = 6


class Faulty:
    """30 % of first attempts fail; which ones is a hash of the request, so reruns see new ones."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def __call__(self, body):
        from judging import ScriptedJudge
        from openai_test_server import Reply

        roll = self.rng.random()
        if roll < 0.08:
            return Reply(status=429, headers={"Retry-After": "0.05"})
        if roll < 0.16:
            return Reply(status=500)
        if roll < 0.22:
            return Reply(delay=1.5, content="late")
        from ihbench.judge.prompts import RQ_SYSTEM, TF_SYSTEM

        judging = body["messages"][0]["content"] in (RQ_SYSTEM, TF_SYSTEM)
        if judging and roll < 0.30:
            return Reply(content="not json at all")
        if judging:
            return ScriptedJudge(faults=False)(body)
        return Reply(delay=0.05)


def _commands(data: Path, out: Path, url: str, cache: Path):
    run = [sys.executable, "-m", "ihbench.cli", "run", "--model", "openai", "--model-path", "m", "--data", str(data),
           "--epochs", str(EPOCHS), "--out", str(out), "--base-url", url, "--concurrency", "2", "--quiet",
           "--option", "timeout=1", "--option", "max_retries=2"]
    judge = [sys.executable, "-m", "ihbench.cli", "judge", str(out), "--judge-model", "judge-x",
             "--judge-base-url", url, "--timeout", "1", "--concurrency", "4", "--cache", str(cache), "--quiet"]
    return run, judge


def audit(path: Path, key_fields: tuple[str, ...], settled) -> tuple[int, int, int]:
    """(distinct settled keys, duplicate settled records, lines that are not JSON)."""
    keys, torn = Counter(), 0
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            torn += 1
            continue
        if settled(record):
            keys[tuple(record[f] for f in key_fields)] += 1
    return len(keys), sum(n - 1 for n in keys.values()), torn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    rng = random.Random(args.seed)
    root = Path(tempfile.mkdtemp(prefix="ihbench-faults-"))
    data = write_official_layout(root / "data")
    out, cache = root / "run", root / "judge-cache.sqlite"
    kills = refused = 0
    started = time.perf_counter()
    with OpenAITestServer(respond=Faulty(args.seed)) as server:
        run, judge = _commands(data, out, server.base_url, cache)
        for round_ in range(args.rounds):
            command = run if round_ % 2 == 0 or not out.joinpath("responses.jsonl").exists() else judge
            processes = [subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)]
            if rng.random() < 0.5:  # a concurrent start on the same directory
                time.sleep(rng.uniform(0, 0.3))
                processes.append(subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            time.sleep(rng.uniform(1.0, 4.0))
            for process in processes:
                if process.poll() is None:
                    os.kill(process.pid, signal.SIGKILL)
                    kills += 1
                process.wait()
                refused += b"in use by another process" in process.stderr.read()
            print(f"round {round_ + 1}/{args.rounds}: {'run' if command is run else 'judge'}, "
                  f"{len(processes)} process(es), kills so far {kills}", flush=True)
        for command in (run, judge, judge, judge, judge):  # to completion; judge reruns retry judge errors
            subprocess.run(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    n_items = json.loads((out / "run.json").read_text())["n_items"]
    expected_responses = n_items * EPOCHS
    responses, response_duplicates, response_torn = audit(out / "responses.jsonl", ("id", "epoch"), lambda r: True)
    judgments, judgment_duplicates, judgment_torn = audit(out / "judgments.jsonl", ("id", "epoch", "axis"),
                                                          lambda r: r.get("outcome") == "judged")
    expected = expected_responses + 2 * expected_responses
    found = responses + judgments
    print(f"responses {responses}/{expected_responses}, judged {judgments}/{2 * expected_responses}; "
          f"{kills} kill -9s, {refused} concurrent starts refused; {time.perf_counter() - started:.0f} s; "
          f"files in {root}")
    print(f"records_expected={expected} records_found={found} duplicates={response_duplicates + judgment_duplicates} "
          f"torn_lines={response_torn + judgment_torn} lost={expected - found} "
          f"found_ratio={found / expected:.3f}")


if __name__ == "__main__":
    main()
