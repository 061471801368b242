"""Hostile sacct records (issue 40): starts before submission, job ids, counts and times out of
range or not ASCII, sacct JSON of the wrong types or nested too deep, messages naming file,
line and field, and a large file read in bounded memory. Every expectation is written by hand
from the lines of the test (docs/semantics.md, "Hostile sacct records")."""

from __future__ import annotations

import gzip
import json
import math
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.workload.test_reader_fuzz import (
    SETTINGS,
    check_replay,
    json_values,
    read_bounded,
    tokens,
)

import hpcsched
from hpcsched.cli import main
from hpcsched.exceptions import InputError
from hpcsched.site.platform import load_platform
from hpcsched.workload import load_workload, read_calendar
from hpcsched.workload.sacct import parse_sacct, parse_sacct_json

HEADER = (
    "JobIDRaw|JobID|Submit|Eligible|Start|End|Timelimit|NNodes|NCPUS|ReqCPUS|User|Group|Account|"
    "Partition|QOS|State|JobName"
)


def line(
    raw="1",
    job=None,
    submit="2026-03-08T10:00:00",
    eligible=None,
    start="2026-03-08T10:01:00",
    end="2026-03-08T10:02:00",
    limit="00:10:00",
    nodes="1",
    cpus="4",
    asked="4",
):
    """One allocation line of the HEADER's fields (eligible at submission unless given)."""
    fields = [raw, job or raw, submit, eligible or submit, start, end, limit, nodes, cpus, asked]
    return "|".join([*fields, "u1", "g1", "a1", "batch", "normal", "COMPLETED", "job"])


def sacct(*rows, header=HEADER, **options):
    return parse_sacct("\n".join([header, *rows]) + "\n", "rec.sacct", **options)


def refused(*rows, header=HEADER, **options):
    with pytest.raises(InputError) as caught:
        sacct(*rows, header=header, **options)
    return caught.value


def write(tmp_path, *rows, header=HEADER, name="rec.sacct"):
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def cli_error(capsys, *args):
    """The exit code and the one line of error of the command line."""
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return code, " ".join(err.split())


# 7. A job that starts before it was submitted or became eligible


def test_a_start_before_submission_is_left_unknown_and_counted():
    # job 1: submitted 10:00:00, started 09:59:50 (a record in local time across a
    # daylight-saving change); job 2: submitted 10:00:30, started 10:01:00
    w = sacct(
        line("1", submit="2026-03-08T10:00:00", start="2026-03-08T09:59:50"),
        line("2", submit="2026-03-08T10:00:30", start="2026-03-08T10:01:00"),
    )
    jobs = w.jobs
    assert jobs["job_id"].tolist() == [1, 2]
    assert jobs["submit"].tolist() == [0.0, 30.0]  # job 1 keeps its submission
    assert math.isnan(jobs["recorded_wait"][0]) and jobs["recorded_wait"][1] == 30.0
    assert jobs["run_time"].tolist() == [130.0, 60.0]  # 09:59:50 -> 10:02:00, as recorded
    assert (
        "1 job starts before submission or eligibility (a record in local time across a "
        "daylight-saving change?): its recorded start is left unknown (the first: job 1, "
        "line 2)"
    ) in w.warnings


def test_a_start_before_eligibility_is_left_unknown():
    # submitted 10:00, held until 10:05, started 10:03: it arrives at 10:05, no known start
    w = sacct(
        line(
            "7",
            eligible="2026-03-08T10:05:00",
            start="2026-03-08T10:03:00",
            end="2026-03-08T10:04:00",
        ),
        line(
            "8",
            submit="2026-03-08T10:06:00",
            start="2026-03-08T10:06:00",
            end="2026-03-08T10:07:00",
        ),
        line(
            "9",
            submit="2026-03-08T10:06:00",
            start="2026-03-08T10:05:00",
            end="2026-03-08T10:07:00",
        ),
    )
    assert w.jobs["job_id"].tolist() == [7, 8, 9]
    assert w.jobs["submit"].tolist() == [0.0, 60.0, 60.0]
    assert w.jobs["recorded_wait"].isna().tolist() == [True, False, True]
    assert any(x.startswith("2 jobs start before submission") and "job 7, line 2" in x
               for x in w.warnings)  # fmt: skip


def test_a_job_eligible_before_its_submission_arrives_at_its_submission():
    # job 1: submitted 10:00, "eligible" 09:55 (a requeued job keeps its first eligibility),
    # started 10:01; job 2: submitted and eligible 09:58, started 09:59
    w = sacct(
        line("1", submit="2026-03-08T10:00:00", eligible="2026-03-08T09:55:00"),
        line("2", submit="2026-03-08T09:58:00", start="2026-03-08T09:59:00"),
    )
    assert w.jobs["job_id"].tolist() == [2, 1]  # 09:58, then 10:00 (not 09:55)
    assert w.jobs["submit"].tolist() == [0.0, 120.0]
    assert w.jobs["recorded_wait"].tolist() == [60.0, 60.0]
    assert w.time_origin == 1772963880.0  # 2026-03-08T09:58:00 UTC


