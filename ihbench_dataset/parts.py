"""What each builder adds to a build: its configs' features in card order, the inputs that decide
their bytes (the config cache's key, see `config_cache.py`) and how to make the tables when the
cache does not have them. Rows are made only on a miss: a cached rebuild renders no SID clip and
mixes no duplex recording."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Union

from .features import baseline_features, conversations_features, interruptions_features
from .long import interruption_row
from .schema import INTERRUPTION_TYPES
from .sid_build import SID_DEV_NOISE, SID_DEV_SPEECH
from .sources import USER_VOICES, SourceConversation
from .tts import RenderCache, get_engine

CONFIGS = ("conversations", "baseline", "interruptions")


@dataclass
class Builder:
    name: str
    #: everything besides the package's code that decides the bytes of these configs
    inputs: list[Union[str, bytes]]
    #: {config: datasets.Features}, in the order the card lists them
    features: dict
    #: () -> ({config: datasets.Dataset}, statistics for the card)
    make: Callable[[], tuple[dict, dict]]
    #: {key: {name: value}} the card's metadata records about these configs
    card_metadata: dict = field(default_factory=dict)


def conversations_inputs(conversations: list[SourceConversation], audio: dict) -> list[str]:
    """What the IHBench and duplex configs both follow from: the sources and the renders."""
    return [sources_fingerprint(conversations), audio_digest(audio)]


def ihbench_builder(conversations: list[SourceConversation], audio: dict, inputs: list[str]) -> Builder:
    max_turns = max(len(c.turns) for c in conversations)
    features = dict(zip(CONFIGS, (conversations_features(max_turns), baseline_features(max_turns),
                                  interruptions_features())))
    return Builder("ihbench", inputs, features, lambda: ihbench_configs(conversations, audio, features))


def sid_builder(sid_sources, noise_clips: int, cache: RenderCache, *, progress: bool) -> Builder:
    from .sid import sid_features
    from .sid_build import load_sid_sources

    sources = load_sid_sources(sid_sources)
    voices = [f"{get_engine(v).voice_id} {get_engine(v).version}" for v in USER_VOICES]
    return Builder("sid", [json.dumps(sources, sort_keys=True), str(noise_clips), *voices],
                   {SID_DEV_SPEECH: sid_features(), SID_DEV_NOISE: sid_features()},
                   lambda: sid_configs(sources, noise_clips, cache, progress))


def duplex_builder(conversations: list[SourceConversation], audio: dict, inputs: list[str], cache: RenderCache, *,
                   progress: bool) -> Builder:
    """Keyed like the IHBench configs (`inputs`): the mixes follow from the same sources and renders
    (texts a build does not otherwise render, like a filler's full message, come from the same voices)."""
    from .duplex import DUPLEX_CONFIG, duplex_rows, duplex_statistics
    from .features import duplex_features

    def make():
        rows = duplex_rows(conversations, audio, cache, progress=progress)
        fingerprint = f"{sources_fingerprint(conversations)}-{DUPLEX_CONFIG}"
        return ({DUPLEX_CONFIG: _dataset(rows, duplex_features(), fingerprint)},
                {"duplex": duplex_statistics(rows)})

    return Builder("duplex", inputs, {DUPLEX_CONFIG: duplex_features()}, make)


def convbench_builders(folders: list[Path], cache: RenderCache, split: str, *, progress: bool) -> list[Builder]:
    """One builder per in-house ConversationBench-style benchmark folder (read now, so a broken
    folder stops the build before anything is rendered)."""
    from .convbench.importing import SETUP_SUFFIX, setup_features, turn_features
    from .convbench.rendered import VOICE, card_metadata, folder_fingerprint, read_in_house, render_rows

    builders = []
    engine = get_engine(VOICE)
    for folder in folders:
        benchmark, fingerprint = read_in_house(folder), folder_fingerprint(folder)

        def make(benchmark=benchmark, fingerprint=fingerprint):
            tables, part = render_rows(benchmark, cache, progress=progress)
            return {config: _dataset(rows, features, f"{fingerprint}-{config}")
                    for config, (rows, features) in tables.items()}, part

        builders.append(Builder(f"convbench:{benchmark.name}", [fingerprint, f"{engine.voice_id} {engine.version}"],
                                {benchmark.name: turn_features(), benchmark.name + SETUP_SUFFIX: setup_features()},
                                make, card_metadata(benchmark, split)))
    return builders


def _clip(data: bytes, name: str) -> dict:
    return {"bytes": data, "path": f"{name}.flac"}


def conversation_row(c: SourceConversation, audio: dict, max_turns: int) -> dict:
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


def baseline_row(c: SourceConversation, max_turns: int) -> dict:
    row = {"conversation_id": c.conversation_id, "num_turns": len(c.turns)}
    for n in range(1, max_turns + 1):
        turn = c.turns[n - 1] if n <= len(c.turns) else None
        i = turn.interruption if turn else None
        verdicts = i.baseline_rq_verdicts if i else None
        row[f"turn_{n}_baseline_response"] = i.baseline if i else None
        row[f"turn_{n}_baseline_rq_verdicts"] = [v.met for v in verdicts] if verdicts else None
        row[f"turn_{n}_baseline_rq_reasons"] = [v.reason for v in verdicts] if verdicts else None
    return row


def ihbench_configs(conversations: list[SourceConversation], audio: dict, features: dict) -> tuple[dict, dict]:
    """The IHBench configs ({name: Dataset}, default first) and their part of the card's statistics."""
    from .load import load_conversations, load_items
    from .stats import dataset_statistics

    max_turns = max(len(c.turns) for c in conversations)
    fingerprint = sources_fingerprint(conversations)
    wide = _dataset([conversation_row(c, audio, max_turns) for c in conversations], features["conversations"],
                    f"{fingerprint}-conversations")
    baseline = _dataset([baseline_row(c, max_turns) for c in conversations], features["baseline"],
                        f"{fingerprint}-baseline")
    # The long config comes out of the same reader users call, so the two can never disagree.
    items = load_items(wide, baseline=baseline)
    long = _dataset([interruption_row(item) for item in items], features["interruptions"],
                    f"{fingerprint}-interruptions")
    return dict(zip(CONFIGS, (wide, baseline, long))), dataset_statistics(load_conversations(wide), items)


def sid_configs(sources: dict, noise_clips: int, cache: RenderCache, progress: bool) -> tuple[dict, dict]:
    """The in-house SID-style configs and their line of the card's statistics."""
    from .sid import sid_features
    from .sid_build import noise_rows, speech_rows

    sid_rows = {SID_DEV_SPEECH: speech_rows(sources, cache, progress=progress), SID_DEV_NOISE: noise_rows(noise_clips)}
    fingerprint = hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()[:16]
    tables = {name: _dataset(rows, sid_features(), f"{fingerprint}-{noise_clips}-{name}")
              for name, rows in sid_rows.items()}
    speech = sid_rows[SID_DEV_SPEECH]
    return tables, {"sid": {"clips": sum(len(rows) for rows in sid_rows.values()),
                            "positives": sum(not r["total_nonbreak"] for r in speech),
                            "negatives": sum(r["total_nonbreak"] for r in speech),
                            "noise": len(sid_rows[SID_DEV_NOISE])}}


def _dataset(rows: list[dict], features, fingerprint: str):
    """Rows are already in Arrow form (audio as {bytes, path}), so build the table directly:
    `Dataset.from_list` would re-encode every clip and hash the whole table for a fingerprint
    we can give it from the sources' hash."""
    import datasets
    import pyarrow as pa

    table = pa.Table.from_pylist(rows, schema=features.arrow_schema)
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=features), fingerprint=fingerprint)


def audio_digest(audio: dict) -> str:
    """The renders (and any recorded user turns) by their bytes: a new voice version or a replaced
    recording changes the configs even when no source text did."""
    digest = hashlib.sha256()
    for key in sorted(audio):
        digest.update("\x1f".join(map(str, key)).encode())
        digest.update(hashlib.sha256(audio[key]).digest())
    return digest.hexdigest()


def sources_fingerprint(conversations: list[SourceConversation]) -> str:
    digest = hashlib.sha256()
    for c in sorted(conversations, key=lambda c: c.conversation_id):
        digest.update(c.digest.encode())
    return digest.hexdigest()[:16]
