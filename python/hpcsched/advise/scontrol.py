"""Slurm's ``scontrol show`` text (reservations, partitions), its hostlists and its durations.

scontrol has no JSON in 22.05. Both commands print ``Key=Value`` pairs separated by spaces:
with ``-o`` one line per record, otherwise a block per record whose first line, unindented,
starts with the record's name (``ReservationName=``, ``PartitionName=``), its other lines
indented, and a blank line after each block. Empty values print as ``(null)``, unlimited
ones as ``UNLIMITED``; durations are ``HH:MM:SS`` or ``D-HH:MM:SS``
(tests/advise/fixtures/README.md shows real output).
"""

from __future__ import annotations

import calendar
import re
import time

from hpcsched.advise.state import Partition, Reservation
from hpcsched.exceptions import InputError, shown
from hpcsched.site.slurm.text import expand_hostlist, slurm_duration

#: What ``scontrol show partition`` prints when there is none.
NO_PARTITIONS = "No partitions in the system"
#: A partition's states, as scontrol prints them.
PARTITION_STATES = ("UP", "DOWN", "DRAIN", "INACTIVE")


def _pairs(text: str) -> dict[str, str]:
    return dict(token.split("=", 1) for token in text.split() if "=" in token)


def parse_reservations(text: str, source: str = "scontrol show reservation") -> list[Reservation]:
    """Reservations from ``scontrol show reservation`` (one-line ``-o`` or the block form).
    scontrol prints times in its own time zone without saying which: the adapter runs it with
    ``TZ=UTC`` and saved output must be taken the same way."""
    if "No reservations" in text:
        return []
    blocks = re.split(r"\n(?=ReservationName=)", text.strip())
    reservations = []
    for block in blocks:
        if not block.strip():
            continue
        fields = _pairs(block)
        try:
            reservations.append(
                Reservation(
                    name=fields["ReservationName"],
                    start=_utc_time(fields["StartTime"]),
                    end=_utc_time(fields["EndTime"]),
                    nodes=tuple(expand_hostlist(fields.get("Nodes", ""))),
                    flags=tuple(f for f in fields.get("Flags", "").split(",") if f),
                )
            )
        except (KeyError, ValueError) as exc:
            raise InputError(
                f"reservation cannot be read ({exc!r}): {block[:80]}", path=source
            ) from None
    return reservations


def _utc_time(text: str) -> float:
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))


def parse_partitions(text: str, source: str = "scontrol show partition") -> list[Partition]:
    """Partitions from ``scontrol show partition`` (one-line ``-o`` or the block form), in
    scontrol's order. Every field read must be there and of a shape Slurm prints: anything
    else is an :class:`InputError` naming the field (``PartitionName``, ``Nodes``,
    ``PriorityTier``, ``MaxTime``, ``MaxNodes``, ``MinNodes``, ``Default``, ``State``) and the
    line its partition starts on."""
    if text.strip() == NO_PARTITIONS:
        return []
    return [_partition(fields, source, line) for line, fields in _records(text, source)]


def _records(text: str, source: str) -> list[tuple[int, dict[str, str]]]:
    """Each record's first line (1-based) and its pairs: an unindented line starts a record,
    indented lines continue it, blank lines end it."""
    records: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            current = None
        elif line[0].isspace() and current is not None:
            current.append(line)
        elif line[0].isspace() or not line.startswith("PartitionName="):
            raise InputError(
                f"expected a line starting with PartitionName=, not {shown(line.strip())}",
                path=source,
                line=number,
                field="PartitionName",
            )
        else:
            current = [line]
            records.append((number, current))
    return [(number, _pairs(" ".join(lines))) for number, lines in records]


def _partition(fields: dict[str, str], source: str, line: int) -> Partition:
    name = fields.get("PartitionName", "")

    def value(key: str) -> str:
        if key not in fields:
            raise InputError(
                f"partition {shown(name)} has no {key}", path=source, line=line, field=key
            )
        return fields[key]

    def bad(key: str, expected: str) -> InputError:
        return InputError(
            f"partition {shown(name)}: {key} is {shown(fields[key])}, expected {expected}",
            path=source,
            line=line,
            field=key,
        )

    if not name or name == "(null)":
        raise InputError(
            "a partition without a name", path=source, line=line, field="PartitionName"
        )
    try:
        nodes = tuple(expand_hostlist(value("Nodes")))
    except ValueError as exc:
        raise InputError(
            f"partition {shown(name)}: {exc}", path=source, line=line, field="Nodes"
        ) from None
    try:
        max_time = slurm_duration(value("MaxTime"))
    except ValueError:
        raise bad("MaxTime", "a duration ([D-]HH:MM:SS and the like) or UNLIMITED") from None
    integers: dict[str, int | None] = {}
    for key in ("PriorityTier", "MaxNodes", "MinNodes"):
        text = value(key)
        if key == "MaxNodes" and text == "UNLIMITED":
            integers[key] = None
        elif text.isdigit():
            integers[key] = int(text)
        else:
            raise bad(key, "UNLIMITED or a whole number" if key == "MaxNodes" else "a whole number")
    default = value("Default")
    if default not in ("YES", "NO"):
        raise bad("Default", "YES or NO")
    state = value("State")
    if state not in PARTITION_STATES:
        raise bad("State", " or ".join(PARTITION_STATES))
    tier, min_nodes = integers["PriorityTier"], integers["MinNodes"]
    assert tier is not None and min_nodes is not None  # only MaxNodes may be UNLIMITED
    return Partition(
        name=name,
        nodes=nodes,
        tier=tier,
        max_time=max_time,
        max_nodes=integers["MaxNodes"],
        min_nodes=max(1, min_nodes),  # MinNodes=0 is "no minimum"
        default=default == "YES",
        state=state.lower(),
    )