def test_the_recorded_schedule_and_the_agreement_treat_it_as_unknown(tmp_path):
    path = write(
        tmp_path,
        line("1", submit="2026-03-08T10:00:00", start="2026-03-08T09:59:50"),
        line("2", submit="2026-03-08T10:00:30", start="2026-03-08T10:01:00"),
    )
    recorded = hpcsched.simulate(path, "recorded", nodes=4)
    conflict = recorded.info["record"]["conflicts"]["unknown_wait"]
    assert (conflict["jobs"], conflict["examples"]) == (1, [1])
    starts = dict(zip(recorded.jobs["job_id"], recorded.jobs["start"], strict=True))
    assert math.isnan(starts[1]) and starts[2] == 60.0  # 10:01:00, 60 s after 10:00:00
    # another policy is compared with the record over the jobs started in both: job 2 only
    fcfs = hpcsched.simulate(path, "fcfs", nodes=4)
    assert fcfs.info["agreement"]["jobs"] == 1


def test_sacct_json_starts_before_submission_are_unknown_too():
    jobs = [_json_job(1, start=1796219840), _json_job(2, submission=1796219880)]
    w = parse_sacct_json({"jobs": jobs}, "rec.json")
    assert w.jobs["job_id"].tolist() == [1, 2]
    assert math.isnan(w.jobs["recorded_wait"][0]) and w.jobs["recorded_wait"][1] == 10.0
    assert any("(the first: job 1, jobs[0])" in x for x in w.warnings)


def test_a_job_that_ends_before_it_starts_is_an_error_naming_file_line_and_field(tmp_path, capsys):
    bad = line("3", start="2026-03-08T10:05:00", end="2026-03-08T10:04:00")
    error = refused(line("1"), bad)
    assert (error.path, error.line, error.field) == ("rec.sacct", 3, "End")
    assert str(error).endswith(
        "the job ends 60 s before it starts (a record in local time across a daylight-saving "
        "change? capture with TZ=UTC)"
    )
    code, err = cli_error(capsys, "simulate", write(tmp_path, line("1"), bad), "--nodes", 4)
    assert code == 2 and f"{tmp_path / 'rec.sacct'}, line 3, field End" in err
    with pytest.raises(InputError) as caught:
        parse_sacct_json({"jobs": [_json_job(1, end=1796219800)]}, "rec.json")
    assert (caught.value.path, caught.value.field) == ("rec.json", "jobs[0].time.end")
    assert "before it starts" in str(caught.value)


# 8. Job ids


def test_jobidraw_must_be_a_number():
    error = refused(line("12a"))
    assert (error.line, error.field) == (2, "JobIDRaw")
    assert "expected a job id, not '12a'" in str(error)
    error = refused(line("1"), line("123_4"))  # an array task's JobID is not its JobIDRaw
    assert (error.line, error.field) == (3, "JobIDRaw")


def test_a_pending_array_record_is_a_job_that_never_started():
    # the record of an array's tasks not yet started, whatever times it shows
    header = HEADER.replace("JobIDRaw|", "")
    pending = line("123_[1-1000000]").split("|", 1)[1]
    done = line("5").split("|", 1)[1]
    w = sacct(pending, done, header=header)
    assert w.jobs["job_id"].tolist() == [5]
    assert w.skipped["never started"] == 1
    # the same when its JobIDRaw is the array's id and its JobID says it is pending
    w = sacct(line("123", job="123_[1-1000000]"), line("5"))
    assert w.jobs["job_id"].tolist() == [5] and w.skipped["never started"] == 1


def test_with_only_jobid_array_tasks_and_components_keep_distinct_ids():
    # job * 10^8 + task: 123_4 -> 12300000004; a heterogeneous job's 123+1 -> 12300000001
    header = "JobID|Submit|Start|End|Timelimit|NNodes"
    rows = [
        f"{job}|2026-03-08T10:00:0{k}|2026-03-08T10:01:00|2026-03-08T10:02:00|10|1"
        for k, job in enumerate(["123_4", "456_4", "789_4", "123_5", "7", "124+1"])
    ]
    w = sacct(*rows, header=header)
    assert w.jobs["job_id"].tolist() == [
        12300000004, 45600000004, 78900000004, 12300000005, 7, 12400000001
    ]  # fmt: skip
    assert not any("share their job id" in x for x in w.warnings)
    error = refused(rows[0].replace("123_4", "123_100000000"), header=header)
    assert (error.line, error.field) == (2, "JobID") and "give JobIDRaw" in str(error)


def test_duplicate_ids_are_a_warning_naming_their_lines():
    w = sacct(line("5"), line("6"), line("5"), line("6"))
    assert w.jobs["job_id"].tolist() == [5, 5, 6, 6]  # replayed as distinct jobs
    assert (
        "4 kept jobs share their job id with another job (e.g. job 5: line 2 and line 4); "
        "they are replayed as distinct jobs"
    ) in w.warnings
    # the first job in the file keeps its own id: the example is the first that shares one
    w = sacct(line("1"), line("2"), line("3"), line("2"))
    assert (
        "2 kept jobs share their job id with another job (e.g. job 2: line 3 and line 5); "
        "they are replayed as distinct jobs"
    ) in w.warnings


