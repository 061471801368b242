"""Metrics users compare policies with (DESIGN §8), computed from a run's job table.

All times are seconds on the replay clock (0 = first submission). Utilization counts every
node-second a job held nodes, including attempts later killed by downtime (the nodes were busy);
the killed work is reported separately as lost node-seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hpcsched import _core
from hpcsched.classes import SIZE_CLASSES
from hpcsched.workload.calendar import DowntimeCalendar

#: bounded-slowdown threshold (s), the engine's
BSLD_TAU: float = _core.BSLD_TAU
#: length of the window before each scheduled maintenance whose utilization is reported (s)
PRE_MAINTENANCE = 48 * 3600.0

_QUANTILES = {"median": 0.5, "p75": 0.75, "p95": 0.95, "p99": 0.99}


def wait_stats(wait: np.ndarray) -> dict[str, float | int | None]:
    """Mean, median, P75, P95, P99 and max of the waits (seconds) of started jobs."""
    wait = np.asarray(wait, dtype=float)
    wait = wait[~np.isnan(wait)]
    if len(wait) == 0:
        return {
            "count": 0,
            "mean": None,
            **dict.fromkeys(_QUANTILES),
            "max": None,
            "median_of_waited": None,
            "waited": 0,
        }
    stats: dict[str, float | int | None] = {"count": len(wait), "mean": float(wait.mean())}
    for name, q in _QUANTILES.items():
        stats[name] = float(np.quantile(wait, q))
    stats["max"] = float(wait.max())
    # the MARS paper's median: over the jobs that waited at all (most start at once)
    waited = wait[wait > 0]
    stats["median_of_waited"] = float(np.median(waited)) if len(waited) else 0.0
    stats["waited"] = len(waited)
    return stats


def bounded_slowdown(wait: np.ndarray, run: np.ndarray) -> np.ndarray:
    """``max(1, (wait + run) / max(run, BSLD_TAU))`` per job, computed by the engine (the one
    definition its rewards use too)."""
    return _core.bounded_slowdowns(
        np.ascontiguousarray(wait, dtype=np.float64), np.ascontiguousarray(run, dtype=np.float64)
    )


class StepIntegral:
    """The integral over [a, b) of a step function of time (a node count): ``values[k]`` on
    ``[times[k], times[k + 1])``, ``before`` before ``times[0]``, the last value after. A query
    costs a binary search, so that the utilization of many periods over many jobs and windows
    stays near-linear."""

    def __init__(self, times: np.ndarray, values: np.ndarray, before: float) -> None:
        self.times, self.values, self.before = times, values, before
        #: the integral from times[0] to times[k]
        self.cumulative = np.r_[0.0, np.cumsum(np.diff(times) * values[:-1])]

    @staticmethod
    def steps(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct times of a step function starting at 0 and, for each, its value from
        then on (the sum of the ``deltas`` at or before it)."""
        if len(times) == 0:
            return times, deltas
        order = np.argsort(times, kind="stable")
        distinct, first = np.unique(times[order], return_index=True)
        last = np.r_[first[1:] - 1, len(times) - 1].astype(np.intp)
        return distinct, np.cumsum(deltas[order])[last]

    def integral_to(self, t: float) -> float:
        """The integral from times[0] to ``t`` (negative before it)."""
        if len(self.times) == 0:
            return float(self.before * t)
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        if k < 0:
            return float(self.before * (t - self.times[0]))
        return float(self.cumulative[k] + (t - self.times[k]) * self.values[k])

    def over(self, a: float, b: float) -> float:
        return self.integral_to(b) - self.integral_to(a)


def busy_profile(start: np.ndarray, end: np.ndarray, nodes: np.ndarray) -> StepIntegral:
    """Nodes held by the intervals ``[start, end)`` over time (those never started are left
    out)."""
    held = ~(np.isnan(start) | np.isnan(end))
    times, values = StepIntegral.steps(
        np.r_[start[held], end[held]], np.r_[nodes[held], -nodes[held]]
    )
    return StepIntegral(times, values, 0.0)


def available_profile(machine: int, calendar: DowntimeCalendar) -> StepIntegral:
    """Nodes up over time: the machine minus the nodes of the windows in progress, never below
    0 (overlapping windows never take more than the whole machine at any instant)."""
    windows = list(calendar)
    down = np.array(
        [machine if w.nodes is None else min(w.nodes, machine) for w in windows], dtype=float
    )
    starts = np.array([w.start for w in windows], dtype=float)
    ends = np.array([w.end for w in windows], dtype=float)
    times, taken = StepIntegral.steps(np.r_[starts, ends], np.r_[down, -down])
    return StepIntegral(times, machine - np.minimum(taken, machine), float(machine))


def uptime_periods(
    a: float, b: float, machine: int, calendar: DowntimeCalendar
) -> list[tuple[float, float]]:
    """The periods of [a, b) outside whole-machine downtime windows."""
    whole = sorted((w.start, w.end) for w in calendar if w.nodes is None or w.nodes >= machine)
    periods, cursor = [], a
    for start, end in whole:
        if start > cursor:
            periods.append((cursor, min(start, b)))
        cursor = max(cursor, end)
        if cursor >= b:
            break
    if cursor < b:
        periods.append((cursor, b))
    return [(lo, hi) for lo, hi in periods if hi > lo]


