"""Building the engine: a ``_core.Simulation`` from a workload, a downtime calendar, a platform
and a policy (its arrays of jobs and windows, the power model, the power manager's options)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcsched import _core
from hpcsched.platform import Platform
from hpcsched.policies import PolicySpec, PowerSpec
from hpcsched.protocol import PythonPolicySpec
from hpcsched.workload import DowntimeCalendar, Workload


def new_simulation(
    workload: Workload,
    calendar: DowntimeCalendar,
    policy: str,
    window: int | None = None,
    backfill: str = "easy",
    *,
    overrun: str = "continue",
    platform: Platform | None = None,
    search: dict[str, Any] | None = None,
    manager: dict[str, Any] | None = None,
    python: Any = None,
    estimates: str = "requested",
    max_wait: float | None = None,
    decision_log: str = "compact",
) -> Any:
    """The engine for `workload` (replay clock) and `calendar` (already shifted to it)."""
    jobs = workload.jobs
    windows = calendar.windows
    return _core.Simulation(
        jobs["job_id"].to_numpy(np.int64),
        jobs["submit"].to_numpy(np.float64),
        jobs["run_time"].to_numpy(np.float64),
        jobs["requested_time"].to_numpy(np.float64),
        jobs["nodes"].to_numpy(np.int64),
        workload.nodes,
        policy,
        window,
        backfill,
        overrun,
        np.array([w.start for w in windows], dtype=np.float64),
        np.array([w.end for w in windows], dtype=np.float64),
        np.array([w.kind == "scheduled" for w in windows], dtype=bool),
        np.array([w.nodes or 0 for w in windows], dtype=np.int64),
        calendar.announce_lead,
        search,
        platform.power.to_dict() if platform is not None and platform.power else None,
        manager,
        python=python,
        user=jobs["user"].to_numpy(np.int64) if "user" in jobs else None,
        estimates=estimates,
        down_asleep=np.array([w.back == "asleep" for w in windows], dtype=bool),
        max_wait=max_wait,
        groups=[(g.nodes, g.power.to_dict()) for g in platform.groups]
        if platform is not None and platform.heterogeneous
        else None,
        decision_log=decision_log,
    )


def manager_options(
    spec: PolicySpec | PythonPolicySpec, platform: Platform | None
) -> dict[str, Any] | None:
    """Power-manager options: a built-in manager's; on a heterogeneous platform without one,
    a manager that only places jobs (nodes never sleep); or for a Python policy on a platform
    with a power model, node power control with mean transition latencies."""
    if spec.power is not None:
        native: dict[str, Any] = spec.power.to_native()
        return native
    if platform is not None and platform.heterogeneous:
        # Jobs run within one node group: an IPM whose timeout never comes places them.
        placement = PowerSpec(manager="ipm").to_native()
        placement["idle_timeout"] = float("inf")
        return placement
    if isinstance(spec, PythonPolicySpec):
        has_power = platform is not None and platform.power is not None
        return {"sample_transitions": None} if has_power else None
    return None
