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