def utilization(
    jobs: pd.DataFrame,
    lost: pd.DataFrame,
    machine: int,
    calendar: DowntimeCalendar,
    horizon: tuple[float, float],
) -> dict[str, Any]:
    """Utilization over uptime (whole run and per uptime period) and in the 48 h before each
    scheduled maintenance. ``lost`` holds the attempts killed by downtime (start, end, nodes)."""
    start = np.concatenate([jobs["start"].to_numpy(), lost["start"].to_numpy()]).astype(float)
    end = np.concatenate([jobs["end"].to_numpy(), lost["end"].to_numpy()]).astype(float)
    nodes = np.concatenate([jobs["nodes"].to_numpy(), lost["nodes"].to_numpy()]).astype(float)
    busy = busy_profile(start, end, nodes)
    up = available_profile(machine, calendar)

    def ratio(a: float, b: float) -> float | None:
        available = up.over(a, b)
        return busy.over(a, b) / available if available > 0 else None

    a, b = horizon
    periods = uptime_periods(a, b, machine, calendar)
    before = []
    for w in calendar:
        if w.kind != "scheduled" or not (a < w.start <= b):
            continue
        lo = max(a, w.start - PRE_MAINTENANCE)
        before.append({"maintenance_start": w.start, "from": lo, "utilization": ratio(lo, w.start)})
    return {
        "overall_uptime": ratio(a, b) if b > a else None,
        "uptime_periods": [
            {"from": lo, "to": hi, "utilization": ratio(lo, hi)} for lo, hi in periods
        ],
        "before_maintenance": before,
    }


def by_class(jobs: pd.DataFrame) -> dict[str, dict[str, float | int | None]]:
    """Wait statistics per size class (S, M, L, XL)."""
    return {
        cls: wait_stats(jobs.loc[jobs["size_class"] == cls, "wait"].to_numpy())
        for cls in SIZE_CLASSES
    }


def search_stats(decisions: pd.DataFrame) -> dict[str, Any]:
    """MCTS statistics from a decision log: searches, iterations and search time per decision,
    the effective branching factor (distinct root outcomes) and drains."""
    searched = decisions[decisions["outcomes"] >= 2] if len(decisions) else decisions
    stats: dict[str, Any] = {
        "invocations": len(decisions),
        "searches": len(searched),
        "drains": int(decisions["drain"].sum()) if len(decisions) else 0,
    }
    if len(searched):
        branching = searched["outcomes"].to_numpy()
        stats.update(
            iterations_per_search={
                "mean": float(searched["iterations"].mean()),
                "median": float(searched["iterations"].median()),
            },
            seconds_per_search={
                "mean": float(searched["seconds"].mean()),
                "p95": float(np.quantile(searched["seconds"], 0.95)),
                "max": float(searched["seconds"].max()),
            },
            branching={
                "median": float(np.median(branching)),
                "p90": float(np.quantile(branching, 0.9)),
                "max": int(branching.max()),
                "counts": {
                    int(k): int(v)
                    for k, v in zip(*np.unique(branching, return_counts=True), strict=True)
                },
            },
        )
    return stats


#: joules per MWh
JOULES_PER_MWH = 3.6e9


def mode_occupancy(decisions: pd.DataFrame, horizon: float) -> dict[str, float]:
    """Share of [0, horizon] each SNF-ICON mode was in force: a call's mode holds until the
    next call."""
    if decisions.empty or horizon <= 0:
        return {}
    times = np.clip(decisions["time"].to_numpy(), 0.0, horizon)
    spans = np.empty_like(times)  # each call's mode holds until the next call
    np.subtract(times[1:], times[:-1], out=spans[:-1])
    spans[-1] = horizon - times[-1]
    # by category codes: a year-long log has millions of rows (no strings per row)
    mode = decisions["mode"]
    if isinstance(mode.dtype, pd.CategoricalDtype):
        names, codes = list(mode.cat.categories), mode.cat.codes.to_numpy()
    else:
        unique, codes = np.unique(mode.to_numpy(), return_inverse=True)
        names = list(unique)
    totals = np.bincount(codes, weights=spans, minlength=len(names))
    calls = np.bincount(codes, minlength=len(names))
    order = sorted((str(name), k) for k, name in enumerate(names) if calls[k])
    return {name: float(totals[k] / horizon) for name, k in order}


def energy_summary(
    joules: dict[str, float], node_seconds: dict[str, float], horizon: float
) -> dict[str, Any]:
    """The energy object of ``summary.json``: MWh from 0 to the last completion, wasted energy
    (everything not spent computing) and node-seconds per state."""
    return {
        "total_mwh": joules["total"] / JOULES_PER_MWH,
        "wasted_mwh": joules["wasted"] / JOULES_PER_MWH,
        "computing_mwh": joules["computing"] / JOULES_PER_MWH,
        "idle_mwh": joules["idle"] / JOULES_PER_MWH,
        "switching_mwh": (joules["switching_on"] + joules["switching_off"]) / JOULES_PER_MWH,
        "sleeping_mwh": joules["sleeping"] / JOULES_PER_MWH,
        "node_seconds": dict(node_seconds),
        "horizon_seconds": horizon,
    }
