"""JSON lines, the two ways the toolkit meets them.

Logs it writes itself (a run's responses and judgments, a generation's discarded calls):
`AppendLog` flushes and fsyncs every record before the next is produced, so after `kill -9` the
file holds every finished record plus at most one torn last line, which `read_records` repairs
(truncates) before the writer appends again. A damaged line anywhere else is not guessed at.

Hand-made files (SID annotations and predictions, transcripts, judge likelihoods), read by
`json_lines`: blank lines skipped, a line that is not JSON an error naming the file and line.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Union

from .json_object import TOO_DEEP, TOO_LONG_NUMBER, DuplicateKeyError, JsonContentError, hand_written, json_problem
from .regular import IrregularFileError, absent, check_regular, irregular
from ..errors import IHBenchError

log = logging.getLogger("ihbench")


class CorruptLogError(IHBenchError, ValueError):
    pass


class KeyTwice(str):
    """What `_decoded(keys_once=True)` yields for a record line with a key given twice: the problem, for
    the reader to leave the line out as edited (JSON would keep only the last value, unsaid)."""


def _decoded(lines: Iterable[bytes], failure: Callable[[int, str], Exception], *,
             hand_made: bool = False, keys_once: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, value) per non-blank line; a line that is not UTF-8 JSON (a file saved by a
    Latin-1 editor, binary garbage) raises `failure(number, why)`."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            # a Windows editor's BOM; in a hand-made file, a key twice or a lone surrogate (`hand_written`)
            value = json.loads(line.decode("utf-8-sig" if number == 1 else "utf-8"),
                               object_pairs_hook=hand_written if hand_made or keys_once else None)
        except (DuplicateKeyError, JsonContentError) as error:
            if not keys_once:
                raise failure(number, str(error)) from None
            # a record's line: our writer puts neither a key twice nor a lone surrogate ("\ud800", which failed
            # the judge and the report as they wrote it: battery 48, U7) in it
            value = KeyTwice(f"{error}; the line was edited")
        except UnicodeDecodeError as error:
            raise failure(number, f"not UTF-8 text: byte {line[error.start]:#04x} at column {error.start + 1}") \
                from None
        except json.JSONDecodeError as error:
            raise failure(number, f"not valid JSON ({json_problem(error, 'column')})") from None
        except RecursionError:
            raise failure(number, TOO_DEEP) from None
        except ValueError:  # after JSONDecodeError and the content checks: the interpreter's digit limit
            raise failure(number, TOO_LONG_NUMBER) from None
        yield number, value


def json_lines(path: Union[str, Path], error: type, *, where: str = "{path} line {number}",
               hand_made: bool = True) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) per non-blank line of a file from outside the toolkit; `where`
    formats the place in `error`'s message (each file kind keeps the style its users already see).
    `hand_made`: a key twice or a lone surrogate is refused (`hand_written`); a program's output (a
    batch's answers) has its server text cleaned by its reader instead."""
    path = Path(path)
    check_regular(path, "a JSON lines file", error)
    try:
        data = path.read_bytes()
    except OSError as failure:  # a read that fails names no file (/proc/self/mem: "Input/output error")
        raise error(f"{path}: cannot be read ({failure.strerror or failure})") from None
    def refusal(number: int, why: str) -> Exception:
        document = _one_document(data) if why.startswith("not valid JSON") else ""  # battery 65, L5: pretty-printed
        return error(f"{where.format(path=path, number=number)}: {why}{document}")

    yield from _decoded(data.split(b"\n"), refusal, hand_made=hand_made)


def _one_document(data: bytes) -> str:
    """What to add to a refusal of a file that is no JSON Lines but one JSON document written over several lines
    (pretty-printed), or ""."""
    lines = data.rstrip(b"\n").count(b"\n") + 1
    if lines < 2:
        return ""
    try:
        json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return ""
    return f": the file is one JSON document over {lines} lines, not JSON Lines (one JSON object per line)"


#: (file, its size and time, line, problem) already warned of: a command that reads a file twice (the
#: report's inter-judge table, a judge checking what is done) says a damaged line once
_WARNED: set = set()


class LinkedLogError(IHBenchError, ValueError):
    """A log its writer would write through a symlink, into whatever it points at."""


def refuse_link(path: Path) -> None:
    """Every writer of a log calls this first (`AppendLog`, `read_records` with `repair`): a run's
    records file that is a symlink would have the run write into another folder (a dataset, which
    publishing then refuses; another run's file, past that run's lock)."""
    if Path(path).is_symlink():
        raise LinkedLogError(f"{path} is a symlink (to {os.readlink(path)}); a run's records are written only into "
                             "its own file, never through a link: replace the link with a copy of the file, or "
                             "remove it")