# 10, 13, 14. Counts and ids: whole, ASCII, within range


@pytest.mark.parametrize(
    ("edit", "field", "says"),
    [
        ({"raw": "12345678901234567890123"}, "JobIDRaw", "a job id from 0 to 9223372036854775807"),
        ({"raw": "9223372036854775808"}, "JobIDRaw", "a job id from 0 to 9223372036854775807"),
        ({"nodes": "\u00b2"}, "NNodes", "expected a whole number, not '\u00b2'"),
        ({"nodes": "\u0663"}, "NNodes", "expected a whole number, not '\u0663'"),
        ({"cpus": "\u00b2"}, "NCPUS", "expected a whole number, not '\u00b2'"),
        ({"nodes": "16777217"}, "NNodes", "a whole number from 0 to 16777216"),
        ({"nodes": "9" * 400}, "NNodes", "a whole number from 0 to 16777216"),
        ({"cpus": "4294967296"}, "NCPUS", "a whole number from 0 to 4294967295"),
        ({"limit": "\u0663"}, "Timelimit", "expected a Slurm time limit"),
        ({"limit": "9" * 400}, "Timelimit", "a Slurm time limit up to 1e+11 s"),
        ({"start": "2026-03-08T1\u0660:01:00"}, "Start", "expected a time YYYY-MM-DDTHH:MM:SS"),
        ({"end": "9999-03-08T10:02:00"}, "End", "beyond the engine's range of times"),
    ],
)
def test_a_number_that_is_not_one_or_out_of_range_names_its_line_and_field(edit, field, says):
    error = refused(line("1"), line(**{"raw": "2", **edit}))
    assert (error.path, error.line, error.field) == ("rec.sacct", 3, field)
    assert says in str(error)


@pytest.mark.parametrize(
    ("edit", "field", "says"),
    [
        ({"asked": "1.5"}, "ReqCPUS", "expected a whole number, not '1.5'"),
        ({"start": "2026-02-30T10:01:00"}, "Start", "expected a time YYYY-MM-DDTHH:MM:SS"),
        ({"limit": "ten minutes"}, "Timelimit", "expected a Slurm time limit"),
        ({"start": "2026-03-08T24:00:00"}, "Start", "expected a time YYYY-MM-DDTHH:MM:SS"),
        ({"start": "2026-02-29T10:01:00"}, "Start", "expected a time YYYY-MM-DDTHH:MM:SS"),
    ],
)
def test_values_refused_before_the_rework_still_are(edit, field, says):
    """(The reader now converts whole columns: the refusals of the line-by-line reader stay,
    with their line, field and message.)"""
    error = refused(line("1"), line(**{"raw": "2", **edit}))
    assert (error.path, error.line, error.field) == ("rec.sacct", 3, field)
    assert says in str(error)


def test_the_rework_keeps_the_rules_of_sizes_limits_and_cpus():
    """(Guards of the column-wise reader: each rule as the line-by-line reader had it.)"""
    leap = "2024-02-29"  # a day of a leap year, 738 days before 2026-03-08
    w = sacct(
        line("1", limit="0", cpus="0", asked="0"),  # no limit; no CPUs recorded: 1, as given
        line("2", asked="2"),
        line("3", nodes="0"),  # no nodes: skipped
        line("4", submit=f"{leap}T10:00:00", start=f"{leap}T10:01:00", end=f"{leap}T10:03:00"),
    )
    assert w.jobs["job_id"].tolist() == [4, 1, 2]
    assert w.jobs["submit"].tolist() == [0.0, 738 * 86400.0, 738 * 86400.0]
    assert w.jobs["requested_known"].tolist() == [True, False, True]
    assert w.jobs["requested_time"].tolist() == [600.0, 60.0, 600.0]
    assert w.jobs["procs"].tolist() == [4, 1, 4]
    assert w.jobs["requested_procs"].tolist() == [4, 1, 2]
    assert w.skipped["non-positive size"] == 1


def test_a_record_beyond_the_engines_times_is_refused_where_it_is_read():
    day = "6000-03-08"
    error = refused(
        line("1", submit=f"{day}T10:00:00", start=f"{day}T10:01:00", end=f"{day}T10:02:00")
    )
    assert (error.line, error.field) == (2, "Submit")
    assert "beyond the engine's range of times (+-1e+11 s from 1970)" in str(error)


def test_a_carriage_return_inside_a_line_is_named():
    # (the CSV reader would end the line there, and a line-by-line reading too)
    error = refused(line("1"), line("2").replace("|job", "|a\rb"), line("3"))
    assert (error.line, error.field) == (3, None)
    assert "a carriage return inside the line" in str(error)
    w = sacct(line("1"), " \r ", line("2"))  # blank: read past
    assert w.jobs["line"].tolist() == [2, 4]


