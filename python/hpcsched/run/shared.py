"""Jobs sharing nodes (DESIGN §3.8): what the engine takes of a platform whose nodes jobs share
by CPUs, memory and generic resources (``NativeRun.shared``), built once per run from the
platform's node groups and partitions and each job's request (docs/semantics.md, "Resources
inside nodes").

A job's request comes from the workload's columns: ``cpus`` (else ``procs``, the processors
an SWF trace records) one-CPU tasks placed as Slurm places ``-n``; ``req_nodes`` (``-N``,
0 when not given); ``mem_per_node`` or ``mem_per_cpu`` (MB, NaN when not given; else the
partition's DefMemPerCPU or DefMemPerNode; else, where memory is a resource, the whole memory
of each node, as Slurm does); ``gres`` (per node, Slurm's ``--gres`` syntax: ``gpu:2``,
``gpu:a100:1``); ``exclusive``. A workload that counts nodes only (no ``cpus`` nor ``procs``)
asks for whole nodes: each job ``-N nodes --exclusive``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcsched import _core
from hpcsched.exceptions import InputError, shown
from hpcsched.site.slurm.tres import JobTres

if TYPE_CHECKING:
    from hpcsched.site.assignment import Assignment
    from hpcsched.site.platform import Platform
    from hpcsched.workload import Workload

#: one ``--gres`` entry: name, optional type, optional count
_GRES = re.compile(
    r"([A-Za-z][A-Za-z0-9_]*)(?::([A-Za-z0-9_.-]*[A-Za-z_.-][A-Za-z0-9_.-]*))?(?::([0-9]+))?"
)

#: memory kinds as the engine reads them
_PER_NODE, _PER_CPU, _WHOLE = 0, 1, 2


def parse_gres(text: str, source: str = "<gres>") -> tuple[tuple[str, int], ...]:
    """A ``--gres`` request per node (``gpu:2``, ``gpu:a100:1,mps:100``) as (kind, count)
    pairs, the kind ``name`` or ``name:type``; an ``InputError`` naming it otherwise."""
    out: list[tuple[str, int]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = _GRES.fullmatch(part)
        if match is None:
            raise InputError(
                f"{shown(part)} is not a generic resource request (gpu, gpu:2, gpu:a100:2)",
                path=source,
                field="gres",
            )
        name, kind, count = match.groups()
        out.append((f"{name}:{kind}" if kind else name, int(count) if count else 1))
    return tuple(out)


def native_shared(
    workload: Workload, platform: Platform, assignment: Assignment | None
) -> dict[str, Any]:
    """``NativeRun.shared``: the nodes' shapes (one per node group), the node sets (the
    partitions in order, or one set of every node) and each job's request as columns."""
    groups = platform.groups
    kinds = sorted({kind for g in groups for kind, _ in g.gres})
    gres_of = [dict(g.gres) for g in groups]
    out: dict[str, Any] = {
        "sharing": platform.sharing,
        "gres_names": kinds,
        "shape_cpus": np.array([g.cores for g in groups], np.uint32),
        "shape_threads_per_core": np.array([g.threads_per_core for g in groups], np.uint32),
        "shape_memory": np.array([g.memory for g in groups], np.uint64),
        "shape_gres": np.array([gres.get(k, 0) for gres in gres_of for k in kinds], np.uint32),
        "shape_weight": np.array([g.weight for g in groups], np.uint32),
        "node_shape": np.repeat(np.arange(len(groups), dtype=np.uint32), [g.nodes for g in groups]),
    }
    out.update(_node_sets(platform))
    out.update(_requests(workload, platform, assignment))
    return out


def _node_sets(platform: Platform) -> dict[str, Any]:
    """Each partition's nodes, MinNodes, MaxNodes and OverSubscribe=EXCLUSIVE (one set of
    every node without partitions)."""
    no_limit = np.iinfo(np.uint32).max
    if platform.site is None:
        return {
            "set_offsets": np.array([0, platform.nodes], np.uint32),
            "set_nodes": np.arange(platform.nodes, dtype=np.uint32),
            "set_min_nodes": np.array([1], np.uint32),
            "set_max_nodes": np.array([no_limit], np.uint32),
            "set_exclusive": np.array([False]),
            "set_max_mem_per_node": np.zeros(1, np.uint64),
        }
    partitions = platform.site.partitions
    nodes = [
        np.concatenate([np.arange(a, b, dtype=np.uint32) for a, b in p.ranges]) for p in partitions
    ]
    return {
        "set_offsets": np.concatenate([[0], np.cumsum([len(n) for n in nodes])]).astype(np.uint32),
        "set_nodes": np.concatenate(nodes).astype(np.uint32),
        "set_min_nodes": np.array([p.min_nodes for p in partitions], np.uint32),
        "set_max_nodes": np.array(
            [no_limit if p.max_nodes is None else p.max_nodes for p in partitions], np.uint32
        ),
        "set_exclusive": np.array([p.exclusive for p in partitions], bool),
        # MaxMemPerNode (0: none): a job asking more a node never starts there
        "set_max_mem_per_node": np.array([p.max_mem_per_node or 0 for p in partitions], np.uint64),
    }


