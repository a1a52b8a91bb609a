"""`--quiet` for the libraries too: their progress bars (datasets' "Generating split", transformers'
"Loading weights", the Hub's downloads) are not the toolkit's and ignore our own `progress=False`.

A library already imported is switched off through its own API and switched back on afterwards
(main() may run again in one process: tests, notebooks). One not imported yet is never imported
here just to silence it (datasets costs a second, evaluate several): the Hub's switch is cheap and
transformers reads it when it is imported; datasets reads its environment variable then.

Warnings and log lines of the libraries (`library_warnings`), one rule for all of them: a warning is
the toolkit's own when Python attributes it to a module of `ihbench`, a library's otherwise (scipy's
"precision loss" in a t-test, numpy's "mean of empty slice", matplotlib's "created a temporary cache
directory" log line, ...). Under --quiet a library's are not shown (the toolkit's own notes already
are not); without it each is one line, `ihbench CMD: warning: ...` naming the library, shown once,
never with the library's source line that Python prints by default. The toolkit's own warnings are
shown, once, in the same one-line form, --quiet or not.
"""
from __future__ import annotations

import logging
import os
import sys
import warnings
from contextlib import contextmanager
from typing import Callable, Iterator

from .common import said

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
    datasets_was_imported = "datasets" in sys.modules
    if not datasets_was_imported and variable_was is None:
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
            bars = sys.modules.get("datasets.utils.tqdm")
            if bars is not None and not datasets_was_imported:  # imported during the command, it kept the variable
                bars.HF_DATASETS_DISABLE_PROGRESS_BARS = None  # as if unset, which it is again
                bars.enable_progress_bars()


#: read by each library when it is imported: its own log handler then prints errors only
VERBOSITY_VARIABLES = ("TRANSFORMERS_VERBOSITY", "DATASETS_VERBOSITY", "EVALUATE_VERBOSITY", "HF_HUB_VERBOSITY")
#: the toolkit's modules, as warnings' filters match a warning's module
TOOLKIT_MODULE = r"ihbench(\.|$)"


def _library(filename: str) -> str:
    """The top-level package a file belongs to ("scipy" for .../site-packages/scipy/stats/x.py)."""
    path = os.path.abspath(filename)
    for root in sorted((os.path.abspath(entry) for entry in sys.path if entry), key=len, reverse=True):
        if path.startswith(root + os.sep):
            return path[len(root) + 1:].split(os.sep)[0].removesuffix(".py")
    return os.path.basename(path).removesuffix(".py")


def _toolkit_file(filename: str) -> bool:
    """A file of one of the toolkit's modules (as imported: `ihbench...`, wherever the files are)."""
    return any(getattr(module, "__file__", None) == filename for name, module in list(sys.modules.items())
               if name == "ihbench" or name.startswith("ihbench."))


class _LibraryLines(logging.Handler):
    """Where a library's log record goes when no handler of its own takes it (Python's last resort
    prints the bare message): one `ihbench CMD: warning: (library) message` line."""

    def __init__(self, command: str, level: int):
        super().__init__(level)
        self.command = command

    def emit(self, record: logging.LogRecord) -> None:
        try:
            kind = "error" if record.levelno >= logging.ERROR else "warning"
            library = record.name.split(".")[0]
            print(said(f"ihbench {self.command}: {kind}: ({library}) {record.getMessage()}"), file=sys.stderr)
        except Exception:  # never let a library's log line end the command
            self.handleError(record)


@contextmanager
def library_warnings(quiet: bool, command: str) -> Iterator[None]:
    """The rule of the module docstring, for the life of one command; filters, the last-resort log
    handler, library log levels and variables are as they were afterwards."""
    shown: set[tuple[type, str]] = set()

    def one_line(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
        if (category, text) in shown:
            return
        shown.add((category, text))
        where = "" if _toolkit_file(filename) else f" ({category.__name__} from {_library(filename)})"
        print(said(f"ihbench {command}: warning: {text}{where}"), file=file or sys.stderr)

    last_resort = logging.lastResort
    raised, variables = [], {}
    with warnings.catch_warnings():
        warnings.showwarning = one_line
        if quiet:
            warnings.filterwarnings("ignore", module=f"(?!{TOOLKIT_MODULE})")
            for name, logger in list(logging.root.manager.loggerDict.items()):
                if (isinstance(logger, logging.Logger) and logger.handlers and not name.startswith("ihbench")
                        and logger.getEffectiveLevel() < logging.ERROR):
                    raised.append((logger, logger.level))
                    logger.setLevel(logging.ERROR)
            for name in VERBOSITY_VARIABLES:
                if name not in os.environ:
                    variables[name] = os.environ[name] = "error"
        logging.lastResort = _LibraryLines(command, logging.ERROR if quiet else logging.WARNING)
        try:
            yield
        finally:
            logging.lastResort = last_resort
            for logger, level in raised:
                logger.setLevel(level)
            for name in variables:
                os.environ.pop(name, None)
