"""The real Slurm's own run-to-run spread (issue 30, "against the real thing"): how far two runs
of the same workload on the same real cluster differ, the yardstick a simulation of Slurm is
held to.

    python benchmarks/slurm_spread.py [--jobs 60] [--runs 3] [--seed 30] [--smoke]

Each run starts a fresh test cluster with accounting (scripts/slurm-cluster.sh start BASE
--accounting: real slurmctld with priority/multifactor and sched/backfill, slurmdbd and
MariaDB; fair-share over acct_a (u1, u2) and acct_b (u3)), submits the same workload at the
same offsets (a seeded draw: three users, 1 to 4 exclusive nodes, limits of 1 to 4 minutes,
runs of 2 to 20 s, submissions over about a minute), waits for every job to end, and reads the
record back through hpcsched's sacct reader. Every pair of runs is then compared over the
workload's jobs (matched by their submission order): the share of jobs at the same place in
the start order, the rank correlation of their waits (Spearman), and the mean and largest
difference of their waits (s). The baseline in the same run is the spread a policy must not
exceed to count as "as close as Slurm is to itself".

Needs root and `scripts/slurm-cluster.sh install-accounting`. `--smoke`: 6 jobs of 2 to 4 s,
2 runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from hpcsched.workload.sacct import parse_sacct_json

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-cluster.sh"
USERS = (("u1", "acct_a"), ("u2", "acct_a"), ("u3", "acct_b"))


def workload(
    jobs: int,
    seed: int,
    longest: int = 20,
    *,
    nodes: int | None = None,
    span: float = 60.0,
    heavy: int = 1,
) -> list[dict[str, object]]:
    """The seeded workload: submission offset (s; over about ``span`` s), user (u1 ``heavy``
    times as likely as each of the others), account, nodes (1 to 4, or ``nodes`` for every
    job), limit, run time (2 to ``longest`` s)."""
    draw = random.Random(seed)
    offset, out = 0.0, []
    weights = [heavy] + [1] * (len(USERS) - 1)
    for k in range(jobs):
        if heavy == 1:  # (the draw every earlier capture used)
            user, account = USERS[draw.randrange(len(USERS))]
        else:
            [(user, account)] = draw.choices(USERS, weights)
        offset += draw.uniform(0.0, span / max(jobs, 1) * 2)
        drawn = draw.randint(1, 4)
        out.append(
            {
                "k": k,
                "offset": round(offset, 1),
                "user": user,
                "account": account,
                "nodes": drawn if nodes is None else nodes,
                "minutes": draw.randint(1, 4),
                "seconds": draw.randint(2, longest),
            }
        )
    return out


def run_once(jobs: list[dict[str, object]]) -> pd.DataFrame:
    """One run on a fresh accounting cluster: each job's wait (s), by its place ``k``."""
    base = tempfile.mkdtemp(prefix="hpcsched-spread-")
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", base, "--accounting"],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    if started.returncode != 0:
        sys.exit(f"the accounting cluster did not start:\n{started.stderr[-2000:]}")
    env = {**os.environ, "SLURM_CONF": f"{base}/etc/slurm.conf", "TZ": "UTC"}
    try:
        ids: dict[int, int] = {}
        t0 = time.monotonic()
        for job in jobs:
            delay = float(job["offset"]) - (time.monotonic() - t0)  # type: ignore[arg-type]
            if delay > 0:
                time.sleep(delay)
            out = subprocess.run(
                ["sbatch", "--parsable", f"--uid={job['user']}", f"--gid={job['user']}",
                 "-o", "/dev/null", "-D", f"{base}/jobs", "--exclusive", "-A", str(job["account"]),
                 "-N", str(job["nodes"]), "-t", str(job["minutes"]),
                 "--wrap", f"sleep {job['seconds']}"],
                env=env, capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            ids[int(out.strip().split(";")[0])] = int(job["k"])  # type: ignore[call-overload]
        deadline = time.monotonic() + 1800
        while True:
            document = json.loads(
                subprocess.run(
                    ["sacct", "--json", "--allusers", "-S", "now-2hours"],
                    env=env, capture_output=True, text=True, check=True,
                ).stdout
            )  # fmt: skip
            record = parse_sacct_json(document, "sacct --json", nodes=4)
            if set(ids) <= set(record.jobs["job_id"]):
                break
            if time.monotonic() > deadline:
                sys.exit("the workload did not finish within 30 minutes")
            time.sleep(2)
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", base], capture_output=True, timeout=120)
        subprocess.run(["rm", "-rf", base], check=False)
    table = record.jobs[record.jobs["job_id"].isin(ids)].copy()
    table["k"] = table["job_id"].map(ids)
    table["wait"] = table["recorded_wait"]  # start - eligible, as slurmdbd recorded them
    return table.set_index("k")[["job_id", "wait"]].sort_index()


def compare(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float]:
    """Two runs' agreement over their jobs."""
    order_a = a["wait"].rank(method="first").to_numpy()
    order_b = b["wait"].rank(method="first").to_numpy()
    diff = np.abs(a["wait"].to_numpy() - b["wait"].to_numpy())
    ranks_a, ranks_b = a["wait"].rank(), b["wait"].rank()
    rho = float(np.corrcoef(ranks_a, ranks_b)[0, 1]) if ranks_a.std() and ranks_b.std() else 1.0
    return {
        "same place in the start order": float(np.mean(order_a == order_b)),
        "wait rank correlation": rho,
        "mean wait difference (s)": float(diff.mean()),
        "largest wait difference (s)": float(diff.max()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    longest = 20
    if args.smoke:
        args.jobs, args.runs, longest = 6, 2, 4
    jobs = workload(args.jobs, args.seed, longest)
    print(f"{time.strftime('%Y-%m-%d')}, {os.uname().nodename}, Slurm test cluster with accounting")
    print(f"workload: {args.jobs} jobs (seed {args.seed}), {args.runs} runs of it")
    runs = []
    for r in range(args.runs):
        t = time.perf_counter()
        runs.append(run_once(jobs))
        seconds, mean = time.perf_counter() - t, runs[-1]["wait"].mean()
        print(f"  run {r + 1}: {seconds:.0f} s, mean wait {mean:.1f} s")
    rows = [compare(a, b) for a, b in itertools.combinations(runs, 2)]
    print(f"run-to-run spread of the real Slurm over {len(rows)} pairs (mean, min-max):")
    for key in rows[0]:
        values = [row[key] for row in rows]
        print(f"  {key:32} {np.mean(values):8.3f}   {min(values):.3f}-{max(values):.3f}")


if __name__ == "__main__":
    main()
