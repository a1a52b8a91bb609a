"""What the last `ihbench judge` into a judgments file asked, kept beside it (`judgments.asked.json`).

An answer with no verdict has one of several causes: its question waits in a `--judge-batch`
folder, the judge ran with `--axes` leaving its axis out, it was answered after the judge ran, or
its judgment line was lost since. Only the judge knows which; written down at the end of each
pass, the report reads the cause instead of guessing it from what the judgments file lacks. A pass
marks the record `unfinished` when it starts (keeping the last finished pass's facts, which still
hold): a judge killed or ended by an error is then said as such, not as a file removed since.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from ihbench.dataset.errors import IHBenchError
from ihbench.dataset.io import read_json_object, write_atomic, write_json_atomic

log = logging.getLogger("ihbench")

SUFFIX = ".asked.json"


@dataclass
class Asked:
    judge_model: str
    axes: list[str]
    #: the `--judge-batch` folder, or None for live questions
    batch: Optional[str] = None
    #: [id, epoch, axis] of the questions written to the batch folder, with no answer yet
    waiting: list = field(default_factory=list)
    #: the answers the judge was given (`ResponseRecord.digest`), so one written since is known as such
    answers: list = field(default_factory=list)
    #: batch answers that could not be used (empty, not the JSON asked for): asked again, so waiting
    unusable: int = 0
    #: a pass began and has not finished (killed, or ended by an error)
    unfinished: bool = False

    def waits(self, key: tuple) -> bool:
        if not hasattr(self, "_waiting"):
            self._waiting = {tuple(k) for k in self.waiting}
        return tuple(key) in self._waiting

    def saw(self, digest: str) -> bool:
        if not hasattr(self, "_answers"):
            self._answers = set(self.answers)
        return digest in self._answers


def asked_path(judgments: Path) -> Path:
    """`judgments.jsonl` -> `judgments.asked.json`, beside the file it describes."""
    judgments = Path(judgments)
    return judgments.with_name(judgments.stem + SUFFIX)


def check_asked_path(judgments: Path) -> None:
    """Before any judging: a folder (or a pipe) where the record belongs would fail its write after the work."""
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.io.regular import check_regular

    check_regular(asked_path(judgments), "the judge's record of what it asked (a JSON file)", UsageError)


def write_asked(judgments: Path, asked: Asked) -> None:
    write_json_atomic(asked_path(judgments), {k: v for k, v in asdict(asked).items() if not k.startswith("_")})


@contextmanager
def unfinished_pass(judgments: Path, judge_model: str, axes: list[str]) -> Iterator[None]:
    """Around a pass's questions: the last finished pass's record with `unfinished` set (or a record
    of this pass alone when there is none, or it cannot be read). A pass that refuses the user's input
    (an `IHBenchError`: a batch answer of another model, say) ran no judge: the record is put back as
    it was. Any other end (killed, a bug) leaves it marked, for the report to say."""
    path = asked_path(judgments)
    before = path.read_bytes() if path.is_file() else None
    asked = read_asked(judgments, quiet=True)
    if asked is None or asked.judge_model != judge_model:
        asked = Asked(judge_model=judge_model, axes=list(axes))
    asked.axes = sorted(set(asked.axes) | set(axes))
    asked.unfinished = True
    write_asked(judgments, asked)
    try:
        yield
    except IHBenchError:
        if before is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, before)
        raise


def read_asked(judgments: Path, *, quiet: bool = False) -> Optional[Asked]:
    """The record, or None when there is none or it cannot be read (said once: the report then
    names no cause it cannot know)."""
    path = asked_path(judgments)
    if not path.exists():
        return None
    try:
        data = read_json_object(path, ValueError)
        asked = Asked(**{k: data[k] for k in ("judge_model", "axes", "batch", "waiting", "answers", "unusable")},
                      unfinished=data.get("unfinished", False))
        if not all(isinstance(value, list) for value in (asked.axes, asked.waiting, asked.answers)):
            raise ValueError(f"{path}: axes, waiting and answers must be lists")
        if not isinstance(asked.unfinished, bool):
            raise ValueError(f"{path}: unfinished must be true or false")
        return asked
    except KeyError as error:
        problem = f"{path}: missing field {error}"
    except (ValueError, TypeError) as error:
        problem = str(error)
    if not quiet:
        warn_once(f"{problem}; the causes of answers without a verdict are not known from it (the next "
                  "`ihbench judge` writes it again)")
    return None


def warn_once(problem: str) -> None:
    """A damaged record is read by several steps of one report: said once."""
    if problem not in _SAID:
        _SAID.add(problem)
        log.warning("%s", problem)


_SAID: set = set()
