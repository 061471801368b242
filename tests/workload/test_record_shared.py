"""The recorded schedule on shared nodes (issue 41, point 7): the real CR_CPU record of the
local test cluster (tests/fixtures/sacct_tres: six jobs on c1-c4 of 4 CPUs, two of them over two
nodes, one exclusive) checked node by node and resource by resource has no conflict; records
changed by hand so that a node holds more than it has, an exclusive job meets another, a job
holds a GPU its node lacks, or a partition's jobs ask more CPUs than it has, are counted, by
resource, for the jobs starting into them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hpcsched.run.shared import native_shared
from hpcsched.site.platform import parse_platform
from hpcsched.workload.record import recorded_schedule
from hpcsched.workload.record_shared import recorded_allocations, shared_conflicts
from hpcsched.workload.sacct import read_sacct

RECORD = Path(__file__).parents[1] / "fixtures" / "sacct_tres" / "cr_cpu-22.05.8.sacct"
NAMES = ["c1", "c2", "c3", "c4"]

#: the cluster as a platform: 4 nodes of 4 CPUs and 4000 MB; a GPU on c3 and c4 (groups in
#: node order)
SITE = """
name = "ci"
sharing = "{sharing}"
[[groups]]
name = "plain"
nodes = 2
cores = 4
memory = 4000
[[groups]]
name = "gpu"
nodes = 2
cores = 4
memory = 4000
gres = {{gpu = 1}}
"""


def check(jobs_changed=None, names=NAMES, sharing="cr_cpu"):
    workload = read_sacct(str(RECORD))
    if jobs_changed is not None:
        workload = replace(workload, jobs=jobs_changed(workload.jobs.copy()))
    platform = parse_platform(SITE.format(sharing=sharing), "site.toml")
    shared = native_shared(workload, platform, None)
    start, end = recorded_schedule(workload.jobs)
    flags, detail = shared_conflicts(
        workload.jobs, start, end, shared, sharing.endswith("_memory"), names, None
    )
    ids = workload.jobs["job_id"].to_numpy()
    return ids[flags].tolist(), detail


def test_the_real_cr_cpu_record_has_no_conflict_node_by_node():
    flagged, detail = check()
    assert flagged == []
    assert detail["checked"] == "per node"
    assert all(r["jobs"] == 0 for r in detail["by_resource"].values())
    # c1-c4 all hold a job from 0 to 4 s
    assert detail["peak_busy_nodes"] == 4
    assert detail["seconds"] == 0.0


def test_a_node_holding_more_cpus_than_it_has_is_a_conflict_of_the_jobs_starting_then():
    # job 3 (1 CPU on c2) moved to c3, where job 2 holds 3 CPUs, and made 2 CPUs: 5 > 4 at 0 s
    def change(jobs):
        jobs.loc[jobs.job_id == 3, ["node_list", "cpus"]] = ["c3", 2]
        return jobs

    flagged, detail = check(change)
    assert flagged == [2, 3]
    assert detail["by_resource"]["cpus"]["jobs"] == 2
    # over from 0 to 4 s (both end at 4), on one node
    assert detail["seconds"] == 4.0
    assert detail["node_seconds"] == 4.0


def test_jobs_over_several_nodes_are_charged_only_what_their_other_nodes_could_not_hold():
    # job 6 (5 CPUs on c1 and c2) holds at least 1 CPU on each: with job 4 (2 CPUs on the
    # same nodes, 1 each at least) and job 3 (1 on c2), c2 holds at least 3: no conflict;
    # made 8 CPUs, job 6 holds 4 on each (what the other node cannot hold): c2 then holds 6
    flagged, _ = check()
    assert flagged == []

    def change(jobs):
        jobs.loc[jobs.job_id == 6, "cpus"] = 8
        return jobs

    flagged, detail = check(change)
    assert flagged == [3, 4, 6]
    assert detail["by_resource"]["cpus"]["jobs"] == 3


def test_an_exclusive_job_meeting_another_on_its_node_is_a_conflict():
    # job 5 (exclusive on c4) started at 4 s when job 1 left c4; recorded from 2 s instead
    def change(jobs):
        jobs.loc[jobs.job_id == 5, "recorded_wait"] = 2.0
        return jobs

    flagged, detail = check(change)
    assert flagged == [5]
    assert detail["by_resource"]["exclusive"]["jobs"] == 1


def test_gpus_and_memory_are_checked_per_node():
    # job 2 asks a GPU on c3 (which has one) and job 3 one on c2 (which has none); under
    # CR_CPU_Memory, job 1 (300 MB per CPU, 2 CPUs: 600 MB) and job 5 (made 3500 MB, one CPU)
    # meet on c4's 4000 MB once job 1 is made to end later
    def change(jobs):
        jobs["gres"] = ""
        jobs.loc[jobs.job_id.isin([2, 3]), "gres"] = "gpu:1"
        jobs.loc[jobs.job_id == 1, "run_time"] = 6.0
        jobs.loc[jobs.job_id == 5, ["exclusive", "mem_per_cpu"]] = [False, 3500.0]
        return jobs

    flagged, detail = check(change, sharing="cr_cpu_memory")
    assert detail["by_resource"]["gres"]["examples"] == [3]
    assert detail["by_resource"]["memory"]["examples"] == [5]
    # (job 5's 1 CPU beside job 1's 2 fits c4's 4)
    assert detail["by_resource"]["cpus"]["jobs"] == 0
    assert flagged == [3, 5]


def test_without_node_names_a_partitions_cpus_are_checked():
    flagged, detail = check(names=None)
    assert flagged == []
    assert detail["checked"] == "per partition"

    # the six jobs asked 2+3+1+2+5 = 13 CPUs at 0 s; 20 more on job 6 make 33 > 16
    def change(jobs):
        jobs.loc[jobs.job_id == 6, "cpus"] = 25
        return jobs

    flagged, detail = check(change, names=None)
    assert flagged == [1, 2, 3, 4, 6]
    assert detail["by_resource"]["cpus"]["jobs"] == 5


def test_the_recorded_jobs_hold_their_cpus_memory_and_gpus():
    workload = read_sacct(str(RECORD))
    platform = parse_platform(SITE.format(sharing="cr_cpu_memory"), "site.toml")
    shared = native_shared(workload, platform, None)
    started = np.ones(len(workload.jobs), bool)
    held = recorded_allocations(workload.jobs, started, shared, 1000)
    # NCPUS as recorded: job 5 was given the 4 CPUs of its node
    assert held["alloc_cpus"].tolist() == [2, 3, 1, 2, 4, 5]
    # memory per CPU over the CPUs asked: 300 x 2, 200 x 3, 1000, 500 x 2, 100 x 5; job 5,
    # exclusive, was given its node's 4 CPUs but only the 1000 MB it asked (AllocTRES)
    assert held["alloc_memory_mb"].tolist() == [600, 600, 1000, 1000, 1000, 500]
    assert held["alloc_gres"].tolist() == [""] * 6
    never = recorded_allocations(workload.jobs, ~started, shared, 1000)
    assert (never["alloc_cpus"] == -1).all()


@pytest.mark.parametrize("text", ["c9", "c[1-"])
def test_a_node_list_the_site_does_not_have_is_checked_by_partition(text):
    def change(jobs):
        jobs.loc[jobs.job_id == 1, "node_list"] = text
        return jobs

    flagged, detail = check(change)
    assert flagged == []
    assert detail["checked"] == "per node and per partition"


#: the test cluster's slurm.conf as scripts/slurm-cluster.sh writes it (nodes and selection)
CLUSTER_CONF = """\
ClusterName=ci
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
NodeName=c[1-4] CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=c[1-4] Default=YES MaxTime=INFINITE State=UP
"""


def test_the_record_replays_node_by_node_from_the_sites_own_files(tmp_path):
    # `--policy recorded` on the record with the cluster's slurm.conf: sacct's NodeList read
    # against its node names, every node checked, no conflict; utilization of the CPUs as sacct
    # gives them (64 CPU-seconds over 16 CPUs for 7 s)
    import hpcsched

    conf = tmp_path / "slurm.conf"
    conf.write_text(CLUSTER_CONF)
    result = hpcsched.simulate(str(RECORD), "recorded", platform=str(conf))
    over = result.info["record"]["conflicts"]["over_capacity"]
    assert over["jobs"] == 0
    assert over["checked"] == "per node"
    assert over["peak_busy_nodes"] == 4
    assert result.info["utilization"]["overall_uptime"] == pytest.approx(64 / 112)


#: two partitions of the shared-notes cluster: c1-c2 of CPUs alone, c3-c4 with 2 GPUs each
TWO_PARTITIONS = """\
ClusterName=tres
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
NodeName=c[1-2] CPUs=8 RealMemory=8000 State=UNKNOWN
NodeName=c[3-4] CPUs=8 RealMemory=8000 Gres=gpu:2 State=UNKNOWN
PartitionName=cpu Nodes=c[1-2] Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=c[3-4] MaxTime=INFINITE State=UP
"""


def test_inspect_shows_each_partitions_cpus_memory_gpus_and_what_jobs_ask(tmp_path, capsys):
    import json

    from hpcsched.cli import main

    conf = tmp_path / "slurm.conf"
    conf.write_text(TWO_PARTITIONS)
    assert main(["inspect", str(RECORD), "--platform", str(conf), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    cpu, gpu = info["site"]["partitions"]["cpu"], info["site"]["partitions"]["gpu"]
    assert (cpu["cpus"], cpu["memory_mb"], cpu["gres"]) == (16, 16000, {})
    assert (gpu["cpus"], gpu["memory_mb"], gpu["gres"]) == (16, 16000, {"gpu": 4})
    # the six jobs (in no partition of this file: the default, cpu) ask 2, 3, 1, 2, 1, 5 CPUs
    # and give their memory; none asks a GPU
    assert cpu["asked"] == {
        "cpus_mean": 14 / 6,
        "cpus_max": 5,
        "jobs_giving_memory": 6,
        "jobs_asking_gres": 0,
    }
    # 64 CPU-seconds (NCPUS) over 32 CPUs for 7 s
    assert info["recorded"]["utilization"] == pytest.approx(64 / 224)
    assert main(["inspect", str(RECORD), "--platform", str(conf)]) == 0
    out = capsys.readouterr().out
    assert "partitions of tres (shared nodes)" in out
    assert "recorded utilization of the CPUs" in out


def test_the_agreement_compares_cpu_utilizations_and_compare_shows_each_resource(tmp_path):
    # FCFS on the cluster's own site (4 nodes of 4 CPUs, CR_CPU): the utilization difference
    # with the record is of the CPUs, the run's (what each job took) against the record's
    # (sacct's NCPUS), both over the span both cover, computed here from the job tables
    import hpcsched
    from hpcsched.experiment import summary_row

    conf = tmp_path / "slurm.conf"
    conf.write_text(CLUSTER_CONF)
    result = hpcsched.simulate(str(RECORD), "fcfs", platform=str(conf))
    jobs, record = result.jobs, result.workload.jobs
    start, end = recorded_schedule(record)
    span = min(jobs["end"].max(), np.nanmax(end))

    def used(first: np.ndarray, last: np.ndarray, cpus: np.ndarray) -> float:
        seconds = np.clip(np.minimum(last, span) - first, 0, None)
        return float((cpus * seconds).sum() / (16 * span))

    simulated = used(
        jobs["start"].to_numpy(), jobs["end"].to_numpy(), jobs["alloc_cpus"].to_numpy()
    )
    recorded = used(start, end, record["procs"].to_numpy())
    agreement = result.info["agreement"]
    assert agreement["utilization_difference"] == pytest.approx(simulated - recorded)
    # a results row carries the other resources' utilization (memory is no resource here)
    row = summary_row(result.info)
    assert "utilization_memory" not in row
    assert set(result.info["utilization"]["by_resource"]) == {"cpus"}
