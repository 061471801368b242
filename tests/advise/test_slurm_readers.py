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
    job_state,
    parse_reservations,
    parse_sinfo,
    parse_sprio,
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


def test_reservation_on_nodes_of_several_bracket_groups():
    text = (
        "ReservationName=maint StartTime=2030-01-01T00:00:00 EndTime=2030-01-01T08:00:00 "
        "Duration=08:00:00 Nodes=rack[1-2]-n[1-2] NodeCnt=4 Flags=MAINT\n"
    )
    (reservation,) = parse_reservations(text)
    assert reservation.nodes == ("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2")


def test_a_malformed_hostlist_is_an_input_error():
    text = (
        "ReservationName=x StartTime=2030-01-01T00:00:00 EndTime=2030-01-01T01:00:00 Nodes=n[1-\n"
    )
    with pytest.raises(InputError, match="bad hostlist"):
        parse_reservations(text)


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
    # several bracket groups multiply (the hand-written expander gave two names here)
    assert expand_hostlist("rack[1-2]-n[1-2]") == ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]
    assert expand_hostlist("r[1,3]n[01-02],login") == ["r1n01", "r1n02", "r3n01", "r3n02", "login"]
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
    bad.write_text('{"jobs": [{"job_id": "x", "job_state": "PENDING"}]}')
    with pytest.raises(InputError) as error:
        SlurmSnapshot(bad, FIXTURES / "sinfo-idle.json").read()
    assert error.value.path == str(bad) and error.value.field == "jobs[0].job_id"
    bad.write_text("not json")
    with pytest.raises(InputError, match="not JSON"):
        SlurmSnapshot(FIXTURES / "squeue-empty.json", bad).read()


def test_list_valued_job_states_read_as_the_one_word_form():
    # newer Slurm: "job_state": ["PENDING"], flags next to the base state
    document = load("squeue-mixed.json")
    words = parse_squeue(document)
    for record in document["jobs"]:
        record["job_state"] = [record["job_state"]]
    lists = parse_squeue(document)
    assert [j.state for j in lists] == [j.state for j in words]
    assert sum(j.pending for j in lists) == sum(j.pending for j in words) >= 5
    assert job_state(["PENDING", "REQUEUED"]) == "PENDING"
    assert job_state(["RUNNING", "COMPLETING"]) == "COMPLETING"
    assert job_state(["CONFIGURING", "RUNNING"]) == "RUNNING"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"current": ["PENDING"]}, "expected a state name or a list of them"),
        ([], "expected a state name or a list of them"),
        (None, "expected a state name or a list of them"),
        (["PENDING", 3], "expected a state name or a list of them"),
        ("WAITING", "unknown job state 'WAITING'"),
        (["PENDING", "RUNNING"], "expected one base state"),
    ],
)
def test_unknown_job_state_shapes_are_errors_not_an_empty_queue(tmp_path, value, message):
    document = load("squeue-mixed.json")
    document["jobs"][3]["job_state"] = value
    path = tmp_path / "squeue.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=message) as error:
        SlurmSnapshot(path, FIXTURES / "sinfo-mixed.json").read()
    assert error.value.path == str(path) and error.value.field == "jobs[3].job_state"


@pytest.mark.parametrize(
    ("key", "value"),
    [("priority", [1000]), ("partition", {"name": "debug"}), ("name", ["x"]), ("nice", "-5")],
)
def test_other_unknown_job_shapes_name_their_field(key, value):
    document = load("squeue-mixed.json")
    document["jobs"][0][key] = value
    with pytest.raises(InputError) as error:
        parse_squeue(document)
    assert error.value.path == "squeue --json" and error.value.field == f"jobs[0].{key}"


def test_unknown_node_shapes_name_their_field():
    document = load("sinfo-mixed.json")
    document["nodes"][1]["state"] = {"flags": ["IDLE"]}
    with pytest.raises(InputError) as error:
        parse_sinfo(document)
    assert error.value.path == "sinfo --json" and error.value.field == "nodes[1].state"
    document = load("sinfo-mixed.json")
    document["nodes"][0]["state"] = ["IDLE", "DRAIN"]  # newer Slurm: a list
    assert parse_sinfo(document)[0].states == ("idle", "drain")


def test_sprio_tells_pinned_priorities():
    # recorded from the test cluster (22.05.8, multifactor): job 3 pinned by `scontrol update
    # Priority=5000`, job 12 with nice 100, a multi-partition job 5 listed once per partition
    text = (
        "2|1156|0|0|0|0|156|1000|0|0||debug\n"
        "3|5000|0|0|0|0|0|0|0|0||debug\n"
        "12|1212|0|0|0|0|312|1000|0|100||debug\n"
        "5|1500|0|0|0|0|500|1000|0|0|cpu=3|debug\n"
        "5|1497|0|0|0|0|500|1000|0|0||batch\n"
    )
    # the last column is the partition in the recording: the advisor asks for 11 columns
    lines = [line.rsplit("|", 1)[0] for line in text.splitlines()]
    assert parse_sprio("\n".join(lines)) == {2: False, 3: True, 12: False, 5: False}
