"""What a finished simulation amounts to: the job table, the summary (``summary.json``: inputs,
wait, slowdown, utilisation, downtime, energy, search statistics, timing) and the
:class:`~hpcsched.run.result.Result` that holds them with the logs."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from hpcsched import _core, metrics
from hpcsched.agreement import against_record
from hpcsched.classes import SIZE_CLASSES, size_class_codes
from hpcsched.logs import (
    DECISIONS,
    LOG_FILES,
    POWER_DECISIONS,
    TIMELINE,
    LogFiles,
    log_names,
    take_logs,
)
from hpcsched.policies import RECORDED, PolicySpec
from hpcsched.protocol import PythonPolicySpec
from hpcsched.run.never_started import (
    held_column,
    held_summary,
    never_started_summary,
)
from hpcsched.run.refusals import rejected_column, rejected_summary
from hpcsched.run.result import LogFrame, Result, StoredLog
from hpcsched.run.site import RunSite
from hpcsched.site.platform import Platform
from hpcsched.workload import DowntimeCalendar, Workload
from hpcsched.workload.record import has_record

START_KINDS = tuple(_core.start_kind_names())

#: The columns of a decision log that the summary reads (``metrics.search_stats``,
#: ``metrics.mode_occupancy``).
SEARCH_STATS_COLUMNS = ["time", "outcomes", "iterations", "drain", "seconds"]
MODE_COLUMNS = ["time", "mode"]


def build_result(
    sim: Any,
    workload: Workload,
    calendar: DowntimeCalendar,
    spec: PolicySpec | PythonPolicySpec,
    overrun: str,
    site: RunSite,
    decision_log: str,
    *,
    load_seconds: float,
    simulate_seconds: float,
    options: dict[str, Any],
    downtime_source: str | None,
    stored: tuple[str, LogFiles] | None,
) -> Result:
    """The run's outcome from the finished simulation; ``stored``: the run directory and the
    logs written to its staging folder (the result reads them from the run directory on first
    use)."""
    raw = sim.results()
    table = job_table(workload, raw)
    if site.site is not None and "partition" in raw:
        table["partition"] = site.partition_column(raw["partition"])
    if "alloc_cpus" in raw:
        # what each job took on shared nodes (its nodes as index ranges; -1: never started)
        table["alloc_nodes"] = pd.Series(raw["alloc_nodes"], dtype="string")
        table["alloc_cpus"] = raw["alloc_cpus"].astype(np.int64)
        table["alloc_memory_mb"] = raw["alloc_memory"].astype(np.int64)
        table["alloc_gres"] = pd.Series(raw["alloc_gres"], dtype="string")
    elif "alloc_nodes" in raw:
        # whole nodes on a site: the nodes of each job's atoms, named (hpcsched.layout)
        table["alloc_nodes"] = pd.Series(raw["alloc_nodes"], dtype="string")
    if "rejected" in raw:
        table["rejected"] = rejected_column(raw)
    if "held" in raw:
        started = table["start"].notna().to_numpy()
        table["held"] = held_column(np.asarray(raw["held"], np.int64), started)
    lost = pd.DataFrame(
        {
            "job_index": raw["lost_job"],
            "start": raw["lost_start"],
            "end": raw["lost_end"],
            "nodes": workload.jobs["nodes"].to_numpy()[raw["lost_job"].astype(np.int64)],
        }
    )
    if "lost_alloc_nodes" in raw:
        lost["alloc_nodes"] = pd.Series(raw["lost_alloc_nodes"], dtype="string")
    info = summary_info(
        workload,
        calendar,
        spec,
        overrun,
        table,
        lost,
        raw,
        load_seconds=load_seconds,
        simulate_seconds=simulate_seconds,
        options=options,
        downtime_source=downtime_source,
        platform=site.platform,
        decision_log=decision_log,
    )
    if site.site is not None and "partition" in table:
        info["partitions"] = site.by_partition(table, info["makespan"])
    if "rejected" in table:
        info["jobs"]["rejected"] = rejected_summary(table)
    if "held" in table:
        info["jobs"]["held"] = held_summary(table)
    reservations = pd.DataFrame(
        {
            "time": raw["reservation_time"],
            "job_index": raw["reservation_job"].astype(np.int64),
            "shadow_time": raw["reservation_shadow"],
            "extra": raw["reservation_extra"].astype(np.int64),
        }
    )
    if has_record(workload):
        shared = site.platform if site.platform is not None and site.platform.shared else None
        cpus = metrics.platform_cpus(shared) if shared is not None else None
        info["agreement"] = against_record(table, workload, calendar, lost, cpus=cpus)
    if "energy_by_state_j" in raw:
        info["energy"] = metrics.energy_summary(
            raw["energy_by_state_j"], raw["node_seconds"], raw["horizon"]
        )
        if site.platform is not None and "partitions" in info:
            from hpcsched.run.partition_energy import partition_energy

            # each partition's nodes: computing, idle (wasted), in all
            by_partition = partition_energy(
                table, lost, calendar, site.platform, float(raw["horizon"])
            )
            for name, energy in by_partition.items():
                info["partitions"][name]["energy"] = energy
    search_name, power_name = log_names(spec.search is not None)
    logs: dict[str, LogFrame]
    summary_log: Callable[[str], pd.DataFrame]
    if stored is None:
        frames = take_logs(sim, search=spec.search is not None, power=spec.is_power)
        logs = dict(frames)
        summary_log = frames.__getitem__
    else:
        target, files = stored
        written = files.paths()
        logs = {
            name: StoredLog(os.path.join(target, name)) if name in written else pd.DataFrame()
            for name in LOG_FILES
        }
        summary_log = files.kept
    if spec.search is not None:
        info["search"] = metrics.search_stats(summary_log(search_name))
    if spec.is_power:
        info["energy"]["mode_occupancy"] = metrics.mode_occupancy(
            summary_log(power_name), raw["horizon"]
        )
    return Result(
        jobs=table,
        info=info,
        lost=lost,
        reservations=reservations,
        decisions=logs.get(DECISIONS, pd.DataFrame()),
        timeline=logs.get(TIMELINE, pd.DataFrame()),
        workload=workload,
        calendar=calendar,
        power_decisions=logs.get(POWER_DECISIONS, pd.DataFrame()),
    )


def job_table(workload: Workload, raw: dict[str, Any]) -> pd.DataFrame:
    jobs = workload.jobs
    start, end = raw["start"], raw["end"]
    kind_codes = np.where(np.isnan(start), -1, raw["start_kind"].astype(np.int8))
    table = pd.DataFrame(
        {
            "job_id": jobs["job_id"].to_numpy(),
            "submit": jobs["submit"].to_numpy(),
            "start": start,
            "end": end,
            "wait": start - jobs["submit"].to_numpy(),
            "nodes": jobs["nodes"].to_numpy(),
            "requested_time": jobs["requested_time"].to_numpy(),
            "run_time": jobs["run_time"].to_numpy(),
            "size_class": pd.Categorical.from_codes(
                np.asarray(size_class_codes(jobs["nodes"].to_numpy(), workload.nodes), np.int8),
                pd.Index(SIZE_CLASSES),
            ),
            "start_kind": pd.Categorical.from_codes(
                np.asarray(kind_codes, np.int8), pd.Index(START_KINDS)
            ),
            "requeues": raw["requeues"].astype(np.int64),
            "killed": raw["killed"],
            "user": jobs["user"].to_numpy() if "user" in jobs else -1,
        },
        copy=False,  # one block per column: no consolidated copy of a million-row table
    )
    if "energy_by_state_j" in raw:
        # computing energy of each job's final attempt (platforms with a power model)
        table["energy_kwh"] = raw["energy_j"] / 3.6e6
    return table


def _utilization(
    table: pd.DataFrame,
    lost: pd.DataFrame,
    workload: Workload,
    calendar: DowntimeCalendar,
    platform: Platform | None,
    last_end: float,
) -> dict[str, Any]:
    """Utilization over uptime: of the nodes, or where jobs share nodes of the CPUs, with each
    resource's beside (``by_resource``)."""
    horizon = (0.0, last_end)
    if platform is None or not platform.shared or "alloc_cpus" not in table:
        return metrics.utilization(table, lost, workload.nodes, calendar, horizon)
    cpus = table.assign(nodes=table["alloc_cpus"].clip(lower=0))
    out = metrics.utilization(cpus, lost, metrics.platform_cpus(platform), calendar, horizon)
    out["basis"] = "cpus"
    out["by_resource"] = metrics.resource_utilization(table, platform, horizon)
    return out


