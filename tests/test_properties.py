"""Property tests: the invariants hold on random small workloads, for every policy."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hpcsched
from hpcsched.workload import DowntimeCalendar
from hpcsched.workload.calendar import Downtime
from tests.conftest import small_platform, workload_from
from tests.invariants import (
    check_capacity,
    check_downtime,
    check_jobs,
    check_power_records,
    check_reservation_capacity,
    check_reservations_honoured,
)

MACHINE = 8

job = st.tuples(
    st.integers(0, 200).map(float),  # submit
    st.integers(0, 60).map(float),  # run time
    st.integers(0, 80).map(float),  # requested time
    st.integers(1, MACHINE),  # nodes
)
workloads = st.lists(job, min_size=1, max_size=40).map(
    lambda specs: workload_from(sorted(specs, key=lambda s: s[0]), MACHINE)
)
QUEUE_POLICIES = [
    p
    for p in hpcsched.policy_names()
    if not (hpcsched.PolicySpec(p).is_search or hpcsched.PolicySpec(p).is_power)
    and p != "recorded"  # not a scheduler: the record's own rules (tests/test_recorded.py)
]
policies = st.sampled_from(QUEUE_POLICIES)
windows = st.one_of(st.none(), st.integers(1, 8))

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    workloads,
    policies,
    windows,
    st.sampled_from(["easy", "none"]),
    st.sampled_from(["continue", "kill"]),
)
def test_invariants_hold_for_every_policy(workload, policy, window, backfill, overrun):
    fixed = policy in ("snf", "slurm")  # their order and backfill are their own
    if fixed:
        window = None  # (they refuse both)
    result = hpcsched.simulate(
        workload,
        policy,
        window=window,
        backfill=None if fixed else backfill,
        overrun=overrun,
    )
    check_jobs(result, overrun)
    check_capacity(result)
    check_reservation_capacity(result)
    if policy != "slurm" and (backfill == "none" or policy == "snf"):
        assert result.info["jobs"]["start_kinds"]["backfill"] == 0
        assert result.reservations.empty


@SETTINGS
@given(workloads)
def test_fcfs_easy_reservations_are_honoured_when_estimates_hold(workload):
    result = hpcsched.simulate(workload, "fcfs", overrun="kill")
    check_reservations_honoured(result)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads, st.sampled_from(["mars-cw", "mars-cu", "random"]), st.integers(0, 3))
def test_invariants_hold_for_look_ahead_policies(workload, policy, seed):
    search = hpcsched.SearchSpec(iterations=8, depth=6, trees=2, seed=seed)
    result = hpcsched.simulate(workload, hpcsched.PolicySpec(policy, search=search))
    check_jobs(result)
    check_capacity(result)
    check_reservation_capacity(result)
    log = result.decisions
    assert (log["outcomes"] >= 1).all()
    # a drain starts nothing, and only look-ahead policies drain
    assert (log.loc[log["drain"], "started"] == 0).all()
    if policy == "random":
        assert not log["drain"].any()


@st.composite
def calendars(draw):
    windows = []
    for _ in range(draw(st.integers(0, 3))):
        start = float(draw(st.integers(0, 300)))
        length = float(draw(st.integers(1, 100)))
        nodes = draw(st.one_of(st.none(), st.integers(1, MACHINE)))
        kind = draw(st.sampled_from(["scheduled", "unscheduled"]))
        windows.append(Downtime(start, start + length, kind, nodes))
    return DowntimeCalendar(tuple(windows), announce_lead=float(draw(st.integers(0, 200))))


@SETTINGS
@given(workloads, calendars(), st.sampled_from(["fcfs", "wfp3", "sjf", "snf"]))
def test_invariants_hold_under_downtime(workload, calendar, policy):
    result = hpcsched.simulate(workload, policy, downtime=calendar)
    check_jobs(result)
    assert list(result.calendar) == list(calendar)  # the workload's clock starts at 0
    check_downtime(result)
    jobs = result.jobs
    # No job runs through the start of a scheduled window that it knew about.
    for w in calendar:
        if w.kind != "scheduled" or w.nodes is not None:
            continue
        known = jobs["start"] >= w.start - calendar.announce_lead
        crosses = (jobs["start"] < w.start) & (jobs["start"] + jobs["requested_time"] > w.start)
        assert not (known & crosses).any()


def test_the_downtime_check_catches_a_job_running_through_an_outage():
    """The mutant engine of issue 25 lets a job run straight through an unscheduled
    whole-machine outage (no kill, no requeue). Its job table, made here from a real run by
    moving the killed job's end across the outage, keeps every other invariant: only the
    downtime check, which looks at every instant and not only at start times, refuses it."""
    import copy

    calendar = DowntimeCalendar((Downtime(40.0, 60.0, "unscheduled"),), announce_lead=0.0)
    workload = workload_from([(0, 100, 100, 4), (0, 20, 20, 4), (50, 10, 10, 2)], MACHINE)
    real = hpcsched.simulate(workload, "fcfs", downtime=calendar)
    check_downtime(real)
    assert len(real.lost) == 1  # the first job was killed at 40 and ran again after 60
    mutant = copy.copy(real)
    mutant.jobs = real.jobs.copy()
    killed = int(real.lost["job_index"].iloc[0])
    first_start = float(real.lost["start"].iloc[0])
    mutant.jobs.loc[killed, ["start", "end", "requeues"]] = [first_start, first_start + 100, 0]
    mutant.jobs["wait"] = mutant.jobs["start"] - mutant.jobs["submit"]
    mutant.lost = real.lost.iloc[0:0]
    assert mutant.jobs.loc[killed, "end"] > 60 > 40 > mutant.jobs.loc[killed, "start"]
    check_jobs(mutant)
    check_capacity(mutant)
    with pytest.raises(AssertionError, match=r"t=40\.0: 4 nodes busy, 8 down"):
        check_downtime(mutant)


POWERED = small_platform(MACHINE, switch_on=15.0, switch_off=7.0)


@SETTINGS
@given(
    workloads,
    st.sampled_from(["fcfs-b+ipm", "snf+ipm", "snf-icon", "snf-icon-ngnf"]),
    st.sampled_from([5.0, 60.0, 7200.0]),
    st.one_of(st.none(), st.integers(0, 5)),
)
def test_invariants_hold_for_power_managers(workload, policy, timeout, sample):
    spec = hpcsched.PolicySpec(
        policy, power=hpcsched.PowerSpec(idle_timeout=timeout, sample_transitions=sample)
    )
    result = hpcsched.simulate(workload, spec, platform=POWERED)
    check_jobs(result)
    check_capacity(result)
    # every attempt of the job table is in the engine's own node-state record, and no other
    check_power_records(result)
    seconds = result.info["energy"]["node_seconds"]
    assert min(seconds.values()) >= -1e-6


def test_the_power_records_check_catches_a_job_table_the_engine_did_not_run():
    """check_power_records compares the job table with the engine's node states, kept apart:
    a job shown running elsewhere, or an attempt the engine never ran, is refused."""
    import copy

    import pandas as pd

    workload = workload_from([(0, 50, 60, 3), (5, 30, 40, 5), (100, 20, 20, 8)], MACHINE)
    spec = hpcsched.PolicySpec("fcfs-b+ipm", power=hpcsched.PowerSpec(idle_timeout=5.0))
    real = hpcsched.simulate(workload, spec, platform=POWERED)
    check_power_records(real)
    moved = copy.copy(real)
    moved.jobs = real.jobs.copy()
    moved.jobs.loc[2, ["start", "end"]] += 10.0  # ends once more, later
    with pytest.raises(AssertionError, match="nodes computing"):
        check_power_records(moved)
    twice = copy.copy(real)
    attempt = {"job_index": [0], "start": [60.0], "end": [70.0], "nodes": [3]}
    twice.lost = pd.concat([real.lost, pd.DataFrame(attempt)])  # an attempt never run
    with pytest.raises(AssertionError):
        check_power_records(twice)


def test_reservation_resolved_within_one_instant():
    """Found by hypothesis: zero-length jobs give several invocations at t = 94; the top job of
    the first starts in the second, and a job started after it must not count against it."""
    specs = [
        (0, 14, 0, 5),
        (0, 19, 0, 5),
        (0, 28, 0, 5),
        (0, 33, 0, 5),
        (0, 0, 0, 4),
        (0, 0, 0, 4),
        (0, 1, 1, 4),
        (93, 2, 2, 1),
        (93, 1, 0, 3),
    ]
    result = hpcsched.simulate(workload_from(specs, MACHINE), "fcfs")
    check_jobs(result)
    check_capacity(result)
    check_reservation_capacity(result)
    assert result.jobs["start"].tolist()[4:7] == [94.0, 94.0, 94.0]


@SETTINGS
@given(workloads, st.sampled_from(["continue", "kill"]))
def test_slurm_invariants_hold_and_runs_repeat_bit_for_bit(workload, overrun):
    """Slurm's schedulers (main, backfill, recalculations) on random workloads: every job
    starts once after its submission, never more nodes than the machine, and the same run
    twice gives the same schedule."""
    result = hpcsched.simulate(workload, "slurm", overrun=overrun)
    check_jobs(result, overrun)
    check_capacity(result)
    again = hpcsched.simulate(workload, "slurm", overrun=overrun)
    assert result.jobs["start"].tolist() == again.jobs["start"].tolist()