def test_the_first_wrong_value_is_named_by_line_then_by_field():
    # line 3's id comes before its node count; line 3 before line 4's count of fields
    error = refused(line("1"), line("x", nodes="y"), line("3") + "|extra")
    assert (error.line, error.field) == (3, "JobIDRaw")
    error = refused(line("1"), line("2") + "|extra", line("x"))
    assert (error.line, error.field) == (3, None) and "18 fields, the header has 17" in str(error)


def test_records_centuries_apart_are_refused_naming_the_late_one():
    def in_year(year, raw):
        day = f"{year}-03-08"
        return line(raw, submit=f"{day}T10:00:00", start=f"{day}T10:01:00", end=f"{day}T10:02:00")

    error = refused(in_year("0001", "1"), in_year("5000", "2"))  # 1.57e11 s apart
    assert (error.line, error.field) == (3, "Submit")
    # 0001-03-08 to 5000-03-08: 157,753,180,800 s (datetime's proleptic calendar, as sacct's)
    assert (
        "the job arrives 1.57753e+11 s after the first job: beyond the engine's range of "
        "times (1e+11 s)" in str(error)
    )


EARLY, LATE = "0001-01-01", "3200-01-01"


@pytest.mark.parametrize(
    ("times", "field", "says"),
    [
        # 0001-01-01 to 3200-01-01: 100,950,624,000 s, each time within 1970 +- 1e11 s
        ({"start": f"{LATE}T00:00:00", "end": f"{LATE}T00:01:00"}, "Start", "waits 1.00951e+11 s"),
        ({"start": f"{EARLY}T00:00:00", "end": f"{LATE}T00:00:00"}, "End", "runs 1.00951e+11 s"),
    ],
)  # fmt: skip
def test_a_wait_or_a_run_past_the_engines_times_is_refused_naming_its_field(times, field, says):
    error = refused(line("1", submit="0001-01-01T00:00:00", **times))
    assert (error.line, error.field) == (2, field)
    assert f"the job {says}: beyond the engine's range of times (1e+11 s)" in str(error)


def test_a_wait_of_exactly_the_engines_last_time_is_kept():
    # 0001-01-01T00:00:00 + 1e11 s = 3169-11-16T09:46:40 (datetime + timedelta)
    w = sacct(line("1", submit="0001-01-01T00:00:00", start="3169-11-16T09:46:40",
                   end="3169-11-16T09:47:40"))  # fmt: skip
    assert w.jobs["recorded_wait"].tolist() == [1e11]
    error = refused(line("1", submit="0001-01-01T00:00:00", start="3169-11-16T09:46:41",
                         end="3169-11-16T09:47:40"))  # fmt: skip
    assert error.field == "Start"


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--nodes", "4"], "line 3, field NNodes"),  # a count out of range
        ([], "line 3, field NNodes"),  # the machine's size from the largest job, also
    ],
)
def test_the_command_line_names_the_line_of_a_count_out_of_range(tmp_path, capsys, args, where):
    path = write(tmp_path, line("1"), line("2", nodes="16777217"))
    code, err = cli_error(capsys, "inspect", path, *args)
    assert code == 2 and f"{path}, {where}" in err


def test_a_unicode_digit_in_a_count_is_exit_2(tmp_path, capsys):
    path = write(tmp_path, line("1", nodes="\u00b2"))
    code, err = cli_error(capsys, "simulate", path, "--nodes", 4)
    assert code == 2 and f"{path}, line 2, field NNodes: expected a whole number" in err


# 10, 13, 15. sacct JSON of the wrong types and ranges


