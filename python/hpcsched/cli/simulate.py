"""``hpcsched simulate``: replay one trace under one policy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from hpcsched.cli import _options as opt
from hpcsched.cli import _schedule
from hpcsched.cli._console import (
    LazyProgress,
    Terminated,
    console,
    hours,
    interrupted,
    kept_whole,
    labelled,
    percent,
)


@opt.command
def simulate(
    trace: opt.Trace,
    *,
    policy: Annotated[
        str,
        typer.Option(
            help="fcfs, lcfs, sjf, ljf, srf, lrf, scf, lcf, fcsj, wfp1, wfp3, fat, unicef, "
            "f1, f2, f3, f4, snf; slurm, Slurm 22.05's priority and backfill (the settings of "
            "--slurm-conf, else Slurm's defaults); the look-ahead mars-cw, mars-cu, mars-wb, "
            "mars (with --reward), random; under a power manager (--power) or the paper names "
            "fcfs-b+ipm, snf+ipm, snf-icon, snf-icon-ng, snf-icon-nf, snf-icon-ngnf (with "
            "--platform); recorded, the starts the trace records; or your own class, "
            "python:FILE.py:CLASS or python:MODULE:CLASS (see docs/policies.md)."
        ),
    ] = "fcfs",
    window: Annotated[
        int | None,
        typer.Option(help="Jobs at the head of the queue the heuristic sorts (default: all)."),
    ] = None,
    backfill: opt.Backfill = None,
    reading: opt.TraceOptions,
    part: opt.Slice = None,
    setting: opt.RunOptions,
    out: Annotated[
        Path | None, typer.Option(help="Run directory (default: runs/TRACE-POLICY).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the run directory --out if it holds a run.")
    ] = False,
    csv: Annotated[bool, typer.Option("--csv", help="Also write jobs.csv.")] = False,
    batsim_jobs: _schedule.BatsimJobs = None,
    gantt: _schedule.Gantt = None,
    gantt_hours: _schedule.GanttHours = None,
    lenient: opt.Lenient = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Fail on jobs larger than the machine instead of skipping them."
        ),
    ] = False,
    tuning: opt.PolicyOptions,
) -> int:
    """Replay TRACE under one policy and write a run directory (jobs.parquet, summary.json,
    and decisions.parquet for look-ahead policies)."""
    from hpcsched.comparison import slug
    from hpcsched.experiment import slice_workload
    from hpcsched.output import check_writable
    from hpcsched.protocol import PythonPolicySpec
    from hpcsched.run import check_overrun, resolve_platform
    from hpcsched.run import simulate as run_simulation
    from hpcsched.workload import load_workload

    spec = opt.policy_spec(policy, window, backfill, tuning)
    extras = _schedule.ScheduleOutputs.checked(batsim_jobs, gantt, gantt_hours)
    opt.check_used([spec], tuning)
    log = tuning.log([spec])
    if setting.overrun is not None:
        check_overrun(setting.overrun)
    nodes, ppn = reading.checked()
    start, stop = opt.job_slice(part)
    machine, nodes = resolve_platform(setting.site(), nodes)
    if out is None:
        name = slug(spec.name) if isinstance(spec, PythonPolicySpec) else spec.name
        stem = opt.trace_stem(trace) + opt.slice_suffix(start, stop)
        out = (
            Path("runs") / f"{stem}-{name}"
            if spec.window is None
            else Path("runs") / f"{stem}-{name}-w{spec.window}"
        )
    check_writable(out, kind="run", option="--out", replace=force)  # now, not after the run
    progress: LazyProgress | None = None
    try:
        workload = load_workload(
            trace,
            format=reading.format,
            nodes=nodes,
            procs_per_node=ppn,
            lenient=lenient,
            strict=strict,
        )
        if part is not None:  # recorded as the trace's name: summary.json's inputs.trace
            workload = slice_workload(workload, start, stop, option="--slice")
        progress = LazyProgress(
            workload.last_submit,
            f"{spec.label} on {trace.name}",
            unix_start=workload.unix_start_time,
        )
        result = run_simulation(
            workload,
            spec,
            downtime=setting.downtime,
            platform=machine,
            out=out,
            csv=csv,
            progress=progress,
            decision_log=log,
            **setting.given(),
        )
    except KeyboardInterrupt as stop:
        # the run directory is written whole or not at all: an interrupted run wrote nothing
        if progress is not None:
            progress.close(keep=True)
        how = "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"
        reached = "while reading the trace" if progress is None else f"at {progress.reached()}"
        interrupted(f"stopped by {how} {reached}: nothing written to {out}")
        return 130
    finally:
        if progress is not None:
            progress.close()  # a no-op once kept
    _print_summary(result.info, out)
    for what, path in extras.write(result):
        console.print(labelled(f"{what}:", "green", str(path)))
    return 0


def _print_summary(info: dict[str, Any], out: Path) -> None:
    from hpcsched.run.never_started import never_started_text

    wait, jobs, wl = info["wait"], info["jobs"], info["workload"]
    table = Table(
        title=f"{info['inputs']['policy']['name']} on {Path(wl and info['inputs']['trace']).name}",
        show_header=False,
        title_justify="left",
    )
    never = jobs.get("never_started") or 0
    table.add_row(
        "jobs",
        f"{wl['jobs']:,} replayed"
        + (f" ({jobs['completed']:,} started, {never:,} never started)" if never else "")
        + f", {wl['skipped_total']:,} skipped"
        + (
            f" ({', '.join(f'{k}: {v}' for k, v in wl['skipped'].items() if v)})"
            if wl["skipped_total"]
            else ""
        ),
    )
    table.add_row("machine", f"{info['inputs']['nodes']:,} nodes")
    kinds = ", ".join(f"{k} {v}" for k, v in jobs["start_kinds"].items() if v)
    if kinds:  # the recorded schedule's starts have no kind
        table.add_row("starts", kinds)
    record = info.get("record")
    if record:
        _add_record_rows(table, record, info["inputs"]["nodes"])
    if info["inputs"]["overrun"] == "kill" or jobs["killed_overrun"]:
        table.add_row("killed at their requested time", f"{jobs['killed_overrun']:,} jobs")
    if never:
        table.add_row(
            "never started",
            # (the refusals by reason have their own row)
            f"{never_started_text(jobs, refusals=False)}; waits and slowdowns are of the "
            f"{jobs['completed']:,} jobs that started",
        )
    table.add_row(
        "wait mean / median / P95 / max",
        " / ".join(hours(wait[k]) for k in ("mean", "median", "p95", "max")),
    )
    bsld = info["bounded_slowdown"]["mean"]
    table.add_row("bounded slowdown (mean)", "-" if bsld is None else f"{bsld:.2f}")
    utilization = info["utilization"]
    if utilization.get("basis") == "cpus":
        # jobs share nodes: of the CPUs, with each resource beside
        others = [
            f"{name.removeprefix('gres/')} {percent(value)}"
            for name, value in utilization["by_resource"].items()
            if name != "cpus" and value is not None
        ]
        table.add_row(
            "utilization of the CPUs",
            percent(utilization["overall_uptime"]) + (f" ({', '.join(others)})" if others else ""),
        )
    else:
        table.add_row("utilization over uptime", percent(utilization["overall_uptime"]))
    if "partitions" in info:
        _add_partition_rows(table, info)
    _add_refused_row(table, info)
    down = info["downtime"]
    if down["windows"]:
        plural = "s" if down["windows"] != 1 else ""
        outside = down.get("outside_run") or 0
        table.add_row(
            "downtime",
            f"{down['windows']} window{plural}"
            + (f" ({outside} outside the run)" if outside else "")
            + f", {down['killed_attempts']} jobs killed and requeued",
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
        drained = info["jobs"]["start_kinds"].get("drain", 0)
        table.add_row(
            "look-ahead",
            f"{search['searches']:,} searches of {search['invocations']:,} invocations, "
            f"{search['drains']:,} drain decisions ({drained:,} jobs started after one); "
            f"median {search['branching']['median']:.0f} distinct outcomes, "
            f"{search['iterations_per_search']['mean']:,.0f} iterations and "
            f"{1000 * search['seconds_per_search']['mean']:.1f} ms per search",
        )
    agreement = info.get("agreement")
    if agreement and agreement["jobs"]:
        error = agreement["start_error"]
        table.add_row(
            "agreement with the record",
            f"start error mean {hours(error['mean'])}, median {hours(error['median'])}, "
            f"{percent(error['within_1h'])} within 1 h; wait rank correlation "
            + _number(agreement["wait_rank_correlation"], ".3f")
            + f"; mean wait {_signed_hours(agreement['wait_mean_difference'])}, utilization "
            + _number(_points(agreement["utilization_difference"]), "+.1f")
            + " points against the record (over the span both cover)",
        )
    timing = info["timing"]
    table.add_row(
        "simulated in",
        f"{timing['simulate_seconds']:.2f} s ({timing['jobs_per_second']:,.0f} jobs/s)"
        if timing["jobs_per_second"]
        else "-",
    )
    table.add_row("results", str(out))
    console.print(kept_whole(table))
    for warning in [*wl["warnings"], *info.get("warnings", [])]:
        console.print(labelled("warning:", "yellow", warning))


def _add_partition_rows(table: Table, info: dict[str, Any]) -> None:
    """Each partition's jobs, waits and utilization."""
    for name, part in info["partitions"].items():
        wait = part["wait"]
        table.add_row(
            f"partition {name}",
            f"{part['jobs']:,} jobs on {part['nodes']:,} nodes, wait mean {hours(wait['mean'])}"
            f" / P95 {hours(wait['p95'])}, utilization {percent(part['utilization'])}"
            + _partition_energy(part)
            if part["jobs"]
            else f"no job on {part['nodes']:,} nodes",
        )


