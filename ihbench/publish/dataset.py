"""`ihbench publish-dataset`: a built dataset folder (Parquet + card with `configs:`) to the Hub.

The folder is checked the way a user will open it (every IHBench config read back through
`load_items`) before anything is uploaded: a dataset on the Hub that the toolkit cannot read is
worse than none. Only the dataset's own files go (`BuildDir.files`); a folder holding anything else
a user dropped in (notes, a run, model weights) is refused with their names, by publish-dataset and
publish-space alike, rather than uploading them or leaving them out unsaid.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ihbench.dataset.builddir import CARD, INFO, STATS_PLOT, BuildDir
from ihbench.dataset.errors import MissingFileError, UsageError

from .hub import PublishPlan, check_repo_id, upload

IGNORED = [".*", "**/.*", "*.lock", "**/__pycache__/**"]


def _check_files(build: BuildDir) -> None:
    """Every file the card names, read from disk: `load_items` may answer from the `datasets` cache
    of an earlier load, which hides a file damaged or edited since (the upload would carry it)."""
    from ihbench.dataset.builddir import BuildDirError
    from ihbench.dataset.local_files import check_config_files

    try:
        build.check_card()  # the card's own shape first, as every reader checks it
    except BuildDirError as error:
        raise UsageError(f"{error}; nothing was uploaded") from None
    for config in build.config_names():
        problem = check_config_files(build.path, config)  # first: a path out of the folder is named as such
        if problem:
            raise UsageError(f"{problem}; nothing was uploaded")
        if not build.config_files(config):
            raise UsageError(f"{build.path}: config {config!r} names no file that exists; nothing was uploaded")


def check_no_credential(build: BuildDir) -> None:
    """No credential in the texts (`credential_in_data`): a folder built before `verify` looked for one, or edited
    since. For publish-dataset, and publish-space, which copies the dataset into the Space (battery 62, I1)."""
    from ihbench.dataset.keys_in_data import key_in_parquet

    for file in sorted({file for config in build.config_names() for file in build.config_files(config)}):
        if file.suffix == ".parquet":
            found = key_in_parquet(file)
            if found:
                raise UsageError(f"{file}: its column {found[0]} holds {found[1]} (a credential; not shown), "
                                 "which the Hub would show anyone; remove it from the source and rebuild the "
                                 "dataset; nothing was uploaded")


def _check_clips(folder: Path, items, progress: bool, turn_clips: Optional[list] = None) -> None:
    from ihbench.dataset.clip_check import unusable_clips

    problems = unusable_clips(items, progress=progress) + (turn_clips or [])
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UsageError(f"{folder}: {len(problems)} clip(s) a run would refuse: {problems[0]}{more}; mend or rebuild "
                         "the dataset; nothing was uploaded")


def check_readable(folder: Path, *, progress: bool = False) -> int:
    from ihbench.dataset import load_items

    build = BuildDir(folder)
    if not build.has_card():
        from ihbench.dataset.outputs import described_folder

        what = described_folder(folder)  # a run, a report, ...: said as what it is
        raise MissingFileError(f"{folder}: is {what}, not a dataset" if what else
                               f"{folder}: no {CARD}; publish a folder written by `ihbench build`")
    build.is_build()  # a record that is no regular file is refused, not left out of the upload (battery 59, F9)
    _check_files(build)
    foreign = build.foreign_files()
    if foreign:  # the one rule of both publish commands: the dataset's files, and nothing a user dropped in
        shown = ", ".join(foreign[:5]) + (f", ... ({len(foreign)} files)" if len(foreign) > 5 else "")
        raise UsageError(f"{folder}: not the dataset's files: {shown} (only the card, {INFO}, {STATS_PLOT} "
                         "and the files the card's configs name are published); move them out of the folder; "
                         "nothing was uploaded")
    check_no_credential(build)
    linked = build.links_out()
    if linked:
        shown = ", ".join(f"{name} (-> {(folder / name).resolve()})" for name in linked[:3])
        raise UsageError(f"{folder}: links leading out of the dataset folder: {shown}; publishing would upload what "
                         "they lead to: put the files themselves in the folder; nothing was uploaded")
    from ihbench.dataset.contents import IHBENCH_CONFIG, dataset_contents
    from ihbench.dataset.convbench import load_benchmark

    from ihbench.dataset.clip_check import unusable_turn_clips

    try:
        contents = dataset_contents(str(folder))
        turn_clips = []  # a ConversationBench config's turns, beside IHBench's or alone, as a run reads them
        for name, kind, _ in contents:
            if kind == "ConversationBench turns":
                benchmark = load_benchmark(str(folder), name)  # its turns, tools and setup
                turn_clips += unusable_turn_clips(benchmark.turns, f"{folder} [{name}]", progress=progress)
        if IHBENCH_CONFIG in build.config_names():
            items = load_items(str(folder))
            if not items:
                raise UsageError(f"{folder}: no interruption points; nothing was uploaded")
            from ihbench.dataset.long import INTERRUPTIONS_CONFIG

            # the long layout holds its own copy of every clip, which `run --config interruptions` reads
            long = load_items(str(folder), config=INTERRUPTIONS_CONFIG) \
                if INTERRUPTIONS_CONFIG in build.config_names() else []
            _check_clips(folder, items + long, progress, turn_clips)
            return len(items)
        _check_clips(folder, [], progress, turn_clips)
    except UsageError:
        raise
    except Exception as error:
        raise UsageError(f"{folder}: the toolkit cannot read this dataset ({type(error).__name__}: {error}); "
                         "nothing was uploaded") from None
    rows = sum(count for _, _, count in contents)
    if not rows:
        raise UsageError(f"{folder}: its configs hold no rows; nothing was uploaded")
    return rows


def publish_dataset(data_dir, repo_id: str, *, private: bool = False, dry_run: bool = False,
                    token: Optional[str] = None, api=None, progress: bool = False) -> PublishPlan:
    folder = Path(data_dir).resolve()
    check_repo_id(repo_id)
    if not folder.is_dir():  # a local folder only: a Hub dataset is published already
        what = "it is a file" if folder.is_file() else "no such folder" if not folder.exists() else "not a folder"
        raise MissingFileError(f"{data_dir}: expected a dataset folder written by `ihbench build`; {what}")
    check_readable(folder, progress=progress)
    files = BuildDir(folder).files()
    plan = PublishPlan(folder.name, repo_id, "dataset", folder, files)
    if not dry_run:
        upload(plan, api=api, token=token, private=private, ignore_patterns=IGNORED)
    return plan
