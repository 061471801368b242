"""Slurm on shared nodes against the real cluster (issue 41, "against the real thing"): a mixed
workload of CPU, memory-heavy and GPU jobs run on a real cons_tres cluster, captured, and
replayed with ``--policy slurm`` from the cluster's own slurm.conf and sacct record; beside the
real cluster's own run-to-run spread, FCFS+EASY, and the record replayed as it is.

    python benchmarks/slurm_tres_replay.py [--jobs 40] [--runs 3] [--seed 42] [--gap 1]
                                           [--keep DIR] [--from DIR] [--no-align] [--smoke]

Each real run starts a fresh cluster (scripts/slurm-cluster.sh start BASE --accounting --tres:
Slurm 22.05 with select/cons_tres and CR_Core_Memory, nodes c1-c4 of 8 CPUs, 8000 MB and 2 fake
GPUs, slurmdbd and MariaDB, multifactor priority with fair-share over acct_a (u1, u2) and
acct_b (u3), age, job size; sched/backfill), submits the seeded workload at its offsets (users
u1-u3; CPU jobs of 1 to 8 tasks with --mem-per-cpu or --mem, memory-heavy jobs of 4000 to 7000
MB that bind on memory, GPU jobs of --gres=gpu:1 or 2 and few CPUs, a few --exclusive and -N 2
jobs; limits of 1 to 4 minutes, runs of 2 to 20 s, over about a minute, at least ``--gap`` s
apart so that sacct's whole seconds order the submissions: Slurm takes each as it comes, the
simulation would see two of one second together), waits for every job to end and captures
the run as a site would: ``sacct -X --parsable2`` with ReqTRES, AllocTRES, ReqMem, NCPUS,
ReqCPUS, NNodes and NodeList, and ``sacct -X --json`` (which alone keeps whether memory was
asked per CPU or per node), ``sacctmgr dump`` and the cluster's slurm.conf (slurmctld.log
with DebugFlags=Backfill,Priority beside them). The record (its JSON) is then replayed:
``hpcsched simulate RECORD --policy slurm --slurm-conf slurm.conf --slurm-accounts ci.dump``,
``--policy fcfs`` (FCFS+EASY, the baseline) and ``--policy recorded`` (the record as it is,
whose conflicts with the cluster must be none).

Jobs are matched by job id between a record and its replays, by submission order between two
real runs; starts count from the first arrival. Measured, per pair of schedules:

- order: the share of jobs at the same place in the order of starts, the rank correlation of
  starts, the mean start error (s);
- placement: the share of jobs on the same node set; and "which jobs shared a node": the
  pairs of jobs that ran at the same time on a common node in the first schedule, the share
  of them the second also put together ("pairs kept"), and the same the other way round
  ("pairs found": of the second's pairs, the share the first has).

The real spread is the same measures between every pair of real runs. Where slurmctld.log is
kept, the placement rule is also measured alone: each job of the record submitted at its start
and run to its end as the log gives them (to the millisecond), replayed FCFS, so that only the
rule decides where it goes (the share of jobs on their recorded nodes, and of the pairs).

By default the first job is submitted just after one of Slurm's priority recalculations
(every minute from slurmctld's start, read from its log), so that Slurm's grid and the
simulation's (from the first submission) agree to within a second; ``--no-align`` submits at
once. ``--from DIR`` replays the runs captured there by ``--keep DIR`` again, without a
cluster.

Needs root and ``scripts/slurm-cluster.sh install-accounting``. ``--smoke``: 6 jobs of 2 to 4 s
over about 10 s, one run, not aligned (no spread: that needs two runs).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from hpcsched import simulate
from hpcsched.cli import main as hpcsched_main
from hpcsched.policies import PolicySpec
from hpcsched.run.options import open_platform
from hpcsched.site.slurm.conf import read_slurm_conf
from hpcsched.site.slurm.text import hostlist_names
from hpcsched.workload.sacct import read_sacct

try:  # imported as the package's module (the live tests)
    from benchmarks.slurm_log import CALC_PERIOD, first_recalculation, log_time
except ModuleNotFoundError:  # run as a script: its folder is on the path
    from slurm_log import CALC_PERIOD, first_recalculation, log_time

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-cluster.sh"
USERS = (("u1", "acct_a"), ("u2", "acct_a"), ("u3", "acct_b"))
NODES = 4
#: What the replays and the repo's sacct reader need (sacct_tres.py: the request columns).
FIELDS = (
    "JobIDRaw,JobID,User,Group,Account,Partition,QOS,State,Submit,Eligible,Start,End,"
    "Timelimit,NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,AllocTRES,NodeList"
)
#: slurmctld's decay thread logs this when it first runs (at its start); it runs again every
#: PriorityCalcPeriod (a minute) from then on.
#: The kinds of job and how likely each is.
KINDS = (("cpu", 8), ("memory", 4), ("gpu", 4), ("exclusive", 2), ("two nodes", 2))
POLICIES = ("slurm", "fcfs")


class ClusterError(RuntimeError):
    """The cluster did not come up, or the workload did not end in time."""


def workload(
    jobs: int, seed: int, longest: int = 20, span: float = 60.0, gap: float = 0.0
) -> list[dict[str, object]]:
    """The seeded mixed workload: per job its place ``k``, submission offset (s, over about
    ``span``, each at least ``gap`` after the one before), user and account, kind, sbatch
    options of its request, limit (minutes, 1 to 4) and run time (s, 2 to ``longest``)."""
    draw = random.Random(seed)
    names, weights = zip(*KINDS, strict=True)
    offset, last, out = 0.0, -gap, []
    mean = max(span / max(jobs, 1), gap)
    for k in range(jobs):
        user, account = USERS[draw.randrange(len(USERS))]
        offset += gap + draw.uniform(0.0, (mean - gap) * 2)
        [kind] = draw.choices(names, weights)
        if kind == "cpu":  # 1 to 8 tasks, memory per CPU or in all
            tasks = draw.randint(1, 8)
            memory = (
                f"--mem-per-cpu={draw.choice((250, 500, 1000))}"
                if draw.random() < 0.5
                else f"--mem={draw.choice((1000, 2000, 3000))}"
            )
            options = ["-n", str(tasks), memory]
        elif kind == "memory":  # binds on memory: two never share a node
            options = ["-n", str(draw.randint(1, 2)), f"--mem={draw.randint(4, 7) * 1000}"]
        elif kind == "gpu":
            options = [
                "-n", str(draw.randint(1, 2)), f"--gres=gpu:{draw.choice((1, 1, 2))}",
                f"--mem={draw.choice((1000, 2000))}",
            ]  # fmt: skip
        elif kind == "exclusive":  # a whole node (and, asking no memory, all of it)
            options = ["-N", "1", "--exclusive"]
        else:
            options = ["-N", "2", "-n", str(draw.randint(2, 8)), "--mem-per-cpu=500"]
        last = max(round(offset, 1), round(last + gap, 1))
        out.append(
            {
                "k": k,
                "offset": last,
                "user": user,
                "account": account,
                "kind": kind,
                "options": options,
                "minutes": draw.randint(1, 4),
                "seconds": draw.randint(2, longest),
            }
        )
    return out


@contextlib.contextmanager
def tres_cluster(prefix: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A fresh cons_tres cluster with accounting: its base folder and the environment of its
    commands. Stopped and removed at the end, also when the start fails (ClusterError)."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        done = subprocess.run(
            ["bash", str(SCRIPT), "start", str(base), "--accounting", "--tres"],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        if done.returncode != 0:
            raise ClusterError(f"the --tres cluster did not come up:\n{done.stderr[-3000:]}")
        yield base, {**os.environ, "SLURM_CONF": f"{base}/etc/slurm.conf", "TZ": "UTC"}
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(base)], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def recalculation_origin(log: Path) -> float:
    """When slurmctld's decay thread first ran (its grid's origin)."""
    origin = first_recalculation(log)
    if origin is None:
        raise ClusterError(f"slurmctld logged no recalculation in {log}")
    return origin


@dataclass
class Capture:
    """One real run, captured: its folder (record.sacct, record.json, slurm.conf, ci.dump,
    slurmctld.log, ids.json) and which job id is which workload job."""

    folder: Path
    ids: dict[int, int]  # job id -> place k in the workload

    @property
    def record(self) -> Path:
        """``sacct --json`` (record.json), which keeps whether memory was asked per CPU or per
        node (the text does not), where the capture has it; else the text (record.sacct)."""
        json_record = self.folder / "record.json"
        return json_record if json_record.exists() else self.folder / "record.sacct"

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def accounts(self) -> Path:
        return self.folder / "ci.dump"


def run_real(
    jobs: list[dict[str, object]], folder: Path, *, align: bool = True, wait: float = 1800
) -> Capture:
    """``jobs`` run on a fresh --tres cluster and captured into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    with tres_cluster("hpcsched-tres-") as (base, env):

        def run(*args: str) -> str:
            return subprocess.run(
                list(args), env=env, capture_output=True, text=True, check=True
            ).stdout

        try:
            run("scontrol", "setdebugflags", "+Backfill")
            run("scontrol", "setdebugflags", "+Priority")
            origin = recalculation_origin(base / "log" / "slurmctld.log")
            if align:  # just after a recalculation (at least 2 s ahead)
                ahead = np.ceil((time.time() + 2.0 - origin) / CALC_PERIOD)
                time.sleep(max(origin + CALC_PERIOD * ahead + 0.05 - time.time(), 0.0))
            ids: dict[int, int] = {}
            t0, first = time.monotonic(), float(jobs[0]["offset"])  # type: ignore[arg-type]
            for job in jobs:
                delay = float(job["offset"]) - first - (time.monotonic() - t0)  # type: ignore[arg-type]
                if delay > 0:
                    time.sleep(delay)
                out = run(
                    "sbatch", "--parsable", f"--uid={job['user']}", f"--gid={job['user']}",
                    "-o", "/dev/null", "-D", f"{base}/jobs", "-A", str(job["account"]),
                    *job["options"], "-t", str(job["minutes"]),  # type: ignore[misc]
                    "--wrap", f"sleep {job['seconds']}",
                )  # fmt: skip
                ids[int(out.strip().split(";")[0])] = int(job["k"])  # type: ignore[call-overload]
            deadline = time.monotonic() + wait
            while True:
                text = run("sacct", "-X", "--parsable2", "--allusers", "-S", "now-3hours",
                           f"--format={FIELDS}")  # fmt: skip
                (folder / "record.sacct").write_text(text)
                if set(ids) <= set(read_sacct(folder / "record.sacct", nodes=NODES).jobs["job_id"]):
                    break
                if time.monotonic() > deadline:
                    raise ClusterError(f"the workload did not end within {wait:.0f} s")
                time.sleep(2)
            text = run("sacct", "-X", "--json", "--allusers", "-S", "now-3hours")
            (folder / "record.json").write_text(text)
            run("sacctmgr", "-i", "dump", "ci", f"file={folder / 'ci.dump'}")
            shutil.copy(base / "etc" / "slurm.conf", folder / "slurm.conf")
            (folder / "ids.json").write_text(json.dumps({str(i): k for i, k in ids.items()}))
        finally:
            log = base / "log" / "slurmctld.log"
            if log.exists():
                shutil.copy(log, folder / "slurmctld.log")
    return load_capture(folder)


