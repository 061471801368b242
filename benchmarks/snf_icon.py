"""SNF-ICON reproduction and speed (issue 4).

    python benchmarks/snf_icon.py [--traces DIR] [--full]

1. The paper's six cases (AOBA-64 with DAS2 fs1-fs4 and the Markovian workload, AOBA-1152 with
   SDSC-BLUE; workloads from ../shared/traces/snf-icon-paper/), each under FCFS/B+IPM, SNF+IPM
   and SNF-ICON: mean and max wait, wasted MWh, ICON-mode share, and SNF-ICON's mean-wait
   reduction against FCFS/B+IPM and SNF+IPM next to the paper's; then the Taurus-64 cases for
   DAS2 fs2 and the Markovian workload.
2. Speed: each case under SNF-ICON end to end; with --full, the full SDSC-BLUE trace (243,306
   jobs, 1152 nodes) under SNF-ICON and its median decision time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import hpcsched
from hpcsched.reproduce import SNF_ICON_CASES, TAURUS_CASES

REPO = Path(__file__).resolve().parents[1]
# the paper's cases and its reductions live with `hpcsched reproduce snf-icon`
CASES = SNF_ICON_CASES
TAURUS = TAURUS_CASES
POLICIES = ["fcfs-b+ipm", "snf+ipm", "snf-icon"]


def run(path: Path, policy: str, platform: str) -> dict:
    start = time.perf_counter()
    result = hpcsched.simulate(path, policy, platform=platform)
    seconds = time.perf_counter() - start
    energy = result.info["energy"]
    return {
        "mean": result.info["wait"]["mean"],
        "max": result.info["wait"]["max"],
        "wasted": energy["wasted_mwh"],
        "icon": energy["mode_occupancy"].get("icon", 0.0),
        "seconds": seconds,
        "decision_ms": 1000 * float(np.median(result.decisions["seconds"])),
    }


def table(cases, data_dir: Path, with_paper: bool) -> None:
    print(
        "| workload | platform | policy | mean wait s | max wait s | wasted MWh | ICON share "
        "| run s |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for case in cases:
        name, platform = case[0], case[1]
        rows = {p: run(data_dir / f"{name}.json.gz", p, platform) for p in POLICIES}
        for policy, r in rows.items():
            share = f"{100 * r['icon']:.1f}%" if policy == "snf-icon" else "-"
            print(
                f"| {name} | {platform} | {policy} | {r['mean']:.0f} | {r['max']:.0f} | "
                f"{r['wasted']:.2f} | {share} | {r['seconds']:.2f} |"
            )
        icon, fcfs, snf = rows["snf-icon"], rows["fcfs-b+ipm"], rows["snf+ipm"]
        vs_fcfs = 100 * (1 - icon["mean"] / fcfs["mean"])
        vs_snf = 100 * (1 - icon["mean"] / snf["mean"])
        paper = f" (paper {case[2]}% and {case[3]}%)" if with_paper else ""
        print(
            f"|  |  | SNF-ICON mean-wait reduction | vs FCFS/B+IPM {vs_fcfs:.1f}%, vs SNF+IPM "
            f"{vs_snf:.1f}%{paper} |  |  |  |  |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces")
    parser.add_argument("--full", action="store_true", help="also the full SDSC-BLUE trace")
    parser.add_argument("--smoke", action="store_true", help="the first case only (CI)")
    args = parser.parse_args()
    data = args.traces / "snf-icon-paper"
    if not data.is_dir():
        sys.exit(f"{data} not found (give --traces DIR)")
    print("## Paper cases\n")
    table(CASES[:1] if args.smoke else CASES, data, with_paper=True)
    if args.smoke:
        return
    print("\n## Taurus-64\n")
    table(TAURUS, data, with_paper=False)
    if args.full:
        trace = args.traces / "pwa" / "SDSC-BLUE-2000-4.2-cln.swf.gz"
        start = time.perf_counter()
        result = hpcsched.simulate(trace, "snf-icon", platform="AOBA-1152")
        seconds = time.perf_counter() - start
        decisions = result.decisions["seconds"].to_numpy() * 1000
        print(
            f"\nfull SDSC-BLUE ({len(result.jobs):,} jobs) under SNF-ICON on AOBA-1152: "
            f"{seconds:.1f} s end to end; {len(decisions):,} decisions, median "
            f"{np.median(decisions):.3f} ms, P99 {np.quantile(decisions, 0.99):.3f} ms; mean "
            f"wait {result.info['wait']['mean']:.0f} s, wasted "
            f"{result.info['energy']['wasted_mwh']:.1f} MWh"
        )


if __name__ == "__main__":
    main()
