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
from tests.invariants import check_jobs, check_reservations_honoured, check_shared

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
