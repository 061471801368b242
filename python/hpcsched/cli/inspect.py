"""``hpcsched inspect``: what a user wants to know about a trace before replaying it."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from hpcsched.cli import _options as opt
from hpcsched.cli._console import console, hours, kept_whole, labelled, percent


@opt.command
def inspect(
    trace: opt.Trace,
    *,
    reading: opt.TraceOptions,
    lenient: opt.Lenient = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Describe TRACE: jobs kept and skipped, machine size, span, load, size classes."""
    from hpcsched.workload import load_workload
    from hpcsched.workload.stats import describe

    nodes, ppn = reading.checked()
    workload = load_workload(
        trace, format=reading.format, nodes=nodes, procs_per_node=ppn, lenient=lenient
    )
    info = describe(workload)
    if as_json:
        console.print_json(json.dumps(info))
        return
    table = Table(title=str(trace), show_header=False, title_justify="left")
    skipped = ", ".join(f"{k}: {v}" for k, v in info["skipped"].items() if v) or "none"
    table.add_row("jobs kept", f"{info['jobs']:,}")
    table.add_row("jobs skipped", f"{info['skipped_total']:,} ({skipped})")
    table.add_row(
        "machine",
        f"{info['machine_nodes']:,} nodes"
        + (f" ({workload.procs_per_node} procs per node)" if workload.procs_per_node > 1 else ""),
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
    console.print(kept_whole(table))
    classes = Table(title="size classes (MARS Fig. 7)", title_justify="left")
    for column in ("class", "jobs", "share of jobs", "share of work"):
        classes.add_column(column, justify="right")
    for name, row in info["size_classes"].items():
        classes.add_row(name, f"{row['jobs']:,}", percent(row["share"]), percent(row["work_share"]))
    console.print(kept_whole(classes))
    for warning in info["warnings"]:
        console.print(labelled("warning:", "yellow", warning))