def _requests(
    workload: Workload, platform: Platform, assignment: Assignment | None
) -> dict[str, Any]:
    jobs = workload.jobs
    n = len(jobs)
    cpus_column = "cpus" if "cpus" in jobs else "procs" if "procs" in jobs else None
    if cpus_column is None:
        # nodes only: whole nodes, as before sharing
        nodes = jobs["nodes"].to_numpy(np.int64)
        tasks, req_nodes, exclusive = nodes, nodes, np.ones(n, bool)
    else:
        tasks = jobs[cpus_column].to_numpy(np.int64)
        req_nodes = jobs["req_nodes"].to_numpy(np.int64) if "req_nodes" in jobs else np.zeros(n)
        exclusive = jobs["exclusive"].to_numpy(bool) if "exclusive" in jobs else np.zeros(n, bool)
    kind, memory = _memory(workload, platform, assignment)
    gres = _gres(jobs.get("gres"), n, workload.source)
    return {
        "nodes": np.clip(req_nodes, 0, None).astype(np.uint32),
        "tasks": np.clip(tasks, 1, _core.MAX_COUNT).astype(np.uint32),
        "cpus_per_task": np.ones(n, np.uint32),
        "memory_kind": kind,
        "memory": memory,
        "exclusive": exclusive,
        **gres,
    }


def _memory(
    workload: Workload, platform: Platform, assignment: Assignment | None
) -> tuple[np.ndarray, np.ndarray]:
    """Each job's memory kind (per node, per CPU, the whole node) and MB: its own, else its
    partition's default, else the whole node."""
    jobs = workload.jobs
    n = len(jobs)
    nan = np.full(n, np.nan)
    per_node = jobs["mem_per_node"].to_numpy(np.float64) if "mem_per_node" in jobs else nan
    per_cpu = jobs["mem_per_cpu"].to_numpy(np.float64) if "mem_per_cpu" in jobs else nan
    site = platform.site
    if site is not None and assignment is not None:
        # the defaults of each job's first candidate partition
        first = assignment.partitions[
            np.minimum(assignment.offsets[:-1], len(assignment.partitions) - 1)
        ]
        by_cpu = np.array([p.def_mem_per_cpu or np.nan for p in site.partitions])[first]
        by_node = np.array([p.def_mem_per_node or np.nan for p in site.partitions])[first]
        per_cpu = np.where(np.isnan(per_node) & np.isnan(per_cpu), by_cpu, per_cpu)
        per_node = np.where(np.isnan(per_node) & np.isnan(per_cpu), by_node, per_node)
    kind = np.where(
        np.isfinite(per_node), _PER_NODE, np.where(np.isfinite(per_cpu), _PER_CPU, _WHOLE)
    ).astype(np.uint8)
    memory = np.where(np.isfinite(per_node), per_node, np.where(np.isfinite(per_cpu), per_cpu, 0))
    return kind, np.clip(memory, 0, _core.MAX_MEMORY).astype(np.uint64)


def _gres(column: Any, n: int, source: str) -> dict[str, Any]:
    """The jobs' generic resources per node as CSR columns over the distinct names asked."""
    offsets = np.zeros(n + 1, np.uint32)
    if column is None:
        empty = np.zeros(0, np.uint32)
        return {
            "gres_request_names": [],
            "gres_offsets": offsets,
            "gres_name": empty,
            "gres_count": empty,
        }
    values = column.fillna("").astype(str).to_numpy()
    parsed = {text: parse_gres(text, source) for text in set(values.tolist())}
    names = sorted({kind for pairs in parsed.values() for kind, _ in pairs})
    index = {name: i for i, name in enumerate(names)}
    counts = np.array([len(parsed[v]) for v in values], np.int64)
    offsets[1:] = np.cumsum(counts)
    flat = [pair for v in values for pair in parsed[v]]
    return {
        "gres_request_names": names,
        "gres_offsets": offsets,
        "gres_name": np.array([index[k] for k, _ in flat], np.uint32),
        "gres_count": np.array([c for _, c in flat], np.uint32),
    }


