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
    """The folder; one that exists as a file is refused here, for every cache at once: each cache
    would otherwise say "no cache yet" for a path inside a file, or fail on its first write."""
    from ..errors import UsageError

    for name in ("IHBENCH_CACHE", "XDG_CACHE_HOME"):  # set but blank: a folder named by spaces was made
        refuse_blank(name)
    variable = "IHBENCH_CACHE" if os.environ.get("IHBENCH_CACHE") else \
        "XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME") else None
    # a `~` the shell did not expand (quoted, or from an env file) means home, as it does in --cache
    root = os.path.expanduser(os.environ.get("IHBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or "~/.cache", "ihbench"))
    for folder in (Path(root), Path(root).parent):
        if folder.exists() and not folder.is_dir():
            where = f"{variable}={os.environ[variable]}: " if variable else ""
            raise UsageError(f"{where}{folder} is a file; the toolkit's cache must be a folder (set "
                             f"{variable or 'IHBENCH_CACHE'} to a folder)")
    return Path(root)


def refuse_blank(name: str, unset: str = "") -> None:
    """A variable naming a folder, set to spaces only, is refused: taken as it is, a folder named by
    spaces was made in the working folder. `unset`: what leaving it out means, for the advice."""
    from ..errors import UsageError

    value = os.environ.get(name)
    if value and not value.strip():
        raise UsageError(f"{name}={value!r}: blank; unset it{f' ({unset})' if unset else ''}, or give a folder")
    from ..redaction import credential_in

    found = credential_in(value) if value else None
    if found:  # made a folder, ./http:/u:KEY@h kept the key on disk (battery 44)
        raise UsageError(f"{name}: {found} (a credential; not shown), where a folder goes; give a folder")
