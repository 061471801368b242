"""The advisor on a cluster with partitions: each partition planned on its own nodes, tiers
first, priorities within a tier, jobs over a partition's limits left alone, running jobs of
other partitions on shared nodes counted. On real Slurm 22.05 output of the test cluster
(debug = c[1-4], tier 1; batch = c[3-4], tier 2, MaxNodes 2, MaxTime 1 h)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hpcsched.advise.plan import make_plan
from hpcsched.advise.scope import ranges, site_scope
from hpcsched.advise.slurm import SlurmSnapshot
from hpcsched.advise.state import ClusterState, Job, Node, Partition, Reservation
from hpcsched.cli import main
from hpcsched.policies import PolicySpec

FIXTURES = Path(__file__).parent / "fixtures"
SQUEUE = FIXTURES / "squeue-partitions.json"
SINFO = FIXTURES / "sinfo-partitions.json"
PARTITIONS = FIXTURES / "scontrol-partition-oneline.txt"


@pytest.fixture
def state():
    return SlurmSnapshot(SQUEUE, SINFO, partitions=PARTITIONS).read()


def recorded(job_id: int) -> dict:
    """A job's record as squeue printed it (read here, not by the reader under test)."""
    jobs = json.loads(SQUEUE.read_text())["jobs"]
    return next(j for j in jobs if j["job_id"] == job_id)


def test_each_partition_is_planned_on_its_own_nodes_tier_first(state):
    """Running: 1 (batch, c3) and 2 (debug, c1-c2), 30 min each; c4 free. Tier 2 (batch)
    first: 4 (batch, 2 nodes) waits for c3, at 1's end; 5 (debug or batch, 2 nodes, tier 2)
    starts in debug on c1-c2 at 2's end (it takes none of batch's nodes, which 4 holds); 3
    (debug, tier 1, 2 nodes) when 5 ends 15 min later. 6 (3 nodes) and 7 (90 min) are over
    batch's limits: left alone, as Slurm leaves them pending."""
    plan = make_plan(state, PolicySpec("fcfs"))
    end_1 = recorded(1)["start_time"] + 60 * recorded(1)["time_limit"]
    end_2 = recorded(2)["start_time"] + 60 * recorded(2)["time_limit"]
    got = {c.job.job_id: (c.planned_start, c.partition, c.tier) for c in plan.changes}
    assert got == {
        4: (end_1, "batch", 2),
        5: (end_2, "debug", 2),
        3: (end_2 + 15 * 60, "debug", 1),
    }
    assert [(j.job_id, why) for j, why in plan.skipped] == [
        (6, "larger than partition batch"),
        (7, "over partition batch's MaxTime"),
    ]
    # priorities rank jobs within their tier, above the jobs left alone (6: 1468)
    new = {c.job.job_id: c.new for c in plan.changes}
    assert new == {4: 1470, 5: 1469, 3: 1470}
    assert plan.summary["partitions"] == [
        {"name": "debug", "tier": 1, "nodes": 4, "state": "up"},
        {"name": "batch", "tier": 2, "nodes": 2, "state": "up"},
    ]
    assert (plan.summary["busy"], plan.summary["down"]) == (3, 0)


def test_a_scope_counts_the_jobs_of_other_partitions_on_its_nodes(state):
    """Scope debug: job 1 runs in batch, but on c3, one of debug's nodes: debug has one free
    node (c4), so 3 (2 nodes) waits for c3 (1's end); 5 may also run in batch, outside the
    scope: left alone."""
    plan = make_plan(state, PolicySpec("fcfs"), partition="debug")
    end_1 = recorded(1)["start_time"] + 60 * recorded(1)["time_limit"]
    assert [(c.job.job_id, c.planned_start) for c in plan.changes] == [(3, end_1)]
    assert plan.summary["busy"] == 3
    assert [(j.job_id, why) for j, why in plan.skipped] == [
        (5, "also submitted to batch, outside the scope")
    ]


def test_without_partitions_the_scope_is_one_pool(state):
    """The same jobs without the partition list (an older snapshot): one pool, as before; with
    the list but a running job whose nodes are not listed, one pool too, and the plan says
    why."""
    plan = make_plan(replace(state, partitions=[]), PolicySpec("fcfs"))
    assert all(c.tier is None and c.partition is None for c in plan.changes)
    assert "partitions" not in plan.summary and "one_pool" not in plan.summary
    jobs = [replace(j, node_names=()) if j.job_id == 1 else j for j in state.jobs]
    plan = make_plan(replace(state, jobs=jobs), PolicySpec("fcfs"))
    assert plan.summary["one_pool"] == "a running job lists no nodes"
    assert all(c.tier is None for c in plan.changes)


