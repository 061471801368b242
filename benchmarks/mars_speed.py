"""MARS search speed (issue 3): iterations per second per core of one search at depth 50 with
all 161 actions, from a Theta-scale state (4360 nodes, at least 200 waiting jobs) taken from a
FCFS+EASY replay of ALCF Theta 2022; and the full replay of a 4000-job Theta slice under
MARS-CW with the budget of `mars_quality.py`.

    python benchmarks/mars_speed.py [--traces DIR]

The search runs in the Rust example `search_speed` (one tree, one thread, no Python in the
loop). The reference is the MARS paper's own rate: a median of 30-40 iterations per tree in a
15 s budget, one tree per core, i.e. 2-2.7 iterations per second per core (published, not
measured here: the authors' code is not part of this project).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAPER_RATE = 35 / 15  # iterations per second per core, MARS paper on Theta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--iterations", type=int, default=3000)
    args = parser.parse_args()
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

    sys.path.insert(0, str(REPO / "benchmarks"))
    import hpcsched
    from mars_quality import theta_slice

    workload = theta_slice(trace, 0)
    search = hpcsched.SearchSpec(iterations=200, trees=2, threads=2, seed=17)
    start = time.perf_counter()
    result = hpcsched.simulate(workload, hpcsched.PolicySpec("mars-cw", search=search))
    seconds = time.perf_counter() - start
    stats = result.info["search"]
    print(
        f"\nfull replay of Theta's first 4000 jobs under MARS-CW (200 iterations x 2 trees, "
        f"2 threads): {seconds:.1f} s, {stats['searches']} searches, "
        f"{stats['seconds_per_search']['mean'] * 1000:.1f} ms per search (max "
        f"{stats['seconds_per_search']['max'] * 1000:.0f} ms), median branching "
        f"{stats['branching']['median']:.0f}"
    )


if __name__ == "__main__":
    main()
