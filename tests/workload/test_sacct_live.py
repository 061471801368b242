"""The sacct reader against a real slurmdbd: jobs run on the test cluster with accounting
(scripts/slurm-cluster.sh start BASE --accounting: MariaDB, slurmdbd, users u1, u2 in acct_a,
u3 in acct_b) come back from sacct, in both formats, as the jobs that ran: their ids, users,
accounts, sizes, limits and states as submitted, and their starts and ends as slurmctld
reported them while they were listed (squeue --json, read here apart from the reader)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.slurm.live import accounting_cluster

from hpcsched.workload.sacct import parse_sacct, parse_sacct_json

FIELDS = "JobID,JobIDRaw,User,Group,Account,Partition,QOS,State,Submit,Eligible,Start,End,Timelimit,NNodes,NCPUS"  # noqa: E501

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def accounting() -> Iterator[dict[str, str]]:
    with accounting_cluster("hpcsched-acct-") as env:
        yield env


def run(env: dict[str, str], *args: str) -> str:
    return subprocess.run(list(args), env=env, capture_output=True, text=True, check=True).stdout


def test_sacct_gives_back_the_jobs_that_ran(accounting):
    env = accounting
    base = Path(env["SLURM_CONF"]).parents[1]
    submitted = {}  # id -> (user, account, nodes, minutes, partition, fails)
    for user, account, nodes, minutes, partition, fails in [
        ("u1", "acct_a", 2, 3, "debug", False),
        ("u2", "acct_a", 1, 5, "batch", False),
        ("u3", "acct_b", 4, 2, "debug", False),
        ("u3", "acct_b", 1, 4, "debug", True),
    ]:
        script = "sleep 2; exit 3" if fails else "sleep 2"
        out = run(env, "sbatch", "--parsable", f"--uid={user}", f"--gid={user}",
                  "-o", "/dev/null", "-D", str(base / "jobs"), "--exclusive",
                  "-A", account, "-p", partition, "-N", str(nodes), "-t", str(minutes),
                  "--wrap", script)  # fmt: skip
        submitted[int(out.strip().split(";")[0])] = (
            user,
            account,
            nodes,
            minutes,
            partition,
            fails,
        )
    # what slurmctld says of them, polled until every one has ended (finished jobs stay
    # listed until MinJobAge)
    deadline = time.monotonic() + 90
    while True:
        listed = {j["job_id"]: j for j in json.loads(run(env, "squeue", "--json"))["jobs"]}
        if all(listed[i]["job_state"] in ("COMPLETED", "FAILED") for i in submitted):
            break
        assert time.monotonic() < deadline, "the jobs did not finish"
        time.sleep(0.5)
    # slurmdbd records them a moment later: poll sacct until every job has its end
    deadline = time.monotonic() + 60
    while True:
        text = run(env, "sacct", "--parsable2", "--allusers", "-S", "now-1hours",
                   f"--format={FIELDS}")  # fmt: skip
        document = json.loads(run(env, "sacct", "--json", "--allusers", "-S", "now-1hours"))
        readings = [parse_sacct(text, "sacct", nodes=4),
                    parse_sacct_json(document, "sacct --json", nodes=4)]  # fmt: skip
        if all(set(submitted) <= set(w.jobs["job_id"]) for w in readings):
            break
        assert time.monotonic() < deadline, "sacct does not list the jobs as ended"
        time.sleep(1)
    for w in readings:
        jobs = w.jobs.set_index("job_id")
        for i, (user, account, nodes, minutes, partition, fails) in submitted.items():
            row = jobs.loc[i]
            assert (row["user_name"], row["account"], row["partition_name"]) == (
                user, account, partition
            )  # fmt: skip
            assert (row["recorded_nodes"], row["requested_time"]) == (nodes, 60.0 * minutes)
            assert row["state"] == ("FAILED" if fails else "COMPLETED")
            # the recorded start and end are slurmctld's, to the second
            start = w.time_origin + row["submit"] + row["recorded_wait"]
            assert start == listed[i]["start_time"]
            assert start + row["run_time"] == listed[i]["end_time"]
