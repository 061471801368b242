"""How close a simulated schedule comes to the one the site recorded (DESIGN §3.7).

For a run of a workload that records its waits (:func:`~hpcsched.workload.record.has_record`),
:func:`against_record` compares each job's simulated start with its recorded start (submit +
recorded wait), over the jobs that started in both schedules:

- ``start_error``: ``|simulated start - recorded start|`` (s): mean, median, P95, and
  ``within_1h``, the share of jobs started within an hour of their recorded start;
- ``wait_rank_correlation``: Spearman's rank correlation of the simulated and recorded waits
  (ties take their average rank; None when either is constant; computed by the engine,
  ``engine/ranks.rs``): 1 when the simulation makes the same jobs wait longest, whatever the
  scale;
- ``wait_mean_difference``, ``wait_p95_difference``: simulated minus recorded, over the same
  jobs (s); ``utilization_difference``: the run's utilization over uptime minus the recorded
  schedule's, under the same calendar, both over ``utilization_span``, the span both schedules
  cover: from 0 (the first submission) to the earlier of their last ends (each over its own
  horizon would compare a schedule with its own tail: a record whose last job ends weeks after
  the simulation's gives every run the same difference);
- ``by_class``: per size class (S, M, L, XL), the jobs, the mean start error, the share within
  an hour and the mean wait difference; ``by_partition`` (on a platform with partitions) the
  same per partition the job ran in.

A comparison ranks policies by the mean start error, the smallest first
(:func:`hpcsched.tables.by_agreement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from hpcsched import _core, metrics
from hpcsched.classes import SIZE_CLASSES
from hpcsched.workload import DowntimeCalendar, Workload
from hpcsched.workload.record import recorded_schedule

#: A start this close to the recorded one counts as agreeing (s).
CLOSE = 3600.0


def _utilization(
    start: np.ndarray,
    end: np.ndarray,
    nodes: np.ndarray,
    capacity: int,
    calendar: DowntimeCalendar,
    span: tuple[float, float],
) -> float | None:
    """A schedule's utilization over uptime over ``span`` (the attempts ``start``, ``end``,
    ``nodes``, of ``capacity`` units): the engine's definition
    (``metrics.overall_utilization``)."""
    table = pd.DataFrame({"start": start, "end": end, "nodes": nodes}, copy=False)
    return metrics.overall_utilization(table, capacity, calendar, span)


def _last_end(end: np.ndarray) -> float:
    return float(np.nanmax(end)) if np.isfinite(end).any() else 0.0


def against_record(
    jobs: pd.DataFrame,
    workload: Workload,
    calendar: DowntimeCalendar,
    lost: pd.DataFrame | None = None,
    *,
    cpus: int | None = None,
) -> dict[str, Any]:
    """The agreement of a run's job table ``jobs`` (replay order, the workload's jobs) with the
    recorded schedule; ``lost``: the run's attempts killed by downtime (start, end, nodes),
    busy too; ``cpus``: where jobs share nodes, the site's CPUs (the utilizations are then of
    the CPUs: what each job took, and what the record gives it)."""
    recorded, recorded_end = recorded_schedule(workload.jobs)  # computed once for both uses
    simulated = jobs["start"].to_numpy(np.float64)
    both = np.isfinite(recorded) & np.isfinite(simulated)
    submit = jobs["submit"].to_numpy(np.float64)[both]
    sim_start, rec_start = simulated[both], recorded[both]
    error = np.abs(sim_start - rec_start)
    sim_wait, rec_wait = sim_start - submit, rec_start - submit
    close = error <= CLOSE
    agreement = {
        "jobs": int(both.sum()),
        "start_error": _error_stats(error, close),
        "wait_rank_correlation": _core.rank_correlation(sim_wait, rec_wait),
        "wait_mean_difference": _difference(sim_wait, rec_wait, np.mean),
        "wait_p95_difference": _difference(sim_wait, rec_wait, lambda x: np.quantile(x, 0.95)),
        **_utilization_difference(jobs, lost, recorded, recorded_end, workload, calendar, cpus),
        "by_class": _by_group(
            jobs["size_class"], SIZE_CLASSES, both, error, close, sim_wait - rec_wait
        ),
    }
    if "partition" in jobs:
        partition = jobs["partition"]
        agreement["by_partition"] = _by_group(
            partition, list(partition.cat.categories), both, error, close, sim_wait - rec_wait
        )
    return agreement


def _utilization_difference(
    jobs: pd.DataFrame,
    lost: pd.DataFrame | None,
    recorded: np.ndarray,
    recorded_end: np.ndarray,
    workload: Workload,
    calendar: DowntimeCalendar,
    cpus: int | None,
) -> dict[str, Any]:
    """``utilization_difference`` (simulated minus recorded) and ``utilization_span``, from 0
    to the earlier of the two schedules' last ends; of the CPUs where jobs share nodes
    (``cpus``)."""
    nodes = jobs["nodes"].to_numpy(np.float64)
    held = nodes
    capacity = workload.nodes
    if cpus is not None and "alloc_cpus" in jobs:
        # what each job took on shared nodes, and what the record gives it (NCPUS, else asked)
        nodes = jobs["alloc_cpus"].clip(lower=0).to_numpy(np.float64)
        records = workload.jobs
        column = "procs" if "procs" in records else "cpus" if "cpus" in records else "nodes"
        held = records[column].to_numpy(np.float64)
        capacity = cpus
    sim_start, sim_end = jobs["start"].to_numpy(np.float64), jobs["end"].to_numpy(np.float64)
    if lost is not None and len(lost):
        sim_start = np.concatenate([sim_start, lost["start"].to_numpy(np.float64)])
        sim_end = np.concatenate([sim_end, lost["end"].to_numpy(np.float64)])
        sim_nodes = np.concatenate([nodes, lost["nodes"].to_numpy(np.float64)])
    else:
        sim_nodes = nodes
    span = (0.0, min(_last_end(sim_end), _last_end(recorded_end)))
    simulated = _utilization(sim_start, sim_end, sim_nodes, capacity, calendar, span)
    record = _utilization(recorded, recorded_end, held, capacity, calendar, span)
    return {
        "utilization_difference": None
        if simulated is None or record is None
        else float(simulated - record),
        "utilization_span": {"from": span[0], "to": span[1]},
    }


def _error_stats(error: np.ndarray, close: np.ndarray) -> dict[str, float | None]:
    if len(error) == 0:
        return {"mean": None, "median": None, "p95": None, "within_1h": None}
    median, p95 = np.quantile(error, [0.5, 0.95])  # one partition for both
    return {
        "mean": float(error.mean()),
        "median": float(median),
        "p95": float(p95),
        "within_1h": float(close.mean()),
    }


def _difference(simulated: np.ndarray, recorded: np.ndarray, stat: Any) -> float | None:
    if len(simulated) == 0:
        return None
    return float(stat(simulated) - stat(recorded))


def _by_group(
    group: pd.Series,
    names: Sequence[str],
    both: np.ndarray,
    error: np.ndarray,
    close: np.ndarray,
    wait_difference: np.ndarray,
) -> dict[str, dict[str, float | int | None]]:
    """Jobs, mean start error, share within an hour and mean wait difference per group (a
    size class, a partition) of the categorical ``group``, for each of ``names`` (sums by
    category code: one pass over the jobs for each figure)."""
    codes = group.cat.codes.to_numpy()[both]
    size = len(group.cat.categories)
    counted = codes >= 0  # (a job without a partition: in none)
    codes, error, close = codes[counted], error[counted], close[counted]
    wait_difference = wait_difference[counted]
    jobs = np.bincount(codes, minlength=size)
    errors = np.bincount(codes, weights=error, minlength=size)
    closes = np.bincount(codes, weights=close, minlength=size)
    differences = np.bincount(codes, weights=wait_difference, minlength=size)
    categories = list(group.cat.categories)
    out: dict[str, dict[str, float | int | None]] = {}
    for name in names:
        k = categories.index(name)
        count = int(jobs[k])
        out[name] = {
            "jobs": count,
            "start_error_mean": float(errors[k] / count) if count else None,
            "within_1h": float(closes[k] / count) if count else None,
            "wait_mean_difference": float(differences[k] / count) if count else None,
        }
    return out


__all__ = ["CLOSE", "against_record"]
