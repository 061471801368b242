"""What an adapter reads from a resource manager: jobs, nodes, partitions and reservations at
one moment.

Times are Unix seconds; time limits are seconds (``None`` = unlimited). Adapters (Slurm today;
PBS or Flux later) fill these; the planner never sees a resource manager's own format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Slurm's reasons of a held pending job.
HOLD_REASONS = ("JobHeldUser", "JobHeldAdmin")
#: The states of a job that holds its nodes.
RUNNING_STATES = ("RUNNING", "COMPLETING", "SUSPENDED")


@dataclass(frozen=True)
class Job:
    """A job as the resource manager lists it. ``job_id`` is the id priorities are written to
    (for a pending job array, the record's id: its pending tasks share it)."""

    job_id: int
    name: str
    user: str
    #: partitions the job may run in (a job submitted to several lists them all)
    partitions: tuple[str, ...]
    state: str
    reason: str
    nodes: int
    time_limit: float | None
    submit: float
    start: float | None
    priority: int
    nice: int
    #: pending tasks this record stands for (job arrays), else 1
    tasks: int = 1
    #: the array label (e.g. ``12_[0-3]``), else None
    array: str | None = None
    #: whether the priority was set by hand (an administrator's ``scontrol update
    #: Priority=``, or the advisor's), which the resource manager then never recomputes;
    #: None when the adapter cannot tell
    pinned: bool | None = None
    #: the nodes a running job holds, in the resource manager's order; () for other jobs
    node_names: tuple[str, ...] = ()
    #: the job's account and QOS ("" when the resource manager does not say: snapshots saved
    #: before they were read)
    account: str = ""
    qos: str = ""
    #: the CPUs it asks for (squeue's ``cpus``; 0 when not said), which Slurm's job-size
    #: factor counts
    cpus: int = 0

    @property
    def pending(self) -> bool:
        return self.state == "PENDING"

    @property
    def running(self) -> bool:
        return self.state in RUNNING_STATES

    @property
    def held(self) -> bool:
        """Held by its user or an administrator (priority 0 is an admin hold)."""
        return self.priority == 0 or self.reason in HOLD_REASONS


@dataclass(frozen=True)
class Node:
    name: str
    #: lower-case state words, e.g. ("idle",), ("allocated", "drain"), ("down", "not_responding")
    states: tuple[str, ...]
    partitions: tuple[str, ...]

    @property
    def unavailable(self) -> bool:
        """Down, drained or failed: no new job may start on it."""
        bad = {
            "down",
            "drain",
            "drained",
            "draining",
            "fail",
            "failing",
            "future",
            "not_responding",
            "maint",
            "unknown",
            "power_down",
            "powered_down",
            "inval",
        }
        return any(s in bad for s in self.states)

    @property
    def allocated(self) -> bool:
        return any(s in ("allocated", "mixed", "completing") for s in self.states)


@dataclass(frozen=True)
class Reservation:
    """A reservation the resource manager announced: the nodes it takes over [start, end)."""

    name: str
    start: float
    end: float
    nodes: tuple[str, ...]
    flags: tuple[str, ...] = ()

    @property
    def maintenance(self) -> bool:
        return "MAINT" in self.flags


@dataclass(frozen=True)
class Partition:
    """A partition (a queue over a set of nodes) and the limits a job submitted to it meets."""

    name: str
    #: its nodes, in the resource manager's order; partitions may share nodes
    nodes: tuple[str, ...]
    #: Slurm's PriorityTier: pending jobs of a higher tier are considered first
    tier: int = 1
    #: the longest time limit a job may have, in seconds; None = unlimited
    max_time: float | None = None
    #: the most nodes a job may ask for; None = unlimited
    max_nodes: int | None = None
    #: the fewest nodes a job may ask for (1 when the partition sets no minimum)
    min_nodes: int = 1
    #: whether jobs submitted without a partition go here
    default: bool = False
    #: lower-case: ``up``, ``down``, ``drain`` or ``inactive``
    state: str = "up"


@dataclass
class ClusterState:
    """One reading of a cluster: ``now`` is the resource manager's clock at the read."""

    now: float
    jobs: list[Job]
    nodes: list[Node]
    reservations: list[Reservation] = field(default_factory=list)
    #: the partitions as the resource manager defines them; empty = not known
    partitions: list[Partition] = field(default_factory=list)
    #: where it was read from (``slurm``, or the snapshot files)
    source: str = ""
    #: the resource manager and its version, e.g. ``Slurm 22.05.8``
    manager: str = ""
