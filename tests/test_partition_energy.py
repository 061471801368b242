"""Energy by partition (issue 42): each partition's nodes computing, idle (wasted) and in all,
hand-computed on a site whose GPU node draws more, and on Curie with a power model per node
type under an outage of one partition, where the partitions' energies add up to the engine's
own totals (which the engine counts node-second by node-second, apart from the nodes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import hpcsched
from hpcsched.site.platform import parse_platform
from hpcsched.workload import Downtime, DowntimeCalendar, load_workload
from tests.conftest import powered_group, write_site_trace

MWH = 3.6e9


#: batch: 2 CPU nodes (100 W computing, 10 W idle); gpu: 1 node drawing 400 W and 50 W idle
SITE = (
    'name = "two-kinds"\n'
    + powered_group("cpu", 2, 100.0, 10.0)
    + powered_group("gpu", 1, 400.0, 50.0)
    + '[[partitions]]\nname = "batch"\nnodes = "cpu"\ndefault = true\n'
    + '[[partitions]]\nname = "gpu"\nnodes = "gpu"\n'
)


def test_each_partition_counts_its_own_nodes_at_their_own_power(tmp_path):
    """J1 holds both batch nodes over [0, 100), J3 one of them over [100, 160); J2 the GPU node
    over [0, 50). The horizon is the last end, 160 s: batch computes 260 node-seconds (26,000
    J) and idles 60 (600 J); gpu computes 50 (20,000 J) and idles 110 (5,500 J)."""
    jobs = [(0, 100, 2, 1), (0, 50, 1, 2), (0, 60, 1, 1)]
    trace, platform = write_site_trace(tmp_path, SITE, jobs, ("batch", "gpu"), (3, 3))
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform))
    assert result.jobs["start"].tolist() == [0.0, 0.0, 100.0]
    batch, gpu = (result.info["partitions"][p]["energy"] for p in ("batch", "gpu"))
    assert batch["computing_mwh"] * MWH == pytest.approx(26_000)
    assert batch["wasted_mwh"] * MWH == pytest.approx(600)
    assert gpu["computing_mwh"] * MWH == pytest.approx(20_000)
    assert gpu["wasted_mwh"] * MWH == pytest.approx(5_500)
    assert gpu["total_mwh"] * MWH == pytest.approx(25_500)
    # each job's computing energy at its own nodes' power (J2 on the GPU node)
    joules = (result.jobs["energy_kwh"] * 3.6e6).tolist()
    assert joules == pytest.approx([20_000, 20_000, 6_000])
    energy = result.info["energy"]
    assert energy["computing_mwh"] * MWH == pytest.approx(46_000)
    assert energy["wasted_mwh"] * MWH == pytest.approx(6_100)


def test_curie_partitions_add_up_to_the_engines_totals_under_an_outage(traces_dir):
    """Curie's three node types with their own power (thin 300 W, fat 900 W, hybrid with GPUs
    1,200 W computing), its first 20,000 jobs, an outage of the fat nodes (partition large)
    killing jobs: the partitions (disjoint, covering the machine) sum to the engine's
    computing and idle energy."""
    text = (
        'name = "CEA-Curie-powered"\n'
        + powered_group("thin", 5040, 300.0, 90.0, 16)
        + powered_group("fat", 360, 900.0, 250.0, 32)
        + powered_group("hybrid", 144, 1200.0, 300.0, 8)
        + '[[partitions]]\nname = "standard"\nnodes = "thin"\ndefault = true\n'
        + 'aliases = ["Burned"]\n'
        + '[[partitions]]\nname = "large"\nnodes = "fat"\n'
        + '[[partitions]]\nname = "hybrid"\nnodes = "hybrid"\n'
    )
    platform = parse_platform(text)
    workload = load_workload(traces_dir / "pwa" / "CEA-Curie-2011-2.1-cln.swf.gz")
    workload = replace(workload, jobs=workload.jobs.iloc[:20000].reset_index(drop=True))
    o = workload.time_origin
    outage = DowntimeCalendar(
        (Downtime(o + 5e5, o + 6e5, "unscheduled", partition="large", nodes=360),)
    )
    result = hpcsched.simulate(workload, "fcfs", platform=platform, downtime=outage)
    assert len(result.lost) > 0, "the outage killed nothing: it tests nothing"
    parts = [result.info["partitions"][p]["energy"] for p in ("standard", "large", "hybrid")]
    energy = result.info["energy"]
    for key in ("computing_mwh", "idle_mwh"):
        assert sum(p[key] for p in parts) == pytest.approx(energy[key], rel=1e-9)
    # the GPU nodes draw the most per node when computing
    assert parts[2]["computing_mwh"] > 0


def test_no_power_model_no_energy_by_partition(tmp_path):
    plain = Path(tmp_path / "p.toml")
    plain.write_text(
        'name = "plain"\n[[groups]]\nname = "cpu"\nnodes = 2\n'
        '[[partitions]]\nname = "a"\nnodes = "cpu"\ndefault = true\n'
    )
    trace, _ = write_site_trace(tmp_path, plain.read_text(), [(0, 10, 1, 1)], ("a",), (2, 2))
    result = hpcsched.simulate(trace, "fcfs", platform=str(plain))
    assert "energy" not in result.info["partitions"]["a"]
