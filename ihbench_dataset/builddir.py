"""A dataset folder as `ihbench build` writes it, the twin of `ihbench.rundir.RunDir`: one place that
knows its files, its lock and how to read them.

    OUT/README.md                         the card; its `configs:` name each config's files, which is
                                          all `load_dataset(OUT, config)` reads
    OUT/<config>/<split>-<hash>.parquet   one folder per config, each file named by its bytes
                                          (`content_names.py`), and named so in the card
    OUT/build_info.json                   what the build made (`BuildInfo`): the marker of a build,
                                          which a rebuild may replace
    OUT/stats.png                         the statistics plot the card shows
    .OUT.lock, beside OUT                 one writer at a time: build, sid-import, set-baseline (gone
                                          when the command ends)

`ihbench sid-import` into a new folder writes a card and configs without build_info.json: a dataset
folder, not a build. Build, set-baseline, sid-import, the loader and publish go through `BuildDir`.
"""
from __future__ import annotations

import copy
import functools
import re
import shutil
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator, Optional, Sequence

from .build_info import BuildInfo, BuildInfoError
from .io.json_object import not_utf8
from .io.regular import check_regular
from .content_names import name_by_content, split_of
from .errors import IHBenchError
from .io import (exclusive, lock_file_for, new_folders, read_json_object, temporary_sibling, write_atomic,
                 write_json_atomic)

CARD = "README.md"
INFO = "build_info.json"
STATS_PLOT = "stats.png"
AGAIN = "copy the dataset again or rebuild it"  # what to do about a damaged file of a dataset folder


class BuildDirError(IHBenchError, ValueError):
    """Not a build folder, or one that cannot be used as asked; the message names the folder."""


