"""Slurm replay: the simulation of Slurm (``--policy slurm``) against the real cluster (issue 30,
"against the real thing"), beside the real Slurm's own run-to-run spread and FCFS+EASY.

    python benchmarks/slurm_replay.py [--jobs 60] [--runs 3] [--seed 30] [--keep DIR]
                                      [--no-align] [--from DIR] [--smoke]

Each real run is slurm_spread.py's: a fresh test cluster with accounting (scripts/slurm-cluster.sh
start BASE --accounting: slurmctld with priority/multifactor and sched/backfill, slurmdbd,
MariaDB; acct_a with u1 and u2, acct_b with u3), the same seeded workload submitted at the same
offsets (three users, 1 to 4 exclusive nodes, limits of 1 to 4 minutes, runs of 2 to 20 s), run
to its end. Then the run's own record is captured as a site would capture it: ``sacct -X
--parsable2`` (and ``--json``, checked to read the same), ``sacctmgr dump`` of the associations
and the cluster's own slurm.conf, and replayed by hpcsched with them (``simulate(record,
PolicySpec("slurm"), platform=<the slurm.conf with the dump>)``, as ``hpcsched simulate RECORD
--policy slurm --slurm-conf slurm.conf --slurm-accounts ci.dump``), and with FCFS+EASY on the
same site (the baseline a Slurm simulation must beat).

Jobs are matched by job id. Both sides count from the first submission (the replay clock's 0,
the record's first arrival = max(Eligible, Submit)), so a simulated start's error is its wait's.
Over the jobs of a run, against the record: the share of jobs at the same place in the start
order (by start, ties by submission), the same in the order of waits (slurm_spread's "start
order"), the rank correlations (Spearman) of waits and of starts, and the mean, median and
largest absolute start error (s). The real Slurm's spread is the same numbers between every
pair of real runs, matched by submission order as slurm_spread.py matches them (the errors
there are differences of waits: the runs' submissions differ by fractions of a second).

Slurm recomputes priorities (usage, fair-share, age) every PriorityCalcPeriod (1 minute here)
on a grid that starts when slurmctld starts; the simulation puts its grid at the replay clock's
0. By default the first job is submitted just after a real recalculation (read from
slurmctld.log), so that the two grids agree to within a second and the comparison measures the
schedulers, not the phase; ``--no-align`` submits at once, as slurm_spread.py does, and the
phase is reported either way. slurmctld logs with DebugFlags=Priority,Backfill (set with
scontrol after the start: every factor of every priority and each backfill decision), kept with
the captures under ``--keep DIR`` (without it, in a temporary folder removed at the end), with
one CSV per run of every job's recorded and simulated start. ``--from DIR`` replays the runs
captured there again, without a cluster (after a change to the simulation, say).

Needs root and ``scripts/slurm-cluster.sh install-accounting``. ``--smoke``: 6 jobs of 2 to 4 s,
one real run and its replays (no spread: that needs two runs).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from hpcsched import simulate
from hpcsched.policies import PolicySpec
from hpcsched.run.options import open_platform
from hpcsched.site.slurm.accounts import read_slurm_accounts
from hpcsched.site.slurm.settings import SlurmSettings
from hpcsched.workload.sacct import parse_sacct_json, read_sacct

# slurm_spread.py beside this file (run as a script, its folder is on the path): its workload,
# cluster script and yardstick
from slurm_log import CALC_PERIOD, first_recalculation
from slurm_spread import SCRIPT, compare, workload

FIELDS = (
    "JobIDRaw,JobID,User,Group,Account,Partition,QOS,State,Submit,Eligible,Start,End,"
    "Timelimit,NNodes,NCPUS,ReqCPUS"
)
#: slurmctld's decay thread logs this when it first runs (at its start); it runs again every
#: PriorityCalcPeriod from then on.
NODES = 4


def recalculation_origin(log: Path, wait: float) -> float:
    """When slurmctld's decay thread first ran (its grid's origin); exits if it never did."""
    origin = first_recalculation(log, wait)
    if origin is None:
        sys.exit(f"no recalculation in {log}")
    return origin


@dataclass
class Capture:
    """One real run: where its record, associations, slurm.conf and log are, which job id is
    which workload job, and the phase of Slurm's recalculations in the replay clock."""

    folder: Path
    ids: dict[int, int]  # job id -> place k in the workload
    first_calc: float  # epoch of slurmctld's first recalculation
    first_arrival: float  # epoch of the record's first arrival (the replay clock's 0)
    seconds: float

    @property
    def record(self) -> Path:
        return self.folder / "record.sacct"

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def accounts(self) -> Path:
        return self.folder / "ci.dump"


