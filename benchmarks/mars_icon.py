"""MARS under ICON against SNF-ICON on the SNF-ICON paper's six cases, over seeds.

    python benchmarks/mars_icon.py [--traces DIR] [--seeds 3] [--iterations 30] [--trees 2]
    python benchmarks/mars_icon.py --smoke        # the first 300 jobs of two cases, one seed
    python benchmarks/mars_icon.py --cases SDSC   # the cases whose name contains SDSC

MARS searches with the ICON power manager inside its forward model and the reward
``wait=1, energy=1`` (mean wait and the computing share of the energy, which sees sleeping,
waking and idle nodes). Each seed draws the transition latencies (``--sample-transitions``)
and seeds the search; SNF-ICON runs with the same transition seeds. Prints, per case, the mean
wait and the wasted energy as mean ± standard deviation over the seeds, and the time taken.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import hpcsched
from hpcsched.experiment import slice_workload
from hpcsched.reproduce import SNF_ICON_CASES
from hpcsched.rewards import parse_reward

REPO = Path(__file__).resolve().parents[1]


def run(workload, policy: str, seed: int, platform: str, iterations: int, trees: int) -> dict:
    power = hpcsched.PowerSpec(manager="icon", sample_transitions=seed)
    if policy == "snf-icon":
        spec = hpcsched.PolicySpec("snf-icon", power=power)
    else:
        search = hpcsched.SearchSpec(
            reward=parse_reward("wait=1,energy=1"), iterations=iterations, trees=trees, seed=seed
        )
        spec = hpcsched.PolicySpec("mars", search=search, power=power)
    start = time.perf_counter()
    result = hpcsched.simulate(workload, spec, platform=platform)
    return {
        "wait": result.info["wait"]["mean"],
        "wasted": result.info["energy"]["wasted_mwh"],
        "seconds": time.perf_counter() - start,
    }


def spread(values: list[float], fmt: str) -> str:
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(statistics.mean(values))} ± {fmt.format(statistics.stdev(values))}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--trees", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="300 jobs of two cases, one seed")
    parser.add_argument("--json", type=Path, help="also write the runs' figures here")
    parser.add_argument(
        "--cases", default="", help="only the cases whose workload name contains this text"
    )
    args = parser.parse_args()
    data = args.traces / "snf-icon-paper"
    if not data.is_dir():
        sys.exit(f"{data} not found (give --traces DIR)")
    cases = SNF_ICON_CASES[:2] if args.smoke else SNF_ICON_CASES
    cases = [case for case in cases if args.cases in case[0]]
    seeds = [1] if args.smoke else list(range(1, args.seeds + 1))
    print(
        f"MARS (reward wait=1, energy=1; {args.iterations} iterations x {args.trees} trees) "
        f"under ICON vs SNF-ICON, transition seeds {seeds}\n"
    )
    print(
        "| workload | platform | policy | mean wait s | wasted MWh | run s | "
        "MARS wait vs SNF-ICON |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    record = []
    for name, platform, *_ in cases:
        nodes = int(platform.split("-")[1])
        workload = hpcsched.load_workload(data / f"{name}.json.gz", nodes=nodes)
        if args.smoke:
            workload = slice_workload(workload, 0, 300)
        rows = {}
        for policy in ("snf-icon", "mars"):
            rows[policy] = [
                run(workload, policy, seed, platform, args.iterations, args.trees) for seed in seeds
            ]
        icon = [r["wait"] for r in rows["snf-icon"]]
        for policy, label in (("snf-icon", "SNF-ICON"), ("mars", "MARS + ICON")):
            waits = [r["wait"] for r in rows[policy]]
            ratio = [m / i - 1 for m, i in zip(waits, icon, strict=True)]
            print(
                f"| {name} | {platform} | {label} | {spread(waits, '{:,.0f}')} | "
                f"{spread([r['wasted'] for r in rows[policy]], '{:.3f}')} | "
                f"{sum(r['seconds'] for r in rows[policy]) / len(seeds):.1f} | "
                + ("-" if policy == "snf-icon" else spread([100 * x for x in ratio], "{:+.1f}%"))
                + " |",
                flush=True,
            )
        record.append({"workload": name, "platform": platform, **rows})
    if args.json:
        args.json.write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
