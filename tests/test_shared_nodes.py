"""Jobs sharing nodes by CPUs, memory and GPUs (issue 41, DESIGN §3.8) through the whole
pipeline: a platform file that says how nodes are shared, the SWF reader's processors and
memory, Slurm's cons_tres placement in the engine, jobs.parquet and the summary; schedules
computed by hand; what does not run on shared nodes yet refused plainly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.exceptions import InputError
from hpcsched.site.platform import parse_platform
from hpcsched.workload import Workload

#: two nodes of 4 CPUs and 8000 MB, CR_Core_Memory; a job giving no memory gets 1000 MB per
#: CPU (the partition's DefMemPerCPU)
SITE = """
name = "mini-shared"
sharing = "cr_core_memory"
[[groups]]
name = "cpu"
nodes = 2
cores = 4
memory = 8000
[[partitions]]
name = "batch"
nodes = "cpu"
default = true
def_mem_per_cpu = 1000
"""

#: processors (field 8) and requested memory (field 10, KB per processor; -1: none)
TRACE = """; MaxNodes: 2
; MaxProcs: 8
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
2 0 -1 100 2 -1 -1 2 100 3072000 1 1 1 1 1 -1 -1 -1
3 0 -1 100 4 -1 -1 4 100 -1 1 1 1 1 1 -1 -1 -1
4 0 -1 50 1 -1 -1 1 50 -1 1 1 1 1 1 -1 -1 -1
5 0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 -1 -1 -1
6 0 -1 30 1 -1 -1 1 30 -1 1 1 1 1 1 -1 -1 -1
"""


@pytest.fixture
def shared_run(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "site.toml").write_text(SITE)
    (tmp_path / "trace.swf").write_text(TRACE)
    return tmp_path / "trace.swf", tmp_path / "site.toml"


def test_a_shared_site_packs_and_backfills_as_computed_by_hand(shared_run, tmp_path):
    """J1 (1 CPU, 1000 MB by default) on n0. J2 (2 CPUs at 3000 MB): n0's 7000 MB feed 2 of
    its 3 free CPUs, n1's 8000 MB 2 of its 4; best fit, first of equals: n0, 6000 MB. J3 (4
    CPUs): n0 offers 1, n1 4: the node that covers it, n1. J4 (1 CPU) fills n0 exactly.
    J5 (2 CPUs) finds nothing free: reserved at 100, when J1-J3 end. J6 (1 CPU, 30 s) starts
    when J4 gives back its CPU at 50, ending by 100. J5 starts at 100 on n0."""
    trace, platform = shared_run
    out = tmp_path / "run"
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform), procs_per_node=4, out=out)
    jobs = result.jobs
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, 0, 0, 0, 100, 50])
    assert jobs["alloc_nodes"].tolist() == ["0", "0", "1", "0", "0", "0"]
    assert jobs["alloc_cpus"].tolist() == [1, 2, 4, 1, 2, 1]
    assert jobs["alloc_memory_mb"].tolist() == [1000, 6000, 4000, 1000, 2000, 1000]
    assert jobs["start_kind"].astype(object).tolist()[4:] == ["primary", "backfill"]
    utilization = result.info["utilization"]
    assert utilization["basis"] == "cpus"
    # CPU-seconds 100 + 200 + 400 + 50 + 200 + 30 over 8 CPUs for 200 s
    assert utilization["overall_uptime"] == pytest.approx(980 / 1600)
    # MB-seconds over 16,000 MB for 200 s
    memory = 1000 * 100 + 6000 * 100 + 4000 * 100 + 1000 * 50 + 2000 * 100 + 1000 * 30
    assert utilization["by_resource"]["memory"] == pytest.approx(memory / 3.2e6)
    batch = result.info["partitions"]["batch"]
    assert batch["utilization"] == pytest.approx(980 / 1600)
    stored = pd.read_parquet(out / "jobs.parquet")
    assert stored["alloc_cpus"].tolist() == [1, 2, 4, 1, 2, 1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["inputs"]["platform"]["sharing"] == "cr_core_memory"


def test_slurms_scheduler_reserves_whole_nodes_where_easy_would_backfill(shared_run, tmp_path):
    """The same jobs under --policy slurm (Slurm's defaults: submission order, a backfill cycle
    every 30 s, bf_resolution 60 s). The main pass at 0 starts J1-J4 as above; J5 fails it, so
    J6 waits for a cycle. The cycle at 0 reserves n0 for J5 at 100 (J1-J3 end together) from 60
    on. J4 ends at 50: the main pass fails at J5 again, and the cycle at 60 finds J6's run [60,
    90] over n0's reservation: J6 is kept off n0, where EASY on vectors started it at 50 beside
    J5's reservation, and starts with J5 at 100 when J1-J3 end."""
    trace, platform = shared_run
    result = hpcsched.simulate(
        trace, "slurm", platform=str(platform), procs_per_node=4, out=tmp_path / "slurm"
    )
    jobs = result.jobs
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, 0, 0, 0, 100, 100])
    assert jobs["alloc_nodes"].tolist() == ["0", "0", "1", "0", "0", "0"]
    assert jobs["alloc_cpus"].tolist() == [1, 2, 4, 1, 2, 1]


