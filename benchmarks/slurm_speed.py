"""Speed of ``--policy slurm`` (issue 30: "a year-long trace under --policy slurm within 3x the
time of FCFS+EASY on the same trace, measured in one run").

A year-long trace (HPC2N, 202,871 jobs on 120 nodes over 3.5 years; CEA Curie as one pool,
its 2011-2012 year) replayed under FCFS+EASY and under Slurm, alternately in one process, best
of ``--repeat``: the whole run a user waits for (reading the trace and simulating it,
``simulate()`` end to end) and the engine's share (``timing.simulate_seconds``). Slurm runs
twice: with Slurm's defaults (every weight 0: submission order, backfill every 30 s) and with a
site's multifactor settings (age, fair-share and job size weights; usage decaying over 7 days,
recalculated every 5 minutes; the trace's users and groups as the association tree), the work
a real site's configuration asks for.

    python benchmarks/slurm_speed.py [--traces DIR] [--repeat 3] [--smoke]

``--smoke``: the first 5,000 jobs of HPC2N, one repeat.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACES = (("HPC2N-2002-2.2-cln.swf.gz", None), ("CEA-Curie-2011-2.1-cln.swf.gz", None))

#: A site's multifactor settings (the trace's machine as one partition).
MULTIFACTOR = """\
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageEnforce=associations,limits,qos
SchedulerType=sched/backfill
PriorityType=priority/multifactor
PriorityDecayHalfLife=7-0
PriorityCalcPeriod=5
PriorityMaxAge=7-0
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
"""


def settings() -> object:
    """The multifactor settings as a platform's (read from a slurm.conf written here)."""
    from hpcsched.site.slurm.conf import read_slurm_conf

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "slurm.conf"
        path.write_text("NodeName=n1 CPUs=1\nPartitionName=all Nodes=n1\n" + MULTIFACTOR)
        platform_ = read_slurm_conf(path).platform()
    return platform_.slurm


def one_run(
    path: Path, policy: str, stop: int | None, multifactor: object | None
) -> tuple[float, float]:
    """(seconds end to end, engine seconds) of one run."""
    from hpcsched import simulate
    from hpcsched.site.platform import Platform
    from hpcsched.workload import load_workload

    t0 = time.perf_counter()
    workload = load_workload(path)
    if stop is not None:
        workload = replace(workload, jobs=workload.jobs.iloc[:stop].reset_index(drop=True))
    platform_ = None
    if multifactor is not None:
        platform_ = Platform(name="site", nodes=workload.nodes, slurm=multifactor)  # type: ignore[arg-type]
    result = simulate(workload, policy, platform=platform_)
    total = time.perf_counter() - t0
    return total, float(result.info["timing"]["simulate_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    traces = TRACES[:1] if args.smoke else TRACES
    stop = 5000 if args.smoke else None
    repeat = 1 if args.smoke else args.repeat
    multifactor = settings()
    runs = (
        ("FCFS+EASY", "fcfs", None),
        ("Slurm defaults", "slurm", None),
        ("Slurm multifactor", "slurm", multifactor),
    )
    print(f"# {platform.node()} {platform.machine()} Python {sys.version.split()[0]}")
    for name, limit in traces:
        path = args.traces / name
        best: dict[str, tuple[float, float]] = {}
        for _ in range(repeat):
            for label, policy, extra in runs:
                total, engine = one_run(path, policy, stop or limit, extra)
                old = best.get(label)
                best[label] = (min(total, old[0]), min(engine, old[1])) if old else (total, engine)
        base = best["FCFS+EASY"]
        print(f"{name}{'' if stop is None else f' (first {stop} jobs)'}")
        print(f"  {'run':18} {'end to end':>11} {'ratio':>6} {'engine':>8} {'ratio':>6}")
        for label, (total, engine) in best.items():
            print(
                f"  {label:18} {total:10.3f}s {total / base[0]:5.2f}x {engine:7.3f}s "
                f"{engine / base[1]:5.2f}x"
            )


if __name__ == "__main__":
    main()