def load_capture(folder: Path) -> Capture:
    """A run captured in ``folder`` by :func:`run_real`."""
    ids = {int(i): k for i, k in json.loads((folder / "ids.json").read_text()).items()}
    return Capture(folder, ids)


def node_sets(lists: pd.Series) -> pd.Series:
    """sacct's NodeList (``c[1-2],c4``) as sets of node names."""
    return lists.map(lambda text: frozenset(hostlist_names(text)))


def recorded(capture: Capture) -> pd.DataFrame:
    """The record's jobs by place k: job id, start and end (s from the first arrival), nodes."""
    w = read_sacct(capture.record, nodes=NODES)
    jobs = w.jobs[w.jobs["job_id"].isin(capture.ids)].set_index("job_id")
    start = jobs["submit"] + jobs["recorded_wait"]
    table = pd.DataFrame(
        {
            "k": jobs.index.map(capture.ids),
            "job_id": jobs.index,
            "start": start,
            "end": start + jobs["run_time"],
            "nodes": node_sets(jobs["node_list"]),
        }
    )
    return table.set_index("k").sort_index()


def _quiet_cli(args: list[str]) -> None:
    """``hpcsched ARGS`` in this process, its table kept off the benchmark's output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = hpcsched_main(args)
    if code != 0:
        raise RuntimeError(f"hpcsched {' '.join(args)} exited {code}:\n{out.getvalue()[-3000:]}")


def replayed(capture: Capture, policy: str, out: Path) -> pd.DataFrame:
    """The capture's record replayed under ``policy`` from its own slurm.conf (and its
    associations, for ``slurm``) into ``out``: each job's start, end and node names, by job
    id."""
    args = ["simulate", str(capture.record), "--policy", policy,
            "--slurm-conf", str(capture.conf), "--out", str(out), "--force"]  # fmt: skip
    if policy == "slurm":
        args += ["--slurm-accounts", str(capture.accounts)]
    _quiet_cli(args)
    jobs = pd.read_parquet(out / "jobs.parquet").set_index("job_id")
    names = read_slurm_conf(str(capture.conf)).node_names()
    nodes = jobs["alloc_nodes"].fillna("").map(lambda text: _indexed(text, names))
    return pd.DataFrame({"start": jobs["start"], "end": jobs["end"], "nodes": nodes})


def _indexed(ranges: str, names: list[str]) -> frozenset[str]:
    """jobs.parquet's ``alloc_nodes`` (index ranges ``0-2,5``) as node names."""
    out = set()
    for part in filter(None, ranges.split(",")):
        low, _, high = part.partition("-")
        out.update(names[i] for i in range(int(low), int(high or low) + 1))
    return frozenset(out)


