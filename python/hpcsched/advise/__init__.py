"""The production advisor: reads a live cluster, plans with an hpcsched policy (MARS by
default) and steers the resource manager through job priorities (MARS §III, Fig. 1).

- :mod:`~hpcsched.advise.state`: what an adapter reads (jobs, nodes, partitions,
  reservations);
- :mod:`~hpcsched.advise.adapter`: what an adapter does (read, write priorities, release);
- :mod:`~hpcsched.advise.slurm`: the Slurm adapter and saved Slurm snapshots;
- :mod:`~hpcsched.advise.scontrol`: scontrol's text (reservations, partitions), hostlists and
  durations;
- :mod:`~hpcsched.advise.plan`: from a state to priorities, through the engine;
- :mod:`~hpcsched.advise.slurm_order`: Slurm's own order of the queue, beside the plan;
- :mod:`~hpcsched.advise.runner`: ticks, the loop, the release;
- :mod:`~hpcsched.advise.ledger`: the decision log, also the ledger of what the advisor
  changed.
"""

from hpcsched.advise.adapter import Adapter, ControllerError, Write
from hpcsched.advise.plan import Change, Plan, make_plan
from hpcsched.advise.runner import (
    Advisor,
    DecisionLog,
    Ledger,
    ReleaseResult,
    TickResult,
    default_log_path,
)
from hpcsched.advise.slurm import SlurmCluster, SlurmSnapshot
from hpcsched.advise.state import ClusterState, Job, Node, Partition, Reservation

__all__ = [
    "Adapter",
    "Advisor",
    "Change",
    "ClusterState",
    "ControllerError",
    "DecisionLog",
    "Job",
    "Ledger",
    "Node",
    "Partition",
    "Plan",
    "ReleaseResult",
    "Reservation",
    "SlurmCluster",
    "SlurmSnapshot",
    "TickResult",
    "Write",
    "default_log_path",
    "make_plan",
]