def test_gpus_bind_while_cores_are_free_through_the_gres_column():
    """One node of 4 CPUs, 8000 MB and 2 GPUs. J1 takes a GPU; J2 wants both: reserved at 100
    (J1's end); J3 (a GPU, ending after 100) would take the GPU the reservation needs:
    refused until J2 is done; J4 (CPUs only) and J5 (a GPU, ending by 100) backfill."""
    platform = parse_platform(
        SITE.replace("nodes = 2", "nodes = 1").replace(
            "memory = 8000", "memory = 8000\ngres = {gpu = 2}"
        )
    )
    jobs = pd.DataFrame(
        {
            "job_id": np.arange(1, 6),
            "submit": np.zeros(5),
            "run_time": [100.0, 100.0, 500.0, 500.0, 50.0],
            "requested_time": [100.0, 100.0, 500.0, 500.0, 50.0],
            "nodes": np.ones(5, np.int64),
            "user": np.ones(5, np.int64),
            "cpus": [1, 1, 1, 2, 1],
            "mem_per_node": [1000.0] * 5,
            "gres": ["gpu:1", "gpu:2", "gpu", "", "gpu:1"],
        }
    )
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=1), "fcfs", platform=platform)
    np.testing.assert_array_equal(result.jobs["start"].to_numpy(), [0, 100, 200, 0, 0])
    assert result.jobs["alloc_gres"].tolist() == ["gpu=1", "gpu=2", "gpu=1", "", "gpu=1"]
    gpu_seconds = 100 + 200 + 500 + 50
    assert result.info["utilization"]["by_resource"]["gres/gpu"] == pytest.approx(
        gpu_seconds / (2 * 700)
    )


def test_snf_on_shared_nodes_orders_by_cpus_asked(shared_run):
    """SNF by CPUs, then requested time: J6, J4, J1 (1 CPU), J2, J5 (2), J3 (4). J6, J4 and
    J1 fill n0 by best fit (n0 has fewer free than n1), leaving it 1 CPU and 5000 MB. J2 (2 CPUs
    at 3000 MB): n0 offers 1, n1's 8000 MB feed 2: n1. J5 (2 CPUs): n1's last 2. J3 (4 CPUs)
    finds 1 free and SNF stops there: it starts at 100, when J1, J2 and J5 end, on n0."""
    trace, platform = shared_run
    result = hpcsched.simulate(trace, "snf", platform=str(platform), procs_per_node=4)
    jobs = result.jobs
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, 0, 100, 0, 0, 0])
    assert jobs["alloc_nodes"].tolist() == ["0", "1", "0", "0", "1", "0"]
    assert (jobs["start_kind"].astype(object) == "primary").all()


def test_an_exclusive_partition_gives_each_job_whole_nodes(tmp_path):
    platform = parse_platform(SITE.replace("def_mem_per_cpu = 1000", 'oversubscribe = "exclusive"'))
    jobs = pd.DataFrame(
        {
            "job_id": [1, 2, 3],
            "submit": [0.0, 0.0, 0.0],
            "run_time": [100.0] * 3,
            "requested_time": [100.0] * 3,
            "nodes": [1, 1, 1],
            "user": [1, 1, 1],
            "cpus": [1, 1, 1],
            "mem_per_node": [500.0] * 3,
        }
    )
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=2), "fcfs", platform=platform)
    np.testing.assert_array_equal(result.jobs["start"].to_numpy(), [0, 0, 100])
    assert result.jobs["alloc_cpus"].tolist() == [4, 4, 4]
    assert result.jobs["alloc_memory_mb"].tolist() == [500, 500, 500]


