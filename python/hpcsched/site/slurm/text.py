"""Slurm's own notations, read the one way everywhere: durations (time limits), whole numbers
and hostlists.

Used by platform files (``site.partitions``), ``slurm.conf`` (``site.slurm.conf``), sacct
records (``workload.sacct_text``) and the advisor's readers of ``scontrol`` output
(``advise.scontrol``): it imports nothing of the site, and sits at the package's bottom layer
(docs/architecture.md). The readers raise ``ValueError``; callers name the
file and field. Digits are ASCII only (``str.isdigit`` takes ``²``, ``\\d`` takes ``٣``).
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from hpcsched import _core
from hpcsched.exceptions import shown

#: Slurm's words for "no limit" (``MaxTime=UNLIMITED``, ``MaxNodes=INFINITE``).
UNLIMITED = ("UNLIMITED", "INFINITE")

#: Slurm's durations: ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``.
_DURATION = re.compile(r"(?:([0-9]+)-)?([0-9]+)(?::([0-9]+))?(?::([0-9]+))?")
#: Seconds per unit of each number after the days, by (days given, how many numbers).
_UNITS = {
    (False, 1): (60,),
    (False, 2): (60, 1),
    (False, 3): (3600, 60, 1),
    (True, 1): (3600,),
    (True, 2): (3600, 60),
    (True, 3): (3600, 60, 1),
}


def slurm_duration(text: str) -> float | None:
    """Seconds of a Slurm duration (a time limit): ``UNLIMITED`` and ``INFINITE`` are None.
    Without days, one number is minutes, two are minutes and seconds, three hours, minutes
    and seconds; after ``D-`` they are hours, minutes and seconds. A ValueError otherwise.
    0 is a value: Slurm takes ``MaxTime=0`` and prints ``00:00:00``. Past the engine's times
    (``_core.MAX_TIME``, 1e11 s: over 3,000 years) a ValueError too."""
    text = text.strip()
    if text.upper() in UNLIMITED:
        return None
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"not a Slurm duration: {shown(text)}")
    days, *parts = match.groups()
    if max(len(g) for g in match.groups() if g is not None) > _TIME_DIGITS:
        raise _beyond_times(text)  # (without int(): 5,000 digits are refused)
    numbers = [int(p) for p in parts if p is not None]
    units = _UNITS[days is not None, len(numbers)]
    seconds = int(days or 0) * 86400 + sum(n * u for n, u in zip(numbers, units, strict=True))
    if seconds > _core.MAX_TIME:
        raise _beyond_times(text)
    return float(seconds)


#: Digits of the largest number a duration may hold (1e11 s: 12 digits).
_TIME_DIGITS = len(str(int(_core.MAX_TIME)))


class BeyondTimes(ValueError):
    """A well-formed Slurm duration past the engine's times."""


def _beyond_times(text: str) -> BeyondTimes:
    return BeyondTimes(f"{shown(text)} is past the engine's times (at most {_core.MAX_TIME:g} s)")


_WHOLE = re.compile(r"[0-9]+")


def whole_number(text: str, maximum: int, minimum: int = 0, of: str = "") -> int:
    """``text`` as a whole number in ASCII digits from ``minimum`` to ``maximum`` (``of``: its
    unit, for the message); a ValueError saying so otherwise (``str.isdigit`` takes ``²``,
    which ``int`` then refuses)."""
    text = text.strip()
    what = f"a whole number{f' of {of}' if of else ''}"
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"must be {what}, not {shown(text)}")
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(maximum)) or not minimum <= int(digits) <= maximum:
        raise ValueError(f"must be {what} from {minimum} to {maximum}, not {shown(text)}")
    return int(digits)


