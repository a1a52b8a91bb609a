"""`load_items`: from wherever the data lives to a list of `EvalItem`s."""
from __future__ import annotations

import os
import shutil
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional, Union

from .argtypes import NoSuchHomeError, expand_home
from .builddir import BuildDir, BuildDirError
from .errors import IHBenchError
from .io.regular import irregular
from .local_files import cache_is_current, check_config_files, damaged_parquet, record_cache, unfinished_import
from .long import INTERRUPTIONS_CONFIG, items_from_interruption_rows
from .outputs import DESCRIPTIONS, folder_kind, is_model_folder
from .schema import EvalItem
from .wide import WideConversation, baselines_from_rows, conversations_from_rows, items_from_conversation_rows

CONVERSATIONS_CONFIG = "conversations"
BASELINE_CONFIG = "baseline"
_PREFERRED_SPLITS = ("test", "dev", "validation", "train")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class DataSourceError(IHBenchError, ValueError):
    """The source cannot be opened; the message says which source and why."""


def load_items(
    source: Union[str, os.PathLike, Any],
    *,
    config: Optional[str] = None,
    split: Optional[str] = None,
    baseline: Any = None,
    revision: Optional[str] = None,
) -> list[EvalItem]:
    """All interruption points of an IHBench dataset, in conversation order then turn order.

    `source` is a built local dataset directory, a hub id such as ``"bosonai/IHBench"``, or a
    ``datasets.Dataset`` in the wide layout. ``config`` is the wide ``conversations`` config
    (default) or the in-house long ``interruptions`` config; both give identical items. For directories and hub ids the ``baseline``
    config is attached when the dataset has one; for a ``Dataset`` pass ``baseline=`` (another
    ``Dataset`` or an iterable of rows) yourself.
    """
    import datasets

    given_config = config
    config = config or CONVERSATIONS_CONFIG
    if baseline is not None and (isinstance(baseline, (str, bytes)) or not hasattr(baseline, "__iter__")):
        raise DataSourceError(f"baseline: rows (a Dataset, or a list of dicts) are expected, got "
                              f"{type(baseline).__name__} {str(baseline)[:40]!r}; baseline rows must be rows")
    original_was_dict = isinstance(source, datasets.DatasetDict)  # its split picks one of them
    if original_was_dict:
        source = source[_pick_split(list(source), split, "<DatasetDict>")]
    if isinstance(source, datasets.Dataset):
        label = f"<Dataset {source.info.dataset_name or 'in memory'}>"
        ignored = [name for name, value in (("config", None if given_config == CONVERSATIONS_CONFIG else given_config),
                                            ("split", split), ("revision", revision))
                   if value is not None and not (name == "split" and original_was_dict)]
        if ignored:  # a Dataset is already one config's split, read as the wide layout
            raise DataSourceError(f"{ignored[0]}: not for a Dataset given itself ({label} is already one config's "
                                  "rows, read as the wide conversations layout); leave it out, or give the "
                                  "dataset's folder or Hub id")
        baselines = baselines_from_rows(plain_rows(baseline), source=f"{label} baseline") if baseline is not None else None
        return items_from_conversation_rows(plain_rows(source), baselines=baselines, source=label)

    path, label = resolve_source(source)
    if revision is not None and Path(path).is_dir():  # a revision picks a Hub dataset's branch, tag or commit
        raise DataSourceError(f"revision={revision!r}: a revision picks a Hub dataset's branch, tag or commit, and "
                              f"{label} is a local folder; leave it out, or give the Hub id")
    _refuse_other_kind(path, label, config, revision)
    conversations = open_config(path, label, config, split, revision)
    if config == INTERRUPTIONS_CONFIG:
        return items_from_interruption_rows(plain_rows(conversations), source=f"{label} [{config}]")
    if baseline is None and config == CONVERSATIONS_CONFIG and BASELINE_CONFIG in config_names(path, revision):
        baseline = open_config(path, label, BASELINE_CONFIG, conversations.split._name, revision)
    baselines = baselines_from_rows(plain_rows(baseline), source=f"{label} [{BASELINE_CONFIG}]") if baseline is not None else None
    return items_from_conversation_rows(plain_rows(conversations), baselines=baselines, source=f"{label} [{config}]")


def convbench_benchmarks(names: list[str]) -> list[str]:
    """The ConversationBench benchmarks among a dataset's configs: each has its `NAME_setup` sibling."""
    return [name for name in names if name + "_setup" in names]


def setup_kind(config: str, names: list[str]) -> Optional[str]:
    """What `config` is when it is a benchmark's setup config (said the same by every reader), else None."""
    base = config[:-len("_setup")] if config.endswith("_setup") else None
    return f"the setup (knowledge base, tools) of the ConversationBench config {base}" if base in names else None


