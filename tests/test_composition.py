"""Power management as a layer under any queue policy: the paper's names are exactly the
pairs they stand for, and other pairs (a heuristic with EASY, MARS, a Python policy) run under
a power manager."""

from __future__ import annotations

import pandas as pd
import pytest

import hpcsched
from hpcsched.cli import app
from hpcsched.protocol import Decision
from tests.conftest import small_platform, workload_from

PAPER = "snf-icon-paper"


def _run_files(folder):
    decisions = pd.read_parquet(folder / "decisions.parquet").drop(columns="seconds")
    return (
        (folder / "jobs.parquet").read_bytes(),
        (folder / "timeline.parquet").read_bytes(),
        decisions,
    )


@pytest.mark.parametrize(
    ("alias", "queue", "power"),
    [("snf-icon", "snf", "icon"), ("fcfs-b+ipm", "fcfs", "ipm"), ("snf-icon-nf", "snf", "icon-nf")],
)
def test_paper_names_are_the_pairs_they_stand_for(tmp_path, traces_dir, alias, queue, power):
    from typer.testing import CliRunner

    trace = str(traces_dir / PAPER / "DAS2-fs2-0-3000.json.gz")
    runner = CliRunner()
    common = ["--platform", "AOBA-64", "--sample-transitions", "5"]
    first = runner.invoke(
        app, ["simulate", trace, "--policy", alias, "--out", str(tmp_path / "a"), *common]
    )
    second = runner.invoke(
        app,
        [
            "simulate",
            trace,
            "--policy",
            queue,
            "--power",
            power,
            "--out",
            str(tmp_path / "b"),
            *common,
        ],
    )
    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    jobs_a, timeline_a, decisions_a = _run_files(tmp_path / "a")
    jobs_b, timeline_b, decisions_b = _run_files(tmp_path / "b")
    assert jobs_a == jobs_b
    assert timeline_a == timeline_b
    pd.testing.assert_frame_equal(decisions_a, decisions_b)


def test_a_paper_name_keeps_its_manager():
    with pytest.raises(hpcsched.OptionError, match="runs under icon"):
        hpcsched.PolicySpec("snf-icon", power=hpcsched.PowerSpec(manager="ipm"))
    with pytest.raises(hpcsched.OptionError, match="unknown power manager"):
        hpcsched.PowerSpec(manager="dvfs")


def test_starts_take_the_most_recently_idle_nodes_first():
    # Four nodes, idle timeout 100 s, no sleeping before it (hand-computed).
    # J1 (2 nodes, 0-50) takes nodes 0, 1 (all idle since 0: ties by node number).
    # J2 (1 node, 30-90) then takes node 2 (nodes 2, 3 idle since 0, lowest first).
    # At 60 J3 (1 node) arrives: nodes 0, 1 are idle since 50 (deadline 150), node 3 since 0
    # (deadline 100): the energy-aware choice (Definition 6) takes the longest remaining
    # timeout, node 0, leaving node 3 to time out at 100 and sleep.
    # Lowest-numbered placement would also take node 0 here; J4 tells them apart: at 95,
    # nodes 1 (deadline 150), 2 (idle since 90, deadline 190) and 3 (deadline 100) are idle:
    # J4 takes node 2 (longest remaining timeout), where the lowest number would take node 1.
    specs = [(0, 50, 50, 2), (30, 60, 60, 1), (60, 100, 100, 1), (95, 10, 10, 1)]
    workload = workload_from(specs, 4)
    spec = hpcsched.PolicySpec("fcfs", power=hpcsched.PowerSpec(manager="ipm", idle_timeout=100))
    result = hpcsched.simulate(workload, spec, platform=small_platform(4))
    assert result.jobs["start"].tolist() == [0.0, 30.0, 60.0, 95.0]
    # Node 3 switches off at its deadline (100) and sleeps from 140; node 1 (idle since 50)
    # switches off at 150. Up to the last completion (J3 at 160), by node: 0 computes 150 s,
    # idles 10; 1 computes 50, idles 100, switches off 10; 2 computes 70, idles 90; 3 idles
    # 100, switches off 40, sleeps 20. With lowest-numbered placement J4 would run on node 1,
    # which would then not switch off before 160 (30 s less switching off, 10 s more idle).
    assert result.info["energy"]["node_seconds"] == {
        "computing": 270.0,
        "idle": 300.0,
        "down": 0.0,
        "switching_on": 0.0,
        "switching_off": 50.0,
        "sleeping": 20.0,
    }
    timeline = result.timeline.set_index("time")
    assert timeline.loc[100.0, "switching_off"] == 1
    assert timeline.loc[150.0, "switching_off"] == 1


