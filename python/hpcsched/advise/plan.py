"""From a cluster's state to a plan: the policy's order of the pending jobs, as priorities.

The managed scope (partitions, or the whole cluster; a job is in it when all its partitions
are) becomes an engine snapshot: its nodes, the nodes down or drained, its running jobs
(started at their start time, ending at their limit), its pending jobs in submit order and the
reservations announced on its nodes. When the resource manager lists its partitions and the
nodes of its running jobs, the snapshot is the scope's site (``advise.scope``): each partition
on its own nodes, with its tier and limits, each job in the partitions it was submitted to;
otherwise one pool of the scope's nodes. The engine plans it under the chosen policy (MARS
searches at `now`); jobs are ranked by planned start (on partitions, within their tier: the
tier decides the order between tiers) and the ranks become priorities above every job the
advisor does not manage. With Slurm's settings (``advise.slurm_order``) the plan also gives Slurm's
own order of the managed jobs and their starts under it, beside the policy's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hpcsched import _core
from hpcsched.advise.scope import SiteScope, site_scope
from hpcsched.advise.slurm_order import SlurmOrder, compare, per_job
from hpcsched.advise.state import ClusterState, Job
from hpcsched.exceptions import OptionError
from hpcsched.policies import PolicySpec

#: Slurm stores priorities as 32-bit unsigned values; 0 is a hold and the top value is
#: reserved, so written priorities stay in [1, MAX_PRIORITY].
MAX_PRIORITY = 2**32 - 2
#: The run-time estimate of a job without a time limit (s): a year.
DEFAULT_UNLIMITED = 365 * 86400.0
#: Down nodes return at the engine's end of time (``UNTIL_FURTHER_NOTICE`` in
#: crates/core/src/advise.rs, at least 1e11 s): a job planned then waits for them.
UNTIL_FURTHER_NOTICE = 1e11


@dataclass(frozen=True)
class Change:
    """One managed job: its rank in the plan, its priority now and the one planned."""

    job: Job
    rank: int
    old: int
    new: int
    planned_start: float
    why: str
    #: on partitions: where the plan starts it (None: nowhere) and its tier
    partition: str | None = None
    tier: int | None = None
    #: beside Slurm's order: the job's place in it among the managed jobs (0 first; None:
    #: not compared) and its planned start when the engine follows it (inf: never)
    slurm_rank: int | None = None
    slurm_start: float | None = None


@dataclass
class Plan:
    """What one advise tick decides."""

    now: float
    scope: str
    policy: str
    #: the decision behind the order: heuristic, window, drain, iterations, outcomes, seconds
    decision: dict[str, Any]
    #: managed pending jobs in planned order
    changes: list[Change]
    #: pending jobs in scope left alone, with why
    skipped: list[tuple[Job, str]]
    #: the state in numbers: nodes, down, running, pending, reservations
    summary: dict[str, Any]
    #: jobs a drain asks to hold this tick (with --drain-holds only)
    holds: list[Job] = field(default_factory=list)
    #: seconds spent planning
    seconds: float = 0.0
    #: Slurm's order beside the plan: the slurm.conf, how many jobs the plan moves ahead of
    #: it or behind, the rank correlation, mean planned waits, notes (None: not compared)
    slurm: dict[str, Any] | None = None

    @property
    def writes(self) -> list[Change]:
        """The changes whose priority differs from the current one."""
        return [c for c in self.changes if c.new != c.old]


def scope_of(partition: str | None) -> frozenset[str] | None:
    """The partitions a ``--partition`` value names (``debug`` or ``debug,batch``); None for
    the whole cluster."""
    if partition is None:
        return None
    names = frozenset(p.strip() for p in partition.split(",") if p.strip())
    if not names:
        raise OptionError("names no partition", option="--partition")
    return names


def in_scope(job: Job, partition: str | None) -> bool:
    """The job may run ONLY in the scope's partitions: a job submitted to ``batch,debug`` is
    outside the scope ``debug`` (raising it there would raise it above jobs only in batch)."""
    scope = scope_of(partition)
    return scope is None or (bool(job.partitions) and set(job.partitions) <= scope)


def partly_in_scope(job: Job, partition: str | None) -> tuple[str, ...]:
    """The partitions outside the scope of a job that may also run in it (else empty)."""
    scope = scope_of(partition)
    if scope is None or not scope & set(job.partitions):
        return ()
    return tuple(p for p in job.partitions if p not in scope)


def make_plan(
    state: ClusterState,
    policy: PolicySpec,
    *,
    partition: str | None = None,
    unlimited: float = DEFAULT_UNLIMITED,
    drain_holds: bool = False,
    slurm: SlurmOrder | None = None,
) -> Plan:
    """Plans the pending jobs of ``partition`` (all partitions when None) under ``policy``;
    with ``slurm``, Slurm's own order beside the plan."""
    started = time.perf_counter()
    if policy.is_power or policy.engine_name == "slurm":
        raise OptionError(
            f"{policy.name} "
            + (
                "manages node power"
                if policy.is_power
                else "is Slurm's own scheduler (--slurm-order shows its order beside the plan)"
            )
            + "; the advisor orders queues (heuristics, snf, mars, random)",
            option="--policy",
        )
    scope = scope_of(partition)
    if on_partitions(state):
        plan = _site_plan(state, policy, partition, unlimited, drain_holds, slurm)
        plan.seconds = time.perf_counter() - started
        return plan
    nodes = [n for n in state.nodes if scope is None or scope & set(n.partitions)]
    empty = sorted(scope - {p for n in nodes for p in n.partitions}) if scope else []
    if not nodes or empty:
        known = sorted({p for n in state.nodes for p in n.partitions})
        missing = empty[0] if empty else partition
        raise OptionError(
            f"partition {missing!r} has no nodes (partitions: {', '.join(known) or 'none'})",
            option="--partition",
        )
    names = {n.name for n in nodes}
    machine = len(nodes)
    down = sum(1 for n in nodes if n.unavailable and not n.allocated)
    running, shared = _whole_nodes(
        [j for j in state.jobs if j.running and in_scope(j, partition)], machine - down
    )
    busy = sum(j.nodes for j in running)
    pending, skipped = _pending(
        state,
        partition,
        lambda job: (
            f"needs {job.nodes} nodes, the scope has {machine}" if job.nodes > machine else None
        ),
    )
    reservations = [
        (r, sum(1 for n in r.nodes if n in names))
        for r in state.reservations
        if r.end > state.now and any(n in names for n in r.nodes)
    ]
    summary = {
        "nodes": machine,
        "down": down,
        "busy": min(busy, machine),
        "running": len(running) + len(shared),
        "sharing": len(shared),
        "pending": len(pending),
        "skipped": len(skipped),
        "reservations": [r.name for r, _ in reservations],
    }
    if state.partitions:  # partitions known, but a running job's nodes are not
        summary["one_pool"] = "a running job lists no nodes"
    label = policy.label
    if not pending:
        return Plan(state.now, partition or "all", label, {}, [], skipped, summary)

    maintenance = (
        np.array([r.start for r, _ in reservations], dtype=np.float64),
        np.array([r.end for r, _ in reservations], dtype=np.float64),
        np.array([0 if k >= machine else k for _, k in reservations], dtype=np.int64),
    )
    result, owner = _engine_plan(
        state, policy, unlimited, pending, (running, [j.nodes for j in running]),
        (machine, down), maintenance, slurm=slurm,
    )  # fmt: skip
    # A job (or array) starts when its first task does.
    first = np.full(len(pending), np.inf)
    np.minimum.at(first, owner, np.nan_to_num(result["planned_start"], nan=np.inf))
    order = sorted(range(len(pending)), key=lambda i: (first[i], i))
    top = _top_priority(state, {j.job_id for j in pending}, len(pending))
    changes = []
    for rank, i in enumerate(order):
        job = pending[i]
        new = max(1, top - rank)
        changes.append(Change(job, rank, job.priority, new, first[i], _why(first[i], state.now)))
    decision = _decision(result)
    plan = Plan(state.now, partition or "all", label, decision, changes, skipped, summary)
    if slurm is not None:
        _beside_slurm(plan, slurm, result, pending, owner)
    if drain_holds and decision["drain"]:
        plan.holds = _drain_holds(plan, machine - down - busy)
    plan.seconds = time.perf_counter() - started
    return plan


