"""``hpcsched advise``: plan a live Slurm cluster (or a saved snapshot) and steer it by
priorities."""

from __future__ import annotations

import dataclasses
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from hpcsched.cli._console import console, err_console, kept_whole
from hpcsched.exceptions import HpcschedError, OptionError
from hpcsched.units import duration_text

if TYPE_CHECKING:
    from hpcsched.advise.plan import Plan
    from hpcsched.advise.runner import Advisor, ReleaseResult, TickResult
    from hpcsched.advise.slurm import SlurmCluster, SlurmSnapshot
    from hpcsched.advise.slurm_order import SlurmOrder
    from hpcsched.policies import PolicySpec

PANEL = "Safety and scope"
ORDER = "Slurm's own order"


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
    partitions: Annotated[
        Path | None,
        typer.Option(
            help="With --from-json: saved `scontrol show partition` output; each partition is "
            "then planned on its own nodes, with its tier and limits."
        ),
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
    lookahead: Annotated[
        str,
        typer.Option(
            help="MARS look-ahead: tree (the paper's search) or rollout (each outcome followed "
            "by six heuristics; with --policy mars-wb, the measured best: BENCHMARKS.md)."
        ),
    ] = "tree",
    partition: Annotated[
        str | None,
        typer.Option(
            help="Manage only the jobs whose partitions are all in this one (or in this "
            "comma-separated list; default: every job).",
            rich_help_panel=PANEL,
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
            help="Hand back what the decision log shows the advisor changed (its priorities "
            "and holds, in scope) to Slurm and exit; nothing else is touched.",
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
        float | None,
        typer.Option(
            help="Run-time estimate of jobs without a time limit (s; default: a year).",
            rich_help_panel=PANEL,
        ),
    ] = None,
    log: Annotated[
        Path | None,
        typer.Option(
            help="Decision log (JSON lines, appended), also the record --release hands back "
            "from (default: $XDG_STATE_HOME/hpcsched/advise.jsonl, else "
            "~/.local/state/hpcsched/advise.jsonl).",
            rich_help_panel=PANEL,
        ),
    ] = None,
    all_rows: Annotated[
        bool, typer.Option("--all", help="Show every job of the plan, not the first 30.")
    ] = False,
    slurm_order: Annotated[
        bool,
        typer.Option(
            "--slurm-order",
            help="Show Slurm's own order of the queue beside the plan (its priorities from "
            "the cluster's slurm.conf, as `scontrol show config` names it, or --slurm-conf).",
            rich_help_panel=ORDER,
        ),
    ] = False,
    slurm_conf: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="The cluster's slurm.conf for --slurm-order (implies it; needed with "
            "--from-json).",
            rich_help_panel=ORDER,
        ),
    ] = None,
    slurm_accounts: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Associations and QOS for --slurm-order (implies it): a 'sacctmgr dump' "
            "file, 'sacctmgr show assoc -P' output or a TOML file (default: one account per "
            "account of the queue, QOS normal).",
            rich_help_panel=ORDER,
        ),
    ] = None,
) -> int:
    """Plan the pending jobs of a Slurm cluster with an hpcsched policy and steer Slurm by job
    priorities: a dry run by default (the plan as a table), --apply writes them."""
    from hpcsched.advise.plan import DEFAULT_UNLIMITED
    from hpcsched.advise.runner import Advisor, default_log_path
    from hpcsched.advise.slurm import SlurmCluster, SlurmSnapshot

    if slurm == (from_json is not None):
        raise OptionError("give either --slurm or --from-json SQUEUE SINFO", option="--slurm")
    if from_json is not None and (apply or release or interval is not None):
        raise OptionError(
            "a saved snapshot is planned, never changed: drop --apply/--release/--interval",
            option="--from-json",
        )
    if slurm:
        adapter: SlurmCluster | SlurmSnapshot = SlurmCluster()
    else:
        squeue, sinfo = from_json  # type: ignore[misc]
        adapter = SlurmSnapshot(squeue, sinfo, reservations, now, partitions=partitions)
    order = None
    if slurm_order or slurm_conf is not None or slurm_accounts is not None:
        order = _slurm_order(adapter, slurm_conf, slurm_accounts)
    advisor = Advisor(
        adapter,
        _policy(policy, window, budget, iterations, trees, seed, lookahead),
        partition=partition,
        apply=apply,
        drain_holds=drain_holds,
        unlimited=DEFAULT_UNLIMITED if unlimited is None else unlimited,
        log_path=default_log_path() if log is None else log,
        slurm=order,
    )
    if release:
        show_release(advisor.release(), advisor)
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
    except BaseException:
        if release_on_exit:  # then the error that stopped the loop
            try:
                show_release(advisor.release(), advisor)
            except HpcschedError as exc:
                say(err_console, _line(("release failed:", "bold red"), f" {exc}"))
        raise
    if release_on_exit:
        show_release(advisor.release(), advisor)
    return 0