def test_heuristics_and_mars_run_under_a_power_manager():
    """Under ICON (here in its IPM fallback all along: too few arrivals to screen), nodes idle
    past the 7200 s timeout sleep, and the energy is what the node states cost, by hand."""
    specs = [(0, 3600, 3600, 2), (10, 600, 900, 1), (20, 7200, 7200, 3), (30, 60, 60, 1)]
    workload = workload_from(specs, 4)
    platform = small_platform(4)
    search = hpcsched.SearchSpec(reward=(1.0, 0.0, 0.0, 1.0), iterations=20, trees=1)
    for name, options in (("wfp3", {"window": 2}), ("mars", {"search": search})):
        bare = hpcsched.simulate(workload, hpcsched.PolicySpec(name, **options), platform=platform)
        spec = hpcsched.PolicySpec(name, **options, power=hpcsched.PowerSpec(manager="icon"))
        result = hpcsched.simulate(workload, spec, platform=platform)
        # no job waits for a node to wake: the schedule is the one without a manager
        starts = [0.0, 10.0, 3600.0, 30.0]
        assert result.jobs["start"].tolist() == bare.jobs["start"].tolist() == starts
        energy = result.info["energy"]
        assert energy["mode_occupancy"] == {"fallback": 1.0}
        # one node is idle from 90 s (the 60 s job's end): switched off at 90 + 7200 s, 40 s
        # switching, then asleep to the last completion at 10800 s
        assert energy["node_seconds"] == {
            "computing": 2 * 3600 + 600 + 3 * 7200 + 60,
            "idle": 4 * 10800 - 29460 - 40 - 3470,
            "down": 0.0,
            "switching_on": 0.0,
            "switching_off": 40.0,
            "sleeping": 10800 - 7330,
        }
        timeline = result.timeline.set_index("time")
        assert timeline.loc[7290.0, "switching_off"] == 1 and timeline.loc[7330.0, "sleeping"] == 1
        # 100 W computing, 10 W idle, 30 W switching off, 1 W asleep
        joules = 29460 * 100 + 10230 * 10 + 40 * 30 + 3470 * 1
        assert energy["total_mwh"] * 3.6e9 == pytest.approx(joules)
        # without the manager the sleeping node idles: 3470 s x (10 - 1) W minus the switch
        saved = bare.info["energy"]["total_mwh"] * 3.6e9 - joules
        assert saved == pytest.approx(3470 * 9 + 40 * (10 - 30))
        if name == "mars":
            assert len(result.decisions) == result.info["search"]["invocations"] == 7
            assert len(result.power_decisions) and "mode" in result.power_decisions


class StartEverything:
    """Starts the waiting jobs in FCFS order while they fit; the power manager places them."""

    name = "start-everything"

    def decide(self, view):
        free, start = int(view.free), []
        for job, nodes in zip(view.queue, view.queue_nodes, strict=True):
            if nodes <= free:
                start.append(int(job))
                free -= int(nodes)
        return Decision(start=start)


def test_a_python_policy_runs_under_a_power_manager():
    specs = [(0, 100, 100, 1), (0, 50, 50, 1), (500, 10, 10, 2)]
    workload = workload_from(specs, 2)
    from hpcsched.protocol import PythonPolicySpec

    spec = PythonPolicySpec(
        StartEverything(), power=hpcsched.PowerSpec(manager="ipm", idle_timeout=100)
    )
    result = hpcsched.simulate(workload, spec, platform=small_platform(2))
    # Node 1 (J2 until 50) times out at 150 and node 0 at 200; both sleep by 240 and wake
    # for J3 at 500 (wake latency 50 s).
    assert result.jobs["start"].tolist() == [0.0, 0.0, 550.0]
    assert result.info["energy"]["node_seconds"]["sleeping"] > 0


def test_a_manager_name_stands_for_its_power_spec():
    from hpcsched.exceptions import OptionError
    from hpcsched.policies import PolicySpec, PowerSpec

    assert PolicySpec("fcfs", power="ipm") == PolicySpec("fcfs", power=PowerSpec(manager="ipm"))
    with pytest.raises(OptionError, match="give a PowerSpec or a manager's name, not 3"):
        PolicySpec("snf", power=3)  # type: ignore[arg-type]