def _pending(
    state: ClusterState, partition: str | None, refuse: Callable[[Job], str | None]
) -> tuple[list[Job], list[tuple[Job, str]]]:
    """The scope's pending jobs to plan, in submit order (ties by id), and those left alone
    with why: submitted outside the scope too, held, or what ``refuse`` says of it."""
    pending, skipped = [], []
    for job in sorted((j for j in state.jobs if j.pending), key=lambda j: (j.submit, j.job_id)):
        outside = partly_in_scope(job, partition)
        if outside:
            skipped.append((job, f"also submitted to {','.join(outside)}, outside the scope"))
        elif not in_scope(job, partition):
            continue
        elif job.held:
            skipped.append((job, "held"))
        elif (why := refuse(job)) is not None:
            skipped.append((job, why))
        else:
            pending.append(job)
    return pending, skipped


def _engine_plan(
    state: ClusterState,
    policy: PolicySpec,
    unlimited: float,
    pending: list[Job],
    running: tuple[Sequence[Job], Sequence[int]],
    machine: tuple[int, int],
    maintenance: tuple[np.ndarray, np.ndarray, np.ndarray],
    site: SiteScope | None = None,
    slurm: SlurmOrder | None = None,
) -> tuple[dict[str, Any], list[int]]:
    """The engine's plan (``_core.plan_snapshot``) of ``pending``, each task of an array a job
    of its own, with ``running`` jobs (and the nodes each holds) on ``machine`` (nodes, nodes
    down), with Slurm's order beside it when ``slurm`` is given; returns the result and the
    pending job of each task."""
    owner = [i for i, job in enumerate(pending) for _ in range(max(job.tasks, 1))]
    tasks = [pending[i] for i in owner]
    jobs, counts = running

    def limit(job: Job) -> float:
        return unlimited if job.time_limit is None else float(job.time_limit)

    native = None
    if slurm is not None:
        names = None if site is None else [p.name for p in site.partitions]
        native, notes = slurm.native(tasks, jobs, names)

    result = _core.plan_snapshot(
        state.now,
        machine[0],
        machine[1],
        np.array([j.job_id for j in tasks], dtype=np.int64),
        np.array([min(j.submit, state.now) for j in tasks], dtype=np.float64),
        np.array([j.nodes for j in tasks], dtype=np.int64),
        np.array([limit(j) for j in tasks], dtype=np.float64),
        np.array([j.job_id for j in jobs], dtype=np.int64),
        np.array([min(j.start or state.now, state.now) for j in jobs], dtype=np.float64),
        np.array(counts, dtype=np.int64),
        np.array([limit(j) for j in jobs], dtype=np.float64),
        *maintenance,
        policy.engine_name,
        policy.window,
        str(policy.backfill),  # resolved by the spec
        policy.search.to_native() if policy.search else None,
        site=None if site is None else site.native(tasks),
        slurm=native,
    )
    if slurm is not None:
        result["slurm_notes"] = notes
    return result, owner


