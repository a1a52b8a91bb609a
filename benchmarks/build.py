"""Build and load benchmark: cold build, cached rebuild, cold and warm load_dataset, peak memory.

Run: .venv/bin/python benchmarks/build.py [--sources DIR]
Targets (issues 2, 13): cold build <= 8 min; cached rebuild <= 10 s; warm load of all configs <= 1 s.
Also a rebuild after one source file is edited (its configs are made again, the SID ones reused), and
the share of each build spent on the `duplex` config (issue 16): mixing plus writing its Parquet.
Each phase runs in its own process so its peak RSS is its own. Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BUILD = """
import sys, time, resource, json
from ihbench.dataset.build import build
t = time.perf_counter()
r = build(sys.argv[1], sys.argv[3:] or None, cache_dir=sys.argv[2], progress=False)
print(json.dumps({"seconds": time.perf_counter() - t, "renders": r.renders, "hits": r.cache_hits, "reused": r.reused,
                  "points": r.statistics["interruption_points"], "timings": r.timings,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

LOAD = """
import sys, time, resource, json
import datasets
datasets.disable_progress_bars()
t = time.perf_counter()
rows = 0
for config in datasets.get_dataset_config_names(sys.argv[1]):
    rows += datasets.load_dataset(sys.argv[1], config, split="dev").num_rows
print(json.dumps({"seconds": time.perf_counter() - t, "rows": rows,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(code: str, *args: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=REPO)
    if out.returncode != 0:
        sys.exit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def duplex_share(result: dict) -> tuple[float, float]:
    """(wall seconds, share of the build) spent mixing the duplex recordings and writing them
    (or linking them from the config cache)."""
    seconds = result["timings"].get("duplex", {}).get("wall_s", 0.0)
    return seconds, seconds / result["seconds"]


def edited_copy(sources: list[str], target: Path) -> list[str]:
    """The sources copied, with one interruption point's TF rubric changed in the first file."""
    from ihbench.dataset.sources import source_files

    files = [Path(p) for p in source_files(sources or None)]
    target.mkdir()
    for path in files:
        shutil.copy(path, target / path.name)
    first = target / files[0].name
    document = json.loads(first.read_text(encoding="utf-8"))
    point = next(turn for turn in document["turns"] if "interruption" in turn)
    point["interruption"]["tf_rubric"] += " (edited)"
    first.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return [str(target / path.name) for path in files]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sources", nargs="*", default=[], help="source files/folders (default: shipped set)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ihbench-bench-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1",
                   HF_HOME=str(tmp / "hf"), OMP_NUM_THREADS="1")
        out, cache = str(tmp / "data"), str(tmp / "tts")
        cold = run(BUILD, out, cache, *args.sources, env=env)
        print(f"cold build:      {cold['seconds']:7.1f} s  ({cold['renders']} clips rendered, {cold['points']} points, "
              f"peak {cold['peak_mb']:.0f} MB)")
        cached = run(BUILD, out, cache, *args.sources, env=env)
        print(f"cached rebuild:  {cached['seconds']:7.1f} s  ({cached['hits']} clips from cache, configs of "
              f"{', '.join(cached['reused']) or 'nothing'} reused, peak {cached['peak_mb']:.0f} MB)")
        edited = run(BUILD, str(tmp / "edited"), cache, *edited_copy(args.sources, tmp / "sources"), env=env)
        print(f"one source edited: {edited['seconds']:5.1f} s  (configs of {', '.join(edited['reused']) or 'nothing'} "
              f"reused, the rest made again)")
        for label, result in (("cold", cold), ("cached", cached), ("edited", edited)):
            seconds, share = duplex_share(result)
            phases = ", ".join(f"{k} {v['wall_s']:.1f} s (cpu {v['cpu_s']:.1f})" for k, v in result["timings"].items())
            print(f"{label} build phases: {phases}")
            print(f"duplex share of the {label} build: {seconds:.1f} s = {100 * share:.0f} %")
        cold_load = run(LOAD, out, env=env)
        print(f"cold load (all configs): {cold_load['seconds']:6.2f} s  ({cold_load['rows']} rows, peak {cold_load['peak_mb']:.0f} MB)")
        warm_load = run(LOAD, out, env=env)
        print(f"warm load (all configs): {warm_load['seconds']:6.2f} s  (peak {warm_load['peak_mb']:.0f} MB)")
        size_mb = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file()) / 2**20
        print(f"dataset size: {size_mb:.0f} MB")
        print(" ".join([
            f"cold_build_s={cold['seconds']:.1f}",
            f"cached_rebuild_s={cached['seconds']:.2f}",
            f"cold_build_over_target={cold['seconds'] / 480:.2f}",
            f"cached_over_cold={cached['seconds'] / cold['seconds']:.3f}",
            f"cached_rebuild_over_target={cached['seconds'] / 10:.2f}",
            f"edited_rebuild_s={edited['seconds']:.1f}",
            f"edited_over_cold={edited['seconds'] / cold['seconds']:.3f}",
            f"duplex_cold_s={duplex_share(cold)[0]:.1f}",
            f"duplex_cold_share={duplex_share(cold)[1]:.3f}",
            f"duplex_cached_s={duplex_share(cached)[0]:.2f}",
            f"duplex_cached_share={duplex_share(cached)[1]:.3f}",
            f"cold_load_s={cold_load['seconds']:.2f}",
            f"warm_load_s={warm_load['seconds']:.2f}",
            f"warm_over_cold={warm_load['seconds'] / cold_load['seconds']:.3f}",
            f"warm_load_over_target={warm_load['seconds'] / 1:.2f}",
            f"peak_build_mb={max(cold['peak_mb'], cached['peak_mb']):.0f}",
            f"peak_load_mb={max(cold_load['peak_mb'], warm_load['peak_mb']):.0f}",
            f"dataset_mb={size_mb:.0f}",
        ]))


if __name__ == "__main__":
    main()
