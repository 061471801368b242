"""Every job of a run on named nodes, and the nodes down or asleep: what a Gantt chart draws
and Batsim's ``jobs.csv`` records.

Where the engine names nodes (jobs sharing nodes; sites of whole nodes, inside the atoms it
counted) their names are the engine's (``jobs.parquet``'s ``alloc_nodes``). One pool of whole
nodes only counts them: ``hpcsched.layout`` (``_core.lay_out``) then names them, each job on
the lowest-numbered nodes free at its start and the nodes down, asleep or switching on the
highest, which keeps every count of the run at every instant (docs/semantics.md, "Named
nodes").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hpcsched import _core
from hpcsched.exceptions import InputError
from hpcsched.node_ranges import parse_ranges

if TYPE_CHECKING:
    from hpcsched.run import Result

#: Node states drawn beside jobs, as the timeline of a power-managed run names them.
STATES = ("down", "sleeping", "switching_on", "switching_off")


@dataclass(frozen=True)
class Placement:
    """A run's jobs and node states on named nodes.

    ``jobs``: one row per attempt that started (``job_index`` in replay order, ``job_id``,
    ``start``, ``end``, ``nodes`` as index ranges ``0-3,7``, ``partition`` or None, ``killed``:
    the attempt was cut short by downtime). ``states``: ``state`` (one of :data:`STATES`),
    ``start``, ``end`` (infinite: held past the run's last event), ``nodes``.
    ``partitions``: (name, node ranges ``[first, end)``) of a site. ``laid_out``: the nodes
    were named by ``hpcsched.layout`` for a run that counted them.
    """

    jobs: pd.DataFrame
    states: pd.DataFrame
    node_count: int
    partitions: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
    laid_out: bool


def placement(result: Result) -> Placement:
    """The jobs of ``result`` on named nodes, and its nodes down or asleep.

    A run read back from a run directory keeps neither its downtime calendar nor its killed
    attempts (``read_run``): its placement has no down windows (but a power-managed run's, from
    its timeline) and only the attempts that completed."""
    info = result.info
    node_count = int(info["inputs"]["nodes"])
    site = (info["inputs"].get("platform") or {}).get("site") or {}
    partitions = tuple(
        (str(p["name"]), tuple((int(a), int(b)) for a, b in p["ranges"]))
        for p in site.get("partitions", ())
    )
    jobs = result.jobs
    started = jobs["start"].notna().to_numpy()
    final = pd.DataFrame(
        {
            "job_index": np.flatnonzero(started),
            "job_id": jobs["job_id"].to_numpy()[started],
            "start": jobs["start"].to_numpy(np.float64)[started],
            "end": jobs["end"].to_numpy(np.float64)[started],
            "partition": _partition_names(jobs, started),
            "killed": False,
        }
    )
    lost = result.lost
    killed = pd.DataFrame(
        {
            "job_index": np.asarray(lost.get("job_index", []), np.int64),
            "start": np.asarray(lost.get("start", []), np.float64),
            "end": np.asarray(lost.get("end", []), np.float64),
        }
    )
    killed["job_id"] = jobs["job_id"].to_numpy()[killed["job_index"].to_numpy(np.int64)]
    killed["partition"] = np.full(len(killed), None, dtype=object)
    killed["killed"] = True
    if "alloc_nodes" in jobs:
        final["nodes"] = jobs["alloc_nodes"].to_numpy(dtype=object)[started]
        if "alloc_nodes" in lost:
            killed["nodes"] = lost["alloc_nodes"].to_numpy(dtype=object)
        else:  # what a killed attempt took on shared nodes is not kept
            killed = killed.iloc[:0].assign(nodes=pd.Series([], dtype=object))
        states = _named_down_windows(result, node_count, partitions)
        laid_out = False
    else:
        final, killed, states = _lay_out(result, node_count, partitions, final, killed)
        laid_out = True
    attempts = pd.concat([final, killed], ignore_index=True) if len(killed) else final
    attempts = attempts.sort_values(["start", "job_index"], kind="stable", ignore_index=True)
    columns = ["job_index", "job_id", "start", "end", "nodes", "partition", "killed"]
    return Placement(attempts[columns], states, node_count, partitions, laid_out)


def _partition_names(jobs: pd.DataFrame, started: np.ndarray) -> Any:
    if "partition" not in jobs:
        return np.full(int(started.sum()), None, dtype=object)
    return jobs["partition"].to_numpy(dtype=object)[started]


def _named_down_windows(
    result: Result,
    node_count: int,
    partitions: tuple[tuple[str, tuple[tuple[int, int], ...]], ...],
) -> pd.DataFrame:
    """The downtime windows of a run whose windows name their nodes: a node range, a
    partition's nodes, or the whole machine."""
    ranges_of = dict(partitions)
    rows = []
    for w in result.calendar:
        spans = w.node_spans(ranges_of, node_count)
        nodes = ",".join(f"{a}-{b - 1}" if b - a > 1 else str(a) for a, b in spans)
        rows.append(("down", w.start, w.end, nodes))
    return pd.DataFrame(rows, columns=["state", "start", "end", "nodes"])


def _count_holds(
    times: np.ndarray, counts: np.ndarray, horizon: float
) -> list[tuple[float, float, int]]:
    """A step function of node counts (``counts[i]`` from ``times[i]`` on) as blocks of nodes
    held over time, last taken first given back: (start, end, count)."""
    open_blocks: list[list[float]] = []  # [start, count]
    out: list[tuple[float, float, int]] = []
    held = 0
    for t, n in zip(times.tolist(), counts.tolist(), strict=True):
        n = int(n)
        while held > n:
            start, count = open_blocks.pop()
            give = min(int(count), held - n)
            out.append((start, t, int(count)))
            if give < count:  # part of the block stays held: it goes on as a new block
                open_blocks.append([t, count - give])
            held -= give
        if n > held:
            open_blocks.append([t, n - held])
            held = n
    out.extend((start, horizon, int(count)) for start, count in open_blocks)
    return out


def _lay_out(
    result: Result,
    node_count: int,
    partitions: tuple[tuple[str, tuple[tuple[int, int], ...]], ...],
    final: pd.DataFrame,
    killed: pd.DataFrame,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Jobs and states of a run that counts nodes, named by the layout: in one pool, or in
    each partition where they are disjoint and the jobs name theirs (the recorded schedule on
    a site), windows then as they name their nodes."""
    pools = _partition_pools(partitions, final, killed)
    if pools is None:
        state_holds = _state_holds(result, node_count)
        members = [np.arange(node_count, dtype=np.int64)]
        pool_of = np.zeros(len(final) + len(killed), dtype=np.uint32)
    else:
        state_holds = []
        members, pool_of = pools
    sizes = result.jobs["nodes"].to_numpy(np.int64)
    index = np.concatenate([final["job_index"].to_numpy(), killed["job_index"].to_numpy()])
    n_states = len(state_holds)
    start = np.concatenate(
        [[h[1] for h in state_holds], final["start"].to_numpy(), killed["start"].to_numpy()]
    )
    end = np.concatenate(
        [[h[2] for h in state_holds], final["end"].to_numpy(), killed["end"].to_numpy()]
    )
    count = np.concatenate([[h[3] for h in state_holds], sizes[index.astype(np.int64)]])
    from_top = np.zeros(len(start), dtype=bool)
    from_top[:n_states] = True
    try:
        local = _core.lay_out(
            [len(m) for m in members],
            start.astype(np.float64),
            end.astype(np.float64),
            np.concatenate([np.zeros(n_states, np.uint32), pool_of]).astype(np.uint32),
            count.astype(np.uint32),
            from_top,
        )
    except InputError as exc:
        where = "its partitions" if len(members) > 1 else "its machine"
        raise InputError(
            f"the run holds more nodes than {where} at some instant (a recorded schedule's "
            f"conflicts), so its jobs have no nodes to draw on ({exc.reason})",
            path=str(result.info["inputs"].get("trace")),
        ) from None
    pools_of = np.concatenate([np.zeros(n_states, np.int64), pool_of.astype(np.int64)])
    named = [
        local_text if len(members) == 1 else _global(local_text, members[pool])
        for local_text, pool in zip(local, pools_of.tolist(), strict=True)
    ]
    final = final.assign(nodes=named[n_states : n_states + len(final)])
    killed = killed.assign(nodes=named[n_states + len(final) :])
    if pools is None:
        states = pd.DataFrame(
            {
                "state": [h[0] for h in state_holds],
                "start": [h[1] for h in state_holds],
                "end": [h[2] for h in state_holds],
                "nodes": named[:n_states],
            }
        )
    else:
        states = _named_down_windows(result, node_count, partitions)
    return final, killed, states


def _state_holds(result: Result, node_count: int) -> list[tuple[str, float, float, int]]:
    """What holds nodes in one pool but jobs, as blocks: a power-managed run's states from its
    timeline, else the calendar's windows."""
    horizon = float("inf")  # a state still held at the run's last change stays so
    timeline = result.timeline
    if len(timeline):
        times = timeline["time"].to_numpy(np.float64)
        return [
            (state, *hold)
            for state in STATES
            for hold in _count_holds(times, timeline[state].to_numpy(), horizon)
        ]
    times, counts = _down_steps(result, node_count)
    return [("down", *hold) for hold in _count_holds(times, counts, horizon)]


def _partition_pools(
    partitions: tuple[tuple[str, tuple[tuple[int, int], ...]], ...],
    final: pd.DataFrame,
    killed: pd.DataFrame,
) -> tuple[list[np.ndarray], np.ndarray] | None:
    """Each disjoint partition's nodes and each attempt's partition, when every attempt names
    one (``None``: lay out one pool)."""
    if not partitions or len(killed) or final["partition"].isna().any():
        return None
    members = [np.concatenate([np.arange(a, b) for a, b in ranges]) for _, ranges in partitions]
    every = np.concatenate(members)
    if len(np.unique(every)) != len(every):
        return None  # overlapping partitions: which nodes a job took is not recorded
    index = {name: k for k, (name, _) in enumerate(partitions)}
    names = final["partition"].tolist()
    if any(name not in index for name in names):
        return None
    return members, np.array([index[name] for name in names], dtype=np.uint32)


def _global(local: str, nodes: np.ndarray) -> str:
    """Index ranges inside a pool as the machine's node indices, as ranges."""
    from itertools import groupby

    picked = sorted(int(nodes[i]) for a, b in parse_ranges(local) for i in range(a, b + 1))
    runs = []
    for _, group in groupby(enumerate(picked), key=lambda pair: pair[1] - pair[0]):
        run = [n for _, n in group]
        runs.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(runs)


def _down_steps(result: Result, node_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes down over time in one pool from its calendar: each window's count (the whole
    machine when it gives none) while it lasts, at most the machine."""
    edges: dict[float, int] = {}
    for w in result.calendar:
        n = w.nodes or node_count
        edges[w.start] = edges.get(w.start, 0) + n
        edges[w.end] = edges.get(w.end, 0) - n
    times = np.array(sorted(edges), dtype=np.float64)
    counts = np.cumsum([edges[t] for t in times.tolist()]) if len(times) else np.array([])
    return times, np.minimum(counts, node_count)
