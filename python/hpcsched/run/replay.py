"""Replaying a workload: :func:`simulate`, the entry point. It checks its options, reads the
workload and the calendar, builds the engine (:mod:`hpcsched.run.native`), drives it to the end
in slices (progress, Ctrl-C, logs streamed to the run directory) and assembles the result
(:mod:`hpcsched.run.summary`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hpcsched.exceptions import InputError, OptionError, unknown_name
from hpcsched.logs import BATCH_ROWS, LogFiles, log_names
from hpcsched.output import RunStaging, check_writable
from hpcsched.policies import RECORDED, PolicySpec
from hpcsched.protocol import Policy, PythonPolicySpec
from hpcsched.run.native import manager_options, native_run, new_simulation
from hpcsched.run.options import (
    DECISION_LOGS,
    as_policy_spec,
    check_announce_lead,
    check_overrun,
    check_power_model,
    resolve_platform,
)
from hpcsched.run.partitions import (
    check_partitioned_run,
    fit_partitions,
    partition_windows,
    site_options,
)
from hpcsched.run.recorded import recorded_result
from hpcsched.run.result import Result
from hpcsched.run.summary import MODE_COLUMNS, SEARCH_STATS_COLUMNS, build_result
from hpcsched.site.platform import Platform
from hpcsched.workload import DowntimeCalendar, Workload, load_workload, read_calendar

#: Called with (simulated time, jobs submitted, scheduling invocations) as a run progresses.
ProgressHook = Callable[[float, int, int], None]


def simulate(
    workload: Workload | str | os.PathLike[str],
    policy: str | PolicySpec | PythonPolicySpec | Policy = "fcfs",
    *,
    window: int | None = None,
    backfill: str | None = None,
    nodes: int | None = None,
    procs_per_node: int | str = 1,
    format: str | None = None,
    lenient: bool = False,
    strict: bool = False,
    downtime: DowntimeCalendar | str | os.PathLike[str] | None = None,
    announce_lead: float | None = None,
    overrun: str = "continue",
    platform: Platform | str | None = None,
    out: str | os.PathLike[str] | None = None,
    csv: bool = False,
    progress: ProgressHook | None = None,
    decision_log: str = "compact",
) -> Result:
    """Replays ``workload`` (a :class:`Workload` or a trace path) under ``policy``.

    ``policy`` is a name (a MARS Table II heuristic such as ``fcfs``, ``wfp3``, ``sjf``, or
    ``snf``) with ``window`` and ``backfill``, a :class:`PolicySpec`, a Python policy (an
    object with ``decide(view)``, see :mod:`hpcsched.protocol`) or ``"python:MODULE:CLASS"``.
    ``downtime`` is a calendar file or object in the trace's clock. ``platform`` (a preset name
    such as
    ``"AOBA-64"``, a TOML file or a :class:`Platform`) sets the machine size and, with a power
    model, adds energy to the summary. With ``out``, the run directory is written
    (atomically). ``progress`` is called with (simulated time, jobs submitted) as the run goes.
    ``decision_log`` is ``compact`` (one row of scalars per decision) or ``full`` (also every
    candidate of each decision: MARS's distinct outcomes, the power manager's spare targets).
    """
    if decision_log not in DECISION_LOGS:
        raise OptionError(
            unknown_name("decision log", decision_log, DECISION_LOGS),
            option="--decision-log",
        )
    spec = as_policy_spec(policy, window, backfill)
    check_overrun(overrun)
    if out is not None:
        check_writable(out)  # before the run, not after it
    platform, nodes = resolve_platform(platform, nodes)
    site = platform.site if platform is not None else None
    t0 = time.perf_counter()
    read_before = workload.load_seconds if isinstance(workload, Workload) else 0.0
    if not isinstance(workload, Workload):
        workload = load_workload(
            workload,
            format=format,
            # on partitions, jobs are sized in the nodes of their partitions (fit_partitions)
            nodes=None if site is not None else nodes,
            procs_per_node=procs_per_node,
            lenient=lenient,
            strict=strict,
        )
    check_power_model(spec, platform)
    if platform is not None and platform.notes:
        workload = replace(workload, warnings=[*workload.warnings, *platform.notes])
    assignment = None
    if platform is not None and site is not None:
        workload, assignment = fit_partitions(workload, platform)
    elif platform is not None and workload.nodes != platform.nodes:
        raise OptionError(
            f"the workload was read for {workload.nodes} nodes but platform {platform.name} has "
            f"{platform.nodes}; read it with nodes={platform.nodes}",
            option="--platform",
        )
    if platform is not None and platform.heterogeneous and site is None:
        workload = _fit_groups(workload, platform)
    if len(workload) == 0:
        raise InputError(f"no job to replay{_skips(workload)}", path=workload.source)
    calendar = partition_windows(_calendar(downtime, announce_lead, workload), platform)
    recorded = isinstance(spec, PolicySpec) and spec.name == RECORDED
    if platform is not None and site is not None and not recorded:
        check_partitioned_run(spec, platform, calendar)
    slurm = None
    if isinstance(spec, PolicySpec) and (
        spec.engine_name == "slurm" or (spec.search is not None and spec.search.orders_by_slurm)
    ):
        from hpcsched.site.slurm.policy import slurm_inputs

        inputs = slurm_inputs(
            workload,
            platform,
            workload.nodes,
            platform.slurm.accounts if platform is not None and platform.slurm else None,
            [p.name for p in site.partitions] if site is not None else None,
            origin=workload.unix_start_time or 0.0,
        )
        slurm = inputs.native
        if inputs.notes:
            workload = replace(workload, warnings=[*workload.warnings, *inputs.notes])
    # node power states under a power manager, or a Python policy on a power platform
    manager = manager_options(spec, platform)
    t1 = time.perf_counter()
    # the reading of a workload given already read counts too (the command line reads first)
    load_seconds = t1 - t0 + read_before
    options = {
        "format": format,
        "procs_per_node": procs_per_node,
        "lenient": lenient,
        "strict": strict,
        "nodes": nodes,
    }
    downtime_source = None if downtime is None else calendar.source
    if isinstance(spec, PolicySpec) and spec.name == RECORDED:
        result = recorded_result(
            workload,
            calendar,
            spec,
            overrun,
            platform,
            load_seconds=load_seconds,
            options=options,
            downtime_source=downtime_source,
            partitions=None
            if assignment is None
            else assignment.partitions[assignment.offsets[:-1]],
        )
        if out is not None:
            with RunStaging(out) as recorded_staging:
                recorded_staging.commit(result, csv=csv)
        return result

    sim = new_simulation(
        native_run(
            workload,
            calendar,
            spec.engine_name,
            spec.window,
            str(spec.backfill),  # resolved by the spec
            overrun=overrun,
            platform=platform,
            search=spec.search.to_native(overrun) if spec.search else None,
            manager=manager,
            python=spec.adapter() if isinstance(spec, PythonPolicySpec) else None,
            estimates=getattr(spec, "estimates", "requested"),
            max_wait=getattr(spec, "max_wait", None),
            decision_log=decision_log,
            site=site_options(site, assignment) if site is not None and assignment else None,
            slurm=slurm,
        )
    )
    # With a run directory, the logs go to its staging folder while the run goes; the columns
    # the summary needs stay in memory.
    search_log, power_log_name = log_names(spec.search is not None)
    summary_columns = {}
    if spec.search is not None:
        summary_columns[search_log] = SEARCH_STATS_COLUMNS
    if spec.is_power:
        summary_columns[power_log_name] = MODE_COLUMNS
    with contextlib.ExitStack() as cleanup:
        staging = None if out is None else cleanup.enter_context(RunStaging(out))
        files = None
        if staging is not None:
            files = LogFiles(
                staging.folder,
                search=spec.search is not None,
                power=spec.is_power,
                keep=summary_columns,
            )
            cleanup.callback(files.close)
        _drive(sim, progress, files)
        t2 = time.perf_counter() - (0.0 if files is None else files.seconds)
        if files is not None:
            files.flush(sim, final=True)
            files.close()
        result = build_result(
            sim,
            workload,
            calendar,
            spec,
            overrun,
            platform,
            decision_log,
            load_seconds=load_seconds,
            simulate_seconds=t2 - t1,
            options=options,
            downtime_source=downtime_source,
            stored=None if staging is None or files is None else (staging.target, files),
        )
        if slurm is not None:
            _say_slurm_settings(result.info, spec, platform)
        if assignment is not None:
            result.info["inputs"]["assignment"] = {
                "how": assignment.how,
                "unknown_names": assignment.unknown_names,
            }
        if staging is not None:
            staging.commit(result, csv=csv)
    return result


def _say_slurm_settings(
    info: dict[str, Any], spec: PolicySpec | PythonPolicySpec, platform: Platform | None
) -> None:
    """A run under Slurm's settings: the slurm.conf and what differs from Slurm's defaults
    in ``inputs.slurm``, and a warning when there is no slurm.conf (Slurm's defaults)."""
    from hpcsched.site.slurm.used import defaults_warning, slurm_conf_of, slurm_used

    info["inputs"]["slurm"] = slurm_used(platform)
    if slurm_conf_of(platform) is None:
        policy = isinstance(spec, PolicySpec) and spec.engine_name == "slurm"
        info["warnings"].append(defaults_warning(policy))


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


#: Wall-clock seconds between two progress reports.
PROGRESS_SECONDS = 0.1


def _skips(workload: Workload) -> str:
    """``: every job was skipped (unknown run time: 3, ...)`` when the reader skipped some."""
    reasons = ", ".join(f"{k}: {v}" for k, v in workload.skipped.items() if v)
    return f": every job was skipped ({reasons})" if reasons else ""


def _drive(sim: Any, progress: ProgressHook | None, files: LogFiles | None = None) -> None:
    """Runs to the end in slices of a bounded number of event times (never of simulated time:
    jobs may run for years after the last submission, a window may lie centuries ahead), so
    that a Ctrl-C stops a run within a slice even though the engine runs without the GIL, and
    ``progress`` hears how it goes. Slices grow or shrink to last about 0.1 s; where the run
    pauses does not change its results. Between slices, logs past a batch go to ``files``."""
    events = 256
    more = True
    while more:
        started = time.perf_counter()
        more = sim.run_events(events)
        if progress is not None:
            progress(sim.now, sim.submitted, sim.invocations)
        if files is not None and sim.pending_log_rows >= BATCH_ROWS:
            files.flush(sim)
        elapsed = time.perf_counter() - started
        if elapsed < PROGRESS_SECONDS / 2:
            events = min(2 * events, 1 << 24)
        elif elapsed > 2 * PROGRESS_SECONDS:
            events = max(events // 2, 1)
