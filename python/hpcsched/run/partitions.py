"""Runs on a platform with partitions: the jobs sized in the partitions they name, what the
engine takes of the site, the options that do not combine with partitions yet, and the
outputs by partition (docs/semantics.md, "Partitions")."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcsched.exceptions import OptionError
from hpcsched.site.assignment import Assignment, assign_partitions
from hpcsched.workload.sacct import NO_MACHINE_SIZE

if TYPE_CHECKING:
    import pandas as pd

    from hpcsched.policies import PolicySpec
    from hpcsched.protocol import PythonPolicySpec
    from hpcsched.site.partitions import Site
    from hpcsched.site.platform import Platform
    from hpcsched.workload import DowntimeCalendar, Workload


def check_partitioned_run(
    spec: PolicySpec | PythonPolicySpec, platform: Platform, calendar: DowntimeCalendar
) -> None:
    """An ``OptionError`` for what does not run on partitions yet (said plainly, before the
    run)."""
    from hpcsched.protocol import PythonPolicySpec

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
            "yet; heuristics (with or without EASY), SNF, MARS (without --arrivals) and Python "
            "policies do",
            option=option,
        )


def partition_windows(calendar: DowntimeCalendar, platform: Platform | None) -> DowntimeCalendar:
    """``calendar`` with each ``partition=`` window's node count set to its partition's (what
    the summaries count down); an ``InputError`` naming the file and line for a partition the
    platform lacks, or any partition window on a platform without partitions."""
    from hpcsched.exceptions import InputError, close_names, did_you_mean, shown

    named = [w for w in calendar if w.partition is not None]
    if not named:
        return calendar
    site = platform.site if platform is not None else None
    sizes = {p.name: p.nodes for p in site.partitions} if site is not None else {}
    windows = []
    for w in calendar:
        if w.partition is None:
            windows.append(w)
            continue
        if w.partition not in sizes:
            where = f"platform {platform.name}" if platform is not None else "the run (no platform)"
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


def fit_partitions(workload: Workload, platform: Platform) -> tuple[Workload, Assignment]:
    """``workload`` (read in its own units: processors for an SWF trace) sized in nodes of the
    partitions its jobs name, on ``platform``'s machine, with each job's candidates. A job's
    size is its size in its first candidate; candidates whose nodes have another number of
    cores (another size) are dropped. Jobs larger than the whole machine are skipped and
    counted, as the reader skips them on one pool."""
    assignment = assign_partitions(workload, platform)
    offsets, partitions, nodes = assignment.offsets, assignment.partitions, assignment.nodes
    first = nodes[offsets[:-1]]
    counts = np.diff(offsets)
    keep = nodes == np.repeat(first, counts)
    too_big = first > platform.nodes
    keep &= ~np.repeat(too_big, counts)
    kept_counts = np.add.reduceat(keep.astype(np.int64), offsets[:-1]) if len(first) else counts
    kept_counts = kept_counts[~too_big]
    new_offsets = np.zeros(len(kept_counts) + 1, dtype=np.int64)
    np.cumsum(kept_counts, out=new_offsets[1:])
    jobs = workload.jobs[~too_big].reset_index(drop=True)
    jobs["nodes"] = first[~too_big]
    skipped = dict(workload.skipped)
    # (a record read without a machine size is sized here, by the platform)
    warnings = [w for w in workload.warnings if not w.startswith(NO_MACHINE_SIZE)]
    if too_big.any():
        skipped["larger than the machine"] = int(too_big.sum())
        warnings.append(
            f"{int(too_big.sum())} jobs need more than the {platform.nodes} nodes of "
            f"{platform.name} in their partitions: skipped"
        )
    sized = replace(
        workload,
        jobs=jobs,
        nodes=platform.nodes,
        procs_per_node=1,
        skipped=skipped,
        warnings=warnings,
    )
    fitted = replace(
        assignment,
        offsets=new_offsets,
        partitions=partitions[keep],
        nodes=nodes[keep],
    )
    return sized, fitted


def site_options(site: Site, assignment: Assignment) -> dict[str, Any]:
    """The site as the engine takes it (``NativeRun.site``)."""
    native = site.to_native()
    native["offsets"] = assignment.offsets.astype(np.uint32)
    native["candidates"] = assignment.partitions.astype(np.uint32)
    return native


def partition_column(site: Site, raw: dict[str, Any]) -> pd.Categorical[str]:
    """``jobs.parquet``'s ``partition`` column: where each job ran."""
    import pandas as pd

    names = pd.Index([p.name for p in site.partitions])
    return pd.Categorical.from_codes(np.asarray(raw["partition"], np.int64), names)


def by_partition(table: pd.DataFrame, site: Site, makespan: float) -> dict[str, Any]:
    """Waits, bounded slowdown and utilization of each partition: of the jobs that ran in it,
    over its nodes from 0 to the makespan (nodes two partitions share count in both)."""
    from hpcsched import metrics

    out: dict[str, Any] = {}
    for partition in site.partitions:
        ran = table[table["partition"] == partition.name]
        wait = ran["wait"].to_numpy()
        executed = (ran["end"] - ran["start"]).to_numpy()
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
