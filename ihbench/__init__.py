"""IHBench orchestration: the CLI, and (later) the runner, judges and reports."""
__version__ = "0.1.0"
