"""The one cache folder, shared by every cache of the toolkit: `IHBENCH_CACHE`, else
`$XDG_CACHE_HOME/ihbench`, else `~/.cache/ihbench`.

    tts/                 TTS renders (`tts.RenderCache`); tts/configs: finished build configs
                         (`config_cache.py`); tts/duplex: mixed two-channel recordings
    judge_cache.sqlite   answers of judge and generation LLMs
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    root = os.environ.get("IHBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ihbench")
    return Path(root)
