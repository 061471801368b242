"""Slurm's partitions, read from real ``scontrol show partition`` output (both forms, a drained
partition), running jobs' nodes from real ``squeue --json`` (jobs in two overlapping partitions),
and the live test cluster's partitions (Slurm 22.05.8, config 2 of fixtures/README.md)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from hpcsched.advise.slurm import (
    SlurmCluster,
    SlurmSnapshot,
    parse_partitions,
    parse_sinfo,
    parse_squeue,
)
from hpcsched.advise.state import Partition
from hpcsched.exceptions import InputError
from hpcsched.site.slurm.text import BeyondTimes, slurm_duration

FIXTURES = Path(__file__).parent / "fixtures"

#: What scripts/slurm-cluster.sh configures, as scontrol printed it (fixtures/README.md).
DEBUG = Partition(
    name="debug",
    nodes=("c1", "c2", "c3", "c4"),
    tier=1,
    max_time=None,
    max_nodes=None,
    min_nodes=1,
    default=True,
    state="up",
)
BATCH = Partition(
    name="batch",
    nodes=("c3", "c4"),
    tier=2,
    max_time=3600.0,
    max_nodes=2,
    min_nodes=1,
    default=False,
    state="up",
)
#: The one-line form of a partition for hand-made inputs: the real line of ``batch``.
BATCH_LINE = (FIXTURES / "scontrol-partition-oneline.txt").read_text().splitlines()[1]


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_partitions_in_block_form():
    assert parse_partitions(read("scontrol-partition.txt")) == [DEBUG, BATCH]


def test_both_forms_agree():
    assert parse_partitions(read("scontrol-partition-oneline.txt")) == parse_partitions(
        read("scontrol-partition.txt")
    )


def test_a_drained_partition():
    debug, batch = parse_partitions(read("scontrol-partition-drain-oneline.txt"))
    assert debug == DEBUG
    assert batch.state == "drain"
    assert batch == replace(BATCH, state="drain")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("UNLIMITED", None),
        ("INFINITE", None),
        ("0", 0.0),
        ("00:00:00", 0.0),  # what scontrol prints for MaxTime=0
        ("60", 3600.0),  # MM
        ("45:30", 2730.0),  # MM:SS: 45 * 60 + 30
        ("01:00:00", 3600.0),  # HH:MM:SS, what scontrol prints for MaxTime=60
        ("12:34:56", 45296.0),  # 12 * 3600 + 34 * 60 + 56
        ("2-12", 216000.0),  # D-HH: 2 * 86400 + 12 * 3600
        ("1-12:30", 131400.0),  # D-HH:MM: 86400 + 12 * 3600 + 30 * 60
        ("1-12:30:15", 131415.0),  # D-HH:MM:SS
        ("2-00:00:00", 172800.0),  # what scontrol prints for MaxTime=2-0
    ],
)
def test_every_duration_form(text, seconds):
    assert slurm_duration(text) == seconds
    (batch,) = parse_partitions(BATCH_LINE.replace("MaxTime=01:00:00", f"MaxTime={text}"))
    assert batch.max_time == seconds


@pytest.mark.parametrize("text", ["", "abc", "1:2:3:4", "-5", "1-", "1-2:3:4:5", "1h", "1.5"])
def test_not_a_duration(text):
    with pytest.raises(ValueError, match="not a Slurm duration"):
        slurm_duration(text)


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("PartitionName=batch ", "", "PartitionName"),  # the line no longer starts a record
        ("PartitionName=batch ", "PartitionName= ", "PartitionName"),
        ("MaxTime=01:00:00", "MaxTime=soon", "MaxTime"),
        ("MaxTime=01:00:00", "MaxTime=1:00:00:00", "MaxTime"),
        ("Nodes=c[3-4]", "Nodes=c[3-", "Nodes"),
        ("PriorityTier=2", "PriorityTier=high", "PriorityTier"),
        ("PriorityTier=2", "PriorityTier=-1", "PriorityTier"),
        ("MaxNodes=2", "MaxNodes=INFINITE", "MaxNodes"),
        ("MinNodes=0", "MinNodes=", "MinNodes"),
        ("Default=NO", "Default=maybe", "Default"),
        ("State=UP", "State=OPEN", "State"),
        ("State=UP", "State=up", "State"),
        (" State=UP", "", "State"),  # missing
        (" Nodes=c[3-4]", "", "Nodes"),  # missing
    ],
)
def test_malformed_partitions_name_the_field(old, new, field):
    assert BATCH_LINE.count(old) == 1
    debug_line = read("scontrol-partition-oneline.txt").splitlines()[0]
    text = f"{debug_line}\n{BATCH_LINE.replace(old, new)}\n"
    with pytest.raises(InputError) as error:
        parse_partitions(text, "saved.txt")
    assert error.value.path == "saved.txt" and error.value.field == field
    assert error.value.line == 2  # batch's line
    assert str(error.value).startswith(f"saved.txt, line 2, field {field}: ")


def test_block_form_mistakes_name_the_line_and_field():
    text = read("scontrol-partition.txt")
    with pytest.raises(InputError) as error:  # batch's block without its first line
        parse_partitions(text.replace("PartitionName=batch\n", ""))
    assert (error.value.path, error.value.line) == ("scontrol show partition", 14)
    assert error.value.field == "PartitionName"
    with pytest.raises(InputError) as error:
        parse_partitions(text.replace("MaxTime=01:00:00", "MaxTime=x"))
    assert (error.value.line, error.value.field) == (14, "MaxTime")
    assert "partition 'batch'" in str(error.value)


def test_no_partitions_nodes_and_minimums():
    assert parse_partitions("No partitions in the system\n") == []
    assert parse_partitions("") == []
    (batch,) = parse_partitions(BATCH_LINE.replace("Nodes=c[3-4]", "Nodes=(null)"))
    assert batch.nodes == ()
    (batch,) = parse_partitions(BATCH_LINE.replace("MinNodes=0", "MinNodes=3"))
    assert batch.min_nodes == 3
    (batch,) = parse_partitions(BATCH_LINE.replace("Nodes=c[3-4]", "Nodes=r[1-2]n[1-2]"))
    assert batch.nodes == ("r1n1", "r1n2", "r2n1", "r2n2")  # Slurm's order, groups multiply
    for state in ("DOWN", "INACTIVE"):
        (batch,) = parse_partitions(BATCH_LINE.replace("State=UP", f"State={state}"))
        assert batch.state == state.lower()


def test_running_jobs_hold_named_nodes():
    jobs = {j.job_id: j for j in parse_squeue(json.loads(read("squeue-partitions.json")))}
    assert len(jobs) == 7
    assert (jobs[1].partitions, jobs[1].state, jobs[1].node_names) == (
        ("batch",),
        "RUNNING",
        ("c3",),
    )
    assert (jobs[2].partitions, jobs[2].node_names) == (("debug",), ("c1", "c2"))
    assert all(jobs[i].pending and jobs[i].node_names == () for i in (3, 4, 5, 6, 7))
    # submitted with -p debug,batch: one record, its partition "debug,batch"
    assert jobs[5].partitions == ("debug", "batch") and jobs[5].reason == "Priority"
    # over batch's limits: accepted, pending for ever
    assert (jobs[6].nodes, jobs[6].reason) == (3, "PartitionNodeLimit")
    assert (jobs[7].time_limit, jobs[7].reason) == (5400.0, "PartitionTimeLimit")
    nodes = {n.name: n for n in parse_sinfo(json.loads(read("sinfo-partitions.json")))}
    assert nodes["c4"].states == ("idle", "planned") and not nodes["c4"].unavailable
    assert nodes["c3"].partitions == ("debug", "batch") and nodes["c3"].allocated


def test_a_bad_hostlist_of_a_running_job_names_the_field():
    document = json.loads(read("squeue-partitions.json"))
    document["jobs"][1]["nodes"] = "c[1-"
    with pytest.raises(InputError, match="bad hostlist") as error:
        parse_squeue(document)
    assert error.value.field == "jobs[1].nodes"
    document["jobs"][1]["nodes"] = ["c1", "c2"]
    with pytest.raises(InputError) as error:
        parse_squeue(document)
    assert error.value.field == "jobs[1].nodes"


def test_snapshot_reads_partitions_of_either_form(tmp_path):
    files = (FIXTURES / "squeue-partitions.json", FIXTURES / "sinfo-partitions.json")
    assert SlurmSnapshot(*files).read().partitions == []  # not known
    for name in ("scontrol-partition.txt", "scontrol-partition-oneline.txt"):
        state = SlurmSnapshot(*files, partitions=FIXTURES / name).read()
        assert state.partitions == [DEBUG, BATCH]
        assert state.now == 1796216596  # the latest submission
    missing = tmp_path / "none.txt"
    with pytest.raises(InputError, match="cannot read file") as error:
        SlurmSnapshot(*files, partitions=missing).read()
    assert error.value.path == str(missing)
    bad = tmp_path / "bad.txt"
    bad.write_text(BATCH_LINE.replace("PriorityTier=2", "PriorityTier=x"))
    with pytest.raises(InputError) as error:
        SlurmSnapshot(*files, partitions=bad).read()
    assert (error.value.path, error.value.field) == (str(bad), "PriorityTier")


def test_the_live_cluster_reads_its_partitions_and_running_nodes(slurm):
    job = slurm.submit("one-node", 1, 5, 60, "-p", "batch")
    deadline = time.monotonic() + 20
    while slurm.jobs()[job]["job_state"] != "RUNNING":
        assert time.monotonic() < deadline, "the batch job did not start"
        time.sleep(0.2)
    state = SlurmCluster().read()
    assert state.partitions == [DEBUG, BATCH]
    (running,) = [j for j in state.jobs if j.job_id == job]
    assert len(running.node_names) == 1 and running.node_names[0] in BATCH.nodes


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("00:00:100000000000", 1e11),  # twelve digits, exactly the engine's last time
        ("1666666666:40", 1e11),  # MM:SS adding up to it: 1,666,666,666 * 60 + 40
    ],
)
def test_a_duration_of_exactly_the_engines_last_time_is_read(text, seconds):
    """At the edge, not past it: 1e11 s is the last time the engine holds (_core.MAX_TIME)."""
    assert slurm_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        "00:00:100000000001",  # twelve digits, one second past
        "1666666666:41",  # adds up to one second past
    ],
)
def test_a_duration_one_second_or_one_digit_past_the_engines_times_is_refused(text):
    with pytest.raises(BeyondTimes, match=f"^'{text}' is past the engine's times"):
        slurm_duration(text)
