"""MARS quality on real data (issue 3): ALCF Theta 2022, two slices of 4000 jobs, against the
paper's baselines (FCFS, WFP3, SJF, F1, each w=256 + EASY) and the Random baseline.

    python benchmarks/mars_quality.py [--traces DIR] [--iterations 200] [--trees 2]

Prints one table per slice (mean, median, P75, P95 wait in hours; bounded slowdown;
utilization; mean and median wait per size class) and checks the issue's criteria:
MARS-CW has the lowest median wait; MARS-CU has a lower mean wait than WFP3 and a utilization
no more than half a point below the best baseline's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

import hpcsched
from hpcsched.experiment import RunConfig, summary_row
from hpcsched.reproduce import THETA, THETA_SLICES, mars_runs, mars_verdicts

REPO = Path(__file__).resolve().parents[1]


def row(name: str, result: hpcsched.Result, seconds: float) -> dict:
    info = result.info
    hours = {k: info["wait"][k] / 3600 for k in ("mean", "median", "p75", "p95")}
    classes = {
        c: (
            v["mean"] / 3600 if v["mean"] is not None else float("nan"),
            v["median"] / 3600 if v["median"] is not None else float("nan"),
        )
        for c, v in info["wait_by_class"].items()
    }
    return {
        "policy": name,
        **hours,
        "bsld": info["bounded_slowdown"]["mean"],
        "util": info["utilization"]["overall_uptime"],
        "classes": classes,
        "seconds": seconds,
    }


def run_slice(runs: list[RunConfig]) -> tuple[list[dict], pd.DataFrame]:
    """The runs of one slice (the workload loaded once, so run times are simulation only):
    the printed rows and the summary table the paper's criteria are checked on."""
    workload = runs[0].workload.load()
    rows, summary = [], []
    for config in runs:
        t = time.perf_counter()
        result = hpcsched.simulate(workload, config.policy)
        rows.append(row(config.policy.label, result, time.perf_counter() - t))
        summary.append({"policy": config.policy.label, **summary_row(result.info)})
    return rows, pd.DataFrame(summary)


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(
        "| policy | mean | median | P75 | P95 | bsld | util % | S mean/med | M mean/med | "
        "L mean/med | XL mean/med | run s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        classes = " | ".join(f"{m:.2f} / {md:.2f}" for m, md in r["classes"].values())
        print(
            f"| {r['policy']} | {r['mean']:.2f} | {r['median']:.2f} | {r['p75']:.2f} | "
            f"{r['p95']:.2f} | {r['bsld']:.1f} | {100 * r['util']:.2f} | {classes} | "
            f"{r['seconds']:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--trees", type=int, default=2)
    args = parser.parse_args()
    if not (args.traces / THETA).is_file():
        sys.exit(f"{args.traces / THETA} not found (give --traces DIR)")
    print(
        f"MARS budget: {args.iterations} iterations per tree, {args.trees} trees, depth 50, "
        "gamma 0.99, 161 actions, seed 17. Waits in hours (all jobs, zero waits included)."
    )
    failures = 0
    runs = mars_runs(args.traces, args.iterations, args.trees)
    for title in THETA_SLICES:
        rows, summary = run_slice([r for r in runs if r.workload.name == f"Theta {title}"])
        print_table(f"ALCF Theta 2022, {title}", rows)
        for verdict, holds in mars_verdicts(summary).items():
            print(verdict)
            failures += not holds
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
