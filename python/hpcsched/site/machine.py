"""The machine: its nodes, in groups of one kind (a count, cores per node and a power model),
numbered group after group (DESIGN §3.5). A platform (:mod:`hpcsched.site.platform`) is a
machine, the partitions over it (:mod:`hpcsched.site.partitions`) and Slurm's settings."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class PowerModel:
    """Per-node power (W) in each state and transition latencies (s)."""

    computing: float
    idle: float
    sleeping: float
    switching_on: float
    switching_off: float
    switch_on: float
    switch_on_std: float
    switch_off: float
    switch_off_std: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of one kind: how many, their power model (None when no group has one), their
    cores (processors, Slurm's CPUs) per node and, where jobs share nodes (DESIGN §3.8), the
    CPUs per core, the memory (MB) jobs may use, the generic resources by kind (``gpu``,
    ``gpu:a100``) and Slurm's node weight (lowest first)."""

    name: str
    nodes: int
    power: PowerModel | None
    cores: int = 1
    threads_per_core: int = 1
    memory: int = 0
    gres: tuple[tuple[str, int], ...] = ()
    weight: int = 1

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "nodes": self.nodes,
            "power": self.power.to_dict() if self.power else None,
        }
        # (each only when given: the files written before them stay as they were)
        if self.cores != 1:
            out["cores"] = self.cores
        if self.threads_per_core != 1:
            out["threads_per_core"] = self.threads_per_core
        if self.memory:
            out["memory"] = self.memory
        if self.gres:
            out["gres"] = dict(self.gres)
        if self.weight != 1:
            out["weight"] = self.weight
        return out