def _decision(result: dict[str, Any]) -> dict[str, Any]:
    """The decision behind a plan, as the engine reports it."""
    keys = ("heuristic", "window", "decided_at", "drain", "iterations", "outcomes", "seconds")
    return {k: result[k] for k in keys}


def on_partitions(state: ClusterState) -> bool:
    """Whether the advisor plans ``state`` on its partitions: the resource manager listed them,
    and the nodes of every running job."""
    return bool(state.partitions) and all(j.node_names for j in state.jobs if j.running)


#: Why no partition accepts a job, as the plan says it (``{p}``: its first partition).
REFUSALS = {
    "larger_than_partition": "larger than partition {p}",
    "over_max_nodes": "over partition {p}'s MaxNodes",
    "under_min_nodes": "under partition {p}'s MinNodes",
    "over_max_time": "over partition {p}'s MaxTime",
    "drained": "partition {p} is drained",
}


def _site_plan(
    state: ClusterState,
    policy: PolicySpec,
    partition: str | None,
    unlimited: float,
    drain_holds: bool,
    slurm: SlurmOrder | None = None,
) -> Plan:
    """The plan on the scope's partitions (``advise.scope``)."""
    scope = scope_of(partition)
    site = site_scope(state, scope)
    with_nodes = {p.name for p in site.partitions}
    missing = sorted(scope - with_nodes) if scope else []
    if not site.partitions or missing:
        known = sorted(p.name for p in state.partitions)
        raise OptionError(
            f"partition {(missing[0] if missing else partition)!r} has no nodes "
            f"(partitions: {', '.join(known) or 'none'})",
            option="--partition",
        )
    pending, skipped = _pending(
        state,
        partition,
        lambda job: (
            None if site.candidates(job) else f"partition {','.join(job.partitions)} has no nodes"
        ),
    )
    summary = _site_summary(state, site, pending, skipped)
    label = policy.label
    if not pending:
        return Plan(state.now, partition or "all", label, {}, [], skipped, summary)
    none = (
        np.array([], dtype=np.float64),
        np.array([], dtype=np.float64),
        np.array([], dtype=np.int64),
    )
    # (nodes down and reservations are named in the site)
    result, owner = _engine_plan(
        state, policy, unlimited, pending, (site.running, site.running_nodes),
        (len(site.names), 0), none, site, slurm,
    )  # fmt: skip
    starts = np.nan_to_num(result["planned_start"], nan=np.inf)
    # A job (or array) starts when its first task does, where that task does.
    first_task: dict[int, int] = {}
    for t, i in enumerate(owner):
        if i not in first_task or starts[t] < starts[first_task[i]]:
            first_task[i] = t
    managed = []
    for i, job in enumerate(pending):
        t = first_task[i]
        refusal = result["rejection"][t]
        if refusal is not None:
            first = site.partitions[site.candidates(job)[0]].name
            skipped.append((job, REFUSALS.get(refusal, refusal).format(p=first)))
        else:
            managed.append(
                (job, float(starts[t]), int(result["partition"][t]), int(result["tier"][t]))
            )
    summary["pending"] = len(managed)
    summary["skipped"] = len(skipped)
    summary["left_alone"] = left_alone_counts(skipped)
    changes = _tiered_changes(state, site, managed)
    decision = _decision(result)
    plan = Plan(state.now, partition or "all", label, decision, changes, skipped, summary)
    if slurm is not None:
        _beside_slurm(plan, slurm, result, pending, owner)
    if drain_holds and decision["drain"]:
        busy = sum(site.running_nodes)
        plan.holds = _drain_holds(plan, len(site.names) - site.down - busy)
    return plan


