"""Node-seconds and energy checked against records kept apart from the engine's totals: the
timeline's node counts integrated over time, the jobs' own start and end times, and a small
case computed by hand (sleeps, wakes and a maintenance window)."""

from __future__ import annotations

import numpy as np
import pytest

import hpcsched
from hpcsched.workload.calendar import parse_calendar
from tests.conftest import small_platform, workload_from
from tests.invariants import check_capacity, check_jobs, executed_intervals

STATES = ("computing", "idle", "switching_on", "switching_off", "sleeping", "down")
#: small_platform's powers (W)
POWER = {"computing": 100.0, "idle": 10.0, "switching_on": 20.0, "switching_off": 30.0}
POWER |= {"sleeping": 1.0, "down": 0.0}


def timeline_node_seconds(result) -> dict[str, float]:
    """Each state's node count integrated from the run's start to the energy horizon (the last
    completion); before the first row every node is idle."""
    timeline = result.timeline
    horizon = result.info["energy"]["horizon_seconds"]
    machine = result.workload.nodes
    times = np.r_[0.0, timeline["time"].to_numpy(), horizon]
    totals = {}
    for state in STATES:
        counts = np.r_[machine if state == "idle" else 0, timeline[state].to_numpy()]
        spans = np.clip(np.minimum(times[1:], horizon) - np.clip(times[:-1], 0, None), 0, None)
        totals[state] = float((counts * spans).sum())
    return totals


def test_hand_computed_sleeps_wakes_and_maintenance():
    # Two nodes (wake 50 s, switch-off 40 s), idle timeout 100 s, FCFS with EASY under IPM.
    # J1 (1 node) runs 0-50 on node 0. Node 1 times out at 100 (asleep 140); node 0, idle since
    # 50, at 150 (asleep 190). J2 (2 nodes, 100 s) arrives at 150 but would run into the
    # maintenance of one node over [200, 300) (announced long before): it is planned after it.
    # At 200 the window takes node 0 (asleep: taken first) and gives it back idle at 300; node
    # 1 is woken at 250 for a start at 300. J2 runs 300-400 (the energy horizon).
    workload = workload_from([(0, 50, 50, 1), (150, 100, 100, 2)], 2)
    calendar = parse_calendar("200 300 S 1 back=idle\n", announce_lead=1000.0)
    spec = hpcsched.PolicySpec("fcfs", power=hpcsched.PowerSpec(manager="ipm", idle_timeout=100))
    result = hpcsched.simulate(workload, spec, platform=small_platform(2), downtime=calendar)
    assert result.jobs["start"].tolist() == [0.0, 300.0]
    # node 0: computes 0-50 and 300-400, idles 50-150, switches off 150-190, sleeps 190-200,
    # is down 200-300; node 1: idles 0-100, switches off 100-140, sleeps 140-250, wakes
    # 250-300, computes 300-400.
    expected = {
        "computing": 250.0,
        "idle": 200.0,
        "down": 100.0,
        "switching_on": 50.0,
        "switching_off": 80.0,
        "sleeping": 120.0,
    }
    energy = result.info["energy"]
    assert energy["node_seconds"] == expected
    assert timeline_node_seconds(result) == pytest.approx(expected)
    joules = sum(expected[s] * POWER[s] for s in STATES)
    assert energy["total_mwh"] == pytest.approx(joules / 3.6e9)
    assert energy["wasted_mwh"] == pytest.approx((joules - 250.0 * 100.0) / 3.6e9)
    # Per job: J1 50 node-seconds, J2 200, at 100 W.
    assert result.jobs["energy_kwh"].tolist() == pytest.approx([5000 / 3.6e6, 20000 / 3.6e6])
    timeline = result.timeline.set_index("time")
    assert timeline.loc[200.0, "down"] == 1 and timeline.loc[300.0, "down"] == 0
    assert timeline.loc[250.0, "switching_on"] == 1
    # power drawn after each change: at 200 one node down, one asleep: 1 W
    assert timeline.loc[200.0, "power_kw"] == pytest.approx(0.001)
    assert timeline.loc[300.0, "power_kw"] == pytest.approx(0.2)


def test_nodes_come_back_asleep_when_the_calendar_says_so():
    # The same case, but the window gives node 0 back asleep: J2 must wait for its wake too.
    workload = workload_from([(0, 50, 50, 1), (150, 100, 100, 2)], 2)
    calendar = parse_calendar("200 300 S 1 back=asleep\n", announce_lead=1000.0)
    spec = hpcsched.PolicySpec("fcfs", power=hpcsched.PowerSpec(manager="ipm", idle_timeout=100))
    result = hpcsched.simulate(workload, spec, platform=small_platform(2), downtime=calendar)
    # Node 0 is back asleep at 300 and woken at once (ready 350); node 1 is woken at 300 too.
    assert result.jobs["start"].tolist() == [0.0, 350.0]
    seconds = result.info["energy"]["node_seconds"]
    assert seconds["down"] == 100.0
    assert seconds["switching_on"] == 100.0  # both nodes 300-350
    assert timeline_node_seconds(result) == pytest.approx(seconds)


