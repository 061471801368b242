"""Invariants of runs on shared nodes on real traces (issue 41): Curie as cores (its three node
types and partitions, examples/platforms/curie-cores.toml) and HPC2N on nodes of its two
processors shared by them, under every queue heuristic with and without EASY, SNF and Slurm's
scheduler (its defaults); with overrun kill, every reservation EASY makes on the vectors is
honoured."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import hpcsched
from hpcsched.site.platform import load_platform, parse_platform
from hpcsched.workload import load_workload
from tests.invariants import (
    check_jobs,
    check_reservations_honoured,
    check_shared,
    check_shared_downtime,
)

REPO = Path(__file__).resolve().parents[1]
#: HPC2N (Seth): 120 nodes of 2 processors (the archive's page; its header counts 240
#: processors as nodes), shared by cores
HPC2N_CORES = """
name = "HPC2N-cores"
sharing = "cr_core"
[[groups]]
name = "seth"
nodes = 120
cores = 2
"""
CASES = {
    "curie": ("CEA-Curie-2011-2.1-cln.swf.gz", 20000, None),
    "hpc2n": ("HPC2N-2002-2.2-cln.swf.gz", 20000, HPC2N_CORES),
}


def _run(traces_dir: Path, case: str, policy: str, backfill: str | None, overrun: str = "continue"):
    name, jobs, text = CASES[case]
    platform = (
        parse_platform(text)
        if text
        else load_platform(REPO / "examples/platforms/curie-cores.toml")
    )
    # (one pool: the workload read for the platform's nodes, in its cores)
    sized = {"procs_per_node": 2, "nodes": 120} if text else {}
    workload = load_workload(traces_dir / "pwa" / name, **sized)
    workload = replace(workload, jobs=workload.jobs.iloc[:jobs].reset_index(drop=True))
    result = hpcsched.simulate(
        workload, policy, backfill=backfill, platform=platform, overrun=overrun
    )
    return result, platform


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize(
    ("policy", "backfill"),
    [
        ("fcfs", "easy"),
        ("fcfs", "none"),
        ("wfp3", "easy"),
        ("sjf", "easy"),
        ("f1", "easy"),
        ("snf", None),
        ("slurm", None),
    ],
)
def test_every_heuristic_keeps_the_shared_invariants(traces_dir, case, policy, backfill):
    result, platform = _run(traces_dir, case, policy, backfill)
    check_jobs(result)
    check_shared(result, platform, result.workload.jobs["procs"].to_numpy())
    assert result.info["utilization"]["basis"] == "cpus"


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_easy_on_vectors_honours_every_reservation_on_real_traces(traces_dir, case):
    result, platform = _run(traces_dir, case, "fcfs", "easy", overrun="kill")
    check_jobs(result, overrun="kill")
    check_shared(result, platform, result.workload.jobs["procs"].to_numpy())
    assert len(result.reservations) > 0
    check_reservations_honoured(result)
    assert result.info["jobs"]["start_kinds"]["backfill"] > 0


#: Curie as cores: maintenance of 500 thin nodes (announced 48 h ahead), an outage of 40 fat
#: nodes and one of every hybrid node, over the first weeks of the trace (its clock)
CURIE_WINDOWS = [
    (3 * 86400.0, 3 * 86400.0 + 8 * 3600, 1000, 1499, "S"),
    (6 * 86400.0, 6 * 86400.0 + 4 * 3600, 5100, 5139, "U"),
    (9 * 86400.0, 9 * 86400.0 + 2 * 3600, 5400, 5543, "U"),
    (12 * 86400.0, 12 * 86400.0 + 24 * 3600, 0, 5039, "S"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("policy", "backfill"), [("fcfs", "easy"), ("sjf", "easy"), ("snf", None)])
def test_downtime_on_shared_nodes_keeps_the_invariants_on_curie(
    traces_dir, tmp_path, policy, backfill
):
    """Windows of named nodes over Curie as cores: no job that ran to its end held a node
    while it was down, the killed attempts ended at a window's start, every job ran once
    to its end, and the shared invariants hold."""
    platform = load_platform(REPO / "examples/platforms/curie-cores.toml")
    workload = load_workload(traces_dir / "pwa" / CASES["curie"][0])
    workload = replace(workload, jobs=workload.jobs.iloc[:20000].reset_index(drop=True))
    # (a calendar is in the trace's clock; the windows below in the replay's)
    o = workload.time_origin
    calendar = tmp_path / "curie-down.txt"
    calendar.write_text(
        "".join(f"{o + a} {o + b} {k} nodes={f}-{t}\n" for a, b, f, t, k in CURIE_WINDOWS)
    )
    result = hpcsched.simulate(
        workload, policy, backfill=backfill, platform=platform, downtime=calendar
    )
    check_jobs(result)
    check_shared(result, platform, result.workload.jobs["procs"].to_numpy())
    check_shared_downtime(result, [(a, b, f, t) for a, b, f, t, _ in CURIE_WINDOWS])
    assert len(result.lost) > 0, "no window killed anything: the calendar tests nothing"
    assert result.info["downtime"]["outside_run"] == 0
