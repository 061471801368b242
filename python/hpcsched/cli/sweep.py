"""``hpcsched sweep``: a grid of runs from a TOML file, resumable, locally or on Ray."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hpcsched.cli._console import console, err_console, interrupted, labelled, runs_progress


def sweep(
    config: Annotated[Path, typer.Argument(help="Sweep file (TOML; see docs/experiments.md).")],
    ray: Annotated[
        str | None,
        typer.Option(
            help="Run on the Ray cluster at this address (e.g. ray://head:10001 or auto), or "
            "'local' to start a local Ray instance. Needs: pip install 'hpcsched[ray]'."
        ),
    ] = None,
    processes: Annotated[
        int | None,
        typer.Option(help="Local processes (default: [sweep] processes, or one per core)."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Output folder (default: [sweep] out).")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the runs of the grid and exit.")
    ] = False,
) -> int:
    """Run every combination of workloads x platforms x policies x parameters in CONFIG.

    Runs already complete in the output folder are not run again, so an interrupted sweep
    resumes where it stopped. Results: OUT/results.parquet (one row per run), OUT/report.html and
    OUT/runs/KEY/ (one run directory per run); OUT/sweep.json says whether the sweep is running,
    complete or was interrupted. One sweep at a time per folder (OUT/sweep.lock)."""
    from hpcsched.cli.compare import print_agreement, print_table
    from hpcsched.report import sweep_report
    from hpcsched.sweep import label_columns, read_sweep, run_label, run_sweep, sweep_status

    plan = read_sweep(config)
    if out is not None:
        plan.out = str(out.resolve())
    status = sweep_status(plan.out)
    if dry_run:
        for run in plan.runs:
            console.print(f"{run.key()}  {run_label(run)}", highlight=False)
        console.print(f"{len(plan.runs)} runs; results would go to {plan.out}", highlight=False)
        if status is not None:
            console.print(
                f"last sweep there: {status.state}, {status.completed} of {status.runs} runs "
                f"complete{f', {status.failed} failed' if status.failed else ''}"
                + (f" (pid {status.pid})" if status.state == "running" else ""),
                highlight=False,
            )
        return 0
    if status is not None and status.state == "interrupted":
        err_console.print(
            labelled(
                "resuming:",
                "bold",
                f"the last sweep in {plan.out} was interrupted with {status.completed} of "
                f"{status.runs} runs complete; only the missing runs run now",
            ),
            soft_wrap=True,
        )
    try:
        with runs_progress("sweep", transient=False) as advance:
            outcome = run_sweep(plan, processes=processes, ray=ray, progress=advance)
    except KeyboardInterrupt:
        after = sweep_status(plan.out)
        kept = f"{after.completed} of {after.runs} runs complete" if after else "nothing written"
        interrupted(
            f"{kept} in {plan.out}; results.parquet lists them and is marked interrupted "
            "(no report written). Run the same command again to run the rest."
        )
        return 130
    if len(outcome.table):
        report = sweep_report(
            outcome.table,
            Path(plan.out) / "report.html",
            title=f"Sweep {plan.name or config.stem}",
            labels=label_columns(outcome.table),
            source=str(config),
        )
        print_table(
            outcome.table,
            f"sweep {plan.name or config.name}",
            labels=label_columns(outcome.table),
            metrics=("wait_mean", "wait_p95", "utilization", "energy_wasted_mwh", "icon_share"),
        )
        print_agreement(outcome.table, labels=label_columns(outcome.table))
    console.print(
        f"{outcome.ran} runs done now, {outcome.reused} already complete, "
        f"{len(outcome.failures)} failed; results: {outcome.results_path}"
        + (f", report: {report}" if len(outcome.table) else ""),
        highlight=False,
    )
    for label, message, _ in outcome.failures:
        err_console.print(labelled("failed:", "bold red", f"{label}: {message}"))
    if outcome.failures:
        # user errors (a bad trace in the grid) exit 2, anything else is a bug
        return 2 if all(user for _, _, user in outcome.failures) else 1
    return 0
