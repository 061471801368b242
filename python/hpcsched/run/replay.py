"""Replaying a workload: :func:`simulate`, the entry point. It checks its options, reads the
workload, resolves the run's site once (:mod:`hpcsched.run.site`: the jobs sized for the
machine, the calendar, the partitions, Slurm's inputs), builds the engine
(:mod:`hpcsched.run.native`), drives it to the end in slices (progress, Ctrl-C, logs streamed
to the run directory) and assembles the result (:mod:`hpcsched.run.summary`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import Any

from hpcsched.exceptions import OptionError, unknown_name
from hpcsched.logs import BATCH_ROWS, LogFiles, log_names
from hpcsched.output import RunStaging, check_writable
from hpcsched.policies import RECORDED, PolicySpec
from hpcsched.protocol import Policy, PythonPolicySpec
from hpcsched.run.native import manager_options, native_run, new_simulation
from hpcsched.run.options import DECISION_LOGS, as_policy_spec, check_overrun, resolve_platform
from hpcsched.run.recorded import recorded_result
from hpcsched.run.result import Result
from hpcsched.run.site import RunSite, resolve_site
from hpcsched.run.summary import MODE_COLUMNS, SEARCH_STATS_COLUMNS, build_result
from hpcsched.site.platform import Platform
from hpcsched.workload import DowntimeCalendar, Workload, load_workload

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
    t0 = time.perf_counter()
    read_before = workload.load_seconds if isinstance(workload, Workload) else 0.0
    if not isinstance(workload, Workload):
        workload = load_workload(
            workload,
            format=format,
            # on partitions, jobs are sized in the nodes of their partitions (fit_partitions)
            nodes=None if platform is not None and platform.site is not None else nodes,
            procs_per_node=procs_per_node,
            lenient=lenient,
            strict=strict,
        )
    workload, calendar, site = resolve_site(workload, platform, spec, downtime, announce_lead)
    t1 = time.perf_counter()
    summary: dict[str, Any] = {
        # the reading of a workload given already read counts too (the command line reads first)
        "load_seconds": t1 - t0 + read_before,
        "options": {
            "format": format,
            "procs_per_node": procs_per_node,
            "lenient": lenient,
            "strict": strict,
            "nodes": nodes,
        },
        "downtime_source": None if downtime is None else calendar.source,
    }
    if isinstance(spec, PolicySpec) and spec.name == RECORDED:
        result = recorded_result(workload, calendar, spec, overrun, site, **summary)
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
            site=site,
            search=spec.search.to_native(overrun) if spec.search else None,
            # node power states under a power manager, or a Python policy on a power platform
            manager=manager_options(spec, site.platform),
            python=spec.adapter() if isinstance(spec, PythonPolicySpec) else None,
            estimates=getattr(spec, "estimates", "requested"),
            max_wait=getattr(spec, "max_wait", None),
            decision_log=decision_log,
        )
    )
    return _run(
        sim,
        workload,
        calendar,
        site,
        spec,
        overrun,
        decision_log,
        t1,
        summary,
        out=out,
        csv=csv,
        progress=progress,
    )


def _run(
    sim: Any,
    workload: Workload,
    calendar: DowntimeCalendar,
    site: RunSite,
    spec: PolicySpec | PythonPolicySpec,
    overrun: str,
    decision_log: str,
    started: float,
    summary: dict[str, Any],
    *,
    out: str | os.PathLike[str] | None,
    csv: bool,
    progress: ProgressHook | None,
) -> Result:
    """Drives ``sim`` to the end and assembles its result (``summary``: what
    :func:`~hpcsched.run.summary.build_result` takes of the run's reading); with ``out``, the
    logs go to the run directory's staging folder while the run goes (the columns the summary
    needs stay in memory) and the run directory is committed at the end."""
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
            site,
            decision_log,
            simulate_seconds=t2 - started,
            stored=None if staging is None or files is None else (staging.target, files),
            **summary,
        )
        site.describe(result.info, spec)
        if staging is not None:
            staging.commit(result, csv=csv)
    return result


#: Wall-clock seconds between two progress reports.
PROGRESS_SECONDS = 0.1


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
