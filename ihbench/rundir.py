"""The run directory, the unit of work users keep: one place that knows its files and rules.

    runs/<name>/run.json            what was run (identity checked on resume), versions, command
    runs/<name>/responses.jsonl     one record per (item id, epoch), appended and fsynced
    runs/<name>/judgments*.jsonl    one file per judge model; one record per (id, epoch, axis) and
                                    attempt; the last record of a key is the one that counts
    runs/<name>/summary.json, report.md, *.png    written by `ihbench report`

The runner, the judge, the report and the Space all go through `RunDir`. Each file has one writer
at a time: `writing()` locks the directory (the runner), `judging(path)` one judgments file.
Every record read back is checked against its schema; a bad one is reported and never counts.
"""
from __future__ import annotations

import dataclasses
import logging
import os
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Sequence

from ihbench.dataset.errors import IHBenchError, command_line
from ihbench.dataset.io import exclusive, lock_file_for, new_folders, read_json_object, read_records, write_json_atomic
from ihbench.dataset.io.regular import check_regular

from .records import (JudgmentRecord, RecordError, ResponseRecord, RunInfo, copied_from_another_run, read_typed,
                      settings_digest)

log = logging.getLogger("ihbench")

RUN_JSON = "run.json"
RESPONSES = "responses.jsonl"
JUDGMENTS = "judgments.jsonl"
SUMMARY = "summary.json"
LOCK = ".lock"


#: what the commands that take IHBench runs only (set-baseline, the IHBench summary) say of a ConversationBench run
CONVBENCH_NOT_YET = ("{path}: a ConversationBench run ({config}); this command takes IHBench runs (`ihbench judge` "
                     "and `ihbench report` take it on its own, or beside other benchmarks' runs)")


class RunDirError(IHBenchError, ValueError):
    """Not a run directory, or one that cannot be used as asked."""


def judgment_files_in(folder: Path) -> list[Path]:
    """A run folder's judgments files (`judgments*.jsonl`), in order. One named with what looks like a key
    (copied there by hand: `ihbench judge --out` refuses such a name) is refused without echoing it: its name
    would be copied into the report (battery 53, Z10)."""
    from ihbench.dataset.argtypes import is_text
    from ihbench.dataset.redaction import credential_in

    files = sorted(Path(folder).glob("judgments*.jsonl"))
    for file in files:
        if not is_text(file.name):  # battery 58, E8: the report (JSON) ended in a traceback, every time
            raise RunDirError(f"{folder}: a judgments file there is named {file.name!r}, with a byte that is not "
                              "UTF-8, and its name would be copied into the report; rename it (judgments-MODEL.jsonl)")
        found = credential_in(file.name)
        if found:
            raise RunDirError(f"{folder}: a judgments file there is named with {found} (a credential; not shown), "
                              "and its name would be copied into the report; rename it (judgments-MODEL.jsonl)")
    return files


def is_stale(record, current_hash: str) -> bool:
    """The record answers (or judges) another version of the item. Version-1 records carry no stamp
    and are taken as they are: an older folder keeps working."""
    return record.item_hash is not None and record.item_hash != current_hash


def latest_responses(records: Sequence[ResponseRecord], hashes: dict[str, str]) -> dict[tuple, ResponseRecord]:
    """The last record per (item, epoch) that answers the item as it is now (`hashes`: item id ->
    `EvalItem.content_hash`; an id without one is taken as it is): a retried error, or an answer
    to an earlier version answered again, is superseded by the later record."""
    return {r.key: r for r in records if r.id not in hashes or not is_stale(r, hashes[r.id])}


def latest_judgments(records: Sequence[JudgmentRecord]) -> list[JudgmentRecord]:
    """The last record per (id, epoch, axis): a judge_error that a later pass retried is superseded.
    In the order of their keys, whatever order the judge wrote them in (its concurrency, a stop and a
    resume): the report's bootstrap draws by position, and the same verdicts gave other intervals."""
    return sorted({record.key: record for record in records}.values(), key=lambda record: record.key)