def _refuse_other_kind(path: str, label: str, config: str, revision: Optional[str]) -> None:
    """A config of the dataset that holds no interruption points, said as what it is: read as
    conversations, it fails on its first row ("column 'num_turns' is missing"), which reads like
    a damaged dataset."""
    if config in (CONVERSATIONS_CONFIG, INTERRUPTIONS_CONFIG):
        return
    names = config_names(path, revision)
    if config not in names:
        return  # open_config says which configs there are
    if config == BASELINE_CONFIG:
        kind = "the baseline answers to the points of config conversations (read with it, never alone)"
    elif config == "duplex":
        kind = "a turn-taking config (two-channel recordings for `ihbench turns`)"
    elif config.startswith("sid"):
        kind = "a SID config (clips for `ihbench sid`)"
    elif setup_kind(config, names):
        kind = setup_kind(config, names)
    elif config + "_setup" in names:
        kind = (f"a ConversationBench benchmark (played on-policy by `ihbench run --config {config}`; read with "
                "ihbench.dataset.convbench.load_benchmark)")
    else:
        return
    played = ", ".join(convbench_benchmarks(names))
    also = f" (`ihbench run` also plays a ConversationBench config: {played})" if played else ""
    raise DataSourceError(f"{label}: config {config!r} is {kind}, not interruption points; give conversations "
                          f"or interruptions{also}")


def load_conversations(
    source: Union[str, os.PathLike, Any],
    *,
    split: Optional[str] = None,
    revision: Optional[str] = None,
) -> list[WideConversation]:
    """Whole conversations (every turn, interrupted or not), for export and statistics."""
    import datasets

    original_was_dict = isinstance(source, datasets.DatasetDict)  # its split picks one of them
    if original_was_dict:
        source = source[_pick_split(list(source), split, "<DatasetDict>")]
    if isinstance(source, datasets.Dataset):
        return conversations_from_rows(plain_rows(source), source="<Dataset>")
    path, label = resolve_source(source)
    data = open_config(path, label, CONVERSATIONS_CONFIG, split, revision)
    return conversations_from_rows(plain_rows(data), source=f"{label} [{CONVERSATIONS_CONFIG}]")


def plain_rows(data: Any) -> list[dict]:
    """Plain rows with audio left encoded ({bytes, path}); decoding waits until a model needs it."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data.with_format("arrow")[:].to_pylist()
    return list(data)


#: what to give instead of each of the toolkit's other folders, by what that folder was made from
_NOT_DATA = {
    "run": "give the data folder it was made from (its run.json names it)",
    "sid": "give the data folder it was made from (its summary.json names it under \"data\")",
    "turns": "it holds the turn-taking analysis of recordings (`ihbench report` on it shows the results)",
    "report": "give the data folder its runs were made from (each run's run.json names it)",
    "generated": "build a dataset from its conversations with `ihbench build --sources <it>/conversations`",
    "reference_run": "give the dataset of the benchmark it played",
    "tiny-model": "it is a model (`ihbench run --model-path` takes it); give a dataset folder built by `ihbench build`",
}
_NOT_DATA["model"] = _NOT_DATA["tiny-model"]
#: judge, report and info take --data too, and have no --model-path: said as where a model goes (battery 61, H8)
_A_MODEL = _NOT_DATA["tiny-model"]


def resolve_source(source: Union[str, os.PathLike]) -> tuple[str, str]:
    """(what to open, how to name it): a dataset folder made absolute, or a Hub id as given.
    Callers that only pass the source on (the Space) call it first, so a WAV file or a run folder
    is refused in one line before anything starts, as `load_items` would refuse it."""
    text = os.fspath(source)
    if not text.strip():  # Path("") is the current folder: an empty --data must not read whatever is here
        raise DataSourceError("expected a dataset folder or a Hub id, got an empty string")
    try:
        path = expand_home(text)
    except NoSuchHomeError as error:
        raise DataSourceError(str(error)) from None
    if path.is_symlink() and not path.exists():  # not a Hub id either: a folder that was moved or deleted
        try:
            path.resolve()
        except RuntimeError:  # pathlib's "Symlink loop from ..."
            raise DataSourceError(f"{text}: a symlink loop: its links point at each other") from None
        raise DataSourceError(f"{text}: a symlink to {os.readlink(path)}, which does not exist")
    if path.exists():
        if not path.is_dir():
            got = irregular(path) or "a file"  # a named pipe or a device said as one (battery 59, F13)
            raise DataSourceError(f"{text}: expected a dataset directory (built by `ihbench build`), got {got}")
        if not any(path.iterdir()):
            raise DataSourceError(f"{text}: an empty folder, not a dataset (build one with `ihbench build`)")
        kind = folder_kind(path)
        if kind not in (None, "dataset"):  # a run or an output folder: say so, not "no config 'conversations'"
            raise DataSourceError(f"{text}: is {DESCRIPTIONS[kind]}, not a dataset; {_NOT_DATA[kind]}")
        if kind is None:
            refuse_inside_a_dataset(path, text)
            _refuse_not_a_dataset(path, text)
        elif not BuildDir(path).holds_a_build() and not (path / "README.md").exists():
            # a file named build_info.json among a user's files is no dataset to copy again (battery 62, I8)
            raise DataSourceError(f"{text}: not a dataset: its build_info.json is not a build's record, and it has no "
                                  "card (README.md); give a dataset folder built by `ihbench build`")
        else:  # before `datasets` reads it: a card listing no configs is named, not "config not found"
            try:
                BuildDir(path).check_card()
                if BuildDir(path).is_build():  # its record is read by report, verify --audio, publish: whole
                    BuildDir(path).info()
            except BuildDirError as error:
                raise DataSourceError(str(error)) from None
        # Absolute: a relative name that happens to match a hub id must never go to the hub.
        return str(path.resolve()), str(path)
    if _HUB_ID.match(text) and not text.startswith((".", "/")):
        return text, text
    raise DataSourceError(f"{text}: no such dataset directory, and not a hub id like 'bosonai/IHBench'")


def recorded_source(source: Union[str, os.PathLike]) -> str:
    """How a run records its data: a local folder by its absolute path (a report or judge started
    from another folder, or a resume, finds it), a Hub id as given."""
    path = expand_home(source)
    return str(path.resolve()) if path.is_dir() else os.fspath(source)


def same_source(recorded: Optional[str], given: Optional[str]) -> bool:
    """A run's recorded data and the data given now are one (an older run.json holds a relative path)."""
    if recorded is None or given is None:
        return recorded == given
    return recorded == given or recorded_source(recorded) == recorded_source(given)


