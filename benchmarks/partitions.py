"""Partitions (issue 29): CEA Curie with its partitions against Curie as one pool.

Part 1, what partitions change: under FCFS+EASY, WFP3+EASY and SNF, the mean wait of the jobs
of each partition (standard, large, hybrid: where the preset CEA-Curie places them) with the
machine as one pool of its 93,312 processors (the trace's own unit, how hpcsched reads it
without a platform), with its partitions (5,040 thin, 360 fat and 144 hybrid nodes, jobs sized
in their partition's nodes), and as the site recorded it (SWF field 3).

Part 2, speed: the full trace under FCFS+EASY with partitions and as one pool, alternately in
one process, best of ``--repeat`` (the engine's run, ``timing.simulate_seconds``), and the
ratio.

    python benchmarks/partitions.py [--traces DIR] [--jobs N] [--repeat 5] [--smoke]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CURIE = "CEA-Curie-2011-2.1-cln.swf.gz"
POLICIES = (("FCFS+EASY", "fcfs", "easy"), ("WFP3+EASY", "wfp3", "easy"), ("SNF", "snf", None))


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f}"


def waits(traces: Path, stop: int | None) -> None:
    import hpcsched
    from hpcsched.site.assignment import assign_partitions
    from hpcsched.site.platform import load_platform
    from hpcsched.workload import load_workload

    curie = load_platform("CEA-Curie")
    workload = load_workload(traces / CURIE)
    if stop is not None:
        workload = replace(workload, jobs=workload.jobs.iloc[:stop].reset_index(drop=True))
    assert curie.site is not None
    names = np.array([p.name for p in curie.site.partitions])
    assignment = assign_partitions(workload, curie)
    placed = names[assignment.partitions[assignment.offsets[:-1]]]
    recorded = workload.jobs["recorded_wait"].to_numpy()
    print(f"CEA Curie, {len(workload):,} jobs; mean wait (h) of the jobs of each partition")
    print(f"{'policy':<10} {'machine':<11} " + " ".join(f"{n:>9}" for n in names) + "   all")
    line = " ".join(f"{hours(np.nanmean(recorded[placed == n])):>9}" for n in names)
    print(f"{'recorded':<10} {'(the site)':<11} {line} {hours(np.nanmean(recorded)):>6}")
    for label, policy, backfill in POLICIES:
        pool = hpcsched.simulate(workload, policy, backfill=backfill)
        wait = pool.jobs["wait"].to_numpy()
        line = " ".join(f"{hours(np.nanmean(wait[placed == n])):>9}" for n in names)
        print(f"{label:<10} {'one pool':<11} {line} {hours(np.nanmean(wait)):>6}")
        site = hpcsched.simulate(workload, policy, backfill=backfill, platform="CEA-Curie")
        part = site.info["partitions"]
        line = " ".join(f"{hours(part[n]['wait']['mean'] or 0.0):>9}" for n in names)
        print(f"{'':<10} {'partitions':<11} {line} {hours(site.info['wait']['mean']):>6}")
    print()


def speed(traces: Path, stop: int | None, repeat: int) -> None:
    import hpcsched
    from hpcsched.workload import load_workload

    workload = load_workload(traces / CURIE)
    if stop is not None:
        workload = replace(workload, jobs=workload.jobs.iloc[:stop].reset_index(drop=True))
    best = {"one pool": float("inf"), "partitions": float("inf")}
    for _ in range(repeat):
        pool = hpcsched.simulate(workload, "fcfs")
        best["one pool"] = min(best["one pool"], pool.info["timing"]["simulate_seconds"])
        site = hpcsched.simulate(workload, "fcfs", platform="CEA-Curie")
        best["partitions"] = min(best["partitions"], site.info["timing"]["simulate_seconds"])
    print(f"speed: CEA Curie, {len(workload):,} jobs, FCFS+EASY, best of {repeat}")
    for name, seconds in best.items():
        print(f"  {name:<11} {seconds:.3f} s  ({len(workload) / seconds:,.0f} jobs/s)")
    print(f"  partitions / one pool: {best['partitions'] / best['one pool']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--jobs", type=int, default=None, help="only the first JOBS")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="Curie's first 3,000 jobs (CI)")
    args = parser.parse_args()
    if not (args.traces / CURIE).is_file():
        sys.exit(f"{CURIE} not found in {args.traces} (give --traces DIR)")
    print(f"{time.strftime('%Y-%m-%d')}, {platform.node()}, Python {platform.python_version()}")
    stop, repeat = (3000, 1) if args.smoke else (args.jobs, args.repeat)
    waits(args.traces, stop)
    speed(args.traces, stop, repeat)


if __name__ == "__main__":
    main()
