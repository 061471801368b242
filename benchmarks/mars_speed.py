"""MARS search speed (issues 3 and 12): iterations per second per core of one search at depth 50
with all 161 actions, from a Theta-scale state (4360 nodes, at least 200 waiting jobs) taken
from a FCFS+EASY replay of ALCF Theta 2022, with the paper's forward model and with the
stochastic one (run times drawn from the jobs completed before the state, a day of recent
arrivals), then the rollout look-ahead from the same states with the stochastic model (every
future drawn and built inside the timed part; its iterations are rollouts); and the full replay
of a 4000-job Theta slice (with its maintenance calendar) under MARS-CW with the budget of
`mars_quality.py` and under MARS-WB with the rollout look-ahead. Last (issue 42), the same
search where jobs share Theta's nodes as 64 cores (each job asking its nodes' cores as one-CPU
tasks, placed by the cons_tres rule), against whole nodes measured just before it.

    python benchmarks/mars_speed.py [--traces DIR]

The search runs in the Rust example `search_speed` (one tree, one thread, no Python in the
loop). The reference is the MARS paper's own rate (published, not measured here: the authors'
code is not part of this project): a median of 30-40 iterations per tree in a 15 s budget, with
250 trees on one node of 128 physical cores (256 hardware threads), i.e. about 35 x 250 / 15 /
128 = 4.6 iterations per second per physical core. The comparison is of orders of magnitude
only: the paper searched Theta 2021 states with its own (leaky) forward model and C++ code.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: iterations per second per physical core in the MARS paper: 35 per tree in 15 s, 250 trees on
#: 128 cores
PAPER_RATE = 35 * 250 / 15 / 128


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--jobs", type=int, default=4000, help="jobs of the replayed slice")
    parser.add_argument("--smoke", action="store_true", help="small inputs (CI)")
    args = parser.parse_args()
    if args.smoke:
        args.iterations, args.jobs = 50, 300
    trace = args.traces / "ALCF-Theta-2022.swf.gz"
    if not trace.is_file():
        sys.exit(f"{trace} not found (give --traces DIR)")
    subprocess.run(
        [
            "cargo",
            "build",
            "--quiet",
            "--release",
            "-p",
            "hpcsched-core",
            "--example",
            "search_speed",
        ],
        cwd=REPO,
        check=True,
    )
    binary = REPO / "target" / "release" / "examples" / "search_speed"
    for min_queue in (200, 290):
        out = subprocess.run(
            [binary, trace, str(args.iterations), str(min_queue)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        print(out.rstrip())
        for rate in re.findall(r"([\d.]+) iterations/s", out):
            print(
                f"  -> {float(rate) / PAPER_RATE:,.0f}x the MARS paper's per-core rate "
                f"({PAPER_RATE:.1f} it/s/core)"
            )

    rates = {}
    for label, extra in (("whole nodes", {}), ("as 64 cores", {"SEARCH_SPEED_CORES": "64"})):
        out = subprocess.run(
            [binary, trace, str(args.iterations // 5 or 1), "200"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "SEARCH_SPEED_PARTITION": "1", **extra},
        ).stdout
        print(f"\n{label}:\n{out.rstrip()}")
        rates[label] = [float(r) for r in re.findall(r"([\d.]+) iterations/s", out)][:4]
    ratios = [c / w for c, w in zip(rates["as 64 cores"], rates["whole nodes"], strict=True)]
    print(
        "  -> MARS tree search as cores keeps "
        + ", ".join(f"{r:.3f}" for r in ratios)
        + " of the whole-node iterations/s (CW, CU paper's; CW, CU)"
    )

    import tempfile

    import hpcsched
    from hpcsched.experiment import WorkloadSpec
    from hpcsched.reproduce import ANNOUNCE_LEAD, MarsSlice, write_maintenance

    workload = WorkloadSpec(path=str(trace), start=0, stop=args.jobs).load()
    search = hpcsched.SearchSpec(iterations=200, trees=2, threads=2, seed=17)
    for name, spec, budget in (
        ("mars-cw", search, "200 iterations x 2 trees"),
        ("mars-wb", replace(search, lookahead="rollout"), "rollout look-ahead, 6 bases"),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            calendar = write_maintenance(MarsSlice("Theta", trace, 0, args.jobs), Path(tmp))
            start = time.perf_counter()
            result = hpcsched.simulate(
                workload,
                hpcsched.PolicySpec(name, search=spec),
                downtime=calendar,
                announce_lead=ANNOUNCE_LEAD,
            )
        seconds = time.perf_counter() - start
        stats = result.info["search"]
        print(
            f"\nfull replay of Theta's first {args.jobs} jobs under {name.upper()} ({budget}, "
            f"2 threads): {seconds:.1f} s, {stats['searches']} searches, "
            f"{stats['seconds_per_search']['mean'] * 1000:.1f} ms per search (max "
            f"{stats['seconds_per_search']['max'] * 1000:.0f} ms), median branching "
            f"{stats['branching']['median']:.0f}"
        )


if __name__ == "__main__":
    main()