def _slurm_order(
    adapter: SlurmCluster | SlurmSnapshot, conf: Path | None, accounts: Path | None
) -> SlurmOrder:
    """Slurm's priorities for --slurm-order: ``conf``, else the live cluster's slurm.conf."""
    from hpcsched.advise.slurm import SlurmCluster
    from hpcsched.advise.slurm_order import SlurmOrder

    if conf is None:
        if not isinstance(adapter, SlurmCluster):
            raise OptionError(
                "a saved snapshot names no slurm.conf: give --slurm-conf FILE",
                option="--slurm-order",
            )
        return SlurmOrder.read(adapter.config_path(), accounts)
    return SlurmOrder.read(conf, accounts)


def _policy(
    name: str,
    window: int | None,
    budget: float,
    iterations: int | None,
    trees: int | None,
    seed: int,
    lookahead: str,
) -> PolicySpec:
    from hpcsched.policies import PolicySpec, SearchSpec

    base = PolicySpec(name, window)
    if not base.is_search:
        return base
    try:  # the spec checks the budget, named here as advise's option
        search = SearchSpec(
            iterations=iterations,
            time_budget=None if iterations is not None else budget,
            seed=seed,
            lookahead=lookahead,
        )
    except OptionError as exc:
        if exc.option != "--time-budget":
            raise
        raise OptionError(exc.reason, option="--budget") from None
    if trees is not None:
        search = dataclasses.replace(search, trees=trees)
    return PolicySpec(name, search=search)


def say(where: Console, text: Text) -> None:
    """One message, never cut into lines by rich (a path stays whole)."""
    where.print(text, soft_wrap=True)


def _line(*parts: str | tuple[str, str]) -> Text:
    """Printed as is: user text (job names, users, paths) is never read as markup."""
    return Text.assemble(*parts)


def not_modelled(summary: dict[str, Any]) -> str:
    """What the tick line says the plan could not model: running jobs that share nodes with
    others (the plan gives jobs whole nodes: each node counts once, held by the job that
    started on it first, and the others are left out)."""
    sharing = int(summary.get("sharing") or 0)
    if not sharing:
        return ""
    jobs = "job shares" if sharing == 1 else "jobs share"
    return (
        f"; {sharing} running {jobs} nodes with others: not modelled (each node held once, "
        "by the job that started on it first)"
    )


def show(result: TickResult, *, all_rows: bool = False, limit: int = 30) -> None:
    """The plan as a table: job, current priority, new priority, why."""
    from hpcsched.advise.adapter import WRITTEN
    from hpcsched.advise.plan import left_alone_counts

    plan = result.plan
    s = plan.summary
    d = plan.decision
    choice = ""
    if d:
        window = "all" if d["window"] is None else d["window"]
        choice = f"; order: {d['heuristic']} w={window}" + (" (drain)" if d["drain"] else "")
        if d["iterations"]:
            choice += f", {d['iterations']:,} iterations over {d['outcomes']} outcomes"
    tiers = ""
    if "partitions" in s:  # planned on partitions: each with its tier and state
        tiers = " in " + ", ".join(
            f"{p['name']} (tier {p['tier']}"
            + ("" if p["state"] == "up" else f", {p['state']}")
            + ")"
            for p in s["partitions"]
        )
    if "one_pool" in s:
        tiers = f" as one pool ({s['one_pool']})"
    left = not_modelled(s)
    if plan.skipped:
        kinds = left_alone_counts(plan.skipped)
        left += (
            f"; left alone {len(plan.skipped)} ("
            + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
            + ")"
        )
    console.print(  # wrapped at the terminal's width, words kept whole
        _line(
            (f"tick {result.number}", "bold"),
            f" ({result.mode}) scope {plan.scope}: {s['nodes']} nodes{tiers} ({s['down']} down, "
            f"{s['busy']} busy), {s['running']} running, {s['pending']} pending{left}{choice}; "
            f"{plan.policy} decided in {result.decide_seconds:.2f} s",
        )
    )
    if not plan.changes:
        say(console, _line("nothing to plan: no pending job in this scope"))
    outcome = {w.job_id: w.outcome for w in result.writes}
    table = Table(show_edge=False, pad_edge=False)
    headings = ["job", "name", "user", "nodes", "limit", "priority", "new", "why"]
    # several partitions: where each job starts in the plan (their tiers are on the tick line)
    placed = len(s.get("partitions", ())) > 1
    if placed:
        headings.insert(5, "where")
    for heading in headings:
        table.add_column(
            Text(heading),
            justify="right" if heading in ("nodes", "priority", "new") else "left",
        )
    rows = plan.changes if all_rows else plan.changes[:limit]
    for c in rows:
        job = c.job
        why = c.why
        if job.job_id in outcome and outcome[job.job_id] != WRITTEN:
            why += f" ({outcome[job.job_id]})"
        cells: tuple[str, ...] = (
            job.array or str(job.job_id),
            job.name[:20],
            job.user,
            f"{job.nodes} x{job.tasks}" if job.tasks > 1 else str(job.nodes),
            "unlimited" if job.time_limit is None else duration_text(job.time_limit),
            f"{c.old:,}",
            f"{c.new:,}",
            why,
        )
        if placed:
            cells = (*cells[:5], c.partition or "-", *cells[5:])
        table.add_row(*(Text(cell) for cell in cells))
    if plan.changes:
        console.print(kept_whole(table))
    if len(plan.changes) > len(rows):
        say(console, _line(f"... and {len(plan.changes) - len(rows)} more (--all shows them)"))
    if plan.slurm is not None and plan.changes:
        show_slurm_order(plan, all_rows=all_rows, limit=limit)
    for job, why in plan.skipped:
        say(console, _line(f"left alone: job {job.job_id} ({why})"))
    if result.released:
        say(console, _line(f"holds lifted (replanned): {_ids(result.released)}"))
    if result.held:
        say(console, _line(f"held for the drain: {_ids(result.held)}"))
    for job_id, why in result.hold_failures.items():
        say(console, _line(f"not held for the drain: job {job_id} ({why})"))
    if result.stale_holds:
        say(
            err_console,
            _line(
                f"still held by an earlier advisor run: {_ids(result.stale_holds)} "
                "(--apply or --release lifts them)"
            ),
        )
    if result.mode == "apply":
        written = sum(w.outcome == WRITTEN for w in result.writes)
        failed = [w for w in result.writes if w.outcome.startswith("error: ")]
        skipped = len(result.writes) - written - len(failed)
        say(
            err_console,
            _line(
                f"{written} priorities written, {skipped} skipped"
                + (f", {len(failed)} failed" if failed else "")
                + ("" if result.writes else " (every priority already is the planned one)")
                + (f"; decision log {result.log_path}" if result.log_path else "")
            ),
        )
        for w in failed:
            say(
                err_console,
                _line(
                    ("warning:", "yellow"),
                    f" job {w.job_id} keeps priority {w.old:,}: {w.outcome}",
                ),
            )


