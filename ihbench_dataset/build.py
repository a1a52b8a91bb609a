"""`ihbench build`: in-house sources -> a local Hugging Face dataset directory.

Layout written (all Parquet, audio embedded as 16 kHz mono FLAC):

    OUT/README.md                          the dataset card, with `configs:` for load_dataset
    OUT/conversations/dev-<hash>.parquet    official wide schema (+ assistant audio)
    OUT/baseline/dev-<hash>.parquet         baseline responses, wide
    OUT/interruptions/dev-<hash>.parquet    one row per interruption point, long
    OUT/duplex/dev-<hash>.parquet           one two-channel recording per conversation + turn-taking labels
    (<hash>: of the file's bytes, so a rebuild in place is never read back from the datasets cache)
    OUT/stats.png, OUT/build_info.json

Everything is written into a temporary sibling directory and renamed at the end, so a build
that fails leaves the previous build (or nothing) in place, never half a dataset.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Union

from .audio import encode_flac, load_recording
from .errors import IHBenchError
from .features import baseline_features, conversations_features, interruptions_features
from .locks import exclusive, lock_file_for
from .long import interruption_row
from .schema import INTERRUPTION_TYPES
from .sid_build import SID_DEV_NOISE, SID_DEV_SPEECH
from .sources import ASSISTANT_VOICE, Conversation
from .tts import RenderCache, get_engine

SPLIT = "dev"
CONFIGS = ("conversations", "baseline", "interruptions")
BUILD_MARKER = "build_info.json"


class BuildError(IHBenchError, RuntimeError):
    pass


@dataclass
class BuildResult:
    out: Path
    statistics: dict
    notes: list[str] = field(default_factory=list)
    renders: int = 0
    cache_hits: int = 0
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
) -> BuildResult:
    """`sid`: also render the in-house SID-style configs (`sid_dev_en`, `sid_dev_noise`) from
    `sid_sources` (default: the shipped utterances) with `sid_noise_clips` seeded noise clips.
    `duplex`: also mix each conversation into a two-channel recording with its turn-taking
    ground truth (config `duplex`, see `duplex.py`).

    A rebuild replaces what the previous build wrote and keeps everything else in the folder
    (configs added by `ihbench sid-import`, a user's own files), listed in the new card as before."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(lock_file_for(out), f"dataset directory {out}"):
        return _build_locked(out, sources, cache_dir=cache_dir, progress=progress, sid=sid, sid_sources=sid_sources,
                             sid_noise_clips=sid_noise_clips, duplex=duplex)


def _build_locked(out: Path, sources, *, cache_dir, progress: bool, sid: bool, sid_sources, sid_noise_clips: int,
                  duplex: bool):
    from .duplex import duplex_rows
    from .verify import verify_paths

    _refuse_foreign_directory(out)
    _remove_stale_work(out)
    report = verify_paths(sources)
    if not report.ok:
        listed = "\n".join(f"  {p}" for p in report.problems[:30])
        more = f"\n  ... and {len(report.problems) - 30} more" if len(report.problems) > 30 else ""
        raise BuildError(f"sources do not pass `ihbench verify` ({len(report.problems)} problem(s)):\n{listed}{more}")
    conversations = report.conversations
    cache = RenderCache(Path(cache_dir) if cache_dir else None)
    timings: dict = {}
    with _timed(timings, "render"):
        audio, notes = render_audio(conversations, cache, progress=progress)
    notes = report.notes + notes
    with _timed(timings, "sid"):
        sid_rows = _sid_rows(sid_sources, sid_noise_clips, cache, progress) if sid else {}
    with _timed(timings, "duplex"):
        mixes = duplex_rows(conversations, audio, cache, progress=progress) if duplex else []

    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        statistics = _write(tmp, conversations, audio, sid_rows, mixes, progress=progress, timings=timings)
        kept = _carry_over(out, tmp)
        if kept:
            notes.append(f"kept what this build does not make: {', '.join(kept)}")
        _write_info(tmp, conversations, statistics, cache, notes, kept)
        _replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return BuildResult(out=out, statistics=statistics, notes=notes,
                       renders=cache.misses, cache_hits=cache.hits, timings=timings)


def render_audio(conversations: list[Conversation], cache: RenderCache, *, progress: bool = True):
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


def _clip(data: bytes, name: str) -> dict:
    return {"bytes": data, "path": f"{name}.flac"}


def conversation_row(c: Conversation, audio: dict, max_turns: int) -> dict:
    kb = c.knowledge_base
    row = {
        "conversation_id": c.conversation_id,
        "domain": {"name": c.domain["name"], "description": c.domain["description"]},
        "goal": c.goal,
        "system_message": c.system_message,
        "knowledge_base": {
            "workflow_stages": [
                {key: stage[key] for key in ("name", "description", "skip_conditions", "failure_handling",
                                             "termination_conditions")}
                for stage in kb["workflow_stages"]
            ],
            "guidelines": list(kb["guidelines"]),
            "user_data": [{"field": d["field"], "value": d["value"]} for d in kb["user_data"]],
        },
        "user_intent": {
            "profile": c.user_intent["profile"],
            "interruption_probabilities": {k: float(c.user_intent["interruption_probabilities"][k])
                                           for k in INTERRUPTION_TYPES},
            "hidden_info": list(c.user_intent["hidden_info"]),
        },
        "num_turns": len(c.turns),
    }
    for n in range(1, max_turns + 1):
        turn = c.turns[n - 1] if n <= len(c.turns) else None
        i = turn.interruption if turn else None
        row.update({
            f"assistant_turn_{n}_transcript": turn.heard if turn else None,
            f"assistant_turn_{n}_original": turn.assistant if turn else None,
            f"user_turn_{n}_transcript": turn.user if turn else None,
            f"user_turn_{n}_audio": _clip(audio[(c.conversation_id, turn.index, "user")],
                                          f"{c.conversation_id}/user_turn_{n}") if turn else None,
            f"user_turn_{n}_interruption_type": (i.type if i else "") if turn else None,
            f"turn_{n}_tf_rubric": i.tf_rubric if i else None,
            f"turn_{n}_rq_rubrics": list(i.rq_rubrics) if i else None,
            f"assistant_turn_{n}_audio": _clip(audio[(c.conversation_id, turn.index, "assistant")],
                                               f"{c.conversation_id}/assistant_turn_{n}") if turn else None,
        })
    return row


def baseline_row(c: Conversation, max_turns: int) -> dict:
    row = {"conversation_id": c.conversation_id, "num_turns": len(c.turns)}
    for n in range(1, max_turns + 1):
        turn = c.turns[n - 1] if n <= len(c.turns) else None
        i = turn.interruption if turn else None
        verdicts = i.baseline_rq_verdicts if i else None
        row[f"turn_{n}_baseline_response"] = i.baseline if i else None
        row[f"turn_{n}_baseline_rq_verdicts"] = [v.met for v in verdicts] if verdicts else None
        row[f"turn_{n}_baseline_rq_reasons"] = [v.reason for v in verdicts] if verdicts else None
    return row


def _sid_rows(sid_sources, noise_clips: int, cache: RenderCache, progress: bool) -> dict[str, list[dict]]:
    from .sid_build import load_sid_sources, noise_rows, speech_rows

    return {SID_DEV_SPEECH: speech_rows(load_sid_sources(sid_sources), cache, progress=progress),
            SID_DEV_NOISE: noise_rows(noise_clips)}


def ihbench_configs(conversations: list[Conversation], audio: dict, fingerprint: str) -> tuple[dict, dict]:
    """The IHBench configs ({name: Dataset}, default first) and their part of the card's statistics."""
    from .load import load_conversations, load_items
    from .stats import dataset_statistics

    max_turns = max(len(c.turns) for c in conversations)
    wide = _dataset([conversation_row(c, audio, max_turns) for c in conversations],
                    conversations_features(max_turns), f"{fingerprint}-conversations")
    baseline = _dataset([baseline_row(c, max_turns) for c in conversations],
                        baseline_features(max_turns), f"{fingerprint}-baseline")
    # The long config comes out of the same reader users call, so the two can never disagree.
    items = load_items(wide, baseline=baseline)
    long = _dataset([interruption_row(item) for item in items], interruptions_features(), f"{fingerprint}-interruptions")
    return dict(zip(CONFIGS, (wide, baseline, long))), dataset_statistics(load_conversations(wide), items)


def sid_configs(sid_rows: dict, fingerprint: str) -> tuple[dict, dict]:
    """The in-house SID-style configs and their line of the card's statistics."""
    from .sid import sid_features

    tables = {name: _dataset(rows, sid_features(), f"{fingerprint}-{name}") for name, rows in sid_rows.items()}
    speech = sid_rows[SID_DEV_SPEECH]
    return tables, {"sid": {"clips": sum(len(rows) for rows in sid_rows.values()),
                            "positives": sum(not r["total_nonbreak"] for r in speech),
                            "negatives": sum(r["total_nonbreak"] for r in speech),
                            "noise": len(sid_rows[SID_DEV_NOISE])}}


def duplex_configs(rows: list[dict], fingerprint: str) -> tuple[dict, dict]:
    """The two-channel recordings and their line of the card's statistics."""
    from .duplex import DUPLEX_CONFIG, duplex_statistics
    from .features import duplex_features

    return ({DUPLEX_CONFIG: _dataset(rows, duplex_features(), f"{fingerprint}-{DUPLEX_CONFIG}")},
            {"duplex": duplex_statistics(rows)})


def _write(root: Path, conversations: list[Conversation], audio: dict, sid_rows: dict, duplex_rows: list[dict], *,
           progress: bool, timings: dict) -> dict:
    """Each builder gives its configs and statistics; this writes them all, the plot and the card."""
    import datasets

    from .card import render_card
    from .stats import plot_statistics

    if not progress:
        datasets.disable_progress_bars()
    fingerprint = sources_fingerprint(conversations)
    parts = [ihbench_configs(conversations, audio, fingerprint)]
    if sid_rows:
        parts.append(sid_configs(sid_rows, fingerprint))
    if duplex_rows:
        parts.append(duplex_configs(duplex_rows, fingerprint))
    written, statistics = {}, {}
    for tables, part in parts:
        written.update(tables)
        statistics.update(part)
    files = {}
    for name, data in written.items():
        (root / name).mkdir()
        with _timed(timings, f"write {name}"):
            files[name] = f"{name}/{_write_parquet(data, root / name).name}"
    plot_statistics(statistics, root / "stats.png")
    voices = sorted({c.user_voice for c in conversations} | {ASSISTANT_VOICE})
    (root / "README.md").write_text(
        render_card(statistics=statistics, features={name: data.features for name, data in written.items()},
                    voices={v: get_engine(v) for v in voices}, split=SPLIT, configs=tuple(written),
                    provenances=[c.provenance for c in conversations], files=files),
        encoding="utf-8",
    )
    return statistics


def _write_parquet(data, folder: Path) -> Path:
    """`dev-<content hash>.parquet`: `datasets` caches a local folder's configs by their file names,
    and patterns, so a rebuild in place was read back from the old cache; a name that changes
    with the bytes, written exactly into the card, makes every `load_dataset` see the new data."""
    staging = folder / f".{SPLIT}.parquet.partial"
    data.to_parquet(str(staging))
    digest = hashlib.sha256()
    with staging.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    final = folder / f"{SPLIT}-{digest.hexdigest()[:16]}.parquet"
    staging.rename(final)
    return final


def _dataset(rows: list[dict], features, fingerprint: str):
    """Rows are already in Arrow form (audio as {bytes, path}), so build the table directly:
    `Dataset.from_list` would re-encode every clip and hash the whole table for a fingerprint
    we can give it from the sources' hash."""
    import datasets
    import pyarrow as pa

    table = pa.Table.from_pylist(rows, schema=features.arrow_schema)
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=features), fingerprint=fingerprint)


