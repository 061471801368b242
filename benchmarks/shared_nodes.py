"""Shared nodes (issue 41): CEA Curie as cores against Curie on whole nodes, FCFS+EASY.

The same jobs on the same site (the preset CEA-Curie: 5,040 thin nodes of 16 cores, 360 fat of
32, 144 hybrid of 8, three partitions), once with each job on whole nodes (its processors
rounded up to nodes of its partition) and once packed by cores as Slurm's cons_tres with
CR_Core packs them (examples/platforms/curie-cores.toml: each job its processors as one-CPU
tasks). Printed: the engine's time (``timing.simulate_seconds``, best of ``--repeat``,
alternately in one process), the whole process's peak memory of each run in a child, the
ratio, and what sharing changes (mean wait, utilization of the nodes or of the cores).

Then Slurm's own scheduler (``--policy slurm``, Slurm's defaults: submission order, a backfill
cycle every 30 s, whole-node reservations) against FCFS+EASY on the same site, whole nodes and
as cores, on the first ``--slurm-jobs`` jobs (the issue's target: within 3x on each).

    python benchmarks/shared_nodes.py [--traces DIR] [--jobs N] [--slurm-jobs N] [--repeat 3]
        [--smoke]
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpcsched.workload import Workload

REPO = Path(__file__).resolve().parents[1]
CURIE = "CEA-Curie-2011-2.1-cln.swf.gz"
CORES = REPO / "examples" / "platforms" / "curie-cores.toml"


def peak_mb(trace: Path, platform_arg: str, jobs: int | None) -> float:
    """A child's peak resident memory (MB) for one run: the whole process, as a user sees it."""
    code = (
        "import sys, hpcsched, resource\n"
        "from dataclasses import replace\n"
        "from hpcsched.workload import load_workload\n"
        "w = load_workload(sys.argv[1], procs_per_node=1)\n"
        "n = int(sys.argv[3])\n"
        "w = replace(w, jobs=w.jobs.iloc[:n].reset_index(drop=True)) if n > 0 else w\n"
        "hpcsched.simulate(w, 'fcfs', platform=sys.argv[2])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(trace), platform_arg, str(jobs or 0)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--jobs", type=int, default=None, help="only the first JOBS")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slurm-jobs", type=int, default=20000, help="Slurm on the first N")
    parser.add_argument("--smoke", action="store_true", help="Curie's first 3,000 jobs (CI)")
    args = parser.parse_args()
    trace = args.traces / CURIE
    if not trace.is_file():
        sys.exit(f"{CURIE} not found in {args.traces} (give --traces DIR)")
    import hpcsched
    from hpcsched.workload import load_workload

    stop, repeat = (3000, 1) if args.smoke else (args.jobs, args.repeat)
    print(f"{time.strftime('%Y-%m-%d')}, {platform.node()}, Python {platform.python_version()}")
    workload = load_workload(trace)
    if stop is not None:
        workload = replace(workload, jobs=workload.jobs.iloc[:stop].reset_index(drop=True))
    runs = {"whole nodes": "CEA-Curie", "as cores": str(CORES)}
    best = dict.fromkeys(runs, float("inf"))
    last = {}
    for _ in range(repeat):
        for name, site in runs.items():
            result = hpcsched.simulate(workload, "fcfs", platform=site)
            best[name] = min(best[name], result.info["timing"]["simulate_seconds"])
            last[name] = result
    print(f"CEA Curie, {len(workload):,} jobs, FCFS+EASY, best of {repeat}")
    for name, seconds in best.items():
        info = last[name].info
        basis = info["utilization"].get("basis", "nodes")
        print(
            f"  {name:<12} {seconds:7.3f} s ({len(workload) / seconds:9,.0f} jobs/s)  "
            f"wait mean {info['wait']['mean'] / 3600:.2f} h, utilization of the {basis} "
            f"{100 * info['utilization']['overall_uptime']:.1f} %"
        )
    print(f"  as cores / whole nodes: {best['as cores'] / best['whole nodes']:.2f}x")
    peaks = {name: peak_mb(trace, site, stop) for name, site in runs.items()}
    print(
        "  peak memory of the whole process: "
        + ", ".join(f"{name} {mb:,.0f} MB" for name, mb in peaks.items())
    )
    slurm_jobs = 1000 if args.smoke else args.slurm_jobs
    first = replace(workload, jobs=workload.jobs.iloc[:slurm_jobs].reset_index(drop=True))
    slurm_vs_easy(first, runs, repeat)


def slurm_vs_easy(workload: Workload, runs: dict[str, str], repeat: int) -> None:
    """``--policy slurm`` against FCFS+EASY on each site, best of ``repeat``, alternately."""
    import warnings

    import hpcsched

    print(f"CEA Curie, first {len(workload):,} jobs, --policy slurm (defaults) / FCFS+EASY")
    for name, site in runs.items():
        best = {"fcfs": float("inf"), "slurm": float("inf")}
        for _ in range(repeat):
            for policy in best:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = hpcsched.simulate(workload, policy, platform=site)
                best[policy] = min(best[policy], result.info["timing"]["simulate_seconds"])
        print(
            f"  {name:<12} FCFS+EASY {best['fcfs']:7.3f} s, slurm {best['slurm']:7.3f} s: "
            f"{best['slurm'] / best['fcfs']:.2f}x"
        )


if __name__ == "__main__":
    main()