def _partition_energy(part: dict[str, Any]) -> str:
    """``, 0.0123 MWh (0.0005 wasted idle)``: a partition's energy, when its nodes have power."""
    energy = part.get("energy")
    if not energy:
        return ""
    return f", {energy['total_mwh']:.4g} MWh ({energy['wasted_mwh']:.4g} wasted idle)"


def _add_refused_row(table: Table, info: dict[str, Any]) -> None:
    """The jobs refused at submission (a partition's limits, a QOS' submission limit)."""
    refused = info["jobs"].get("rejected")
    if refused and refused["total"]:
        reasons = ", ".join(
            f"{k.replace('_', ' ')} {v:,}" for k, v in refused["by_reason"].items() if v
        )
        total = refused["total"]
        noun = "job" if total == 1 else "jobs"
        table.add_row("refused at submission", f"{total:,} {noun} ({reasons})")


#: How the run treated each kind of conflict with the record, in short (summary.json says it
#: whole).
_TREATED = {
    "unknown_wait": "not started",
    "over_capacity": "kept, all counted busy",
    "in_downtime": "kept, not killed",
    "overrun": "ran its recorded time",
}


def _add_record_rows(table: Table, record: dict[str, Any], machine: int) -> None:
    """What the recorded schedule replayed, and each kind of conflict with the machine model."""
    table.add_row("recorded starts", f"{record['replayed']:,} jobs started as recorded")
    from hpcsched.workload.record import CONFLICT_NAMES

    for kind, treated in _TREATED.items():
        name = CONFLICT_NAMES[kind][0]
        conflict = record["conflicts"][kind]
        if not conflict["jobs"]:
            continue
        text = f"{conflict['jobs']:,} jobs (e.g. job {conflict['examples'][0]})"
        if kind == "over_capacity" and "by_resource" in conflict:
            # shared nodes: what was over, checked per node or per partition
            over = ", ".join(
                f"{name} {entry['jobs']:,}"
                for name, entry in conflict["by_resource"].items()
                if entry["jobs"]
            )
            text += f"; over in {over} ({conflict['checked']}), {hours(conflict['seconds'])}"
            name = "more held than nodes have"
        elif kind == "over_capacity":
            text += (
                f"; at most {conflict['peak_busy_nodes']:,} of {machine:,} nodes busy, "
                f"{hours(conflict['seconds'])} above"
            )
        table.add_row(f"conflict: {name}", f"{text}; {treated}")
    left = record["left_out"]
    if left["by_the_archive"]:
        table.add_row("left out of the log", f"{left['by_the_archive']:,} jobs by the archive")


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _points(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _signed_hours(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 3600:+,.2f} h"
