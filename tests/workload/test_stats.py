"""Workload summary statistics."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hpcsched.workload.batsim import read_batsim_file
from hpcsched.workload.model import JOB_COLUMNS, Workload
from hpcsched.workload.stats import describe


def hand_workload(with_known: bool = True, **kwargs) -> Workload:
    columns = {
        "job_id": [1, 2, 3, 4, 5],
        "submit": [0.0, 10.0, 20.0, 30.0, 40.0],
        "run_time": [100.0, 300.0, 50.0, 1000.0, 10.0],
        "requested_time": [200.0, 200.0, 50.0, 1000.0, 5.0],
        "nodes": [1, 2, 4, 16, 17],
        "user": [1, 1, 2, 3, -1],
    }
    if with_known:
        columns["requested_known"] = [True, True, True, False, True]
    jobs = pd.DataFrame(columns).astype(JOB_COLUMNS)
    defaults = {"nodes": 64, "source": "hand", "skipped": {"unknown run time": 2}}
    return Workload(jobs=jobs, **{**defaults, **kwargs})


def test_describe_by_hand():
    d = describe(hand_workload(warnings=["w"]))
    assert d["jobs"] == 5
    assert d["skipped"] == {"unknown run time": 2}
    assert d["skipped_total"] == 2
    assert d["warnings"] == ["w"]
    assert d["machine_nodes"] == 64
    assert (d["first_submit"], d["last_submit"], d["span_seconds"]) == (0.0, 40.0, 40.0)
    assert d["span_days"] == pytest.approx(40 / 86400)
    assert d["first_submit_date"] is None and d["last_submit_date"] is None
    # work = 1*100 + 2*300 + 4*50 + 16*1000 + 17*10 = 17070 node-seconds over 64 nodes * 40 s
    assert d["offered_load"] == pytest.approx(17070 / 2560)
    assert d["size_classes"] == {
        "S": {"jobs": 2, "share": 0.4, "work_share": pytest.approx(700 / 17070)},
        "M": {"jobs": 1, "share": 0.2, "work_share": pytest.approx(200 / 17070)},
        "L": {"jobs": 1, "share": 0.2, "work_share": pytest.approx(16000 / 17070)},
        "XL": {"jobs": 1, "share": 0.2, "work_share": pytest.approx(170 / 17070)},
    }
    # known requests: jobs 1, 2, 3, 5; run > requested for 2 (300 > 200) and 5 (10 > 5);
    # job 3 runs exactly its request (not an overrun)
    assert d["requested_known_jobs"] == 4
    assert d["overrun_share"] == 0.5
    assert d["run_time_mean"] == 292.0
    assert d["run_time_median"] == 100.0
    assert d["requested_time_mean"] == 113.75  # (200 + 200 + 50 + 5) / 4
    assert d["requested_time_median"] == 125.0
    assert d["users"] == 3
    json.dumps(d)  # plain Python values


def test_without_requested_known_column_all_requests_count():
    d = describe(hand_workload(with_known=False))
    assert d["requested_known_jobs"] == 5
    assert d["overrun_share"] == 0.4  # jobs 2 and 5; job 4 runs exactly 1000 of 1000
    assert d["requested_time_mean"] == 291.0  # (200 + 200 + 50 + 1000 + 5) / 5


def test_wall_clock_dates():
    w = hand_workload(header={"UnixStartTime": 1_000_000_000}, time_origin=60.0)
    d = describe(w)
    # 1e9 s = 2001-09-09 01:46:40 UTC; plus the 60 s time origin
    assert d["first_submit_date"] == "2001-09-09T01:47:40+00:00"
    assert d["last_submit_date"] == "2001-09-09T01:48:20+00:00"
    assert d["time_origin"] == 60.0
    w.header["TimeZoneString"] = "Europe/Stockholm"  # CEST, UTC+2, in September
    assert describe(w)["first_submit_date"] == "2001-09-09T03:47:40+02:00"
    w.header["TimeZoneString"] = "Not/AZone"
    assert describe(w)["first_submit_date"] == "2001-09-09T01:47:40+00:00"


def test_zero_span_and_empty_workload():
    w = hand_workload()
    w.jobs = w.jobs.iloc[:1]
    d = describe(w)
    assert d["span_seconds"] == 0.0 and d["offered_load"] is None

    empty = Workload(jobs=pd.DataFrame({c: [] for c in JOB_COLUMNS}).astype(JOB_COLUMNS), nodes=8)
    d = describe(empty)
    assert d["jobs"] == 0
    assert d["first_submit"] is None and d["offered_load"] is None
    assert d["run_time_mean"] is None and d["overrun_share"] is None
    assert d["size_classes"]["S"] == {"jobs": 0, "share": None, "work_share": None}
    assert d["users"] == 0


def test_describe_real_workload(traces_dir):
    path = traces_dir / "snf-icon-paper" / "DAS2-fs1-0-3000.json.gz"
    w = read_batsim_file(path)
    d = describe(w)
    jobs = w.jobs
    assert d["jobs"] == 3000 and d["machine_nodes"] == 64
    assert sum(c["jobs"] for c in d["size_classes"].values()) == 3000
    assert sum(c["share"] for c in d["size_classes"].values()) == pytest.approx(1.0)
    work = (jobs["nodes"] * jobs["run_time"]).sum()
    span = jobs["submit"].iloc[-1] - jobs["submit"].iloc[0]
    assert d["offered_load"] == pytest.approx(work / (64 * span))
    assert d["users"] == jobs["user"].nunique()


def recorded_workload(**kwargs) -> Workload:
    """Four jobs on 64 nodes, with what the site recorded."""
    jobs = pd.DataFrame(
        {
            "job_id": [1, 2, 3, 4],
            "submit": [0.0, 5.0, 20.0, 30.0],
            "run_time": [100.0, 50.0, 30.0, 200.0],
            "requested_time": [100.0, 50.0, 30.0, 200.0],
            "nodes": [2, 4, 1, 16],  # S, M, S, L on 64 nodes
            "user": [1, 1, 2, 3],
            "status": [1, -1, 7, 1],
            "queue": [2, 2, -1, 0],
            "recorded_wait": [10.0, 35.0, float("nan"), 0.0],
        }
    ).astype(JOB_COLUMNS)
    defaults = {
        "nodes": 64,
        "queue_names": {0: "interactive", 2: "batch", 5: "never used"},
        "removed_by_archive": 14,
    }
    return Workload(jobs=jobs, **{**defaults, **kwargs})


def test_recorded_statistics_by_hand():
    d = describe(recorded_workload())
    r = d["recorded"]
    assert (r["jobs"], r["unknown"]) == (3, 1)
    # known waits 0, 10, 35: mean 15, median 10; P95 at rank 0.95 * 2 = 1.9 between 10 and 35
    assert r["wait"] == {"mean": 15.0, "median": 10.0, "p95": pytest.approx(32.5)}
    # by class: job 1 (S; job 3, also S, has no wait), job 2 (M), job 4 (L)
    assert r["wait_by_class"] == {
        "S": {"jobs": 1, "mean": 10.0, "median": 10.0, "p95": 10.0},
        "M": {"jobs": 1, "mean": 35.0, "median": 35.0, "p95": 35.0},
        "L": {"jobs": 1, "mean": 0.0, "median": 0.0, "p95": 0.0},
        "XL": {"jobs": 0, "mean": None, "median": None, "p95": None},
    }
    # recorded schedule: job 1 on 2 nodes 10-110, job 2 on 4 nodes 40-90, job 4 on 16 nodes
    # 30-230: 200 + 200 + 3200 = 3600 node-seconds over 64 nodes * 230 s
    assert r["utilization"] == pytest.approx(3600 / (64 * 230))
    assert d["status"] == {"completed": 2, "unknown": 1, "code 7": 1}
    assert list(d["status"]) == ["completed", "unknown", "code 7"]  # most frequent first
    # queue -1: job 3, no known wait; queue 0: job 4 (0 s); queue 2: jobs 1 and 2 (10 s, 35 s)
    assert d["queues"] == [
        {"number": -1, "name": None, "jobs": 1, "recorded_wait_mean": None},
        {"number": 0, "name": "interactive", "jobs": 1, "recorded_wait_mean": 0.0},
        {"number": 2, "name": "batch", "jobs": 2, "recorded_wait_mean": 22.5},
    ]
    assert d["partitions"] is None  # no partition column
    assert d["removed_by_archive"] == 14
    json.dumps(d)


def test_the_recorded_utilization_exceeds_1_when_the_record_oversubscribes_the_machine():
    w = recorded_workload(nodes=16)
    # all four jobs at once, each 0 to 100 s with no wait: 2 + 4 + 1 + 16 = 23 nodes busy on 16
    w.jobs["submit"] = 0.0
    w.jobs["run_time"] = 100.0
    w.jobs["recorded_wait"] = 0.0
    assert describe(w)["recorded"]["utilization"] == pytest.approx(23 / 16)


def test_no_record_without_the_columns_or_a_known_wait():
    d = describe(hand_workload())  # as a Batsim or generated workload: no record
    assert d["recorded"] is None and d["status"] is None
    assert d["queues"] is None and d["partitions"] is None
    assert d["removed_by_archive"] is None
    w = recorded_workload()
    w.jobs["recorded_wait"] = float("nan")
    assert describe(w)["recorded"] is None
