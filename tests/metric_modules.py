"""Helpers to open the metric modules the way users do (evaluate.load on a folder path)."""
from __future__ import annotations

import doctest
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

METRICS = Path(__file__).resolve().parents[1] / "metrics"
MODULE_NAMES = ("rq_pass_rate", "tf_win_rate", "fir", "irl", "apt", "turn_taking_agreement",
                "convbench_pass_rate")


@lru_cache(maxsize=None)
def load(name: str, config: str | None = None):
    import evaluate

    return evaluate.load(str(METRICS / name), config) if config else evaluate.load(str(METRICS / name))


def shared(name: str):
    """A file of metrics/_shared imported directly, for fast property tests of the arithmetic."""
    spec = importlib.util.spec_from_file_location(f"ihbench_metrics_shared_{name}", METRICS / "_shared" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_doctest(text: str, label: str) -> doctest.TestResults:
    """Runs `>>>` examples as a user would, from inside metrics/, where `evaluate.load("apt")`
    resolves to the local folder (tests are offline, so a name is never sent to the Hub)."""
    import evaluate

    previous = os.getcwd()
    os.chdir(METRICS)
    try:
        test = doctest.DocTestParser().get_doctest(text, {"evaluate": evaluate}, label, label, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        return runner.summarize(verbose=False)
    finally:
        os.chdir(previous)