class RunDir:
    def __init__(self, path, *, data: Optional[str] = None):
        """`data`: where the run's dataset is now, when it moved from the place run.json names
        (`--data` of judge and report); its items must be those the run answered."""
        self.path = Path(path)
        self.data = data

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def info_path(self) -> Path:
        return self.path / RUN_JSON

    @property
    def responses_path(self) -> Path:
        return self.path / RESPONSES

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY

    def exists(self) -> bool:
        """run.json is there, as a file or not: a run.json that is a folder is a damaged run that
        `info` names, never a sign that this is some other kind of folder (a report's, say); nor is one that is a
        link to nothing or a symlink loop (battery 61, H15: said "missing")."""
        return os.path.lexists(self.info_path)

    def info(self) -> RunInfo:
        if not self.exists() and self.responses_path.is_file():  # its answers are here: run.json was lost
            raise RunDirError(f"{self.info_path}: missing ({self.path} holds a run's {self.responses_path.name}); put "
                              "it back: it records the model and data the answers are of (`ihbench run` into this "
                              "folder refuses it until then)")
        if not self.exists():
            from ihbench.dataset.outputs import described_folder, folder_kind

            if not self.path.exists():
                raise RunDirError(f"{self.path}: no such folder; give a run folder (`ihbench run --out` makes one)")
            what = described_folder(self.path)
            if what:  # a SID or turns output needs no judge: its report is the next step
                after = f"; `{command_line('ihbench', 'report', self.path)}` reports it" \
                    if folder_kind(self.path) in ("sid", "turns") else ""
                raise RunDirError(f"{self.path}: is {what}, not a run (no {RUN_JSON}){after}")
            raise RunDirError(f"{self.path}: not a run directory (no {RUN_JSON}); run `ihbench run` first")
        check_regular(self.info_path, "the JSON file `ihbench run` writes", RunDirError)
        data = read_json_object(self.info_path, RunDirError)
        try:
            return RunInfo.from_json(data)
        except RecordError as error:
            raise RunDirError(f"{self.info_path}: {error}") from None

    def write_info(self, info: RunInfo) -> None:
        """run.json, with what its earlier start hid still hidden (`write_json_atomic` keeps it so)."""
        write_json_atomic(self.info_path, info.to_json())

    @contextmanager
    def writing(self) -> Iterator[None]:
        """The directory's writer lock (the runner's), for the life of a command. The directory is made
        if needed, and removed again with the lock if the command wrote nothing into it."""
        with new_folders(self.path), exclusive(self.path / LOCK, f"run directory {self.path}"):
            yield

    def writer(self) -> Optional[str]:
        """Who is writing the run now ("pid N: ihbench run ..."), or None: a reader that finds records
        missing says so rather than calling them failed."""
        from ihbench.dataset.io import holder

        return holder(self.path / LOCK)

    def load(self) -> tuple[RunInfo, list[ResponseRecord], dict]:
        """(run.json, checked responses, {item id: EvalItem}) for judging and reporting."""
        info = self.info()
        if info.convbench is not None:
            raise RunDirError(CONVBENCH_NOT_YET.format(path=self.path, config=info.config))
        if isinstance(info.extra.get("barge_in"), dict):  # `ihbench barge-in`: its live points and the answers
            from ihbench.barge_in.points import HELD_BACK, load_points

            loaded = load_points(self.path, info, moved_to=self.data)
            self.held_back = loaded[0].extra[HELD_BACK]
            self.items = loaded[2]
            return loaded
        source = self._data_source(info)  # the items first: a run.json naming what holds none is one line
        items = {item.id: item for item in self._items(source, info)}
        responses = self.responses()
        if info.epochs:  # a rerun with fewer --epochs: the answers of the epochs it dropped are not this run's
            beyond = [r for r in responses if r.epoch >= info.epochs]
            if beyond:
                log.warning("%s: %d response(s) of epochs beyond the run's --epochs %d (from an earlier start) are "
                            "left out", self.path, len(beyond), info.epochs)
                responses = [r for r in responses if r.epoch < info.epochs]
        if self.data is not None:
            self._check_moved_data(info, items)
        missing = sorted({r.id for r in responses} - set(items))
        if missing:
            raise RunDirError(f"{self.path}: responses for items not in {source}: {', '.join(missing[:5])}")
        responses = self._of_the_selection(info, responses, list(items.values()))
        info = self._planned_from_the_selection(info, list(items.values()))
        self.items = items  # what `judgments` checks verdicts against (an RQ verdict per criterion of the rubric)
        return info, self.current(responses, items, source), items

    def _items(self, source: str, info: RunInfo) -> list:
        """The run's items; a ConversationBench config named by a run.json without its `convbench` group
        is said as that (edited by hand?), not as a dataset of the wrong kind."""
        from ihbench.dataset import load_items
        from ihbench.dataset.convbench.load import is_convbench_config
        from ihbench.dataset.load import DataSourceError

        try:
            return load_items(source, config=info.config, split=info.split)
        except DataSourceError:
            if info.config and is_convbench_config(source, info.config):
                raise RunDirError(f"{self.info_path}: config {info.config!r} is a ConversationBench benchmark, but "
                                  "field 'convbench' is missing (edited by hand?); restore it") from None
            raise

    def _planned_from_the_selection(self, info: RunInfo, items: list) -> RunInfo:
        """run.json with `n_items` the number of items its selection holds in the data: that count, never the
        recorded one, is what the run planned (a hand edit of n_items made "12 of 1998 planned")."""
        from .selection import RunConfigError, items_fingerprint, run_selection

        try:
            selected = run_selection(items, info)
        except RunConfigError:  # nothing selected: the data changed, said by the reader of the items
            return info
        count = len(selected)
        if info.n_items is not None and info.n_items != count:
            # the data rebuilt at its path with more points or fewer (battery 58, E11: blamed on run.json)
            cause = ("the data changed since the run started (rebuilt at the same path?); `ihbench run` again answers "
                     "what is new" if info.data_fingerprint and info.data_fingerprint != items_fingerprint(selected)
                     else "edited by hand?")
            log.warning("%s: n_items says %d, but the run's selection holds %d item(s) of %s: %s; the planned count "
                        "uses %d", self.info_path, info.n_items, count, info.data, cause, count)
        return dataclasses.replace(info, n_items=count)

    def _of_the_selection(self, info: RunInfo, responses: list[ResponseRecord], items: list) -> list[ResponseRecord]:
        """The answers of the items the run selects (--limit, --types at its last start). Others are no answer of
        this run as it stands (it was narrowed since, or they were copied in): left out, said once, as the
        epochs beyond --epochs are."""
        if info.limit is None and not info.types and info.item_ids is None:
            return responses
        from .selection import PickedItemsError, RunConfigError, run_selection

        try:
            selected = {item.id for item in run_selection(items, info)}
        except PickedItemsError as error:
            raise RunDirError(f"{self.info_path}: {error}") from None
        except RunConfigError:  # nothing selected: the data changed, said by the reader of the items
            return responses
        outside = sorted({r.id for r in responses} - selected)
        self.outside_selection = set(outside)  # their judgments are left out too (`judgments`)
        if not outside:
            return responses
        chosen = ", ".join(f"--{name} {','.join(value) if isinstance(value, list) else value}"
                           for name, value in (("limit", info.limit), ("types", info.types)) if value) \
            or f"the {len(info.item_ids or [])} point(s) it was handed"
        log.warning("%s: %d item(s) answered in %s are not among the run's selection (%s), e.g. %s: left out "
                    "(answered before the run was narrowed, or copied from another run)", self.path, len(outside),
                    RESPONSES, chosen, outside[0])
        return [r for r in responses if r.id in selected]

    def _data_source(self, info: RunInfo) -> str:
        """The dataset to read: `data` when given, else run.json's, said as run.json's when it is gone
        (a folder moved after the run), with the way to give its new place."""
        if self.data is not None:
            return self.data
        recorded = Path(str(info.data))
        if recorded.is_absolute() and not recorded.exists():
            raise RunDirError(f"{self.info_path} names the dataset {info.data}, which is not there now (moved or "
                              "deleted?); give its new place with --data (its items are checked to be the ones the "
                              "run answered)")
        return info.data

    def _check_moved_data(self, info: RunInfo, items: dict) -> None:
        from .selection import items_fingerprint, run_selection

        now = items_fingerprint(run_selection(list(items.values()), info))
        if info.data_fingerprint is not None and now != info.data_fingerprint:
            raise RunDirError(f"--data {self.data}: not the items {self.path} answered (their fingerprint is {now}, "
                              f"run.json's {info.data_fingerprint}); give the dataset the run used")

    def current(self, responses: list[ResponseRecord], items: dict, data: str) -> list[ResponseRecord]:
        """The last record per (item, epoch) for the data as it is now: an error a later run retried,
        or a response to an earlier version a resumed run answered again, is superseded. A response
        to an earlier version that was never answered again is refused, with the count: scoring it
        would score an answer to a question that is no longer in the data. Errors stay in the list
        (they are counted, never judged or scored)."""
        latest = latest_responses(responses, {item_id: item.content_hash for item_id, item in items.items()})
        outdated = [r for r in responses if r.key not in latest]
        if outdated:
            from ihbench.dataset.load import same_source

            changed = sorted({r.id for r in outdated})
            recorded = self.info().data
            how = "the data changed at the same path since they were written" if same_source(recorded, data) else \
                f"it is not the data the run answered ({recorded}), or that data changed since"
            raise RunDirError(
                f"{self.path}: {len(outdated)} response(s) answer an earlier version of {len(changed)} item(s) of "
                f"{data} (e.g. {changed[0]}): {how}. Run "
                f"`ihbench run` again with the same options to answer the changed items, then judge and report")
        return list(latest.values())

    def responses(self, *, repair: bool = False) -> list[ResponseRecord]:
        """Checked records; `repair` (the lock holder only) cuts a line torn by a crash. A damaged
        line is warned of until the run has written its record again (`_response_redone`); the
        ones still missing are kept in `damaged_responses` (line, record, problem), which explain
        judgments of answers the run no longer has."""
        self.damaged_responses: list = []
        self.torn_responses: list = []
        info = self._info_or_none()
        return read_typed(self.responses_path, ResponseRecord, repair, redone=self._response_redone,
                          oldest=info.record_format if info else None, fits=_of_the_run(info),
                          damaged=self.damaged_responses, torn=self.torn_responses)

    def _info_or_none(self) -> Optional[RunInfo]:
        """run.json, or None when there is none that can be read (the command reading the run says so)."""
        try:
            return self.info()
        except RunDirError:
            return None

    def _response_redone(self, record: dict, number: int, good: list) -> bool:
        """A later good record of the damaged line's (id, epoch) stands in for it; when the epoch is
        itself what is damaged, every epoch of its item having a good record does, one of them
        written after the damaged line (the runner wrote the one that was missing)."""
        item, epoch = record.get("id"), record.get("epoch")
        if not isinstance(item, str):
            return False
        if _is_epoch(epoch):
            return any(line > number and r.get("id") == item and r.get("epoch") == epoch for line, r in good)
        try:
            epochs = self.info().epochs
        except RunDirError:
            return False
        have = {r.get("epoch") for _, r in good if r.get("id") == item}
        # and one of them after it: the earlier ones (an error the damaged line had answered again) stand in for nothing
        later = any(line > number and r.get("id") == item for line, r in good)
        return bool(epochs) and all(e in have for e in range(epochs)) and later

    def _of_damaged_answers(self, foreign: list) -> list:
        """Lines of responses.jsonl, damaged and not written again, that `foreign` judgments (of
        (id, epoch) the run does not have) may be of: all of them or none. A judgment is of a damaged
        line when their id and epoch agree, or the line's own is what is damaged."""
        if getattr(self, "damaged_responses", None) is None:
            self.responses()
        damaged = [(line, record) for line, record, _ in self.damaged_responses if isinstance(record, dict)]
        damaged += [(line, {}) for line in self.torn_responses]  # cut off mid-line: it may have been any answer

        def may_be(record: dict, judgment: JudgmentRecord) -> bool:
            item, epoch = record.get("id"), record.get("epoch")
            return (item == judgment.id or not isinstance(item, str)) and \
                (epoch == judgment.epoch or not _is_epoch(epoch))

        keys = {(j.id, j.epoch) for j in foreign}
        if not damaged or len(keys) > len(damaged) or \
                not all(any(may_be(record, j) for _, record in damaged) for j in foreign):
            return []
        return [line for line, _ in damaged]

    def judgments_path(self, out: Optional[Path] = None) -> Path:
        return Path(out) if out else self.path / JUDGMENTS

    def judgment_files(self) -> list[Path]:
        """The primary judgments file first, then any others (one per additional judge)."""
        primary = self.path / JUDGMENTS
        others = [p for p in judgment_files_in(self.path) if p != primary]
        return ([primary] if primary.exists() else []) + others

    def judgments(self, path: Optional[Path] = None, *, repair: bool = False,
                  responses: Optional[Sequence[ResponseRecord]] = None) -> list[JudgmentRecord]:
        """The last checked record per (id, epoch, axis) of one judgments file. Given the current
        `responses` (from `load`: every (id, epoch) of the run, failed ones included), only judgments
        of those very answers are kept: one of an answer since replaced (the item changed, or failed
        and was answered later) or of an error (which older versions judged as a loss) is left out
        with a warning, and judged again, not scored. A judgment of an (id, epoch) the run never
        had means the file is another run's: refused, naming it."""
        target = self.judgments_path(path)
        damaged: list = []
        torn: list = []
        info = self._info_or_none()
        records = read_typed(target, JudgmentRecord, repair, redone=_judgment_redone,
                             oldest=info.record_format if info else None, damaged=damaged, torn=torn)
        judges = sorted({r.judge_model for r in records if r.judged})  # errors are no verdict: another may retry them
        if len(judges) > 1:  # two judges' verdicts in one file (joined by hand): the last line would win, unsaid
            raise RunDirError(f"{target}: holds judgments by {', '.join(judges)}; one judge per file (`ihbench judge "
                              "--out` writes another judge's to a file of its own): separate them")
        judgments = latest_judgments(records)
        self.damaged_judgments = getattr(self, "damaged_judgments", {})
        self.damaged_judgments[target] = [line for line, _, _ in damaged]
        # a last line cut mid-way (left out unless the writer repairs it): said by the report, which
        # is not the writer, and counted with the damaged lines (a judgment missing may be that one)
        self.torn_judgments = getattr(self, "torn_judgments", {})
        self.torn_judgments[target] = torn
        if responses is None:
            return judgments
        if info and info.epochs:  # a rerun with fewer --epochs: its other epochs' answers are left out (`load`)
            beyond = [j for j in judgments if j.epoch >= info.epochs]
            if beyond:
                log.warning("%s: %d judgment(s) of epochs beyond the run's --epochs %d (from an earlier start) are "
                            "left out", target, len(beyond), info.epochs)
                judgments = [j for j in judgments if j.epoch < info.epochs]
        outside = getattr(self, "outside_selection", None)
        if outside:  # the answers `load` left out as outside the run's selection: their verdicts with them
            beyond = [j for j in judgments if j.id in outside]
            if beyond:
                log.warning("%s: %d judgment(s) of items outside the run's selection (its --limit or --types at its "
                            "last start) are left out", target, len(beyond))
                judgments = [j for j in judgments if j.id not in outside]
        current = {r.key: r for r in responses}
        foreign = [j for j in judgments if (j.id, j.epoch) not in current]
        lines = self._of_damaged_answers(foreign) if foreign else []
        if lines:  # this run's own judgments, of answers whose records were damaged since: not another run's
            log.warning("%s: %d judgment(s) are of answers whose records in %s are damaged or cut off (line(s) %s) "
                        "and left out; `ihbench run` with the same options answers them again, then `ihbench judge` "
                        "judges them", target, len(foreign), self.responses_path, ", ".join(map(str, lines[:5])))
            judgments = [j for j in judgments if (j.id, j.epoch) in current]
            foreign = []
        held_back = getattr(self, "held_back", None)  # a barge-in run's conversations with records not scored
        if foreign and held_back is not None:
            judgments, foreign = self._of_rounds_held_back(target, judgments, foreign, held_back)
        if foreign and not responses:
            records, command = ((self.path / "barge_in.jsonl", "ihbench barge-in") if held_back is not None
                                else (self.responses_path, "ihbench run"))
            torn = getattr(self, "torn_responses", []) if held_back is None else []
            if torn:  # battery 65, L3: its one line cut mid-line was said as lines of another run
                raise RunDirError(f"{records}: its line {torn[0]} is cut mid-line (the run stopped while writing it, or "
                                  f"the file was cut) and no whole line is left, while {target} holds "
                                  f"{len(judgments)} judgment(s) of answers it had: restore the file, or `{command}` "
                                  "with the same options answers again")
            if records.is_file() and _has_a_line(records):  # lines there, none of them fits run.json
                raise RunDirError(f"{records}: every line is left out (said above), while {target} holds "
                                  f"{len(judgments)} judgment(s) of them: the lines are not of the run "
                                  f"{self.info_path} describes (run.json edited by hand, or the lines copied from "
                                  f"another run); restore the one that changed")
            raise RunDirError(f"{records}: {'empty' if records.exists() else 'missing'}, "
                              f"while {target} holds {len(judgments)} judgment(s): the run's answers are gone; restore "
                              f"the file, or run `{command}` again into a new folder")
        if foreign:
            raise RunDirError(
                f"{target}: {len(foreign)} of {len(judgments)} judgment(s) are of answers {self.path} does not have "
                f"(e.g. {foreign[0].id}, epoch {foreign[0].epoch}): either {self.responses_path.name} lost lines since "
                f"they were judged (restored from an older copy?), then restore it, or it is another run's judgments "
                f"file, then move it out of the way and judge this run (`{command_line('ihbench', 'judge', self.path)}`)")
        replaced: Optional[set] = None  # read again only for judgments written before response_hash

        def judges_current(judgment: JudgmentRecord) -> bool:
            nonlocal replaced
            response = current[judgment.id, judgment.epoch]
            if not response.answered:
                return False
            if judgment.response_hash is not None:
                return judgment.response_hash == response.digest
            # written before judgments named their answer: right only if the answer never changed
            if replaced is None:
                replaced = {key for key, n in Counter(r.key for r in self.responses()).items() if n > 1}
            return response.key not in replaced and not (response.item_hash and is_stale(judgment, response.item_hash))

        kept = [j for j in judgments if judges_current(j)]
        if len(kept) < len(judgments):
            log.warning("%s: %d judgment(s) of other answers than this run's (answers since replaced, items that "
                        "failed, or judgments copied from another run) are left out; `ihbench judge` judges the current "
                        "answers", target, len(judgments) - len(kept))
        return self._of_the_rubric(target, kept)

    def _of_the_rubric(self, target: Path, judgments: list) -> list:
        """RQ verdicts with one criterion per criterion of the item's rubric; any other count (a line
        edited or written by hand: the judge refuses such an answer) is left out and judged again."""
        items = getattr(self, "items", None) or {}
        wrong = [j for j in judgments if j.axis == "rq" and j.judged and j.id in items
                 and len(j.criteria or ()) != len(items[j.id].rubric.rq)]
        if wrong:
            first = wrong[0]
            log.warning("%s: %d RQ verdict(s) hold another number of criteria than their rubric (e.g. %s epoch %d: %d "
                        "for %d); left out, and `ihbench judge` judges them again", target, len(wrong), first.id,
                        first.epoch, len(first.criteria or ()), len(items[first.id].rubric.rq))
        left_out = {id(j) for j in wrong}
        return [j for j in judgments if id(j) not in left_out]

    def _of_rounds_held_back(self, target: Path, judgments: list, foreign: list, held_back: dict) -> tuple[list, list]:
        """A barge-in run's judgments of points it no longer scores (their conversation's records are
        damaged, cut off or from an older suite: `points.HELD_BACK`) are left out with one warning per
        cause, not taken for another run's; the rest of `foreign` stays foreign."""
        def conversation(judgment) -> str:
            return judgment.id.rsplit("/", 1)[0]

        held = [j for j in foreign if conversation(j) in held_back]
        by_cause: dict[str, set] = {}
        for judgment in held:
            by_cause.setdefault(held_back[conversation(judgment)], set()).add(conversation(judgment))
        for cause, conversations in sorted(by_cause.items()):
            count = sum(conversation(j) in conversations for j in held)
            log.warning("%s: %d judgment(s) of %s are left out: %s; `ihbench barge-in` with the same --out plays it "
                        "again, then `ihbench judge` judges it", target, count, ", ".join(sorted(conversations)), cause)
        held_keys = {(j.id, j.epoch) for j in held}
        return ([j for j in judgments if (j.id, j.epoch) not in held_keys],
                [j for j in foreign if (j.id, j.epoch) not in held_keys])

    @contextmanager
    def judging(self, path: Optional[Path] = None) -> Iterator[None]:
        target = self.judgments_path(path)
        with new_folders(target.parent), exclusive(lock_file_for(target), f"judgments file {target}"):
            yield


