"""``hpcsched simulate``: replay one trace under one policy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from hpcsched.cli._console import LazyProgress, console, hours, percent
from hpcsched.exceptions import OptionError
from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec, parse_reward
from hpcsched.run import check_overrun, resolve_platform
from hpcsched.run import simulate as run_simulation
from hpcsched.workload import load_workload
from hpcsched.workload.swf import check_procs_per_node


def simulate(
    trace: Annotated[Path, typer.Argument(help="Workload: .swf or .json, optionally .gz.")],
    policy: Annotated[
        str,
        typer.Option(
            help="fcfs, lcfs, sjf, ljf, srf, lrf, scf, lcf, fcsj, wfp1, wfp3, fat, unicef, "
            "f1, f2, f3, f4, snf; the look-ahead mars-cw, mars-cu, mars (with --reward), "
            "random; or the power managers fcfs-b+ipm, snf+ipm, snf-icon, snf-icon-ng, "
            "snf-icon-nf, snf-icon-ngnf (with --platform)."
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
    platform: Annotated[
        str | None,
        typer.Option(
            help="Platform preset (AOBA-64, AOBA-1152, Taurus-64, Taurus-1152) or TOML file: "
            "sets the machine size and reports energy."
        ),
    ] = None,
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
    reward: Annotated[
        str | None,
        typer.Option(
            help="mars: cw, cu, 'wait=1,bsld=0.5,utilization=2,energy=1', "
            "or a TOML file with a \\[reward] table.",
            rich_help_panel="Look-ahead (mars, random)",
        ),
    ] = None,
    iterations: Annotated[
        int | None,
        typer.Option(
            help="Iterations per tree per decision (default 100).",
            rich_help_panel="Look-ahead (mars, random)",
        ),
    ] = None,
    time_budget: Annotated[
        float | None,
        typer.Option(
            help="Seconds per decision (wall clock; not deterministic).",
            rich_help_panel="Look-ahead (mars, random)",
        ),
    ] = None,
    depth: Annotated[
        int,
        typer.Option(
            help="Horizon D in scheduling cycles that start jobs.",
            rich_help_panel="Look-ahead (mars, random)",
        ),
    ] = 50,
    gamma: Annotated[
        float, typer.Option(help="Discount factor.", rich_help_panel="Look-ahead (mars, random)")
    ] = 0.99,
    exploration: Annotated[
        float,
        typer.Option(
            help="c0 in c = c0 (Qmax - Qmin).", rich_help_panel="Look-ahead (mars, random)"
        ),
    ] = 1.0,
    trees: Annotated[
        int | None,
        typer.Option(
            help="Root-parallel trees (default: number of cores).",
            rich_help_panel="Look-ahead (mars, random)",
        ),
    ] = None,
    threads: Annotated[
        int | None,
        typer.Option(
            help="Threads for the trees (default: one per tree).",
            rich_help_panel="Look-ahead (mars, random)",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Random seed.", rich_help_panel="Look-ahead (mars, random)")
    ] = 17,
    idle_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds an idle node waits before it is switched off.",
            rich_help_panel="Power management",
        ),
    ] = 7200.0,
    sample_transitions: Annotated[
        int | None,
        typer.Option(
            help="Draw transition latencies from Normal(mean, std) "
            "with this seed (default: mean latencies).",
            rich_help_panel="Power management",
        ),
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="SNF-ICON waiting weight.", rich_help_panel="Power management")
    ] = 5000.0,
    beta: Annotated[
        float, typer.Option(help="SNF-ICON energy weight.", rich_help_panel="Power management")
    ] = 1.0,
    screen_window: Annotated[
        float, typer.Option(help="SNF-ICON screen window (s).", rich_help_panel="Power management")
    ] = 7200.0,
    recency_window: Annotated[
        float,
        typer.Option(
            help="SNF-ICON arrival-recency window (s).", rich_help_panel="Power management"
        ),
    ] = 43200.0,
    max_horizon: Annotated[
        float,
        typer.Option(help="SNF-ICON maximum horizon (s).", rich_help_panel="Power management"),
    ] = 86400.0,
    min_spares: Annotated[
        int, typer.Option(help="SNF-ICON minimum spare nodes.", rich_help_panel="Power management")
    ] = 1,
    max_spares: Annotated[
        int | None,
        typer.Option(
            help="SNF-ICON maximum spare nodes (default: all).", rich_help_panel="Power management"
        ),
    ] = None,
    actions: Annotated[
        str,
        typer.Option(
            help="'paper' (161 actions) or e.g. 'fcfs,wfp3:256,sjf,lrf:all'.",
            rich_help_panel="Look-ahead (mars, random)",
        ),
    ] = "paper",
) -> None:
    """Replay TRACE under one policy and write a run directory (jobs.parquet, summary.json,
    and decisions.parquet for look-ahead policies)."""
    power = PowerSpec(
        idle_timeout=idle_timeout,
        sample_transitions=sample_transitions,
        alpha=alpha,
        beta=beta,
        screen_window=screen_window,
        recency_window=recency_window,
        max_horizon=max_horizon,
        min_spares=min_spares,
        max_spares=max_spares,
    )
    spec = policy_spec(
        policy,
        window,
        backfill,
        power=power,
        reward=reward,
        iterations=iterations,
        time_budget=time_budget,
        depth=depth,
        gamma=gamma,
        exploration=exploration,
        trees=trees,
        threads=threads,
        seed=seed,
        actions=actions,
    )
    check_overrun(overrun)
    ppn = check_procs_per_node(procs_per_node)
    if nodes is not None and nodes <= 0:
        raise OptionError(f"must be positive, got {nodes}", option="--nodes")
    machine, nodes = resolve_platform(platform, nodes)
    workload = load_workload(
        trace, format=format, nodes=nodes, procs_per_node=ppn, lenient=lenient, strict=strict
    )
    if out is None:
        out = (
            Path("runs") / f"{_stem(trace)}-{spec.name}"
            if spec.window is None
            else Path("runs") / f"{_stem(trace)}-{spec.name}-w{spec.window}"
        )
    progress = LazyProgress(
        workload.last_submit, f"{spec.label} on {trace.name}", unix_start=workload.unix_start_time
    )
    try:
        result = run_simulation(
            workload,
            spec,
            downtime=downtime,
            announce_lead=announce_lead,
            overrun=overrun,
            platform=machine,
            out=out,
            csv=csv,
            progress=progress,
        )
    finally:
        progress.close()
    _print_summary(result.info, out)


def policy_spec(
    policy: str,
    window: int | None,
    backfill: str,
    *,
    reward: str | None,
    power: PowerSpec | None = None,
    **search: object,
) -> PolicySpec:
    """The policy the options describe; search options apply to look-ahead policies only,
    power options to power managers only."""
    base = PolicySpec(policy, window, backfill)
    if base.is_power:
        return PolicySpec(policy, window, backfill, power=power)
    if not base.is_search:
        return base
    if reward is not None and base.name != "mars":
        raise OptionError(
            f"{base.name} has its reward built in; use --policy mars", option="--reward"
        )
    options = {k: v for k, v in search.items() if v is not None}
    if "time_budget" in options and "iterations" not in options:
        options["iterations"] = None  # a time budget alone
    if reward is not None:
        options["reward"] = parse_reward(reward)
    return PolicySpec(policy, window, backfill, search=SearchSpec(**options))


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
    energy = info.get("energy")
    if energy:
        table.add_row(
            "energy",
            f"{energy['total_mwh']:,.2f} MWh, of which {energy['wasted_mwh']:,.2f} MWh wasted "
            "(not computing)",
        )
        modes = energy.get("mode_occupancy")
        if modes and set(modes) != {"ipm"}:
            table.add_row(
                "SNF-ICON modes", ", ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(modes.items()))
            )
    search = info.get("search")
    if search and search["searches"]:
        table.add_row(
            "look-ahead",
            f"{search['searches']:,} searches of {search['invocations']:,} invocations, "
            f"{search['drains']:,} drains; median {search['branching']['median']:.0f} distinct "
            f"outcomes, {search['iterations_per_search']['mean']:,.0f} iterations and "
            f"{1000 * search['seconds_per_search']['mean']:.1f} ms per search",
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
