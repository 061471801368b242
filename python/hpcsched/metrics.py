"""Metrics users compare policies with (DESIGN §8), computed from a run's job table.

All times are seconds on the replay clock (0 = first submission). Utilization counts every
node-second a job held nodes, including attempts later killed by downtime (the nodes were busy);
the killed work is reported separately as lost node-seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hpcsched import _core
from hpcsched.classes import SIZE_CLASSES
from hpcsched.workload.calendar import DowntimeCalendar

if TYPE_CHECKING:
    from hpcsched.site.platform import Platform

#: bounded-slowdown threshold (s), the engine's
BSLD_TAU: float = _core.BSLD_TAU
#: length of the window before each scheduled maintenance whose utilization is reported (s)
PRE_MAINTENANCE: float = _core.PRE_MAINTENANCE

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


def utilization(
    jobs: pd.DataFrame,
    lost: pd.DataFrame,
    machine: int,
    calendar: DowntimeCalendar,
    horizon: tuple[float, float],
) -> dict[str, Any]:
    """Utilization over uptime (whole run and per uptime period) and in the 48 h before each
    scheduled maintenance. ``lost`` holds the attempts killed by downtime (start, end, nodes).
    Computed by the engine (``engine/utilization.rs``), the one definition its online totals
    share."""
    start = np.concatenate([jobs["start"].to_numpy(), lost["start"].to_numpy()]).astype(float)
    end = np.concatenate([jobs["end"].to_numpy(), lost["end"].to_numpy()]).astype(float)
    nodes = np.concatenate([jobs["nodes"].to_numpy(), lost["nodes"].to_numpy()]).astype(float)
    windows = calendar.windows
    overall, periods, before = _core.utilization(
        start, end, nodes, machine, *_downtime(calendar), horizon
    )
    return {
        "overall_uptime": overall,
        "uptime_periods": [{"from": lo, "to": hi, "utilization": u} for lo, hi, u in periods],
        "before_maintenance": [
            {"maintenance_start": windows[k].start, "from": lo, "utilization": u}
            for k, lo, u in before
        ],
    }


def platform_cpus(platform: Platform) -> int:
    """The CPUs of a platform's nodes (Slurm's count)."""
    return sum(g.nodes * g.cores for g in platform.groups)


def resource_utilization(
    jobs: pd.DataFrame, platform: Platform, horizon: tuple[float, float]
) -> dict[str, float | None]:
    """Where jobs share nodes, each resource's share in use over ``horizon`` (no downtime):
    CPUs, memory (where the platform gives it) and each generic resource kind, from what each
    job took (``alloc_cpus``, ``alloc_memory_mb``, ``alloc_gres``)."""
    lo, hi = horizon
    span = hi - lo
    start = jobs["start"].to_numpy(np.float64)
    end = jobs["end"].to_numpy(np.float64)
    ran = np.isfinite(start)
    seconds = np.where(ran, np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0, None), 0.0)

    def share(amount: np.ndarray, capacity: float) -> float | None:
        if capacity <= 0 or span <= 0:
            return None
        return float((np.where(ran, amount, 0) * seconds).sum() / (capacity * span))

    groups = platform.groups
    out: dict[str, float | None] = {
        "cpus": share(jobs["alloc_cpus"].to_numpy(np.float64), platform_cpus(platform))
    }
    memory = sum(g.nodes * g.memory for g in groups)
    if memory and platform.sharing.endswith("_memory"):  # (a resource under CR_*_Memory only)
        out["memory"] = share(jobs["alloc_memory_mb"].to_numpy(np.float64), memory)
    kinds = sorted({kind for g in groups for kind, _ in g.gres})
    taken = _gres_totals(jobs["alloc_gres"], kinds)
    for kind in kinds:
        capacity = sum(g.nodes * dict(g.gres).get(kind, 0) for g in groups)
        out[f"gres/{kind}"] = share(taken[kind], capacity)
    return out


def _gres_totals(column: pd.Series, kinds: list[str]) -> dict[str, np.ndarray]:
    """Units of each kind per job from ``alloc_gres`` texts (``gpu=2,gpu:a100=1``)."""
    out = {kind: np.zeros(len(column)) for kind in kinds}
    texts = column.fillna("").astype(str).to_numpy()
    for text in set(texts.tolist()) - {""}:
        rows = texts == text
        for part in text.split(","):
            kind, _, units = part.partition("=")
            if kind in out:
                out[kind][rows] += float(units)
    return out


def overall_utilization(
    jobs: pd.DataFrame,
    machine: int,
    calendar: DowntimeCalendar,
    horizon: tuple[float, float],
) -> float | None:
    """Utilization over uptime over ``horizon`` alone (``utilization``'s ``overall_uptime``,
    equal up to the order of the additions) of the attempts in ``jobs`` (start, end, nodes),
    computed by the engine in one pass: what comparing with another schedule needs."""
    return _core.overall_utilization(
        jobs["start"].to_numpy(np.float64),
        jobs["end"].to_numpy(np.float64),
        jobs["nodes"].to_numpy(np.float64),
        machine,
        *_downtime(calendar),
        horizon,
    )


def _downtime(
    calendar: DowntimeCalendar,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The calendar's columns as the engine's utilization takes them."""
    down = calendar.columns()
    return down["down_start"], down["down_end"], down["down_scheduled"], down["down_nodes"]


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
