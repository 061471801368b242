"""What sacct records of the resources a job asked (issue 41): ``ReqTRES``, ``ReqMem``,
``ReqCPUS``, ``NCPUS`` and ``NodeList`` of a real Slurm 22.05.8 (tests/fixtures/sacct_tres,
captured from the accounting test cluster: 4 nodes of 4 CPUs and 1000 MB, CR_CPU), read alike
from its text and its JSON."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpcsched.exceptions import InputError
from hpcsched.workload import load_workload
from hpcsched.workload.sacct_json import memory_asked
from hpcsched.workload.sacct_tres import memory_mb, parse_tres

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sacct_tres"
#: the jobs as submitted: sbatch options, then what sacct recorded
#:  1 --mem=600 -n2              ReqMem 600M   ReqTRES cpu=2,mem=600M,node=1    c4
#:  2 --mem-per-cpu=200 -n3      ReqMem 600M   ReqTRES cpu=3,mem=600M,node=1    c3
#:  3 -n1 (no memory asked)      ReqMem 1000M  (its node's whole memory)         c2
#:  4 -N2 -n2 --mem=500          ReqMem 1000M  ReqTRES cpu=2,mem=1000M,node=2   c[1-2]
#:  5 --exclusive -N1            ReqCPUS 1, NCPUS 4                              c4
#:  6 -n5 --mem-per-cpu=100      ReqMem 500M   ReqTRES cpu=5,mem=500M,node=1    c[1-2]


@pytest.mark.parametrize("name", ["cr_cpu-22.05.8.sacct", "cr_cpu-22.05.8.json.gz"])
def test_the_requests_of_a_real_record(name):
    jobs = load_workload(FIXTURES / name).jobs
    assert jobs["cpus"].tolist() == [2, 3, 1, 2, 1, 5]
    assert jobs["req_nodes"].tolist() == [0, 0, 0, 2, 0, 0]
    if name.endswith(".sacct"):
        # the memory in all over the CPUs asked: per CPU as the job asked it, or an equal charge
        np.testing.assert_array_equal(jobs["mem_per_cpu"], [300, 200, 1000, 500, 1000, 100])
        assert jobs["mem_per_node"].isna().all()
    else:
        # the JSON keeps what was asked: job 1's --mem=600 per node (job 4's --mem=500 on two
        # nodes of one CPU each is the same charge either way: read per CPU)
        np.testing.assert_array_equal(jobs["mem_per_cpu"], [np.nan, 200, 1000, 500, 1000, 100])
        np.testing.assert_array_equal(jobs["mem_per_node"], [600, *[np.nan] * 5])
    assert jobs["exclusive"].tolist() == [False, False, False, False, True, False]
    assert jobs["node_list"].tolist() == ["c4", "c3", "c2", "c[1-2]", "c4", "c[1-2]"]
    assert (jobs["gres"] == "").all()


def test_the_json_tells_memory_per_node_from_memory_per_cpu():
    """Submitted on the cons_tres test cluster (CR_Core_Memory, 8 CPUs and 8000 MB a node;
    tests/fixtures/sacct_tres/README.md): where the CPUs divide the memory in all, sacct's text
    cannot tell ``--mem`` from ``--mem-per-cpu`` (jobs 2 and 4 read as 500 and 450 MB a CPU);
    its JSON's ``required.memory`` is the figure asked (1500, 900), which the nodes, not the
    CPUs, multiply to the memory in all."""
    text = load_workload(FIXTURES / "cr_core_memory-22.05.8.sacct").jobs
    json = load_workload(FIXTURES / "cr_core_memory-22.05.8.json").jobs
    assert text["cpus"].tolist() == json["cpus"].tolist() == [3, 3, 4, 4, 2, 1]
    np.testing.assert_array_equal(text["mem_per_cpu"], [700, 500, 500, 450, 4000, 8000])
    assert text["mem_per_node"].isna().all()
    # --mem-per-cpu=700 -n3 | --mem=1500 -n3 | --mem-per-cpu=500 -N2 -n4 | --mem=900 -N2 -n4 |
    # -n2 and --mem=0 -n1 (no memory asked: their node's whole memory, 8000 MB, as the text)
    np.testing.assert_array_equal(json["mem_per_cpu"], [700, np.nan, 500, np.nan, 4000, 8000])
    np.testing.assert_array_equal(json["mem_per_node"], [np.nan, 1500, np.nan, 900, np.nan, np.nan])


@pytest.mark.parametrize(
    ("memory", "tres", "cpus", "asked"),
    [
        (700, "cpu=3,mem=2100M,node=1", 3, "700Mc"),
        (1500, "cpu=3,mem=1500M,node=1", 3, "1500Mn"),
        (900, "billing=4,cpu=4,mem=1800M,node=2", 4, "900Mn"),
        (500, "cpu=2,mem=1000M,node=2", 2, ""),  # a CPU a node: the same charge either way
        (0, "cpu=2,mem=8000M,node=1", 2, ""),  # none asked
        (None, "cpu=2,mem=8000M,node=1", 2, ""),
        (700, "cpu=3,node=1", 3, ""),  # no memory in the TRES
        (700, "cpu=3,mem=2000M,node=1", 3, ""),  # neither multiplies to it
    ],
)
def test_what_the_json_says_of_the_memory_asked(memory, tres, cpus, asked):
    assert memory_asked(memory, tres, cpus) == asked


def test_old_memory_forms_say_per_cpu_or_per_node_and_gpus_spread_over_the_nodes(tmp_path):
    header = "JobIDRaw|Submit|Start|End|Timelimit|NNodes|NCPUS|ReqCPUS|ReqMem|ReqTRES\n"
    t = "2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:10:00|01:00:00"
    text = header + "".join(
        f"{k}|{t}|{line}\n"
        for k, line in enumerate(
            [
                "1|4|4|4000Mc|cpu=4,mem=16000M,node=1",
                "2|8|8|16Gn|cpu=8,mem=32G,node=2,gres/gpu=4",
                "1|2|2||cpu=2,gres/gpu=1,gres/gpu:a100=1,node=1",
            ],
            start=1,
        )
    )
    (tmp_path / "old.sacct").write_text(text)
    jobs = load_workload(tmp_path / "old.sacct").jobs
    np.testing.assert_array_equal(jobs["mem_per_cpu"], [4000, np.nan, np.nan])
    np.testing.assert_array_equal(jobs["mem_per_node"], [np.nan, 16384, np.nan])
    # two nodes: 2 GPUs each; a typed request is kept by its type
    assert jobs["gres"].tolist() == ["", "gpu:2", "gpu:a100:1"]
    assert jobs["req_nodes"].tolist() == [0, 2, 0]


def test_a_memory_its_cpus_do_not_divide_was_asked_per_node(tmp_path):
    """``-n6 --mem=1000`` records 1000M: read per CPU it would be 167 MB a CPU, 1002 MB on the
    node, and a 7000-MB job beside it on an 8000-MB node (which Slurm ran, in a live record of
    benchmarks/slurm_tres_replay.py) would not fit; per node it is exact. A memory the CPUs
    divide stays per CPU (sacct cannot tell which was asked)."""
    header = "JobIDRaw|Submit|Start|End|Timelimit|NNodes|NCPUS|ReqCPUS|ReqMem|ReqTRES\n"
    t = "2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:10:00|01:00:00"
    text = header + "".join(
        f"{k}|{t}|{line}\n"
        for k, line in enumerate(
            [
                "1|6|6|1000M|cpu=6,mem=1000M,node=1",
                "2|7|7|3000M|cpu=7,mem=3000M,node=2",
                "1|3|3|8000M|cpu=3,mem=8000M,node=1",
                "1|6|6|1200M|cpu=6,mem=1200M,node=1",
            ],
            start=1,
        )
    )
    (tmp_path / "mem.sacct").write_text(text)
    jobs = load_workload(tmp_path / "mem.sacct").jobs
    # -N2 -n7 --mem=1500 records 3000M: 1500 on each node; no memory asked: the whole node's
    np.testing.assert_array_equal(jobs["mem_per_node"], [1000, 1500, 8000, np.nan])
    np.testing.assert_array_equal(jobs["mem_per_cpu"], [np.nan, np.nan, np.nan, 200])


def test_a_malformed_memory_or_tres_names_its_field():
    assert memory_mb("4G", "f", "ReqMem") == (4096.0, "")
    assert parse_tres("cpu=2,mem=1.5G", "f") == {"cpu": 2.0, "mem": 1536.0}
    with pytest.raises(InputError, match="is not a memory size") as caught:
        memory_mb("lots", "f", "ReqMem")
    assert caught.value.field == "ReqMem"
    with pytest.raises(InputError, match="is not a TRES") as caught:
        parse_tres("cpu", "f")
    assert caught.value.field == "ReqTRES"
    with pytest.raises(InputError, match="the count of a TRES is a number"):
        parse_tres("cpu=two", "f")