def recorded_conflicts(capture: Capture, out: Path) -> dict[str, int]:
    """The record replayed as it is (``--policy recorded`` on its slurm.conf): the jobs in
    conflict with the cluster, by kind (and over capacity by resource), and how it was
    checked."""
    _quiet_cli(["simulate", str(capture.record), "--policy", "recorded",
                "--slurm-conf", str(capture.conf), "--out", str(out), "--force"])  # fmt: skip
    record = json.loads((out / "summary.json").read_text())["record"]
    conflicts = record["conflicts"]
    counts: dict[str, int] = {kind: int(c["jobs"]) for kind, c in conflicts.items()}
    for resource, c in conflicts["over_capacity"].get("by_resource", {}).items():
        counts[f"over_capacity {resource}"] = int(c["jobs"])
    counts["replayed"] = int(record["replayed"])
    counts["checked per node"] = int("per node" in conflicts["over_capacity"].get("checked", ""))
    return counts


#: slurmctld.log's lines of a start (by either scheduler) and of an end, to the millisecond.
LOG_START = re.compile(
    r"^\[(\S+)\] (?:sched: Allocate JobId=(\d+)|sched/backfill: _start_job: Started JobId=(\d+))",
    re.M,
)
LOG_END = re.compile(r"^\[(\S+)\] _job_complete: JobId=(\d+) done", re.M)


