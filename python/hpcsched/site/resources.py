"""What a site of shared nodes holds and what its jobs ask, partition by partition (``inspect
--platform`` on a platform whose jobs share nodes): each partition's CPUs, memory and generic
resources in all, and of the jobs whose first candidate it is, the CPUs, memory and GPUs they
ask."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from hpcsched.site.platform import Platform
    from hpcsched.workload import Workload


def partition_resources(platform: Platform) -> list[dict[str, Any]]:
    """Each partition's (or the one pool's) CPUs, memory (MB) and GRES by kind, in all."""
    cpus: list[int] = []
    memory: list[int] = []
    gres: list[dict[str, int]] = []
    for g in platform.groups:
        cpus += [g.cores] * g.nodes
        memory += [g.memory] * g.nodes
        gres += [dict(g.gres)] * g.nodes
    ranges = [p.ranges for p in platform.site.partitions] if platform.site else [((0, len(cpus)),)]
    out = []
    for spans in ranges:
        members = [i for a, b in spans for i in range(a, b)]
        kinds: dict[str, int] = {}
        for i in members:
            for kind, count in gres[i].items():
                kinds[kind] = kinds.get(kind, 0) + count
        out.append(
            {
                "cpus": sum(cpus[i] for i in members),
                "memory_mb": sum(memory[i] for i in members),
                "gres": kinds,
            }
        )
    return out


def asked(workload: Workload, mine: np.ndarray) -> dict[str, Any]:
    """What the jobs of ``mine`` (a mask) ask: CPUs (mean, largest), memory per node or per CPU
    given (the jobs that give one), and the jobs asking generic resources."""
    jobs = workload.jobs
    column = "cpus" if "cpus" in jobs else "procs" if "procs" in jobs else None
    cpus = jobs[column].to_numpy(np.float64)[mine] if column else np.zeros(int(mine.sum()))
    with_memory = np.zeros(int(mine.sum()), bool)
    for name in ("mem_per_node", "mem_per_cpu"):
        if name in jobs:
            with_memory |= np.isfinite(jobs[name].to_numpy(np.float64)[mine])
    gres = jobs["gres"].fillna("").astype(str).to_numpy()[mine] if "gres" in jobs else None
    return {
        "cpus_mean": float(cpus.mean()) if len(cpus) else None,
        "cpus_max": int(cpus.max()) if len(cpus) else None,
        "jobs_giving_memory": int(with_memory.sum()),
        "jobs_asking_gres": int((gres != "").sum()) if gres is not None else 0,
    }
