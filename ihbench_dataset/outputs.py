"""Where a command may write: never inside a folder the toolkit made for something else.

A run written into a dataset folder is uploaded with it by `ihbench publish-dataset`; a dataset
nested in another, or a model's weights, too; a report written into an `ihbench sid` folder
replaces its summary.json. So every command that writes an output folder (or file) first calls
`check_output_path`, before it creates anything: the output may not lie inside a folder the
toolkit recognises as one of its own, nor be one of another kind than the command writes.

The folders are recognised by what their commands write (the names are the contract of each
folder's own module: `BuildDir`, `ihbench.rundir.RunDir`, the SID and turns summaries):

    dataset   build_info.json (`ihbench build`, set-baseline), or a card whose metadata lists
              `configs:` (`ihbench sid-import`, a downloaded Hub dataset)
    run       run.json (`ihbench run`; `ihbench report` writes its report there too)
    sid       summary.json with "kind": "sid" (`ihbench sid`)
    turns     summary.json with "kind": "turns" (`ihbench turns`)
    report    summary.json with "kind": "ihbench" or "cross_benchmark" and no run.json (`ihbench report --out`)
    generated generate.json (`ihbench generate`)
    tiny-model ihbench_tiny_model.json (`ihbench make-tiny-model`: a model folder, listing its files)

A command owns the folder it writes: an existing folder that already holds files and is not of a
kind the command resumes in (a model's folder, a folder of documents) is refused too, as its files
would end up mixed with the output, or uploaded with it. Only `ihbench export`, which writes one
subfolder per conversation, shares its folder.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Optional, Sequence, Union

from .builddir import CARD, BuildDir
from .errors import UsageError

RUN_JSON = "run.json"  # ihbench.rundir.RUN_JSON: the data layer names it, it cannot import it
GENERATE_JSON = "generate.json"  # ihbench.generate.run.INFO, likewise
TINY_MODEL_JSON = "ihbench_tiny_model.json"  # written by ihbench.loaders.tiny, which reads the name here
SUMMARY = "summary.json"
#: left in an output folder by the command that writes it, before its first file (`claim_output`):
#: a folder whose command was stopped before its summary.json is still known as that command's,
#: which goes on with it (turns) or writes it again (sid, report), rather than refusing it
OUTPUT_MARKERS = {"turns": ".ihbench-turns", "sid": ".ihbench-sid", "report": ".ihbench-report"}
TURNS_MARKER = OUTPUT_MARKERS["turns"]
SUMMARY_KINDS = {"sid": "sid", "turns": "turns", "ihbench": "report", "cross_benchmark": "report",
                 "convbench": "report"}
#: a ConversationBench run of the reference harness (our own ConversationBench runs hold one per epoch)
REFERENCE_TRANSCRIPT = "transcript.jsonl"
DESCRIPTIONS = {
    "dataset": "a dataset folder",
    "run": "a run folder (run.json)",
    "sid": "an `ihbench sid` output folder (summary.json)",
    "turns": "an `ihbench turns` output folder (summary.json)",
    "report": "an `ihbench report` output folder (summary.json)",
    "generated": "an `ihbench generate` output folder (generate.json)",
    "reference_run": "a ConversationBench run of the reference harness (transcript.jsonl)",
    "tiny-model": "an `ihbench make-tiny-model` model folder (ihbench_tiny_model.json)",
    "model": "a model folder (config.json and weights)",
}

_CONFIGS = re.compile(r"^configs\s*:", re.MULTILINE)
#: The names ihbench gives what it keeps beside an output NAME, with the widest process id (Linux's
#: PID_MAX_LIMIT): its lock (`io.lock_file_for`), `io.atomic`'s temporary file and working folders, and
#: the judge's record of a judgments file (`ihbench.judge.asked.SUFFIX`, here for a NAME without an
#: extension to replace) with its temporary. An output's name must leave room for the longest, or a
#: command fails on it only after its work.
_BESIDE = (".{}.lock", ".{}.{pid}.tmp", ".{}.building-{pid}", ".{}.old-{pid}", ".{}.asked.json.{pid}.tmp")
ADDED_BYTES = max(len(name.format("", pid=2 ** 22)) for name in _BESIDE)


class OutputPathError(UsageError):
    """An output path where the command must not write; the message names both paths."""


def is_model_folder(folder: Path) -> bool:
    """config.json and weights (any `*.safetensors` or `*.bin`: Mistral's `consolidated.safetensors` too): a model's
    folder, which no output goes into (battery 66, M5 and battery 67, N2: a run's --out inside the very checkpoint it
    ran was written there) and no command reads as data."""
    return (folder / "config.json").is_file() and (any(folder.glob("*.safetensors")) or any(folder.glob("*.bin")))


def folder_kind(folder: Union[str, os.PathLike]) -> Optional[str]:
    """Which of the toolkit's own folders `folder` is ("dataset", "run", "sid", "turns", "report",
    "generated", "reference_run", "tiny-model"), or a model's it reads ("model"), or None for any other folder (or
    none at all)."""
    folder = Path(folder)
    if (folder / TINY_MODEL_JSON).is_file():
        return "tiny-model"
    if is_model_folder(folder):
        return "model"
    if BuildDir(folder).is_build():
        return "dataset"
    if os.path.lexists(folder / RUN_JSON):  # a run.json that is not a file (a loop too): a damaged run, named when read
        return "run"
    if (folder / GENERATE_JSON).is_file():
        return "generated"
    if (folder / REFERENCE_TRANSCRIPT).is_file():
        return "reference_run"
    kind = _summary_kind(folder / SUMMARY)
    if kind:
        return kind
    for kind, marker in OUTPUT_MARKERS.items():
        if (folder / marker).is_file():
            return kind
    if _card_lists_configs(folder / CARD):
        return "dataset"
    return None


def claim_output(folder: Union[str, os.PathLike], kind: str) -> Path:
    """Makes the output folder a command is about to write (checked by `check_output_path` first) and
    marks it as `kind`'s, unless it is a folder of the toolkit's already (a run the report goes into)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if folder_kind(folder) is None:
        (folder / OUTPUT_MARKERS[kind]).touch()
    return folder


