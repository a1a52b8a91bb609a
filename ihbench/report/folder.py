"""The folder a report is written into: made and marked as a report's (`claim_output`), and cleared of
the figures an earlier report left there, so a report holds only its own: a report of another run
written into the same --out kept the first one's plots beside it, and a figure this report has no
data for (no dev set, no barge-in run) kept the last one's."""
from __future__ import annotations

import functools
from pathlib import Path

from ihbench.dataset.outputs import claim_output

#: every figure any report writes (render, cross_render, convbench_render name theirs from here)
FIGURES = {"per_type": "per_type.png", "depth": "depth.png", "dev_set": "dev_set.png",
           "barge_in_vs_static": "barge_in_vs_static.png", "correlations": "correlations.png",
           "dimensions": "convbench_dimensions.png", "heatmap": "convbench_categories.png"}


_BEGUN: set = set()  # report folders whose writing has begun in this process (their old figures are gone)


def begin_report(out: Path) -> Path:
    out = claim_output(out, "report")
    _BEGUN.add(Path(out).resolve())
    for name in FIGURES.values():
        (out / name).unlink(missing_ok=True)
    return out


def one_writer(write):
    """A report writer `write(summary, out, ...)` that holds its folder for the while: two reports into one
    --out at once each wrote half (one's report.md beside the other's figures)."""
    @functools.wraps(write)
    def locked(summary, out, *args, **kwargs):
        from ihbench.dataset.io import exclusive, lock_file_for, new_folders

        out = Path(out)
        with new_folders(out.parent), exclusive(lock_file_for(out), f"report folder {out}"):
            try:
                return write(summary, out, *args, **kwargs)
            except BaseException:  # stopped midway: no half report (new figures beside the last one's text)
                if out.resolve() in _BEGUN:  # a refusal before the first file leaves the folder as it was
                    remove_report(out)
                raise
            finally:
                _BEGUN.discard(out.resolve())
    return locked


def remove_report(out: Path) -> None:
    """A report's own files in `out` (never the run's beside them)."""
    for name in ("summary.json", "report.md", *FIGURES.values()):
        (Path(out) / name).unlink(missing_ok=True)