def _accounting(result):
    energy = result.info["energy"]
    seconds = energy["node_seconds"]
    # 1. the timeline integrated over time
    assert timeline_node_seconds(result) == pytest.approx(seconds, rel=1e-9, abs=1e-6)
    # 2. computing node-seconds from the jobs' own starts and ends (and killed attempts)
    start, end, nodes = executed_intervals(result)
    assert seconds["computing"] == pytest.approx(float(((end - start) * nodes).sum()), rel=1e-12)
    # 3. energy from the node-seconds and the platform's powers
    power = result.info["inputs"]["platform"]["power"]
    joules = sum(seconds[s] * power[s] for s in STATES if s != "down")
    assert energy["total_mwh"] == pytest.approx(joules / 3.6e9, rel=1e-12)
    # 4. the jobs' computing energy (final attempts) and that of the attempts killed by
    # downtime add up to the computing energy
    lost = result.info["downtime"]["lost_node_seconds"] * power["computing"] / 3.6e9
    assert result.jobs["energy_kwh"].sum() / 1000 + lost == pytest.approx(
        energy["computing_mwh"], rel=1e-9
    )
    # 5. the machine's power over time (timeline.parquet) integrates to the total energy
    timeline = result.timeline
    horizon = energy["horizon_seconds"]
    idle_kw = result.workload.nodes * power["idle"] / 1000  # before the first change
    times = np.r_[0.0, timeline["time"].to_numpy(), horizon]
    kw = np.r_[idle_kw, timeline["power_kw"].to_numpy()]
    spans = np.clip(np.minimum(times[1:], horizon) - np.clip(times[:-1], 0, None), 0, None)
    assert float((kw * spans).sum()) * 1000 == pytest.approx(energy["total_mwh"] * 3.6e9, rel=1e-9)
    # 6. the machine: up nodes are computing, idle, switching or sleeping
    assert sum(seconds.values()) == pytest.approx(
        result.workload.nodes * energy["horizon_seconds"], rel=1e-12
    )


@pytest.mark.parametrize(
    ("policy", "seed"), [("snf-icon", None), ("snf-icon", 3), ("fcfs-b+ipm", 7), ("snf+ipm", None)]
)
def test_accounting_on_a_paper_workload(traces_dir, policy, seed):
    trace = traces_dir / "snf-icon-paper" / "DAS2-fs1-0-3000.json.gz"
    spec = hpcsched.PolicySpec(policy, power=hpcsched.PowerSpec(sample_transitions=seed))
    result = hpcsched.simulate(trace, spec, platform="AOBA-64")
    _accounting(result)
    check_jobs(result)
    check_capacity(result)


def test_maintenance_with_power_management_on_the_markovian_workload(markovian_trace):
    # The Markovian workload on Taurus-64 with a weekly whole-machine maintenance (back
    # asleep), a partial one (back idle) and an unscheduled outage of 8 nodes.
    trace = markovian_trace
    week = 7 * 86400.0
    lines = [f"{k * week + 3600:.0f} {k * week + 4 * 3600:.0f} S - back=asleep" for k in (1, 2)]
    lines.append(f"{3 * week:.0f} {3 * week + 7200:.0f} S 32 back=idle rack upgrade")
    lines.append(f"{int(1.5 * week)} {int(1.5 * week) + 5400} U 8 PDU")
    calendar = parse_calendar("\n".join(lines) + "\n")
    for policy in ("snf-icon", "fcfs-b+ipm"):
        spec = hpcsched.PolicySpec(policy, power=hpcsched.PowerSpec(sample_transitions=11))
        result = hpcsched.simulate(trace, spec, platform="Taurus-64", downtime=calendar)
        _accounting(result)
        check_jobs(result)
        check_capacity(result)
        shifted = result.calendar
        start, end, _ = executed_intervals(result)
        timeline = result.timeline
        for w in shifted:
            # nothing runs across a whole-machine window; nodes down as the calendar says
            if w.nodes is None:
                overlap = (start < w.end) & (end > w.start)
                assert not overlap.any(), f"{policy}: a job ran during {w}"
            expected_down = 64 if w.nodes is None else w.nodes
            at_start = timeline[timeline["time"] <= w.start].iloc[-1]
            assert at_start["down"] == expected_down
            assert (timeline["computing"] + timeline["down"] <= 64).all()
            after = timeline[timeline["time"] <= w.end].iloc[-1]
            assert after["down"] == 0
        # the whole-machine windows give every node back asleep: none idle or computing then
        for w in (w for w in shifted if w.nodes is None):
            after = timeline[timeline["time"] <= w.end].iloc[-1]
            assert after["sleeping"] + after["switching_on"] == 64
        assert result.info["energy"]["node_seconds"]["down"] > 0


@pytest.mark.parametrize(
    "policy",
    [["--policy", "fcfs-b+ipm"], ["--policy", "sjf", "--power", "ipm"], ["--policy", "snf+ipm"]],
)
def test_nodes_that_wake_at_once_end_the_run(tmp_path, policy):
    # A zero wake latency (the platform reader allows it) used to leave the EASY managers
    # waiting for ever: nodes asleep, jobs waiting, time growing by timers.
    import subprocess
    import sys

    (tmp_path / "instant.toml").write_text(
        'name = "instant"\nnodes = 64\n'
        "[power]\ncomputing = 100.0\nidle = 10.0\nsleeping = 1.0\n"
        "switching_on = 20.0\nswitching_off = 30.0\n"
        "[transitions]\nswitch_on = 0.0\nswitch_on_std = 0.0\n"
        "switch_off = 40.0\nswitch_off_std = 0.0\n"
    )
    cli = [sys.executable, "-m", "hpcsched"]
    work = tmp_path / "w.json"
    subprocess.run([*cli, "generate", "markovian", str(work), "--jobs", "300"], check=True)
    done = subprocess.run(
        [
            *cli,
            "simulate",
            str(work),
            *policy,
            "--platform",
            str(tmp_path / "instant.toml"),
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    jobs = hpcsched.read_run(tmp_path / "run").jobs
    assert len(jobs) == 300 and jobs["start"].notna().all()
