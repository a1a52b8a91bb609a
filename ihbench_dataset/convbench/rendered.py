"""The in-house ConversationBench-style benchmarks in `ihbench build`: read from the sources through
the same importer users run on the published folders (dogfooding it), each user turn rendered with
our TTS (the published audio came from a TTS voice too), written as the same two configs."""
from __future__ import annotations

import hashlib
from pathlib import Path

from ..sources import USER_VOICES
from .benchmark import ConvBenchmark
from .importing import (CARD_KEY, CONVBENCH_SOURCES, SETUP_SUFFIX, card_entry, check_name, setup_features,  # noqa: F401
                        setup_row, shipped_folders, turn_features, turn_rows)
from .checks import check_benchmark
from .pyfiles import ConvBenchFormatError
from .read import read_benchmark

#: the voice the in-house turns are spoken in: one voice for the whole call, as the published turns
VOICE = USER_VOICES[0]


def folder_fingerprint(folder: Path) -> str:
    """Every file of the benchmark folder by its bytes (data/ included)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(file.relative_to(folder).as_posix().encode() + b"\x1f" + hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()[:16]


def read_in_house(folder: Path) -> ConvBenchmark:
    """Read by the importer and held to `ihbench verify`'s checks, as the conversation sources are."""
    benchmark = read_benchmark(folder).benchmark
    check_name(benchmark.name, f"{folder / 'config.py'}: BenchmarkConfig.name")
    problems = check_benchmark(benchmark, str(folder))
    if problems:
        raise ConvBenchFormatError(f"{folder} does not pass `ihbench verify` ({len(problems)} problem(s)); the "
                                   f"first: {problems[0]}")
    return benchmark


def render_rows(benchmark: ConvBenchmark, cache, *, progress: bool) -> tuple[dict, dict]:
    """({config: (rows, features)}, statistics) of one benchmark, each turn's input spoken by VOICE."""
    from tqdm.auto import tqdm

    from ..tts import get_engine

    engine = get_engine(VOICE)
    audio = [{"bytes": cache.render(engine, turn.input), "path": f"turn_{turn.index:03d}.flac"}
             for turn in tqdm(benchmark.turns, desc=f"rendering {benchmark.name}", unit="turn", disable=not progress)]
    source = f"TTS ({engine.voice_id} {engine.version}, 16 kHz FLAC) by `ihbench build`"
    tables = {benchmark.name: (turn_rows(benchmark, audio), turn_features()),
              benchmark.name + SETUP_SUFFIX: ([setup_row(benchmark, source)], setup_features())}
    return tables, {"conversation_bench": {benchmark.name: statistics(benchmark)}}


def statistics(benchmark: ConvBenchmark) -> dict:
    return {"turns": len(benchmark.turns), "tool_turns": sum(bool(t.required_calls) for t in benchmark.turns),
            "tools": len(benchmark.tools), "knowledge_base_lines": benchmark.knowledge_base.count("\n"),
            "categories": len({c for t in benchmark.turns for c in t.categories})}


def card_metadata(benchmark: ConvBenchmark, split: str) -> dict:
    """As an import records it; `split` is the build's (dev), where an import writes test."""
    return {CARD_KEY: {benchmark.name: card_entry(benchmark, "in-house benchmark folder (ihbench build)",
                                                  f"TTS, voice {VOICE}", split)}}
