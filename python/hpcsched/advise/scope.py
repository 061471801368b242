"""The managed scope of a cluster with partitions, as the engine's site: its nodes numbered,
its partitions over those numbers, the nodes each running job holds, the nodes down and the
maintenance announced over them (``_core.plan_snapshot(site=...)``; docs/semantics.md,
"The advisor on partitions").

Nodes are numbered in the order the resource manager lists them. A partition's nodes become
ranges of those numbers; a running job holds the nodes it runs on, whatever its partition
(a job of a partition outside the scope still takes nodes the scope shares); jobs sharing a
node (Slurm's ``CR_CPU``) leave it to the earliest started, and one left with no node of its
own shares its nodes (it is left out, as on one pool).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcsched.advise.state import ClusterState, Job, Partition

#: Slurm's partition states as the engine's: jobs queued in a drained partition still run
#: (only new submissions are refused), an inactive one starts nothing, as a down one.
ENGINE_STATES = {"up": "up", "drain": "up", "down": "down", "inactive": "down"}


@dataclass
class SiteScope:
    """The scope's nodes, partitions and running jobs, and the engine's site for them."""

    #: node names, by number
    names: list[str]
    #: the scope's partitions that have nodes, in the resource manager's order
    partitions: list[Partition]
    #: running jobs holding nodes of the scope, and how many of its nodes each holds
    running: list[Job]
    running_nodes: list[int]
    #: running jobs left with no node of their own (they share the nodes of earlier ones)
    shared: list[Job]
    #: nodes down or drained with no job on them
    down: int
    #: what ``plan_snapshot`` takes as ``site`` (pending candidates added by ``native``)
    columns: dict[str, Any] = field(default_factory=dict)

    def candidates(self, job: Job) -> list[int]:
        """The scope's partitions a pending job was submitted to, in its order."""
        number = self._numbers
        return [number[p] for p in job.partitions if p in number]

    @functools.cached_property
    def _numbers(self) -> dict[str, int]:
        """Each partition's number among the scope's, by name."""
        return {p.name: k for k, p in enumerate(self.partitions)}

    def native(self, pending: Sequence[Job]) -> dict[str, Any]:
        """The site for ``plan_snapshot``, with each of ``pending``'s candidates (each task of
        an array job is a job of its own: repeat them as the tasks are)."""
        candidates = [self.candidates(j) for j in pending]
        offsets = np.zeros(len(pending) + 1, dtype=np.uint32)
        np.cumsum([len(c) for c in candidates], out=offsets[1:])
        flat = np.array([p for c in candidates for p in c], dtype=np.uint32)
        return {**self.columns, "pending_offsets": offsets, "pending_candidates": flat}


def site_scope(state: ClusterState, scope: frozenset[str] | None) -> SiteScope:
    """The scope (partitions named, all when None) of ``state``, which lists partitions and
    the nodes of every running job."""
    chosen = [p for p in state.partitions if scope is None or p.name in scope]
    members = {n for p in chosen for n in p.nodes}
    listed = [n.name for n in state.nodes if n.name in members]
    names = listed + sorted(members - set(listed))
    number = {name: k for k, name in enumerate(names)}
    partitions = [p for p in chosen if p.nodes]

    # running jobs on the scope's nodes, the earliest started keeping a node two share
    claimed: set[str] = set()
    running, held, shared = [], [], []
    for job in sorted(
        (j for j in state.jobs if j.running), key=lambda j: (j.start or 0.0, j.job_id)
    ):
        mine = [n for n in dict.fromkeys(job.node_names) if n in number]
        if not mine:
            continue
        own = [n for n in mine if n not in claimed]
        if not own:
            shared.append(job)
            continue
        claimed.update(own)
        running.append(job)
        held.append(sorted(number[n] for n in own))
    unavailable = {n.name for n in state.nodes if n.unavailable}
    down = sorted(number[n] for n in names if n in unavailable and n not in claimed)
    maintenance = [
        (r.start, r.end, first, end)
        for r in state.reservations
        if r.end > state.now
        for first, end in ranges(number[n] for n in r.nodes if n in number)
    ]
    offsets = np.zeros(len(held) + 1, dtype=np.uint32)
    np.cumsum([len(h) for h in held], out=offsets[1:])
    columns = {
        "partitions": [_native_partition(p, number) for p in partitions],
        "running_offsets": offsets,
        "running_nodes": np.array([n for h in held for n in h], dtype=np.uint32),
        "down": ranges(down),
        "maintenance": maintenance,
    }
    return SiteScope(
        names=names,
        partitions=partitions,
        running=running,
        running_nodes=[len(h) for h in held],
        shared=shared,
        down=len(down),
        columns=columns,
    )


def ranges(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted distinct numbers as half-open ranges: ``[0, 1, 2, 5]`` -> ``[(0, 3), (5, 6)]``."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if out and out[-1][1] == n:
            out[-1] = (out[-1][0], n + 1)
        else:
            out.append((n, n + 1))
    return out


def _native_partition(p: Partition, number: dict[str, int]) -> dict[str, Any]:
    return {
        "name": p.name,
        "ranges": [list(r) for r in ranges(number[n] for n in p.nodes)],
        "max_time": p.max_time,
        "max_nodes": p.max_nodes,
        "min_nodes": max(p.min_nodes, 1),
        "tier": p.tier,
        "state": ENGINE_STATES.get(p.state, "down"),
    }
