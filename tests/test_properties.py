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
    check_jobs,
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
    if policy == "snf":
        window = None  # snf orders the whole queue and never backfills (it refuses both)
    result = hpcsched.simulate(
        workload,
        policy,
        window=window,
        backfill=None if policy == "snf" else backfill,
        overrun=overrun,
    )
    check_jobs(result, overrun)
    check_capacity(result)
    check_reservation_capacity(result)
    if backfill == "none" or policy == "snf":
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
    # Busy nodes never exceed what the windows leave up.
    jobs, lost = result.jobs, result.lost
    import numpy as np

    start = np.concatenate([jobs["start"], lost["start"]])
    end = np.concatenate([jobs["end"], lost["end"]])
    nodes = np.concatenate([jobs["nodes"], lost["nodes"]])
    for t in np.unique(start):
        busy = nodes[(start <= t) & (end > t)].sum()
        down = sum(
            MACHINE if w.nodes is None else w.nodes for w in calendar if w.start <= t < w.end
        )
        assert busy <= max(MACHINE - down, 0), f"t={t}: {busy} busy, {down} down"
    # No job runs through the start of a scheduled window that it knew about.
    for w in calendar:
        if w.kind != "scheduled" or w.nodes is not None:
            continue
        known = jobs["start"] >= w.start - calendar.announce_lead
        crosses = (jobs["start"] < w.start) & (jobs["start"] + jobs["requested_time"] > w.start)
        assert not (known & crosses).any()


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
    energy = result.info["energy"]
    seconds = energy["node_seconds"]
    assert min(seconds.values()) >= -1e-6
    assert sum(seconds.values()) == pytest.approx(MACHINE * energy["horizon_seconds"], abs=1e-6)
    timeline = result.timeline
    counts = timeline[["idle", "computing", "switching_on", "switching_off", "sleeping"]]
    assert (counts.sum(axis=1) == MACHINE).all()


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