def check_source(source: Union[str, os.PathLike]) -> tuple[str, str]:
    """`resolve_source`, and for a local dataset the files of every config its card lists (there,
    and holding rows): for callers that open configs later, one at a time (the Space, which must
    refuse before serving what `info` refuses)."""
    path, label = resolve_source(source)
    if Path(path).is_dir():
        for config in BuildDir(path).config_names():
            _check_local_files(Path(path), config)
    return path, label


def refuse_inside_a_dataset(path: Path, text: str) -> None:
    """data/conversations given for data: a config's folder, said as such (`datasets` would read it as a
    dataset of one config "default" and say "BuilderConfig 'conversations' not found")."""
    if folder_kind(path) is None and folder_kind(path.resolve().parent) == "dataset":
        raise DataSourceError(f"{text}: is a folder inside the dataset {path.resolve().parent}; give the dataset "
                              "folder itself")


def _refuse_not_a_dataset(path: Path, text: str) -> None:
    """A local folder that is no dataset of any kind, said as what it is rather than as the library
    finds it ("BuilderConfig 'conversations' not found", "Repo card metadata block was not found")."""
    if is_model_folder(path):
        raise DataSourceError(f"{text}: is a model folder (config.json and weights), not a dataset; {_A_MODEL}")
    if (path / "README.md").is_file():
        try:  # a card it cannot read says why (a byte-order mark, bytes that are not UTF-8) in the card's words
            BuildDir(path).card_configs()
        except BuildDirError as error:
            raise DataSourceError(str(error)) from None
        raise DataSourceError(f"{path / 'README.md'}: has no dataset card metadata (configs:); not a dataset "
                              "written by `ihbench build` or `ihbench sid-import`, nor one downloaded from the Hub")
    # every dataset the toolkit reads has its card (build, sid-import, convbench-import, a Hub download);
    # without one `datasets` reads loose files as one config "default", and says only that ours is missing
    hub = " (a Hub id of that name is not looked up while this folder is here)" if _HUB_ID.match(text) else ""
    raise DataSourceError(f"{text}: a local folder with no dataset card (README.md listing its configs){hub}; not a "
                          "dataset written by `ihbench build` or `ihbench sid-import`, nor one downloaded from the Hub")


