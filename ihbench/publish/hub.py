"""The one place that talks to the Hub: create the repository, upload the staged folder."""
from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ihbench.dataset.errors import UsageError
from ihbench.dataset.outputs import check_output_path

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass
class PublishPlan:
    """What was (or, with --dry-run, would be) uploaded, and from where."""

    name: str
    repo_id: str
    repo_type: str
    staged: Path
    files: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)


def _refuse_credential(name: str, what: str) -> None:
    """A key pasted as a repository's name (battery 47, T2): staged into every card and usage example,
    and the name of a public repository once created."""
    from ihbench.dataset.redaction import credential_in

    found = credential_in(name) if isinstance(name, str) else None
    if found:
        raise UsageError(f"{what}: got {found} (a credential; not shown): a Hub name holds none, and it would be "
                         "written into every staged file and be the repository's public name")


def check_repo_id(repo_id: str, what: str = "--repo") -> str:
    _refuse_credential(repo_id, what)
    if not isinstance(repo_id, str) or not _REPO_ID.match(repo_id):
        raise UsageError(f"{what}: expected NAMESPACE/NAME (letters, digits, '.', '_', '-'; each part starting with a "
                         f"letter or digit), got {_shown(repo_id)}")
    _hub_rules(repo_id, what)
    return repo_id


def _shown(name) -> str:
    """A refused name with each invisible character by its code (U+3164: battery 63, J7; battery 64, K7)."""
    from ihbench.dataset.characters import escaped

    return escaped(name) if isinstance(name, str) else repr(name)


def check_namespace(namespace: str, what: str = "--namespace", names: Sequence[str] = ()) -> str:
    """`what`: how the user gave it (the option, as `check_repo_id` names --repo); `names`: the repos
    it will hold, each checked whole by the Hub's rules (their length)."""
    _refuse_credential(namespace, what)
    if not isinstance(namespace, str) or not _NAME.match(namespace):
        raise UsageError(f"{what}: expected a user or organization name (letters, digits, '.', '_', '-', starting "
                         f"with a letter or digit), got {_shown(namespace)}")
    _hub_rules(namespace, what)
    for name in names:
        _hub_rules(f"{namespace}/{name}", what)
    return namespace