def check_output_path(path: Union[str, os.PathLike], what: str, *, may_be: Sequence[str] = (),
                      file: bool = False, shared: bool = False) -> None:
    """Refuse the output `path` (a folder the command writes, or with `file` a file it writes) when it
    lies inside one of the toolkit's own folders, or is one of a kind not in `may_be` (a rerun into
    its own kind of folder is fine: a resumed run, a rebuilt dataset; for a file, the folder it goes
    into may be of a kind in `may_be`: a judgments file in its run), or is a folder of other files
    (unless `shared`: the command writes only subfolders of its own). `what` is how the user named
    it (`--out`). Call it before creating anything."""
    _refuse_dangling_link(path, what)
    _check_name_length(path, what)
    target = Path(os.path.abspath(path)).resolve()
    own = target.parent if file else target
    kind = folder_kind(own) if own.is_dir() else None
    if kind and kind not in may_be:
        if file:
            raise _inside(path, what, own, kind)
        wanted = f"; expected {_either(may_be)} or a new folder" if may_be else "; give another folder"
        raise OutputPathError(f"{what}: {path} is {_described(kind, own)}{wanted}")
    if not file and target.is_dir():  # a config folder of a dataset: named as inside it, not as "holds files"
        _refuse_inside(path, what, own)
    if shared and target == Path(target.anchor):  # its subfolders would sit among the system's own
        raise OutputPathError(f"{what}: {path} is the file system's root; give a folder of its own")
    if not (file or shared or kind):
        _check_new_or_empty(path, what, target, may_be)
    _refuse_inside(path, what, own)
    _refuse_kept_elsewhere(path, what, own)
    _check_creatable(path, what, own)


