"""``hpcsched inspect``: what a user wants to know about a trace before replaying it."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from hpcsched.cli import _options as opt
from hpcsched.cli._console import console, hours, kept_whole, labelled, percent


@opt.command
def inspect(
    trace: opt.Trace,
    *,
    reading: opt.TraceOptions,
    lenient: opt.Lenient = False,
    where: opt.SiteOptions,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Describe TRACE: jobs kept and skipped, machine size, span, load, size classes, and what
    the site recorded (waits, utilization, job status, queues and partitions). With a platform
    (or a slurm.conf), on its machine, and where the jobs would run on its partitions."""
    from hpcsched.run.options import resolve_platform
    from hpcsched.workload import load_workload
    from hpcsched.workload.stats import describe

    nodes, ppn = reading.checked()
    machine, nodes = resolve_platform(where.name(), nodes)
    workload = load_workload(
        trace, format=reading.format, nodes=nodes, procs_per_node=ppn, lenient=lenient
    )
    described = workload
    if machine is not None and machine.site is not None:
        from hpcsched.site.assignment import fit_partitions

        # sized as a run sizes it: each job in nodes of its partition, on the platform's nodes
        described, _ = fit_partitions(workload, machine)
    info = describe(described)
    if machine is not None and machine.shared and info["recorded"] is not None:
        # jobs share nodes: the record's utilization is of the CPUs
        from hpcsched.metrics import platform_cpus
        from hpcsched.workload.record_shared import recorded_cpu_utilization

        cpus = platform_cpus(machine)
        info["recorded"]["utilization"] = recorded_cpu_utilization(workload.jobs, cpus)
        info["recorded"]["utilization_basis"] = "cpus"
    if machine is not None:
        info["platform"] = machine.name
        info["warnings"] = [*info["warnings"], *machine.notes]
    if machine is not None and machine.site is not None:
        from hpcsched.site.assignment import describe_assignment

        info["site"] = {"platform": machine.name, **describe_assignment(workload, machine)}
    if as_json:
        console.print_json(json.dumps(info))
        return
    # the path on a line of its own: as the table's title it would wrap at the table's width
    console.print(Text(str(trace), style="italic"), overflow="fold")
    table = Table(show_header=False)
    skipped = ", ".join(f"{k}: {v}" for k, v in info["skipped"].items() if v) or "none"
    table.add_row("jobs kept", f"{info['jobs']:,}")
    table.add_row("jobs skipped", f"{info['skipped_total']:,} ({skipped})")
    table.add_row(
        "machine",
        f"{info['machine_nodes']:,} nodes"
        + (f" ({workload.procs_per_node} procs per node)" if workload.procs_per_node > 1 else "")
        + (f" (platform {info['platform']})" if "platform" in info else ""),
    )
    span = f"{info['span_days']:.1f} days" if info["span_days"] is not None else "-"
    if info.get("first_submit_date"):
        span += f" ({info['first_submit_date']} to {info['last_submit_date']})"
    table.add_row("submissions span", span)
    load = info["offered_load"]
    table.add_row("offered load", "-" if load is None else f"{load:.3f}")
    table.add_row(
        "run time mean / median",
        f"{hours(info['run_time_mean'])} / {hours(info['run_time_median'])}",
    )
    table.add_row(
        "requested time mean / median",
        f"{hours(info['requested_time_mean'])} / {hours(info['requested_time_median'])}",
    )
    table.add_row("jobs past their requested time", percent(info["overrun_share"]))
    table.add_row("users", str(info["users"]))
    recorded_rows(table, info)
    console.print(kept_whole(table))
    classes = Table(title="size classes (MARS Fig. 7)", title_justify="left")
    for column in ("class", "jobs", "share of jobs", "share of work"):
        classes.add_column(column, justify="right")
    for name, row in info["size_classes"].items():
        classes.add_row(name, f"{row['jobs']:,}", percent(row["share"]), percent(row["work_share"]))
    console.print(kept_whole(classes))
    recorded = info["recorded"]
    if recorded is not None:
        waits = Table(title="recorded waits by size class", title_justify="left")
        for column in ("class", "jobs", "mean", "median", "P95"):
            waits.add_column(column, justify="right")
        for name, row in recorded["wait_by_class"].items():
            waits.add_row(
                name,
                f"{row['jobs']:,}",
                hours(row["mean"]),
                hours(row["median"]),
                hours(row["p95"]),
            )
        console.print(kept_whole(waits))
    for key, kind in (("queues", "queue"), ("partitions", "partition")):
        numbered = info[key] or []
        if len(numbered) > 1:
            listed = Table(title=key, title_justify="left")
            listed.add_column(kind, justify="right")
            listed.add_column("name")
            listed.add_column("jobs", justify="right")
            with_waits = info["recorded"] is not None
            if with_waits:
                listed.add_column("recorded mean wait", justify="right")
            for row in numbered:
                cells = [str(row["number"]), row["name"] or "-", f"{row['jobs']:,}"]
                if with_waits:
                    cells.append(hours(row["recorded_wait_mean"]))
                listed.add_row(*cells)
            console.print(kept_whole(listed))
    if "site" in info:
        site_tables(info["site"])
    for warning in info["warnings"]:
        console.print(labelled("warning:", "yellow", warning))


