"""GPU smoke test of a real checkpoint: a few dev-set points in audio and in text, before a long run.

Run: .venv/bin/python benchmarks/gpu_smoke.py FAMILY PATH [--data DIR] [--items 5] [--option KEY=VALUE ...]
     [--history-audio all|auto|last:K] [--max-new-tokens 256]
FAMILY is the loader (`ihbench models`), PATH the checkpoint (a folder or a cached hub id). The
points are spread over the data's depths (the deepest among them), answered one at a time on the
GPU in each modality; it prints items/s, the peak GPU memory and the first answer of each modality,
and fails (exit 1) on an answer that is an error or empty. Where there is no CUDA GPU it prints one
line saying it skipped and exits 0 (`--device cpu` runs it anyway: a check of this script on a tiny
model, not of a checkpoint). Run `ihbench doctor` first: it checks the same checkpoint without its
weights, in seconds. Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import sys
import time

from _data import dataset_dir


def spread(items: list, count: int) -> list:
    """`count` items evenly over the depths, the deepest always among them."""
    ordered = sorted(items, key=lambda item: (sum(m.role == "user" for m in item.history), item.id))
    if len(ordered) <= count:
        return ordered
    step = (len(ordered) - 1) / (count - 1) if count > 1 else 0
    return [ordered[round(index * step)] for index in range(count - 1)] + [ordered[-1]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("family", help="loader name (`ihbench models`)")
    parser.add_argument("path", help="checkpoint folder or cached hub id")
    parser.add_argument("--data", help="built dataset directory (default: data/ihbench-dev or a small build)")
    parser.add_argument("--items", type=int, default=5, help="points per modality (default 5)")
    parser.add_argument("--max-new-tokens", type=int, default=256, help="answer budget (default 256, as `run`)")
    parser.add_argument("--history-audio", default=None, metavar="all|auto|last:K", help="as for `ihbench run`")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="loader options")
    parser.add_argument("--device", default="cuda", help="cuda (default); cpu only to check this script")
    args = parser.parse_args()

    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        built = "built with CUDA" if torch.version.cuda else "built without CUDA"
        print(f"gpu_smoke: skipped: no CUDA GPU here (torch {torch.__version__}, {built}); run it on the GPU "
              "machine that will run the model")
        return 0

    from ihbench.dataset import load_items
    from ihbench.dataset.argtypes import key_value
    from ihbench.loaders import GenerationConfig, create
    from ihbench.protocol import AUTO, build_model_input, fitting_model_input, parse_history_audio
    from ihbench.seeds import record_seed

    if args.device == "cpu":
        torch.set_num_threads(1)
    options = dict(key_value()(option) for option in args.option)
    history_audio = parse_history_audio(args.history_audio)
    config = GenerationConfig(max_new_tokens=args.max_new_tokens)
    items = spread(load_items(str(dataset_dir(args.data))), args.items)
    started = time.perf_counter()
    loader = create(args.family, args.path, device=args.device, **options)
    where = loader.describe().get("device")
    print(f"loaded {args.family} {args.path} in {time.perf_counter() - started:.1f} s on {where}")
    failures, results = [], {}
    for modality in loader.modalities:
        if args.device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        first, seconds = None, 0.0
        for item in items:
            if modality == "audio" and history_audio == AUTO:
                conversation = fitting_model_input(item, lambda c: loader.fits(c, config))
            else:
                conversation = build_model_input(item, modality, history_audio=None if history_audio == AUTO
                                                 else history_audio)
            response = loader.generate(conversation, config, seed=record_seed(0, item.id, 0))
            seconds += response.latency_s
            if response.error or not (response.text or "").strip():
                failures.append(f"{modality} {item.id}: {response.error or 'an empty answer'}")
            first = first if first is not None else response.text
        peak = torch.cuda.max_memory_allocated() / 2 ** 30 if args.device.startswith("cuda") else None
        results[modality] = {"items_per_s": len(items) / seconds if seconds else 0.0, "peak_gb": peak}
        memory = f", peak GPU memory {peak:.1f} GB" if peak is not None else ""
        print(f"{modality}: {len(items)} points ({', '.join(item.id for item in items)}) at "
              f"{results[modality]['items_per_s']:.2f} items/s{memory}; first answer: {first!r}", flush=True)
    for failure in failures:
        print(f"FAIL {failure}")
    pairs = [f"family={args.family}", f"ok={not failures}"]
    for modality, result in results.items():
        pairs.append(f"{modality}_items_per_s={result['items_per_s']:.3f}")
        if result["peak_gb"] is not None:
            pairs.append(f"{modality}_peak_gb={result['peak_gb']:.2f}")
    print(" ".join(pairs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
