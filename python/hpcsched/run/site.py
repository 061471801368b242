"""A run's site, resolved once: :func:`resolve_site` builds a :class:`RunSite` at the start of
a run from the platform, the workload and the policy, and the run reads everything of the
site through it (docs/semantics.md, "Partitions").

Resolving sizes the jobs for the machine (in the nodes of their partitions, within the node
groups, or for a machine of the platform's size), sets each partition window of the calendar to
its partition's nodes, says plainly what does not run on partitions yet, and builds Slurm's
inputs when the policy orders jobs by Slurm's priorities. The run then takes from the
:class:`RunSite` the engine's options, each job's partition in ``jobs.parquet``, the figures by
partition and what the summary says of the assignment and of Slurm's settings."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcsched.exceptions import InputError, OptionError, close_names, did_you_mean, shown
from hpcsched.policies import RECORDED, PolicySpec
from hpcsched.protocol import PythonPolicySpec
from hpcsched.run.options import check_announce_lead, check_power_model
from hpcsched.site.assignment import Assignment, fit_partitions
from hpcsched.site.platform import Platform
from hpcsched.workload import DowntimeCalendar, Workload, read_calendar

if TYPE_CHECKING:
    import pandas as pd

    from hpcsched.site.partitions import Site


@dataclass(frozen=True, eq=False)  # numpy arrays: no field-wise ==
class RunSite:
    """What a run takes of its site: the ``platform`` (None: one pool of the workload's
    nodes, no power model), each job's candidate partitions and its nodes in each
    (``assignment``, on a platform with partitions; a job's node count in the engine is that in
    its first candidate, the workload's ``nodes``) and Slurm's inputs (``slurm``, when the policy
    orders jobs by Slurm's priorities: ``NativeRun.slurm``)."""

    platform: Platform | None = None
    assignment: Assignment | None = None
    slurm: dict[str, Any] | None = None
    #: where jobs share nodes, the nodes' resources and each job's request
    #: (``NativeRun.shared``: :func:`~hpcsched.run.shared.native_shared`); None: whole nodes
    shared: dict[str, Any] | None = None

    @property
    def site(self) -> Site | None:
        """The partitions (None: one pool)."""
        return self.platform.site if self.platform is not None else None

    @property
    def partition_names(self) -> list[str] | None:
        """The partitions' names by index (None: one pool)."""
        site = self.site
        return [p.name for p in site.partitions] if site is not None else None

    def native(self) -> dict[str, Any] | None:
        """The site as the engine takes it (``NativeRun.site``; None: one pool)."""
        if self.site is None or self.assignment is None:
            return None
        native = self.site.to_native()
        native["offsets"] = self.assignment.offsets.astype(np.uint32)
        native["candidates"] = self.assignment.partitions.astype(np.uint32)
        return native

    def recorded_partitions(self) -> np.ndarray | None:
        """Each job's partition as the trace records it (its first candidate; None: one
        pool)."""
        if self.assignment is None:
            return None
        first: np.ndarray = self.assignment.partitions[self.assignment.offsets[:-1]]
        return first

    def partition_column(self, codes: Any) -> pd.Categorical[str]:
        """``jobs.parquet``'s ``partition`` column from partition indices (-1: none)."""
        import pandas as pd

        return pd.Categorical.from_codes(
            np.asarray(codes, np.int64), pd.Index(self.partition_names or [])
        )

    def by_partition(self, table: pd.DataFrame, makespan: float) -> dict[str, Any]:
        """Waits, bounded slowdown and utilization of each partition: of the jobs that ran in
        it, over its nodes from 0 to the makespan (nodes two partitions share count in both);
        where jobs share nodes, of its CPUs."""
        from hpcsched import metrics

        out: dict[str, Any] = {}
        for partition in self.site.partitions if self.site is not None else ():
            ran = table[table["partition"] == partition.name]
            wait = ran["wait"].to_numpy()
            executed = (ran["end"] - ran["start"]).to_numpy()
            if "alloc_cpus" in ran:
                busy = float((executed * ran["alloc_cpus"].to_numpy()).sum())
                capacity = partition.nodes * partition.cores * makespan
            else:
                busy = float((executed * ran["nodes"].to_numpy()).sum())
                capacity = partition.nodes * makespan
            out[partition.name] = {
                "nodes": partition.nodes,
                "tier": partition.tier,
                "jobs": len(ran),
                "wait": metrics.wait_stats(wait),
                "bounded_slowdown_mean": float(metrics.bounded_slowdown(wait, executed).mean())
                if len(ran)
                else None,
                "utilization": busy / capacity if capacity > 0 else None,
            }
        return out

    def describe(self, info: dict[str, Any], spec: PolicySpec | PythonPolicySpec) -> None:
        """What a simulated run's summary says of its site: under Slurm's settings, the
        slurm.conf and what differs from Slurm's defaults (``inputs.slurm``, and a warning when
        there is no slurm.conf); on partitions, how jobs were placed (``inputs.assignment``)."""
        if self.slurm is not None:
            from hpcsched.site.slurm.used import defaults_warning, slurm_conf_of, slurm_used

            info["inputs"]["slurm"] = slurm_used(self.platform)
            if slurm_conf_of(self.platform) is None:
                policy = isinstance(spec, PolicySpec) and spec.engine_name == "slurm"
                info["warnings"].append(defaults_warning(policy))
        if self.assignment is not None:
            info["inputs"]["assignment"] = {
                "how": self.assignment.how,
                "unknown_names": self.assignment.unknown_names,
            }


def resolve_site(
    workload: Workload,
    platform: Platform | None,
    spec: PolicySpec | PythonPolicySpec,
    downtime: DowntimeCalendar | str | os.PathLike[str] | None,
    announce_lead: float | None,
) -> tuple[Workload, DowntimeCalendar, RunSite]:
    """The run's workload sized for its machine, its calendar (read, checked against the
    machine, in the replay clock, partition windows sized) and its :class:`RunSite`; an
    ``OptionError`` or ``InputError`` for what cannot run, before the run."""
    check_power_model(spec, platform)
    workload, site = fit_site(workload, platform)
    if len(workload) == 0:
        raise InputError(f"no job to replay{_skips(workload)}", path=workload.source)
    calendar = _partition_windows(_calendar(downtime, announce_lead, workload), site)
    recorded = isinstance(spec, PolicySpec) and spec.name == RECORDED
    if site.platform is not None and site.site is not None and not recorded:
        _check_partitioned_run(spec, site.platform, calendar)
    if site.platform is not None and site.platform.shared:
        from hpcsched.run.shared import native_shared

        if not recorded:
            _check_shared_run(spec, site.platform, calendar)
        site = replace(site, shared=native_shared(workload, site.platform, site.assignment))
    notes = _unsimulated_resources(site.platform)
    if notes:
        workload = replace(workload, warnings=[*workload.warnings, *notes])
    if isinstance(spec, PolicySpec) and (
        spec.engine_name == "slurm" or (spec.search is not None and spec.search.orders_by_slurm)
    ):
        from hpcsched.site.slurm.policy import slurm_inputs

        inputs = slurm_inputs(
            workload,
            platform,
            workload.nodes,
            platform.slurm.accounts if platform is not None and platform.slurm else None,
            site.partition_names,
            origin=workload.unix_start_time or 0.0,
        )
        native = inputs.native
        if site.shared is not None and site.platform is not None:
            from hpcsched.run.shared import asked_tres, slurm_job_cpus

            # (what a job asks is what it is given: its size does not settle later)
            native = {
                **native,
                "job_cpus": slurm_job_cpus(site.shared, site.platform),
                "job_requested_cpus": np.zeros(0, np.int64),
                "job_tres": asked_tres(site.shared, site.platform, native["tres"]),
            }
        native = {**native, **_tres_inputs(workload, site, native)}
        site = replace(site, slurm=native)
        if inputs.notes:
            workload = replace(workload, warnings=[*workload.warnings, *inputs.notes])
    return workload, calendar, site


def fit_site(workload: Workload, platform: Platform | None) -> tuple[Workload, RunSite]:
    """``workload`` sized for ``platform``'s machine, with what reading the platform noticed
    among its warnings: on partitions, each job in the nodes of its partitions
    (:func:`~hpcsched.site.assignment.fit_partitions`); on node groups, without the jobs larger
    than every group; else read for a machine of the platform's size (an ``OptionError``
    otherwise)."""
    if platform is None:
        return workload, RunSite()
    if platform.notes:
        workload = replace(workload, warnings=[*workload.warnings, *platform.notes])
    if platform.site is not None:
        workload, assignment = fit_partitions(workload, platform)
        return workload, RunSite(platform, assignment)
    if workload.nodes != platform.nodes:
        raise OptionError(
            f"the workload was read for {workload.nodes} nodes but platform {platform.name} has "
            f"{platform.nodes}; read it with nodes={platform.nodes}",
            option="--platform",
        )
    if platform.heterogeneous:
        workload = _fit_groups(workload, platform)
    return workload, RunSite(platform)


def agent_site(workload: Workload, platform: Platform | None) -> tuple[Workload, RunSite]:
    """What a learning agent's episode runs on: ``workload`` sized as :func:`fit_site` does,
    and the site with each job's request where jobs share nodes (as a run resolves it)."""
    workload, site = fit_site(workload, platform)
    if platform is not None and platform.shared:
        from hpcsched.run.shared import native_shared

        site = replace(site, shared=native_shared(workload, platform, site.assignment))
    return workload, site


def _fit_groups(workload: Workload, platform: Platform) -> Workload:
    """The workload without the jobs larger than every node group (they could never run),
    counted as skipped."""
    largest = max(g.nodes for g in platform.groups)
    too_big = workload.jobs["nodes"].to_numpy() > largest
    if not too_big.any():
        return workload
    skipped = dict(workload.skipped)
    skipped["larger than any node group"] = int(too_big.sum())
    return replace(
        workload,
        jobs=workload.jobs[~too_big].reset_index(drop=True),
        skipped=skipped,
        warnings=[
            *workload.warnings,
            f"{int(too_big.sum())} jobs need more than {largest} nodes, the largest node group "
            f"of {platform.name}: skipped",
        ],
    )


def _skips(workload: Workload) -> str:
    """``: every job was skipped (unknown run time: 3, ...)`` when the reader skipped some."""
    reasons = ", ".join(f"{k}: {v}" for k, v in workload.skipped.items() if v)
    return f": every job was skipped ({reasons})" if reasons else ""


def _calendar(
    downtime: DowntimeCalendar | str | os.PathLike[str] | None,
    announce_lead: float | None,
    workload: Workload,
) -> DowntimeCalendar:
    lead = check_announce_lead(announce_lead)
    if downtime is None:
        return DowntimeCalendar((), announce_lead=lead)
    if not isinstance(downtime, DowntimeCalendar):
        downtime = read_calendar(downtime, announce_lead=lead)
    elif announce_lead is not None:
        downtime = DowntimeCalendar(downtime.windows, announce_lead=lead, source=downtime.source)
    downtime.validate_against(workload.nodes)
    # Calendars are in the trace's clock; the replay clock starts at the first submission.
    return downtime.shifted(workload.time_origin)


def _partition_windows(calendar: DowntimeCalendar, site: RunSite) -> DowntimeCalendar:
    """``calendar`` with each ``partition=`` window's node count set to its partition's (what
    the summaries count down); an ``InputError`` naming the file and line for a partition the
    platform lacks, or any partition window on a platform without partitions."""
    named = [w for w in calendar if w.partition is not None]
    if not named:
        return calendar
    sizes = {p.name: p.nodes for p in site.site.partitions} if site.site is not None else {}
    windows = []
    for w in calendar:
        if w.partition is None:
            windows.append(w)
            continue
        if w.partition not in sizes:
            where = (
                f"platform {site.platform.name}"
                if site.platform is not None
                else "the run (no platform)"
            )
            close = did_you_mean(close_names(w.partition, list(sizes)))
            raise InputError(
                f"partition {shown(w.partition)} is not a partition of {where}"
                + (f"; {close}" if close else ""),
                path=calendar.source,
                line=w.line,
                field="partition",
            )
        windows.append(replace(w, nodes=sizes[w.partition]))
    return replace(calendar, windows=tuple(windows))


def _unsimulated_resources(platform: Platform | None) -> list[str]:
    """What the run says of a platform's resources it does not follow: memory and generic
    resources on whole nodes; where jobs share nodes, groups of different power (the energy
    counts every node at the first group's)."""
    if platform is None:
        return []
    if platform.shared:
        models = {g.power for g in platform.groups if g.power is not None}
        if len(models) < 2:
            return []
        return [
            f"platform {platform.name}: its groups draw different power, and where jobs share "
            "nodes the energy counts every node at the first group's (not yet per group)"
        ]
    given = [
        key
        for key, on in (
            ("memory", any(g.memory for g in platform.groups)),
            ("gres", any(g.gres for g in platform.groups)),
        )
        if on
    ]
    if not given:
        return []
    return [
        f"platform {platform.name}: the groups' {' and '.join(given)} "
        f"{'are' if len(given) > 1 else 'is'} read and not simulated: jobs get whole nodes "
        '(sharing = "whole"; see docs/formats.md)'
    ]


def _check_shared_run(
    spec: PolicySpec | PythonPolicySpec, platform: Platform, calendar: DowntimeCalendar
) -> None:
    """An ``OptionError`` for what does not run on shared nodes yet (said plainly, before the
    run): the queue heuristics, with or without EASY, SNF, Slurm's scheduler, the
    look-aheads (without future arrivals) and Python policies do, under a downtime calendar
    too."""
    from hpcsched import _core

    unsupported = None
    if isinstance(spec, PythonPolicySpec):
        if spec.is_power:
            unsupported = ("a power manager", "--power")
    elif (
        spec.engine_name not in (*_core.heuristic_names(), "snf", "slurm") and spec.search is None
    ) or spec.is_power:
        unsupported = (f"policy {spec.name}", "--policy")
    elif spec.search is not None and spec.search.arrivals != "none":
        # (the requests of jobs that have not arrived are not known)
        unsupported = ("a look-ahead with future arrivals", "--arrivals")
    elif spec.max_wait is not None:
        unsupported = ("SNF's maximum wait", "--max-wait")
    elif getattr(spec, "estimates", "requested") != "requested":
        unsupported = ("EASY on predicted run times", "--estimates")
    if unsupported is not None:
        what, option = unsupported
        raise OptionError(
            f"on platform {platform.name} jobs share nodes (sharing = {platform.sharing}), and "
            f"{what} does not run on shared nodes yet; the queue heuristics (fcfs, wfp3, ..., "
            "with or without EASY), snf, slurm, the look-aheads mars and random (without "
            "--arrivals) and Python policies do (docs/semantics.md, 'What runs where')",
            option=option,
        )


def _check_partitioned_run(
    spec: PolicySpec | PythonPolicySpec, platform: Platform, calendar: DowntimeCalendar
) -> None:
    """An ``OptionError`` for what does not run on partitions yet (said plainly, before the
    run)."""
    unsupported = None
    if isinstance(spec, PythonPolicySpec):
        pass  # it names jobs; the engine finds their partitions and nodes
    elif spec.search is not None and spec.search.arrivals != "none":
        # (the partitions of jobs that have not arrived are not known)
        unsupported = ("a look-ahead with future arrivals", "--arrivals")
    elif spec.is_power:
        unsupported = ("a power manager", "--policy")
    elif getattr(spec, "estimates", "requested") != "requested":
        unsupported = ("EASY on predicted run times", "--estimates")
    if unsupported is not None:
        what, option = unsupported
        raise OptionError(
            f"platform {platform.name} has partitions, and {what} does not run on partitions "
            "yet; heuristics (with or without EASY), SNF, slurm, mars and random (without "
            "--arrivals) and Python policies do (docs/semantics.md, 'What runs where')",
            option=option,
        )


def _tres_inputs(workload: Workload, site: RunSite, native: dict[str, Any]) -> dict[str, Any]:
    """Slurm's billable TRES and TRES priority terms of each job (``job_billing``,
    ``job_tres_priority``: :mod:`hpcsched.site.slurm.tres`), when the slurm.conf weighs TRES."""
    from hpcsched.site.slurm.tres import JobTres, partition_totals, tres_columns

    platform = site.platform
    settings = platform.slurm if platform is not None else None
    if platform is None or settings is None:
        return {}
    if not settings.tres_weights and not settings.billing_weights:
        return {}
    nodes = workload.jobs["nodes"].to_numpy(np.int64)
    if site.shared is not None:
        from hpcsched.run.shared import shared_job_tres

        tres = shared_job_tres(site.shared, platform, nodes)
    else:
        least = min((g.memory for g in platform.groups), default=0)
        tres = JobTres(
            cpu=np.asarray(native["job_cpus"], np.float64),
            mem=(nodes * least).astype(np.float64),
            node=nodes.astype(np.float64),
            gres={},
        )
    groups = [(g.nodes, g.cores, g.memory, dict(g.gres)) for g in platform.groups] or [
        (platform.nodes, 1, 0, {})
    ]
    names: list[str | None] = [None]
    if platform.site is None:
        members = [np.arange(platform.nodes)]
    else:
        members = [
            np.concatenate([np.arange(a, b) for a, b in p.ranges]) for p in platform.site.partitions
        ]
        names = [p.name for p in platform.site.partitions]
    first = site.recorded_partitions()
    first = np.zeros(len(nodes), np.int64) if first is None else first
    return tres_columns(
        tres,
        settings.tres_weights,
        [settings.billing_weights.get(name) if name else None for name in names],
        first,
        partition_totals(groups, members),
        settings.max_tres,
        settings.normal_tres,
    )
