"""The sacct reader on real sacct output of the test cluster with accounting (Slurm 22.05.8,
slurmdbd and MariaDB; tests/workload/fixtures/README.md says how each file was captured and
what each job did): the three captures give the same jobs, and the jobs are the ones the
capture script submitted."""

from __future__ import annotations

from pathlib import Path

import pytest

import hpcsched
from hpcsched.workload import load_workload

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURES = {
    "parsable2 with steps": ("sacct-parsable2.txt", "sacct"),
    "parsable2, allocations only": ("sacct-parsable2-allocations.txt", "sacct"),
    "json": ("sacct-json.json", None),  # told from Batsim JSON by its meta
}


def read(capture: str):
    name, fmt = CAPTURES[capture]
    return load_workload(FIXTURES / name, format=fmt, nodes=4)


@pytest.mark.parametrize("capture", list(CAPTURES))
def test_each_capture_gives_the_jobs_the_cluster_ran(capture):
    w = read(capture)
    jobs = w.jobs.set_index("job_id")
    # 14 jobs ran to an end; 5 never started (4 pending, 1 cancelled while pending: 13),
    # 4 were still running at the capture (16, 17, 18 and array task 25)
    assert sorted(jobs.index) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15]
    assert w.skipped["never started"] == 5 and w.skipped["running when recorded"] == 4
    # pair-excl: 2 exclusive nodes of 4 CPUs, ran 20 s of its 10 minutes
    assert jobs.loc[2, ["nodes", "procs", "run_time", "requested_time"]].tolist() == [2, 8, 20, 600]
    # ... having asked for one CPU a node (ReqCPUS; the JSON's required.CPUs): what Slurm's
    # first priority counts
    assert jobs.loc[2, "requested_procs"] == 2
    # 1 node, 2 CPUs on a shared node: asked for and given 2
    assert jobs.loc[3, ["procs", "requested_procs"]].tolist() == [2, 2]
    # timeout: killed at its 1 minute limit
    assert (jobs.loc[4, "state"], jobs.loc[4, "run_time"], jobs.loc[4, "status"]) == (
        "TIMEOUT", 60.0, 0
    )  # fmt: skip
    # fails: exit 3 at once; cancel-running: cancelled after 4 s (status 5)
    assert (jobs.loc[3, "state"], jobs.loc[3, "run_time"]) == ("FAILED", 0.0)
    assert (jobs.loc[8, "state"], jobs.loc[8, "run_time"], jobs.loc[8, "status"]) == (
        "CANCELLED", 4.0, 5
    )  # fmt: skip
    # full-machine: submitted 9 s after the first jobs, waited 51 s for all 4 nodes
    assert jobs.loc[12, ["submit", "nodes", "recorded_wait"]].tolist() == [9.0, 4, 51.0]
    # the array sweep (5_0..5_3) is four jobs, by JobIDRaw: 9, 10, 11 and 5
    assert jobs.loc[[9, 10, 11, 5], "job_name"].tolist() == ["sweep"] * 4
    # users and accounts: u1 and u2 in acct_a, u3 in acct_b
    assert set(zip(jobs["user_name"], jobs["account"], strict=True)) <= {
        ("u1", "acct_a"), ("u2", "acct_a"), ("u3", "acct_b")
    }  # fmt: skip
    assert jobs.loc[[3, 14, 15], "partition_name"].tolist() == ["batch"] * 3


#: What the JSON records beside the text captures (their --format did not ask for ReqTRES and
#: ReqMem): the requests inside nodes
REQUEST_COLUMNS = ["cpus", "req_nodes", "mem_per_cpu", "mem_per_node", "gres", "exclusive"]


def test_the_captures_agree_column_by_column():
    tables = {c: read(c).jobs.reset_index(drop=True) for c in CAPTURES}
    first = tables.pop("parsable2 with steps").drop(columns=["line"])
    for capture, table in tables.items():
        extra = [c for c in table.columns if c not in (*first.columns, "line")]
        assert extra in ([], REQUEST_COLUMNS), capture
        assert first.equals(table.drop(columns=["line", *extra])), capture


def test_the_recorded_schedule_replays_what_the_cluster_did():
    """--policy recorded starts each job when the cluster did: the starts below are the
    fixture's, read by hand (sacct-parsable2-allocations.txt: Start minus 13:57:31, the first
    submission). The cluster packs jobs of a few CPUs on shared nodes
    (SelectTypeParameters=CR_CPU), which hpcsched's whole nodes cannot: the record is then
    "over capacity", at most 8 nodes busy (at 1 s: jobs 1, 2, 4, 6, 9, 10, on 1+2+1+2+1+1;
    at 12 s: 2, 4, 9, 10, 11, 14, 15, 5 on 2+1+1+1+1+1+2+1 less job 7's end)."""
    w = read("json")
    result = hpcsched.simulate(w, "recorded")
    starts = dict(zip(result.jobs["job_id"], result.jobs["start"], strict=True))
    assert starts == {
        1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0, 6: 0.0, 7: 12.0, 8: 5.0, 9: 1.0, 10: 1.0, 11: 4.0,
        5: 12.0, 12: 60.0, 14: 11.0, 15: 11.0,
    }  # fmt: skip
    conflict = result.info["record"]["conflicts"]["over_capacity"]
    assert conflict["peak_busy_nodes"] == 8
