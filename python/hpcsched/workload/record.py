"""The schedule a site recorded, and where it disagrees with the machine model.

A trace that records each job's wait (SWF field 3, the job table's ``recorded_wait``) records a
schedule: job ``j`` started at ``submit + recorded_wait`` and ran its recorded run time. Replayed
as a schedule (``--policy recorded``, docs/semantics.md "The recorded schedule"), it may
disagree with the model of the machine; :func:`record_conflicts` counts each kind:

- ``unknown_wait``: no recorded wait (SWF -1): the job has no recorded start;
- ``over_capacity``: started at an instant after which the record has more nodes busy than the
  model's machine has up (its nodes minus those down in a downtime window);
- ``in_downtime``: ran during a downtime window that left fewer nodes up than it needs;
- ``overrun``: ran longer than it requested (where the request is known).

A job may fall under several kinds. Nothing here changes a start: the record is replayed as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from hpcsched.workload.model import Workload

#: The job table's column of recorded waits (seconds; NaN where the trace does not say).
RECORDED_WAIT = "recorded_wait"
#: Conflict kinds, in the order the summary lists them.
CONFLICT_KINDS = ("unknown_wait", "over_capacity", "in_downtime", "overrun")
#: How the command line and the reports name each kind, and what it means.
CONFLICT_NAMES = {
    "unknown_wait": ("no recorded start", "the trace gives no wait (-1)"),
    "over_capacity": (
        "more nodes busy than up",
        "started at an instant after which the record has more nodes busy than the machine has up",
    ),
    "in_downtime": (
        "ran in a downtime window",
        "ran while a downtime window left fewer nodes up than it needs",
    ),
    "overrun": ("ran past its request", "ran longer than the time it requested"),
}
#: Trace job ids quoted per conflict kind, to look the jobs up.
EXAMPLES = 5


def has_record(workload: Workload) -> bool:
    """Whether the workload records at least one job's wait (a recorded schedule exists)."""
    jobs = workload.jobs
    return RECORDED_WAIT in jobs and bool(np.isfinite(jobs[RECORDED_WAIT].to_numpy()).any())


def recorded_starts(jobs: pd.DataFrame) -> np.ndarray:
    """Each job's recorded start on the replay clock (submit + recorded wait); NaN where the
    wait is unknown."""
    submit = jobs["submit"].to_numpy(np.float64)
    return np.asarray(submit + jobs[RECORDED_WAIT].to_numpy(np.float64), dtype=np.float64)


def recorded_schedule(jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each job's recorded start and end (start + its run time); NaN where the wait is
    unknown."""
    start = recorded_starts(jobs)
    return start, start + jobs["run_time"].to_numpy(np.float64)


def record_conflicts(
    jobs: pd.DataFrame,
    start: np.ndarray,
    end: np.ndarray,
    machine: int,
    down: dict[str, np.ndarray],
) -> dict[str, dict[str, Any]]:
    """Every conflict of the recorded schedule (``start``/``end`` per job, NaN for a job never
    started) with a machine of ``machine`` nodes and the downtime ``down`` (the columns of
    ``DowntimeCalendar.columns()``): per kind, the jobs counted and a few of their trace ids;
    ``over_capacity`` also the peak of busy nodes and the time and node-seconds spent above
    the nodes up."""
    nodes = jobs["nodes"].to_numpy(np.int64)
    job_id = jobs["job_id"].to_numpy()
    started = np.isfinite(start)
    over, excess = _over_capacity(start[started], end[started], nodes[started], machine, down)
    flags = {
        "unknown_wait": ~started,
        "over_capacity": _scatter(over, started),
        "in_downtime": _in_downtime(start, end, nodes, machine, down) & started,
        "overrun": _overruns(jobs),
    }
    conflicts = {}
    for kind in CONFLICT_KINDS:
        flag = flags[kind]
        conflicts[kind] = {
            "jobs": int(flag.sum()),
            "examples": [int(i) for i in job_id[flag][:EXAMPLES]],
        }
    conflicts["over_capacity"].update(excess)
    return conflicts


def _scatter(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    full = np.zeros(len(mask), dtype=bool)
    full[mask] = values
    return full


def _over_capacity(
    start: np.ndarray,
    end: np.ndarray,
    nodes: np.ndarray,
    machine: int,
    down: dict[str, np.ndarray],
) -> tuple[np.ndarray, dict[str, float]]:
    """Per started job, whether the nodes busy after its start instant exceed the nodes up;
    and the peak busy nodes, the seconds and node-seconds above the nodes up.

    Busy and down nodes are step functions of time; at each distinct instant they are taken
    after every change at that instant (a job ending at t frees its nodes for one starting at
    t, as in the engine)."""
    down_start, down_end = down["down_start"], down["down_end"]
    down_nodes = _taken(down, machine)
    times = np.concatenate([start, end, down_start, down_end])
    busy_change = np.concatenate([nodes, -nodes, np.zeros(2 * len(down_start), dtype=np.int64)])
    down_change = np.concatenate(
        [np.zeros(2 * len(start), dtype=np.int64), down_nodes, -down_nodes]
    )
    order = np.argsort(times, kind="stable")
    times = times[order]
    if len(times) == 0:
        return np.zeros(0, dtype=bool), {
            "peak_busy_nodes": 0,
            "seconds": 0.0,
            "node_seconds": 0.0,
        }
    busy = np.cumsum(busy_change[order])
    taken = np.cumsum(down_change[order])
    # the value after the last change at each distinct instant
    last = np.flatnonzero(np.append(times[1:] != times[:-1], True))
    instants = times[last]
    up = machine - np.minimum(taken[last], machine)
    above = busy[last] - up
    spans = np.diff(instants)
    excess = np.maximum(above[:-1], 0)
    at_start = np.searchsorted(instants, start)
    return above[at_start] > 0, {
        "peak_busy_nodes": int(busy[last].max()),
        "seconds": float(spans[excess > 0].sum()),
        "node_seconds": float((spans * excess).sum()),
    }


def _in_downtime(
    start: np.ndarray,
    end: np.ndarray,
    nodes: np.ndarray,
    machine: int,
    down: dict[str, np.ndarray],
) -> np.ndarray:
    """Jobs whose recorded run overlaps a downtime window that leaves fewer nodes up than the
    job needs (whatever else ran: the job could not have run then on the model's machine)."""
    flag = np.zeros(len(start), dtype=bool)
    with np.errstate(invalid="ignore"):  # NaN starts compare False
        for lo, hi, taken in zip(
            down["down_start"], down["down_end"], _taken(down, machine), strict=True
        ):
            flag |= (start < hi) & (end > lo) & (nodes > machine - taken)
    return flag


def _taken(down: dict[str, np.ndarray], machine: int) -> np.ndarray:
    """Nodes each window takes down (its ``down_nodes``; 0 there means the whole machine)."""
    taken = down["down_nodes"].astype(np.int64)
    return np.where(taken > 0, np.minimum(taken, machine), machine)


def _overruns(jobs: pd.DataFrame) -> np.ndarray:
    """Jobs that ran longer than they requested, among those whose request is known."""
    run = jobs["run_time"].to_numpy(np.float64)
    requested = jobs["requested_time"].to_numpy(np.float64)
    longer = run > requested
    if "requested_known" in jobs:
        longer &= jobs["requested_known"].to_numpy(bool)
    return np.asarray(longer, dtype=bool)


__all__ = [
    "CONFLICT_KINDS",
    "CONFLICT_NAMES",
    "RECORDED_WAIT",
    "has_record",
    "record_conflicts",
    "recorded_schedule",
    "recorded_starts",
]
