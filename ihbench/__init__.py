"""IHBench orchestration: the CLI, runner, judges, reports and the Space's functions."""
__version__ = "0.1.0"

from .resources import metric_path  # noqa: E402  (light: importlib only)

__all__ = ["__version__", "metric_path"]
