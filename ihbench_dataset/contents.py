"""What a dataset folder holds, config by config: a dataset made by `ihbench convbench-import` or
`ihbench sid-import` alone has no IHBench conversations, and `info` and `publish-dataset` describe and
check it by the configs it does have rather than failing on the one it lacks."""
from __future__ import annotations

import os
from typing import Union

from .convbench.importing import SETUP_SUFFIX
from .load import config_names, load_config, resolve_source

IHBENCH_CONFIG = "conversations"


def config_kind(name: str, names: list[str]) -> str:
    if name == IHBENCH_CONFIG:
        return "IHBench conversations"
    if name == "baseline":
        return "IHBench baselines"
    if name + SETUP_SUFFIX in names:
        return "ConversationBench turns"
    if name.endswith(SETUP_SUFFIX) and name[:-len(SETUP_SUFFIX)] in names:
        return "ConversationBench setup"
    if name.startswith("sid_"):
        return "SID-Bench clips"
    return "other"


def dataset_contents(source: Union[str, os.PathLike]) -> list[tuple[str, str, int]]:
    """(config, what it holds, rows over its splits) for every config, each read as every reader reads
    it (a damaged file is named)."""
    path, label = resolve_source(source)
    names = config_names(path, None)
    contents = []
    for name in names:
        loaded = load_config(path, label, name)
        contents.append((name, config_kind(name, names), sum(len(split) for split in loaded.values())))
    return contents