def slurm_json_number(value: Any) -> float | None:
    """A number of Slurm's JSON output: null when unset (newer releases write
    ``{"set": false, "infinite": ..., "number": ...}``: None when not set or infinite). A
    TypeError for anything else."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"not a number: {value!r}")
    return float(value)


def expand_hostlist(expression: str) -> list[str]:
    """Slurm's hostlist notation as node names, by ``python-hostlist`` (several bracket
    groups multiply: ``rack[1-2]-n[1-2]`` is four nodes); ``(null)`` and empty -> none."""
    import hostlist

    if expression in ("", "(null)"):
        return []
    try:
        return list(hostlist.expand_hostlist(expression))
    except hostlist.BadHostlist as exc:
        raise ValueError(f"bad hostlist {expression!r}: {exc}") from None


#: Names one part of a hostlist may give (python-hostlist's cap, kept: ``a[1-1000][1-1000]``
#: is a slip, not a machine).
PART_NAMES = 100_000
_BRACKET_OR_COMMA = re.compile(r"[\[\],]")
_GROUP = re.compile(r"\[([^\]]*)\]")
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
#: Digits a range's bound may have (a host number of 100 digits is a slip).
_BOUND_DIGITS = 100

#: One bracket group: each item a number kept as written, or a range (low, high, width).
_Group = list[str | tuple[int, int, int]]


def split_hostlists(expression: str) -> list[str]:
    """The comma-separated parts of a hostlist, commas inside brackets kept (``a[1-2,4],b``:
    two parts), empty parts dropped; a ValueError for nested or unbalanced brackets."""
    parts, start, depth = [], 0, 0
    for match in _BRACKET_OR_COMMA.finditer(expression):
        char = match.group()
        if char != ",":
            depth += 1 if char == "[" else -1
            if depth > 1:
                raise ValueError(_bad(expression, "nested brackets"))
            if depth < 0:
                raise ValueError(_bad(expression, "unbalanced brackets"))
        elif depth == 0:
            parts.append(expression[start : match.start()])
            start = match.end()
    if depth:
        raise ValueError(_bad(expression, "unbalanced brackets"))
    parts.append(expression[start:])
    return [p for p in parts if p]


def hostlist_size(expression: str) -> int:
    """How many names a hostlist gives (repeats counted), without expanding it: a
    ValueError as :func:`hostlist_names` gives, for the same expressions."""
    return sum(_part(part, expression)[2] for part in split_hostlists(expression))


def hostlist_names(expression: str) -> list[str]:
    """The names of a hostlist in its order, repeats kept (``n[1-3],n2``: n1 n2 n3 n2), as
    python-hostlist reads them (several bracket groups multiply, the first slowest; a number
    keeps its zeros: ``n[01-10]``); at most :data:`PART_NAMES` names a comma-separated part.
    A ValueError naming the fault otherwise. Linear in the names (no recursion)."""
    names: list[str] = []
    for part in split_hostlists(expression):
        literals, groups, _ = _part(part, expression)
        for numbers in itertools.product(*(_numbers(g) for g in groups)):
            pieces = [literals[0]]
            for number, literal in zip(numbers, literals[1:], strict=True):
                pieces += (number, literal)
            names.append("".join(pieces))
    return names


def _part(part: str, expression: str) -> tuple[list[str], list[_Group], int]:
    """A part's literal texts (one more than its groups), its bracket groups, its size."""
    literals, groups, start = [], [], 0
    for match in _GROUP.finditer(part):
        literals.append(part[start : match.start()])
        groups.append(_group(match.group(1), expression))
        start = match.end()
    literals.append(part[start:])
    size = math.prod(sum(_width(item) for item in group) for group in groups)
    if size > PART_NAMES:
        raise ValueError(_bad(expression, f"more than {PART_NAMES} names in one part"))
    return literals, groups, size


def _width(item: str | tuple[int, int, int]) -> int:
    return 1 if isinstance(item, str) else item[1] - item[0] + 1


def _group(body: str, expression: str) -> _Group:
    group: _Group = []
    for item in body.split(","):
        match = _RANGE.fullmatch(item)
        if match is None:
            raise ValueError(_bad(expression, f"bad range {shown(item)}"))
        first, last = match.groups()
        if last is None:
            group.append(first)
            continue
        if max(len(first), len(last)) > _BOUND_DIGITS:
            raise ValueError(_bad(expression, "range too large"))
        low, high = int(first), int(last)
        if high < low:
            raise ValueError(_bad(expression, "start > stop"))
        if high - low >= PART_NAMES:
            raise ValueError(_bad(expression, "range too large"))
        group.append((low, high, len(first)))
    return group


def _numbers(group: _Group) -> list[str]:
    out: list[str] = []
    for item in group:
        if isinstance(item, str):
            out.append(item)
        else:
            low, high, width = item
            out += (f"{n:0{width}d}" for n in range(low, high + 1))
    return out


def _bad(expression: str, reason: str) -> str:
    return f"bad hostlist {shown(expression)}: {reason}"
