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
