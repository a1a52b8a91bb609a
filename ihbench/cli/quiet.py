"""`--quiet` for the libraries too: their progress bars (datasets' "Generating split", transformers'
"Loading weights", the Hub's downloads) are not the toolkit's and ignore our own `progress=False`.

A library already imported is switched off through its own API and switched back on afterwards
(main() may run again in one process: tests, notebooks). One not imported yet is never imported
here just to silence it (datasets costs a second, evaluate several): the Hub's switch is cheap and
transformers reads it when it is imported; datasets reads its environment variable then.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator

DATASETS_VARIABLE = "HF_DATASETS_DISABLE_PROGRESS_BARS"


def _switches() -> list[tuple[Callable[[], bool], Callable[[], None], Callable[[], None]]]:
    """(is on, switch off, switch on) of each library that has progress bars and is imported."""
    from huggingface_hub import utils as hub

    switches = [(lambda: not hub.are_progress_bars_disabled(), hub.disable_progress_bars, hub.enable_progress_bars)]
    if "datasets" in sys.modules:
        import datasets

        switches.append((lambda: not datasets.are_progress_bars_disabled(), datasets.disable_progress_bars,
                         datasets.enable_progress_bars))
    for name in ("transformers.utils.logging", "evaluate.utils.logging"):
        module = sys.modules.get(name)
        if module is not None:
            switches.append((module.is_progress_bar_enabled, module.disable_progress_bar, module.enable_progress_bar))
    return switches


@contextmanager
def libraries_quiet(quiet: bool) -> Iterator[None]:
    if not quiet:
        yield
        return
    from huggingface_hub import utils as hub

    hub_was_on = not hub.are_progress_bars_disabled()
    switched = []
    for is_on, off, on in _switches():
        if is_on():
            off()
            switched.append(on)
    transformers_was_imported = "transformers.utils.logging" in sys.modules
    variable_was = os.environ.get(DATASETS_VARIABLE)
    if "datasets" not in sys.modules and variable_was is None:
        os.environ[DATASETS_VARIABLE] = "1"
    try:
        yield
    finally:
        for on in switched:
            on()
        transformers = sys.modules.get("transformers.utils.logging")
        if transformers is not None and not transformers_was_imported and hub_was_on:
            transformers.enable_progress_bar()  # it copied the Hub's switch, off, when it was imported
        if variable_was is None:
            os.environ.pop(DATASETS_VARIABLE, None)