def summary_info(
    workload: Workload,
    calendar: DowntimeCalendar,
    spec: PolicySpec | PythonPolicySpec,
    overrun: str,
    table: pd.DataFrame,
    lost: pd.DataFrame,
    raw: dict[str, Any],
    *,
    load_seconds: float,
    simulate_seconds: float,
    options: dict[str, Any],
    downtime_source: str | None,
    platform: Platform | None,
    decision_log: str | None,
) -> dict[str, Any]:
    from hpcsched import __version__

    started = table[~table["start"].isna()]
    executed = (started["end"] - started["start"]).to_numpy()
    wait = started["wait"].to_numpy()
    last_end = float(np.nanmax(table["end"])) if len(started) else 0.0
    n = len(table)
    outside = sum(1 for w in calendar if w.end <= 0.0 or w.start >= last_end)
    warnings = []
    if outside:
        warnings.append(
            f"{outside} of {len(calendar)} downtime windows fall outside the run (replay time 0 "
            f"to {last_end:,.0f} s, i.e. trace time {workload.time_origin:,.0f} to "
            f"{workload.time_origin + last_end:,.0f}): they changed nothing. Calendars are in "
            "the trace's clock."
        )
    return {
        "hpcsched_version": __version__,
        "inputs": {
            "trace": workload.source,
            "format": workload.format,
            "policy": spec.to_dict(),
            "nodes": workload.nodes,
            "nodes_option": options["nodes"],
            "procs_per_node": workload.procs_per_node,
            "lenient": options["lenient"],
            "strict": options["strict"],
            "downtime": downtime_source,
            "announce_lead": calendar.announce_lead,
            "overrun": overrun,
            "platform": platform.to_dict() if platform is not None else None,
            "decision_log": decision_log,
        },
        "workload": {
            "jobs": n,
            "skipped": dict(workload.skipped),
            "skipped_total": int(sum(workload.skipped.values())),
            "warnings": list(workload.warnings),
            "time_origin": workload.time_origin,
            "unix_start_time": workload.unix_start_time,
        },
        "jobs": {
            "completed": len(started),
            "never_started": n - len(started),
            "never_started_by_reason": never_started_summary(
                table, recorded=isinstance(spec, PolicySpec) and spec.name == RECORDED
            ),
            "requeued_jobs": int((table["requeues"] > 0).sum()),
            "requeues": int(table["requeues"].sum()),
            "killed_overrun": int(table["killed"].sum()),
            "start_kinds": {k: int((table["start_kind"] == k).sum()) for k in START_KINDS},
        },
        "wait": metrics.wait_stats(wait),
        "wait_by_class": metrics.by_class(started),
        "bounded_slowdown": {
            "tau": metrics.BSLD_TAU,
            "mean": float(metrics.bounded_slowdown(wait, executed).mean())
            if len(started)
            else None,
        },
        "response_time": {
            "mean": float((started["end"] - started["submit"]).mean()) if len(started) else None
        },
        "makespan": last_end,
        "utilization": _utilization(table, lost, workload, calendar, platform, last_end),
        "downtime": {
            "windows": len(calendar),
            "outside_run": outside,
            "killed_attempts": len(lost),
            "lost_node_seconds": float(((lost["end"] - lost["start"]) * lost["nodes"]).sum()),
        },
        "engine": {"invocations": int(raw["invocations"]), "event_times": int(raw["event_times"])},
        "warnings": warnings,
        "timing": {
            "load_seconds": load_seconds,
            "simulate_seconds": simulate_seconds,
            "jobs_per_second": n / simulate_seconds if simulate_seconds > 0 else None,
        },
    }
