"""Reports: scores through the metric modules, comparisons, diagnostics, plots, paper tables."""
from .render import write_report
from .summary import summarize, summarize_run

__all__ = ["summarize", "summarize_run", "write_report"]
