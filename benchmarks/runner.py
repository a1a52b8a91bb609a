"""Runner overhead: `ihbench run` machinery versus a bare loop of the same generate calls.

Run: .venv/bin/python benchmarks/runner.py [--data DIR] [--rounds 3]
Both sides build the same conversations and call the same tiny Qwen2-Audio model (real classes,
random weights, built offline) with the same seeds; the runner adds seeding, JSONL records with
fsync, progress and run.json. Rounds are interleaved (bare, runner, bare, ...) so drift hits both.
Target (issue 4): overhead_ratio <= 1.05. Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _data import dataset_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="built dataset directory (default: data/ihbench-dev or a small build)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    from ihbench.runner import RunSpec, record_seed, run, select_items
    from ihbench_dataset import load_items
    from loaders import GenerationConfig, build_conversation, get
    from loaders.tiny import make_tiny_model

    data = dataset_dir(args.data)
    items = select_items(load_items(data), None, args.limit)
    work = Path(tempfile.mkdtemp(prefix="ihbench-bench-runner-"))
    model_dir = make_tiny_model("qwen2-audio", work / "tiny-qwen2-audio")
    loader = get("qwen2-audio")(str(model_dir))
    config = GenerationConfig(max_new_tokens=16)
    loader.generate(build_conversation(items[0]), config, 0)  # warm-up

    def bare() -> float:
        started = time.perf_counter()
        for item in items:
            for epoch in range(args.epochs):
                loader.generate(build_conversation(item, "audio"), config, record_seed(0, item.id, epoch))
        return time.perf_counter() - started

    def runner(index: int) -> float:
        spec = RunSpec(loader="qwen2-audio", model_path=str(model_dir), data=str(data), out=work / f"run-{index}",
                       epochs=args.epochs, limit=args.limit, generation=config.to_dict())
        started = time.perf_counter()
        run(spec, loader=loader, items=items, progress=False)
        return time.perf_counter() - started

    bare_times, runner_times = [], []
    for index in range(args.rounds):
        bare_times.append(bare())
        runner_times.append(runner(index))
        print(f"round {index + 1}: bare loop {bare_times[-1]:.2f} s, runner {runner_times[-1]:.2f} s")
    calls = len(items) * args.epochs
    ratio = statistics.median(runner_times) / statistics.median(bare_times)
    print(f"{calls} generate calls per side; median bare {statistics.median(bare_times):.2f} s, "
          f"median runner {statistics.median(runner_times):.2f} s")
    print(f"overhead_ratio={ratio:.3f} items_per_s={calls / statistics.median(runner_times):.2f} "
          f"overhead_over_target={ratio / 1.05:.3f}")


if __name__ == "__main__":
    main()
