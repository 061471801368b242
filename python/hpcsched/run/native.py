"""Building the engine: a ``_core.Simulation`` from a workload, a downtime calendar, the run's
site (:class:`~hpcsched.run.site.RunSite`) and a policy, through the one record the engine
takes (``NativeRun``: its arrays of jobs and windows, the power model, the partitions and each
job's candidates, the policy's and the power manager's options)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from hpcsched import _core
from hpcsched.policies import PolicySpec, PowerSpec
from hpcsched.protocol import PythonPolicySpec
from hpcsched.run.site import RunSite
from hpcsched.site.platform import Platform
from hpcsched.workload import DowntimeCalendar, Workload


@dataclass(frozen=True, eq=False)
class NativeRun:
    """One run as the engine takes it (``_core.Simulation(run)``): the jobs and the downtime
    windows as columns (``down_nodes`` 0: the whole machine), the machine's size, power model
    and node groups, and the policy with its options by name; the engine reads every name."""

    job_id: npt.NDArray[np.int64]
    submit: npt.NDArray[np.float64]
    run_time: npt.NDArray[np.float64]
    requested_time: npt.NDArray[np.float64]
    nodes: npt.NDArray[np.int64]
    user: npt.NDArray[np.int64] | None
    machine_nodes: int
    power: dict[str, float] | None
    groups: list[tuple[int, dict[str, float]]] | None
    #: partitions and each job's candidates (``RunSite.native``); None: one pool
    site: dict[str, Any] | None
    #: where jobs share nodes, their resources and requests (``RunSite.shared``); None: whole
    #: nodes
    shared: dict[str, Any] | None
    down_start: npt.NDArray[np.float64]
    down_end: npt.NDArray[np.float64]
    down_scheduled: npt.NDArray[np.bool_]
    down_nodes: npt.NDArray[np.int64]
    down_asleep: npt.NDArray[np.bool_]
    #: the partition each window takes down (-1: none), indices into the site's partitions
    down_partition: npt.NDArray[np.int64]
    #: the node range ``[first, end)`` each window takes down (first -1: none)
    down_range_first: npt.NDArray[np.int64]
    down_range_end: npt.NDArray[np.int64]
    announce_lead: float
    overrun: str
    policy: str
    window: int | None
    backfill: str
    estimates: str
    max_wait: float | None
    search: dict[str, Any] | None
    manager: dict[str, Any] | None
    python: Any
    decision_log: str
    #: Slurm's settings, tree, QOS and job attributes for the policy ``slurm``
    #: (``RunSite.slurm``: ``site.slurm.policy.slurm_inputs``); None otherwise
    slurm: dict[str, Any] | None = None


def native_run(
    workload: Workload,
    calendar: DowntimeCalendar,
    policy: str,
    window: int | None = None,
    backfill: str = "easy",
    *,
    overrun: str = "continue",
    site: RunSite | None = None,
    search: dict[str, Any] | None = None,
    manager: dict[str, Any] | None = None,
    python: Any = None,
    estimates: str = "requested",
    max_wait: float | None = None,
    decision_log: str = "compact",
) -> NativeRun:
    """The run of `workload` (replay clock, sized for the machine) and `calendar` (already
    shifted to it) on `site` (None: one pool of the workload's nodes)."""
    site = site or RunSite()
    platform = site.platform
    jobs = workload.jobs
    return NativeRun(
        job_id=jobs["job_id"].to_numpy(np.int64),
        submit=jobs["submit"].to_numpy(np.float64),
        run_time=jobs["run_time"].to_numpy(np.float64),
        requested_time=jobs["requested_time"].to_numpy(np.float64),
        nodes=jobs["nodes"].to_numpy(np.int64),
        user=jobs["user"].to_numpy(np.int64) if "user" in jobs else None,
        machine_nodes=workload.nodes,
        power=platform.power.to_dict() if platform is not None and platform.power else None,
        groups=_power_groups(platform),
        site=site.native(),
        shared=site.shared,
        **calendar.columns(site.partition_names, shared=site.shared is not None),
        announce_lead=calendar.announce_lead,
        overrun=overrun,
        policy=policy,
        window=window,
        backfill=backfill,
        estimates=estimates,
        max_wait=max_wait,
        search=search,
        manager=manager,
        python=python,
        decision_log=decision_log,
        slurm=site.slurm,
    )


def new_simulation(run: NativeRun) -> Any:
    """The engine for ``run`` (``native_run`` builds it)."""
    return _core.Simulation(run)


def manager_options(
    spec: PolicySpec | PythonPolicySpec, platform: Platform | None
) -> dict[str, Any] | None:
    """Power-manager options: a built-in manager's; on a heterogeneous platform without one,
    a manager that only places jobs (nodes never sleep); or for a Python policy on a platform
    with a power model, node power control with mean transition latencies."""
    if spec.power is not None:
        native: dict[str, Any] = spec.power.to_native()
        return native
    if (
        platform is not None
        and platform.heterogeneous
        and platform.site is None
        and not platform.shared
    ):
        # Jobs run within one node group: an IPM whose timeout never comes places them.
        placement = PowerSpec(manager="ipm").to_native()
        placement["idle_timeout"] = float("inf")
        return placement
    if isinstance(spec, PythonPolicySpec):
        has_power = platform is not None and platform.power is not None
        return {"sample_transitions": None} if has_power else None
    return None


def _power_groups(platform: Platform | None) -> list[tuple[int, dict[str, float]]] | None:
    """The node groups of a platform of several groups with their power models: on one pool
    the engine places jobs in them; on partitions (which say where jobs run) they only say
    what each node draws, for the energy."""
    if (
        platform is None
        or not platform.heterogeneous
        or platform.shared  # (placement on shared nodes is Slurm's rule, not node groups)
    ):
        return None
    groups = [(g.nodes, g.power.to_dict()) for g in platform.groups if g.power is not None]
    return groups if len(groups) == len(platform.groups) else None
