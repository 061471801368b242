"""Python policies where jobs share nodes (issue 42): the view's resources (each node's free
CPUs, memory and GPUs, each waiting job's request, where it fits now), a policy that only
orders (the engine places), one that names the nodes of a start (accepted), and an
impossible choice (refused: exit 2, naming the policy), on hand-computed cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import hpcsched
from hpcsched.cli import main
from hpcsched.protocol import Decision, View
from tests.conftest import write_site_trace

#: Two partitions of one node each (4 cores, 8000 MB, 2 GPUs), CR_Core_Memory, 1000 MB per
#: CPU by default.
PLATFORM = """
name = "two-gpu"
sharing = "cr_core_memory"
[[groups]]
name = "node"
nodes = 2
cores = 4
memory = 8000
gres = { gpu = 2 }
[[partitions]]
name = "a"
nodes = "0"
default = true
def_mem_per_cpu = 1000
[[partitions]]
name = "b"
nodes = "1"
def_mem_per_cpu = 1000
"""

#: (submit, run, processors, partition): J1 (a, 2 CPUs) and J2 (b, 1 CPU) at 0; J3 (b, 2
#: CPUs) at 5.
JOBS = [(0, 100, 2, 1), (0, 100, 1, 2), (5, 50, 2, 2)]


def write_site(folder: Path) -> tuple[Path, Path]:
    return write_site_trace(folder, PLATFORM, JOBS, ("a", "b"), (2, 8))


class Recorder:
    """Starts nothing by itself: orders the queue by FCFS and keeps the views."""

    name = "recorder"

    def __init__(self) -> None:
        self.views: list[View] = []

    def decide(self, view: View) -> Decision:
        self.views.append(view)
        return Decision(order=list(view.queue))


def test_the_view_gives_free_resources_requests_and_where_each_job_fits(tmp_path):
    trace, platform = write_site(tmp_path)
    policy = Recorder()
    ordered = hpcsched.simulate(trace, policy, platform=str(platform))
    fcfs = hpcsched.simulate(trace, "fcfs", platform=str(platform))
    # ordering only: the engine places, as FCFS+EASY does
    assert ordered.jobs["alloc_nodes"].tolist() == fcfs.jobs["alloc_nodes"].tolist()
    assert ordered.jobs["start"].tolist() == [0.0, 0.0, 5.0]
    first, second = policy.views[0], policy.views[1]
    assert first.gres_kinds == ("gpu",)
    np.testing.assert_array_equal(first.node_free_cpus, [4, 4])
    np.testing.assert_array_equal(first.node_free_memory, [8000, 8000])
    np.testing.assert_array_equal(first.node_free_gres, [[2], [2]])
    np.testing.assert_array_equal(first.queue_tasks, [2, 1])
    assert first.queue_fit_nodes == ("0", "1")
    np.testing.assert_array_equal(first.fits(0), [0])
    # at 5: J1 holds 2 CPUs of node 0, J2 1 CPU of node 1; J3 (b, 2 CPUs) fits on node 1
    assert second.now == 5.0
    np.testing.assert_array_equal(second.node_free_cpus, [2, 3])
    np.testing.assert_array_equal(second.queue, [2])
    np.testing.assert_array_equal(second.fits(2), [1])
    assert not second.node_free_cpus.flags.writeable


class NodeChooser:
    """Starts every waiting job at once, each on the nodes ``nodes[job]`` names."""

    name = "chooser"

    def __init__(self, nodes: dict[int, list[int]]) -> None:
        self.nodes = nodes

    def decide(self, view: View) -> Decision:
        jobs = [int(j) for j in view.queue if view.fits(int(j)) is not None]
        return Decision(start=jobs, nodes={j: self.nodes[j] for j in jobs if j in self.nodes})


def test_a_policy_that_names_the_nodes_of_a_start_is_placed_there(tmp_path):
    trace, platform = write_site(tmp_path)
    result = hpcsched.simulate(trace, NodeChooser({1: [1], 2: [1]}), platform=str(platform))
    assert result.jobs["alloc_nodes"].tolist() == ["0", "1", "1"]
    assert result.jobs["alloc_cpus"].tolist() == [2, 1, 2]


BAD_POLICY = """
from hpcsched.protocol import Decision


class OnTheOtherPartition:
    name = "elsewhere"

    def decide(self, view):
        # job index 0 belongs to partition a (node 0): node 1 is not its partition's
        return Decision(start=[0], nodes={0: [1]}) if 0 in view.queue else Decision()
"""


def test_an_impossible_choice_of_nodes_is_refused_naming_the_policy(tmp_path, capsys):
    trace, platform = write_site(tmp_path)
    (tmp_path / "bad.py").write_text(BAD_POLICY)
    code = main(
        [
            "simulate",
            str(trace),
            "--platform",
            str(platform),
            "--policy",
            f"python:{tmp_path / 'bad.py'}:OnTheOtherPartition",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "elsewhere at t=0" in err
    assert "fits in none of its partitions now among the nodes named for it" in err
    assert not (tmp_path / "run").exists()
