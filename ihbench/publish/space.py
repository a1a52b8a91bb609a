"""`ihbench publish-space`: the Gradio Space as a self-contained folder, then on the Hub.

The Hub builds a Space by installing `requirements.txt` before the rest of the repository is
there, so a wheel inside the folder could not be installed from it. The staged folder carries
the toolkit's packages themselves (the exact code of the installed version, metric modules
included) next to `app.py`, where Python finds them, and `requirements.txt` lists what those
packages depend on, read from the installed distribution's own metadata.
"""
from __future__ import annotations

import importlib.util
import shutil
from importlib import metadata
from pathlib import Path
from typing import Optional

from ihbench.dataset.builddir import BuildDir
from ihbench.dataset.errors import MissingDependencyError
from ihbench.dataset.load import DataSourceError, resolve_source

from ..resources import space_dir
from .dataset import check_readable
from .hub import (PublishPlan, begin_staging, check_repo_id, check_staging_folder, mark_staged, staged_files,
                  staging_lock, staging_root, upload)

#: the packages under the one import root, by import name (a checkout keeps the last two in their own folders)
PACKAGES = ("ihbench", "ihbench.dataset", "ihbench.loaders")
EXTRAS = ("models", "space", "smart-turn")  # smart-turn: the Detect and Turns tabs offer Smart Turn
PINNED = ("torch", "torchcodec")  # the pair is ABI-bound: pin what this toolkit was installed with
DATA_FOLDER = Path("data") / "ihbench-dev"
#: the data files each package ships besides its modules: setup.cfg's [options.package_data], which
#: an installed toolkit cannot read (a test keeps the two equal). Only these and the .py files are
#: staged: a cache, a run or notes that landed in the installed package never go up with the Space.
SHIPPED = {
    "ihbench.dataset": ("sources/*.md", "sources/conversations/*.json", "sources/sid/*.json",
                        "sources/convbench/*/*.py", "sources/convbench/*/data/*.txt", "dataset_card.md",
                        "smart_turn_cuts.png"),
    "ihbench": ("reference/*.csv", "metrics/*/*.py", "metrics/*/*.md", "metrics/*/*.txt", "spaces/*.py",
                "spaces/*.md"),
    "ihbench.loaders": (),
}


def space_requirements() -> list[str]:
    from packaging.requirements import Requirement
    from packaging.version import Version

    try:
        declared = metadata.requires("ihbench") or []
    except metadata.PackageNotFoundError:
        raise MissingDependencyError("ihbench is not installed as a package (pip install ihbench, or pip install -e . "
                           "in a checkout); its dependencies are read from the installed metadata") from None
    lines = {}
    for text in declared:
        requirement = Requirement(text)
        if requirement.marker and not any(requirement.marker.evaluate({"extra": e}) for e in EXTRAS):
            continue
        requirement.marker = None
        name = requirement.name.lower()
        if name in PINNED:
            try:
                # public part only: a local label such as +cpu names a build no index serves
                lines[name] = f"{requirement.name}=={Version(metadata.version(requirement.name)).public}"
                continue
            except metadata.PackageNotFoundError:
                pass
        lines[name] = str(requirement)
    return [lines[name] for name in sorted(lines)]


def shipped_files(folder: Path, data: tuple) -> list[str]:
    """The files of an installed package a wheel carries: its modules (no caches or hidden files)
    and the data files its patterns name; `spaces/` is staged as the Space's own app.py instead."""
    import fnmatch
    import os

    names = []
    for root, folders, files in os.walk(folder, followlinks=True):
        folders[:] = [f for f in folders if not f.startswith((".", "__pycache__"))
                      and not (Path(root) == folder and f == "spaces")]
        for file in files:
            name = (Path(root) / file).relative_to(folder).as_posix()
            parts = name.split("/")
            if file.startswith("."):
                continue
            if file.endswith(".py") or any(len(parts) == len(pattern.split("/")) and all(
                    fnmatch.fnmatchcase(part, glob) for part, glob in zip(parts, pattern.split("/")))
                    for pattern in data):
                names.append(name)
    return sorted(names)


def _package_folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(f"package {name} is not importable; install the toolkit first")
    return Path(list(spec.submodule_search_locations)[0])


def _write_card(target: Path, repo_id: str, data: Optional[str]) -> None:
    from huggingface_hub import SpaceCard

    card = SpaceCard.load(space_dir() / "README.md")
    card.data.title = repo_id.split("/", 1)[1]
    if data and not Path(data).exists():
        card.data.datasets = [data]
    card.save(target / "README.md")


def stage_space(repo_id: str, target: Path, *, data: Optional[str] = None, progress: bool = False) -> PublishPlan:
    """app.py, card, requirements.txt, packages.txt, the toolkit's packages, and the data
    (copied when `data` is a folder; a Hub id is set as the Space variable IHBENCH_DATA)."""
    check_repo_id(repo_id)
    target = check_staging_folder(Path(target), "staging folder")
    variables = {}
    if data:  # a file, a link to nothing or a folder that is no dataset is refused, never taken for a Hub id
        try:
            resolve_source(data)
        except DataSourceError as error:
            raise DataSourceError(f"--data: {error}") from None
    if data and Path(data).is_dir():
        from .dataset import check_no_credential

        check_readable(Path(data).resolve(), progress=progress)
        check_no_credential(BuildDir(Path(data)))
        variables["IHBENCH_DATA"] = str(DATA_FOLDER)
    elif data:
        variables["IHBENCH_DATA"] = check_repo_id(data, "--data (not a folder, so a Hub dataset id)")
    begin_staging(target)  # everything checked: nothing is made for a refused command
    if data and Path(data).is_dir():
        BuildDir(Path(data)).copy_to(target / DATA_FOLDER)
    shutil.copyfile(space_dir() / "app.py", target / "app.py")
    _write_card(target, repo_id, data)
    (target / "requirements.txt").write_text("\n".join(space_requirements()) + "\n", encoding="utf-8")
    (target / "packages.txt").write_text("ffmpeg\n", encoding="utf-8")  # torchcodec decodes through FFmpeg
    for package in PACKAGES:  # the wheel already holds the subpackages inside `ihbench/`
        source, into = _package_folder(package), target.joinpath(*package.split("."))
        for name in shipped_files(source, SHIPPED[package]):
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, into / name)  # links become real files
    return PublishPlan(repo_id.split("/", 1)[1], repo_id, "space", target, staged_files(target), variables)


def publish_space(repo_id: str, *, data: Optional[str] = None, private: bool = False, dry_run: bool = False,
                  token: Optional[str] = None, api=None, staging_dir: Optional[Path] = None,
                  progress: bool = False) -> PublishPlan:
    check_repo_id(repo_id)
    with staging_lock(staging_dir):
        root = staging_root(staging_dir, "ihbench-space-")
        try:
            plan = stage_space(repo_id, root, data=data, progress=progress)
            if staging_dir is not None:
                mark_staged(root)
        except BaseException:
            if staging_dir is None:  # our temporary folder: a refused command leaves nothing behind
                shutil.rmtree(root, ignore_errors=True)
            raise
        try:
            if not dry_run:
                upload(plan, api=api, token=token, private=private, space_sdk="gradio")
        finally:  # uploaded, failed or only listed: our temporary copy (the data included, hundreds of MB) goes;
            if staging_dir is None:  # --staging-dir keeps a staging to look at
                shutil.rmtree(root, ignore_errors=True)
    return plan
