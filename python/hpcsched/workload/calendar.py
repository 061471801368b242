"""Downtime calendars: maintenance reservations and unscheduled outages (DESIGN §3.4).

File format, one window per line::

    # start      end        kind  [nodes]  [note...]
    86400        93600      S     -        monthly maintenance    # whole machine
    200000       203600     U     16       PDU failure, rack 3

- ``start`` and ``end`` are numbers (seconds) in the trace's clock, i.e. the same units and origin
  as the trace's submit column *before* the workload's time-origin shift. Use
  :meth:`DowntimeCalendar.shifted` with ``workload.time_origin`` to put them on the replay clock.
- ``kind`` is ``S`` (scheduled maintenance, announced ``announce_lead`` seconds before its start,
  48 h by default) or ``U`` (unscheduled outage, no notice); lower case is accepted.
- ``nodes`` is a node *count* (a positive integer): how many nodes go down. Absent means the whole
  machine; ``-``, ``*`` or ``all`` also mean the whole machine, which lets a note start with a
  number. The fourth token is read as ``nodes`` when it looks like a number (so ``2.5`` or ``0`` is
  an error, not a note); otherwise the note starts there.
- ``back=idle`` or ``back=asleep`` (optional, after ``nodes``): the state the nodes come back in
  when nodes have power states (under a power manager); idle by default. Ignored otherwise.
- ``partition=NAME`` (optional, after ``nodes``; on a platform with partitions): the window
  takes down that partition's nodes (give no node count with it).
- ``nodes=FIRST-LAST`` (optional, in place of the node count): the window takes down that
  range of node indices, inclusive as Slurm writes ranges (``nodes=88-95``: 8 nodes), whatever
  partitions they belong to; on a platform without partitions it counts as that many nodes.
- ``note`` is the rest of the line (free text, no ``#``), kept for reports.
- ``#`` starts a comment, on its own line or after a window; blank lines are ignored.

Windows may overlap (e.g. a partial outage during a maintenance): the calendar keeps them as
written, sorted by start time (ties in file order); how overlapping windows combine is the
engine's business. Windows must have ``end > start``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from hpcsched import _core
from hpcsched._io import read_text
from hpcsched.exceptions import InputError, OptionError, shown

Kind = Literal["scheduled", "unscheduled"]
Back = Literal["idle", "asleep"]

#: default notice of a scheduled maintenance: 48 hours
DEFAULT_ANNOUNCE_LEAD = 172800.0

_KINDS: dict[str, Kind] = {"S": "scheduled", "U": "unscheduled"}
_WHOLE_MACHINE = {"-", "*", "all"}
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class Downtime:
    """One window during which ``nodes`` nodes (``None``: all of them) are unavailable."""

    start: float
    end: float
    kind: Kind
    nodes: int | None = None
    note: str = ""
    #: 1-based line in the calendar file (for error messages); not part of equality
    line: int | None = field(default=None, compare=False)
    #: the state its nodes come back in when nodes have power states: ``idle`` or ``asleep``
    back: Back = "idle"
    #: on a platform with partitions, the partition whose nodes it takes down (None: the
    #: ``nodes`` count, or the whole machine)
    partition: str | None = None
    #: the node indices it takes down, ``(first, end)`` half-open (None: ``nodes`` counts
    #: them, or ``partition`` or the whole machine); ``nodes`` is then their number
    node_range: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start) and math.isfinite(self.end)):
            raise InputError(f"window times must be finite: {self.start}..{self.end}")
        if self.end <= self.start:
            raise InputError(f"window ends ({self.end}) at or before its start ({self.start})")
        if self.kind not in ("scheduled", "unscheduled"):
            raise InputError(f"kind must be 'scheduled' or 'unscheduled', not {shown(self.kind)}")
        if self.nodes is not None and (
            isinstance(self.nodes, bool) or not isinstance(self.nodes, int) or self.nodes <= 0
        ):
            raise InputError(f"nodes must be a positive integer, not {shown(self.nodes)}")
        if self.back not in ("idle", "asleep"):
            raise InputError(f"back must be 'idle' or 'asleep', not {shown(self.back)}")
        if self.node_range is not None:
            first, end = self.node_range
            if not 0 <= first < end or self.nodes != end - first or self.partition is not None:
                raise InputError(
                    f"a node range {first}..{end} must be non-empty, with nodes = its length "
                    "and no partition"
                )

    @property
    def duration(self) -> float:
        return self.end - self.start

    def node_spans(
        self, partition_ranges: Mapping[str, Sequence[tuple[int, int]]], machine: int
    ) -> tuple[tuple[int, int], ...]:
        """The nodes it takes down where windows name their nodes, as ``[first, end)``
        ranges: its node range, its partition's ranges (``partition_ranges`` by name), or the
        whole machine of ``machine`` nodes."""
        if self.node_range is not None:
            return (self.node_range,)
        if self.partition is not None:
            return tuple(partition_ranges.get(self.partition, ()))
        return ((0, machine),)


@dataclass(frozen=True)
class DowntimeCalendar:
    """Downtime windows sorted by start (ties in file order)."""

    windows: tuple[Downtime, ...] = ()
    announce_lead: float = DEFAULT_ANNOUNCE_LEAD
    source: str = "<memory>"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.announce_lead) and self.announce_lead >= 0):
            raise OptionError(
                f"must be a non-negative number of seconds, not {shown(self.announce_lead)}",
                option="announce_lead",
            )
        ordered = tuple(sorted(self.windows, key=lambda w: w.start))  # sorted() is stable
        if ordered != self.windows or type(self.windows) is not tuple:
            object.__setattr__(self, "windows", ordered)

    def __len__(self) -> int:
        return len(self.windows)

    def columns(
        self, partitions: list[str] | None = None, *, shared: bool = False
    ) -> dict[str, np.ndarray]:
        """The windows as the engine's columns: start, end, scheduled (else unscheduled),
        nodes (0: the whole machine), back asleep, and on a platform with ``partitions`` the
        index of the partition each takes down (-1: none) and its node range (first -1:
        none; without partitions, unless jobs share nodes (``shared``), a range is its count
        of nodes). With partitions or shared nodes a bare node count says no nodes (the jobs
        a window kills are those on its nodes): an ``InputError`` naming its line."""
        w = self.windows
        named = bool(partitions) or shared
        where = "with partitions" if partitions else "whose jobs share nodes"
        for x in w if named else ():
            if x.nodes is not None and x.node_range is None and x.partition is None:
                raise InputError(
                    f"a count of nodes ({x.nodes}) on a platform {where}: say which nodes go "
                    "down, partition=NAME or nodes=FIRST-LAST",
                    path=self.source,
                    line=x.line,
                    field="nodes",
                )
        index = {name: k for k, name in enumerate(partitions or [])}
        ranges = [x.node_range if x.node_range and named else (-1, -1) for x in w]
        return {
            "down_range_first": np.array([r[0] for r in ranges], dtype=np.int64),
            "down_range_end": np.array([r[1] for r in ranges], dtype=np.int64),
            "down_partition": np.array(
                [index.get(x.partition, -1) if x.partition else -1 for x in w], dtype=np.int64
            ),
            "down_start": np.array([x.start for x in w], dtype=np.float64),
            "down_end": np.array([x.end for x in w], dtype=np.float64),
            "down_scheduled": np.array([x.kind == "scheduled" for x in w], dtype=bool),
            "down_nodes": np.array([x.nodes or 0 for x in w], dtype=np.int64),
            "down_asleep": np.array([x.back == "asleep" for x in w], dtype=bool),
        }

    def __iter__(self) -> Iterator[Downtime]:
        return iter(self.windows)

    def shifted(self, origin: float) -> DowntimeCalendar:
        """The same calendar with ``origin`` (the workload's ``time_origin``) subtracted."""
        return replace(
            self,
            windows=tuple(
                replace(w, start=w.start - origin, end=w.end - origin) for w in self.windows
            ),
        )

    def validate_against(self, nodes_total: int) -> None:
        """Raise ``InputError`` if a window takes down more nodes than the machine has."""
        for w in self.windows:
            if w.node_range is not None and w.node_range[1] > nodes_total:
                raise InputError(
                    f"window takes down nodes {w.node_range[0]}-{w.node_range[1] - 1}, the "
                    f"machine has nodes 0-{nodes_total - 1}",
                    path=self.source,
                    line=w.line,
                    field="nodes",
                )
            if w.nodes is not None and w.nodes > nodes_total:
                raise InputError(
                    f"window takes down {w.nodes} nodes, the machine has {nodes_total}",
                    path=self.source,
                    line=w.line,
                    field="nodes",
                )


def parse_calendar(
    text: str, path: str = "<input>", announce_lead: float = DEFAULT_ANNOUNCE_LEAD
) -> DowntimeCalendar:
    """Parse the text of a downtime calendar; see the module docstring for the format."""
    windows = []
    for number, raw in enumerate(text.splitlines(), start=1):
        content = raw.split("#", 1)[0].strip()
        if not content:
            continue
        tokens = content.split(None, 4)
        if len(tokens) < 3:
            field_name = ("start", "end", "kind")[len(tokens)]
            raise InputError(
                "a window needs <start> <end> <S|U> [nodes] [note]",
                path=path,
                line=number,
                field=field_name,
            )
        start = _time(tokens[0], path, number, "start")
        end = _time(tokens[1], path, number, "end")
        if end <= start:
            raise InputError(
                f"the window ends ({tokens[1]}) at or before its start ({tokens[0]})",
                path=path,
                line=number,
                field="end",
            )
        kind = _KINDS.get(tokens[2].upper())
        if kind is None:
            raise InputError(
                f"kind must be S (scheduled) or U (unscheduled), not {shown(tokens[2])}",
                path=path,
                line=number,
                field="kind",
            )
        nodes: int | None = None
        note = content.split(None, 3)[3] if len(tokens) > 3 else ""
        if len(tokens) > 3 and (tokens[3].lower() in _WHOLE_MACHINE or _looks_numeric(tokens[3])):
            if tokens[3].lower() not in _WHOLE_MACHINE:
                nodes = _count(tokens[3], path, number)
            note = tokens[4] if len(tokens) > 4 else ""
        back: Back = "idle"
        partition: str | None = None
        node_range: tuple[int, int] | None = None
        while True:  # back=, partition= and nodes=, in any order, before the note
            first, _, rest = note.partition(" ")
            key = first.split("=", 1)[0].lower()
            if key == "back" and "=" in first:
                value = first.split("=", 1)[1].lower()
                if value not in ("idle", "asleep"):
                    raise InputError(
                        f"back= takes idle or asleep, not {shown(value)}",
                        path=path,
                        line=number,
                        field="back",
                    )
                back = value  # type: ignore[assignment]
            elif key == "partition" and "=" in first:
                partition = first.split("=", 1)[1]
                if not partition or nodes is not None or node_range is not None:
                    raise InputError(
                        "partition= takes a partition's name, and no node count beside it (the "
                        "window takes the whole partition down)",
                        path=path,
                        line=number,
                        field="partition",
                    )
            elif key == "nodes" and "=" in first:
                if nodes is not None or partition is not None:
                    raise InputError(
                        "nodes=FIRST-LAST takes the place of a node count or a partition",
                        path=path,
                        line=number,
                        field="nodes",
                    )
                node_range = _node_range(first.split("=", 1)[1], path, number)
                nodes = node_range[1] - node_range[0]
            else:
                break
            note = rest
        windows.append(
            Downtime(
                start,
                end,
                kind,
                nodes,
                note.strip(),
                line=number,
                back=back,
                partition=partition,
                node_range=node_range,
            )
        )
    return DowntimeCalendar(tuple(windows), announce_lead=announce_lead, source=path)


def read_calendar(
    path: str | os.PathLike[str], announce_lead: float = DEFAULT_ANNOUNCE_LEAD
) -> DowntimeCalendar:
    """Read a downtime calendar file, plain or gzip-compressed."""
    name = os.fspath(path)
    return parse_calendar(read_text(name), name, announce_lead=announce_lead)


def _node_range(text: str, path: str, line: int) -> tuple[int, int]:
    """``FIRST-LAST`` (inclusive node indices, or one index) as a half-open range."""
    first, dash, last = text.partition("-")
    low, high = -1, -2
    if _DIGITS.fullmatch(first) and (not dash or _DIGITS.fullmatch(last)):
        # (indices past the engine's machines stop here, and an index of 5,000 digits too)
        low, high = (int(n) if len(n) <= 9 else _core.MAX_NODES for n in (first, last or first))
    if not 0 <= low <= high < _core.MAX_NODES:
        raise InputError(
            f"nodes= takes one range of node indices FIRST-LAST (inclusive, from 0 to "
            f"{_core.MAX_NODES - 1}), not {shown(text)}; write one line per range",
            path=path,
            line=line,
            field="nodes",
        )
    return low, high + 1


def _looks_numeric(token: str) -> bool:
    if not token.isascii():  # (``float`` takes ``٣``)
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def _time(token: str, path: str, line: int, name: str) -> float:
    try:
        value = float(token) if token.isascii() else math.nan
    except ValueError:
        value = math.nan
    if math.isfinite(value) and abs(value) > _core.MAX_TIME:
        raise InputError(
            f"{value:g} s is out of range (times must be within +-{_core.MAX_TIME:g} s)",
            path=path,
            line=line,
            field=name,
        )
    if not math.isfinite(value):
        raise InputError(
            f"{name} must be a number of seconds, not {shown(token)}",
            path=path,
            line=line,
            field=name,
        )
    return value


def _count(token: str, path: str, line: int) -> int:
    value = float(token)
    if not (math.isfinite(value) and value == int(value) and 0 < value <= _core.MAX_NODES):
        raise InputError(
            f"nodes must be a whole number from 1 to {_core.MAX_NODES}, not {shown(token)}",
            path=path,
            line=line,
            field="nodes",
        )
    return int(value)


__all__ = [
    "DEFAULT_ANNOUNCE_LEAD",
    "Downtime",
    "DowntimeCalendar",
    "parse_calendar",
    "read_calendar",
]
