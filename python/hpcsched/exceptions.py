"""Exceptions raised by hpcsched.

Every error a user can cause (a malformed trace, an impossible job, a wrong option) is an
``HpcschedError``; the CLI turns these into one clear line on stderr and exit code 2. Details are
attributes, never parsed out of the message.
"""

from __future__ import annotations

import reprlib

#: Characters of a user's token an error message quotes (the Rust readers quote as many).
QUOTED_CHARS = 40
#: The longest reason an error carries; longer ones are cut in the middle.
MAX_REASON_CHARS = 600

_REPR = reprlib.Repr()
_REPR.maxstring = QUOTED_CHARS + 2  # the quotes
_REPR.maxother = _REPR.maxlong = QUOTED_CHARS
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4
_REPR.maxlevel = 2


def shown(value: object) -> str:
    """``repr(value)`` for an error message, cut to about 40 characters: a token from a file
    or an option may be megabytes long, and a message echoes it."""
    return _REPR.repr(value)


def _bounded(reason: str) -> str:
    if len(reason) <= MAX_REASON_CHARS:
        return reason
    half = MAX_REASON_CHARS // 2
    return f"{reason[:half]} ... {reason[-half:]}"


class HpcschedError(Exception):
    """Base class of every error caused by the user's inputs or options."""


class InputError(HpcschedError, ValueError):
    """A workload, calendar or platform file cannot be read.

    Attributes name where: ``path`` (the file), ``line`` (1-based line number, when known),
    ``field`` (the field's name or number, when known).
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.reason = _bounded(reason)
        self.path = path
        self.line = line
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where += f", line {self.line}"
        if self.field is not None:
            where += f", field {self.field}"
        return f"{where}: {self.reason}"


class OptionError(HpcschedError, ValueError):
    """An option or argument has an invalid value (unknown policy, negative window, ...)."""

    def __init__(self, reason: str, *, option: str | None = None) -> None:
        self.reason = _bounded(reason)
        self.option = option
        super().__init__(f"{option}: {reason}" if option else reason)


class DecisionError(HpcschedError):
    """A policy asked for something illegal (starting a job that does not fit, an unknown job)."""

    def __init__(self, reason: str, **_: object) -> None:
        self.reason = reason
        super().__init__(reason)


__all__ = ["DecisionError", "HpcschedError", "InputError", "OptionError", "shown"]