def placed_at_logged_starts(capture: Capture, real: pd.DataFrame) -> pd.DataFrame:
    """The placement rule alone: each job of the record submitted at its start as slurmctld.log
    gives it (to the millisecond) and run until its logged end, replayed FCFS on the cluster's
    slurm.conf, so that the same jobs run at the same instants in the same order and only the
    rule says where (no job waits while the rule agrees with Slurm). The schedule by ``k``,
    beside the record's (``real``) with the log's times."""
    log = (capture.folder / "slurmctld.log").read_text(errors="replace")
    start = {int(m[2] or m[3]): log_time(m[1]) for m in LOG_START.finditer(log)}
    end = {int(m[2]): log_time(m[1]) for m in LOG_END.finditer(log)}
    w = read_sacct(capture.record, nodes=NODES)
    jobs = w.jobs[w.jobs["job_id"].isin(capture.ids)].copy()
    ids = jobs["job_id"].astype(int)
    first = min(start[i] for i in ids)
    jobs["submit"] = [start[i] - first for i in ids]
    jobs["run_time"] = [end[i] - start[i] for i in ids]
    jobs["requested_time"] = np.maximum(jobs["requested_time"], jobs["run_time"])
    jobs["recorded_wait"] = 0.0
    jobs = jobs.sort_values("submit", kind="stable").reset_index(drop=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        result = simulate(
            replace(w, jobs=jobs), PolicySpec("fcfs"), platform=open_platform(str(capture.conf))
        )
    names = read_slurm_conf(str(capture.conf)).node_names()
    sim = result.jobs.set_index("job_id").loc[real["job_id"]]
    logged = real.assign(
        start=[start[i] - first for i in real["job_id"]],
        end=[end[i] - first for i in real["job_id"]],
    )
    placed = pd.DataFrame(
        {
            "start": sim["start"].to_numpy(),
            "end": sim["end"].to_numpy(),
            "nodes": [_indexed(text or "", names) for text in sim["alloc_nodes"].fillna("")],
        },
        index=real.index,
    )
    return placed.assign(logged_start=logged["start"], logged_end=logged["end"])


def order_agreement(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float]:
    """Two schedules of the same jobs (same index; ``start`` from the first arrival): the share
    of jobs at the same place in the order of starts, the rank correlation of starts, the mean
    start difference (s)."""
    place = a["start"].rank(method="first") == b["start"].rank(method="first")
    ranks_a, ranks_b = a["start"].rank(), b["start"].rank()
    rho = float(np.corrcoef(ranks_a, ranks_b)[0, 1]) if ranks_a.std() and ranks_b.std() else 1.0
    return {
        "same place in the order of starts": float(place.mean()),
        "start rank correlation": rho,
        "mean start error (s)": float((a["start"] - b["start"]).abs().mean()),
    }


def shared_pairs(table: pd.DataFrame) -> set[tuple[object, object]]:
    """The pairs of jobs (by index, lower first) that ran at the same time (their runs overlap
    by more than an instant) on at least one common node."""
    rows = sorted(
        (k, float(r.start), float(r.end), r.nodes)
        for k, r in zip(table.index, table.itertuples(), strict=True)
        if np.isfinite(r.start) and r.nodes
    )
    pairs = set()
    for (i, s1, e1, n1), (j, s2, e2, n2) in itertools.combinations(rows, 2):
        if s1 < e2 and s2 < e1 and n1 & n2:
            pairs.add((i, j))
    return pairs


def placement_agreement(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float]:
    """Where two schedules of the same jobs put them (``nodes``: sets of names): the share of
    jobs on the same node set; of the pairs that shared a node in ``a`` the share ``b`` also
    put together, and of ``b``'s the share ``a`` has (1.0 where there are none)."""
    same = (a["nodes"] == b["nodes"].reindex(a.index)).mean()
    pairs_a, pairs_b = shared_pairs(a), shared_pairs(b)
    both = len(pairs_a & pairs_b)
    return {
        "same nodes": float(same),
        "pairs kept": both / len(pairs_a) if pairs_a else 1.0,
        "pairs found": both / len(pairs_b) if pairs_b else 1.0,
        "pairs": float(len(pairs_a)),
    }


def agreement(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float]:
    """Order and placement agreement of schedule ``a`` with ``b`` (``a`` the one judged)."""
    return {**order_agreement(a, b), **placement_agreement(b, a)}


def compare_run(capture: Capture, scratch: Path) -> dict[str, object]:
    """One capture against its replays: the record (by k), each policy's schedule (by k), their
    agreement with the record and the record's conflicts."""
    real = recorded(capture)
    out: dict[str, object] = {"real": real}
    for policy in POLICIES:
        sim = replayed(capture, policy, scratch / policy).loc[real["job_id"]]
        sim.index = real.index
        out[policy] = sim
        out[f"{policy} agreement"] = agreement(sim, real)
    out["conflicts"] = recorded_conflicts(capture, scratch / "recorded")
    if (capture.folder / "slurmctld.log").exists():
        placed = placed_at_logged_starts(capture, real)
        logged = real.assign(start=placed["logged_start"], end=placed["logged_end"])
        out["rule"] = placed
        out["rule agreement"] = {
            **placement_agreement(logged, placed),
            "jobs kept waiting": float((placed["start"] > placed["logged_start"] + 1e-6).sum()),
        }
    return out


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3, help="real runs (each one replayed)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--keep", type=Path, help="keep each run's captures and a CSV here")
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        help="replay the runs captured in DIR (run1, run2, ...: an earlier --keep) again",
    )
    parser.add_argument(
        "--gap",
        type=float,
        default=1.0,
        help="submissions at least S seconds apart (default 1: sacct's whole seconds then "
        "order them)",
    )
    parser.add_argument("--no-align", action="store_true", help="submit at once (any phase)")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    longest, align = 20, not args.no_align
    span = 60.0
    if args.smoke:
        args.jobs, args.runs, longest, align, span = 6, 1, 4, False, 10.0
    jobs = workload(args.jobs, args.seed, longest, span, args.gap)
    scratch = tempfile.mkdtemp(prefix="hpcsched-tres-replay-")
    keep = args.source or args.keep or Path(scratch)
    try:
        report(args, jobs, keep, align, Path(scratch))
    except ClusterError as exc:
        raise SystemExit(str(exc)) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def report(
    args: argparse.Namespace, jobs: list[dict[str, object]], keep: Path, align: bool, scratch: Path
) -> None:
    """The runs (or those captured in ``args.source``), their replays, the table and the JSON
    line."""
    print(f"{time.strftime('%Y-%m-%d')}, {os.uname().nodename}, Slurm cons_tres test cluster")
    if args.source:
        args.runs = len(list(args.source.glob("run*/ids.json")))
        if not args.runs:
            raise SystemExit(f"no captured run in {args.source}")
        print(f"replaying the {args.runs} runs captured in {keep} again")
    else:
        kinds = pd.Series([j["kind"] for j in jobs]).value_counts()
        print(
            f"workload: {args.jobs} jobs (seed {args.seed}: "
            + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
            + f"; submissions at least {args.gap:g} s apart), {args.runs} real runs, each "
            "replayed with --policy slurm, fcfs and recorded"
            + ("" if align else "; not aligned to the recalculations")
        )
    reals, rows, conflicts, rules = [], {p: [] for p in POLICIES}, [], []
    for r in range(args.runs):
        folder = keep / f"run{r + 1}"
        t = time.perf_counter()
        capture = load_capture(folder) if args.source else run_real(jobs, folder, align=align)
        seconds = time.perf_counter() - t
        result = compare_run(capture, scratch / f"run{r + 1}")
        real = result["real"]
        assert isinstance(real, pd.DataFrame)
        reals.append(real)
        for policy in POLICIES:
            rows[policy].append(result[f"{policy} agreement"])  # type: ignore[arg-type]
        conflicts.append(result["conflicts"])
        if "rule agreement" in result:
            rules.append(result["rule agreement"])
        sim = result["slurm"]
        assert isinstance(sim, pd.DataFrame)
        table = real.assign(
            slurm_start=sim["start"], slurm_nodes=sim["nodes"].map(lambda n: ",".join(sorted(n))),
            nodes=real["nodes"].map(lambda n: ",".join(sorted(n))),
        )  # fmt: skip
        table.to_csv(capture.folder / "jobs.csv")
        last = max(float(real["end"].max()), 0.0)
        print(
            f"  run {r + 1}: {seconds:.0f} s, queue {last:.0f} s, "
            f"{int(rows['slurm'][-1]['pairs'])} pairs of jobs sharing a node; "
            f"recorded: {result['conflicts']}"
        )
    spread = [agreement(b, a) for a, b in itertools.combinations(reals, 2)]
    columns = [("--policy slurm vs record", rows["slurm"]), ("FCFS+EASY vs record", rows["fcfs"])]
    if spread:
        columns.insert(1, ("real vs real", spread))
    summary = {name: summarise(values) for name, values in columns}
    print(
        f"mean (min-max) over {args.runs} replayed runs"
        + (f" and {len(spread)} pairs of real runs:" if spread else ":")
    )
    print(f"  {'':34}" + "".join(f"{name:>28}" for name, _ in columns))
    for key in rows["slurm"][0]:
        cells = "".join(
            f"{m:>12.3f} ({lo:.3f}-{hi:.3f})".rjust(28)
            for m, lo, hi in (summary[name][key] for name, _ in columns)
        )
        print(f"  {key:34}{cells}")
    if rules:
        print("  the placement rule alone, each job at its start and end in slurmctld.log (FCFS):")
        for key, (m, lo, hi) in summarise(rules).items():
            print(f"  {key:34}{m:>12.3f} ({lo:.3f}-{hi:.3f})")
    total = {k: sum(c[k] for c in conflicts) for k in conflicts[0]}
    print(f"  --policy recorded on the {args.runs} records, summed: {total}")
    print(
        json.dumps(
            {
                "benchmark": "slurm_tres_replay",
                "jobs": args.jobs,
                "seed": None if args.source else args.seed,
                "runs": args.runs,
                "aligned": align,
                "gap_s": args.gap,
                "recorded_conflicts": conflicts,
                "rule_at_logged_starts": rules,
                **{
                    name: {k: [round(x, 4) for x in v] for k, v in s.items()}
                    for name, s in summary.items()
                },
            }
        )
    )


if __name__ == "__main__":
    main()
