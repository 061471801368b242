"""``hpcsched advise``: plan a live Slurm cluster (or a saved snapshot) and steer it by
priorities."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from hpcsched.advise.adapter import WRITTEN
from hpcsched.advise.plan import DEFAULT_UNLIMITED
from hpcsched.advise.runner import Advisor, TickResult
from hpcsched.advise.slurm import SlurmCluster, SlurmSnapshot
from hpcsched.cli._console import console, err_console
from hpcsched.exceptions import OptionError
from hpcsched.policies import PolicySpec, SearchSpec

PANEL = "Safety and scope"


def advise(
    slurm: Annotated[
        bool, typer.Option("--slurm", help="Read the live Slurm cluster (SLURM_CONF picks it).")
    ] = False,
    from_json: Annotated[
        tuple[Path, Path] | None,
        typer.Option(
            help="Plan a saved snapshot instead: SQUEUE.json SINFO.json "
            "(squeue --json, sinfo --json).",
            metavar="SQUEUE SINFO",
        ),
    ] = None,
    reservations: Annotated[
        Path | None,
        typer.Option(help="With --from-json: saved `scontrol show reservation` output."),
    ] = None,
    now: Annotated[
        float | None,
        typer.Option(help="With --from-json: the snapshot's time (Unix s; default: its latest)."),
    ] = None,
    policy: Annotated[
        str,
        typer.Option(help="mars-cw (default), mars-cu, mars, random, a heuristic, or snf."),
    ] = "mars-cw",
    window: Annotated[int | None, typer.Option(help="Window of a heuristic.")] = None,
    budget: Annotated[
        float, typer.Option(help="Wall-clock seconds for MARS's decision (per tick).")
    ] = 5.0,
    iterations: Annotated[
        int | None,
        typer.Option(help="MARS iterations per tree instead of a time budget (deterministic)."),
    ] = None,
    trees: Annotated[int | None, typer.Option(help="MARS trees (default: cores).")] = None,
    seed: Annotated[int, typer.Option(help="MARS seed.")] = 17,
    partition: Annotated[
        str | None,
        typer.Option(
            help="Manage this partition only (default: every job).", rich_help_panel=PANEL
        ),
    ] = None,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply", help="Write the priorities (default: dry run).", rich_help_panel=PANEL
        ),
    ] = False,
    interval: Annotated[
        float | None,
        typer.Option(help="Loop: one tick every this many seconds.", rich_help_panel=PANEL),
    ] = None,
    max_ticks: Annotated[
        int | None, typer.Option(help="Loop: stop after this many ticks.", rich_help_panel=PANEL)
    ] = None,
    release: Annotated[
        bool,
        typer.Option(
            "--release",
            help="Return every managed job to Slurm's own priority and exit.",
            rich_help_panel=PANEL,
        ),
    ] = False,
    release_on_exit: Annotated[
        bool,
        typer.Option(
            "--release-on-exit",
            help="Loop: release the managed jobs when stopped (SIGINT, SIGTERM).",
            rich_help_panel=PANEL,
        ),
    ] = False,
    drain_holds: Annotated[
        bool,
        typer.Option(
            "--drain-holds",
            help="When MARS drains, also hold the jobs Slurm could start in its place "
            "(lifted at the next tick).",
            rich_help_panel=PANEL,
        ),
    ] = False,
    unlimited: Annotated[
        float,
        typer.Option(
            help="Run-time estimate of jobs without a time limit (s).", rich_help_panel=PANEL
        ),
    ] = DEFAULT_UNLIMITED,
    log: Annotated[
        Path, typer.Option(help="Decision log (JSON lines, appended).", rich_help_panel=PANEL)
    ] = Path("hpcsched-advise.jsonl"),
    all_rows: Annotated[
        bool, typer.Option("--all", help="Show every job of the plan, not the first 30.")
    ] = False,
) -> int:
    """Plan the pending jobs of a Slurm cluster with an hpcsched policy and steer Slurm by job
    priorities: a dry run by default (the plan as a table), --apply writes them."""
    if slurm == (from_json is not None):
        raise OptionError("give either --slurm or --from-json SQUEUE SINFO", option="--slurm")
    if from_json is not None and (apply or release or interval is not None):
        raise OptionError(
            "a saved snapshot is planned, never changed: drop --apply/--release/--interval",
            option="--from-json",
        )
    adapter = (
        SlurmCluster() if slurm else SlurmSnapshot(from_json[0], from_json[1], reservations, now)  # type: ignore[index]
    )
    advisor = Advisor(
        adapter,
        _policy(policy, window, budget, iterations, trees, seed),
        partition=partition,
        apply=apply,
        drain_holds=drain_holds,
        unlimited=unlimited,
        log_path=str(log),
    )
    if release:
        jobs = advisor.release()
        console.print(f"released {len(jobs)} jobs to Slurm's own priority", highlight=False)
        return 0
    if interval is None:
        show(advisor.tick(), all_rows=all_rows)
        return 0
    if interval <= 0:
        raise OptionError(f"must be positive, not {interval}", option="--interval")
    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    try:
        advisor.run(
            interval, max_ticks=max_ticks, stop=stop, on_tick=lambda r: show(r, all_rows=all_rows)
        )
    finally:
        if release_on_exit:
            jobs = advisor.release()
            console.print(f"released {len(jobs)} jobs to Slurm's own priority", highlight=False)
    return 0


def _policy(
    name: str,
    window: int | None,
    budget: float,
    iterations: int | None,
    trees: int | None,
    seed: int,
) -> PolicySpec:
    base = PolicySpec(name, window)
    if not base.is_search:
        return base
    if iterations is None and not budget > 0:
        raise OptionError(f"must be positive, not {budget}", option="--budget")
    search = SearchSpec(
        iterations=iterations,
        time_budget=None if iterations is not None else budget,
        seed=seed,
        **({"trees": trees} if trees is not None else {}),
    )
    return PolicySpec(name, search=search)


def show(result: TickResult, *, all_rows: bool = False, limit: int = 30) -> None:
    """The plan as a table: job, current priority, new priority, why."""
    plan = result.plan
    s = plan.summary
    d = plan.decision
    mode = (
        "applied" if any(w.outcome == WRITTEN for w in result.writes) or result.held else "dry run"
    )
    choice = ""
    if d:
        window = "all" if d["window"] is None else d["window"]
        choice = f"; order: {d['heuristic']} w={window}" + (" (drain)" if d["drain"] else "")
        if d["iterations"]:
            choice += f", {d['iterations']:,} iterations over {d['outcomes']} outcomes"
    console.print(
        f"[bold]tick {result.number}[/] ({mode}) scope {plan.scope}: {s['nodes']} nodes "
        f"({s['down']} down, {s['busy']} busy), {s['running']} running, {s['pending']} pending"
        f"{choice}; {plan.policy} decided in {result.decide_seconds:.2f} s",
        highlight=False,
    )
    if not plan.changes:
        console.print("nothing to plan: no pending job in this scope", highlight=False)
    outcome = {w.job_id: w.outcome for w in result.writes}
    table = Table(show_edge=False, pad_edge=False)
    for heading in ("job", "name", "user", "nodes", "limit", "priority", "new", "why"):
        table.add_column(
            heading, justify="right" if heading in ("nodes", "priority", "new") else "left"
        )
    rows = plan.changes if all_rows else plan.changes[:limit]
    for c in rows:
        job = c.job
        why = c.why
        if job.job_id in outcome and outcome[job.job_id] != WRITTEN:
            why += f" ({outcome[job.job_id]})"
        table.add_row(
            job.array or str(job.job_id),
            job.name[:20],
            job.user,
            f"{job.nodes} x{job.tasks}" if job.tasks > 1 else str(job.nodes),
            "unlimited" if job.time_limit is None else f"{job.time_limit / 60:.0f} min",
            f"{c.old:,}",
            f"{c.new:,}",
            why,
        )
    if plan.changes:
        console.print(table)
    if len(plan.changes) > len(rows):
        console.print(f"... and {len(plan.changes) - len(rows)} more (--all shows them)")
    for job, why in plan.skipped:
        console.print(f"left alone: job {job.job_id} ({why})", highlight=False)
    if result.held:
        console.print(f"held for the drain: {', '.join(map(str, result.held))}", highlight=False)
    if result.writes:
        written = sum(w.outcome == WRITTEN for w in result.writes)
        err_console.print(
            f"{written} priorities written, {len(result.writes) - written} skipped",
            highlight=False,
        )
