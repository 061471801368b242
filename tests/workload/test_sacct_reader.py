"""The sacct reader on lines written for the tests in sacct's --parsable2 shape: arrival at
eligibility, steps read past, arrays by JobIDRaw, jobs never started or still running skipped
and counted, limits, states, the recorded schedule, and errors naming file, line and field.
Real sacct output of the test cluster: tests/workload/test_sacct_fixtures.py."""

from __future__ import annotations

import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.exceptions import InputError
from hpcsched.workload.sacct import parse_sacct

HEADER = (
    "JobID|JobIDRaw|JobName|User|Group|Account|Partition|QOS|State|Submit|Eligible|Start|End|"
    "Timelimit|NNodes|NCPUS"
)
ROWS = [
    # a job held 60 s after submission (eligible at 10:01), started at 10:02 for 60 s
    "2|2|train|u1|g1|acct_a|debug|normal|COMPLETED|2026-12-02T10:00:00|2026-12-02T10:01:00|"
    "2026-12-02T10:02:00|2026-12-02T10:03:00|00:10:00|2|8",
    "2.batch|2.batch|batch||||||COMPLETED|2026-12-02T10:02:00|2026-12-02T10:02:00|"
    "2026-12-02T10:02:00|2026-12-02T10:03:00||1|4",
    "2.extern|2.extern|extern||||||COMPLETED|2026-12-02T10:02:00|2026-12-02T10:02:00|"
    "2026-12-02T10:02:00|2026-12-02T10:03:00||2|8",
    # cancelled while pending: never started
    "3|3|x|u2|g1|acct_a|batch|normal|CANCELLED by 0|2026-12-02T10:00:10|2026-12-02T10:00:10|"
    "None|2026-12-02T10:05:00|00:05:00|1|0",
    # an array task (JobID 5_1, JobIDRaw 7), submitted to two partitions, no limit, failed
    "5_1|7|arr|u3|g2|acct_b|debug,batch|normal|FAILED|2026-12-02T10:00:20|"
    "2026-12-02T10:00:20|2026-12-02T10:00:50|2026-12-02T10:00:51|UNLIMITED|1|4",
    # still running when recorded
    "8|8|long|u1|g1|acct_a|debug|normal|RUNNING|2026-12-02T10:00:30|2026-12-02T10:00:30|"
    "2026-12-02T10:00:40|Unknown|1-00:00:00|4|16",
    # timed out after its 1 minute, cancelled while running (ran 30 s)
    "9|9|slow|u2|g1|acct_a|debug|normal|TIMEOUT|2026-12-02T10:00:40|2026-12-02T10:00:40|"
    "2026-12-02T10:00:40|2026-12-02T10:01:40|1|1|4",
    "10|10|stop|u1|g1|acct_a|debug|normal|CANCELLED by 0|2026-12-02T10:00:45|"
    "2026-12-02T10:00:45|2026-12-02T10:00:45|2026-12-02T10:01:15|Partition_Limit|1|4",
]


def sacct(rows=ROWS, header=HEADER, **options):
    return parse_sacct("\n".join([header, *rows]) + "\n", "rec.sacct", **options)


def test_jobs_arrive_when_eligible_and_run_their_recorded_times():
    w = sacct(nodes=4)
    jobs = w.jobs
    # arrivals: 7 at 10:00:20, 9 at 10:00:40, 10 at 10:00:45, 2 at 10:01:00 (eligible)
    assert jobs["job_id"].tolist() == [7, 9, 10, 2]
    assert jobs["submit"].tolist() == [0.0, 20.0, 25.0, 40.0]
    assert jobs["run_time"].tolist() == [1.0, 60.0, 30.0, 60.0]
    assert jobs["recorded_wait"].tolist() == [30.0, 0.0, 0.0, 60.0]
    assert jobs["nodes"].tolist() == [1, 1, 1, 2]
    # limits: UNLIMITED and Partition_Limit are not requests: the run time stands in
    assert jobs["requested_time"].tolist() == [1.0, 60.0, 30.0, 600.0]
    assert jobs["requested_known"].tolist() == [False, True, False, True]
    assert jobs["status"].tolist() == [0, 0, 5, 1]
    assert jobs["state"].tolist() == ["FAILED", "TIMEOUT", "CANCELLED", "COMPLETED"]
    assert jobs["user"].tolist() == [0, 1, 2, 2]  # u3, u2, u1 by first appearance
    assert jobs["account"].tolist() == ["acct_b", "acct_a", "acct_a", "acct_a"]
    assert jobs["partition_name"].tolist() == ["debug,batch", "debug", "debug", "debug"]
    assert w.skipped["never started"] == 1 and w.skipped["running when recorded"] == 1
    assert any("2 lines of job steps read past" in x for x in w.warnings)
    assert w.time_origin == 1796205620.0  # 2026-12-02T10:00:20 UTC
    assert w.unix_start_time == w.time_origin


def test_the_recorded_schedule_replays_the_recorded_starts(tmp_path):
    path = tmp_path / "rec.sacct"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n")
    result = hpcsched.simulate(path, "recorded", nodes=4)
    starts = dict(zip(result.jobs["job_id"], result.jobs["start"], strict=True))
    assert starts == {7: 30.0, 9: 20.0, 10: 25.0, 2: 100.0}


def test_without_a_machine_size_the_largest_job_is_the_machine():
    w = sacct()
    assert w.nodes == 2 and any("records no machine size" in x for x in w.warnings)


@pytest.mark.parametrize(
    ("edit", "line", "field", "says"),
    [
        (lambda r: r.replace("|00:10:00|", "|ten minutes|"), 2, "Timelimit", "Slurm time limit"),
        (lambda r: r.replace("T10:02:00|2026-12-02T10:03:00", "noon|"), 2, "Start", "a time"),
        (lambda r: r.replace("|2|8", "|two|8"), 2, "NNodes", "whole number"),
        (lambda r: r + "|extra", 2, None, "17 fields, the header has 16"),
    ],
)
def test_a_bad_line_names_the_file_line_and_field(edit, line, field, says):
    rows = [edit(ROWS[0]), *ROWS[1:]]
    with pytest.raises(InputError) as caught:
        sacct(rows)
    error = caught.value
    assert (error.path, error.line, error.field) == ("rec.sacct", line, field)
    assert says in str(error)


def test_a_header_without_a_needed_field_is_named():
    with pytest.raises(InputError, match="no nnodes field"):
        sacct(header=HEADER.replace("|NNodes", "|Nodes"))
    with pytest.raises(InputError, match="no header line"):
        parse_sacct("", "empty.sacct")


def test_the_command_line_reads_sacct_records(tmp_path, capsys):
    path = tmp_path / "rec.sacct"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n")
    assert main(["simulate", str(path), "--nodes", "4", "--out", str(tmp_path / "run")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4 replayed, 2 skipped" in out and "never started: 1" in out
    bad = tmp_path / "bad.sacct"
    bad.write_text(HEADER + "\n" + ROWS[0].replace("|2|8", "|two|8") + "\n")
    assert main(["simulate", str(bad), "--nodes", "4"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, line 2, field NNodes" in err and "Traceback" not in err
