"""Barge-in orchestration overhead: `ihbench barge-in` on the dev set (text modality) against two local
OpenAI-compatible servers that answer at once (STAND-INS for the model under test and the
simulator's LLM, tests/barge_in_script.py), versus a bare loop that sends the very same requests
(every body the run sent, in order, to the same servers, through the same `openai` client) and does
nothing else but read the suite and make its clients, as a script of its own would.

Run: .venv/bin/python benchmarks/barge_in.py [--data DIR] [--conversations 2] [--rounds 5] [--servers-in-process]
A first run renders the replies and times their words once (the TTS cache is warm after it, as on
any rerun) and records the requests; every measured run gets a fresh run folder and a fresh
simulator cache, so all its calls are sent. Rounds are interleaved (bare, run, bare, ...) so drift
hits both. The run adds what a bare loop has not: the planner and seeds, the reply on the TTS clock
(its kept word times), the cut, the live leak check, the LLM cache, a record per round (one fsync
per conversation) and run.json.

The servers answer from processes of their own (forked), as a real server does: served from
threads of the measuring process (`--servers-in-process`, the setting of earlier figures) they take
its interpreter lock from the very client work being measured, and the more Python work an arm
does between requests, the more it waits for them.
Target (issue 29): overhead_ratio <= 1.1. Last line: key=value pairs. paired_ratio is the median of
each round's run over the bare loop just before it, with a bootstrap 95% interval: a pair shares
the machine's state of its moment, so a busy spell moves both of its arms, where the ratio of two
medians lets one slow spell in one arm decide (fastest_ratio: the fastest run over the fastest bare
loop, the figure least moved by other work on a shared machine).
"""
from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

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


def bare_loop(data: Path, bodies: list[tuple[str, dict]], urls: dict, *, same_clients: bool = True) -> None:
    """What a script of its own would do at the least: read the suite, make its two clients, send.

    `same_clients`: the simulator's requests go through an `AsyncOpenAI` client, as ihbench's simulator
    sends them (it plays conversations concurrently), the model's through a blocking `OpenAI` client, as the
    openai loader sends them; so the two arms differ only by the orchestration. Otherwise every request
    goes through one blocking client, as a sequential script would send them (the async client costs
    more CPU per request: that figure counts the choice of client as overhead too)."""
    import asyncio

    from openai import AsyncOpenAI, OpenAI

    from ihbench.dataset.load import load_conversations

    load_conversations(str(data))
    model = OpenAI(base_url=urls["model"], api_key="EMPTY", max_retries=0)
    if not same_clients:
        sim = OpenAI(base_url=urls["sim"], api_key="EMPTY", max_retries=0)
        for server, body in bodies:
            (model if server == "model" else sim).chat.completions.create(**body)
        return

    async def send() -> None:
        sim = AsyncOpenAI(base_url=urls["sim"], api_key="EMPTY", max_retries=0)
        try:
            for server, body in bodies:
                if server == "model":
                    model.chat.completions.create(**body)
                else:
                    await sim.chat.completions.create(**body)
        finally:
            await sim.close()

    asyncio.run(send())


def paired_ratio(runs: list[float], bare: list[float], *, resamples: int = 2000) -> tuple[float, float, float]:
    """(median, low, high): the median of the per-round ratios run/bare and its 95% percentile
    bootstrap interval over rounds (seeded: the same timings give the same interval)."""
    import random

    ratios = [run / base for run, base in zip(runs, bare)]
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return statistics.median(ratios), medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def noted(server: str, respond, arrivals: list):
    """`respond`, noting in `arrivals` that a request came to `server`: the bare loop sends the run's
    requests in the order the run sent them, interleaved as a conversation must send them (each
    simulator turn waits for the model's reply), not grouped by server."""
    def respond_noted(body):
        arrivals.append(server)
        return respond(body)
    return respond_noted


def _serve(respond, connection) -> None:
    from openai_test_server import OpenAITestServer

    with OpenAITestServer(respond=respond) as server:
        connection.send(server.base_url)
        connection.recv()  # until the benchmark is done