class BuildDir:
    def __init__(self, path):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"BuildDir({str(self.path)!r})"

    @property
    def card_path(self) -> Path:
        return self.path / CARD

    @property
    def info_path(self) -> Path:
        return self.path / INFO

    @property
    def stats_path(self) -> Path:
        return self.path / STATS_PLOT

    def folder(self, config: str) -> Path:
        return self.path / config

    def has_card(self) -> bool:
        """A card is there; one that is no regular file (a named pipe, a device) is refused as what it is, not
        taken for missing (battery 59, F9: "missing", or "a dataset folder ..., not a dataset")."""
        check_regular(self.card_path, "the dataset's card (README.md)")
        return self.card_path.is_file()

    def is_build(self) -> bool:
        check_regular(self.info_path, "the build's record (build_info.json)")
        return self.info_path.is_file()

    def may_be_replaced(self) -> bool:
        """Nothing there, an empty folder or an earlier build: replacing a build is fine; deleting a
        folder the toolkit did not make is not."""
        path = self.path
        return not path.exists() or (path.is_dir() and (self.holds_a_build() or not any(path.iterdir())))

    def holds_a_build(self) -> bool:
        """build_info.json is there and reads as a build's record: a file of that name alone (empty, `{"hello": 1}`)
        made a user's folder "an earlier build" to write a dataset among its files (battery 60, G4)."""
        if not self.is_build():
            return False
        try:
            self.info()
        except BuildDirError:
            return False
        return True

    # --- build_info.json ----------------------------------------------------------------------

    def info(self) -> BuildInfo:
        if not self.is_build():
            raise BuildDirError(f"{self.path}: not an ihbench build (no {INFO}); "
                                "expected a folder written by `ihbench build`")
        try:
            return BuildInfo.from_json(self.info_json())
        except BuildInfoError as error:
            raise BuildDirError(f"{self.info_path}: {error}; {AGAIN}") from None

    def info_json(self) -> dict:
        """build_info.json as the JSON object it must be; anything else (cut, not JSON, a list) is
        refused naming the file. Every reader of a dataset folder calls it (`load.resolve_source`),
        so a damaged record is said once, not read as "no build" by whoever looks at it next (the
        report's dev-set note, publish)."""
        return read_json_object(self.info_path, BuildDirError, hint=AGAIN)

    def write_info(self, info: BuildInfo) -> None:
        write_json_atomic(self.info_path, info.to_json())

    def written_by_build(self) -> set[str]:
        """The top-level names the last build wrote, which the next one replaces; everything else in
        the folder is kept (none listed: an older build, or no build, keeps all it cannot name)."""
        try:
            info = self.info()
        except BuildDirError:
            return set()
        return set(info.files or []) | set(info.configs) | {CARD, STATS_PLOT, INFO}

    @contextmanager
    def writing(self) -> Iterator[None]:
        """The folder's writer lock, for the life of a command: a hidden sibling, since a build
        replaces the folder whole; removed when the command ends, with any parent folder it made
        that is still empty."""
        path = self.path.resolve()
        with new_folders(path.parent), exclusive(lock_file_for(path), f"dataset directory {path}"):
            _sweep_temporaries(path)
            yield

    # --- the card -------------------------------------------------------------------------------

    def card_configs(self) -> list[dict]:
        """The card's `configs:` entries, read by huggingface_hub's card classes as `datasets` does;
        none without a card."""
        if not self.has_card():
            return []
        try:
            text = self.card_path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise BuildDirError(f"{self.card_path}: {not_utf8(error)}; {AGAIN}") from None
        if text.startswith("\ufeff"):  # a Windows editor's byte-order mark: `datasets` then finds no metadata
            raise BuildDirError(f"{self.card_path}: starts with a byte-order mark (saved by a Windows editor), which "
                                "hides its metadata (configs:) from `datasets`; save it as UTF-8 without BOM")
        try:
            return copy.deepcopy(_card_configs(text))
        except _CardError as error:
            raise BuildDirError(f"{self.card_path}: {error}") from None

    def config_names(self) -> list[str]:
        return [entry.get("config_name", "default") for entry in self.card_configs()]

    def check_card(self) -> list[str]:
        """The configs the card lists. A dataset folder whose card lists none (emptied, its metadata
        block cut or damaged, or gone) is refused naming the card: `datasets` would read the folder
        as one config 'default' and say "BuilderConfig 'conversations' not found", after
        huggingface_hub's "Repo card metadata block was not found" once per read."""
        names = self.config_names()
        if not names:
            what = ("no configs metadata (empty or damaged card)" if self.has_card()
                    else "missing (the card lists the configs)")
            raise BuildDirError(f"{self.card_path}: {what}; {AGAIN}")
        for entry in self.card_configs():  # `datasets` reads every config's entry to open any one of them
            name = entry.get("config_name", "default")
            if not isinstance(name, str) or not name.strip():
                raise BuildDirError(f"{self.card_path}: a config's config_name is {name!r}, not a name; {AGAIN}")
            odd = sorted(set(name) & set(_NOT_IN_NAMES))
            if odd or name in (".", ".."):
                raise BuildDirError(f"{self.card_path}: config {name!r} is not a name (it holds "
                                    f"{' '.join(odd) or name}: a config name is no path); {AGAIN}")
            data_files = entry.get("data_files")
            problem = _shape_problem(data_files) or (None if _patterns(data_files) else
                                                     "names no file (its data_files path is empty)")
            if problem:
                raise BuildDirError(f"{self.card_path}: config {name!r} {problem}; {AGAIN}")
        defaults = [entry.get("config_name", "default") for entry in self.card_configs() if entry.get("default")]
        if len(defaults) > 1:
            raise BuildDirError(f"{self.card_path}: configs {defaults[0]!r} and {defaults[1]!r} are both marked "
                                f"default: true; mark one; {AGAIN}")
        owner: dict = {}  # a file named by two configs (an anchor, a copy-paste, a glob over other configs' folders)
        for name in names:
            for file in self.config_files(name):
                other = owner.setdefault(file, name)
                if other != name:
                    raise BuildDirError(f"{self.card_path}: configs {other!r} and {name!r} both name "
                                        f"{self.relative(file)}; each config names its own files; {AGAIN}")
        return names

    def unmatched_files(self, config: str) -> list[Path]:
        """The paths (or patterns) the card names for `config` that match no file here."""
        return [self.path / pattern for pattern in self._inside_patterns(config)
                if not any(file.is_file() for file in self.path.glob(pattern))]

    def paths_out(self, config: str) -> list[str]:
        """The paths the card names for `config` that leave the folder (absolute, through "..", a URL):
        `datasets` reads them from wherever they lead, and the dataset is no longer its folder."""
        return [pattern for entry in self.card_configs() if entry.get("config_name", "default") == config
                for pattern in _patterns(entry.get("data_files"))
                if PurePosixPath(pattern).is_absolute() or ".." in PurePosixPath(pattern).parts or "://" in pattern]

    def config_files(self, config: str) -> list[Path]:
        """The files the card names for `config` (patterns resolved as `datasets` resolves them)."""
        return sorted({file for pattern in self._inside_patterns(config) for file in self.path.glob(pattern)
                       if file.is_file()})

    def _inside_patterns(self, config: str) -> list[str]:
        """The card's paths for `config` that stay in the folder; those that leave it are `paths_out`'s
        to name (an absolute one is no pattern pathlib can glob here)."""
        out = set(self.paths_out(config))
        return [pattern for entry in self.card_configs() if entry.get("config_name", "default") == config
                for pattern in _patterns(entry.get("data_files")) if pattern not in out]

    def list_configs(self, entries: Sequence[dict], *, new_card: str = "") -> None:
        """Add these configs' entries to the card's `configs:`, or replace the entries of the same
        names; the card's text, other keys and other configs stay. Without a card, `new_card` is its text."""
        from huggingface_hub import DatasetCard

        # a new card gets an empty metadata block, which huggingface_hub would otherwise warn about
        card = DatasetCard(self.card_path.read_text(encoding="utf-8") if self.has_card() else
                           "---\nconfigs: []\n---\n" + new_card)
        names = {entry["config_name"] for entry in entries}
        kept = [entry for entry in card.data.get("configs") or [] if entry.get("config_name") not in names]
        card.data.configs = kept + list(entries)
        write_atomic(self.card_path, str(card))

    def card_metadata(self, key: str) -> dict:
        """A mapping kept under `key` in the card's metadata ({} when absent): what an importer
        records about the configs it wrote (`conversation_bench`: source and mapping version)."""
        if not self.has_card():
            return {}
        from huggingface_hub import DatasetCard

        value = DatasetCard.load(self.card_path).data.get(key)
        return dict(value) if isinstance(value, dict) else {}

    def set_card_metadata(self, key: str, name: str, value) -> None:
        """Set `name` under `key` in the card's metadata (None removes it); the rest stays."""
        from huggingface_hub import DatasetCard

        card = DatasetCard(self.card_path.read_text(encoding="utf-8"))
        entries = dict(card.data.get(key) or {})
        if value is None:
            entries.pop(name, None)
        else:
            entries[name] = value
        setattr(card.data, key, entries or None)
        write_atomic(self.card_path, str(card))

    # --- the files ------------------------------------------------------------------------------

    def relative(self, file: Path) -> str:
        """A file's path as the card names it."""
        return Path(file).relative_to(self.path).as_posix()

    def new_file(self, config: str, split: str) -> Path:
        """Where a config's next file is written (hidden) before `name_file` gives it its name."""
        self.folder(config).mkdir(parents=True, exist_ok=True)
        return temporary_sibling(self.folder(config) / f"{split}.parquet")

    @staticmethod
    def name_file(written: Path, split: str) -> Path:
        return name_by_content(written, split)

    def discard_files(self, written: dict[str, Path]) -> None:
        """Files `new_file` gave out that will not be installed, and config folders made for them alone."""
        for config, temporary in written.items():
            temporary.unlink(missing_ok=True)
            folder = self.folder(config)
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()

    def install_files(self, written: dict[str, Path], split: str, list_in_card: Callable[[dict], None]) -> dict:
        """Each config's file written by `new_file` named by its content and listed in the card
        (`list_in_card({config: path as the card names it})`); only then the config's earlier files
        are removed. Failed or stopped on the way (a full disk, Ctrl-C), the folder is as it was: the
        new files go, the earlier ones stay where the card names them, and config folders made for
        nothing are removed. An importer's one way to put files in a dataset."""
        before = {config: set(self.folder(config).glob("*.parquet")) for config in written}
        named: dict[str, Path] = {}
        try:
            for config, temporary in written.items():
                named[config] = self.name_file(temporary, split)
            list_in_card({config: self.relative(path) for config, path in named.items()})
        except BaseException:
            for config, file in named.items():
                if file not in before[config]:  # the same bytes already there stay
                    file.unlink(missing_ok=True)
            self.discard_files(written)
            raise
        for config, earlier in before.items():
            for file in earlier - {named[config]}:
                file.unlink(missing_ok=True)
        return {config: self.relative(path) for config, path in named.items()}

    def rewrite_file(self, file: Path, write: Callable[[Path], None]) -> Path:
        """Replace `file` with what `write(path)` writes. The new bytes get a new name, in the folder
        and in the card: under the old name a folder made again at the same path would be read back
        from the datasets cache (`content_names.py`)."""
        staged = temporary_sibling(file)
        write(staged)
        file.unlink()
        new = name_by_content(staged, split_of(file))
        card = self.card_path.read_text(encoding="utf-8")
        write_atomic(self.card_path, card.replace(self.relative(file), self.relative(new)))
        return new

    def files(self) -> list[str]:
        """The dataset's own files: the card, build_info.json, the statistics plot and every file a config
        of the card names. Only these are published or copied: anything else a user dropped into the
        folder (notes, a run, model weights) is not the dataset, and `foreign_files` names it."""
        own = {self.card_path, self.info_path, self.stats_path}
        own |= {file for config in self.config_names() for file in self.config_files(config)}
        return sorted(self.relative(file) for file in own if file.is_file())

    def foreign_files(self) -> list[str]:
        """The visible files here that are not the dataset's (`files`); hidden ones (a writer's lock or
        temporary files, .git, .env) are not looked at."""
        own = set(self.files())
        return sorted(name for name in (self.relative(p) for p in self.path.rglob("*") if p.is_file())
                      if name not in own and not any(part.startswith(".") for part in name.split("/")))

    def links_out(self) -> list[str]:
        """The dataset's own files (`files`) that are links, or lie under a linked folder, leading out
        of the folder: publishing copies what they lead to (a key file named stats.png went up)."""
        root = self.path.resolve()
        return [name for name in self.files()
                if root not in (self.path / name).resolve().parents]

    def copy_to(self, target: Path) -> None:
        """The dataset's own files (`files`) into `target` (made if needed)."""
        for name in self.files():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.path / name, target / name)