def sources_fingerprint(conversations: list[Conversation]) -> str:
    digest = hashlib.sha256()
    for c in sorted(conversations, key=lambda c: c.conversation_id):
        digest.update(c.digest.encode())
    return digest.hexdigest()[:16]


def _write_info(root: Path, conversations, statistics: dict, cache: RenderCache, notes: list[str],
                kept: list[str]) -> None:
    from importlib.metadata import version

    from . import __name__ as package

    info = {
        "builder": f"{package} (ihbench {version('ihbench')})",
        "sources_fingerprint": sources_fingerprint(conversations),
        "conversations": [c.conversation_id for c in conversations],
        "split": SPLIT,
        "configs": sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in kept),
        "files": sorted(p.name for p in root.iterdir() if p.name not in kept) + [BUILD_MARKER],
        "kept": kept,
        "statistics": statistics,
        "notes": notes,
    }
    (root / BUILD_MARKER).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


def _refuse_foreign_directory(out: Path) -> None:
    """Replacing a previous build is fine; deleting a directory we did not make is not."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / BUILD_MARKER).is_file())):
        raise BuildError(f"{out}: exists and is not an ihbench build (no {BUILD_MARKER}); choose another --out")


def _own_entries(out: Path) -> set[str]:
    """Top-level names the previous build wrote (older builds did not list their files)."""
    try:
        info = json.loads((out / BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return set()
    return set(info.get("files") or []) | set(info.get("configs") or []) | {"README.md", "stats.png", BUILD_MARKER}


def _carry_over(out: Path, tmp: Path) -> list[str]:
    """Move into the new build what the old folder holds that no build wrote; list kept configs
    in the new card with the entries they had."""
    if not out.is_dir():
        return []
    own, made = _own_entries(out), {p.name for p in tmp.iterdir()}
    kept = sorted(p.name for p in out.iterdir() if p.name not in own and p.name not in made)
    for name in kept:
        shutil.copytree(out / name, tmp / name, symlinks=True) if (out / name).is_dir() else \
            shutil.copy2(out / name, tmp / name)  # copied, not moved: the old build stays whole until the swap
    configs = [name for name in kept if (out / name).is_dir() and any((out / name).rglob("*.parquet"))]
    if configs and (out / "README.md").is_file():
        from huggingface_hub import DatasetCard

        entries = {entry.get("config_name"): entry for entry in DatasetCard.load(out / "README.md").data.get("configs") or []}
        card = DatasetCard.load(tmp / "README.md")
        card.data.configs = list(card.data.get("configs") or []) + [entries[c] for c in configs if c in entries]
        card.save(tmp / "README.md")
    return kept


def _remove_stale_work(out: Path) -> None:
    """Working folders of builds that were killed (their process is gone): hundreds of MB each."""
    for leftover in out.parent.glob(f".{out.name}.building-*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(leftover, ignore_errors=True)
    for leftover in out.parent.glob(f".{out.name}.old-*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(leftover, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _replace(tmp: Path, out: Path) -> None:
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        os.replace(out, old)
    os.replace(tmp, out)
    shutil.rmtree(old, ignore_errors=True)
