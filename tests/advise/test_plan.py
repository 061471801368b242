"""From a cluster state to priorities: hand-worked plans, scope, arrays, holds, priorities."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hpcsched.advise.plan import MAX_PRIORITY, make_plan
from hpcsched.advise.state import ClusterState, Job, Node, Reservation
from hpcsched.exceptions import OptionError
from hpcsched.policies import PolicySpec, SearchSpec

NOW = 1_800_000_100.0
T0 = NOW - 100


def job(job_id, *, state="PENDING", nodes=1, limit=60.0, submit=0.0, start=None, priority=1000,
        partitions=("debug",), reason="Priority", tasks=1):  # fmt: skip
    return Job(
        job_id=job_id,
        name=f"j{job_id}",
        user="alice",
        partitions=partitions,
        state=state,
        reason=reason,
        nodes=nodes,
        time_limit=limit,
        submit=T0 + submit,
        start=None if start is None else T0 + start,
        priority=priority,
        nice=0,
        tasks=tasks,
        array=None if tasks == 1 else f"{job_id}_[0-{tasks - 1}]",
    )


def nodes(count, partitions=("debug",), states=("idle",)):
    return [Node(f"c{i}", states, partitions) for i in range(1, count + 1)]


def cluster(c_limit=500.0, extra=()):
    """The engine test's snapshot: 4 nodes at T0+100, R (2 nodes, limit 200) running since T0;
    A needs 4 nodes (100 s), B 2 nodes (50 s), C 2 nodes."""
    return ClusterState(
        now=NOW,
        jobs=[
            job(1, state="RUNNING", nodes=2, limit=200.0, start=0.0),
            job(11, nodes=4, limit=100.0, submit=10.0, priority=5000),
            job(12, nodes=2, limit=50.0, submit=20.0, priority=4000),
            job(13, nodes=2, limit=c_limit, submit=30.0, priority=3000),
            *extra,
        ],
        nodes=nodes(4),
    )


def ids(plan):
    return [c.job.job_id for c in plan.changes]


def test_fcfs_plan_ranks_by_planned_start_and_sits_above_others():
    plan = make_plan(cluster(), PolicySpec("fcfs"))
    # B backfills now, A at R's limit (+100 s), C after A (+200 s)
    assert ids(plan) == [12, 11, 13]
    assert [c.planned_start - NOW for c in plan.changes] == [0.0, 100.0, 200.0]
    assert [c.why for c in plan.changes] == ["starts now", "in 2 min", "in 3 min"]
    # no unmanaged pending job: the order starts from the highest current priority
    assert [c.new for c in plan.changes] == [5000, 4999, 4998]
    assert [c.old for c in plan.changes] == [4000, 5000, 3000]
    assert plan.summary == {
        "nodes": 4, "down": 0, "busy": 2, "running": 1, "sharing": 0, "pending": 3,
        "skipped": 0, "reservations": [],
    }  # fmt: skip


def test_sjf_plan_and_priorities_above_unmanaged_jobs():
    other = job(99, nodes=1, priority=7000, partitions=("batch",))
    state = cluster(c_limit=20.0, extra=[other])
    state.nodes += [Node("c9", ("idle",), ("batch",))]
    plan = make_plan(state, PolicySpec("sjf"), partition="debug")
    assert ids(plan) == [13, 12, 11]  # C now, B at +20 s, A at R's limit
    assert [c.new for c in plan.changes] == [7003, 7002, 7001]  # above job 99 (7000)
    # the next tick keeps them where they are (nothing to write)
    written = {c.job.job_id: c.new for c in plan.changes}
    state.jobs = [replace(j, priority=written.get(j.job_id, j.priority)) for j in state.jobs]
    again = make_plan(state, PolicySpec("sjf"), partition="debug")
    assert [c.new for c in again.changes] == [7003, 7002, 7001] and again.writes == []
    assert plan.scope == "debug" and plan.summary["nodes"] == 4


def test_priorities_stay_within_slurm_range():
    top = job(98, priority=MAX_PRIORITY, partitions=("other",))
    plan = make_plan(cluster(extra=[top]), PolicySpec("fcfs"), partition="debug")
    assert [c.new for c in plan.changes] == [MAX_PRIORITY, MAX_PRIORITY - 1, MAX_PRIORITY - 2]
    assert all(1 <= c.new <= MAX_PRIORITY for c in plan.changes)


def test_held_and_oversized_jobs_are_left_alone():
    extra = [job(20, reason="JobHeldUser", priority=0), job(21, nodes=9, submit=40.0)]
    plan = make_plan(cluster(extra=extra), PolicySpec("fcfs"))
    assert ids(plan) == [12, 11, 13]
    assert [(j.job_id, why) for j, why in plan.skipped] == [
        (20, "held"),
        (21, "needs 9 nodes, the scope has 4"),
    ]


def test_a_pending_array_is_planned_task_by_task():
    # 3 tasks of 2 nodes, 50 s each, on an idle 4-node machine: two start now, one at +50 s;
    # the array's priority follows its first task, ahead of a later 4-node job.
    state = ClusterState(
        now=NOW,
        jobs=[job(30, nodes=2, limit=50.0, tasks=3), job(31, nodes=4, limit=10.0, submit=5.0)],
        nodes=nodes(4),
    )
    plan = make_plan(state, PolicySpec("fcfs"))
    assert ids(plan) == [30, 31]
    assert [c.planned_start - NOW for c in plan.changes] == [0.0, 100.0]


def test_drained_nodes_and_maintenance_reservations_shape_the_plan():
    state = ClusterState(
        now=NOW,
        jobs=[job(40, nodes=4, limit=3600.0), job(41, nodes=1, limit=600.0, submit=1.0)],
        nodes=nodes(4),
        reservations=[
            Reservation("maint", NOW + 1800, NOW + 7200, ("c1", "c2", "c3", "c4"), ("MAINT",))
        ],
    )
    plan = make_plan(state, PolicySpec("fcfs"))
    # the hour-long job cannot finish before the maintenance: it starts after; the short fits
    assert ids(plan) == [41, 40]
    assert plan.changes[1].planned_start == NOW + 7200
    assert plan.summary["reservations"] == ["maint"]
    state.reservations = []
    state.nodes[3] = Node("c4", ("idle", "drain"), ("debug",))
    plan = make_plan(state, PolicySpec("fcfs"))
    assert plan.summary["down"] == 1
    assert ids(plan) == [41, 40] and plan.changes[1].why == "nodes down"


def test_mars_plans_deterministically_with_an_iteration_budget():
    spec = PolicySpec("mars-cw", search=SearchSpec(iterations=40, trees=2, seed=3))
    first = make_plan(cluster(c_limit=20.0), spec)
    second = make_plan(cluster(c_limit=20.0), spec)
    assert ids(first) == ids(second)
    assert first.decision["heuristic"] == second.decision["heuristic"]
    assert first.decision["iterations"] > 0 and first.decision["outcomes"] >= 2


def test_scope_and_policy_mistakes():
    with pytest.raises(OptionError, match="partition 'gpu' has no nodes"):
        make_plan(cluster(), PolicySpec("fcfs"), partition="gpu")
    with pytest.raises(OptionError, match="manages node power"):
        make_plan(cluster(), PolicySpec("snf-icon"))


def test_scope_is_jobs_whose_only_partitions_are_in_it():
    # job 50 may run in batch or debug: managing it under --partition debug would raise it
    # above job 51, which is only in batch
    extra = [
        job(50, partitions=("batch", "debug"), submit=1.0),
        job(51, partitions=("batch",), priority=6000, submit=2.0),
    ]
    state = cluster(extra=extra)
    state.nodes += [Node("c9", ("idle",), ("batch",))]
    plan = make_plan(state, PolicySpec("fcfs"), partition="debug")
    assert 50 not in ids(plan) and 51 not in ids(plan)
    assert [(j.job_id, why) for j, why in plan.skipped] == [
        (50, "also submitted to batch, outside the scope")
    ]
    # both partitions in scope: both jobs managed, on both partitions' nodes
    both = make_plan(state, PolicySpec("fcfs"), partition="debug,batch")
    assert {50, 51} <= set(ids(both)) and both.summary["nodes"] == 5
    assert make_plan(state, PolicySpec("fcfs")).skipped == []  # the whole cluster
    with pytest.raises(OptionError, match="partition 'gpu' has no nodes"):
        make_plan(state, PolicySpec("fcfs"), partition="debug,gpu")


def test_a_drain_holds_the_jobs_that_would_take_the_nodes_kept_for_it():
    # MARS's drain case (crates/core/src/search/mcts.rs): 4 nodes, three 1-node jobs running
    # for up to an hour, four 1-node jobs of 10 h and a 4-node job of 6 min pending. Starting
    # a small job on the free node makes the big one wait 10 h; keeping the node (a drain)
    # starts it within the hour, then the small ones.
    state = ClusterState(
        now=NOW,
        jobs=[
            *(job(i, state="RUNNING", limit=3600.0, start=0.0) for i in (1, 2, 3)),
            *(job(10 + i, limit=36000.0, submit=10.0) for i in range(4)),
            job(20, nodes=4, limit=360.0, submit=20.0),
        ],
        nodes=nodes(4),
    )
    mars = PolicySpec("mars-cw", search=SearchSpec(iterations=300, trees=2, seed=17))
    plan = make_plan(state, mars, drain_holds=True)
    assert plan.decision["drain"]
    assert ids(plan) == [20, 10, 11, 12, 13]
    # each small job fits in the free node and is planned after the big one: all four held
    assert [j.job_id for j in plan.holds] == [10, 11, 12, 13]
    assert make_plan(state, mars).holds == []  # only with --drain-holds
    # no drain, no hold: FCFS starts the first small job now
    fcfs = make_plan(state, PolicySpec("fcfs"), drain_holds=True)
    assert not fcfs.decision["drain"] and fcfs.holds == []