def _hub_rules(repo_id: str, what: str) -> None:
    """The Hub library's own checks ('--' or '..', at most 96 characters, ...), so that a dry run
    promises only an upload the real command can make."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        raise UsageError(f"{what}: {error}") from None


def check_staging_folder(folder: Path, what: str = "--staging-dir") -> Path:
    """The one rule of a folder to stage an upload in: new or empty (the whole folder is uploaded, so a
    file left there from before would go with it), and not inside one of the toolkit's own folders."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{what}: {folder} is a file, not a folder")
    if folder.is_dir() and any(folder.iterdir()):
        if not (folder / STAGING_MARKER).is_file():
            raise UsageError(f"{what}: {folder} is not empty; everything in it would be uploaded, so give a new or "
                             "empty folder (or one an earlier publish staged into)")
        _refuse_links(folder, what)
        check_output_path(folder, what, shared=True)
        if _stopped_midway(folder) and staged_files(folder):  # its files and any put there since look alike
            raise UsageError(f"{what}: {folder} holds what a publish stopped while staging left there, and maybe "
                             f"files of yours put there since, which cannot be told apart; nothing was removed: move "
                             "out what is yours and empty the folder (or give another folder)")
        staged = _staged_before(folder)
        foreign = [name for name in staged_files(folder) if name not in staged]
        if foreign:  # a user's own files: never uploaded, never removed
            shown = ", ".join(foreign[:5]) + (f", ... ({len(foreign)} files)" if len(foreign) > 5 else "")
            raise UsageError(f"{what}: {folder} holds files no earlier publish staged: {shown}; everything in it "
                             "would be uploaded, so move them out (or give another folder)")
        for name in staged:  # an earlier staging of ours (a dry run, a failed upload): made again
            (folder / name).unlink(missing_ok=True)
        for directory in sorted((d for d in folder.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
            if not any(directory.iterdir()):
                directory.rmdir()
        return folder
    check_output_path(folder, what)
    return folder


def _refuse_links(folder: Path, what: str) -> None:
    """Staging would write through a link into the folder it points to, a user's, replacing their
    files, and upload whatever else is there."""
    for root, folders, files in os.walk(folder):
        folders.sort()
        for name in sorted(folders + files):
            path = Path(root, name)
            if path.is_symlink():
                raise UsageError(f"{what}: {path} is a symlink (to {os.readlink(path)}); a staging folder holds only "
                                 "what ihbench staged: remove it")


#: left in a --staging-dir by a publish, so the same folder may be staged into again (after a dry
#: run, say); never uploaded
STAGING_MARKER = ".ihbench-staging"


@contextlib.contextmanager
def staging_lock(staging_dir: Optional[Path]):
    """One publish at a time stages into a --staging-dir: two at once each listed (and would upload) the
    other's files. Held for the whole command, as a run folder's lock is; no lock for a temporary folder."""
    if staging_dir is None:
        yield
        return
    from ihbench.dataset.io import exclusive, lock_file_for, new_folders

    # where it is, checked before the lock is made beside it: a folder inside a dataset had a lock made (and
    # removed) in the dataset, and a read-only one was refused for the lock it could not take
    check_output_path(Path(staging_dir), "--staging-dir", shared=True)
    with new_folders(Path(staging_dir).parent), exclusive(lock_file_for(staging_dir), f"staging folder {staging_dir}"):
        yield


def staging_root(staging_dir: Optional[Path], prefix: str) -> Path:
    """Where a publish command stages what it uploads: --staging-dir (checked) or a new temporary folder."""
    if staging_dir is not None:
        return check_staging_folder(staging_dir)
    # the temporary folder's place, checked before it is made there (TMPDIR inside a dataset made one in it)
    check_output_path(tempfile.gettempdir(), "TMPDIR (where a publish stages its files without --staging-dir)",
                      shared=True)
    return Path(tempfile.mkdtemp(prefix=prefix))


def begin_staging(root: Path) -> None:
    """Before the first file is staged (everything checked): a staging stopped midway (SIGTERM, kill -9)
    is known as ours, so the next publish names what happened rather than "not empty"; it removes
    nothing, since a user's file put there since cannot be told from what was staged."""
    root.mkdir(parents=True, exist_ok=True)
    (root / STAGING_MARKER).write_text(json.dumps({"staged by": "ihbench publish", "files": None, "under way": True}))


def mark_staged(root: Path) -> None:
    """After a staging into --staging-dir succeeded: the next publish may stage there again, replacing
    exactly the files listed here (anything else found there later is a user's, and refused)."""
    (root / STAGING_MARKER).write_text(json.dumps({"staged by": "ihbench publish", "files": staged_files(root)}))


def _marker(folder: Path) -> dict:
    try:
        marker = json.loads((folder / STAGING_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def _stopped_midway(folder: Path) -> bool:
    """A staging stopped before `mark_staged` (SIGTERM, kill -9): its marker lists no files. Taking all the
    folder holds for its own deleted a file a user put there afterwards."""
    return _marker(folder).get("under way") is True


def _staged_before(folder: Path) -> set[str]:
    """The files the marker lists (none for a marker of an older version, which listed nothing)."""
    files = _marker(folder).get("files")
    inside = folder.resolve()
    return {name for name in files if isinstance(name, str) and (folder / name).resolve().is_relative_to(inside)} \
        if isinstance(files, list) else set()


def staged_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != STAGING_MARKER)


def upload(plan: PublishPlan, *, api=None, token: Optional[str] = None, private: bool = False,
           space_sdk: Optional[str] = None, ignore_patterns: Optional[list[str]] = None) -> None:
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    create = {"repo_type": plan.repo_type, "exist_ok": True}
    if private:
        create["private"] = True
    if space_sdk:
        create["space_sdk"] = space_sdk
    api.create_repo(plan.repo_id, **create)
    for key, value in plan.variables.items():
        api.add_space_variable(plan.repo_id, key, value)
    extra = {"ignore_patterns": [*(ignore_patterns or []), STAGING_MARKER]}
    api.upload_folder(repo_id=plan.repo_id, repo_type=plan.repo_type, folder_path=str(plan.staged),
                      commit_message=f"Publish {plan.name} from the IHBench toolkit", **extra)
