"""``hpcsched simulate``: replay one trace under one policy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from hpcsched.cli._console import LazyProgress, console, hours, percent
from hpcsched.exceptions import OptionError
from hpcsched.policies import PolicySpec
from hpcsched.run import check_overrun
from hpcsched.run import simulate as run_simulation
from hpcsched.workload import load_workload
from hpcsched.workload.swf import check_procs_per_node


def simulate(
    trace: Annotated[Path, typer.Argument(help="Workload: .swf or .json, optionally .gz.")],
    policy: Annotated[
        str,
        typer.Option(
            help="fcfs, lcfs, sjf, ljf, srf, lrf, scf, lcf, fcsj, "
            "wfp1, wfp3, fat, unicef, f1, f2, f3, f4, or snf."
        ),
    ] = "fcfs",
    window: Annotated[
        int | None,
        typer.Option(help="Jobs at the head of the queue the heuristic sorts (default: all)."),
    ] = None,
    backfill: Annotated[str, typer.Option(help="easy or none.")] = "easy",
    nodes: Annotated[
        int | None, typer.Option(help="Machine size in nodes (default: from the trace header).")
    ] = None,
    procs_per_node: Annotated[
        str, typer.Option(help="Processors per node, or 'auto' (MaxProcs / MaxNodes).")
    ] = "1",
    format: Annotated[
        str | None, typer.Option(help="swf or json (default: from the name).")
    ] = None,
    downtime: Annotated[Path | None, typer.Option(help="Downtime calendar file.")] = None,
    announce_lead: Annotated[
        float, typer.Option(help="Notice of scheduled maintenance (s).")
    ] = 172800.0,
    overrun: Annotated[
        str, typer.Option(help="continue or kill jobs past their requested time.")
    ] = "continue",
    out: Annotated[
        Path | None, typer.Option(help="Run directory (default: runs/<trace>-<policy>).")
    ] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Also write jobs.csv.")] = False,
    lenient: Annotated[
        bool, typer.Option("--lenient", help="Skip malformed lines instead of failing.")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Fail on jobs larger than the machine instead of skipping them."
        ),
    ] = False,
) -> None:
    """Replay TRACE under one policy and write a run directory (jobs.parquet, summary.json)."""
    spec = PolicySpec(policy, window, backfill)
    check_overrun(overrun)
    ppn = check_procs_per_node(procs_per_node)
    if nodes is not None and nodes <= 0:
        raise OptionError(f"must be positive, got {nodes}", option="--nodes")
    workload = load_workload(
        trace, format=format, nodes=nodes, procs_per_node=ppn, lenient=lenient, strict=strict
    )
    if out is None:
        out = (
            Path("runs") / f"{_stem(trace)}-{spec.name}"
            if spec.window is None
            else Path("runs") / f"{_stem(trace)}-{spec.name}-w{spec.window}"
        )
    span = float(workload.jobs["submit"].iloc[-1]) if len(workload) else 0.0
    progress = LazyProgress(span, f"{spec.label} on {trace.name}")
    try:
        result = run_simulation(
            workload,
            spec,
            downtime=downtime,
            announce_lead=announce_lead,
            overrun=overrun,
            out=out,
            csv=csv,
            progress=progress,
        )
    finally:
        progress.close()
    _print_summary(result.info, out)


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".swf", ".json"):
        name = name.removesuffix(suffix)
    return name


def _print_summary(info: dict, out: Path) -> None:
    wait, jobs, wl = info["wait"], info["jobs"], info["workload"]
    table = Table(
        title=f"{info['inputs']['policy']['name']} on {Path(wl and info['inputs']['trace']).name}",
        show_header=False,
        title_justify="left",
    )
    table.add_row(
        "jobs",
        f"{wl['jobs']:,} replayed, {wl['skipped_total']:,} skipped"
        + (
            f" ({', '.join(f'{k}: {v}' for k, v in wl['skipped'].items() if v)})"
            if wl["skipped_total"]
            else ""
        ),
    )
    table.add_row("machine", f"{info['inputs']['nodes']:,} nodes")
    table.add_row("starts", ", ".join(f"{k} {v}" for k, v in jobs["start_kinds"].items() if v))
    table.add_row(
        "wait mean / median / P95 / max",
        " / ".join(hours(wait[k]) for k in ("mean", "median", "p95", "max")),
    )
    bsld = info["bounded_slowdown"]["mean"]
    table.add_row("bounded slowdown (mean)", "-" if bsld is None else f"{bsld:.2f}")
    table.add_row("utilization over uptime", percent(info["utilization"]["overall_uptime"]))
    down = info["downtime"]
    if down["windows"]:
        plural = "s" if down["windows"] != 1 else ""
        table.add_row(
            "downtime",
            f"{down['windows']} window{plural}, {down['killed_attempts']} jobs killed and requeued",
        )
        before = info["utilization"]["before_maintenance"]
        if before:
            table.add_row(
                "utilization 48 h before maintenance",
                ", ".join(percent(b["utilization"]) for b in before),
            )
    timing = info["timing"]
    table.add_row(
        "simulated in",
        f"{timing['simulate_seconds']:.2f} s ({timing['jobs_per_second']:,.0f} jobs/s)"
        if timing["jobs_per_second"]
        else "-",
    )
    table.add_row("results", str(out))
    console.print(table)
    for warning in wl["warnings"]:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
