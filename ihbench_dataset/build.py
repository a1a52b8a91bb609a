"""`ihbench build`: in-house sources -> a local Hugging Face dataset directory.

Layout written (all Parquet, audio embedded as 16 kHz mono FLAC):

    OUT/README.md                          the dataset card, with `configs:` for load_dataset
    OUT/conversations/dev-<hash>.parquet    official wide schema (+ assistant audio)
    OUT/baseline/dev-<hash>.parquet         baseline responses, wide
    OUT/interruptions/dev-<hash>.parquet    one row per interruption point, long
    OUT/duplex/dev-<hash>.parquet           one two-channel recording per conversation + turn-taking labels
    (<hash>: of the file's bytes, so a rebuild in place is never read back from the datasets cache)
    OUT/stats.png, OUT/build_info.json

`BuildDir` (builddir.py) knows the folder: its files, its lock, how to read them. Everything is
written into a temporary sibling directory and renamed at the end, so a build that fails leaves
the previous build (or nothing) in place, never half a dataset.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Union

from .argtypes import noise_clips
from .audio import encode_flac, load_recording
from .build_info import BuildInfo
from .builddir import INFO, BuildDir, BuildDirError
from .config_cache import ConfigCache
from .convbench.rendered import shipped_folders
from .errors import IHBenchError
from .io import remove_stale_staging, staging_folder
from .outputs import check_cache_path, check_library_caches
from .parts import (
    Builder,
    conversations_inputs,
    convbench_builders,
    duplex_builder,
    ihbench_builder,
    sid_builder,
    sources_fingerprint,
)
from .sources import ASSISTANT_VOICE, SourceConversation
from .tts import RenderCache, get_engine

SPLIT = "dev"


class BuildError(IHBenchError, RuntimeError):
    pass


@dataclass
class BuildResult:
    out: Path
    statistics: dict
    notes: list[str] = field(default_factory=list)
    renders: int = 0
    cache_hits: int = 0
    #: builders whose configs came from the config cache (inputs and code unchanged)
    reused: list[str] = field(default_factory=list)
    #: what of the earlier dataset in the folder the build replaced that a user may not have meant to
    #: (conversations of other sources, set-baseline's baselines): warnings, said even with --quiet
    replaced: list[str] = field(default_factory=list)
    #: wall and CPU seconds per phase (`benchmarks/build.py` reports them); never written to the
    #: build, which must stay byte-identical across rebuilds
    timings: dict = field(default_factory=dict)


@contextmanager
def _timed(timings: dict, phase: str):
    """CPU time includes child processes: the flite voices render in a subprocess."""
    def cpu() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    wall, used = time.perf_counter(), cpu()
    yield
    timings[phase] = {"wall_s": round(time.perf_counter() - wall, 3), "cpu_s": round(cpu() - used, 3)}


def build(
    out: Union[str, Path],
    sources: Optional[Iterable[Union[str, Path]]] = None,
    *,
    cache_dir: Optional[Union[str, Path]] = None,
    progress: bool = True,
    sid: bool = True,
    sid_sources: Optional[Union[str, Path]] = None,
    sid_noise_clips: int = 90,
    duplex: bool = True,
    reuse: bool = True,
    convbench: Optional[Iterable[Union[str, Path]]] = None,
) -> BuildResult:
    """`sid`: also render the in-house SID-style configs (`sid_dev_en`, `sid_dev_noise`) from
    `sid_sources` (default: the shipped utterances) with `sid_noise_clips` seeded noise clips.
    `duplex`: also mix each conversation into a two-channel recording with its turn-taking
    ground truth (config `duplex`, see `duplex.py`).
    `convbench`: ConversationBench-style benchmark folders to import and render (default: the shipped
    in-house one, `sources/convbench/`; [] for none).
    `reuse`: take a builder's finished configs from the cache when its inputs and the code are
    unchanged (`config_cache.py`); False makes every config again.

    A rebuild replaces what the previous build wrote and keeps everything else in the folder
    (configs added by `ihbench sid-import`, a user's own files), listed in the new card as before."""
    if sid:  # none would make an empty config that every later reader refuses
        noise_clips().check("--sid-noise-clips", sid_noise_clips)
        from .sid_build import load_sid_sources

        load_sid_sources(sid_sources)  # a malformed file is refused before the folder is made
    if cache_dir is not None:
        check_cache_path(cache_dir, "--cache-dir", file=False, dataset=out)
    else:  # the default render cache must not be inside the folder being built either
        from .tts.cache import DEFAULT_WHAT, default_cache_dir

        check_cache_path(default_cache_dir(), DEFAULT_WHAT, file=False, dataset=out)
    check_library_caches(dataset=out)  # `datasets` reads the new folder back through its cache
    out = Path(out).resolve()
    with BuildDir(out).writing():
        return _build_locked(out, sources, cache_dir=cache_dir, progress=progress, sid=sid, sid_sources=sid_sources,
                             sid_noise_clips=sid_noise_clips, duplex=duplex, reuse=reuse, convbench=convbench)


def _build_locked(out: Path, sources, *, cache_dir, progress: bool, sid: bool, sid_sources, sid_noise_clips: int,
                  duplex: bool, reuse: bool, convbench):
    from .verify import verify_paths

    previous = BuildDir(out)
    if not previous.may_be_replaced():
        why = f"its {INFO} is not a build's record" if previous.is_build() else f"no {INFO}"
        raise BuildError(f"{out}: exists and is not an ihbench build ({why}); choose another --out")
    remove_stale_staging(out)  # working folders of killed builds: hundreds of MB each
    report = verify_paths(sources)
    if not report.ok:
        listed = "\n".join(f"  {p}" for p in report.problems[:30])
        more = f"\n  ... and {len(report.problems) - 30} more" if len(report.problems) > 30 else ""
        raise BuildError(f"sources do not pass `ihbench verify` ({len(report.problems)} problem(s)):\n{listed}{more}")
    conversations = report.conversations
    replacing = _replacing(previous, conversations)
    cache = RenderCache(Path(cache_dir) if cache_dir else None)
    # read before anything is rendered: a benchmark folder the importer refuses stops the build now
    convbench_parts = convbench_builders(shipped_folders() if convbench is None else [Path(f) for f in convbench],
                                         cache, SPLIT, progress=progress)
    timings: dict = {}
    with _timed(timings, "render"):
        audio, notes = render_audio(conversations, cache, progress=progress)
    notes = report.notes + notes
    inputs = conversations_inputs(conversations, audio)
    builders = [ihbench_builder(conversations, audio, inputs)]
    if sid:
        builders.append(sid_builder(sid_sources, sid_noise_clips, cache, progress=progress))
    if duplex:
        builders.append(duplex_builder(conversations, audio, inputs, cache, progress=progress))
    builders += convbench_parts
    configs = ConfigCache(cache.directory / "configs")

    with staging_folder(out) as tmp:
        new = BuildDir(tmp)
        with _arrow_memory_pool():
            statistics, reused = _write(new, conversations, builders, configs if reuse else None,
                                        progress=progress, timings=timings)
        kept = _carry_over(previous, new)
        if kept:
            notes.append(f"kept what this build does not make: {', '.join(kept)}")
        _write_info(new, conversations, statistics, notes, kept)
    return BuildResult(out=out, statistics=statistics, notes=notes, replaced=replacing, renders=cache.misses,
                       cache_hits=cache.hits,
                       reused=reused, timings=timings)


def _replacing(previous: BuildDir, conversations) -> list[str]:
    """What a rebuild into an existing dataset replaces that the user may not mean to: conversations of
    other sources (a `--out` mistyped onto another dataset) and baselines `ihbench set-baseline` wrote."""
    if not previous.is_build():
        return []
    try:
        earlier = previous.info()
    except BuildDirError:  # a damaged record: the build replaces it; nothing to compare
        return []
    said = []
    gone = sorted(set(earlier.conversations) - {c.conversation_id for c in conversations})
    if gone:
        shown = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
        said.append(f"{previous.path} held {len(earlier.conversations)} conversation(s) built from other sources; "
                    f"{len(gone)} of them are not in these sources and are gone from it ({shown})")
    if earlier.baselines:
        said.append(f"{previous.path}'s baselines were set by `ihbench set-baseline` ({earlier.baselines.rstrip('.')});"
                    " the rebuild puts back the sources' own")
    return said


@contextmanager
def _arrow_memory_pool():
    """pyarrow's default allocator (mimalloc) took ten times longer than jemalloc to take in the
    build's hundreds of MB of audio bytes (15 s of a 25 s cached rebuild here). A pool the user
    chose with ARROW_DEFAULT_MEMORY_POOL is left alone."""
    import pyarrow as pa

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        yield
        return
    previous = pa.default_memory_pool()
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # wheels built without jemalloc (Windows)
        pool = pa.system_memory_pool()
    pa.set_memory_pool(pool)
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def render_audio(conversations: list[SourceConversation], cache: RenderCache, *, progress: bool = True):
    """FLAC bytes keyed by (conversation_id, turn index, "user" | "assistant")."""
    from tqdm.auto import tqdm

    jobs = []
    for c in conversations:
        for turn in c.turns:
            jobs.append((c, turn, "user"))
            jobs.append((c, turn, "assistant"))
    audio: dict[tuple[str, int, str], bytes] = {}
    notes: list[str] = []
    for c, turn, speaker in tqdm(jobs, desc="rendering audio", unit="clip", disable=not progress):
        key = (c.conversation_id, turn.index, speaker)
        if speaker == "user" and turn.user_audio is not None:
            checked = load_recording(turn.user_audio, what=f"turns[{turn.index}].user_audio")
            notes.extend(checked.notes)
            audio[key] = encode_flac(checked.samples)
        elif speaker == "user":
            audio[key] = cache.render(get_engine(c.user_voice), turn.user)
        else:
            audio[key] = cache.render(get_engine(ASSISTANT_VOICE), turn.heard)
    return audio, notes


def _write(target: BuildDir, conversations: list[SourceConversation], builders: list[Builder],
           configs: Optional[ConfigCache], *, progress: bool, timings: dict) -> tuple[dict, list[str]]:
    """Each builder's configs, from the config cache when it has them (`configs`, None to make
    everything again), then the plot and the card. Returns the statistics and the builders reused."""
    import datasets

    bars_were_on = not datasets.are_progress_bars_disabled()
    if not progress and bars_were_on:
        datasets.disable_progress_bars()
    try:
        return _write_configs(target, conversations, builders, configs, timings)
    finally:
        if not progress and bars_were_on:  # the caller's process keeps datasets' bars as it had them
            datasets.enable_progress_bars()


def _write_configs(target: BuildDir, conversations: list[SourceConversation], builders: list[Builder],
                   configs: Optional[ConfigCache], timings: dict) -> tuple[dict, list[str]]:
    from .card import render_card
    from .stats import plot_statistics

    files, statistics, reused = {}, {}, []
    for builder in builders:
        with _timed(timings, builder.name):
            key = configs.key(builder.name, builder.inputs) if configs else None
            hit = configs.fetch(builder.name, key, target.path) if configs else None
            if hit:
                made, part = hit
                reused.append(builder.name)
            else:
                tables, part = builder.make()
                part = json.loads(json.dumps(part))  # as the cache gives it back: the card must not depend on a hit
                made = {}
                for name, data in tables.items():
                    with _timed(timings, f"write {name}"):
                        made[name] = _write_parquet(data, target, name)
                if configs:
                    configs.put(builder.name, key, made, part)
            files.update({name: target.relative(path) for name, path in made.items()})
            statistics.update(part)
    plot_statistics(statistics, target.stats_path)
    voices = sorted({c.user_voice for c in conversations} | {ASSISTANT_VOICE})
    features = {name: f for builder in builders for name, f in builder.features.items()}
    target.card_path.write_text(
        render_card(statistics=statistics, features=features, voices={v: get_engine(v) for v in voices}, split=SPLIT,
                    configs=tuple(features), provenances=[c.provenance for c in conversations], files=files),
        encoding="utf-8",
    )
    for builder in builders:
        for key, entries in builder.card_metadata.items():
            for name, value in entries.items():
                target.set_card_metadata(key, name, value)
    return statistics, reused


def _write_parquet(data, target: BuildDir, config: str) -> Path:
    """Named by its bytes (see `content_names.py`)."""
    staged = target.new_file(config, SPLIT)
    data.to_parquet(str(staged))
    return target.name_file(staged, SPLIT)


def _write_info(target: BuildDir, conversations, statistics: dict, notes: list[str], kept: list[str]) -> None:
    from importlib.metadata import version

    from . import __name__ as package

    made = sorted(p.name for p in target.path.iterdir() if p.name not in kept)
    target.write_info(BuildInfo(
        builder=f"{package} (ihbench {version('ihbench')})",
        sources_fingerprint=sources_fingerprint(conversations),
        conversations=[c.conversation_id for c in conversations],
        split=SPLIT,
        configs=[name for name in made if target.folder(name).is_dir()],
        files=made + [INFO],
        kept=kept,
        statistics=statistics,
        notes=notes,
    ))


#: card metadata keys that describe configs, carried over with the configs a rebuild keeps
CARRIED_METADATA = ("conversation_bench",)


def _carry_over(old: BuildDir, new: BuildDir) -> list[str]:
    """Copy into the new build what the old folder holds that no build wrote; list kept configs
    in the new card with the entries they had."""
    if not old.path.is_dir():
        return []
    own, made = old.written_by_build(), {p.name for p in new.path.iterdir()}
    kept = sorted(p.name for p in old.path.iterdir() if p.name not in own and p.name not in made)
    for name in kept:
        source = old.path / name
        shutil.copytree(source, new.path / name, symlinks=True) if source.is_dir() else \
            shutil.copy2(source, new.path / name)  # copied, not moved: the old build stays whole until the swap
    listed = {entry.get("config_name"): entry for entry in old.card_configs()}
    entries = [listed[name] for name in kept if name in listed and old.config_files(name)]
    if entries:
        new.list_configs(entries)
        for key in CARRIED_METADATA:  # what an importer recorded about the configs kept
            for name, value in old.card_metadata(key).items():
                if name in kept:
                    new.set_card_metadata(key, name, value)
    return kept
