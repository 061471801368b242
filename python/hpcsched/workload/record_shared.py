"""The recorded schedule against a machine whose jobs share nodes (docs/semantics.md, "The
recorded schedule"): where the record names each job's nodes (sacct's ``NodeList``, read
against the site's node names), node by node and resource by resource; otherwise partition by
partition, by CPUs.

Only what the record makes certain counts as a conflict. sacct keeps a job's CPUs and memory
in all, not per node, so on each node a job is charged the least it can have held there: a
one-node job all it asked; a job over several nodes what its other nodes could not have held,
and at least one CPU; its memory per CPU on those CPUs, its memory per node, its generic
resources per node (by name: ``gpu:a100`` counts as ``gpu``); an exclusive job the node to
itself. A node where those least amounts exceed what it has, or where an exclusive job met
another, is a conflict of the jobs starting then; so is a partition whose jobs ask more CPUs
than it has.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from hpcsched.site.slurm.text import hostlist_names

#: Memory kinds of the engine's requests (run/shared.py).
_PER_NODE, _PER_CPU, _WHOLE = 0, 1, 2
#: What an exclusive job weighs on a node's holder count (any other holder makes it over).
_ALONE = 1 << 40
#: A few job ids of each resource's conflicts are kept.
EXAMPLES = 5


def shared_conflicts(
    jobs: pd.DataFrame,
    start: np.ndarray,
    end: np.ndarray,
    shared: dict[str, Any],
    memory_counts: bool,
    node_names: list[str] | None,
    partition: np.ndarray | None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Per job, whether it starts into a conflict, and what was checked: ``checked`` (``per
    node``, ``per partition`` or both), the jobs in conflict by resource (``cpus``,
    ``memory``, ``gres``, ``exclusive``), the peak of nodes holding a job (where known), the
    seconds with any node or partition above what it has and the node-seconds above.

    ``shared``: the engine's request and node columns (:func:`hpcsched.run.shared.native_shared`);
    ``memory_counts``: memory is a resource (CR_*_Memory); ``node_names``: the site's nodes in
    order (None: the record's nodes cannot be read); ``partition``: each job's recorded
    partition (None: one pool)."""
    n = len(jobs)
    started = np.isfinite(start)
    nodes_of = _recorded_nodes(jobs, node_names, started)
    rows = _node_rows(nodes_of, shared, memory_counts)
    flags: dict[str, np.ndarray] = {}
    over_spans: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    node_seconds = 0.0
    for resource, (job, key, amount, capacity) in rows.items():
        over, spans = _sweep(job, key, amount, capacity, start, end)
        flags[resource] = _flag(over, n)
        over_spans.append(spans)
        node_seconds += float((spans[1] - spans[0]).sum())
    # jobs whose nodes are not known: their partition's CPUs (every job counts there)
    unknown = started & np.array([nodes is None for nodes in nodes_of])
    checked = []
    if any(nodes is not None for nodes in nodes_of):
        checked.append("per node")
    if unknown.any():
        checked.append("per partition")
        job, key, amount, capacity = _partition_rows(shared, partition, started)
        over, spans = _sweep(job, key, amount, capacity, start, end)
        flags["cpus"] = flags.get("cpus", np.zeros(n, bool)) | _flag(over, n)
        over_spans.append(spans)
    total = np.zeros(n, bool)
    for flag in flags.values():
        total |= flag
    job_id = jobs["job_id"].to_numpy()
    by_resource = {
        name: {
            "jobs": int(flag.sum()),
            "examples": [int(i) for i in job_id[flag][:EXAMPLES]],
        }
        for name, flag in flags.items()
    }
    return total, {
        "checked": " and ".join(checked) or "nothing started",
        "by_resource": by_resource,
        "peak_busy_nodes": _peak_nodes(nodes_of, start, end),
        "seconds": _union_length(over_spans),
        "node_seconds": node_seconds,
    }


def _recorded_nodes(
    jobs: pd.DataFrame, node_names: list[str] | None, started: np.ndarray
) -> list[np.ndarray | None]:
    """Each job's node indices as the record names them (None: not named, or a name the site
    does not have)."""
    n = len(jobs)
    if node_names is None or "node_list" not in jobs:
        return [None] * n
    index = {name: k for k, name in enumerate(node_names)}
    lists = jobs["node_list"].fillna("").astype(str).to_numpy()
    cache: dict[str, np.ndarray | None] = {}
    out: list[np.ndarray | None] = []
    for text, ran in zip(lists, started, strict=True):
        if not ran or not text or text in ("None", "None assigned"):
            out.append(None)
            continue
        if text not in cache:
            try:
                names = hostlist_names(text)
            except ValueError:
                names = []
            picked = [index.get(name) for name in names]
            cache[text] = (
                np.unique(np.array(picked, np.int64))
                if picked and all(p is not None for p in picked)
                else None
            )
        out.append(cache[text])
    return out