def _json_job(job_id, submission=1796219851, start=None, end=None, **fields):
    """A job record of sacct --json (Slurm 22.05's shape), started at submission + 10 s."""
    start = submission + 10 if start is None else start
    record = {
        "job_id": job_id,
        "allocation_nodes": 1,
        "time": {
            "submission": submission,
            "eligible": submission,
            "start": start,
            "end": start + 60 if end is None else end,
            "limit": 10,
        },
        "tres": {"allocated": [{"type": "cpu", "count": 4}, {"type": "node", "count": 1}]},
        "required": {"CPUs": 4},
        "state": {"current": "COMPLETED", "reason": "None"},
        "user": "u1",
        "group": "g1",
        "account": "a1",
        "partition": "batch",
        "qos": "normal",
        "name": "job",
    }
    record.update(fields)
    return record


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"allocation_nodes": 2.7}, "allocation_nodes", "expected a whole number, not 2.7"),
        ({"allocation_nodes": float("nan")}, "allocation_nodes", "expected a finite number"),
        ({"allocation_nodes": float("inf")}, "allocation_nodes", "expected a finite number"),
        ({"allocation_nodes": 16777217}, "allocation_nodes", "from 0 to 16777216"),
        ({"job_id": 1e300}, "job_id", "from 0 to 9223372036854775807"),
        ({"job_id": 2**64}, "job_id", "from 0 to 9223372036854775807"),
        ({"job_id": -1}, "job_id", "from 0 to 9223372036854775807"),
        ({"tres": [1, 2]}, "tres", "expected an object, not [1, 2]"),
        ({"tres": {"allocated": [1]}}, "tres.allocated[0]", "expected an object, not 1"),
        ({"tres": {"allocated": {"cpu": 4}}}, "tres.allocated", "expected a list"),
        (
            {"tres": {"allocated": [{"type": "cpu", "count": "8"}]}},
            "tres.allocated[0].count",
            "expected a number, not '8'",
        ),
        ({"required": "x"}, "required", "expected an object, not 'x'"),
        ({"required": {"CPUs": -1}}, "required.CPUs", "from 0 to 4294967295"),
        ({"time": {"start": 1e300}}, "time.start", "beyond the engine's range of times"),
        ({"time": {"limit": -5}}, "time.limit", "expected a number from 0, not -5"),
        ({"time": {"limit": 1e300}}, "time.limit", "beyond 1e+11 s"),
        ({"user": 5}, "user", "expected a string, not 5"),
        ({"state": {"current": 5}}, "state.current", "expected a string, not 5"),
        ({"state": {"current": [5]}}, "state.current", "expected words, not [5]"),
    ],
)
def test_sacct_json_of_the_wrong_type_or_range_names_the_field(fields, field, says):
    record = _json_job(1)
    for key, value in fields.items():
        if key == "time" and isinstance(value, dict):
            record["time"] = {**record["time"], **value}
        else:
            record[key] = value
    with pytest.raises(InputError) as caught:
        parse_sacct_json({"jobs": [_json_job(2), record]}, "rec.json")
    assert (caught.value.path, caught.value.field) == ("rec.json", f"jobs[1].{field}")
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"allocation_nodes": "2"}, "allocation_nodes", "expected a number, not '2'"),
        ({"allocation_nodes": True}, "allocation_nodes", "expected a number, not True"),
        ({"time": []}, "time", "no 'time' object"),
        ({"time": {**_json_job(1)["time"], "start": "x"}}, "time.start", "a number, not 'x'"),
    ],
)
def test_sacct_json_refused_before_the_rework_still_is(fields, field, says):
    with pytest.raises(InputError) as caught:
        parse_sacct_json({"jobs": [_json_job(1, **fields)]}, "rec.json")
    assert (caught.value.field, says in str(caught.value)) == (f"jobs[0].{field}", True)


def test_sacct_json_cpus_are_those_asked_for_when_none_are_allocated():
    w = parse_sacct_json({"jobs": [_json_job(1, tres=None, required={"CPUs": 3})]}, "rec.json")
    assert (w.jobs["procs"].tolist(), w.jobs["requested_procs"].tolist()) == ([3], [3])


def test_newer_releases_numbers_and_state_lists_are_read():
    record = _json_job(
        3,
        allocation_nodes={"set": True, "infinite": False, "number": 2},
        state={"current": ["COMPLETED"], "reason": "None"},
    )
    record["time"]["limit"] = {"set": False, "infinite": False, "number": 0}
    w = parse_sacct_json({"jobs": [record]}, "rec.json")
    assert w.jobs["nodes"].tolist() == [2] and w.jobs["state"].tolist() == ["COMPLETED"]
    assert w.jobs["requested_known"].tolist() == [False]


def _sacct_json_file(tmp_path, text):
    path = tmp_path / "rec.json"
    path.write_text('{"meta": {"plugin": {"type": "openapi/dbv0.0.38"}}, "jobs": ' + text + "}")
    return path


def test_sacct_json_of_the_wrong_type_is_exit_2(tmp_path, capsys):
    path = _sacct_json_file(tmp_path, json.dumps([_json_job(1, allocation_nodes=2.7)]))
    code, err = cli_error(capsys, "inspect", path)
    assert code == 2 and f"{path}, field jobs[0].allocation_nodes: expected a whole number" in err
    # JSON's NaN and Infinity, which Python's reader takes
    path = _sacct_json_file(
        tmp_path, json.dumps([_json_job(1)]).replace('"job_id": 1', '"job_id": Infinity')
    )
    code, err = cli_error(capsys, "inspect", path)
    assert code == 2 and "field jobs[0].job_id: expected a finite number" in err


def test_sacct_json_nested_too_deep_is_exit_2(tmp_path, capsys):
    path = _sacct_json_file(tmp_path, "[" * 200_000 + "]" * 200_000)
    code, err = cli_error(capsys, "inspect", path)
    assert code == 2 and f"{path}: JSON nested too deep to read" in err


# 16. Messages: the line of a byte that is not UTF-8, in every reader of text