def run_real(jobs: list[dict[str, object]], folder: Path, align: bool) -> Capture:
    """One run on a fresh accounting cluster, captured into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    base = tempfile.mkdtemp(prefix="hpcsched-replay-")
    t = time.perf_counter()
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", base, "--accounting"],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    if started.returncode != 0:
        subprocess.run(["bash", str(SCRIPT), "stop", base], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)
        sys.exit(f"the accounting cluster did not start:\n{started.stderr[-2000:]}")
    env = {**os.environ, "SLURM_CONF": f"{base}/etc/slurm.conf", "TZ": "UTC"}

    def run(*args: str) -> str:
        return subprocess.run(
            list(args), env=env, capture_output=True, text=True, check=True
        ).stdout

    try:
        run("scontrol", "setdebugflags", "+Priority")
        run("scontrol", "setdebugflags", "+Backfill")
        first_calc = recalculation_origin(Path(base, "log", "slurmctld.log"), 30.0)
        if align:
            # just after the next recalculation (at least 2 s ahead), so that its grid and the
            # replay's (from the first submission) agree to within a second
            now = time.time()
            k = np.ceil((now + 2.0 - first_calc) / CALC_PERIOD)
            time.sleep(max(first_calc + k * CALC_PERIOD + 0.05 - time.time(), 0.0))
        ids: dict[int, int] = {}
        t0, first = time.monotonic(), float(jobs[0]["offset"])  # type: ignore[arg-type]
        for job in jobs:
            # (the first job at once: offsets from the first one's)
            delay = float(job["offset"]) - first - (time.monotonic() - t0)  # type: ignore[arg-type]
            if delay > 0:
                time.sleep(delay)
            out = run(
                "sbatch", "--parsable", f"--uid={job['user']}", f"--gid={job['user']}",
                "-o", "/dev/null", "-D", f"{base}/jobs", "--exclusive", "-A", str(job["account"]),
                "-N", str(job["nodes"]), "-t", str(job["minutes"]),
                "--wrap", f"sleep {job['seconds']}",
            )  # fmt: skip
            ids[int(out.strip().split(";")[0])] = int(job["k"])  # type: ignore[call-overload]
        deadline = time.monotonic() + 1800
        while True:
            text = run("sacct", "-X", "--parsable2", "--allusers", "-S", "now-3hours",
                       f"--format={FIELDS}")  # fmt: skip
            (folder / "record.sacct").write_text(text)
            record = read_sacct(folder / "record.sacct", nodes=NODES)
            if set(ids) <= set(record.jobs["job_id"]):
                break
            if time.monotonic() > deadline:
                sys.exit("the workload did not finish within 30 minutes")
            time.sleep(2)
        (folder / "record.json").write_text(
            run("sacct", "--json", "--allusers", "-S", "now-3hours")
        )
        run("sacctmgr", "-i", "dump", "ci", f"file={folder / 'ci.dump'}")
        shutil.copy(f"{base}/etc/slurm.conf", folder / "slurm.conf")
        (folder / "ids.json").write_text(json.dumps({str(i): k for i, k in ids.items()}))
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", base], capture_output=True, timeout=120)
        log = Path(base, "log", "slurmctld.log")
        if log.exists():
            shutil.copy(log, folder / "slurmctld.log")
        shutil.rmtree(base, ignore_errors=True)
    seconds = time.perf_counter() - t
    (folder / "run.json").write_text(json.dumps({"seconds": seconds}))
    return load_capture(folder)


def jittered(jobs: list[dict[str, object]], seconds: float, run: int) -> list[dict[str, object]]:
    """The workload with each submission moved later by up to ``seconds``, drawn for ``run``
    (a record's whole seconds cannot tell such runs apart)."""
    if seconds <= 0:
        return jobs
    draw = random.Random(1000 + run)
    moved = [{**job, "offset": float(job["offset"]) + draw.uniform(0.0, seconds)} for job in jobs]  # type: ignore[arg-type]
    return sorted(moved, key=lambda job: float(job["offset"]))  # type: ignore[arg-type]


def load_capture(folder: Path) -> Capture:
    """A run captured in ``folder`` (by :func:`run_real`), read back."""
    ids = {int(i): k for i, k in json.loads((folder / "ids.json").read_text()).items()}
    first_calc = recalculation_origin(folder / "slurmctld.log", 0.0)
    first_arrival = read_sacct(folder / "record.sacct", nodes=NODES).time_origin
    run = folder / "run.json"
    seconds = json.loads(run.read_text())["seconds"] if run.exists() else float("nan")
    return Capture(folder, ids, first_calc, first_arrival, seconds)


def recorded(capture: Capture) -> pd.DataFrame:
    """The record's jobs by place k: job id, user, size, limit, run time, arrival and start
    (replay clock: s from the first arrival), wait; checked against the JSON record."""
    w = read_sacct(capture.record, nodes=NODES)
    json_jobs = parse_sacct_json(
        json.loads((capture.folder / "record.json").read_text()), "record.json", nodes=NODES
    ).jobs.set_index("job_id")
    jobs = w.jobs[w.jobs["job_id"].isin(capture.ids)].set_index("job_id")
    for column in ("submit", "recorded_wait", "run_time", "nodes", "requested_time"):
        other = json_jobs.loc[jobs.index, column]
        if not np.allclose(jobs[column].to_numpy(), other.to_numpy()):
            sys.exit(f"sacct --parsable2 and --json disagree on {column}")
    table = pd.DataFrame(
        {
            "k": jobs.index.map(capture.ids),
            "job_id": jobs.index,
            "user": jobs["user_name"],
            "nodes": jobs["nodes"],
            "limit_min": jobs["requested_time"] / 60,
            "run": jobs["run_time"],
            "submit": jobs["submit"],
            "start": jobs["submit"] + jobs["recorded_wait"],
            "wait": jobs["recorded_wait"],
        }
    )
    return table.set_index("k").sort_index()


def replayed(capture: Capture, policy: str) -> pd.DataFrame:
    """The capture's record replayed under ``policy`` on its own slurm.conf (with its
    associations for ``slurm``): each job's start, wait and how it started, by job id."""
    platform = open_platform(str(capture.conf))
    if policy == "slurm":
        settings = platform.slurm or SlurmSettings.defaults()
        accounts = read_slurm_accounts(str(capture.accounts))
        platform = replace(platform, slurm=replace(settings, accounts=accounts))
    result = simulate(str(capture.record), PolicySpec(policy), platform=platform)
    jobs = result.jobs.set_index("job_id")
    return pd.DataFrame(
        {"start": jobs["start"], "wait": jobs["wait"], "kind": jobs["start_kind"].astype(str)}
    )


def agreement(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float]:
    """Two schedules of the same jobs (indexed alike; ``wait`` and ``start`` from the first
    submission): slurm_spread's four numbers, and the place in the order of starts, the rank
    correlation of starts and the median difference."""
    out = compare(a, b)
    order_a = a["start"].rank(method="first").to_numpy()
    order_b = b["start"].rank(method="first").to_numpy()
    ranks_a, ranks_b = a["start"].rank(), b["start"].rank()
    diff = np.abs(a["wait"].to_numpy() - b["wait"].to_numpy())
    rho = float(np.corrcoef(ranks_a, ranks_b)[0, 1]) if ranks_a.std() and ranks_b.std() else 1.0
    return {
        "same place in the order of starts": float(np.mean(order_a == order_b)),
        "same place in the order of waits": out["same place in the start order"],
        "start rank correlation": rho,
        "wait rank correlation": out["wait rank correlation"],
        "mean start error (s)": out["mean wait difference (s)"],
        "median start error (s)": float(np.median(diff)),
        "largest start error (s)": out["largest wait difference (s)"],
    }


def summarise(rows: list[dict[str, float]]) -> dict[str, tuple[float, float, float]]:
    """Mean, min and max of each number over ``rows``."""
    return {
        key: (
            float(np.mean([r[key] for r in rows])),
            float(min(r[key] for r in rows)),
            float(max(r[key] for r in rows)),
        )
        for key in rows[0]
    }


def phase(capture: Capture) -> float:
    """Where Slurm's recalculations fall in the replay clock, modulo the period: the
    simulation puts them at 0, 60, 120 s; a phase of -1.3 means Slurm's came 1.3 s earlier."""
    offset = (capture.first_calc - capture.first_arrival) % CALC_PERIOD
    return offset - CALC_PERIOD if offset > CALC_PERIOD / 2 else offset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3, help="real runs (each one replayed)")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="keep each run's captures and a CSV here")
    parser.add_argument("--no-align", action="store_true", help="submit at once (any phase)")
    parser.add_argument(
        "--jitter",
        type=float,
        default=0.0,
        help="move each submission later by up to S seconds, drawn afresh for each run",
    )
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        help="replay the runs captured in DIR (run1, run2, ...: an earlier --keep) again",
    )
    parser.add_argument(
        "--nodes", type=int, choices=range(1, 5), help="every job on N nodes (default 1 to 4)"
    )
    parser.add_argument(
        "--span", type=float, default=60.0, help="submissions over about S seconds (default 60)"
    )
    parser.add_argument(
        "--heavy", type=int, default=1, help="u1 K times as likely as each other user (default 1)"
    )
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    longest = 20
    if args.smoke:
        args.jobs, args.runs, longest = 6, 1, 4
    jobs = workload(
        args.jobs, args.seed, longest, nodes=args.nodes, span=args.span, heavy=args.heavy
    )
    scratch = None if args.source or args.keep else tempfile.mkdtemp(prefix="hpcsched-replay-")
    keep = args.source or args.keep or Path(str(scratch))
    try:
        report(args, jobs, keep)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def report(args: argparse.Namespace, jobs: list[dict[str, object]], keep: Path) -> None:
    """The runs (or those captured in ``args.source``), their replays, the table and the JSON
    line."""
    print(f"{time.strftime('%Y-%m-%d')}, {os.uname().nodename}, Slurm test cluster with accounting")
    if args.source:
        args.runs = len(list(args.source.glob("run*/ids.json")))
        if not args.runs:
            sys.exit(f"no captured run in {args.source}")
        args.jobs = len(json.loads((args.source / "run1" / "ids.json").read_text()))
        args.seed = None
        print(f"replaying the {args.runs} runs of {args.jobs} jobs captured in {keep} again")
    else:
        print(
            f"workload: {args.jobs} jobs (seed {args.seed}"
            + (f", {args.nodes} node{'s' if args.nodes > 1 else ''} each" if args.nodes else "")
            + (f", submitted over about {args.span:g} s" if args.span != 60.0 else "")
            + (f", u1 {args.heavy} times as likely" if args.heavy != 1 else "")
            + f"), {args.runs} real runs, each "
            f"replayed with --policy slurm and fcfs; captures in {keep}"
            + (f"; submissions moved by up to {args.jitter} s" if args.jitter else "")
            + ("" if args.keep else " (removed at the end: --keep DIR keeps them)")
        )
    captures, reals, sims, fcfs = [], [], [], []
    for r in range(args.runs):
        folder = keep / f"run{r + 1}"
        if args.source:
            capture = load_capture(folder)
        else:
            capture = run_real(jittered(jobs, args.jitter, r), folder, align=not args.no_align)
        real = recorded(capture)
        t = time.perf_counter()
        slurm = replayed(capture, "slurm").loc[real["job_id"]].set_index(real.index)
        replay_seconds = time.perf_counter() - t
        easy = replayed(capture, "fcfs").loc[real["job_id"]].set_index(real.index)
        table = real.assign(
            slurm=slurm["start"], slurm_kind=slurm["kind"], fcfs=easy["start"],
            error=slurm["start"] - real["start"],
        )  # fmt: skip
        table.to_csv(capture.folder / "jobs.csv")
        captures.append(capture)
        reals.append(real)
        sims.append(agreement(slurm, real))
        fcfs.append(agreement(easy, real))
        print(
            f"  run {r + 1}: {capture.seconds:.0f} s, mean wait {real['wait'].mean():.1f} s; "
            f"recalculations at {phase(capture):+.2f} s of the replay's grid; replay "
            f"{replay_seconds:.2f} s, mean simulated wait {slurm['wait'].mean():.1f} s"
        )
    spread = [agreement(a, b) for a, b in itertools.combinations(reals, 2)]
    columns = [("--policy slurm vs record", sims), ("FCFS+EASY vs record", fcfs)]
    if spread:
        columns.insert(1, ("real vs real", spread))
    summary = {name: summarise(rows) for name, rows in columns}
    print(
        f"mean (min-max) over {len(sims)} replayed runs"
        + (f" and {len(spread)} pairs of real runs:" if spread else ":")
    )
    print(f"  {'':34}" + "".join(f"{name:>28}" for name, _ in columns))
    for key in sims[0]:
        cells = "".join(
            f"{m:>12.3f} ({lo:.3f}-{hi:.3f})".rjust(28)
            for m, lo, hi in (summary[name][key] for name, _ in columns)
        )
        print(f"  {key:34}{cells}")
    print(
        json.dumps(
            {
                "benchmark": "slurm_replay",
                "jobs": args.jobs,
                "seed": args.seed,
                "runs": args.runs,
                "aligned": not args.no_align,
                "jitter_s": args.jitter,
                "nodes": args.nodes,
                "span_s": args.span,
                "heavy": args.heavy,
                "phases_s": [round(phase(c), 3) for c in captures],
                "run_seconds": [round(c.seconds, 1) for c in captures],
                "mean_wait_real_s": [round(float(r["wait"].mean()), 2) for r in reals],
                **{
                    name: {k: [round(x, 4) for x in v] for k, v in s.items()}
                    for name, s in summary.items()
                },
            }
        )
    )


if __name__ == "__main__":
    main()