def _node_rows(
    nodes_of: list[np.ndarray | None], shared: dict[str, Any], memory_counts: bool
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per resource, the (job, node, least amount held) of every job on every node the record
    names, and each node's capacity."""
    shape = shared["node_shape"].astype(np.int64)
    cpus_cap = shared["shape_cpus"].astype(np.int64)[shape]
    memory_cap = shared["shape_memory"].astype(np.int64)[shape]
    kinds = list(shared["gres_names"])
    per_shape = shared["shape_gres"].astype(np.int64).reshape(-1, max(len(kinds), 1))
    bases = sorted({k.split(":")[0] for k in kinds})
    gres_cap = np.zeros((len(shape), len(bases)), np.int64)
    for k, kind in enumerate(kinds):
        gres_cap[:, bases.index(kind.split(":")[0])] += per_shape[shape, k]
    asked = shared["tasks"].astype(np.int64) * shared["cpus_per_task"].astype(np.int64)
    names = list(shared["gres_request_names"])
    offsets = shared["gres_offsets"]
    rows: dict[str, list[tuple[int, int, int]]] = {"cpus": [], "memory": [], "exclusive": []}
    gres_rows: list[tuple[int, int, int]] = []
    for j, nodes in enumerate(nodes_of):
        if nodes is None:
            continue
        exclusive = bool(shared["exclusive"][j])
        caps = cpus_cap[nodes]
        for node, cap in zip(nodes, caps, strict=True):
            # (what its other nodes could not have held, at least one CPU)
            least = int(cap) if exclusive else max(1, int(asked[j] - (caps.sum() - cap)))
            rows["cpus"].append((j, int(node), least))
            rows["exclusive"].append((j, int(node), _ALONE if exclusive else 1))
            if memory_counts:
                kind, mb = int(shared["memory_kind"][j]), int(shared["memory"][j])
                memory = {
                    _PER_NODE: mb,
                    _PER_CPU: mb * (1 if exclusive else least),
                    _WHOLE: int(memory_cap[node]),
                }[kind]
                rows["memory"].append((j, int(node), memory))
            for g in range(int(offsets[j]), int(offsets[j + 1])):
                base = names[int(shared["gres_name"][g])].split(":")[0]
                column = bases.index(base) if base in bases else -1
                key = int(node) * (len(bases) + 1) + column + 1
                gres_rows.append((j, key, int(shared["gres_count"][g])))
    out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    capacity = {"cpus": cpus_cap, "memory": memory_cap, "exclusive": np.full(len(shape), _ALONE)}
    for name, found in rows.items():
        if found:
            out[name] = (*_columns(found), capacity[name])
    if gres_rows:
        # keys: node x (no such kind, then each base name); a kind the node lacks holds 0
        gres_capacity = np.concatenate(
            [np.zeros((len(shape), 1), np.int64), gres_cap], axis=1
        ).ravel()
        out["gres"] = (*_columns(gres_rows), gres_capacity)
    return out


def _columns(rows: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(job, key, amount) rows as three integer columns."""
    table = np.array(rows, np.int64).reshape(-1, 3)
    return table[:, 0], table[:, 1], table[:, 2]


def _partition_rows(
    shared: dict[str, Any], partition: np.ndarray | None, started: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every started job's CPUs in its recorded partition (one pool: every node), and each
    partition's CPUs."""
    shape = shared["node_shape"].astype(np.int64)
    cpus_cap = shared["shape_cpus"].astype(np.int64)[shape]
    offsets = shared["set_offsets"].astype(np.int64)
    set_nodes = shared["set_nodes"].astype(np.int64)
    capacity = np.array([cpus_cap[set_nodes[a:b]].sum() for a, b in itertools.pairwise(offsets)])
    asked = shared["tasks"].astype(np.int64) * shared["cpus_per_task"].astype(np.int64)
    job = np.flatnonzero(started)
    key = np.zeros(len(job), np.int64) if partition is None else partition[job].astype(np.int64)
    keep = key >= 0
    return job[keep], key[keep], asked[job][keep], capacity


def _sweep(
    job: np.ndarray,
    key: np.ndarray,
    amount: np.ndarray,
    capacity: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The jobs whose start leaves their key (node or partition) above its capacity, and the
    spans (begin, end, key) it is above. At one instant every change counts before the test
    (a job ending at t frees its share for one starting at t)."""
    times = np.concatenate([start[job], end[job]])
    keys = np.concatenate([key, key])
    delta = np.concatenate([amount, -amount])
    owner = np.concatenate([job, np.full(len(job), -1)])
    order = np.lexsort((delta, times, keys))
    times, keys, delta, owner = times[order], keys[order], delta[order], owner[order]
    # each key's changes sum to 0: the running total restarts at every key
    level = np.cumsum(delta)
    last = np.append((keys[1:] != keys[:-1]) | (times[1:] != times[:-1]), True)
    group = np.cumsum(np.append(False, last[:-1]))
    after = level[last][group]
    over_rows = after > capacity[keys]
    over_jobs = owner[over_rows & (owner >= 0)]
    ends = np.flatnonzero(last)
    next_same = np.append(keys[ends][1:] == keys[ends][:-1], False)
    above = (after[ends] > capacity[keys[ends]]) & next_same
    begin = times[ends][above]
    finish = times[ends[1:]][above[:-1]] if len(ends) > 1 else np.zeros(0)
    return over_jobs, (begin, finish, keys[ends][above])


def _flag(jobs: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, bool)
    out[jobs] = True
    return out


def _union_length(spans: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> float:
    """The seconds covered by any of the spans."""
    begin = np.concatenate([s[0] for s in spans]) if spans else np.zeros(0)
    finish = np.concatenate([s[1] for s in spans]) if spans else np.zeros(0)
    if len(begin) == 0:
        return 0.0
    order = np.argsort(begin, kind="stable")
    total, reach = 0.0, -np.inf
    for b, f in zip(begin[order], finish[order], strict=True):
        if f <= reach:
            continue
        total += f - max(b, reach)
        reach = f
    return float(total)


def _peak_nodes(nodes_of: list[np.ndarray | None], start: np.ndarray, end: np.ndarray) -> int:
    """The most nodes holding a job at once, where the record names them (0 where it never
    does)."""
    rows = [(j, node) for j, nodes in enumerate(nodes_of) if nodes is not None for node in nodes]
    if not rows:
        return 0
    job = np.array([r[0] for r in rows], np.int64)
    node = np.array([r[1] for r in rows], np.int64)
    times = np.concatenate([start[job], end[job]])
    keys = np.concatenate([node, node])
    delta = np.concatenate([np.ones(len(job), np.int64), -np.ones(len(job), np.int64)])
    order = np.lexsort((delta, times, keys))
    held = np.cumsum(delta[order])
    keys, times = keys[order], times[order]
    # a node is busy while it holds a job: after each instant, its state against the one before
    last = np.append((keys[1:] != keys[:-1]) | (times[1:] != times[:-1]), True)
    key, t, busy = keys[last], times[last], held[last] > 0
    before = np.append(False, busy[:-1])
    before[np.append(True, key[1:] != key[:-1])] = False
    change = busy.astype(np.int64) - before.astype(np.int64)
    order = np.lexsort((change, t))
    return int(np.max(np.cumsum(change[order]), initial=0))


def recorded_allocations(
    jobs: pd.DataFrame, started: np.ndarray, shared: dict[str, Any], min_memory: int
) -> dict[str, np.ndarray]:
    """What each recorded job held in all, for the utilization of each resource: its CPUs as
    the record gives them (``procs``: sacct's NCPUS; else those it asked), its memory (per node
    times its nodes, per CPU times the CPUs it asked, a whole node's as the nodes of least
    memory have)
    and its generic resources per node times its nodes (``gpu=2``); -1 (none) for a job that
    never started."""
    nodes = jobs["nodes"].to_numpy(np.int64)
    asked = shared["tasks"].astype(np.int64) * shared["cpus_per_task"].astype(np.int64)
    given = jobs["procs"].to_numpy(np.int64) if "procs" in jobs else np.zeros(len(jobs), np.int64)
    cpus = np.where(given > 0, given, asked)
    kind = shared["memory_kind"].astype(np.int64)
    mb = shared["memory"].astype(np.int64)
    # (memory per CPU on the CPUs asked: an exclusive job is given every CPU of its nodes
    # but only the memory it asked, as sacct's AllocTRES shows)
    memory = np.select(
        [kind == _PER_NODE, kind == _PER_CPU], [mb * nodes, mb * asked], min_memory * nodes
    )
    names = list(shared["gres_request_names"])
    offsets = shared["gres_offsets"]
    gres = np.full(len(jobs), "", dtype=object)
    for j in np.flatnonzero(offsets[1:] > offsets[:-1]):
        pairs = range(int(offsets[j]), int(offsets[j + 1]))
        gres[j] = ",".join(
            f"{names[int(shared['gres_name'][g])]}={int(shared['gres_count'][g]) * nodes[j]}"
            for g in pairs
        )
    return {
        "alloc_cpus": np.where(started, cpus, -1),
        "alloc_memory_mb": np.where(started, memory, -1),
        "alloc_gres": np.where(started, gres, ""),
    }


def recorded_cpu_utilization(jobs: pd.DataFrame, cpus: int) -> float | None:
    """The recorded schedule's utilization of a site's ``cpus`` CPUs, from 0 to the last
    recorded end: each job's CPUs as the record gives them (``procs``: sacct's NCPUS; else
    those it asked)."""
    from hpcsched import _core
    from hpcsched.workload.record import recorded_schedule

    start, end = recorded_schedule(jobs)
    column = "procs" if "procs" in jobs else "cpus" if "cpus" in jobs else "nodes"
    held = jobs[column].to_numpy(np.float64)
    if "cpus" in jobs and column == "procs":
        held = np.where(held > 0, held, jobs["cpus"].to_numpy(np.float64))
    if not np.isfinite(end).any() or cpus <= 0:
        return None
    none = np.array([], dtype=np.float64)
    value = _core.overall_utilization(
        start,
        end,
        held,
        int(cpus),
        none,
        none,
        np.array([], dtype=bool),
        np.array([], dtype=np.int64),
        (0.0, float(np.nanmax(end))),
    )
    return None if value is None else float(value)
