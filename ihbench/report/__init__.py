"""Reports: scores through the metric modules, comparisons, diagnostics, plots, paper tables, and
one report across IHBench, SID-Bench and turn-taking runs."""
from .cross import cross_report
from .cross_render import write_cross_report
from .render import write_report
from .summary import summarize, summarize_run

__all__ = ["cross_report", "summarize", "summarize_run", "write_cross_report", "write_report"]