def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path, capsys):
    path = tmp_path / "rec.sacct"
    path.write_bytes((HEADER + "\n" + line("1") + "\n" + line("2")[:-3]).encode() + b"\xff\xfe\n")
    code, err = cli_error(capsys, "inspect", path)
    assert code == 2 and f"{path}, line 3: not UTF-8 text (byte 132 of the line: b'\\xff')" in err
    # a segment boundary is no line of its own: the line counts run on
    far = tmp_path / "far.sacct"
    rows = [line(str(k)) for k in range(1, 120_001)]
    far.write_bytes(("\n".join([HEADER, *rows]) + "\n").encode() + b"\xff\n")
    with pytest.raises(InputError) as caught:
        load_workload(far)
    assert caught.value.line == 120_002


def test_a_character_across_a_step_of_the_check_is_counted_once():
    from hpcsched._io import check_utf8

    step = 1 << 22  # the check decodes 4 MiB at a time: "é" straddles the first step's end
    data = b"a" * (step - 1) + "\u00e9".encode() + b"\xff"
    with pytest.raises(InputError) as caught:
        check_utf8(data, "t.txt")
    assert str(caught.value).endswith(f"(byte {step + 2} of the line: b'\\xff')")


def test_other_readers_of_text_name_the_line_too(tmp_path):
    calendar = tmp_path / "down.txt"
    calendar.write_bytes(b"# start end kind\n0 10 maintenance caf\xe9\n")
    with pytest.raises(InputError) as caught:
        read_calendar(calendar)
    assert (caught.value.line, str(caught.value).endswith("(byte 21 of the line: b'\\xe9')")) == (
        2, True
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "data", "line", "byte"),
    [
        ("p.toml", b'name = "p"\nnodes = 4 # caf\xe9\n', 2, 16),
        ("w.json", b'{"nb_res": 4,\n "jobs": ["\xe9"]}', 2, 12),
        ("bom.json", b'\xef\xbb\xbf{"nb_res": 4,\n "jobs": ["\xe9"]}', 2, 12),
    ],
)
def test_platforms_and_batsim_workloads_name_the_line_of_a_byte_that_is_not_utf8(
    tmp_path, name, data, line, byte
):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        if name.endswith(".toml"):
            load_platform(path)
        else:
            load_workload(path)
    assert caught.value.line == line
    assert str(caught.value).endswith(f"(byte {byte} of the line: b'\\xe9')")


# 6. A large file in bounded memory


def _large_sacct(path, copies):
    """A sacct file of ``copies`` times 15,000 jobs (one line of steps for every third), about
    3 MB each."""
    rows = [
        line(str(k), job=f"{k - k % 7}_{k % 7}", submit=f"2026-03-0{1 + k % 7}T10:{k % 60:02d}:00")
        for k in range(1, 15_001)
    ]
    steps = [
        f"{k}.batch|{k}.batch|2026-03-01T10:00:00|2026-03-01T10:00:00|2026-03-01T10:00:00|"
        "2026-03-01T10:01:00||1|4|4|||a1||||batch"
        for k in range(1, 15_001, 3)
    ]
    block = "\n".join(rows + steps) + "\n"
    with path.open("w") as out:
        out.write(HEADER + "\n")
        for copy in range(copies):
            out.write(block.replace("|u1|", f"|u{copy}|"))
    return path.stat().st_size


