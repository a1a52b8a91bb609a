"""Barge-in orchestration overhead: `ihbench barge-in` on the dev set (text modality) against two local
OpenAI-compatible servers that answer at once (STAND-INS for the model under test and the
simulator's LLM, tests/barge_in_script.py), versus a bare loop that sends the very same requests
(every body the run sent, in order, to the same servers, through the same `openai` client) and does
nothing else but read the suite and make its clients, as a script of its own would.

Run: .venv/bin/python benchmarks/barge_in.py [--data DIR] [--conversations 2] [--rounds 5]
A first run renders the replies once (the TTS cache is warm after it, as on any rerun); every
measured run gets a fresh run folder and a fresh simulator cache, so all its calls are sent. Rounds
are interleaved (bare, run, bare, ...) so drift hits both. The run adds what a bare loop has not: the
planner and seeds, the reply on the TTS clock (cached renders, decoded), the cut, the live leak
check, the LLM cache, a durable record per round (fsync) and run.json.
Target (issue 29): overhead_ratio <= 1.1. Last line: key=value pairs (fastest_ratio: the fastest run
over the fastest bare loop, the figure least moved by other work on a shared machine).
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import _data  # noqa: F401  (puts the tests' OpenAI-compatible test double on the path)


def run_once(data: Path, root: Path, name: str, model, sim, conversations: int) -> float:
    from ihbench.barge_in import BargeInSpec, run_barge_in

    spec = BargeInSpec(loader="openai", model_path="scripted", data=str(data), out=root / name, modality="text",
                       sim_model="scripted-sim", sim_base_url=sim.base_url, cache=root / f"{name}.sqlite",
                       limit=conversations, concurrency=1,  # one at a time, as the bare loop sends them
                       loader_options={"base_url": model.base_url})
    started = time.perf_counter()
    summary = run_barge_in(spec, progress=False)
    seconds = time.perf_counter() - started
    assert summary.errors == 0 and summary.placed > 0, summary
    return seconds


def bare_loop(data: Path, bodies: list[tuple[str, dict]], urls: dict) -> None:
    """What a script of its own would do at the least: read the suite, make its two clients, send."""
    from openai import OpenAI

    from ihbench.dataset.load import load_conversations

    load_conversations(str(data))
    clients = {name: OpenAI(base_url=url, api_key="EMPTY", max_retries=0) for name, url in urls.items()}
    for server, body in bodies:
        clients[server].chat.completions.create(**body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="a built dataset (default: the dev set if built, else a small build)")
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from barge_in_script import scripts
    from openai_test_server import OpenAITestServer

    data = _data.dataset_dir(args.data)
    root = Path(tempfile.mkdtemp(prefix="ihbench-bench-barge-in-"))
    model_script, sim_script = scripts()
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        run_once(data, root, "warm", model, sim, args.conversations)  # renders and imports, once
        model.requests.clear()
        sim.requests.clear()
        run_once(data, root, "recorded", model, sim, args.conversations)
        order = [("model", i) for i in range(len(model.requests))] + [("sim", i) for i in range(len(sim.requests))]
        bodies = [(server, (model if server == "model" else sim).requests[i]) for server, i in order]
        calls = {"model": len(model.requests), "sim": len(sim.requests)}
        urls = {"model": model.base_url, "sim": sim.base_url}
        bare, runs = [], []
        for round_ in range(args.rounds):
            started = time.perf_counter()
            bare_loop(data, bodies, urls)
            bare.append(time.perf_counter() - started)
            runs.append(run_once(data, root, f"run-{round_}", model, sim, args.conversations))
    bare_s, run_s = statistics.median(bare), statistics.median(runs)
    print("bare: " + " ".join(f"{x:.3f}" for x in bare) + "; run: " + " ".join(f"{x:.3f}" for x in runs))
    print(f"{args.conversations} conversation(s), {calls['model']} model and {calls['sim']} simulator requests: bare "
          f"loop {bare_s:.3f} s, ihbench barge-in {run_s:.3f} s (medians of {args.rounds}); fastest of each: "
          f"{min(bare):.3f} s and {min(runs):.3f} s (on a shared machine, the least disturbed)")
    print(f"model_calls={calls['model']} sim_calls={calls['sim']} bare_s={bare_s:.3f} run_s={run_s:.3f} "
          f"overhead_ratio={run_s / bare_s:.3f} fastest_ratio={min(runs) / min(bare):.3f} target=1.1")

if __name__ == "__main__":
    main()