@contextlib.contextmanager
def served_elsewhere(*scripts):
    """One server process per script (forked: the scripts need no pickling); yields their URLs as
    objects with `base_url`, as the in-process servers are."""
    context = multiprocessing.get_context("fork")
    processes, connections = [], []
    try:
        for script in scripts:
            ours, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(script, theirs), daemon=True)
            process.start()
            processes.append(process)
            connections.append(ours)
        yield [SimpleNamespace(base_url=connection.recv()) for connection in connections]
    finally:
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.send("stop")
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="a built dataset (default: the dev set if built, else a small build)")
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--servers-in-process", action="store_true",
                        help="serve from threads of this process (the earlier setting; see the docstring)")
    args = parser.parse_args()

    from barge_in_script import scripts
    from openai_test_server import OpenAITestServer

    data = _data.dataset_dir(args.data)
    root = Path(tempfile.mkdtemp(prefix="ihbench-bench-barge-in-"))
    model_script, sim_script = scripts()
    arrivals: list[str] = []  # which server each request of the recorded run went to, in the order sent
    # forked first, before this process has the in-process servers' threads (which record the requests)
    elsewhere = contextlib.nullcontext() if args.servers_in_process else served_elsewhere(model_script, sim_script)
    with elsewhere as remote, OpenAITestServer(respond=noted("model", model_script, arrivals)) as model, \
            OpenAITestServer(respond=noted("sim", sim_script, arrivals)) as sim:
        run_once(data, root, "warm", model, sim, args.conversations)  # renders and imports, once
        model.requests.clear()
        sim.requests.clear()
        arrivals.clear()
        run_once(data, root, "recorded", model, sim, args.conversations)
        sent = {"model": iter(model.requests), "sim": iter(sim.requests)}
        bodies = [(server, next(sent[server])) for server in arrivals]  # interleaved, as the run sent them
        calls = {"model": len(model.requests), "sim": len(sim.requests)}
        model, sim = remote or (model, sim)
        urls = {"model": model.base_url, "sim": sim.base_url}
        bare, sync, runs, cpu = [], [], [], {"bare": [], "run": []}
        for round_ in range(args.rounds):
            started = time.perf_counter()
            bare_loop(data, bodies, urls, same_clients=False)
            sync.append(time.perf_counter() - started)
            started, used = time.perf_counter(), time.process_time()
            bare_loop(data, bodies, urls)
            bare.append(time.perf_counter() - started)
            cpu["bare"].append(time.process_time() - used)
            used = time.process_time()
            runs.append(run_once(data, root, f"run-{round_}", model, sim, args.conversations))
            cpu["run"].append(time.process_time() - used)
    bare_s, run_s = statistics.median(bare), statistics.median(runs)
    paired, low, high = paired_ratio(runs, bare)
    print("bare: " + " ".join(f"{x:.3f}" for x in bare) + "; run: " + " ".join(f"{x:.3f}" for x in runs))
    print(f"{args.conversations} conversation(s), {calls['model']} model and {calls['sim']} simulator requests: bare "
          f"loop {bare_s:.3f} s, ihbench barge-in {run_s:.3f} s (medians of {args.rounds}); fastest of each: "
          f"{min(bare):.3f} s and {min(runs):.3f} s (on a shared machine, the least disturbed)")
    cpu_paired = paired_ratio(cpu["run"], cpu["bare"])
    if not args.servers_in_process:  # this process's CPU is then the client's work alone
        print(f"this process's CPU seconds (the client's own work, the servers being elsewhere): bare loop "
              f"{statistics.median(cpu['bare']):.3f} s, ihbench barge-in {statistics.median(cpu['run']):.3f} s (medians); "
              f"each round's run over its bare loop, median {cpu_paired[0]:.3f} [{cpu_paired[1]:.3f}, "
              f"{cpu_paired[2]:.3f}] (the servers answering at once, the client's CPU is most of the wall time, and "
              "is moved less by the other work of a shared machine)")
    print(f"a sequential script with one blocking client: {statistics.median(sync):.3f} s (median); ihbench barge-in "
          f"over it: {run_s / statistics.median(sync):.3f}")
    print(f"each round's run over its bare loop: {' '.join(f'{r / b:.3f}' for r, b in zip(runs, bare))}; median "
          f"{paired:.3f}, 95% interval [{low:.3f}, {high:.3f}] (bootstrap over rounds)")
    print(f"model_calls={calls['model']} sim_calls={calls['sim']} bare_s={bare_s:.3f} run_s={run_s:.3f} "
          f"overhead_ratio={run_s / bare_s:.3f} paired_ratio={paired:.3f} paired_low={low:.3f} "
          f"paired_high={high:.3f} fastest_ratio={min(runs) / min(bare):.3f} target=1.1 "
          f"sync_script_ratio={run_s / statistics.median(sync):.3f} "
          f"bare_cpu_s={statistics.median(cpu['bare']):.3f} run_cpu_s={statistics.median(cpu['run']):.3f} "
          f"paired_cpu_ratio={cpu_paired[0]:.3f} "
          f"servers={'in-process' if args.servers_in_process else 'own-processes'} "
          f"load_average={os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