def site_tables(site: dict[str, Any]) -> None:
    """Where the jobs would run on the platform's partitions (``inspect --platform``)."""
    if any("cpus" in part for part in site["partitions"].values()):
        shared_site_table(site)
        return
    table = Table(title=f"partitions of {site['platform']}", title_justify="left")
    for column in ("partition", "nodes", "cores", "tier", "jobs", "largest job"):
        table.add_column(column, justify="left" if column == "partition" else "right")
    for name, part in site["partitions"].items():
        largest = part["largest_job_nodes"]
        table.add_row(
            name,
            f"{part['nodes']:,}",
            str(part["cores"]),
            str(part["tier"]),
            f"{part['jobs']:,}",
            "-" if largest is None else f"{largest:,} nodes",
        )
    console.print(kept_whole(table))
    placed_lines(site)


def shared_site_table(site: dict[str, Any]) -> None:
    """The partitions of a site whose jobs share nodes: what each holds, and what its jobs ask."""
    table = Table(title=f"partitions of {site['platform']} (shared nodes)", title_justify="left")
    for column in ("partition", "nodes", "CPUs", "memory", "GRES", "tier", "jobs", "CPUs asked"):
        table.add_column(column, justify="left" if column == "partition" else "right")
    for name, part in site["partitions"].items():
        ask = part["asked"]
        cpus = (
            "-"
            if ask["cpus_mean"] is None
            else f"{ask['cpus_mean']:,.1f} (max {ask['cpus_max']:,})"
        )
        gres = ", ".join(f"{kind} {count:,}" for kind, count in part["gres"].items()) or "-"
        table.add_row(
            name,
            f"{part['nodes']:,}",
            f"{part['cpus']:,}",
            f"{part['memory_mb'] / 1024:,.0f} GiB" if part["memory_mb"] else "-",
            gres,
            str(part["tier"]),
            f"{part['jobs']:,}",
            cpus,
        )
    console.print(kept_whole(table))
    given = {n: p["asked"] for n, p in site["partitions"].items() if p["jobs"]}
    memory = sum(a["jobs_giving_memory"] for a in given.values())
    gres = sum(a["jobs_asking_gres"] for a in given.values())
    console.print(
        f"jobs asking memory: {memory:,}; asking generic resources: {gres:,}", highlight=False
    )
    placed_lines(site)


def placed_lines(site: dict[str, Any]) -> None:
    """How the jobs were placed, and the recorded names no partition matched."""
    how = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in site["how"].items() if v)
    console.print(f"jobs placed: {how}", highlight=False)
    unknown = site["unknown_names"]
    if unknown:
        names = ", ".join(f"{name} ({count:,})" for name, count in list(unknown.items())[:6])
        more = f" and {len(unknown) - 6} more" if len(unknown) > 6 else ""
        console.print(
            f"recorded names no partition matches (sent to the default partition): {names}{more}",
            highlight=False,
        )


def recorded_rows(table: Table, info: dict[str, Any]) -> None:
    """The rows of what the site recorded: waits, utilization, status, the archive's removals,
    and the queue or partition when every job has the same (a table lists several)."""
    recorded = info["recorded"]
    if recorded is not None:
        wait = recorded["wait"]
        unknown = recorded["unknown"]
        table.add_row(
            "recorded wait mean / median / P95",
            f"{hours(wait['mean'])} / {hours(wait['median'])} / {hours(wait['p95'])}"
            + (f" (unknown for {unknown:,} job{'s' if unknown > 1 else ''})" if unknown else ""),
        )
        of = " of the CPUs" if recorded.get("utilization_basis") == "cpus" else ""
        table.add_row(f"recorded utilization{of}", percent(recorded["utilization"]))
    if info["status"]:
        table.add_row(
            "jobs by status",
            ", ".join(f"{name} {count:,}" for name, count in info["status"].items()),
        )
    for key, kind in (("queues", "queue"), ("partitions", "partition")):
        numbered = info[key] or []
        if len(numbered) == 1 and (numbered[0]["number"] >= 0 or numbered[0]["name"]):
            only = numbered[0]
            name = f" ({only['name']})" if only["name"] else ""
            table.add_row(f"{kind} of every job", f"{only['number']}{name}")
    if info["removed_by_archive"] is not None:
        table.add_row(
            "removed by the archive",
            f"{info['removed_by_archive']:,} jobs (cleaning filters)",
        )
