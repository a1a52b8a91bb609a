"""Errors meant for the person running a command.

Every such error derives from `IHBenchError`; its message says what is wrong and where (file,
line, field, option). The CLI prints these as one line and exits non-zero; any other exception is
a bug and keeps its traceback. The second base keeps each kind catchable the standard way.
"""


class IHBenchError(Exception):
    pass


class UsageError(IHBenchError, ValueError):
    """A bad argument, option or input value."""


class UnknownNameError(IHBenchError, KeyError):
    """A name (loader, detector, conversation, ...) that does not exist; the message lists what does."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingFileError(IHBenchError, FileNotFoundError):
    """A file or folder the command needs is not there."""


class MissingDependencyError(IHBenchError, RuntimeError):
    """A program or package the command needs is not installed; the message says how to get it."""


class ItemFailure(Exception):
    """One item could not be answered (or judged) for a reason of that item or of the service:
    its audio is too long or empty, the server is unreachable or refused it, the model ran out of
    memory on it, the judge's answer could not be read. Recorded on the item and retried by the
    next run, never scored and never a reason to stop the others. Anything that is not an item
    failure (a typo in a loader, a broken invariant) is a bug: it stops the run with its traceback.
    `ihbench.loaders.failures.is_item_failure` is the one test of which is which."""


def command_line(*words) -> str:
    """A command suggested in a message, each word quoted for the shell as needed: a path with a space
    or a quote, pasted unquoted, is several arguments and the advice fails."""
    import shlex

    return " ".join(shlex.quote(str(word)) for word in words)
