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

import hpcsched
from hpcsched.experiment import WorkloadSpec
from hpcsched.workload.model import Workload

REPO = Path(__file__).resolve().parents[1]
SLICES = {"first 4000": 0, "jobs 12000-15999": 12000}
BASELINES = [("FCFS", "fcfs", None), ("WFP3", "wfp3", 256), ("SJF", "sjf", 256), ("F1", "f1", 256)]


def theta_slice(trace: Path, start: int, size: int = 4000) -> Workload:
    return WorkloadSpec(path=str(trace), start=start, stop=start + size).load()


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


def run_slice(workload: Workload, iterations: int, trees: int) -> list[dict]:
    rows = []
    for name, policy, window in BASELINES:
        t = time.perf_counter()
        rows.append(
            row(name, hpcsched.simulate(workload, policy, window=window), time.perf_counter() - t)
        )
    search = hpcsched.SearchSpec(iterations=iterations, trees=trees, seed=17)
    for name, policy in [("Random", "random"), ("MARS-CW", "mars-cw"), ("MARS-CU", "mars-cu")]:
        t = time.perf_counter()
        result = hpcsched.simulate(workload, hpcsched.PolicySpec(policy, search=search))
        rows.append(row(name, result, time.perf_counter() - t))
    return rows


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


def check(rows: list[dict]) -> list[str]:
    by = {r["policy"]: r for r in rows}
    others = [r for r in rows if r["policy"] != "MARS-CW"]
    baselines = [by[n] for n, _, _ in BASELINES] + [by["Random"]]
    verdicts = [
        (
            "MARS-CW has the lowest median wait",
            all(by["MARS-CW"]["median"] <= r["median"] for r in others),
        ),
        ("MARS-CU mean wait < WFP3 mean wait", by["MARS-CU"]["mean"] < by["WFP3"]["mean"]),
        (
            "MARS-CU utilization >= best baseline - 0.5 pt",
            by["MARS-CU"]["util"] >= max(r["util"] for r in baselines) - 0.005,
        ),
    ]
    return [f"{'PASS' if ok else 'FAIL'}: {text}" for text, ok in verdicts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--trees", type=int, default=2)
    args = parser.parse_args()
    trace = args.traces / "ALCF-Theta-2022.swf.gz"
    if not trace.is_file():
        sys.exit(f"{trace} not found (give --traces DIR)")
    print(
        f"MARS budget: {args.iterations} iterations per tree, {args.trees} trees, depth 50, "
        "gamma 0.99, 161 actions, seed 17. Waits in hours (all jobs, zero waits included)."
    )
    failures = 0
    for title, start in SLICES.items():
        rows = run_slice(theta_slice(trace, start), args.iterations, args.trees)
        print_table(f"ALCF Theta 2022, {title}", rows)
        for verdict in check(rows):
            print(verdict)
            failures += verdict.startswith("FAIL")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
