"""Slurm's JSON and reservation text, read from real snapshots (Slurm 22.05.8, see
fixtures/README.md): arrays, null limits, wrapped negative nice, drained and down nodes."""

from __future__ import annotations

import calendar
import json
from pathlib import Path

import pytest

from hpcsched.advise.slurm import (
    SlurmSnapshot,
    count_array_tasks,
    decode_nice,
    expand_hostlist,
    parse_reservations,
    parse_sinfo,
    parse_squeue,
)
from hpcsched.exceptions import InputError

FIXTURES = Path(__file__).parent / "fixtures"


def load(name):
    return json.loads((FIXTURES / name).read_text())


def test_squeue_jobs_with_every_quirk():
    jobs = {j.job_id: j for j in parse_squeue(load("squeue-mixed.json"))}
    assert len(jobs) == 12
    running = jobs[2]
    assert (running.state, running.nodes, running.time_limit) == ("RUNNING", 2, 1800.0)
    assert running.start == 1796030849 and running.running and not running.pending
    assert jobs[3].time_limit is None  # INFINITE limit arrives as null
    assert jobs[11].pending and jobs[11].time_limit is None and jobs[11].start is None
    assert jobs[5].nice == -5  # stored as 4294967291
    assert jobs[6].nice == 10 and jobs[4].nice == 0  # null is 0
    array = jobs[7]
    assert (array.tasks, array.array, array.nodes) == (4, "7_[0-3]", 1)
    assert jobs[8].partitions == ("batch",)
    assert jobs[9].held and jobs[9].priority == 0
    assert not jobs[4].held and jobs[4].reason == "Resources"
    assert jobs[10].name == "my analysis run"
    # finished jobs stay listed until MinJobAge: neither pending nor running
    assert {jobs[1].state, jobs[12].state} == {"COMPLETED", "CANCELLED"}
    assert not (jobs[1].pending or jobs[1].running)


def test_sinfo_nodes_states_and_partitions():
    nodes = {n.name: n for n in parse_sinfo(load("sinfo-mixed.json"))}
    assert nodes["c1"].allocated and not nodes["c1"].unavailable
    assert nodes["c2"].allocated  # mixed
    assert nodes["c3"].states == ("down", "not_responding") and nodes["c3"].unavailable
    assert nodes["c4"].states == ("idle", "drain") and nodes["c4"].unavailable
    assert nodes["c4"].partitions == ("debug", "batch")
    idle = parse_sinfo(load("sinfo-idle.json"))
    assert len(idle) == 4 and not any(n.unavailable for n in idle)


def test_reservations_in_both_forms():
    blocks = parse_reservations((FIXTURES / "scontrol-reservation.txt").read_text())
    lines = parse_reservations((FIXTURES / "scontrol-reservation-oneline.txt").read_text())
    assert blocks == lines
    maint, partial = blocks
    assert maint.name == "maint" and maint.maintenance
    assert maint.nodes == ("c1", "c2", "c3", "c4")
    assert maint.start == calendar.timegm((2026, 11, 30, 10, 28, 42))
    assert maint.end - maint.start == 7200
    assert partial.nodes == ("c1", "c2") and "IGNORE_JOBS" in partial.flags
    assert parse_reservations((FIXTURES / "scontrol-reservation-none.txt").read_text()) == []


@pytest.mark.parametrize(
    ("spec", "count"),
    [("0-3", 4), ("1,3,5-7", 5), ("0-9:2", 5), ("0-15%4", 16), ("7", 1)],
)
def test_array_task_expressions(spec, count):
    assert count_array_tasks(spec) == count


def test_hostlists_and_nice():
    assert expand_hostlist("c[1-3,5],d7") == ["c1", "c2", "c3", "c5", "d7"]
    assert expand_hostlist("n[08-10]") == ["n08", "n09", "n10"]
    assert expand_hostlist("(null)") == []
    assert decode_nice(None) == 0 and decode_nice(4294967291) == -5 and decode_nice(19) == 19
    # newer Slurm wraps numbers in objects
    assert decode_nice({"set": True, "infinite": False, "number": 3}) == 3


def test_snapshot_state_and_mistakes(tmp_path):
    state = SlurmSnapshot(
        FIXTURES / "squeue-mixed.json",
        FIXTURES / "sinfo-mixed.json",
        FIXTURES / "scontrol-reservation.txt",
    ).read()
    assert state.manager == "Slurm 22.05.8"
    assert state.now == max(j.submit for j in state.jobs)  # the latest the files mention
    assert len(state.reservations) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"jobs": [{"job_id": "x"}]}')
    with pytest.raises(InputError) as error:
        SlurmSnapshot(bad, FIXTURES / "sinfo-idle.json").read()
    assert error.value.path == str(bad) and error.value.field == "jobs[0]"
    bad.write_text("not json")
    with pytest.raises(InputError, match="not JSON"):
        SlurmSnapshot(FIXTURES / "squeue-empty.json", bad).read()
