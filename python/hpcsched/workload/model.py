"""The in-memory workload every reader and generator produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from hpcsched import _core
from hpcsched.exceptions import OptionError, shown

if TYPE_CHECKING:
    import pandas as pd

#: Columns of ``Workload.jobs``, in replay order ((submit, job_id), stable).
JOB_COLUMNS = {
    "job_id": np.int64,  # the trace's job id
    "submit": np.float64,  # seconds since the first kept submission
    "run_time": np.float64,  # actual run time (s), what the replay executes
    "requested_time": np.float64,  # the estimate (s): requested walltime, or run time if unknown
    "nodes": np.int64,  # nodes the rigid job needs
    "user": np.int64,  # user id, -1 when unknown
}


#: What a reader warns of jobs with no requested time (``n`` of them).
NO_REQUESTED_TIME_WARNING = "{n} jobs have no requested time; their estimate is their run time"


@dataclass
class Workload:
    """A workload ready for replay.

    ``jobs`` holds one row per kept job in replay order, with the columns of ``JOB_COLUMNS``
    (readers may add more, e.g. ``procs``, ``line``, ``requested_known``; the SWF reader adds
    what the site recorded, such as ``recorded_wait``: see :func:`~hpcsched.workload.swf.read_swf`;
    a missing column means no record).
    ``skipped`` counts the jobs left out, by reason; nothing is dropped silently.
    """

    jobs: pd.DataFrame
    nodes: int
    source: str = "<memory>"
    format: str = "memory"
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    header: dict[str, object] = field(default_factory=dict)
    #: the absolute clock value (trace units) of time 0, i.e. the first kept submission
    time_origin: float = 0.0
    procs_per_node: int = 1
    #: queue and partition number -> name, from an SWF header's ``; Queue: 1 DSI`` lines
    queue_names: dict[int, str] = field(default_factory=dict)
    partition_names: dict[int, str] = field(default_factory=dict)
    #: jobs the Parallel Workloads Archive's cleaning filters removed from the trace, from its
    #: header's ``(N jobs removed)`` comments; None when the header names no filter
    removed_by_archive: int | None = None
    #: wall-clock seconds :func:`~hpcsched.workload.load_workload` took to read it (0 for a
    #: workload made in memory); ``summary.json`` reports it as ``timing.load_seconds``
    load_seconds: float = field(default=0.0, compare=False)

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def last_submit(self) -> float:
        """Replay time of the last submission (0 for an empty workload): the span the
        arrivals cover."""
        return float(self.jobs["submit"].iloc[-1]) if len(self.jobs) else 0.0

    @property
    def unix_start_time(self) -> float | None:
        """Wall-clock (Unix seconds) of simulated time 0, when the trace says."""
        start = self.header.get("UnixStartTime")
        if start is None:
            return None
        return float(start) + self.time_origin  # type: ignore[arg-type]  # a header number


# The readers' options, checked here for the readers, the API and the command line alike.


def check_procs_per_node(option: int | str) -> int | str:
    """``option`` as a positive integer, or ``"auto"``; an ``OptionError`` otherwise."""
    if option == "auto":
        return option
    try:
        value = int(option)
    except (TypeError, ValueError):
        raise OptionError(
            f"expected a positive integer or 'auto', got {shown(option)}", option="--procs-per-node"
        ) from None
    if value <= 0:
        raise OptionError(f"must be positive, got {value}", option="--procs-per-node")
    return value


def check_machine_nodes(option: int) -> int:
    """A machine size (``--nodes``) within the engine's range (1 to ``_core.MAX_NODES``):
    the one check of a machine size given as an option, whichever reader or command takes
    it."""
    if isinstance(option, bool) or not isinstance(option, int) or not 0 < option <= _core.MAX_NODES:
        raise OptionError(
            f"must be an integer from 1 to {_core.MAX_NODES}, not {shown(option)}",
            option="--nodes",
        )
    return option
