"""Validation of the simulator against reality (issue 28): how close FCFS+EASY, WFP3+EASY,
SJF+EASY, F1+EASY and MARS-CW (rollout look-ahead) come to the schedule each site recorded.

Part 1, validation, for every bundled Parallel Workloads Archive trace that records its waits:

- the recorded schedule (``--policy recorded``): its mean wait and utilization, and its
  conflicts with the machine model (jobs started with more processors busy than the model has,
  the peak, the jobs past their request);
- the five policies on the whole trace: each policy's mean start error, the share of jobs
  within an hour of their recorded start, the rank correlation of waits, the differences in
  mean wait and utilization;
- in the record itself, the hours during which the oldest waiting job fit in the idle
  processors (FCFS+EASY would have started it) and those during which nothing ran while jobs
  waited;
- where the disagreement concentrates: the mean recorded and simulated (FCFS+EASY) wait per queue
  or partition the trace names, for traces with more than one.

Part 2, cost: a full-trace ``simulate`` of CEA Curie (312,826 jobs) under FCFS+EASY with and
without the agreement figures, alternately in one process, best of ``--repeat``, and the ratio.

Machine sizes are the traces' processors (``--procs-per-node 1``, the unit the record's jobs
request and the header's MaxProcs counts).

    python benchmarks/agreement.py [--traces DIR] [--jobs N] [--repeat 7] [--smoke]
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
TRACES = (
    "ALCF-Theta-2022.swf.gz",
    "CEA-Curie-2011-2.1-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
    "DAS2-fs1-2003-1.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "lublin_256.swf.gz",  # synthetic: records no wait, so it is left out (said so)
)
HEURISTICS = ("fcfs", "wfp3", "sjf", "f1")
COST_TRACE = "CEA-Curie-2011-2.1-cln.swf.gz"


def mars_cw():
    from hpcsched import PolicySpec, SearchSpec

    return PolicySpec("mars-cw", search=SearchSpec(lookahead="rollout"))


def hours(seconds: float) -> str:
    return "-" if pd.isna(seconds) else f"{seconds / 3600:,.2f}"


def agreement_rows(comparison) -> None:
    table = comparison.table
    print(
        f"  {'policy':<26} {'mean wait h':>11} {'util %':>7} {'start err h':>11} "
        f"{'within 1h %':>11} {'rank corr':>9} {'d wait h':>9} {'d util pts':>10}"
    )
    for _, row in table.iterrows():
        print(
            f"  {row['policy']:<26} {hours(row['wait_mean']):>11} "
            f"{100 * row['utilization']:>7.1f} {hours(row['start_error_mean']):>11} "
            + (
                "-" if pd.isna(row["start_within_1h"]) else f"{100 * row['start_within_1h']:.1f}"
            ).rjust(12)
            + ("-" if pd.isna(row["wait_rank_corr"]) else f"{row['wait_rank_corr']:.3f}").rjust(10)
            + (
                "-" if pd.isna(row["wait_mean_diff"]) else f"{row['wait_mean_diff'] / 3600:+.2f}"
            ).rjust(10)
            + (
                "-" if pd.isna(row["utilization_diff"]) else f"{100 * row['utilization_diff']:+.1f}"
            ).rjust(11)
        )


def conflicts(comparison) -> None:
    record = comparison.results["Recorded"].info
    conflict = record["record"]["conflicts"]
    over = conflict["over_capacity"]
    left = record["record"]["left_out"]
    print(
        f"  record: {record['record']['replayed']:,} starts; over capacity: {over['jobs']:,} jobs "
        f"(peak {over['peak_busy_nodes']:,} of {record['inputs']['nodes']:,} busy, "
        f"{over['seconds'] / 3600:,.1f} h above, {over['node_seconds'] / 3600:,.0f} "
        f"processor-hours); past their request: {conflict['overrun']['jobs']:,}; unknown "
        f"waits: {conflict['unknown_wait']['jobs']:,}; skipped by the reader: "
        f"{left['by_the_reader']:,}; removed by the archive: {left['by_the_archive'] or 0:,}"
    )


def idle_while_waiting(workload) -> dict[str, float]:
    """In the recorded schedule: the hours during which the oldest waiting job fit in the
    processors left idle (FCFS+EASY, the model's default, would have started it: the site's
    scheduler ordered or held jobs otherwise, or had fewer processors than the model; of those,
    the hours its user had jobs running: a per-user limit would hold it then), the
    hours during which some waiting job fit (EASY may hold such a job back for a
    reservation), and the hours during which nothing ran while jobs waited (an outage, or the
    machine held). Each instant is judged after every submission, start and end at it."""
    import heapq

    from hpcsched.workload.record import recorded_starts

    jobs = workload.jobs
    submit = jobs["submit"].to_numpy()
    start = recorded_starts(jobs)
    end = start + jobs["run_time"].to_numpy()
    nodes = jobs["nodes"].to_numpy()
    known = np.flatnonzero(np.isfinite(start))
    # (time, kind, job): kind 0 end, 1 submit, 2 start; all of an instant before judging it
    times = np.concatenate([end[known], submit[known], start[known]])
    kinds = np.repeat([0, 1, 2], len(known))
    index = np.concatenate([known, known, known])
    order = np.lexsort((kinds, times))
    times, kinds, index = times[order].tolist(), kinds[order].tolist(), index[order].tolist()
    busy = 0
    started = np.zeros(len(jobs), dtype=bool)
    waiting: list[tuple[int, int]] = []  # (nodes, job), started ones removed lazily
    oldest: list[tuple[float, int]] = []  # (submit, job): replay order, removed lazily
    count = 0
    fit_seconds = idle_fit_node_seconds = empty_seconds = head_seconds = 0.0
    user = jobs["user"].to_numpy()
    running_of: dict[int, int] = {}  # user -> jobs running
    head_user_running_seconds = 0.0
    for i, (t, kind, job) in enumerate(zip(times, kinds, index, strict=True)):
        if kind == 0:
            busy -= int(nodes[job])
            # (a job of zero run time ends at its start instant: the sum is right once the
            # instant is complete, which is when it is read)
            running_of[user[job]] = running_of.get(user[job], 0) - 1
        elif kind == 1:
            heapq.heappush(waiting, (int(nodes[job]), job))
            heapq.heappush(oldest, (float(submit[job]), job))
            count += 1
        else:
            busy += int(nodes[job])
            started[job] = True
            running_of[user[job]] = running_of.get(user[job], 0) + 1
            count -= 1
        if i + 1 < len(times) and times[i + 1] == t:
            continue  # judge the instant once every event at it is applied
        while waiting and started[waiting[0][1]]:
            heapq.heappop(waiting)
        while oldest and started[oldest[0][1]]:
            heapq.heappop(oldest)
        span = (times[i + 1] - t) if i + 1 < len(times) else 0.0
        free = workload.nodes - busy
        if count and waiting and waiting[0][0] <= free:
            fit_seconds += span
            idle_fit_node_seconds += span * free
        if oldest and nodes[oldest[0][1]] <= free:
            head_seconds += span
            if running_of.get(user[oldest[0][1]], 0) > 0:
                head_user_running_seconds += span
        if count and busy == 0:
            empty_seconds += span
    return {
        "head_fit_hours": head_seconds / 3600,
        "head_fit_user_running_hours": head_user_running_seconds / 3600,
        "fit_hours": fit_seconds / 3600,
        "fit_idle_node_hours": idle_fit_node_seconds / 3600,
        "empty_hours": empty_seconds / 3600,
    }


def by_group(comparison, workload) -> None:
    """Mean recorded and FCFS+EASY waits per queue or partition, when the trace has several."""
    recorded = comparison.results["Recorded"].jobs
    fcfs = comparison.results["FCFS +EASY"].jobs
    for column, names in (
        ("queue", workload.queue_names),
        ("partition", workload.partition_names),
    ):
        groups = workload.jobs[column].to_numpy()
        values, counts = np.unique(groups, return_counts=True)
        if len(values) < 2:
            continue
        print(f"  by {column}: jobs, mean recorded / FCFS+EASY wait (h)")
        for value, count in sorted(zip(values, counts, strict=True), key=lambda x: -x[1])[:8]:
            mask = groups == value
            name = names.get(int(value), str(value))
            print(
                f"    {column} {value} {name[:24]:<24} {count:>8,} "
                f"{hours(np.nanmean(recorded['wait'].to_numpy()[mask])):>8} / "
                f"{hours(np.nanmean(fcfs['wait'].to_numpy()[mask])):>8}"
            )


def validation(
    traces: Path, names: tuple[str, ...], stop: int | None, processes: int | None
) -> None:
    import hpcsched
    from hpcsched.workload import load_workload
    from hpcsched.workload.record import has_record

    for name in names:
        path = traces / name
        workload = load_workload(path)
        if not has_record(workload):
            print(f"\n{name}: records no wait (synthetic): left out")
            continue
        end = len(workload) if stop is None else min(stop, len(workload))
        print(f"\n{name}: jobs [0, {end:,}) of {len(workload):,} on {workload.nodes:,} processors")
        started = time.perf_counter()
        comparison = hpcsched.compare(
            workload, [*HEURISTICS, mars_cw()], start=0, stop=end, processes=processes
        )
        print(f"  ({time.perf_counter() - started:.0f} s for the six runs)")
        conflicts(comparison)
        if end == len(workload):
            idle = idle_while_waiting(workload)
            span = comparison.results["Recorded"].info["makespan"] / 3600
            print(
                f"  record, of {span:,.0f} h: the oldest waiting job fit in the idle processors "
                f"during {idle['head_fit_hours']:,.0f} h (its user had jobs running during "
                f"{idle['head_fit_user_running_hours']:,.0f} h of them), some waiting job during "
                f"{idle['fit_hours']:,.0f} h ({idle['fit_idle_node_hours']:,.0f} processor-hours "
                f"idle then); nothing ran while jobs waited during {idle['empty_hours']:,.0f} h"
            )
        agreement_rows(comparison)
        if end == len(workload):
            by_group(comparison, workload)


def cost(traces: Path, repeat: int) -> None:
    """simulate end to end (read, replay, write the run directory) with and without the
    agreement figures, alternately."""
    import hpcsched
    import hpcsched.run.summary as summary

    path = str(traces / COST_TRACE)
    with_record = summary.has_record
    times: dict[str, list[float]] = {"with": [], "without": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(repeat):
            for mode in ("with", "without"):
                summary.has_record = with_record if mode == "with" else (lambda _w: False)
                began = time.perf_counter()
                result = hpcsched.simulate(path, "fcfs", out=f"{tmp}/{mode}{k}")
                times[mode].append(time.perf_counter() - began)
                assert ("agreement" in result.info) == (mode == "with")
                if mode == "with":
                    kept = result
    summary.has_record = with_record
    best_with, best_without = min(times["with"]), min(times["without"])
    extra = 100 * (best_with / best_without - 1)
    # the figures alone, on the last run's table: the part of the difference that is theirs
    from hpcsched.agreement import against_record

    alone = []
    for _ in range(repeat):
        began = time.perf_counter()
        against_record(kept.jobs, kept.workload, kept.calendar, kept.lost)
        alone.append(time.perf_counter() - began)
    print(
        f"\ncost on {COST_TRACE} ({len(kept.jobs):,} jobs), simulate FCFS+EASY end to end "
        f"(read, replay, summary, run directory), best of {repeat}: with the agreement "
        f"{best_with:.3f} s, without {best_without:.3f} s: {extra:+.1f} %; the agreement figures "
        f"alone {1000 * min(alone):.1f} ms, {100 * min(alone) / best_without:.1f} % of the run "
        "without them"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--jobs", type=int, default=None, help="only the first JOBS of each")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--processes", type=int, default=None)
    parser.add_argument("--smoke", action="store_true", help="KTH-SP2's first 300 jobs (CI)")
    args = parser.parse_args()
    if not args.traces.is_dir():
        sys.exit(f"traces not found in {args.traces} (give --traces DIR)")
    print(f"machine: {platform.processor() or platform.machine()}, {platform.python_version()}")
    if args.smoke:
        validation(args.traces, ("KTH-SP2-1996-2.1-cln.swf.gz",), 300, 1)
        return
    validation(args.traces, TRACES, args.jobs, args.processes)
    cost(args.traces, args.repeat)


if __name__ == "__main__":
    main()