def _beside_slurm(
    plan: Plan, slurm: SlurmOrder, result: dict[str, Any], pending: list[Job], owner: list[int]
) -> None:
    """Slurm's order of the managed jobs beside the plan's: each change's place in it and its
    start under it, and the summary."""
    ranks, starts = per_job(result, owner, len(pending))
    of = {job.job_id: (ranks[i], starts[i]) for i, job in enumerate(pending)}
    place, summary = compare(
        [c.planned_start for c in plan.changes],
        [of[c.job.job_id][0] for c in plan.changes],
        [of[c.job.job_id][1] for c in plan.changes],
        plan.now,
        UNTIL_FURTHER_NOTICE,
    )
    plan.changes = [
        replace(c, slurm_rank=p, slurm_start=of[c.job.job_id][1])
        for c, p in zip(plan.changes, place, strict=True)
    ]
    plan.slurm = {"conf": slurm.source, **summary, "notes": result["slurm_notes"]}


def _tiered_changes(
    state: ClusterState, site: SiteScope, managed: list[tuple[Job, float, int, int]]
) -> list[Change]:
    """Priorities by planned start within each tier (a higher tier goes first whatever the
    priorities): the ranks of a tier's jobs, from the top priority down."""
    order = sorted(range(len(managed)), key=lambda k: (managed[k][1], k))
    ranks: dict[int, int] = {}
    counts: dict[int, int] = {}
    for k in order:
        tier = managed[k][3]
        ranks[k] = counts.get(tier, 0)
        counts[tier] = ranks[k] + 1
    ids = {job.job_id for job, *_ in managed}
    top = _top_priority(state, ids, max(counts.values(), default=0))
    changes = []
    for k in order:
        job, planned, p, tier = managed[k]
        where = site.partitions[p].name if p >= 0 else None
        new = max(1, top - ranks[k])
        why = _why(planned, state.now)
        changes.append(Change(job, ranks[k], job.priority, new, planned, why, where, tier))
    return changes


