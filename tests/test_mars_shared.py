"""MARS where jobs share nodes (issue 42): the Rust case of `crates/core/tests/it/
shared_search.rs` through the whole pipeline (a platform file of two partitions of 4-core
nodes, an SWF trace naming them): MARS-CW drains one partition while the other runs, the same
for any number of threads; and what a look-ahead cannot do there yet is refused plainly."""

from __future__ import annotations

from pathlib import Path

import pytest

import hpcsched
from hpcsched.cli import main
from tests.conftest import write_site_trace

PLATFORM = """
name = "two-shared"
sharing = "cr_core"
[[groups]]
name = "node"
nodes = 2
cores = 4
[[partitions]]
name = "a"
nodes = "0"
default = true
[[partitions]]
name = "b"
nodes = "1"
"""

#: (submit, run = requested, processors, partition): in a, three 1-CPU jobs until 3600, then
#: four 10-hour 1-CPU jobs and a short 4-CPU job L at 10; in b a 2-CPU job at 10, a 4-CPU one
#: at 20.
JOBS = [(0, 3600, 1, 1)] * 3 + [(10, 36000, 1, 1)] * 4 + [(10, 360, 4, 1), (10, 100, 2, 2)]
JOBS += [(20, 50, 4, 2)]


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    return write_site_trace(tmp_path, PLATFORM, JOBS, ("a", "b"), (2, 8))


def mars(threads: int = 1) -> hpcsched.PolicySpec:
    search = hpcsched.SearchSpec(iterations=64, trees=2, seed=3, threads=threads)
    return hpcsched.PolicySpec("mars-cw", search=search)


def test_mars_drains_one_partition_of_shared_nodes_while_the_other_runs(site):
    """FCFS+EASY starts a long job on a's free CPU at 10 and the three others at 3600: L waits
    until 39600. MARS-CW leaves the CPU idle: L runs at 3600 on node 0's four CPUs, the long
    jobs after it; b's jobs start at 10 and 110 (b was not drained)."""
    trace, platform = site
    greedy = hpcsched.simulate(trace, "fcfs", platform=str(platform))
    result = hpcsched.simulate(trace, mars(), platform=str(platform))
    assert greedy.jobs["start"].tolist()[7] == 39600.0
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc[8, "start"] == 3600.0 and jobs.loc[8, "start_kind"] == "drain"
    assert jobs.loc[8, "alloc_nodes"] == "0" and jobs.loc[8, "alloc_cpus"] == 4
    assert jobs.loc[4:7, "start"].tolist() == [3960.0] * 4
    assert jobs.loc[9:10, "start"].tolist() == [10.0, 110.0]
    assert jobs.loc[9, "start_kind"] == "primary"
    assert result.info["search"]["drains"] >= 1
    assert result.info["wait"]["mean"] < greedy.info["wait"]["mean"]
    two = hpcsched.simulate(trace, mars(threads=2), platform=str(platform))
    assert two.jobs.equals(result.jobs)  # the same for any number of threads


def test_future_arrivals_on_shared_nodes_are_refused_naming_the_option(site, capsys):
    trace, platform = site
    args = ["simulate", str(trace), "--platform", str(platform), "--policy", "mars-cw"]
    assert main([*args, "--arrivals", "recent", "--out", str(trace.parent / "r")]) == 2
    err = capsys.readouterr().err
    assert "--arrivals" in err and "future arrivals does not run on" in err
