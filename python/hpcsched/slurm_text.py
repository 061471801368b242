"""Slurm's own notations, read the one way everywhere: durations (time limits) and hostlists.

Used by platform files (``site``), ``slurm.conf`` (``slurm_conf``) and the advisor's readers of
``scontrol`` output (``advise.scontrol``). Both readers raise ``ValueError``; callers name the
file and field.
"""

from __future__ import annotations

import re
from typing import Any

from hpcsched.exceptions import shown

#: Slurm's words for "no limit" (``MaxTime=UNLIMITED``, ``MaxNodes=INFINITE``).
UNLIMITED = ("UNLIMITED", "INFINITE")

#: Slurm's durations: ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``.
_DURATION = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?")
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
    0 is a value: Slurm takes ``MaxTime=0`` and prints ``00:00:00``."""
    text = text.strip()
    if text.upper() in UNLIMITED:
        return None
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"not a Slurm duration: {shown(text)}")
    days, *parts = match.groups()
    numbers = [int(p) for p in parts if p is not None]
    units = _UNITS[days is not None, len(numbers)]
    return float(int(days or 0) * 86400 + sum(n * u for n, u in zip(numbers, units, strict=True)))


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
