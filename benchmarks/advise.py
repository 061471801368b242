"""One advise tick (issue 6): read, decide and write times, live and on a large snapshot.

    python benchmarks/advise.py [--pending 500] [--skip-live]

1. Live: on the 4-node test cluster (SLURM_CONF, or one started with scripts/slurm-cluster.sh),
   a whole-machine job runs and PENDING jobs wait behind it; one tick with --apply under
   MARS-CW (200 iterations x 2 trees) reports read, decide and write seconds. The baseline in
   the same run: the same writes one at a time (the advisor writes eight at a time).
2. Snapshot: squeue/sinfo JSON synthesised for 4000 nodes (running jobs on all but 40 nodes,
   PENDING pending) and written to files; one dry-run tick reports read (parse) and decide
   seconds, for MARS-CW and for FCFS (the baseline ordering).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hpcsched.advise.runner import Advisor
from hpcsched.advise.slurm import SlurmCluster, SlurmSnapshot
from hpcsched.policies import PolicySpec, SearchSpec

REPO = Path(__file__).resolve().parents[1]
MARS = PolicySpec("mars-cw", search=SearchSpec(iterations=200, trees=2, seed=17))


def live(pending: int) -> None:
    base = None
    if not os.environ.get("SLURM_CONF"):
        base = tempfile.mkdtemp(prefix="hpcsched-bench-slurm-")
        out = subprocess.run(
            ["bash", str(REPO / "scripts" / "slurm-cluster.sh"), "start", base],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        os.environ["SLURM_CONF"] = out.strip().splitlines()[-1].split("=", 1)[1]
    try:
        subprocess.run(["scancel", "--user", "root"], check=False)
        time.sleep(2)

        def sbatch(nodes: int, minutes: int, seconds: int, name: str) -> None:
            subprocess.run(
                ["sbatch", "-o", "/dev/null", "--exclusive", "-p", "debug", "-J", name,
                 "-N", str(nodes), "-t", str(minutes), "--wrap", f"sleep {seconds}"],
                check=True, capture_output=True,
            )  # fmt: skip

        sbatch(4, 30, 1200, "blocker")
        rng = random.Random(1)
        t0 = time.perf_counter()
        for i in range(pending):
            sbatch(rng.randint(1, 4), rng.randint(1, 120), 60, f"job{i}")
        print(f"submitted {pending} pending jobs in {time.perf_counter() - t0:.1f} s")
        time.sleep(2)
        for label, parallel in (("8 writes at a time", 8), ("one write at a time (baseline)", 1)):
            cluster = SlurmCluster(parallel_writes=parallel)
            # alternate orders so that every tick rewrites most priorities
            policy = MARS if parallel == 8 else PolicySpec("ljf")
            advisor = Advisor(cluster, policy, partition="debug", apply=True)
            result = advisor.tick()
            writes = sum(w.outcome == "written" for w in result.writes)
            print(
                f"live, {len(result.plan.changes)} pending, {policy.label}, {label}: read "
                f"{result.read_seconds:.2f} s, decide {result.decide_seconds:.2f} s, write "
                f"{result.write_seconds:.2f} s ({writes} priorities)"
            )
        subprocess.run(["scancel", "--user", "root"], check=False)
    finally:
        if base is not None:
            subprocess.run(["bash", str(REPO / "scripts" / "slurm-cluster.sh"), "stop", base])


def snapshot(pending: int, nodes: int = 4000, running: int = 3000) -> None:
    rng = random.Random(2)
    now = 1_800_000_000
    jobs, used, next_id = [], 0, 1
    for _ in range(running):
        size = rng.choice([1, 1, 1, 2, 4, 8])
        if used + size > nodes - 40:
            break
        used += size
        limit = rng.choice([30, 60, 120, 360, 720, 1440])
        start = now - rng.randint(0, limit * 60 - 1)
        jobs.append(_job(next_id, "RUNNING", size, limit, start - 600, start))
        next_id += 1
    for _ in range(pending):
        size = rng.choice([1, 1, 2, 4, 8, 16, 64, 256])
        jobs.append(
            _job(
                next_id,
                "PENDING",
                size,
                rng.choice([30, 60, 240, 720]),
                now - rng.randint(0, 86400),
                0,
            )
        )
        next_id += 1
    meta = {"Slurm": {"release": "22.05.8"}}
    squeue = {"meta": meta, "errors": [], "jobs": jobs}
    sinfo = {
        "meta": meta,
        "errors": [],
        "nodes": [
            {"name": f"n{i:04d}", "state": "idle", "state_flags": [], "partitions": ["batch"]}
            for i in range(nodes)
        ],
    }
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp, "squeue.json"), Path(tmp, "sinfo.json")]
        for path, document in zip(paths, (squeue, sinfo), strict=True):
            path.write_text(json.dumps(document))
        size = sum(p.stat().st_size for p in paths) / 1e6
        for policy in (MARS, PolicySpec("fcfs")):
            advisor = Advisor(SlurmSnapshot(*paths, now=now), policy, partition="batch")
            result = advisor.tick()
            d = result.plan.decision
            print(
                f"snapshot, {nodes} nodes, {len(jobs) - pending} running, {pending} pending "
                f"({size:.1f} MB of JSON), {policy.label}: read {result.read_seconds:.2f} s, "
                f"decide {result.decide_seconds:.2f} s ({d.get('iterations', 0)} iterations, "
                f"{d.get('outcomes', 0)} outcomes)"
            )


def _job(job_id: int, state: str, nodes: int, minutes: int, submit: int, start: int) -> dict:
    return {
        "job_id": job_id, "name": f"job{job_id}", "user_name": "user", "partition": "batch",
        "job_state": state, "state_reason": "Priority" if state == "PENDING" else "None",
        "priority": 1000 + job_id % 97, "nice": None, "node_count": nodes, "time_limit": minutes,
        "submit_time": submit, "start_time": start, "array_job_id": 0, "array_task_id": None,
        "array_task_string": "",
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, default=500)
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="50 pending jobs, no live cluster")
    args = parser.parse_args()
    if args.smoke:
        args.pending, args.skip_live = 50, True
    if not args.skip_live:
        if subprocess.run(["which", "sbatch"], capture_output=True).returncode != 0:
            sys.exit("Slurm is not installed: scripts/slurm-cluster.sh install (or --skip-live)")
        live(args.pending)
    snapshot(args.pending)


if __name__ == "__main__":
    main()
