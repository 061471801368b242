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
  schedule's, under the same calendar;
- ``by_class``: per size class (S, M, L, XL), the jobs, the mean start error, the share within
  an hour and the mean wait difference.

A comparison ranks policies by the mean start error, the smallest first
(:func:`hpcsched.tables.by_agreement`).
"""

from __future__ import annotations

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
    start: np.ndarray, end: np.ndarray, workload: Workload, calendar: DowntimeCalendar
) -> float | None:
    """The recorded schedule's utilization over uptime, from 0 to its last end: the engine's
    definition (``metrics.overall_utilization``), as the recorded run reports it."""
    table = pd.DataFrame(
        {"start": start, "end": end, "nodes": workload.jobs["nodes"].to_numpy()}, copy=False
    )
    last_end = float(np.nanmax(end)) if np.isfinite(end).any() else 0.0
    return metrics.overall_utilization(table, workload.nodes, calendar, (0.0, last_end))


def against_record(
    jobs: pd.DataFrame,
    workload: Workload,
    calendar: DowntimeCalendar,
    utilization: float | None,
) -> dict[str, Any]:
    """The agreement of a run's job table ``jobs`` (replay order, the workload's jobs) with the
    recorded schedule; ``utilization``: the run's overall utilization over uptime."""
    recorded, recorded_end = recorded_schedule(workload.jobs)  # computed once for both uses
    simulated = jobs["start"].to_numpy(np.float64)
    both = np.isfinite(recorded) & np.isfinite(simulated)
    submit = jobs["submit"].to_numpy(np.float64)[both]
    sim_start, rec_start = simulated[both], recorded[both]
    error = np.abs(sim_start - rec_start)
    sim_wait, rec_wait = sim_start - submit, rec_start - submit
    recorded_util = _utilization(recorded, recorded_end, workload, calendar)
    close = error <= CLOSE
    return {
        "jobs": int(both.sum()),
        "start_error": _error_stats(error, close),
        "wait_rank_correlation": _core.rank_correlation(sim_wait, rec_wait),
        "wait_mean_difference": _difference(sim_wait, rec_wait, np.mean),
        "wait_p95_difference": _difference(sim_wait, rec_wait, lambda x: np.quantile(x, 0.95)),
        "utilization_difference": None
        if utilization is None or recorded_util is None
        else float(utilization - recorded_util),
        "by_class": _by_class(jobs["size_class"], both, error, close, sim_wait - rec_wait),
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


def _by_class(
    size_class: pd.Series,
    both: np.ndarray,
    error: np.ndarray,
    close: np.ndarray,
    wait_difference: np.ndarray,
) -> dict[str, dict[str, float | int | None]]:
    """Jobs, mean start error, share within an hour and mean wait difference per size class
    (sums by category code: one pass over the jobs for each figure)."""
    codes = size_class.cat.codes.to_numpy()[both]
    size = len(size_class.cat.categories)
    jobs = np.bincount(codes, minlength=size)
    errors = np.bincount(codes, weights=error, minlength=size)
    closes = np.bincount(codes, weights=close, minlength=size)
    differences = np.bincount(codes, weights=wait_difference, minlength=size)
    by_class: dict[str, dict[str, float | int | None]] = {}
    for name in SIZE_CLASSES:
        k = list(size_class.cat.categories).index(name)
        count = int(jobs[k])
        by_class[name] = {
            "jobs": count,
            "start_error_mean": float(errors[k] / count) if count else None,
            "within_1h": float(closes[k] / count) if count else None,
            "wait_mean_difference": float(differences[k] / count) if count else None,
        }
    return by_class


__all__ = ["CLOSE", "against_record"]