def test_the_site_names_nodes_running_down_and_reserved():
    """c1-c6 in order; gpu = c5-c6 inside all = c1-c6. Job 1 holds c1-c2; job 2 (started
    later) shares c2 and holds c3; job 3 shares c1 only: left out. c4 is drained (idle): down;
    c3 is draining under job 2: not down. A maintenance over c5-c6 and c2."""
    part = [
        Partition("all", tuple(f"c{i}" for i in range(1, 7))),
        Partition("gpu", ("c5", "c6"), tier=3, max_nodes=2),
    ]
    states = {"c3": ("mixed", "drain"), "c4": ("idle", "drain")}
    nodes = [Node(f"c{i}", states.get(f"c{i}", ("idle",)), ("all",)) for i in range(1, 7)]

    def running(job_id, start, names):
        return Job(job_id, "r", "u", ("all",), "RUNNING", "None", len(names), 600.0, 0.0,
                   start, 1, 0, node_names=names)  # fmt: skip

    jobs = [
        running(1, 10.0, ("c1", "c2")),
        running(2, 20.0, ("c2", "c3")),
        running(3, 30.0, ("c1",)),
    ]
    maint = Reservation("m", 500.0, 900.0, ("c2", "c5", "c6"), ("MAINT",))
    site = site_scope(ClusterState(100.0, jobs, nodes, [maint], partitions=part), None)
    assert site.names == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert [j.job_id for j in site.running] == [1, 2] and site.running_nodes == [2, 1]
    assert [j.job_id for j in site.shared] == [3]
    assert site.columns["running_nodes"].tolist() == [0, 1, 2]
    assert site.columns["down"] == [(3, 4)] and site.down == 1
    assert site.columns["maintenance"] == [(500.0, 900.0, 1, 2), (500.0, 900.0, 4, 6)]
    assert [p["ranges"] for p in site.columns["partitions"]] == [[[0, 6]], [[4, 6]]]
    assert ranges([5, 0, 1, 2, 7, 6]) == [(0, 3), (5, 8)]


def test_the_tick_line_says_the_tiers_and_what_was_left_alone(capsys, tmp_path):
    log = tmp_path / "log.jsonl"
    code = main(["advise", "--from-json", str(SQUEUE), str(SINFO), "--partitions",
                 str(PARTITIONS), "--policy", "fcfs", "--log", str(log)])  # fmt: skip
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "4 nodes in debug (tier 1), batch (tier 2)" in out
    assert "left alone 2 (2 over partition limits)" in out
    assert "left alone: job 6 (larger than partition batch)" in out
    tick = json.loads(log.read_text().splitlines()[-1])
    assert [(e["job"], e["partition"], e["tier"]) for e in tick["plan"]] == [
        (4, "batch", 2), (5, "debug", 2), (3, "debug", 1)
    ]  # fmt: skip


def test_the_tick_line_says_which_running_jobs_it_could_not_model():
    """Job 3 shares c1 with job 1 (as in the case above): the plan leaves it out and the tick
    line says so (the JSON log's ``sharing`` count, until issue 42 said nowhere else)."""
    from hpcsched.advise.plan import make_plan
    from hpcsched.cli.advise import not_modelled

    part = [Partition("all", tuple(f"c{i}" for i in range(1, 5)))]
    nodes = [Node(f"c{i}", ("idle",), ("all",)) for i in range(1, 5)]

    def running(job_id, start, names):
        return Job(job_id, "r", "u", ("all",), "RUNNING", "None", len(names), 600.0, 0.0,
                   start, 1, 0, node_names=names)  # fmt: skip

    pending = Job(4, "p", "u", ("all",), "PENDING", "Priority", 2, 60.0, 50.0, None, 1, 0)
    jobs = [running(1, 10.0, ("c1", "c2")), running(3, 30.0, ("c1",)), pending]
    plan = make_plan(ClusterState(100.0, jobs, nodes, partitions=part), PolicySpec("fcfs"))
    assert plan.summary["sharing"] == 1 and plan.summary["running"] == 2
    assert not_modelled(plan.summary) == (
        "; 1 running job shares nodes with others: not modelled (each node held once, by the "
        "job that started on it first)"
    )
    assert not_modelled({"sharing": 0}) == ""
