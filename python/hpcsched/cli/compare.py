"""``hpcsched compare``: several policies on one trace, a summary table and an HTML report."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hpcsched.cli import _options as opt
from hpcsched.cli._console import console, fitted_tables, interrupted, runs_progress
from hpcsched.exceptions import OptionError

if TYPE_CHECKING:
    import pandas as pd


@opt.command
def compare(
    trace: opt.Trace,
    *,
    policy: Annotated[
        list[str],
        typer.Option(
            help="A policy to compare, as NAME or NAME:WINDOW (e.g. wfp3:256); repeat the "
            "option for each (see `hpcsched policies`).",
        ),
    ],
    backfill: opt.Backfill = None,
    reading: opt.TraceOptions,
    part: opt.Slice = None,
    setting: opt.RunOptions,
    out: Annotated[
        Path | None,
        typer.Option(help="Folder for the run directories (default: runs/compare-TRACE)."),
    ] = None,
    report: Annotated[
        Path | None, typer.Option(help="HTML report (default: OUT/report.html).")
    ] = None,
    processes: opt.Processes = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Run every policy again, replacing its run directory in OUT (default: a run "
            "directory already holding the same run is kept, so an interrupted comparison "
            "resumes).",
        ),
    ] = False,
    no_recorded: Annotated[
        bool,
        typer.Option(
            "--no-recorded",
            help="Leave out the schedule the trace records (by default a trace with recorded "
            "waits adds it as the first row, and every policy's agreement with it).",
        ),
    ] = False,
    tuning: opt.PolicyOptions,
) -> int:
    """Replay TRACE under every --policy in parallel, print a summary table, and write one run
    directory per policy and a self-contained HTML report."""
    from hpcsched.comparison import compare as run_comparison
    from hpcsched.comparison import records_schedule, split_policy
    from hpcsched.output import check_writable
    from hpcsched.policies import RECORDED, PolicySpec
    from hpcsched.run import Result

    each = dataclasses.replace(tuning, estimates=None)  # given below to the policies that take it
    specs = []
    for text in policy:
        name, window = split_policy(text)
        specs.append(opt.policy_spec(name, window, backfill, each))
    opt.check_used(specs, tuning)
    log = tuning.log(specs)
    if tuning.estimates is not None:
        specs = opt.with_estimates(specs, tuning.estimates)
    nodes, ppn = reading.checked()
    start, stop = opt.job_slice(part)
    out = out or Path("runs") / f"compare-{opt.trace_stem(trace)}{opt.slice_suffix(start, stop)}"
    report = report or out / "report.html"
    if report.suffix.lower() not in (".html", ".htm"):
        raise OptionError(f"{report}: the report is an HTML file (.html)", option="--report")
    check_writable(report, kind="file", option="--report")  # before hours of runs, not after
    done: list[str] = []
    try:
        if not no_recorded and records_schedule(
            str(trace), format=reading.format, procs_per_node=ppn, start=start, stop=stop
        ):
            specs = [PolicySpec(RECORDED), *specs]  # the reference, first (as compare adds it)
        with runs_progress(f"comparing {trace.name}") as update:

            def finished(label: str, _: Result) -> None:
                done.append(label)
                update(len(done), len(specs), label, 0)

            comparison = run_comparison(
                str(trace),
                specs,
                platform=setting.site_name(),
                slurm_accounts=setting.accounts_path(),
                downtime=setting.downtime,
                nodes=nodes,
                procs_per_node=ppn,
                **setting.given(),
                format=reading.format,
                start=start,
                stop=stop,
                processes=processes,
                out=out,  # each run directory is written as its run finishes
                on_done=finished,
                resume=not force,
                decision_log=log,
                recorded=False,  # added above, so that the progress counts it
            )
        path = comparison.report(report)
    except OptionError as error:
        if error.option == "slice":  # read in the runs: a slice past the trace's end
            raise OptionError(error.reason, option="--slice") from None
        raise
    except KeyboardInterrupt:
        interrupted(
            f"{len(done)} of {len(specs)} runs complete in {out} (kept); no report "
            "written. Run the same command again to run the rest."
        )
        return 130
    table = comparison.table
    # the jobs that started and those that never did, when some never did (waits are over
    # the first: the runs' counts differ)
    counts = ("completed", "never_started") if table["never_started"].any() else ()
    print_table(
        table,
        f"{len(specs)} runs on {trace.name} (all metrics in the report)",
        metrics=(
            *counts,
            "wait_mean",
            "wait_median",
            "wait_p95",
            "bsld_mean",
            "utilization",
            # (on shared nodes: memory's and each GRES kind's beside the CPUs')
            *(
                c
                for c in table.columns
                if c.startswith(("utilization_memory", "utilization_gres/"))
            ),
            "energy_wasted_mwh",
            "icon_share",
            "drains",
        ),
    )
    infos = {label: r.info for label, r in comparison.results.items()}
    print_never_started(infos)
    print_agreement(table)
    print_partition_waits(infos)
    reused = len(comparison.reused)
    console.print(f"run directories: {len(done)} in {out}", highlight=False)
    if reused:  # read back, not run: a short line of its own (the folder may be long)
        console.print(
            f"{reused} of {len(done)} runs reused from an earlier run (--force reruns them)",
            highlight=False,
        )
    console.print(f"report: {path}", highlight=False)
    return 0


def print_table(
    table: pd.DataFrame,
    title: str,
    labels: tuple[str, ...] = ("policy",),
    metrics: tuple[str, ...] | None = None,
) -> None:
    """The headline metrics of a results table (those named in ``metrics``, default all), one
    row per run, identified by the ``labels`` columns."""
    from hpcsched.tables import parameter_text, summary_columns

    columns = [c for c in summary_columns(table) if metrics is None or c[0] in metrics]
    # (a parameter's heading wraps at its words: screen_window reads "screen window")
    labelled_cells = [
        (label.replace("_", " "), [parameter_text(v) for v in table[label]]) for label in labels
    ]
    metric_cells = [(heading, [fmt(v) for v in table[column]]) for column, heading, fmt in columns]
    for view in fitted_tables(title, labelled_cells, metric_cells, console.width):
        console.print(view)


def print_never_started(infos: dict[str, dict[str, Any]]) -> None:
    """Why the jobs of each run that never started did not (nothing when every job started):
    a run's waits are over the jobs that started, so the runs' counts of jobs may differ."""
    from hpcsched.cli._console import labelled
    from hpcsched.run.never_started import never_started_text

    for label, info in infos.items():
        text = never_started_text(info["jobs"])
        if text:
            console.print(labelled(f"{label}:", "bold", f"never started: {text}"))


def print_partition_waits(infos: dict[str, dict[str, Any]]) -> None:
    """Each run's mean wait per partition, on a platform with partitions (nothing else)."""
    from hpcsched.tables import partition_wait_cells, partition_waits

    table = partition_waits(infos)
    if table.empty:
        return
    policies = list(dict.fromkeys(table["policy"]))
    title = (
        "mean wait and wasted energy by partition"
        if "energy_mwh" in table
        else "mean wait by partition"
    )
    for view in fitted_tables(
        title, [("policy", policies)], partition_wait_cells(table), console.width
    ):
        console.print(view)


def print_agreement(table: pd.DataFrame, labels: tuple[str, ...] = ("policy",)) -> None:
    """The runs ranked by their agreement with the recorded schedule, the closest first (per
    workload in a sweep's table), identified by the ``labels`` columns; nothing when no trace
    records a schedule."""
    from hpcsched.tables import agreement_columns, by_agreement, parameter_text

    columns = agreement_columns(table)
    if not columns:
        return
    ranked = by_agreement(table)
    labelled_cells = [
        (label.replace("_", " "), [parameter_text(v) for v in ranked[label]]) for label in labels
    ]
    metric_cells = [(heading, [fmt(v) for v in ranked[column]]) for column, heading, fmt in columns]
    title = "agreement with the recorded schedule, closest first (mean start error)"
    for view in fitted_tables(title, labelled_cells, metric_cells, console.width):
        console.print(view)
