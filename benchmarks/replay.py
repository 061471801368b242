"""Replay benchmark (issue 2): full real traces end to end, against a pure-Python baseline.

For each trace it measures, each in a fresh process (so peak memory is the run's own):

- hpcsched end to end: load the SWF trace, simulate, write the run directory
  (jobs.parquet + summary.json), under FCFS+EASY and under WFP3 (w=256)+EASY;
- the baseline: ``benchmarks/python_baseline.py``, a straightforward pure-Python FCFS+EASY
  replay of the same jobs (its own line-by-line loader, then the replay), in the same run.

It prints jobs per second, wall seconds, peak RSS and the speed-up over the baseline: end to end
(hpcsched also writes its run directory, the baseline writes nothing), and for the two parts
both do, loading the trace and replaying it.

    python benchmarks/replay.py [--traces DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACES = ("HPC2N-2002-2.2-cln.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz")

HPCSCHED_RUN = textwrap.dedent(
    """
    import json, resource, sys, tempfile, time
    t0 = time.perf_counter()
    import hpcsched
    trace, policy, window = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        t1 = time.perf_counter()
        result = hpcsched.simulate(trace, policy, window=int(window) if window != "-" else None,
                                   out=tmp + "/run")
        t2 = time.perf_counter()
    print(json.dumps({
        "jobs": len(result.jobs), "seconds": t2 - t1, "import_seconds": t1 - t0,
        "load": result.info["timing"]["load_seconds"],
        "simulate": result.info["timing"]["simulate_seconds"],
        "mean_wait": result.info["wait"]["mean"],
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))
    """
)

BASELINE_RUN = textwrap.dedent(
    """
    import json, resource, sys, time
    sys.path.insert(0, sys.argv[2])
    from python_baseline import load_swf, replay_fcfs_easy
    t1 = time.perf_counter()
    submit, run, req, nodes, machine, _ = load_swf(sys.argv[1])
    t2 = time.perf_counter()
    start, _ = replay_fcfs_easy(submit, run, req, nodes, machine)
    t3 = time.perf_counter()
    waits = [s - t for s, t in zip(start, submit)]
    print(json.dumps({
        "jobs": len(start), "seconds": t3 - t1, "load": t2 - t1, "simulate": t3 - t2,
        "mean_wait": sum(waits) / len(waits),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))
    """
)


def measure(script: str, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True, cwd=REPO
    )
    return json.loads(proc.stdout)


def best(script: str, args: tuple[str, ...], repeat: int) -> dict:
    runs = [measure(script, *args) for _ in range(repeat)]
    fastest = min(runs, key=lambda r: r["seconds"])
    fastest["peak_mb"] = max(r["peak_mb"] for r in runs)
    return fastest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="HPC2N only, once (CI)")
    args = parser.parse_args()
    traces = TRACES[:1] if args.smoke else TRACES
    if args.smoke:
        args.repeat = 1
    if not args.traces.is_dir():
        sys.exit(f"traces not found in {args.traces} (give --traces DIR)")

    print(f"machine: {platform.processor() or platform.machine()}, {platform.python_version()}")
    header = (
        f"{'trace':<32} {'run':<26} {'jobs':>8} {'wall s':>7} {'jobs/s':>10} "
        f"{'peak MB':>8} {'mean wait s':>12} {'vs baseline':>11}"
    )
    print(header)
    print("-" * len(header))
    for name in traces:
        trace = str(args.traces / name)
        baseline = best(BASELINE_RUN, (trace, str(REPO / "benchmarks")), args.repeat)
        rows = [
            ("hpcsched fcfs+easy", best(HPCSCHED_RUN, (trace, "fcfs", "-"), args.repeat)),
            ("hpcsched wfp3 w=256+easy", best(HPCSCHED_RUN, (trace, "wfp3", "256"), args.repeat)),
            ("python baseline fcfs+easy", baseline),
        ]
        for label, r in rows:
            ratio = baseline["seconds"] / r["seconds"]
            print(
                f"{name:<32} {label:<26} {r['jobs']:>8} {r['seconds']:>7.2f} "
                f"{r['jobs'] / r['seconds']:>10,.0f} {r['peak_mb']:>8.0f} "
                f"{r['mean_wait']:>12.1f} {ratio:>10.1f}x"
            )
        fcfs = rows[0][1]
        same = abs(fcfs["mean_wait"] - baseline["mean_wait"]) < 1e-6 * max(1, baseline["mean_wait"])
        assert same, "hpcsched and the baseline disagree on FCFS+EASY"
        print(
            f"{'':<32} FCFS+EASY parts: load {fcfs['load']:.3f} s vs {baseline['load']:.3f} s "
            f"({baseline['load'] / fcfs['load']:.1f}x), replay {fcfs['simulate']:.3f} s vs "
            f"{baseline['simulate']:.3f} s ({baseline['simulate'] / fcfs['simulate']:.1f}x)"
        )


if __name__ == "__main__":
    main()