def test_a_job_no_node_could_hold_is_refused_at_submission(tmp_path):
    jobs = pd.DataFrame(
        {
            "job_id": [1, 2],
            "submit": [0.0, 0.0],
            "run_time": [100.0] * 2,
            "requested_time": [100.0] * 2,
            "nodes": [1, 1],
            "user": [1, 1],
            "cpus": [1, 1],
            "mem_per_node": [9000.0, 1000.0],
        }
    )
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=2), "fcfs", platform=parse_platform(SITE))
    assert result.jobs["rejected"].astype(object).fillna("-").tolist() == [
        "larger_than_partition",
        "-",
    ]
    assert result.jobs["start"].tolist()[1] == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--policy", "snf", "--max-wait", "3600"], "SNF's maximum wait does not run on shared"),
        (["--policy", "mars", "--arrivals", "recent"], "future arrivals does not run on"),
        (["--estimates", "history"], "EASY on predicted run times"),
    ],
)
def test_what_does_not_run_on_shared_nodes_yet_is_refused_plainly(
    shared_run, tmp_path, capsys, args, says
):
    trace, platform = shared_run
    code = main(
        ["simulate", str(trace), "--platform", str(platform), "--procs-per-node", "4",
         "--out", str(tmp_path / "r"), *args]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert says in " ".join(err.split())
    assert not (tmp_path / "r").exists()


def test_an_outage_of_a_named_node_kills_its_job_which_restarts_when_it_is_back(
    shared_run, tmp_path
):
    """The schedule above, with n1 down over [10, 20): J3 (4 CPUs on n1) is killed at 10
    and requeued first; n0 is full, so it is reserved on n1 at 20, when n1 comes back, and
    starts there. J5 and J6 then go as before (J6 at 50 on J4's CPU, J5 at 100 on n0)."""
    trace, platform = shared_run
    calendar = tmp_path / "down.txt"
    calendar.write_text("10 20 U nodes=1-1 # n1 fails\n")
    result = hpcsched.simulate(
        trace, "fcfs", platform=str(platform), procs_per_node=4, downtime=calendar
    )
    jobs = result.jobs
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, 0, 20, 0, 100, 50])
    assert jobs["alloc_nodes"].tolist() == ["0", "0", "1", "0", "0", "0"]
    lost = result.lost
    assert lost[["job_index", "start", "end"]].values.tolist() == [[2, 0.0, 10.0]]


def test_a_count_of_nodes_down_on_shared_nodes_names_its_line(shared_run, tmp_path):
    trace, platform = shared_run
    calendar = tmp_path / "down.txt"
    calendar.write_text("# maintenance\n10 20 S 1\n")
    with pytest.raises(InputError, match="say which nodes go down") as caught:
        hpcsched.simulate(
            trace, "fcfs", platform=str(platform), procs_per_node=4, downtime=calendar
        )
    assert caught.value.line == 2


def test_slurms_scheduler_keeps_off_an_announced_maintenance_on_shared_nodes(shared_run, tmp_path):
    """Slurm's scheduler (its defaults: submission order) with n0 under maintenance over
    [60, 1000), announced from the start. J1 (1 CPU, 100 s) and J2 (2 CPUs at 3000 MB) would
    run into it on n0: n1 takes them (3 CPUs, 7000 MB). J3 (4 CPUs, 100 s) may not use n0
    either and fails the partition; the backfill cycle at 0 reserves n1 for it from 100. J4
    (1 CPU, 50 s) fits n1's last CPU over [0, 50], before that reservation: started there (best
    fit). J5 (2 CPUs, 100 s) would run into the maintenance on n0 and into J3's reservation on
    n1: it waits. J6 (1 CPU, 30 s) ends before the maintenance: started on n0. J3 starts at
    100 on n1, and J5 after it, at 200: n0 is down until 1000."""
    trace, platform = shared_run
    calendar = tmp_path / "down.txt"
    calendar.write_text("60 1000 S nodes=0-0\n")
    result = hpcsched.simulate(
        trace, "slurm", platform=str(platform), procs_per_node=4, downtime=calendar
    )
    jobs = result.jobs
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, 0, 100, 0, 200, 0])
    assert jobs["alloc_nodes"].tolist() == ["1", "1", "1", "1", "1", "0"]
    kinds = jobs["start_kind"].astype(object).tolist()
    assert [kinds[3], kinds[5]] == ["backfill", "backfill"]


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        (('sharing = "cr_core_memory"', 'sharing = "cr_core_memroy"'), "sharing", "cr_core_memory"),
        (("memory = 8000", ""), "groups[0].memory", "give the group's memory"),
        (("memory = 8000", "memory = 8000\nthreads_per_core = 3"), "groups[0].threads_per_core",
         "not whole cores of 3 threads"),
        (("memory = 8000", 'memory = 8000\ngres = {"gpu a" = 1}'), "groups[0].gres",
         "not a generic resource's name"),
        (("memory = 8000", "memory = 8000\ngres = {gpu = -1}"), "groups[0].gres.gpu", "from 0"),
        (("def_mem_per_cpu = 1000", 'oversubscribe = "force"'), "partitions[0].oversubscribe",
         "which hpcsched does not simulate"),
        (("def_mem_per_cpu = 1000", "def_mem_per_cpu = 1000\ndef_mem_per_node = 5"),
         "partitions[0].def_mem_per_node", "exclude each other"),
    ],
)  # fmt: skip
def test_a_shared_platform_file_names_its_mistakes(change, field, says):
    with pytest.raises(InputError) as caught:
        parse_platform(SITE.replace(*change), "site.toml")
    assert caught.value.field == field
    assert says in str(caught.value)