def refuse_inside_source(path: Union[str, os.PathLike], what: str, source: Union[str, os.PathLike],
                         source_what: str) -> None:
    """An import's output inside the folder it reads (`convbench-import BENCH --out BENCH/ds`): the
    user's checkout or download would hold a dataset among its own files, and the folder be read
    again with it by the next import (battery 42, M1). A source that is a file is not a folder of its own."""
    source_folder = Path(os.path.abspath(source)).resolve()
    target = Path(os.path.abspath(path)).resolve()
    if source_folder.is_dir() and (target == source_folder or source_folder in target.parents):
        raise OutputPathError(f"{what}: {path} is inside {source}, the {source_what} being imported; give a path "
                              "outside it")


def _refuse_kept_elsewhere(path, what: str, own: Path) -> None:
    """Nor inside what is not the user's to write: the installed toolkit (a report written into a
    metric module's folder is read by `evaluate.load` and uploaded by `publish-metrics`; a pip
    upgrade removes it), or a cache the toolkit or its libraries keep and prune."""
    for folder, described in _kept_elsewhere():
        if own == folder or folder in own.parents:
            raise OutputPathError(f"{what}: {path} is inside {described} ({folder}); give a folder of your own")


INSTALLED = "the installed toolkit's files"


def _kept_elsewhere() -> list[tuple[Path, str]]:
    import sys

    from .io.cache import cache_root

    places = [(Path(__file__).resolve().parent, INSTALLED)]
    for name in ("ihbench", "ihbench.loaders"):  # the upper layers, as far as they are loaded (not imported here)
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):
            folder = Path(module.__file__).resolve().parent
            # metrics/ and spaces/ are links in a checkout: protected where they lead
            shipped = [folder / part for part in ("metrics", "spaces")] if name == "ihbench" else []
            places += [(place.resolve(), INSTALLED) for place in (folder, *shipped)
                       if place.is_dir()]
    hugging_face = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache",
                                                              "huggingface")
    places.append((Path(os.path.expanduser(hugging_face)).resolve(), "the Hugging Face cache"))
    places += [(Path(os.path.expanduser(os.environ[variable])).resolve(), f"the cache {variable} names")
               for variable in LIBRARY_CACHE_VARIABLES if variable not in ("XDG_CACHE_HOME", "HF_HOME")
               and os.environ.get(variable)]
    places.append((Path(cache_root()).resolve(), "the toolkit's cache"))
    return places


def _refuse_dangling_link(path, what: str) -> None:
    """A link to nothing passes for a new path, but making the output through it fails (the folder
    "exists", the file's folder does not), and only once the work is done."""
    given = Path(path)
    for link in (given, *given.parents):
        if link.is_symlink() and not link.exists():
            where = f"{path}" if link == given else f"{path}: its folder {link}"
            raise OutputPathError(f"{what}: {where} is a symlink to {os.readlink(link)}, which does not exist")


def _check_name_length(path, what: str) -> None:
    """A name the file system takes can still be too long for the names ihbench derives from it,
    which fail only when they are first made: a lock at the start, a temporary after the work."""
    given = Path(os.path.abspath(path))
    folder = next((folder for folder in given.parents if folder.is_dir()), given)  # `/` has no parent
    try:
        most = os.pathconf(folder, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows), or no answer for this folder
        most = -1
    most = (most if most > 0 else 255) - ADDED_BYTES
    size = len(os.fsencode(given.name))
    if size > most:
        raise OutputPathError(f"{what}: {path}: file name of {size} bytes, too long once ihbench adds its own "
                              f"suffixes (at most {most} bytes here)")


def _check_creatable(path, what: str, own: Path) -> None:
    """The output can be made where it is asked for: its nearest existing folder takes a new entry
    (tried with a folder made and removed at once). Said now, naming the option, not after the work
    as a missing internal temporary or lock file (a path under /proc, a read-only disk)."""
    import tempfile

    existing = next((folder for folder in (own, *own.parents) if folder.exists()), None)
    if existing is None or existing == own and not own.is_dir():
        return  # a file where a folder is expected: said by the command's own checks, in its words
    if folder_kind(existing) is not None and os.access(existing, os.W_OK | os.X_OK):
        return  # one of the toolkit's own folders (a dataset, a run): asked, not probed, so a command refused later
        # for its other input leaves nothing in it, not even a changed time (battery 63, J8)
    try:
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".ihbench-can-write-"))
    except OSError as error:
        verb = "cannot write in" if existing == own else "cannot create"  # a read-only run folder is not made
        raise OutputPathError(f"{what}: {verb} {path} ({error.strerror or error} in {existing})") from None