class _CardError(ValueError):
    pass


@functools.lru_cache(maxsize=16)
def _card_configs(text: str) -> list[dict]:
    """The `configs:` of a card's text, parsed once per text: every reader of a dataset asks for them
    several times (check, load, config files), and YAML is slow to parse (~40 ms for the dev set's)."""
    import yaml
    from huggingface_hub import DatasetCard
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    if not REGEX_YAML_BLOCK.search(text):  # no metadata block: nothing listed (said here, without the
        return []  # "Repo card metadata block was not found" huggingface_hub logs on each read)
    try:
        configs = DatasetCard(text).data.get("configs") or []
    except (ValueError, yaml.YAMLError) as error:
        said = " ".join(str(error).split())[:200]  # a YAML error's own lines (and its caret) in one line
        raise _CardError(f"the card's metadata cannot be read ({said}); {AGAIN}") from None
    if not isinstance(configs, list) or not all(isinstance(entry, dict) for entry in configs):
        raise _CardError("`configs:` must be a list of entries")
    names = [entry.get("config_name", "default") for entry in configs]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:  # `datasets` would read one entry's files under the other's columns
        raise _CardError(f"`configs:` lists config {twice!r} {names.count(twice)} times; each config once")
    return configs


#: what a config name may not hold (`datasets` makes a folder of it; its own list)
_NOT_IN_NAMES = '<>:/\\|?*'


