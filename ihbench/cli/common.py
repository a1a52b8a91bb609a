"""Helpers several commands share: notes, the exit rule for work done item by item, publish plans.

What an option's value may be is said where the option is added, with a type of
`ihbench.dataset.argtypes` (the loaders check their `--option` values with the same types)."""
from __future__ import annotations

import argparse
import contextlib
import re
import sys
from pathlib import Path
from typing import Optional

from ihbench.dataset.unshown import UNSHOWN


#: why a ConversationBench conversation stopped on the data's own clip is not played again by a rerun
DATA_AUDIO = ("they stopped on a turn whose audio in the dataset is damaged or silent (the run's error names its "
              "config, turn and file): they fail again until the dataset is mended or imported again")


_UNSHOWN = re.compile(f"[{UNSHOWN}]")


def shown(text) -> str:
    """`text` as a terminal shows it faithfully: a character of an id or a path that would be invisible
    or rearrange the line ("en_a.wav\\0" beside "en_a.wav") is written as its escape (\\u form above
    ASCII, so a JSON line printed stays JSON). Newline and tab pass (progress bars draw themselves on
    stderr, not through here)."""
    return _UNSHOWN.sub(lambda match: _escape(match.group()), str(text))


def said(text) -> str:
    """An error or warning line as printed: `shown`, with any credential it quotes hidden (a key in a
    URL's user part or query, a key in use, a Bearer token). A value the user typed where a path goes
    (`--data http://KEY@host`) is echoed in the line that refuses it (battery 42, M3), its first 300
    characters when longer (a missing path of 4,000 characters filled a screen: battery 57, D10)."""
    from ihbench.dataset.redaction import LONGEST_QUOTED_VALUE, redact_text, shortened

    hidden = redact_text(str(text))
    if len(hidden) > LONGEST_QUOTED_VALUE:  # keys hidden first: any cut is safe
        hidden = re.sub(r"\S{%d,}" % (LONGEST_QUOTED_VALUE + 1),
                        lambda run: shortened(run.group(), LONGEST_QUOTED_VALUE, left_out="not shown",
                                              within="[A-Za-z0-9]{0,40}"), hidden)
    return shown(hidden)


def _escape(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


class _Faithful:
    """A command's stdout, each write through `shown`: every result line of every command, whatever
    run folder, id or model name it names."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(shown(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def faithful_stdout():
    """stdout written through `shown` for the command's duration, then as found (main() may be called
    again in one process: tests, notebooks)."""
    found = sys.stdout
    sys.stdout = _Faithful(found)
    try:
        yield
    finally:
        sys.stdout = found


def notes(args: argparse.Namespace, lines) -> None:
    """What a command noticed but did not stop for, one `note:` line each; --quiet hides them."""
    if not args.quiet:
        for note in lines:
            print(f"note: {note}")


#: Exit status of a command that works item by item (run, judge, generate, verify with a judge):
#: 0 when every item is done, INCOMPLETE when some failed and are left for the same command to retry
#: (what was written is valid and kept), 2 when the command was refused before any work.
INCOMPLETE = 1


def incomplete(command: str, failed: int, total: int, what: str, where, *, on_data: int = 0) -> int:
    """The one rule for items that failed: say how many, where their errors are, that a rerun
    retries only them, and exit INCOMPLETE, whether one failed or all, so a script that chains
    `run && judge && report` never scores a run with holes in it. `on_data`: how many failed on the
    dataset's own damaged audio, which a rerun alone does not mend."""
    if not failed:
        return 0
    share = f"every one of the {total}" if failed == total else f"{failed} of {total}"
    again = "the same command tries them again once the dataset is mended" if on_data >= failed else \
        "the same command tries only those again" + (f" ({on_data} of them once the dataset is mended)" if on_data
                                                     else "")
    print(f"ihbench {command}: error: {share} {what} failed (their errors are in {where}); nothing failed is "
          f"counted, and {again}", file=sys.stderr)
    return INCOMPLETE


def print_budget_note(count: int, budget: int, what: str) -> None:
    """The note on answers the --max-new-tokens budget may have cut: scored as the model's whole answer, so said,
    for `run` (both benchmarks) and `barge-in` alike, so the budget can be raised."""
    if count:
        print(f"note: {count} {what} used the whole --max-new-tokens budget ({budget}) and may be cut short; they are "
              "scored as given: raise --max-new-tokens (in another --out) if they are")


def server_only(backend_flag: str, backend: str, given: dict) -> None:
    """A text-LLM backend that runs a local model (`transformers`) has no server: a server's option
    given with it (`--judge-base-url URL`) would be ignored without a word, and the local model run
    instead. Refused, naming both; `given` maps each server-only flag to its value (None/False: not given)."""
    from ihbench.dataset.errors import UsageError

    if backend == "openai":
        return
    flags = [flag for flag, value in given.items() if value not in (None, False)]
    if flags:
        raise UsageError(f"{flags[0]}: only for {backend_flag} openai (a server); {backend_flag} {backend} runs the "
                         "model locally")


def print_plan(plan, dry_run: bool) -> None:
    """One publish plan: where it goes, the files, and the Space variables it sets."""
    verb = "would upload" if dry_run else "uploaded"
    listed = ", ".join(plan.files[:8]) + (f", ... ({len(plan.files)} files)" if len(plan.files) > 8 else "")
    where = plan.staged if Path(plan.staged).exists() else "a temporary folder, removed; --staging-dir keeps one"
    print(f"{plan.repo_id} ({plan.repo_type}): {verb} {listed}  (from {where})")
    for key, value in plan.variables.items():
        print(f"{plan.repo_id}: {'would set' if dry_run else 'set'} Space variable {key}={value}")


def servers(base_url: Optional[list]):
    """--base-url as a loader takes it: one URL, several (spread over), or None when not given."""
    return None if not base_url else base_url[0] if len(base_url) == 1 else list(base_url)


def set_by_flag(options: dict, key: str, flag: str, value) -> None:
    """`options[key] = value` for a flag the user gave (None: not given). The same setting given as
    `--option KEY=...` with another value is refused naming both: neither is dropped without a word."""
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.redaction import REDACTED, is_secret, redact_text

    if value is None:
        return
    if options.get(key) is not None and options[key] != value:  # a URL's password is not echoed to the terminal
        earlier = REDACTED if is_secret(key) else redact_text(str(options[key]))
        raise UsageError(f"--option {key}={earlier} and {flag} name the same setting twice; give it once")
    options[key] = value


def held_back_why(run) -> str:
    """Why a barge-in run's conversations left out wait, and what ends the wait (judge and report say it)."""
    from ihbench.dataset.errors import command_line
    from ihbench.rundir import RunDir

    writer = RunDir(run).writer()
    if writer:
        return f"it is being played now ({writer}); judge and report it when that ends"
    again = command_line("ihbench", "barge-in", "--out", str(run))
    return (f"their last playing did not close, or was on an older suite (report.md names each and why); `{again}` "
            "with the same options plays them again, then `ihbench judge` judges their points")

