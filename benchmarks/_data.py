"""Benchmark inputs: the built dev set if present, else a small real build in a temp folder."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the local OpenAI-compatible test double lives with the tests


def dataset_dir(path: str | None) -> Path:
    if path:
        return Path(path).resolve()
    from ihbench.dataset.builddir import BuildDir

    default = REPO / "data" / "ihbench-dev"
    if BuildDir(default).is_build():
        return default
    from ihbench.dataset.build import build
    from ihbench.dataset.sources import source_files

    shortest = sorted(source_files(), key=lambda p: len(json.loads(p.read_text())["turns"]))[:2]
    out = Path(tempfile.mkdtemp(prefix="ihbench-bench-data-")) / "data"
    print(f"building a 2-conversation dataset in {out} (run `make demo` once to benchmark on the full dev set)")
    return build(out, shortest, progress=False).out