def show_slurm_order(plan: Plan, *, all_rows: bool = False, limit: int = 30) -> None:
    """Slurm's own order beside the plan: a summary line, then per job its place in the plan
    and in Slurm's order, and its start under each."""
    from hpcsched.advise.plan import _why

    s = plan.slurm
    assert s is not None
    wait = s["mean_wait"]
    waits = ""
    if wait["jobs"]:
        waits = (
            f"; mean planned wait {duration_text(wait['plan'])} (Slurm's order: "
            f"{duration_text(wait['slurm'])}) over {wait['jobs']} jobs"
        )
    rho = s["rank_correlation"]
    say(console, Text(""))
    console.print(
        _line(
            ("beside Slurm's own order", "bold"),
            f" (priorities from {s['conf']}): the plan moves {s['ahead']} of {s['jobs']} jobs "
            f"ahead of it, {s['behind']} behind, {s['in_place']} in place; rank correlation "
            + ("-" if rho is None else f"{rho:.2f}")
            + waits,
        )
    )
    table = Table(show_edge=False, pad_edge=False)
    for heading in ("job", "user", "plan", "slurm", "moved", "planned", "under slurm"):
        table.add_column(
            Text(heading),
            justify="right" if heading in ("plan", "slurm", "moved") else "left",
        )
    rows = plan.changes if all_rows else plan.changes[:limit]
    for k, c in enumerate(rows):
        if c.slurm_rank is None:
            place = moved = "-"
        else:
            place = str(c.slurm_rank + 1)
            shift = c.slurm_rank - k
            moved = "=" if shift == 0 else f"{shift:+d}"
        under = "-" if c.slurm_start is None else _why(c.slurm_start, plan.now)
        cells = (c.job.array or str(c.job.job_id), c.job.user, str(k + 1), place, moved, c.why)
        table.add_row(*(Text(cell) for cell in (*cells, under)))
    console.print(kept_whole(table))
    say(console, _line("(moved: places the plan starts a job ahead of Slurm's order; -: behind)"))
    for note in s["notes"]:
        console.print(_line(f"note: {note}"))  # wrapped at the width, words kept whole


def show_release(result: ReleaseResult, advisor: Advisor) -> None:
    where = str(advisor.log.path) if advisor.log is not None else "(no log)"
    if not result.had_records:
        say(
            console,
            _line(
                "nothing to release: the decision log ",
                (where, "bold"),
                " records no priority or hold of the advisor's still in place",
            ),
        )
        return
    say(
        console,
        _line(
            f"released {len(result.released)} jobs to Slurm's own priority"
            + (f", lifted {len(result.lifted)} holds" if result.lifted else "")
            + " (decision log ",
            where,
            ")",
        ),
    )
    for job_id, why in result.left_alone:
        say(console, _line(f"left alone: job {job_id} ({why})"))
    for job_id, outcome in result.failed:
        say(err_console, _line(("warning:", "yellow"), f" job {job_id} not released: {outcome}"))


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids))