def chosen_by_default(source: Union[str, os.PathLike], config: Optional[str],
                      split: Optional[str]) -> tuple[str, str]:
    """(config, split) with what a left-out option stands for filled in from the data: a run started without
    --split, resumed with `--split dev` (the split the default picked), is the same run (battery 60, G5)."""
    path, label = resolve_source(source)
    config = config or CONVERSATIONS_CONFIG
    return config, str(open_config(path, label, config, split, None).split)  # a config or split it has not: said


def config_names(path: str, revision: Optional[str]) -> list[str]:
    """A local folder's configs as its card lists them; a hub id's (or a folder without a card's)
    as `datasets` finds them."""
    import datasets

    if Path(path).is_dir():
        names = BuildDir(path).config_names()
        if names:
            return names
    try:
        return datasets.get_datasetconfig_names(path, revision=revision)
    except Exception:
        return []


def open_config(path: str, label: str, config: str, split: Optional[str], revision: Optional[str]):
    """One config of a resolved source (`resolve_source`), its split picked; errors name the source."""
    import datasets

    names = config_names(path, revision)
    if names and config not in names:
        unfinished = unfinished_import(Path(path), config) if Path(path).is_dir() else None
        raise DataSourceError(unfinished or f"{label}: no config {config!r}; available: {', '.join(names)}")
    loaded = load_config(path, label, config, revision)
    return loaded[_pick_split(list(loaded), split, f"{label} [{config}]")]


def load_config(path: str, label: str, config: str, revision: Optional[str] = None):
    """`datasets.load_dataset(path, config)` for every reader of the toolkit: a failure is one
    DataSourceError naming the source (and the file, when a local Parquet file is damaged), and the
    library's own log line about that same failure ("Failed to read schema ...") is not printed
    before it."""
    import datasets

    if Path(path).is_dir():
        _check_local_files(Path(path), config)
    try:
        with _library_error_log_off():  # what `datasets.load_dataset` does, with the cache looked at first
            builder = datasets.load_dataset_builder(path, config, revision=revision)
            local = Path(path).is_dir()
            if local and not cache_is_current(Path(path), config, builder.cache_dir):
                # files written anew under the same names (a Hub-layout folder rebuilt in place): a redownload kept
                # the old split sizes, refused the new files against them or read them back stale; the cache of
                # this folder's config goes, and is made again from the files
                shutil.rmtree(builder.cache_dir, ignore_errors=True)
                builder = datasets.load_dataset_builder(path, config, revision=revision)
            builder.download_and_prepare()
            if local:
                record_cache(Path(path), config, builder.cache_dir)
            return builder.as_dataset()
    except Exception as error:
        damaged = damaged_parquet(Path(path)) if Path(path).is_dir() else None
        if damaged:
            raise DataSourceError(damaged) from error
        offline = os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("HF_DATASETS_OFFLINE") == "1"
        hub = not Path(path).is_dir()  # a local folder is read from disk: being offline is not why it failed
        hint = " (HF_HUB_OFFLINE is set: hub datasets must already be in the local cache)" if offline and hub else ""
        # "runs/data" may be a folder that moved as well as a Hub id: both are said
        where = "no such local folder, and as a Hub dataset it " if hub else ""
        raise DataSourceError(f"{label}: {where}cannot load config {config!r}{hint}: {type(error).__name__}: "
                              f"{error}") from error


def _check_local_files(folder: Path, config: str) -> None:
    if BuildDir(folder).is_build():  # its record whole, as every reader takes it (`resolve_source`)
        try:
            BuildDir(folder).info()
        except BuildDirError as error:
            raise DataSourceError(str(error)) from None
    problem = check_config_files(folder, config)
    if problem:
        raise DataSourceError(problem)


@contextmanager
def _library_error_log_off():
    """datasets' file readers (its packaged modules: parquet, arrow, json, ...) log an error and then
    raise it; the raise is what the user is told, once, by the caller, so their error records are
    dropped where they are made while it loads (before any handler, ours or a host application's,
    sees them). Their warnings still show."""
    import logging

    class _NoErrors(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return record.levelno < logging.ERROR

    quiet = _NoErrors()
    readers = [logger for name, logger in list(logging.root.manager.loggerDict.items())
               if name.startswith("datasets.packaged_modules") and isinstance(logger, logging.Logger)]
    for logger in readers:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger in readers:
            logger.removeFilter(quiet)


def _pick_split(available: list[str], split: Optional[str], label: str) -> str:
    if split is not None:
        if split not in available:
            raise DataSourceError(f"{label}: no split {split!r}; available: {', '.join(available)}")
        return split
    if len(available) == 1:
        return available[0]
    for name in _PREFERRED_SPLITS:
        if name in available:
            return name
    raise DataSourceError(f"{label}: several splits ({', '.join(available)}); pass split=")
