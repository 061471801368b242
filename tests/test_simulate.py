"""The Python API: simulate() on hand-computed cases, outputs, determinism."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

import hpcsched
import hpcsched.run.replay
from hpcsched.exceptions import OptionError
from tests.conftest import workload_from

JOB_COLUMNS = {
    "job_id",
    "submit",
    "start",
    "end",
    "wait",
    "nodes",
    "requested_time",
    "run_time",
    "size_class",
    "start_kind",
    "requeues",
    "killed",
    "user",
}


def test_hand_computed_easy_schedule_through_the_api():
    # Same case as the engine's: J3 enters through `extra`, J4 ends before the shadow time.
    specs = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 500, 500, 2), (3, 50, 50, 2), (4, 200, 200, 1)]
    result = hpcsched.simulate(workload_from(specs, 10), "fcfs")
    jobs = result.jobs
    assert set(jobs.columns) >= JOB_COLUMNS
    assert jobs["start"].tolist() == [0, 100, 2, 3, 150]
    assert jobs["start_kind"].tolist() == ["primary", "primary", "backfill", "backfill", "primary"]
    assert jobs["wait"].tolist() == [0, 99, 0, 0, 146]
    # S <= N/32, M <= N/16, L <= N/4, XL above, on N = 10: 1 node is L (1*4 <= 10), 6 is XL.
    assert jobs["size_class"].tolist() == ["XL", "XL", "L", "L", "L"]
    reservation = result.reservations.iloc[0]
    assert (
        reservation["time"],
        reservation["job_index"],
        reservation["shadow_time"],
        reservation["extra"],
    ) == (1, 1, 100, 2)
    assert isinstance(result.summary, pd.DataFrame)
    assert result.summary.loc[0, "wait.mean"] == pytest.approx(245 / 5)


def test_maintenance_from_a_calendar_file_in_the_trace_clock(tmp_path):
    # The trace starts at t=1000 in its own clock; the calendar is in that clock too.
    specs = [(1000, 100, 100, 2), (1000, 1000, 1000, 1), (2500, 100, 100, 2), (2900, 50, 200, 1)]
    workload = workload_from([(s - 1000, r, q, n) for s, r, q, n in specs], 2)
    workload.time_origin = 1000.0
    calendar = tmp_path / "downtime.txt"
    calendar.write_text("# maintenance\n3000 3500 S  monthly\n")
    result = hpcsched.simulate(workload, "fcfs", downtime=calendar)
    jobs = result.jobs
    # J4 (est. end 2100 on the replay clock) may not run into [2000, 2500): it starts at 2500.
    assert jobs["start"].tolist() == [0, 100, 1500, 2500]
    info = result.info
    assert info["wait"]["mean"] == pytest.approx((0 + 100 + 0 + 600) / 4)
    # Busy node-seconds 200 + 1000 + 200 + 50 over 2 nodes x 2550 s minus 2 x 500 s of downtime.
    assert info["utilization"]["overall_uptime"] == pytest.approx(1450 / 4100)
    periods = info["utilization"]["uptime_periods"]
    assert [(p["from"], p["to"]) for p in periods] == [(0, 2000), (2500, 2550)]
    assert [p["utilization"] for p in periods] == pytest.approx([0.35, 0.5])
    before = info["utilization"]["before_maintenance"]
    assert before == [
        {"maintenance_start": 2000.0, "from": 0.0, "utilization": pytest.approx(0.35)}
    ]


def test_killed_and_requeued_jobs_are_reported():
    specs = [(0, 150, 150, 2), (50, 300, 300, 2)]
    calendar = hpcsched.DowntimeCalendar((hpcsched.workload.Downtime(100.0, 200.0, "unscheduled"),))
    result = hpcsched.simulate(workload_from(specs, 4), "fcfs", downtime=calendar)
    assert result.jobs["requeues"].tolist() == [1, 1]
    assert result.info["downtime"]["lost_node_seconds"] == 300.0
    assert result.info["jobs"]["requeued_jobs"] == 2


def test_run_directory_is_complete_and_deterministic(tmp_path):
    workload = hpcsched.workload.generate.markovian(n_jobs=500, seed=3)
    first = tmp_path / "a"
    second = tmp_path / "b"
    hpcsched.simulate(workload, "wfp3", window=16, out=first, csv=True)
    hpcsched.simulate(workload, "wfp3", window=16, out=second)
    assert sorted(os.listdir(first)) == ["jobs.csv", "jobs.parquet", "summary.json"]
    assert sorted(os.listdir(second)) == ["jobs.parquet", "summary.json"]
    assert (first / "jobs.parquet").read_bytes() == (second / "jobs.parquet").read_bytes()
    summary = json.loads((first / "summary.json").read_text())
    for key in (
        "inputs",
        "workload",
        "wait",
        "bounded_slowdown",
        "response_time",
        "makespan",
        "utilization",
        "timing",
    ):
        assert key in summary
    assert summary["inputs"]["policy"] == {
        "name": "wfp3",
        "window": 16,
        "backfill": "easy",
        "search": None,
        "power": None,
        "estimates": "requested",
        "max_wait": None,
    }
    assert set(summary["wait"]) >= {"mean", "median", "p75", "p95", "p99", "max"}
    # nothing left behind but the two run directories
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_two_runs_of_a_real_trace_write_identical_parquet(tmp_path, traces_dir):
    trace = traces_dir / "pwa" / "KTH-SP2-1996-2.1-cln.swf.gz"
    hpcsched.simulate(trace, "f1", window=64, out=tmp_path / "one")
    hpcsched.simulate(trace, "f1", window=64, out=tmp_path / "two")
    assert (tmp_path / "one" / "jobs.parquet").read_bytes() == (
        tmp_path / "two" / "jobs.parquet"
    ).read_bytes()


def test_rerun_replaces_a_run_directory_but_never_a_foreign_folder(tmp_path):
    workload = workload_from([(0, 10, 10, 1)], 2)
    out = tmp_path / "run"
    hpcsched.simulate(workload, "fcfs", out=out, csv=True)
    hpcsched.simulate(workload, "fcfs", out=out)
    assert sorted(os.listdir(out)) == ["jobs.parquet", "summary.json"]
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"x")
    with pytest.raises(OptionError, match="not an hpcsched run directory"):
        hpcsched.simulate(workload, "fcfs", out=foreign)
    assert os.listdir(foreign) == ["cat.jpg"]


def test_an_interrupted_write_leaves_nothing_behind(tmp_path, monkeypatch):
    def explode(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("pyarrow.parquet.write_table", explode)
    with pytest.raises(KeyboardInterrupt):
        hpcsched.simulate(workload_from([(0, 10, 10, 1)], 2), "fcfs", out=tmp_path / "run")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"policy": "nope"}, "unknown policy"),
        ({"policy": "fcfs", "window": -1}, "from 1 to"),
        ({"policy": "snf", "window": 4}, "takes no window"),
        ({"policy": "fcfs", "backfill": "conservative"}, "unknown backfill"),
        ({"policy": "fcfs", "overrun": "pause"}, "unknown overrun"),
    ],
)
def test_bad_options_are_option_errors(kwargs, message):
    with pytest.raises(OptionError, match=message):
        hpcsched.simulate(workload_from([(0, 10, 10, 1)], 2), **kwargs)


def test_progress_hook_sees_simulated_time_and_does_not_change_results(monkeypatch):
    # no time between reports: the run pauses for one after (almost) every event time
    monkeypatch.setattr(hpcsched.run.replay, "PROGRESS_SECONDS", 0.0)
    workload = hpcsched.workload.generate.markovian(n_jobs=300, seed=5)
    seen = []
    watched = hpcsched.simulate(
        workload, "sjf", progress=lambda now, n, calls: seen.append((now, n))
    )
    plain = hpcsched.simulate(workload, "sjf")
    assert len(seen) > 50
    times = [now for now, _ in seen]
    assert times == sorted(times)
    assert seen[-1][1] == 300
    pd.testing.assert_frame_equal(watched.jobs, plain.jobs)