def _patterns(data_files) -> list[str]:
    """The paths of a config's `data_files`: a string, a list of strings, or a list of {split, path}
    (anything else holds none: `_shape_problem` names it)."""
    if isinstance(data_files, (str, dict)):
        data_files = [data_files]
    if not isinstance(data_files, list):
        return []
    patterns = []
    for entry in data_files:
        paths = entry.get("path") if isinstance(entry, dict) else entry
        paths = [paths] if isinstance(paths, str) else paths if isinstance(paths, list) else []
        patterns += [p for p in paths if isinstance(p, str)]
    return patterns


def _shape_problem(data_files) -> Optional[str]:
    """What is wrong with a config's hand-edited `data_files`, in the card's terms, or None."""
    entries = [data_files] if isinstance(data_files, (str, dict)) else data_files
    if not isinstance(entries, list):
        return f"has data_files {data_files!r}, not a file name or a list of them"
    for entry in entries:
        if isinstance(entry, dict) and "split" in entry and (not isinstance(entry["split"], str)
                                                             or not entry["split"].strip()):
            return f"has a data_files split {entry['split']!r}, not a split name (test, train, ...)"
        if isinstance(entry, dict) and set(entry) - {"split", "path"}:
            return f"has a data_files entry with {', '.join(map(repr, sorted(set(entry) - {'split', 'path'})))}; " \
                   "each has a split and a path"
        paths = entry.get("path") if isinstance(entry, dict) else entry
        for path in paths if isinstance(paths, list) else [paths]:
            if path is None or isinstance(path, str) and not path.strip():
                return "names no file (its data_files path is empty)"
            if not isinstance(path, str):
                return f"has a data_files path {path!r}, not a file name"
            if PurePosixPath(path).parts in ((), (".",)) or path.strip().rstrip("/") in ("", "."):
                return f"names the dataset folder itself (path {path!r}), not its files"
    return None


#: a file being written whole (`io.atomic.temporary_sibling`: `.NAME.PID.tmp`)
_TEMPORARY = re.compile(r"^\..+\.\d+\.tmp$")


def _sweep_temporaries(path: Path) -> None:
    """What writers killed outright (kill -9, a power cut) left half-written in the folder and its
    config folders: never published or read, but litter inside a dataset. Only the folder's lock
    holder writes there, so none of them is being written now."""
    if not path.is_dir():
        return
    for folder in (path, *(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())):
        for file in folder.iterdir():
            if _TEMPORARY.match(file.name) and file.is_file() and not file.is_symlink():
                file.unlink(missing_ok=True)

