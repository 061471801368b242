"""``hpcsched reproduce``: the papers' headline comparisons, one command each."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hpcsched.cli import _options as opt
from hpcsched.cli._console import console, interrupted, runs_progress
from hpcsched.exceptions import OptionError

if TYPE_CHECKING:
    import pandas as pd

    from hpcsched.reproduce import Reproduction

app = typer.Typer(
    help="Reproduce the papers' comparisons and write their reports.", no_args_is_help=True
)

Data = Annotated[
    Path | None,
    typer.Option(
        help="Folder with the workloads (default: $HPCSCHED_DATA, else ../shared/traces)."
    ),
]


@app.command("snf-icon")
def snf_icon(
    data: Data = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("reproduce/snf-icon"),
    seeds: Annotated[
        int | None,
        typer.Option(
            help="Draw transition latencies with seeds 1..N (one run each) and report means "
            "with their standard deviation (default: mean latencies).",
        ),
    ] = None,
    processes: opt.Processes = None,
) -> None:
    """SNF-ICON paper: six cases (DAS2 fs1-fs4, Markovian, SDSC-BLUE) under FCFS/B+IPM,
    SNF+IPM, SNF-ICON and its ablations, plus Taurus-64; mean-wait reductions next to the
    paper's, and whether SNF-ICON waits less than FCFS/B+IPM in each case."""
    from hpcsched.cli.compare import print_table
    from hpcsched.reproduce import reproduce_snf_icon, seed_summary, snf_icon_verdicts

    if seeds is not None and seeds < 1:
        raise OptionError(f"must be at least 1, not {seeds}", option="--seeds")
    with _interruptible(out), runs_progress("SNF-ICON cases") as progress:
        done = reproduce_snf_icon(data, out, seeds=seeds, processes=processes, progress=progress)
    summary = seed_summary(done.table)
    main_policies = ["fcfs-b+ipm", "snf+ipm", "snf-icon"]
    if seeds:
        _print_spread(summary[summary["policy_name"].isin(main_policies)], seeds)
    else:
        print_table(
            done.table[done.table["policy_name"].isin(main_policies)],
            "SNF-ICON reproduction",
            labels=("workload", "platform", "policy"),
            metrics=("wait_mean", "wait_max", "energy_wasted_mwh", "icon_share"),
        )
    for verdict in snf_icon_verdicts(summary):
        console.print(verdict, highlight=False)
    _finish(done)


@app.command("mars")
def mars(
    data: Data = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("reproduce/mars"),
    iterations: Annotated[int, typer.Option(help="MCTS iterations per tree per decision.")] = 200,
    trees: Annotated[int, typer.Option(help="Root-parallel trees.")] = 2,
    seeds: Annotated[int, typer.Option(help="Seeds of the searches (and of Random).")] = 3,
    processes: opt.Processes = None,
) -> None:
    """MARS evaluation: MARS-CW and MARS-CU (tree search), MARS-CW, MARS-CU and MARS-WB
    (rollout look-ahead) against FCFS, WFP3, SJF, F1 (w=256, EASY; requested and predicted
    run times) and Random, over seeds, on five 4000-job slices of ALCF Theta, SDSC-BLUE, CTC
    and HPC2N with a maintenance every 6 days."""
    from hpcsched.cli.compare import print_table
    from hpcsched.reproduce import mars_summary, mars_verdicts, reproduce_mars

    if seeds < 1:
        raise OptionError(f"must be at least 1, not {seeds}", option="--seeds")
    with _interruptible(out), runs_progress("MARS evaluation") as progress:
        done = reproduce_mars(
            data,
            out,
            iterations=iterations,
            trees=trees,
            seeds=seeds,
            processes=processes,
            progress=progress,
        )
    summary = mars_summary(done.table)
    for workload, rows in summary.groupby("workload", sort=False):
        print_table(
            rows,
            f"{workload} (means over seeds)",
            metrics=("wait_mean", "bsld_mean", "wait_max", "utilization_before_maintenance"),
        )
    verdicts = mars_verdicts(summary)
    for row in verdicts.itertuples(index=False):
        console.print(f"{row.overall}: {row.criterion}", highlight=False)
    _finish(done)


def _print_spread(summary: pd.DataFrame, seeds: int) -> None:
    """Means ± standard deviations over the seeds, one row per case and policy (as many tables
    as the terminal's width needs; numbers are never cut)."""
    from hpcsched.cli._console import fitted_tables

    rows = summary.to_dict("records")

    def spread(column: str, digits: int) -> list[str]:
        return [f"{r[column]:,.{digits}f} ± {r[column + '_std']:,.{digits}f}" for r in rows]

    icon = [
        "-" if math.isnan(float(r["icon_share"])) else f"{100 * float(r['icon_share']):.1f}"
        for r in rows
    ]
    labels = [(h, [str(r[h]) for r in rows]) for h in ("workload", "platform", "policy")]
    metrics = [
        ("mean wait (s)", spread("wait_mean", 0)),
        ("wasted (MWh)", spread("energy_wasted_mwh", 3)),
        ("ICON mode (%)", icon),
    ]
    title = f"SNF-ICON reproduction: mean ± std over {seeds} seeds"
    for view in fitted_tables(title, labels, metrics, console.width):
        console.print(view)


@contextlib.contextmanager
def _interruptible(out: Path) -> Iterator[None]:
    """A Ctrl-C ends the command (exit 130) saying how many runs are complete and that the
    same command resumes (the runs are a sweep in ``out``)."""
    from hpcsched.sweep import sweep_status

    try:
        yield
    except KeyboardInterrupt:
        status = sweep_status(out)
        kept = f"{status.completed} of {status.runs} runs complete" if status else "no run complete"
        interrupted(
            f"{kept} in {out} (kept; no report written). Run the same command again to "
            "run the rest."
        )
        raise typer.Exit(130) from None


def _finish(done: Reproduction) -> None:
    outcome = done.outcome
    console.print(
        f"{outcome.ran} runs done now, {outcome.reused} already complete; "
        f"results: {outcome.results_path}; report: {done.report}",
        highlight=False,
    )