def _refuse_inside(path, what: str, own: Path) -> None:
    for folder in own.parents:
        kind = folder_kind(folder)
        if kind:
            raise _inside(path, what, folder, kind)


def check_cache_path(path: Union[str, os.PathLike], what: str, *, file: bool,
                     dataset: Optional[Union[str, os.PathLike]] = None, writes: bool = False) -> None:
    """A cache (an LLM answer file, a folder of rendered clips) may live anywhere a user likes but
    inside one of the toolkit's own folders, as an output may not: in a dataset folder
    `ihbench publish-dataset` would upload it; in a run, a turns output or a model folder it is
    litter that the folder's own command neither wrote nor removes. Nor may it be one of those
    folders. `dataset`: the dataset folder the command is about to write (a build's --out), which
    need not exist yet. A link to nothing, or a name too long for the names made beside it (SQLite's
    journal), is refused as for an output: either fails only at the first write, after the work."""
    _refuse_dangling_link(path, what)
    _check_name_length(path, what)
    target = Path(os.path.abspath(path)).resolve()
    own = target.parent if file else target
    if not file and target.is_dir():
        kind = folder_kind(target)
        if kind:
            raise OutputPathError(f"{what}: {path} is {_described(kind, target)}; give a folder of its own")
    if dataset is not None:
        out = Path(os.path.abspath(dataset)).resolve()
        if own == out or out in own.parents:
            raise OutputPathError(f"{what}: {path} is inside the dataset folder being written ({out}), and would "
                                  "be uploaded with it; give a path outside it")
    for folder in (own, *own.parents):
        kind = folder_kind(folder)
        if kind:
            raise _inside(path, what, folder, kind)
    for folder, described in _kept_elsewhere():  # the installed package: `publish-space` ships its files
        if described == INSTALLED and (own == folder or folder in own.parents):
            raise OutputPathError(f"{what}: {path} is inside {described} ({folder}); give a folder of your own")
    # `writes`: the command will write there (an LLM answer cache, made on the first answer kept): a read-only
    # disk or a file in the way said now, not after paid calls. A library's cache is only read by many
    # commands (models from a read-only shared HF cache): never required to take a new entry
    if writes and not (file and target.exists()):
        existing = next(folder for folder in (own, *own.parents) if folder.exists())
        if not existing.is_dir():
            raise OutputPathError(f"{what}: {path} is a file, not a folder" if existing == target else  # a folder's
                                  f"{what}: cannot create {path} ({existing} is a file, not a folder)")
        _check_creatable(path, what, own)


#: the variables naming where the Hugging Face libraries (and anything following XDG) keep their caches
LIBRARY_CACHE_VARIABLES = ("XDG_CACHE_HOME", "HF_HOME", "HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
                           "HF_MODULES_CACHE", "HF_EVALUATE_CACHE", "HF_METRICS_CACHE", "TRANSFORMERS_CACHE")
