"""ConversationBench run overhead: `ihbench run` on the in-house benchmark (convbench_dev, text
modality) against a local OpenAI-compatible server that answers at once, replaying the golden calls
and replies, versus a bare loop of the very same chat-completions calls (same messages, same tools,
no records, no resume, no transcripts). Both sides read the benchmark from the dataset folder and
make their client, as a user's script would.

Run: .venv/bin/python benchmarks/convbench.py [--rounds 3]
Rounds are interleaved (bare, run, bare, ...) so drift hits both. The runner adds a durable record
per turn (fsync), run.json, the reference-layout transcript per epoch and the progress bar.
Target (issue 24): overhead_ratio <= 1.05. Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import _data  # noqa: F401  (puts the tests' OpenAI-compatible test double on the path)


def in_house(root: Path) -> Path:
    """convbench_dev imported text-only into a fresh dataset folder (no audio needed for text runs)."""
    from ihbench.dataset.convbench import import_convbench
    from ihbench.dataset.convbench.rendered import shipped_folders

    out = root / "data"
    import_convbench(shipped_folders()[0], out, text_only=True, progress=False)
    return out


def golden_server(benchmark):
    """Replies: the turn's expected calls first, then (after their results) the golden text."""
    from openai_test_server import OpenAITestServer, Reply

    def respond(body):
        turn = benchmark.turns[sum(1 for m in body["messages"] if m["role"] == "user") - 1]
        if turn.required_calls and body["messages"][-1]["role"] != "tool":
            return Reply(content="", tool_calls=[{"name": c["name"], "arguments": c["args"]}
                                                 for c in turn.required_calls])
        return Reply(content=turn.golden_text)

    return OpenAITestServer(respond=respond)


def bare_loop(benchmark, client) -> None:
    """The same requests the runner makes, with nothing around them."""
    messages = [{"role": "system", "content": benchmark.system_instruction}]
    for turn in benchmark.turns:
        messages.append({"role": "user", "content": turn.input})
        while True:
            reply = client.chat.completions.create(model="bench", messages=messages, max_tokens=256, temperature=0.0,
                                                   top_p=1.0, seed=0, tools=benchmark.tools, tool_choice="auto")
            message = reply.choices[0].message
            if not message.tool_calls:
                messages.append({"role": "assistant", "content": message.content})
                break
            messages.append({"role": "assistant", "content": message.content or None,
                             "tool_calls": [c.model_dump() for c in message.tool_calls]})
            messages += [{"role": "tool", "tool_call_id": c.id, "content": json.dumps({"status": "success"})}
                         for c in message.tool_calls]
            if any(c.function.name == "end_session" for c in message.tool_calls):
                return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from openai import OpenAI

    from ihbench.convbench import ConvRunSpec, run_convbench
    from ihbench.dataset.convbench import load_benchmark

    root = Path(tempfile.mkdtemp(prefix="ihbench-bench-convbench-"))
    data = in_house(root)
    benchmark = load_benchmark(data, "convbench_dev")
    bare, runs = [], []
    with golden_server(benchmark) as server:
        for round_ in range(args.rounds):
            started = time.perf_counter()
            bare_loop(load_benchmark(data, "convbench_dev"),
                      OpenAI(base_url=server.base_url, api_key="EMPTY", max_retries=0))
            bare.append(time.perf_counter() - started)
            spec = ConvRunSpec(loader="openai", model_path="bench", data=str(data), config="convbench_dev",
                               out=root / f"run-{round_}", epochs=1, modality="text",
                               loader_options={"base_url": server.base_url})
            started = time.perf_counter()
            summary = run_convbench(spec, progress=False)
            runs.append(time.perf_counter() - started)
            assert summary.errors == 0 and summary.written == len(benchmark.turns), summary
    bare_s, run_s = statistics.median(bare), statistics.median(runs)
    print(f"one conversation of {len(benchmark.turns)} turns, {len(server.requests) // (2 * args.rounds)} requests: "
          f"bare loop {bare_s:.3f} s, ihbench run {run_s:.3f} s (medians of {args.rounds})")
    print(f"turns={len(benchmark.turns)} bare_s={bare_s:.3f} run_s={run_s:.3f} overhead_ratio={run_s / bare_s:.3f} "
          f"target=1.05")


if __name__ == "__main__":
    main()