def _memory_to_read(path):
    """Bytes a fresh process's peak memory grows by while it reads ``path`` (after its
    imports), and the jobs read."""
    script = textwrap.dedent(
        f"""
        import pandas, pyarrow.csv, pyarrow.compute
        from hpcsched.workload import load_workload
        def kib(key):
            return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(key))
        before = kib("VmRSS:")
        w = load_workload({str(path)!r}, nodes=4)
        print(len(w), (kib("VmHWM:") - before) * 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    jobs, grown = (int(x) for x in out.stdout.split())
    return grown, jobs


@pytest.mark.slow
@pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="peak memory from Linux's /proc"
)
def test_memory_grows_by_less_than_three_times_the_file(tmp_path):
    """Memory grows with the file by less than 3 bytes a byte (it was 10: a dict and a dozen
    Python objects per line). Two sizes, so that what any read costs (libraries' pools, a
    segment of text) is left out."""
    small = _large_sacct(tmp_path / "small.sacct", 1)
    large = _large_sacct(tmp_path / "large.sacct", 13)
    small_grown, small_jobs = _memory_to_read(tmp_path / "small.sacct")
    large_grown, large_jobs = _memory_to_read(tmp_path / "large.sacct")
    assert (small_jobs, large_jobs) == (15_000, 13 * 15_000)
    per_byte = (large_grown - small_grown) / (large - small)
    assert per_byte < 3, f"{per_byte:.2f} bytes of memory per byte of file"


# The fuzz: whatever the records, exit 0 or 2 with a short message naming the file, in bounded
# time and memory (tests/workload/test_reader_fuzz.py's bounds)

_FIELDS = HEADER.split("|")
_WORDS = st.text(st.characters(exclude_characters="|\r\n", exclude_categories=["Cs"]), max_size=6)
_HOSTILE = {
    "time": st.sampled_from(["Unknown", "None", "", "9999-12-31T23:59:59", "2026-02-30T00:00:00"]),
    "count": st.sampled_from(["", "0", "\u00b2", "99999999", "4294967296"]),
    "id": st.sampled_from(["5_1", "5+1", "5_[1-3]", "5.batch", "5_1.extern", "x", "9" * 25]),
}


def _kind(name: str) -> str | None:
    if name.startswith("JobID"):
        return "id"
    if name in ("NNodes", "NCPUS", "ReqCPUS"):
        return "count"
    return "time" if name in ("Submit", "Eligible", "Start", "End") else None


@st.composite
def sacct_texts(draw) -> bytes:
    header = draw(st.permutations(_FIELDS))
    if draw(st.integers(0, 7)) == 0:
        header = header[: draw(st.integers(1, len(header)))]
    lines = ["|".join(header)]
    for k in range(draw(st.integers(0, 10))):
        # a valid record (times in order, ids 1, 2, ...), sometimes a field made hostile
        minutes = sorted(draw(st.lists(st.integers(0, 59), min_size=4, max_size=4)))
        times = [f"2026-03-08T10:{m:02d}:00" for m in minutes]
        valid = [str(k + 1), str(k + 1), *times, "00:30:00", "1", "4", "4"]
        fields = [dict(zip(_FIELDS, valid, strict=False)).get(h) or draw(_WORDS) for h in header]
        if draw(st.integers(0, 3)) == 0:
            i = draw(st.integers(0, len(fields) - 1))
            kind = _kind(header[i])
            fields[i] = draw(st.one_of(tokens, _HOSTILE[kind]) if kind else tokens)
        if draw(st.integers(0, 15)) == 0:
            fields = [*fields, "x"][: draw(st.integers(0, len(fields) + 1))]
        lines.append("|".join(fields))
    ending = draw(st.sampled_from(["\n", "\r\n", "\n\n"]))
    text = ending.join(lines).encode("utf-8", "surrogatepass")
    mutation = draw(st.integers(0, 9))
    if mutation == 0:
        text = b"\xef\xbb\xbf" + text
    elif mutation == 1:
        text += draw(st.binary(max_size=100))
    elif mutation == 2:
        text = text[: draw(st.integers(0, len(text)))]
    return text


@st.composite
def sacct_json_texts(draw) -> bytes:
    jobs = []
    for k in range(draw(st.integers(0, 6))):
        record = _json_job(k + 1, submission=1796219851 + 10 * k)
        for _ in range(draw(st.integers(0, 3))):
            where = record
            path = draw(st.sampled_from(
                ["job_id", "allocation_nodes", "time", "time.start", "time.end", "time.limit",
                 "tres", "tres.allocated", "required", "required.CPUs", "state", "user", "name"]
            ))  # fmt: skip
            *parents, last = path.split(".")
            for key in parents:
                where = where[key] if isinstance(where.get(key), dict) else where
            where[last] = draw(json_values)
        jobs.append(record)
    meta = {"plugin": {"type": "openapi/dbv0.0.38"}}
    text = json.dumps({"meta": meta, "jobs": jobs}, allow_nan=True).encode()
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


@SETTINGS
@given(text=st.one_of(sacct_texts(), sacct_json_texts()), compress=st.booleans())
def test_sacct_reader_fuzz(tmp_path_factory, capsys, text, compress):
    name = "t.json" if text.lstrip(b"\xef\xbb\xbf").startswith(b"{") else "t.sacct"
    path = tmp_path_factory.mktemp("sacct") / (name + ".gz" if compress else name)
    path.write_bytes(gzip.compress(text) if compress else text)
    outcome = read_bounded(path, len(text))
    if isinstance(outcome, InputError):
        assert outcome.path == str(path)
    code = main(["inspect", str(path)])
    err = capsys.readouterr().err
    assert code in (0, 2) and "Traceback" not in err, err
    if code == 2:
        assert str(path) in err and len(err.strip().splitlines()) == 1, err
    check_replay(outcome)


# The machine, its skips and the warnings of the reworked reader, each by hand (mutants of
# build_workload survived the tests above)


def test_a_given_machine_sizes_the_record_and_skips_the_wider_jobs_by_line():
    # 4-node machine: job 2 ran on 5 nodes (skipped, or with strict an error at its line 3)
    rows = [line("1", nodes="4"), line("2", nodes="5"), line("3", nodes="1")]
    w = sacct(*rows, nodes=4)
    assert (w.nodes, w.format, w.source) == (4, "sacct", "rec.sacct")
    assert w.jobs["job_id"].tolist() == [1, 3]
    assert w.skipped == {
        "never started": 0, "running when recorded": 0, "non-positive size": 0,
        "larger than machine": 1,
    }  # fmt: skip
    error = refused(*rows, nodes=4, strict=True)
    assert (error.path, error.line, error.field) == ("rec.sacct", 3, "NNodes")
    assert "job 2 ran on 5 nodes, more than the machine's 4" in str(error)
    assert "(drop --strict to skip such jobs)" in str(error)
    # without a size, the machine is its largest job's (5 nodes), and nothing is skipped
    w = sacct(*rows)
    assert (w.nodes, w.skipped["larger than machine"]) == (5, 0)
    assert sacct(*rows, strict=True).nodes == 5


def test_unlimited_limits_and_one_step_line_are_said_in_the_singular():
    w = sacct(
        line("1", limit="UNLIMITED"),
        line("2", limit="Partition_Limit"),
        line("3", limit="00:10:00"),
        "3.batch|3.batch|2026-03-08T10:00:00|2026-03-08T10:00:00|2026-03-08T10:01:00|"
        "2026-03-08T10:02:00||1|4|4|||a1||||batch",
    )
    assert w.jobs["requested_known"].tolist() == [False, False, True]
    assert w.jobs["requested_time"].tolist() == [60.0, 60.0, 600.0]  # (their run times)
    assert "2 jobs have no requested time; their estimate is their run time" in w.warnings
    assert "1 line of job steps read past (a job is its allocation line)" in w.warnings
    # every limit known: nothing to say
    assert not any("requested time" in text for text in sacct(line("1")).warnings)


def test_records_centuries_apart_name_eligible_when_the_job_arrived_by_it():
    """The late job became eligible (not submitted) 1.57e11 s after the first arrived: the
    field named is the one its arrival came from."""
    error = refused(
        line("1", submit="0001-03-08T10:00:00", start="0001-03-08T10:01:00",
             end="0001-03-08T10:02:00"),
        line("2", submit="0001-03-08T10:00:00", eligible="5000-03-08T10:00:00",
             start="5000-03-08T10:01:00", end="5000-03-08T10:02:00"),
    )  # fmt: skip
    assert (error.line, error.field) == (3, "Eligible")


def test_a_run_past_the_engines_times_is_refused_at_its_end():
    # started in year 1, ended in year 5000: it runs 1.58e11 s, past the engine's 1e11
    error = refused(line("1", submit="0001-03-08T10:00:00", start="0001-03-08T10:01:00",
                         end="5000-03-08T10:02:00"))  # fmt: skip
    assert (error.line, error.field) == (2, "End")
    assert "runs 1.57" in str(error)


def test_several_early_starts_are_said_in_the_plural():
    w = sacct(
        line("1", submit="2026-03-08T10:00:00", start="2026-03-08T09:59:50"),
        line("2", submit="2026-03-08T10:00:00", start="2026-03-08T09:59:00"),
    )
    (said,) = [text for text in w.warnings if "before submission" in text]
    assert said.startswith("2 jobs start before submission or eligibility")
    assert "their recorded starts are left unknown (the first: job 1, line 2)" in said


def test_three_jobs_of_one_id_name_the_first_two_lines():
    w = sacct(line("7"), line("5"), line("7"), line("7"))
    assert (
        "3 kept jobs share their job id with another job (e.g. job 7: line 2 and line 4); "
        "they are replayed as distinct jobs"
    ) in w.warnings


def test_a_limit_of_one_second_is_a_requested_time():
    w = sacct(line("1", limit="00:00:01", start="2026-03-08T10:01:00", end="2026-03-08T10:01:01"))
    assert (w.jobs["requested_known"].tolist(), w.jobs["requested_time"].tolist()) == (
        [True],
        [1.0],
    )


def test_users_without_a_name_partitions_left_empty_and_other_states():
    fields = line("1").split("|")
    no_user = "|".join([*fields[:10], "", *fields[11:13], "", *fields[14:15], "REQUEUED", "j"])
    w = sacct(line("2"), no_user, line("3"))
    by_id = w.jobs.set_index("job_id")
    assert by_id["user"].to_dict() == {1: -1, 2: 0, 3: 0}  # numbered in order, none: -1
    partitions = by_id["partition_name"].sort_index()
    assert partitions.isna().tolist() == [True, False, False]  # none recorded: missing
    assert partitions.dropna().tolist() == ["batch", "batch"]
    assert by_id["status"].to_dict() == {1: -1, 2: 1, 3: 1}  # REQUEUED: no SWF status


def test_a_record_of_no_job_is_an_empty_workload():
    w = sacct()
    assert (len(w.jobs), w.nodes) == (0, 1)
    assert list(w.jobs["job_id"]) == []


def test_a_recorded_job_keeps_at_least_the_nodes_it_ran_on(tmp_path):
    """Job 1 ran on 4 nodes with 4 CPUs in all (one a node): on a site of 4-CPU nodes its CPUs
    alone would fit on one node, but Slurm gave it 4 (NNodes), and so does the replay; job 2,
    4 CPUs on 1 node, takes 1."""
    record = write(tmp_path, line("1", nodes="4", cpus="4"), line("2", nodes="1", cpus="4"))
    site = tmp_path / "site.conf"
    site.write_text("NodeName=n[1-8] CPUs=4\nPartitionName=batch Nodes=ALL Default=YES\n")
    out = tmp_path / "run"
    assert main(["simulate", str(record), "--platform", str(site), "--out", str(out)]) == 0
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert jobs.set_index("job_id")["nodes"].to_dict() == {1: 4, 2: 1}
