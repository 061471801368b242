"""Energy of each partition's nodes (issue 42): what an operator asks first of a site with
power models, "where does the energy go, partition by partition, and how much of it is idle
nodes?".

From 0 to the run's energy horizon, each node is computing while a job holds it (any part of
it where jobs share nodes), down while a downtime window has it, and idle the rest of the
time; it draws its group's power in each. A partition's energy is its nodes' (a node two
partitions share counts in both). The nodes each attempt held are the engine's (`alloc_nodes`,
on a site of whole nodes named inside the atoms it counted; `Result.lost` for the attempts
downtime killed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hpcsched.node_ranges import parse_ranges

if TYPE_CHECKING:
    from hpcsched.site.platform import Platform
    from hpcsched.workload import DowntimeCalendar

#: J in a MWh
JOULES_PER_MWH = 3.6e9


def partition_energy(
    table: pd.DataFrame,
    lost: pd.DataFrame,
    calendar: DowntimeCalendar,
    platform: Platform,
    horizon: float,
) -> dict[str, dict[str, float]]:
    """Per partition of ``platform``: ``computing_mwh``, ``idle_mwh`` (= ``wasted_mwh``: nodes
    up and holding no job) and ``total_mwh`` of its nodes over ``[0, horizon]``; empty when
    its groups have no power model or the jobs name no nodes."""
    site = platform.site
    groups = platform.groups
    if (
        site is None
        or not groups
        or any(g.power is None for g in groups)
        or "alloc_nodes" not in table
    ):
        return {}
    computing_w = np.concatenate([np.full(g.nodes, g.power.computing) for g in groups if g.power])
    idle_w = np.concatenate([np.full(g.nodes, g.power.idle) for g in groups if g.power])
    n = len(computing_w)
    busy = _held_seconds(_attempts(table, lost), n, horizon)
    down = _held_seconds(_windows(calendar, site, n), n, horizon)
    idle = np.clip(horizon - busy - down, 0.0, None)
    out: dict[str, dict[str, float]] = {}
    for partition in site.partitions:
        nodes = np.concatenate([np.arange(a, b) for a, b in partition.ranges])
        computing = float((busy[nodes] * computing_w[nodes]).sum()) / JOULES_PER_MWH
        wasted = float((idle[nodes] * idle_w[nodes]).sum()) / JOULES_PER_MWH
        out[partition.name] = {
            "computing_mwh": computing,
            "idle_mwh": wasted,
            "wasted_mwh": wasted,
            "total_mwh": computing + wasted,
        }
    return out


def _attempts(table: pd.DataFrame, lost: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """(node, start, end) of every node each attempt held."""
    frames: list[tuple[Any, Any, Any]] = []
    ran = table["start"].notna().to_numpy()
    frames.append(
        (
            table["alloc_nodes"].to_numpy(dtype=object)[ran],
            table["start"].to_numpy(np.float64)[ran],
            table["end"].to_numpy(np.float64)[ran],
        )
    )
    if len(lost) and "alloc_nodes" in lost:
        frames.append(
            (
                lost["alloc_nodes"].to_numpy(dtype=object),
                lost["start"].to_numpy(np.float64),
                lost["end"].to_numpy(np.float64),
            )
        )
    node, start, end = [], [], []
    for texts, starts, ends in frames:
        for text, s, e in zip(texts, starts, ends, strict=True):
            for first, last in parse_ranges(str(text)):
                node.append(np.arange(first, last + 1))
                start.append(np.full(last + 1 - first, s))
                end.append(np.full(last + 1 - first, e))
    return _joined(node, start, end)


def _windows(calendar: DowntimeCalendar, site: Any, n: int) -> tuple[np.ndarray, ...]:
    """(node, start, end) of every node a downtime window takes down (its node range, its
    partition's nodes, or every node)."""
    ranges = {p.name: p.ranges for p in site.partitions}
    node, start, end = [], [], []
    for w in calendar:
        for a, b in w.node_spans(ranges, n):
            node.append(np.arange(a, b))
            start.append(np.full(b - a, w.start))
            end.append(np.full(b - a, w.end))
    return _joined(node, start, end)


def _joined(node: list[Any], start: list[Any], end: list[Any]) -> tuple[np.ndarray, ...]:
    if not node:
        return np.empty(0, np.int64), np.empty(0), np.empty(0)
    return np.concatenate(node), np.concatenate(start), np.concatenate(end)


def _held_seconds(intervals: tuple[np.ndarray, ...], n: int, horizon: float) -> np.ndarray:
    """Per node, how long the union of its intervals covers ``[0, horizon]``."""
    node, start, end = intervals
    out = np.zeros(n)
    if not len(node):
        return out
    start, end = np.clip(start, 0.0, horizon), np.clip(end, 0.0, horizon)
    order = np.lexsort((start, node))
    node, start, end = node[order], start[order], end[order]
    frame = pd.DataFrame({"node": node, "end": end})
    reach = frame.groupby("node")["end"].cummax().to_numpy()
    # what each interval adds: past the furthest end of the earlier ones of its node
    before = np.empty_like(reach)
    before[1:] = reach[:-1]
    first = np.r_[True, node[1:] != node[:-1]]
    before[first] = -np.inf
    added = np.clip(end - np.maximum(start, before), 0.0, None)
    np.add.at(out, node, added)
    return out
