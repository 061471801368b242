"""``--policy recorded``: the schedule the site recorded, replayed as a run.

Not a scheduler: every job starts at its recorded start (submit + recorded wait) and runs its
recorded run time, so every metric, plot and report of a run applies to what really happened.
Where the record disagrees with the machine model, the start is kept and the conflict counted
(:func:`~hpcsched.workload.record.record_conflicts`); the summary's ``record`` entry says how
each kind was treated (docs/semantics.md, "The recorded schedule").
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from hpcsched.exceptions import InputError, OptionError
from hpcsched.policies import PolicySpec
from hpcsched.run.result import Result
from hpcsched.run.site import RunSite
from hpcsched.run.summary import job_table, summary_info
from hpcsched.workload import DowntimeCalendar, Workload
from hpcsched.workload.record import (
    CONFLICT_KINDS,
    has_record,
    record_conflicts,
    recorded_schedule,
)

#: How the recorded run treats each kind of conflict (the summary quotes it).
TREATMENT = {
    "unknown_wait": "not started: the trace records no start (counted as never started)",
    "over_capacity": "started as recorded; utilization counts every node-second the record "
    "has busy, those above the nodes up too",
    "in_downtime": "started as recorded and ran through the window (not killed)",
    "overrun": "ran its recorded run time (the overrun policy does not apply)",
}


def recorded_result(
    workload: Workload,
    calendar: DowntimeCalendar,
    spec: PolicySpec,
    overrun: str,
    site: RunSite,
    *,
    load_seconds: float,
    options: dict[str, Any],
    downtime_source: str | None,
) -> Result:
    """The recorded schedule of ``workload`` as a :class:`Result` (no logs, no energy). On a
    platform with partitions, each job ran in its partition as the trace records it (its
    first candidate): the summary then has each partition's recorded waits."""
    if not has_record(workload):
        raise InputError(
            "the trace records no wait (SWF field 3 is -1 for every job, or the format has "
            "none): there is no recorded schedule to replay",
            path=workload.source,
        )
    if overrun != "continue":
        raise OptionError(
            "recorded replays the record: jobs run their recorded run times; drop --overrun",
            option="--overrun",
        )
    began = time.perf_counter()
    jobs = workload.jobs
    n = len(jobs)
    start, end = recorded_schedule(jobs)
    raw = {
        "start": start,
        "end": end,
        "start_kind": np.full(n, -1, dtype=np.int8),  # the record says no kind
        "requeues": np.zeros(n, dtype=np.int64),
        "killed": np.zeros(n, dtype=bool),
        "invocations": 0,
        "event_times": 0,
    }
    table = job_table(workload, raw)
    partitions = site.recorded_partitions()
    if site.site is not None and partitions is not None:
        # where the record says each job ran (never started: none)
        table["partition"] = site.partition_column(np.where(np.isfinite(start), partitions, -1))
    if site.shared is not None and site.platform is not None:
        from hpcsched.workload.record_shared import recorded_allocations

        least = min(g.memory for g in site.platform.groups)
        held = recorded_allocations(jobs, np.isfinite(start), site.shared, least)
        table["alloc_cpus"] = held["alloc_cpus"]
        table["alloc_memory_mb"] = held["alloc_memory_mb"]
        table["alloc_gres"] = pd.Series(held["alloc_gres"], dtype="string")
    lost = pd.DataFrame({"job_index": [], "start": [], "end": [], "nodes": []})
    conflicts = record_conflicts(jobs, start, end, workload.nodes, calendar.columns())
    if site.shared is not None and site.platform is not None:
        conflicts["over_capacity"] = _shared_over_capacity(workload, start, end, site)
    seconds = time.perf_counter() - began
    info = summary_info(
        workload,
        calendar,
        spec,
        overrun,
        table,
        lost,
        raw,
        load_seconds=load_seconds,
        simulate_seconds=seconds,
        options=options,
        downtime_source=downtime_source,
        platform=site.platform,
        decision_log=None,  # the record keeps no decision log
    )
    platform = site.platform
    if platform is not None and platform.power is not None:
        info["warnings"].append(
            f"the record holds no node power states: no energy for the recorded schedule "
            f"(platform {platform.name}'s power model is not used)"
        )
    if site.site is not None and "partition" in table:
        info["partitions"] = site.by_partition(table, info["makespan"])
    info["record"] = {
        "replayed": int(np.isfinite(start).sum()),
        "conflicts": {
            kind: {**conflicts[kind], "treated": TREATMENT[kind]} for kind in CONFLICT_KINDS
        },
        "left_out": {
            "by_the_reader": int(sum(workload.skipped.values())),
            "by_the_archive": workload.removed_by_archive,
        },
    }
    empty = pd.DataFrame()
    return Result(
        jobs=table,
        info=info,
        lost=lost,
        reservations=empty,
        decisions=empty,
        timeline=empty,
        workload=workload,
        calendar=calendar,
    )


def _shared_over_capacity(
    workload: Workload, start: np.ndarray, end: np.ndarray, site: RunSite
) -> dict[str, Any]:
    """The record's over-capacity conflicts on shared nodes: node by node and resource by
    resource where it names nodes, by partition otherwise
    (:mod:`hpcsched.workload.record_shared`)."""
    from hpcsched.site.slurm.conf import read_slurm_conf
    from hpcsched.site.slurm.used import slurm_conf_of
    from hpcsched.workload.record import EXAMPLES
    from hpcsched.workload.record_shared import shared_conflicts

    platform = site.platform
    assert platform is not None and site.shared is not None
    conf = slurm_conf_of(platform)
    names = read_slurm_conf(conf).node_names() if conf is not None else None
    partitions = site.recorded_partitions() if site.site is not None else None
    flags, detail = shared_conflicts(
        workload.jobs,
        start,
        end,
        site.shared,
        platform.sharing.endswith("_memory"),
        names,
        partitions,
    )
    job_id = workload.jobs["job_id"].to_numpy()
    return {
        "jobs": int(flags.sum()),
        "examples": [int(i) for i in job_id[flags][:EXAMPLES]],
        **detail,
    }
