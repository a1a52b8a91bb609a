"""The files of a local dataset, checked before they are read, and read as they are now.

`datasets` keys its Arrow cache of a local folder on the folder's name and the card's file names,
never on the bytes: a file edited by hand, or a folder of the same name elsewhere, would be answered
from the cache of what was there before, with no word. Files `ihbench build` writes are named by
their hash (`content_names`), so checking a name against the bytes is enough for them; a file named
otherwise (a local copy of the official layout) gets its size and time recorded beside the cache,
and a cache whose record differs is made again.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from .builddir import BuildDir
from .content_names import changed_since_named, hash_in_name
from .io.regular import absent

#: written beside `datasets`' Arrow files: the files (path, size, mtime) that cache was made from
SOURCES_RECORD = "ihbench-sources.json"


def unfinished_import(folder: Path, config: str) -> Optional[str]:
    """A config folder with Parquet files the card does not list: an import killed before its card."""
    build = BuildDir(folder)
    if build.has_card() and config not in build.config_names() and any((Path(folder) / config).glob("*.parquet")):
        return (f"{Path(folder) / config}: holds Parquet files of config {config!r}, which {build.card_path.name} "
                "does not list: an import into this dataset that did not finish (killed); run the same "
                "`ihbench sid-import` or `ihbench convbench-import` again")
    return None


def _remedy(build: BuildDir, config: str) -> str:
    """How a config's files are made again: an imported one by its import (a rebuild does not bring
    it back), any other by `ihbench build`; or the whole dataset copied again."""
    from .convbench.importing import CARD_KEY, SETUP_SUFFIX
    from .sid.read import SID_CONFIGS

    imported = build.card_metadata(CARD_KEY) if build.has_card() else {}
    if config in SID_CONFIGS:
        return "import it again (`ihbench sid-import`) or copy the dataset again"
    if config in imported or config.removesuffix(SETUP_SUFFIX) in imported:
        return "import it again (`ihbench convbench-import`) or copy the dataset again"
    return "rebuild the dataset (`ihbench build`) or copy it again"


def check_config_files(folder: Path, config: str) -> Optional[str]:
    """What is wrong with a local config's files, in one line naming the file, or None: a file the card
    lists that is gone, one that is not readable Parquet, one changed since it was built, or a
    config whose files hold no rows. Said before `datasets` reads them, in the file's terms rather
    than the library's ("An error occurred while generating the dataset", 300 file extensions)."""
    import pyarrow.parquet as pq

    build = BuildDir(folder)
    unfinished = unfinished_import(folder, config)
    if unfinished:
        return unfinished
    outside = build.paths_out(config)
    if outside:
        return (f"{build.card_path}: config {config!r} names {outside[0]}, a path outside the dataset folder (the card "
                "lists the dataset's own files, named from its folder); put the file in the folder and name it so")
    missing = build.unmatched_files(config)
    if missing:
        pattern = any(c in missing[0].name for c in "*?[")
        # there, but no file to read (a pipe would be read for ever, a device without end)
        odd = list(missing[0].parent.glob(missing[0].name)) if pattern else \
            [missing[0]] if os.path.lexists(missing[0]) else []
        if odd:
            return (f"{odd[0]}: {absent(odd[0])}, where the card "
                    f"lists data of config {config!r}; {_remedy(build, config)}")
        what = "no file matches it" if pattern else "missing"
        return f"{missing[0]}: {what} (the card lists it for config {config!r}); {_remedy(build, config)}"
    files = [file for file in build.config_files(config) if file.suffix == ".parquet"]
    rows = 0
    for file in files:
        try:
            rows += pq.ParquetFile(file).metadata.num_rows
        except Exception as error:  # ArrowInvalid, OSError: whatever pyarrow says of the bytes
            return unreadable(file, error, _remedy(build, config))
        actual = changed_since_named(file)
        if actual:
            return (f"{file}: changed since it was written (its name holds the hash of the bytes written, "
                    f"{hash_in_name(file)}; they now hash to {actual}); {_remedy(build, config)}")
    if files and rows == 0:
        where = files[0] if len(files) == 1 else folder / config
        return f"{where}: holds no rows (config {config!r} is empty); {_remedy(build, config)}"
    return None


def damaged_parquet(folder: Path) -> Optional[str]:
    """The first Parquet file under a local dataset whose footer cannot be read, in one line."""
    import pyarrow.parquet as pq

    for file in sorted(folder.rglob("*.parquet")):
        try:
            pq.ParquetFile(file).metadata
        except Exception as error:
            return unreadable(file, error)
    return None


def unreadable(file: Path, error: Exception, remedy: str = "copy the dataset again or rebuild it") -> str:
    """A Parquet file whose footer cannot be read, in one line (what pyarrow says of the bytes)."""
    return (f"{file}: not a readable Parquet file ({(str(error).splitlines() or [type(error).__name__])[0][:200]}); "
            f"{remedy}")


def _sources(folder: Path, config: str) -> list[list]:
    """The config's files not named by their hash, as the cache record holds them."""
    files = [file for file in BuildDir(folder).config_files(config) if hash_in_name(file) is None]
    return [[str(file.resolve()), file.stat().st_size, file.stat().st_mtime_ns] for file in files]


def cache_is_current(folder: Path, config: str, cache_dir: Path, sources: Optional[list] = None) -> bool:
    """Whether `datasets`' cache of this config (`cache_dir`, the builder's, looked at before it is
    read) was made from these files: there is none yet, or its record says so. Files named by their
    hash need no record (`check_config_files` checked the names); a cache without one, made before
    or by another program, is not trusted."""
    sources = _sources(folder, config) if sources is None else sources
    if not sources or not Path(cache_dir).is_dir():
        return True
    try:
        return json.loads((Path(cache_dir) / SOURCES_RECORD).read_text(encoding="utf-8")) == sources
    except (OSError, ValueError):
        return False


def record_cache(folder: Path, config: str, cache_dir: Path) -> None:
    """Best effort: a read-only cache costs the next load a rebuild of its Arrow files, never this one."""
    sources = _sources(folder, config)
    record = Path(cache_dir) / SOURCES_RECORD
    if not sources or (record.is_file() and cache_is_current(folder, config, cache_dir, sources)):
        return  # nothing to record, or recorded already: not written again on every load
    try:
        record.write_text(json.dumps(sources), encoding="utf-8")
    except OSError:
        pass