#: scratch and config folders the libraries write to as a command runs (torch's compiler under TMPDIR,
#: matplotlib's font list under MPLCONFIGDIR, else XDG_CONFIG_HOME; battery 51, X6 and battery 52, Y4: written
#: into a dataset): not inside one of the toolkit's folders either, though outputs may go inside them (TMPDIR
#: is often /tmp)
LIBRARY_SCRATCH_VARIABLES = ("TMPDIR", "MPLCONFIGDIR", "XDG_CONFIG_HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


def check_library_caches(*, dataset: Optional[Union[str, os.PathLike]] = None) -> None:
    """The libraries' caches, where a user moved them with a variable, follow the rule of the
    toolkit's own (`check_cache_path`): `datasets` writes hundreds of megabytes of Arrow files into
    HF_DATASETS_CACHE on the first read, and inside a dataset folder they would be uploaded with it.
    Said before any work, naming the variable; a variable left unset keeps the library's default."""
    for variable in ("IHBENCH_CACHE", *LIBRARY_CACHE_VARIABLES, *LIBRARY_SCRATCH_VARIABLES):  # ours too, by its name
        value = os.environ.get(variable)
        if value and value.strip():
            check_cache_path(os.path.expanduser(value), variable, file=False, dataset=dataset)
    if not os.environ.get("XDG_CACHE_HOME", "").strip():  # the defaults under ~/.cache: HOME decides them
        for name, variable in (("ihbench", "IHBENCH_CACHE"), ("huggingface", "HF_HOME")):
            if not os.environ.get(variable, "").strip():
                check_cache_path(os.path.expanduser(f"~/.cache/{name}"), f"~/.cache/{name} (the default cache, "
                                 f"from HOME; {variable} moves it)", file=False, dataset=dataset)
    if not any(os.environ.get(variable, "").strip() for variable in ("XDG_CONFIG_HOME", "MPLCONFIGDIR")):
        check_cache_path(os.path.expanduser("~/.config/matplotlib"), "~/.config/matplotlib (matplotlib's folder, "
                         "from HOME; MPLCONFIGDIR moves it)", file=False, dataset=dataset)
    from .io.cache import cache_root

    cache_root()  # a blank IHBENCH_CACHE or XDG_CACHE_HOME, or one that is a file


def _check_new_or_empty(path, what: str, target: Path, may_be: Sequence[str]) -> None:
    if target.exists() and not target.is_dir():
        raise OutputPathError(f"{what}: {path} is a file; give a folder")
    if not target.is_dir():
        return
    held = sorted(entry.name for entry in target.iterdir() if not _is_lock(entry.name))
    if held:
        shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
        resumable = f", nor {_either(may_be)} to resume" if may_be else ""
        raise OutputPathError(f"{what}: {path} already holds files ({shown}) and is not a folder this command "
                              f"wrote{resumable}; give a new or empty folder")


def _is_lock(name: str) -> bool:
    """A lock left by a writer that was killed before it wrote its first file: not content."""
    return name.startswith(".") and name.endswith(".lock")


def _inside(path, what: str, folder: Path, kind: str) -> OutputPathError:
    why = " (`ihbench publish-dataset` would upload what is written there)" if kind == "dataset" else ""
    return OutputPathError(f"{what}: {path} is inside {folder}, {_described(kind, folder)}{why}; give a path "
                           "outside it")


def described_folder(folder: Union[str, os.PathLike]) -> Optional[str]:
    """What one of the toolkit's folders is, in words ("an `ihbench sid` output folder (summary.json)"),
    or None for any other folder."""
    kind = folder_kind(folder)
    return _described(kind, Path(folder)) if kind else None


def _described(kind: str, folder: Path) -> str:
    if kind == "dataset" and BuildDir(folder).is_build() and not BuildDir(folder).holds_a_build():
        # as `build` says it (battery 61, H9): not called a dataset for a file's name alone
        return "a folder whose build_info.json is not a build's record (a file of yours, or a dataset's, damaged)"
    if kind == "dataset":
        return DESCRIPTIONS[kind] + (" (build_info.json)" if BuildDir(folder).is_build() else " (its card lists configs)")
    return DESCRIPTIONS[kind]


def _either(kinds: Sequence[str]) -> str:
    names = [DESCRIPTIONS[k].split(" (")[0] for k in kinds]
    return " or ".join(names)


def _summary_kind(path: Path) -> Optional[str]:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return SUMMARY_KINDS.get(data.get("kind")) if isinstance(data, dict) and isinstance(data.get("kind"), str) else None


def _card_lists_configs(card: Path) -> bool:
    """The card's YAML header has a `configs:` key (read without a YAML parser: only the key matters)."""
    if not card.is_file():
        return False
    try:
        text = card.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return False
    if not text.startswith("---"):
        return False
    header = text[3:].split("\n---", 1)[0]
    return bool(_CONFIGS.search(header))