def read_records(path: Path, *, repair: bool = False,
                 check: Optional[Callable[[dict], Optional[str]]] = None,
                 redone: Optional[Callable[[dict, int, list], bool]] = None,
                 damaged: Optional[list] = None, torn: Optional[list] = None,
                 then: Optional[Callable[[Any], str]] = None) -> list[dict]:
    """All complete records of a log. A torn final line (no newline) is cut off when `repair` is set
    (only the file's writer, holding its lock, may do that) and otherwise ignored: a reader may be
    looking at a line still being written; its number is added to `torn`, for a reader that says so
    (the report: the line is left out, and explains a record missing). `check(record)` returns why a record is unusable, or
    None; such a record is reported (file and line, on the `ihbench` logger, once per process while
    the file is unchanged) and left out, so nothing built on it counts as done. A damaged record that
    `redone(record, line, [(line, good record), ...])` says a good record stands in for (its writer
    wrote it again) is left out without a word: it is no longer missing. The others are added to
    `damaged` as (line, record, problem), for callers that explain what they lead to. `then(record)`
    says what becomes of a damaged record (default: it is done again), when its problem does not."""
    path = Path(path)
    if repair:
        refuse_link(path)
    if not os.path.lexists(path):
        return []
    if not path.exists() and irregular(path) is None:  # a link to nothing is no empty file (battery 64, K6: a loop was
        raise IrregularFileError(f"{path}: is {absent(path)}; restore the file, or remove the link")  # "missing")
    check_regular(path, "a records file (JSON lines)")
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data) and _whole_record(data[end:]):  # a last record someone saved without its newline: kept
        if repair:
            with open(path, "ab") as handle:  # the writer appends after it, on a line of its own
                handle.write(b"\n")
                handle.flush()
                os.fsync(handle.fileno())
        data, end = data + b"\n", len(data) + 1
    if end < len(data) and not repair and torn is not None:
        torn.append(data.count(b"\n", 0, end) + 1)
    if end < len(data) and repair:
        with open(path, "r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
    # split on "\n" alone: a record's text may hold U+2028 and other characters splitlines() splits on
    lines = data[:end].split(b"\n")
    kept, rejected = [], []
    def refusal(number: int, why: str) -> Exception:
        document = _one_document(data) if why.startswith("not valid JSON") else ""  # battery 66, M3: pretty-printed
        return CorruptLogError(f"{path}: line {number} is {why}" + (document or "; the file was edited or damaged, not "
                                                                    "torn by a crash"))

    for number, record in _decoded(lines, refusal, keys_once=True):
        problem = str(record) if isinstance(record, KeyTwice) else "not a JSON object" if not isinstance(record, dict) \
            else (check(record) if check else None)
        if problem:
            rejected.append((number, record, problem))
            continue
        kept.append((number, record))
    if rejected:
        stat = path.stat()
    to_say: dict = {}  # problem -> the lines it is said of, and what becomes of them
    for number, record, problem in rejected:
        if redone is not None and isinstance(record, dict) and redone(record, number, kept):
            continue
        if damaged is not None:
            damaged.append((number, record, problem))
        said = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, number, problem)
        if said not in _WARNED:
            _WARNED.add(said)
            # a problem that says what becomes of the record ("left out, and judged again") is said as it is
            after = "" if "left out" in problem else then(record) if then is not None \
                else "; the record is left out and will be redone"
            to_say.setdefault((problem, after), []).append(number)
    for (problem, after), numbers in to_say.items():
        log.warning("%s %s: %s%s", path, _lines_said(numbers), problem, after)
    return [record for _, record in kept]


def _lines_said(numbers: list) -> str:
    """`line 3`, or the lines one problem is of, said once: every line of a run whose run.json was replaced gave
    the same warning twenty times (battery 58, E7)."""
    if len(numbers) == 1:
        return f"line {numbers[0]}"
    shown = ", ".join(map(str, numbers[:5])) + (", ..." if len(numbers) > 5 else "")
    return f"{len(numbers)} lines ({shown})"


def _whole_record(tail: bytes) -> bool:
    """A last line without its newline that is a whole JSON object (an editor that dropped the final
    newline), not one cut off mid-way by a crash."""
    try:
        return isinstance(json.loads(tail.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


class AppendLog:
    """Open once, append records one by one, each durable before `append` returns (unless the
    caller groups them: `durable=False` only flushes, so the record survives the process being
    killed but not the machine stopping; a later durable append, or the writer's own end marker,
    makes the group durable together)."""

    def __init__(self, path: Path):
        refuse_link(path)
        self.path = Path(path)
        self._handle: Optional[object] = None

    def __enter__(self) -> "AppendLog":
        return self

    def __exit__(self, *exc) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def append(self, record: dict, *, durable: bool = True) -> None:
        # the file (and its folder) is made by the first record, not on entry: a command that had
        # nothing to write (every conversation failed in the run) leaves no empty log behind
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "a", encoding="utf-8")
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        if durable:
            os.fsync(self._handle.fileno())

    def extend(self, records: Iterable[dict]) -> None:
        for record in records:
            self.append(record)
