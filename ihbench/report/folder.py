"""The folder a report is written into: made and marked as a report's (`claim_output`), and cleared of
the files an earlier report left there, so a report holds only its own: a report of another run
written into the same --out kept the first one's plots beside it, and a figure this report has no
data for (no dev set, no barge-in run) kept the last one's.

A report is all or nothing: the earlier report's files are set aside (`PREVIOUS`) while the new one
is written, removed when it is complete and put back when it is stopped; a report killed outright
leaves them aside, and the next report into the folder takes them as the earlier report."""
from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from ihbench.dataset.outputs import claim_output

#: every figure any report writes (render, cross_render, convbench_render name theirs from here)
FIGURES = {"per_type": "per_type.png", "depth": "depth.png", "dev_set": "dev_set.png",
           "barge_in_vs_static": "barge_in_vs_static.png", "correlations": "correlations.png",
           "dimensions": "convbench_dimensions.png", "heatmap": "convbench_categories.png"}


_BEGUN: dict = {}  # report folders whose writing has begun in this process (their old figures are gone): whether
#: an earlier report was there
_STOPPED: list = []  # what a report stopped midway did with its folder, said by `ihbench report` (`stop_said`)
_MADE: set = set()  # report folders this process made: a stopped report removes them whole, its mark too
#: where the earlier report's files wait while a new one is written (in the report folder, so a move
#: is a rename); PREVIOUS + ".partial" while they are being moved there
PREVIOUS = ".previous-report"


def begin_report(out: Path) -> Path:
    new = not Path(out).exists()
    out = claim_output(out, "report")
    _BEGUN[Path(out).resolve()] = _set_aside(out)
    _MADE.discard(Path(out).resolve())
    if new:
        _MADE.add(Path(out).resolve())
    return out


def _report_files(folder: Path) -> list[str]:
    return [name for name in ("summary.json", "report.md", *FIGURES.values()) if (folder / name).exists()]


def _set_aside(out: Path) -> bool:
    """Move the earlier report's files to PREVIOUS; whether there was one."""
    aside, moving = out / PREVIOUS, out / (PREVIOUS + ".partial")
    if moving.is_dir():  # killed while setting them aside: those moved are the earlier report's, put back
        for name in _report_files(moving):
            os.replace(moving / name, out / name)
        shutil.rmtree(moving)
    if aside.is_dir():  # a report killed while writing: what is in `out` is its half, the earlier one is aside
        remove_report(out)
        return bool(_report_files(aside))
    names = _report_files(out)
    if not names:
        return False
    moving.mkdir()
    for name in names:
        os.replace(out / name, moving / name)
    os.replace(moving, aside)
    return True


def _put_back(out: Path) -> None:
    """A stopped report's files gone, the earlier report's files where they were."""
    remove_report(out)
    aside = out / PREVIOUS
    if aside.is_dir():
        for name in _report_files(aside):
            os.replace(aside / name, out / name)
        shutil.rmtree(aside)


def one_writer(write):
    """A report writer `write(summary, out, ...)` that holds its folder for the while: two reports into one
    --out at once each wrote half (one's report.md beside the other's figures)."""
    @functools.wraps(write)
    def locked(summary, out, *args, **kwargs):
        from ihbench.dataset.io import exclusive, lock_file_for, new_folders

        out = Path(out)
        with new_folders(out.parent), exclusive(lock_file_for(out), f"report folder {out}"):
            try:
                written = write(summary, out, *args, **kwargs)
                shutil.rmtree(out / PREVIOUS, ignore_errors=True)  # complete: the earlier report is replaced
                return written
            except BaseException:  # stopped midway: no half report (new figures beside the last one's text)
                if out.resolve() in _BEGUN:  # a refusal before the first file leaves the folder as it was
                    _put_back(out)
                    if out.resolve() in _MADE:  # made by this report: gone with it (its mark was all it held)
                        _remove_made_folder(out)
                    _STOPPED.append(f"the report it was writing in {out} is removed" +
                                    ("; the earlier report there is kept" if _BEGUN[out.resolve()] else ""))
                else:
                    _STOPPED.append("nothing of the report was written yet" +
                                    (f" (the earlier report in {out} is kept)" if _holds_report(out) else ""))
                raise
            finally:
                _BEGUN.pop(out.resolve(), None)
    return locked


def stop_said(args=None) -> str:
    """What `ihbench report` says when it is stopped: what it did with the report folder."""
    done = _STOPPED[-1] if _STOPPED else "nothing of the report was written yet"
    _STOPPED.clear()
    return f"{done}; the same command writes it again"


def _holds_report(out: Path) -> bool:
    return any((Path(out) / name).exists() for name in ("summary.json", "report.md"))


def _remove_made_folder(out: Path) -> None:
    from ihbench.dataset.outputs import OUTPUT_MARKERS

    (out / OUTPUT_MARKERS["report"]).unlink(missing_ok=True)
    try:
        out.rmdir()  # only when empty: a file someone put there meanwhile keeps it
    except OSError:
        pass


def remove_report(out: Path) -> None:
    """A report's own files in `out` (never the run's beside them)."""
    for name in ("summary.json", "report.md", *FIGURES.values()):
        (Path(out) / name).unlink(missing_ok=True)
