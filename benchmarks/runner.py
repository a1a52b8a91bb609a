"""Runner overhead and batching, per model family: `ihbench run` machinery versus a bare loop of
the same generate calls, and left-padded batches versus one item at a time.

Run: .venv/bin/python benchmarks/runner.py [--data DIR] [--families a,b] [--rounds 3]
For every family with a tiny builder (real classes, random weights, built offline) both sides
build the same conversations and call the same model with the same seeds; the runner adds
seeding, JSONL records with fsync, progress and run.json. Rounds are interleaved (bare, runner,
bare, ...) so drift hits both. Targets (issue 14): overhead_ratio <= 1.05 per family.
With a CUDA device it also times the transformers loader on it (batch 1 and batched); on a
CPU-only machine that part is skipped with a line saying so. Last line per family: key=value pairs.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _data import dataset_dir


def timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def bench_family(family: str, items, data: Path, work: Path, args, device: str = "cpu") -> dict:
    from ihbench.loaders import GenerationConfig, get
    from ihbench.loaders.tiny import loader_name, make_tiny_model

    from ihbench.protocol import build_model_input
    from ihbench.runner import RunSpec, run
    from ihbench.seeds import record_seed

    model_dir = make_tiny_model(family, work / f"tiny-{family}")
    name = loader_name(family)  # gemma4-unified (the 12B) runs through the gemma4 loader
    loader = get(name)(str(model_dir), device=device)
    batched = get(name)(str(model_dir), device=device, batch_size=args.batch_size)
    config = GenerationConfig(max_new_tokens=16)
    conversations = [build_model_input(item, "audio") for item in items]
    loader.generate(conversations[0], config, 0)  # warm-up

    def bare():  # builds each conversation as the runner does (decoding the audio is part of a run)
        for item in items:
            for epoch in range(args.epochs):
                loader.generate(build_model_input(item, "audio"), config, record_seed(0, item.id, epoch))

    def runner(index: int):
        spec = RunSpec(loader=name, model_path=str(model_dir), data=str(data), out=work / f"{family}-run-{index}",
                       epochs=args.epochs, limit=args.limit, generation=config.to_dict())
        run(spec, loader=loader, items=items, progress=False)

    def one_by_one():
        for conversation in conversations:
            loader.generate(conversation, config, 0)

    def in_batches():
        for start in range(0, len(conversations), args.batch_size):
            chunk = conversations[start:start + args.batch_size]
            batched.generate_batch(chunk, config, [0] * len(chunk))

    bare_times, runner_times, single_times, batch_times = [], [], [], []
    for index in range(args.rounds):
        bare_times.append(timed(bare))
        runner_times.append(timed(lambda: runner(index)))
        single_times.append(timed(one_by_one))
        batch_times.append(timed(in_batches))
    calls = len(items) * args.epochs
    median = statistics.median
    return {"family": family, "device": device, "overhead_ratio": median(runner_times) / median(bare_times),
            "runner_items_per_s": calls / median(runner_times),
            "one_by_one_items_per_s": len(items) / median(single_times),
            "batched_items_per_s": len(items) / median(batch_times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="built dataset directory (default: data/ihbench-dev or a small build)")
    parser.add_argument("--families", help="comma-separated tiny families (default: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    from ihbench.dataset import load_items
    from ihbench.loaders.tiny import AUDIO_FAMILIES

    from ihbench.runner import select_items

    families = args.families.split(",") if args.families else list(AUDIO_FAMILIES)
    data = dataset_dir(args.data)
    items = select_items(load_items(data), None, args.limit)
    work = Path(tempfile.mkdtemp(prefix="ihbench-bench-runner-"))
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if len(devices) == 1:
        print("no CUDA device here: the GPU items/s of the transformers loaders are skipped")
    print(f"{len(items)} items x {args.epochs} epochs, {args.rounds} interleaved rounds, batch size {args.batch_size}")
    for family in families:
        for device in devices:
            result = bench_family(family, items, data, work, args, device)
            print(f"family={family} device={device} overhead_ratio={result['overhead_ratio']:.3f} "
                  f"overhead_over_target={result['overhead_ratio'] / 1.05:.3f} "
                  f"runner_items_per_s={result['runner_items_per_s']:.2f} "
                  f"one_by_one_items_per_s={result['one_by_one_items_per_s']:.2f} "
                  f"batched_items_per_s={result['batched_items_per_s']:.2f} "
                  f"batch_speedup={result['batched_items_per_s'] / result['one_by_one_items_per_s']:.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
