"""Slurm's TRES in priorities and fair-share (issue 41, point 5): ``TRESBillingWeights``,
``PriorityWeightTRES`` and ``PriorityFlags=MAX_TRES``/``NO_NORMAL_TRES`` read as Slurm 22.05
does (slurm.conf(5), ``slurm_protocol_api.c: _tres_weight_item``,
``assoc_mgr.c: assoc_mgr_tres_weighted``, ``priority_multifactor.c: _get_tres_factors``), the
man page's own billing example computed by hand, and a TRES priority that reorders a queue."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.exceptions import InputError
from hpcsched.site.slurm.conf import read_slurm_conf
from hpcsched.site.slurm.tres import JobTres, billable, parse_weights, tres_columns, tres_priority
from hpcsched.workload import Workload


def test_weights_are_read_per_type_and_memory_units():
    weights = parse_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0", "s.conf", 3, "TRESBillingWeights")
    assert weights == {"cpu": 1.0, "mem": 0.25 / 1024, "gres/gpu": 2.0}
    # quoted, other cases, typed GRES, a negative weight, terabytes
    weights = parse_weights('"cpu=-1,node=4,gres/gpu:a100=3,mem=2T"', "s.conf", 3, "K")
    assert weights == {"cpu": -1.0, "node": 4.0, "gres/gpu:a100": 3.0, "mem": 2 / 1024**2}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("CPU", "TYPE=WEIGHT"),
        ("Foo=1", "not a TRES type"),
        ("GRES=1", "names its resource"),
        ("Mem=1X", "one of M, G, T, P"),
        ("CPU=1G", "only a memory weight may end in a unit"),
        ("CPU=nan", "a number"),
        ("CPU=1e999", "finite"),
    ],
)
def test_a_weight_slurm_cannot_read_names_file_line_and_key(text, says):
    with pytest.raises(InputError, match=says) as caught:
        parse_weights(text, "s.conf", 7, "PriorityWeightTRES")
    assert (caught.value.path, caught.value.line) == ("s.conf", 7)


def one_job(cpus: float, mb: float, gpus: float = 0.0) -> JobTres:
    return JobTres(
        cpu=np.array([cpus]),
        mem=np.array([mb]),
        node=np.array([1.0]),
        gres={"gpu": np.array([gpus])},
    )


def test_the_man_pages_billing_example():
    # "a job allocated 1 CPU and 8 GB ... TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0:
    # (1*1.0) + (8*0.25) + (0*2.0) = 3.0"; with MAX_TRES "MAX(1*1.0, 8*0.25) + (0*2.0) = 2.0"
    weights = parse_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0", "s", 1, "k")
    job = one_job(1, 8192)
    assert billable(job, weights, max_tres=False).tolist() == [3.0]
    assert billable(job, weights, max_tres=True).tolist() == [2.0]
    # with 3 GPUs the GRES term is a node TRES term too (assoc_mgr.c): the largest, 6
    assert billable(one_job(1, 8192, 3), weights, max_tres=True).tolist() == [6.0]
    assert billable(one_job(1, 8192, 3), weights, max_tres=False).tolist() == [9.0]


def test_a_tres_priority_term_is_the_weighted_share_of_the_partition():
    # 4 of a partition's 16 CPUs and 1 of its 2 GPUs: 1000/4 + 3000/2
    totals = {"cpu": 16.0, "mem": 64000.0, "node": 2.0, "gres/gpu": 2.0}
    weights = {"cpu": 1000.0, "gres/gpu": 3000.0}
    job = one_job(4, 1000, 1)
    assert tres_priority(job, weights, totals, normal=True).tolist() == [1750.0]
    # NO_NORMAL_TRES: the amounts themselves
    assert tres_priority(job, weights, totals, normal=False).tolist() == [7000.0]


def test_each_job_is_billed_by_its_first_partitions_weights():
    tres = JobTres(cpu=np.array([2.0, 2.0]), mem=np.zeros(2), node=np.ones(2), gres={})
    columns = tres_columns(tres, {}, [None, {"cpu": 5.0}], np.array([0, 1]), [{}, {}], False, True)
    # partition 0 has no weights: its job is billed its CPUs
    assert columns["job_billing"].tolist() == [2.0, 10.0]
    assert "job_tres_priority" not in columns


#: one node of the shared-notes cluster; multifactor priority whose only weight is GPUs
SITE = """\
ClusterName=tres
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
PriorityType=priority/multifactor
{weight}
NodeName=c1 CPUs=8 RealMemory=8000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=c1 Default=YES MaxTime=INFINITE State=UP
"""


def gpu_order(tmp_path: Path, weight: str) -> list[float]:
    """J1 fills c1's CPUs until 100; J2 (8 CPUs) waits from 1, J3 (8 CPUs and a GPU) from 2."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(SITE.format(weight=weight))
    platform = read_slurm_conf(conf).platform()
    jobs = pd.DataFrame(
        {
            "job_id": [1, 2, 3],
            "submit": [0.0, 1.0, 2.0],
            "run_time": [100.0] * 3,
            "requested_time": [100.0] * 3,
            "nodes": [1, 1, 1],
            "user": [1, 1, 1],
            "cpus": [8, 8, 8],
            "mem_per_node": [1000.0] * 3,
            "gres": ["", "", "gpu:1"],
        }
    )
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=1), "slurm", platform=platform)
    return result.jobs.sort_values("job_id")["start"].tolist()


def test_a_gpu_weight_puts_the_gpu_job_first(tmp_path):
    # no TRES weight: submission order
    assert gpu_order(tmp_path, "") == [0.0, 100.0, 200.0]
    # GRES/gpu=1000: J3 holds 1 of the partition's 2 GPUs: 500 points over J2's none
    assert gpu_order(tmp_path, "PriorityWeightTRES=GRES/gpu=1000") == [0.0, 200.0, 100.0]


def test_tres_slurm_does_not_track_here_are_said(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        SITE.format(weight="PriorityWeightTRES=CPU=10,Energy=5\nPriorityFlags=MAX_TRES")
    )
    notes = read_slurm_conf(conf).platform().notes
    assert any("energy" in n and "does not track" in n for n in notes)
    assert not any("MAX_TRES" in n for n in notes)
    assert not any("PriorityWeightTRES is not simulated" in n for n in notes)