def slurm_job_cpus(shared: dict[str, Any], platform: Platform) -> np.ndarray:
    """The CPUs Slurm counts for each job on shared nodes (its job size, the usage it is
    charged): those it asks for, tasks x CPUs per task; an exclusive job's nodes whole (in
    nodes of the fewest CPUs: its nodes are known only once placed)."""
    asked = shared["tasks"].astype(np.int64) * shared["cpus_per_task"].astype(np.int64)
    cores = min(g.cores for g in platform.groups)
    whole = np.maximum(shared["nodes"].astype(np.int64), 1) * cores
    cpus: np.ndarray = np.where(shared["exclusive"], np.maximum(whole, asked), asked)
    return cpus


def shared_job_tres(shared: dict[str, Any], platform: Platform, nodes: np.ndarray) -> JobTres:
    """What each job holds, as Slurm's TRES count it (its billing and TRES priority): the CPUs
    Slurm counts (:func:`slurm_job_cpus`), its memory (per node times its nodes, per CPU times
    the CPUs it asks, a whole node's as the nodes of least memory have), its nodes and its generic
    resources per node times its nodes."""
    cpus = slurm_job_cpus(shared, platform).astype(np.float64)
    # (memory per CPU on the CPUs asked: an exclusive job gets its nodes' CPUs, not more memory)
    asked = shared["tasks"].astype(np.float64) * shared["cpus_per_task"].astype(np.float64)
    nodes = np.maximum(nodes.astype(np.float64), 1.0)
    kind = shared["memory_kind"].astype(np.int64)
    mb = shared["memory"].astype(np.float64)
    least = float(min(g.memory for g in platform.groups))
    memory = np.select(
        [kind == _PER_NODE, kind == _PER_CPU], [mb * nodes, mb * asked], least * nodes
    )
    names = list(shared["gres_request_names"])
    gres = {name: np.zeros(len(cpus)) for name in names}
    offsets = shared["gres_offsets"]
    for j in np.flatnonzero(offsets[1:] > offsets[:-1]):
        for g in range(int(offsets[j]), int(offsets[j + 1])):
            gres[names[int(shared["gres_name"][g])]][j] += int(shared["gres_count"][g]) * nodes[j]
    return JobTres(cpu=cpus, mem=memory, node=nodes, gres=gres)


def asked_tres(shared: dict[str, Any], platform: Platform, tres: list[str]) -> np.ndarray:
    """Each job's amount of each of ``tres`` as it asks them, row-major (Slurm's
    ``tres_req_cnt``, what a pending job's QOS limits test): memory per node times the nodes it
    asks (``-N``, else 1), per CPU times the CPUs it asks, a whole node's as the nodes of least
    memory have; each ``gres/NAME`` (every kind of the name, typed or not: ``gres/gpu`` counts
    ``gpu:a100``) or ``gres/NAME:TYPE`` per node times those nodes."""
    nodes = np.maximum(shared["nodes"].astype(np.int64), 1)
    n = len(nodes)
    out = np.zeros((n, len(tres)), np.int64)
    names = list(shared["gres_request_names"])
    offsets, kinds, counts = shared["gres_offsets"], shared["gres_name"], shared["gres_count"]
    for t, name in enumerate(tres):
        if name == "mem":
            kind = shared["memory_kind"].astype(np.int64)
            mb = shared["memory"].astype(np.int64)
            asked = shared["tasks"].astype(np.int64) * shared["cpus_per_task"].astype(np.int64)
            least = min(g.memory for g in platform.groups)
            out[:, t] = np.select(
                [kind == _PER_NODE, kind == _PER_CPU], [mb * nodes, mb * asked], least * nodes
            )
            continue
        wanted = name.removeprefix("gres/")
        typed = ":" in wanted
        match = [k == wanted or (not typed and k.split(":")[0] == wanted) for k in names]
        for j in np.flatnonzero(offsets[1:] > offsets[:-1]):
            for g in range(int(offsets[j]), int(offsets[j + 1])):
                if match[int(kinds[g])]:
                    out[j, t] += int(counts[g]) * nodes[j]
    flat: np.ndarray = out.ravel()
    return flat
