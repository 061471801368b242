"""The live replay tests' cluster and capture (tests/slurm/test_*_live.py): a fresh test cluster
with accounting (scripts/slurm-cluster.sh start BASE --accounting: Slurm 22.05 with
multifactor priority, fair-share over acct_a (u1, u2) and acct_b (u3), age, job size,
sched/backfill), a workload of benchmarks/slurm_spread.py's draw submitted on it, captured as
a site would capture it (``sacct -X --parsable2``, ``sacctmgr dump``, the cluster's slurm.conf)
and replayed with ``hpcsched simulate RECORD --policy slurm --slurm-conf slurm.conf
--slurm-accounts ci.dump`` and with FCFS+EASY.

The first job is submitted just after one of Slurm's priority recalculations, read from
slurmctld.log, so that Slurm's grid of recalculations (every minute from slurmctld's start) and
the simulation's (from the first submission) agree to within a second."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from benchmarks.slurm_log import CALC_PERIOD, first_recalculation

from hpcsched.cli import main
from hpcsched.workload.sacct import read_sacct

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "slurm-cluster.sh"
FIELDS = "JobIDRaw,User,Group,Account,Partition,QOS,State,Submit,Eligible,Start,End,Timelimit,NNodes,NCPUS,ReqCPUS"  # noqa: E501


@contextmanager
def accounting_cluster(prefix: str) -> Iterator[dict[str, str]]:
    """A fresh cluster with accounting, as the environment of its commands; skipped where
    slurmdbd or MariaDB is missing (a failure in CI)."""
    if shutil.which("slurmdbd") is None or shutil.which("mariadbd") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install the accounting cluster (.ci/run does)")
        pytest.skip("no slurmdbd/MariaDB: scripts/slurm-cluster.sh install-accounting")
    base = tempfile.mkdtemp(prefix=prefix)
    done = subprocess.run(
        ["bash", str(SCRIPT), "start", base, "--accounting"],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    try:
        if done.returncode != 0:
            pytest.fail(f"the accounting cluster did not come up:\n{done.stdout}\n{done.stderr}")
        yield {**os.environ, "SLURM_CONF": f"{base}/etc/slurm.conf", "TZ": "UTC"}
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", base], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def run(env: dict[str, str], *args: str) -> str:
    return subprocess.run(list(args), env=env, capture_output=True, text=True, check=True).stdout


def recalculation_origin(log: Path) -> float:
    """When slurmctld's decay thread first ran: its recalculations come every minute from then."""
    origin = first_recalculation(log)
    if origin is None:
        pytest.fail(f"slurmctld logged no recalculation in {log}")
    return origin


def agreement(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float]:
    """Two schedules of the same jobs (same index, starts from the first submission)."""
    place = a["start"].rank(method="first") == b["start"].rank(method="first")
    error = (a["start"] - b["start"]).abs()
    return {
        "same place": float(place.mean()),
        "start rank correlation": float(np.corrcoef(a["start"].rank(), b["start"].rank())[0, 1]),
        "mean start error": float(error.mean()),
    }


def replay_on_a_live_cluster(
    jobs: list[dict[str, object]], folder: Path, prefix: str
) -> dict[str, dict[str, float]]:
    """``jobs`` run on a fresh cluster, captured into ``folder`` and replayed: each policy's
    (``slurm``, ``fcfs``) agreement with the record."""
    with accounting_cluster(prefix) as env:
        base = Path(env["SLURM_CONF"]).parents[1]
        # the first submission just after a recalculation (at least 2 s ahead)
        origin = recalculation_origin(base / "log" / "slurmctld.log")
        ahead = np.ceil((time.time() + 2.0 - origin) / CALC_PERIOD)
        time.sleep(max(origin + CALC_PERIOD * ahead + 0.05 - time.time(), 0.0))
        ids = []
        t0, first = time.monotonic(), float(jobs[0]["offset"])  # type: ignore[arg-type]
        for job in jobs:
            delay = float(job["offset"]) - first - (time.monotonic() - t0)  # type: ignore[arg-type]
            if delay > 0:
                time.sleep(delay)
            out = run(env, "sbatch", "--parsable", f"--uid={job['user']}", f"--gid={job['user']}",
                      "-o", "/dev/null", "-D", str(base / "jobs"), "--exclusive",
                      "-A", str(job["account"]), "-N", str(job["nodes"]),
                      "-t", str(job["minutes"]), "--wrap", f"sleep {job['seconds']}")  # fmt: skip
            ids.append(int(out.strip().split(";")[0]))
        record = folder / "record.sacct"
        deadline = time.monotonic() + 600
        while True:
            record.write_text(run(env, "sacct", "-X", "--parsable2", "--allusers",
                                  "-S", "now-1hours", f"--format={FIELDS}"))  # fmt: skip
            if set(ids) <= set(read_sacct(record, nodes=4).jobs["job_id"]):
                break
            assert time.monotonic() < deadline, "the workload did not end within 10 minutes"
            time.sleep(2)
        run(env, "sacctmgr", "-i", "dump", "ci", f"file={folder / 'ci.dump'}")
        conf = shutil.copy(env["SLURM_CONF"], folder / "slurm.conf")
    real = read_sacct(record, nodes=4).jobs.set_index("job_id").loc[ids]
    real = pd.DataFrame({"start": real["submit"] + real["recorded_wait"]})
    out = {}
    for policy in ("slurm", "fcfs"):
        args = ["simulate", str(record), "--policy", policy, "--slurm-conf", str(conf),
                "--out", str(folder / policy), "--force"]  # fmt: skip
        if policy == "slurm":
            args += ["--slurm-accounts", str(folder / "ci.dump")]
        assert main(args) == 0
        simulated = pd.read_parquet(folder / policy / "jobs.parquet").set_index("job_id")
        out[policy] = agreement(simulated.loc[ids, ["start"]], real)
    return out