def test_sharing_needs_node_groups():
    with pytest.raises(InputError, match=r"describe them in \[\[groups\]\]"):
        parse_platform('nodes = 4\nsharing = "cr_cpu"', "p.toml")


def test_a_platform_that_says_nothing_keeps_whole_nodes():
    platform = parse_platform(SITE.replace('sharing = "cr_core_memory"\n', ""))
    assert platform.sharing == "whole" and not platform.shared
    assert "sharing" not in platform.to_dict()


def test_resources_a_run_does_not_follow_are_said_once_in_its_warnings():
    jobs = pd.DataFrame(
        {
            "job_id": [1],
            "submit": [0.0],
            "run_time": [10.0],
            "requested_time": [10.0],
            "nodes": [1],
            "user": [1],
            "cpus": [1],
        }
    )
    capped = parse_platform(SITE.replace("def_mem_per_cpu = 1000", "max_mem_per_node = 4000"))
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=2), "fcfs", platform=capped)
    assert not [w for w in result.info["workload"]["warnings"] if "max_mem_per_node" in w]
    whole = parse_platform(SITE.replace('sharing = "cr_core_memory"\n', ""))
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=2), "fcfs", platform=whole)
    assert (
        "platform mini-shared: the groups' memory is read and not simulated: jobs get whole "
        'nodes (sharing = "whole"; see docs/formats.md)'
    ) in result.info["workload"]["warnings"]
    assert "alloc_cpus" not in result.jobs


def test_the_terminal_summary_says_the_utilization_of_each_resource(shared_run, tmp_path, capsys):
    trace, platform = shared_run
    args = ["simulate", str(trace), "--platform", str(platform), "--procs-per-node", "4"]
    assert main([*args, "--out", str(tmp_path / "r")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # CPU-seconds 980 over 1,600; MB-seconds 1,380,000 over 3,200,000
    assert "utilization of the CPUs │ 61.25% (memory 43.12%)" in out


@pytest.mark.parametrize("over_limits", ["hold", "reject"])
def test_a_job_over_max_mem_per_node_never_starts_and_says_why(over_limits):
    """Example 7 of docs/slurm/cons_tres-22.05.md, checked on a real cluster: DefMemPerCPU 1500
    and MaxMemPerNode 6000. J1 (-n2) takes n0, 3000 MB; J2 (-n4) n1, 6000 MB (n0 has 2 CPUs
    left); J3 (-n1 --mem=7000) asks more a node than the cap: Slurm keeps it pending
    (MaxMemPerLimit; refused at submission under EnforcePartLimits); J4 (-n1) takes n0, 1500
    MB. Whole-node sites never show the reason: their summaries stay as they were."""
    site = SITE.replace("def_mem_per_cpu = 1000", "def_mem_per_cpu = 1500\nmax_mem_per_node = 6000")
    platform = parse_platform(f'over_limits = "{over_limits}"\n' + site)
    jobs = pd.DataFrame(
        {
            "job_id": [1, 2, 3, 4],
            "submit": [0.0, 1.0, 2.0, 3.0],
            "run_time": [100.0] * 4,
            "requested_time": [100.0] * 4,
            "nodes": [1] * 4,
            "user": [1] * 4,
            "cpus": [2, 4, 1, 1],
            "mem_per_node": [np.nan, np.nan, 7000.0, np.nan],
        }
    )
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=2), "fcfs", platform=platform)
    got = result.jobs
    assert got["start"].tolist()[:2] == [0.0, 1.0] and got["start"].tolist()[3] == 3.0
    assert np.isnan(got["start"].tolist()[2])
    assert got["alloc_memory_mb"].tolist() == [3000, 6000, -1, 1500]
    column = "held" if over_limits == "hold" else "rejected"
    assert got[column].astype(object).tolist()[2] == "over_max_mem_per_node"
    summary = result.info["jobs"][column]
    assert summary["by_reason"]["over_max_mem_per_node"] == 1