def read_judgments(path: Path) -> list[JudgmentRecord]:
    """The last checked record per key of a judgments file anywhere (for tools given a file)."""
    return latest_judgments(read_typed(path, JudgmentRecord))


def _of_the_run(info: Optional[RunInfo]):
    """The check of each response line against the run that holds it, in file order: an answer by
    another model, in another modality or drawn with another seed was copied from another run, and a
    second answer to an (item, epoch) already answered (the runner never answers one twice) was
    added by hand; neither is this run's answer, and the first answer stays the one scored."""
    from .seeds import record_seed

    settings = settings_digest(info.generation) if info and isinstance(info.generation, dict) else None
    last: dict = {}

    def fits(record: ResponseRecord) -> Optional[str]:
        copied = copied_from_another_run(info, model=record.model, modality=record.modality, seed=record.seed,
                                         drawn=lambda seed: record_seed(seed, record.id, record.epoch),
                                         verb="answered", noun="an answer")
        if copied:
            return copied
        if settings and record.generation and record.generation != settings:
            return ("drawn with other generation settings (--temperature, --top-p, --max-new-tokens, ...) than "
                    "this run's: not an answer of this run (copied from another run, or run.json another run's?); "
                    "left out, and answered again")
        before = last.get(record.key)
        if before is not None and before.answered and before.item_hash == record.item_hash:
            return (f"a second record of {record.id} epoch {record.epoch}, which an earlier line already answered; "
                    "the runner never answers twice, so the earlier answer is kept (remove this line)")
        last[record.key] = record
        return None

    return fits


def _is_epoch(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _judgment_redone(record: dict, number: int, good: list) -> bool:
    """A damaged judgment line is redone when a later good record has its (id, epoch, axis)."""
    key = (record.get("id"), record.get("epoch"), record.get("axis"))
    return isinstance(key[0], str) and _is_epoch(key[1]) and \
        any(line > number and (r.get("id"), r.get("epoch"), r.get("axis")) == key for line, r in good)


def _has_a_line(path: Path) -> bool:
    """A line that is not blank (read up to the first one: a run's file can be large)."""
    with open(path, "rb") as lines:
        return any(line.strip() for line in lines)
