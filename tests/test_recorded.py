"""The recorded schedule (``--policy recorded``) and every run's agreement with it: schedules
and figures computed by hand (docs/semantics.md, "The recorded schedule")."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.exceptions import InputError, OptionError
from hpcsched.workload import DowntimeCalendar
from hpcsched.workload.calendar import Downtime
from hpcsched.workload.model import Workload

NAN = float("nan")


def workload(rows, nodes=4, **extra):
    """Jobs as (id, submit, wait, run, requested, nodes) rows."""
    frame = pd.DataFrame(
        rows, columns=["job_id", "submit", "recorded_wait", "run_time", "requested_time", "nodes"]
    )
    frame["user"] = 1
    for column, values in extra.items():
        frame[column] = values
    return Workload(jobs=frame, nodes=nodes, source="hand.swf", format="swf")


# Machine of 4 nodes. A holds 3 nodes over [0, 100); B 2 nodes over [50, 80): 5 busy from 50 to
# 80, one above the machine. D starts at 80 as B ends (an end frees its nodes for a start at
# the same instant): 4 busy. C takes all 4 at 100 as A and D end. U has no recorded wait. O ran
# 30 s past a 20 s request.
CAPACITY = [
    (1, 0.0, 0.0, 100.0, 100.0, 3),  # A
    (2, 50.0, 0.0, 30.0, 30.0, 2),  # B
    (3, 60.0, 20.0, 20.0, 20.0, 1),  # D
    (4, 90.0, 10.0, 10.0, 10.0, 4),  # C
    (5, 95.0, NAN, 10.0, 10.0, 1),  # U
    (6, 200.0, 0.0, 50.0, 20.0, 1),  # O
]


def test_recorded_starts_are_submit_plus_wait_exactly():
    result = hpcsched.simulate(workload(CAPACITY), "recorded")
    jobs = result.jobs
    assert jobs["start"].tolist()[:4] == [0.0, 50.0, 80.0, 100.0]
    assert math.isnan(jobs["start"].iloc[4])
    assert jobs["start"].iloc[5] == 200.0
    assert jobs["end"].tolist()[:4] == [100.0, 80.0, 100.0, 110.0]
    assert jobs["end"].iloc[5] == 250.0  # the recorded run, past the request: not killed
    assert result.info["jobs"]["completed"] == 5
    assert result.info["jobs"]["never_started"] == 1
    assert result.info["inputs"]["policy"]["name"] == "recorded"


def test_each_conflict_is_counted_with_the_jobs_it_concerns():
    record = hpcsched.simulate(workload(CAPACITY), "recorded").info["record"]
    conflicts = record["conflicts"]
    assert record["replayed"] == 5
    assert conflicts["unknown_wait"]["jobs"] == 1
    assert conflicts["unknown_wait"]["examples"] == [5]
    over = conflicts["over_capacity"]
    assert (over["jobs"], over["examples"]) == (1, [2])
    assert over["peak_busy_nodes"] == 5
    assert over["seconds"] == 30.0  # from 50 to 80
    assert over["node_seconds"] == 30.0  # one node above the machine
    assert conflicts["overrun"]["examples"] == [6]
    assert conflicts["in_downtime"]["jobs"] == 0
    for kind in conflicts.values():
        assert kind["treated"]


def test_utilization_counts_what_the_record_has_busy():
    # busy node-seconds: 3*100 + 2*30 + 1*20 + 4*10 + 1*50 = 470 over 4 nodes x 250 s
    result = hpcsched.simulate(workload(CAPACITY), "recorded")
    assert result.info["utilization"]["overall_uptime"] == pytest.approx(470 / 1000)


def test_runs_in_downtime_are_counted_whole_and_partial_windows():
    jobs = [
        (1, 150.0, 0.0, 100.0, 100.0, 1),  # running at the whole-machine window's start (200)
        (2, 240.0, 10.0, 10.0, 10.0, 1),  # starts inside it (250)
        (3, 350.0, 0.0, 20.0, 20.0, 4),  # after it: no conflict
        (4, 440.0, 10.0, 10.0, 10.0, 2),  # in the 2-node window: 2 nodes are up, it needs 2
        (5, 400.0, 20.0, 10.0, 10.0, 3),  # needs 3 where 2 are up
    ]
    calendar = DowntimeCalendar(
        (
            Downtime(start=200.0, end=300.0, kind="scheduled"),
            Downtime(start=400.0, end=500.0, kind="scheduled", nodes=2),
        ),
        announce_lead=0.0,
    )
    record = hpcsched.simulate(workload(jobs), "recorded", downtime=calendar).info["record"]
    assert record["conflicts"]["in_downtime"]["examples"] == [1, 2, 5]
    # over capacity is judged at a job's start: job 2 started with no node up, job 5 with 2 up
    # (job 1 started before the window)
    assert record["conflicts"]["over_capacity"]["examples"] == [2, 5]


def test_a_workload_without_a_record_cannot_be_replayed_as_recorded():
    plain = workload([(1, 0.0, NAN, 10.0, 10.0, 1)])
    with pytest.raises(InputError, match="records no wait"):
        hpcsched.simulate(plain, "recorded")
    no_column = Workload(jobs=plain.jobs.drop(columns="recorded_wait"), nodes=4)
    with pytest.raises(InputError, match="no recorded schedule"):
        hpcsched.simulate(no_column, "recorded")


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"window": 8}, "--window"),
        ({"overrun": "kill"}, "--overrun"),
        ({"backfill": "easy"}, "--backfill"),
    ],
)
def test_options_a_record_cannot_honour_are_errors(kwargs, option):
    with pytest.raises(OptionError) as error:
        hpcsched.simulate(workload(CAPACITY), "recorded", **kwargs)
    assert error.value.option == option


def test_no_power_manager_runs_under_the_record():
    with pytest.raises(OptionError, match="no power manager"):
        hpcsched.PolicySpec("recorded", power="icon")


# The agreement of FCFS with a record, on 4 nodes. FCFS+EASY starts job 1 (2 nodes) at 0, job 2
# (2 nodes) at 10, job 3 (1 node) at 60 when job 2 ends, job 4 (4 nodes) at 260 when job 3
# ends. The record: 0, 15, unknown, 120.
AGREEMENT = [
    (1, 0.0, 0.0, 100.0, 100.0, 2),
    (2, 10.0, 5.0, 50.0, 40.0, 2),
    (3, 20.0, NAN, 200.0, 300.0, 1),
    (4, 30.0, 90.0, 10.0, 10.0, 4),
]


def test_agreement_figures_by_hand():
    run = hpcsched.simulate(workload(AGREEMENT), "fcfs")
    assert run.jobs["start"].tolist() == [0.0, 10.0, 60.0, 260.0]
    agreement = run.info["agreement"]
    assert agreement["jobs"] == 3  # job 3 has no recorded start
    error = agreement["start_error"]
    assert error["mean"] == pytest.approx((0 + 5 + 140) / 3)
    assert error["median"] == 5.0
    assert error["within_1h"] == 1.0
    # waits: simulated 0, 0, 230; recorded 0, 5, 90. Mean 76.67 against 31.67
    assert agreement["wait_mean_difference"] == pytest.approx(230 / 3 - 95 / 3)
    # ranks: simulated 1.5, 1.5, 3; recorded 1, 2, 3: rho = 1.5 / sqrt(1.5 * 2)
    assert agreement["wait_rank_correlation"] == pytest.approx(1.5 / math.sqrt(3.0))
    # over the span both schedules cover, [0, 130) (the record's last end; FCFS's is 270):
    # busy node-seconds FCFS 200 + 100 + 70 (job 3 from 60) = 370; the record, without job 3,
    # 340
    assert agreement["utilization_span"] == {"from": 0.0, "to": 130.0}
    assert agreement["utilization_difference"] == pytest.approx((370 - 340) / (4 * 130))
    assert agreement["by_class"]["XL"]["jobs"] == 3  # N/4 < 2 nodes on 4 nodes
    assert "agreement" not in hpcsched.simulate(workload(AGREEMENT), "recorded").info


def test_rank_correlation_without_ties_is_spearmans_formula():
    # five jobs, one at a time on a 1-node machine, submitted together: FCFS runs them in id
    # order, the record in another; no ties, so rho = 1 - 6 sum(d^2) / (n (n^2 - 1))
    order = [2, 0, 1, 4, 3]  # the record's order of jobs 0..4
    rows = []
    for job in range(5):
        position = order.index(job)
        rows.append((job + 1, 0.0, 10.0 * position, 10.0, 10.0, 1))
    run = hpcsched.simulate(workload(rows, nodes=1), "fcfs")
    d = np.array([job - order.index(job) for job in range(5)])
    expected = 1 - 6 * (d**2).sum() / (5 * (25 - 1))
    assert run.info["agreement"]["wait_rank_correlation"] == pytest.approx(expected)


def test_compare_adds_the_record_first_and_ranks_by_agreement(tmp_path):
    comparison = hpcsched.compare(workload(AGREEMENT), ["fcfs", "lcfs"], processes=1)
    assert list(comparison.results) == ["Recorded", "FCFS +EASY", "LCFS +EASY"]
    table = comparison.table
    assert math.isnan(table.loc[0, "start_error_mean"])  # the record against itself: nothing
    without = hpcsched.compare(workload(AGREEMENT), ["fcfs"], processes=1, recorded=False)
    assert list(without.results) == ["FCFS +EASY"]
    assert without.table.loc[0, "start_error_mean"] == pytest.approx(145 / 3)


def test_a_recorded_run_directory_reads_back(tmp_path):
    result = hpcsched.simulate(workload(CAPACITY), "recorded", out=tmp_path / "run")
    back = hpcsched.read_run(tmp_path / "run")
    assert back.info["record"] == result.info["record"]
    assert back.jobs["start"].equals(result.jobs["start"])


def test_a_power_platform_gives_the_record_no_energy_and_says_so():
    from tests.conftest import small_platform

    result = hpcsched.simulate(workload(CAPACITY), "recorded", platform=small_platform(4))
    assert "energy" not in result.info
    assert any("no energy for the recorded schedule" in w for w in result.info["warnings"])


# The same record as a hand-written SWF trace, through the reader and the command line, with a
# calendar taking the whole 4-processor machine down over [300, 400) of the trace's clock.
SWF = """; MaxProcs: 4
; Note: THIS IS A CLEANED VERSION OF THE LOG!
;         user=9 (2 jobs removed)
1 1000 0 100 3 -1 -1 3 100 -1 1 1 1 -1 1 1 -1 -1
2 1050 0 30 2 -1 -1 2 30 -1 1 1 1 -1 1 1 -1 -1
3 1060 20 20 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1
4 1090 10 10 4 -1 -1 4 10 -1 1 1 1 -1 1 1 -1 -1
5 1095 -1 10 1 -1 -1 1 10 -1 5 1 1 -1 1 1 -1 -1
6 1200 0 50 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1
7 1280 40 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1
"""


def test_a_hand_written_swf_replays_as_recorded_and_reports_each_conflict(tmp_path, capsys):
    import json

    from tests.conftest import run_cli

    trace = tmp_path / "hand.swf"
    trace.write_text(SWF)
    calendar = tmp_path / "down.txt"
    calendar.write_text("1300 1400 S\n")
    out = tmp_path / "run"
    args = ["simulate", trace, "--policy", "recorded", "--downtime", calendar, "--out", out]
    code, printed, _ = run_cli(args, capsys)
    assert code == 0
    jobs = pd.read_parquet(out / "jobs.parquet")
    # the replay clock starts at the first submission (1000): starts are submit + wait
    assert jobs["start"].tolist()[:4] == [0.0, 50.0, 80.0, 100.0]
    assert math.isnan(jobs["start"].iloc[4])
    assert jobs["start"].tolist()[5:] == [200.0, 320.0]
    record = json.loads((out / "summary.json").read_text())["record"]
    conflicts = {kind: c["examples"] for kind, c in record["conflicts"].items()}
    assert conflicts == {
        "unknown_wait": [5],
        "over_capacity": [2, 7],  # 5 of 4 busy at 50; none up at 320 (the window)
        "in_downtime": [7],
        "overrun": [6],
    }
    assert record["left_out"] == {"by_the_reader": 0, "by_the_archive": 2}
    for name in (
        "no recorded start",
        "more nodes busy than up",
        "ran in a downtime window",
        "ran past its request",
        "left out of the log",
    ):
        assert name in printed, name


def test_a_sweep_ranks_its_runs_by_agreement_in_the_terminal_and_the_report(tmp_path, capsys):
    from tests.conftest import run_cli

    (tmp_path / "hand.swf").write_text(SWF)
    config = tmp_path / "s.toml"
    config.write_text(
        '[sweep]\nout = "out"\n[[workloads]]\npath = "hand.swf"\n'
        '[[policies]]\nname = "recorded"\n[[policies]]\nname = "fcfs"\n'
        '[[policies]]\nname = "lcfs"\n'
    )
    code, printed, _ = run_cli(["sweep", config], capsys)
    assert code == 0
    ranking = printed.split("agreement with the recorded schedule, closest first", 1)[1]
    # By hand, on 4 nodes (the record: 0, 50, 80, 100, -, 200, 320). FCFS+EASY starts J1 at 0,
    # backfills J3 at 60 and J5 at 95 (within J2's 2 extra nodes at its shadow 100), J2 at 100,
    # J4 at 130 (J2's end), J6 at 200, J7 at 280: errors 0 + 50 + 20 + 30 + 0 + 40 = 140 over
    # the 6 jobs with a recorded start. LCFS+EASY starts J3 at 60 and J5 at 95 first in its
    # order, J4 (reserved at 105, J5's end, no extra node for J2) at 105, J2 at 115: errors
    # 0 + 65 + 20 + 5 + 0 + 40 = 130. LCFS is the closer.
    table = pd.read_parquet(tmp_path / "out" / "results.parquet").set_index("policy")
    assert table.loc["FCFS +EASY", "start_error_mean"] == pytest.approx(140 / 6)
    assert table.loc["LCFS +EASY", "start_error_mean"] == pytest.approx(130 / 6)
    # one row per ranked run: workload, policy, figures
    rows = [line.split("│")[2].strip() for line in ranking.splitlines() if line.startswith("│")]
    assert rows == ["LCFS +EASY", "FCFS +EASY"]
    assert "Recorded" not in ranking  # the record is not ranked against itself
    report = (tmp_path / "out" / "report.html").read_text()
    assert "Agreement with the recorded schedule" in report


def test_a_start_exactly_an_hour_off_counts_as_within_the_hour():
    # two nodes, both jobs start at submission under FCFS; the record has them 3600 s and
    # 3601 s later: one of two within the hour, the boundary included
    rows = [(1, 0.0, 3600.0, 10.0, 10.0, 1), (2, 100.0, 3601.0, 10.0, 10.0, 1)]
    agreement = hpcsched.simulate(workload(rows, nodes=2), "fcfs").info["agreement"]
    assert agreement["start_error"]["within_1h"] == 0.5
    assert agreement["by_class"]["XL"]["within_1h"] == 0.5  # one node of two: XL
