"""``hpcsched reproduce``: the papers' headline comparisons, one command each."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hpcsched.cli._console import console, runs_progress

if TYPE_CHECKING:
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
Processes = Annotated[int | None, typer.Option(help="Parallel processes (default: one per core).")]


@app.command("snf-icon")
def snf_icon(
    data: Data = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("reproduce/snf-icon"),
    processes: Processes = None,
) -> None:
    """SNF-ICON paper: six cases (DAS2 fs1-fs4, Markovian, SDSC-BLUE) under FCFS/B+IPM,
    SNF+IPM, SNF-ICON and its ablations, plus Taurus-64; mean-wait reductions next to the
    paper's."""
    from hpcsched.cli.compare import print_table
    from hpcsched.reproduce import reproduce_snf_icon

    with runs_progress("SNF-ICON cases") as progress:
        done = reproduce_snf_icon(data, out, processes=processes, progress=progress)
    table = done.table
    main = table[table["policy_name"].isin(["fcfs-b+ipm", "snf+ipm", "snf-icon"])]
    print_table(
        main,
        "SNF-ICON reproduction",
        labels=("workload", "platform", "policy"),
        metrics=("wait_mean", "wait_max", "energy_wasted_mwh", "icon_share"),
    )
    _finish(done)


@app.command("mars")
def mars(
    data: Data = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("reproduce/mars"),
    iterations: Annotated[int, typer.Option(help="MCTS iterations per tree per decision.")] = 200,
    trees: Annotated[int, typer.Option(help="Root-parallel trees.")] = 2,
    processes: Processes = None,
) -> None:
    """MARS paper: MARS-CW and MARS-CU against FCFS, WFP3, SJF, F1 (w=256, EASY) and Random on
    two 4000-job slices of ALCF Theta 2022."""
    from hpcsched.cli.compare import print_table
    from hpcsched.reproduce import mars_verdicts, reproduce_mars

    with runs_progress("MARS on Theta") as progress:
        done = reproduce_mars(
            data, out, iterations=iterations, trees=trees, processes=processes, progress=progress
        )
    for workload, rows in done.table.groupby("workload", sort=False):
        print_table(
            rows,
            str(workload),
            metrics=("wait_mean", "wait_median", "wait_p95", "utilization", "drains"),
        )
        for verdict in mars_verdicts(rows):
            console.print(verdict, highlight=False)
    _finish(done)


def _finish(done: Reproduction) -> None:
    outcome = done.outcome
    console.print(
        f"{outcome.ran} runs done now, {outcome.reused} already complete; "
        f"results: {outcome.results_path}; report: {done.report}",
        highlight=False,
    )
