"""Exceptions raised by hpcsched.

Every error a user can cause (a malformed trace, an impossible job, a wrong option) is an
``HpcschedError``; the CLI turns these into one clear line on stderr and exit code 2. Details are
attributes, never parsed out of the message.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable

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


def bounded(reason: str) -> str:
    """``reason`` cut in the middle to ``MAX_REASON_CHARS`` (an error's text, for display)."""
    if len(reason) <= MAX_REASON_CHARS:
        return reason
    half = MAX_REASON_CHARS // 2
    return f"{reason[:half]} ... {reason[-half:]}"


#: Lists of names longer than this are not spelled out when a close match was found.
LISTED_CHOICES = 10


def close_names(value: object, choices: Iterable[str]) -> list[str]:
    """Up to three of ``choices`` close to ``value`` (case aside), closest first; only those
    with the very letters of ``value`` when some have them (two keys swapped, the commonest
    slip: ``fcsf`` is ``fcfs``, not ``fcsj``)."""
    names = list(choices)
    by_lower = {name.lower(): name for name in names}
    typed = str(value).strip().lower()
    close = difflib.get_close_matches(typed, list(by_lower), n=3, cutoff=0.6)
    swapped = [name for name in close if sorted(name) == sorted(typed)]
    return [by_lower[name] for name in swapped or close]


def did_you_mean(names: list[str]) -> str:
    """``did you mean fcfs?``, ``did you mean snf or sjf?`` (empty without names)."""
    if not names:
        return ""
    shown_names = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"did you mean {shown_names}?"


def unknown_name(
    kind: str, value: object, choices: Iterable[str], *, listed_by: str | None = None
) -> str:
    """The one reason given wherever a name is chosen from a list (policies, power managers,
    presets, heuristics, ...): ``unknown policy 'fcsf'; did you mean fcfs? ('hpcsched
    policies' lists all 29)``. The choices are listed when no name is close, or when they are
    few; ``listed_by`` says where a long list is shown instead."""
    names = list(choices)
    close = close_names(value, names)
    reason = f"unknown {kind} {shown(value)}"
    if not close:
        return f"{reason}; choose one of: {', '.join(names)}"
    if len(names) <= LISTED_CHOICES or listed_by is None:
        return f"{reason}; {did_you_mean(close)} (choose one of: {', '.join(names)})"
    return f"{reason}; {did_you_mean(close)} ({listed_by} lists all {len(names)})"


class HpcschedError(Exception):
    """Base class of every error caused by the user's inputs or options.

    The one place an error's text is bounded: ``reason`` is cut (in the middle) to
    ``MAX_REASON_CHARS``, whoever built it and whatever it quotes (a policy's million-entry
    decision, a file's endless token); ``where`` (file and line, option) goes before it."""

    def __init__(self, reason: object = "", *, where: str | None = None) -> None:
        self.reason = bounded(str(reason))
        super().__init__(f"{where}: {self.reason}" if where else self.reason)

    def __reduce__(self) -> tuple[object, ...]:
        # as it was, message and attributes (an error travels back from a worker process);
        # calling __init__ again with the message would prefix it a second time
        return (_restored, (type(self), self.args, self.__dict__))


def _restored(
    cls: type[HpcschedError], args: tuple[object, ...], state: dict[str, object]
) -> HpcschedError:
    error = cls.__new__(cls, *args)
    error.__dict__.update(state)
    return error


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
        self.path = path
        self.line = line
        self.field = field
        where = path or "<input>"
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field {field}"
        super().__init__(reason, where=where)


class OptionError(HpcschedError, ValueError):
    """An option or argument has an invalid value (unknown policy, negative window, ...)."""

    def __init__(self, reason: str, *, option: str | None = None) -> None:
        self.option = option
        super().__init__(reason, where=option)


class DecisionError(HpcschedError):
    """A policy asked for something illegal (starting a job that does not fit, an unknown job),
    or its ``decide`` raised or returned something else than a decision."""

    def __init__(self, reason: str, **_: object) -> None:
        super().__init__(reason)


__all__ = [
    "DecisionError",
    "HpcschedError",
    "InputError",
    "OptionError",
    "bounded",
    "close_names",
    "did_you_mean",
    "shown",
    "unknown_name",
]