def _site_summary(
    state: ClusterState, site: SiteScope, pending: list[Job], skipped: list[tuple[Job, str]]
) -> dict[str, Any]:
    names = set(site.names)
    return {
        "nodes": len(site.names),
        "down": site.down,
        "busy": sum(site.running_nodes),
        "running": len(site.running) + len(site.shared),
        "sharing": len(site.shared),
        "pending": len(pending),
        "skipped": len(skipped),
        "reservations": [
            r.name for r in state.reservations if r.end > state.now and names & set(r.nodes)
        ],
        "partitions": [
            {"name": p.name, "tier": p.tier, "nodes": len(p.nodes), "state": p.state}
            for p in site.partitions
        ],
        "left_alone": left_alone_counts(skipped),
    }


def left_alone_counts(skipped: list[tuple[Job, str]]) -> dict[str, int]:
    """How many jobs were left alone, by the kind of reason (the tick line's)."""
    counts: dict[str, int] = {}
    for _, why in skipped:
        kind = (
            "held"
            if why == "held"
            else "outside the scope"
            if "outside the scope" in why
            else "over partition limits"
            if why.startswith(("over ", "under ", "larger "))
            else "partition unusable"
        )
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _whole_nodes(running: list[Job], available: int) -> tuple[list[Job], list[Job]]:
    """The engine allocates whole nodes, Slurm may share them (CR_CPU): when running jobs
    claim more nodes than are up, the earliest started keep theirs and the rest are taken to
    share those nodes (left out of the model)."""
    kept, shared, used = [], [], 0
    for job in sorted(running, key=lambda j: (j.start or 0.0, j.job_id)):
        if used + job.nodes <= available:
            kept.append(job)
            used += job.nodes
        else:
            shared.append(job)
    return kept, shared


def _top_priority(state: ClusterState, managed: set[int], count: int) -> int:
    """The priority of the first managed job. Every managed priority must sit above the
    pending jobs the advisor does not manage (U), and stay put from tick to tick: the top is
    max(U + count, the highest managed priority now), so the first tick starts from Slurm's own
    values and later ticks keep the advisor's."""
    others = max(
        (j.priority for j in state.jobs if j.pending and j.job_id not in managed), default=0
    )
    current = max((j.priority for j in state.jobs if j.pending and j.job_id in managed), default=0)
    return min(max(others + count, current), MAX_PRIORITY)


def _why(planned: float, now: float) -> str:
    if not math.isfinite(planned):
        return "cannot start here"
    wait = planned - now
    if wait <= 0:
        return "starts now"
    if planned >= UNTIL_FURTHER_NOTICE:
        return "nodes down"
    return f"in {wait / 3600:.1f} h" if wait >= 3600 else f"in {wait / 60:.0f} min"


def _drain_holds(plan: Plan, free: int) -> list[Job]:
    """On a drain: the managed jobs Slurm could start now (they fit in the free nodes) but the
    plan starts later than the job drained for."""
    if not plan.changes:
        return []
    head = plan.changes[0]
    return [
        c.job
        for c in plan.changes[1:]
        if c.planned_start > head.planned_start and c.job.nodes <= free
    ]
