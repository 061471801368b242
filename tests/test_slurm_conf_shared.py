"""A slurm.conf whose jobs share nodes (issue 41, points 2 and 6): ``SelectType=select/cons_tres``
(or ``cons_res``) and its ``SelectTypeParameters`` read as the platform's sharing, each
``NodeName`` line's CPUs, threads per core, specialized cores, memory, Gres and Weight as
slurmctld 22.05 counts them, the partitions' memory defaults and OverSubscribe, and runs on such a
site. Every expected value is worked out here from slurm.conf(5) and the rules of
``src/common/read_config.c`` and ``node_conf.c`` (docs/semantics.md, "A site from slurm.conf"),
not read from the code's output."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.site.platform import parse_platform
from hpcsched.site.slurm.conf import read_slurm_conf
from hpcsched.workload import Workload

#: The cluster of /work/shared/notes/slurm-tres-cluster.md (checked live with Slurm 22.05.8).
TRES = """\
ClusterName=tres
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
NodeName=c[1-4] CPUs=8 RealMemory=8000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=c[1-4] Default=YES MaxTime=INFINITE State=UP
"""


def write(folder: Path, text: str) -> Path:
    path = folder / "slurm.conf"
    path.write_text(text)
    return path


def test_the_tres_cluster_is_four_nodes_of_8_cpus_8000_mb_and_2_gpus(tmp_path):
    platform = read_slurm_conf(write(tmp_path, TRES)).platform()
    assert platform.sharing == "cr_core_memory" and platform.shared
    (group,) = platform.groups
    assert (group.nodes, group.cores, group.threads_per_core) == (4, 8, 1)
    assert (group.memory, group.gres, group.weight) == (8000, (("gpu", 2),), 1)
    assert platform.site is not None
    (debug,) = platform.site.partitions
    assert (debug.ranges, debug.exclusive, debug.def_mem_per_cpu) == (((0, 4),), False, None)
    assert platform.notes == ()  # (every key of the file is followed)


#: (a NodeName line's keys, its CPUs jobs may use, CPUs per core, memory, Gres, Weight), by
#: slurm.conf(5) and read_config.c/node_conf.c (docs/semantics.md, "A site from slurm.conf")
NODE_LINES = [
    # 8 CPUs and nothing else: 8 sockets of one core
    ("CPUs=8 RealMemory=8000 Gres=gpu:2", 8, 1, 8000, (("gpu", 2),), 1),
    # 2 x 8 x 2 = 32 CPUs on 16 cores: 2 threads a core; 2 cores kept = 4 CPUs; 256000 - 6000 MB
    (
        "Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=256000 MemSpecLimit=6000 "
        "CoreSpecCount=2 Gres=gpu:a100:4 Weight=10",
        28, 2, 250000, (("gpu:a100", 4),), 10,
    ),
    # CPUs = the cores (16) of a hyperthreaded node: each CPU is a core, 1 thread a core
    ("CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=64000", 16, 1, 64000, (), 1),
    # 2 boards x 2 sockets x 4 cores x 2 threads = 32 CPUs; CPUs 0 and 1 are core 0, CPU 5 core
    # 2: two cores (4 CPUs) kept
    (
        "Boards=2 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=2 CpuSpecList=0,1,5 "
        "RealMemory=1000",
        28, 2, 1000, (), 1,
    ),
    # Sockets counts the node's sockets in all, Boards or not (read_config.c): 4 x 4
    ("Boards=2 Sockets=4 CoresPerSocket=4 RealMemory=1000", 16, 1, 1000, (), 1),
    # 12 CPUs, 2 threads a core: 6 sockets of one core inferred, 2 threads each
    ("CPUs=12 ThreadsPerCore=2 RealMemory=1000", 12, 2, 1000, (), 1),
    # 4 CPUs on 4 cores of 2 threads (one socket): CPUs are cores
    ("CPUs=4 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=1000", 4, 1, 1000, (), 1),
    ("Procs=4 RealMemory=1000", 4, 1, 1000, (), 1),
    # types, a socket binding, another GRES; INFINITE is the highest weight less one
    (
        "CPUs=8 RealMemory=1000 Gres=gpu:a100:2,gpu:v100:1(S:1),mps:400 Weight=INFINITE",
        8, 1, 1000, (("gpu:a100", 2), ("gpu:v100", 1), ("mps", 400)), 4294967294,
    ),
    # a type without a count is one; K is 1024; the same kind twice adds up
    ("CPUs=8 RealMemory=1000 Gres=gpu:tesla,gpu:kepler:2K", 8, 1, 1000,
     (("gpu:tesla", 1), ("gpu:kepler", 2048)), 1),
    ("CPUs=8 RealMemory=1000 Gres=gpu:4,gpu:1 Weight=0", 8, 1, 1000, (("gpu", 5),), 0),
]  # fmt: skip


@pytest.mark.parametrize(("keys", "cpus", "tpc", "memory", "gres", "weight"), NODE_LINES)
def test_a_node_line_is_read_as_slurmctld_counts_it(
    tmp_path, keys, cpus, tpc, memory, gres, weight
):
    text = f"SelectType=select/cons_tres\nGresTypes=gpu,mps\nNodeName=n1 {keys}\n"
    platform = read_slurm_conf(write(tmp_path, text + "PartitionName=p Nodes=ALL\n")).platform()
    (group,) = platform.groups
    assert (group.cores, group.threads_per_core, group.memory) == (cpus, tpc, memory)
    assert (group.gres, group.weight) == (gres, weight)


def test_consecutive_nodes_alike_form_one_group(tmp_path):
    """Alike: the same CPUs, memory, Gres, weight and features; a name taken is numbered."""
    text = (
        "SelectType=select/cons_tres\nGresTypes=gpu\n"
        "NodeName=a[1-2] CPUs=8 RealMemory=8000\n"
        "NodeName=a[3-4] CPUs=8 RealMemory=8000\n"
        "NodeName=b1 CPUs=8 RealMemory=8000 Weight=5\n"
        "NodeName=c1 CPUs=8 RealMemory=4000\n"
        "NodeName=g[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
        "NodeName=a5 CPUs=8 RealMemory=8000\n"
        "PartitionName=p Nodes=ALL\n"
    )
    platform = read_slurm_conf(write(tmp_path, text)).platform()
    assert [(g.name, g.nodes, g.memory, g.weight) for g in platform.groups] == [
        ("cpus8", 4, 8000, 1),
        ("cpus8-2", 1, 8000, 5),
        ("cpus8-3", 1, 4000, 1),
        ("cpus8-gpu:2", 2, 8000, 1),
        ("cpus8-4", 1, 8000, 1),
    ]
    assert platform.nodes == 9


@pytest.mark.parametrize(
    ("lines", "sharing", "said"),
    [
        ("", "whole", None),
        ("SelectType=select/linear", "whole", None),
        (
            "SelectType=select/cons_tres",
            "cr_core_memory",
            "line 1: select/cons_tres without SelectTypeParameters: Slurm 22.05's default "
            "CR_Core_Memory (cores and memory are resources)",
        ),
        ("SelectType=select/cons_res", "cr_core_memory", "select/cons_res without"),
        ("SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU", "cr_cpu", None),
        ("SelectType=select/cons_tres\nSelectTypeParameters=cr_cpu_memory", "cr_cpu_memory", None),
        ("SelectType=select/cons_res\nSelectTypeParameters=CR_Core", "cr_core", None),
        (
            "SelectType=select/cons_tres\nSelectTypeParameters=CR_Socket_Memory",
            "cr_core_memory",
            "line 2: CR_Socket_Memory is read as CR_Core_Memory (sockets are not modelled",
        ),
        (
            "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core,CR_LLN,CR_Pack_Nodes",
            "cr_core",
            "line 2: SelectTypeParameters read and not simulated (ignored): CR_LLN, CR_Pack_Nodes",
        ),
        (
            "SelectType=select/cray_aries",
            "whole",
            "line 1: select/cray_aries is read as the select/linear it runs on by default",
        ),
    ],
)
def test_select_type_and_its_parameters_are_the_sharing(tmp_path, lines, sharing, said):
    text = f"{lines}\nNodeName=n1 CPUs=4 RealMemory=1000\nPartitionName=p Nodes=ALL\n"
    conf = write(tmp_path, text.lstrip("\n"))
    platform = read_slurm_conf(conf).platform()
    assert platform.sharing == sharing
    if said is not None:
        assert any(n.startswith(f"{conf}, ") and said in n for n in platform.notes), platform.notes


def test_partitions_take_their_memory_rules_or_the_files(tmp_path):
    """A job's default memory is its partition's DefMemPerNode, else its DefMemPerCPU, else the
    file's; 0 is no default, but a partition's DefMemPerCPU=0 hides the file's (Slurm's
    per-CPU flag makes it a value). MaxMemPerNode likewise; a partition's MaxMemPerCPU hides the
    file's MaxMemPerNode. EXCLUSIVE takes whole nodes; FORCE is read as NO, and said."""
    text = (
        "SelectType=select/cons_tres\n"
        "DefMemPerCPU=2000\n"
        "MaxMemPerNode=100000\n"
        "NodeName=n[1-4] CPUs=8 RealMemory=200000\n"
        "PartitionName=DEFAULT MaxTime=60\n"
        "PartitionName=inherit Nodes=ALL Default=YES\n"
        "PartitionName=pernode Nodes=n[1-2] DefMemPerNode=16000 MaxMemPerCPU=4000\n"
        "PartitionName=none Nodes=n[3-4] DefMemPerCPU=0 MaxMemPerNode=0 OverSubscribe=EXCLUSIVE\n"
        "PartitionName=forced Nodes=n1 Shared=FORCE:4\n"
    )
    conf = write(tmp_path, text)
    platform = read_slurm_conf(conf).platform()
    assert platform.site is not None
    got = {
        p.name: (p.def_mem_per_cpu, p.def_mem_per_node, p.max_mem_per_node, p.exclusive)
        for p in platform.site.partitions
    }
    assert got == {
        "inherit": (2000, None, 100000, False),
        "pernode": (None, 16000, None, False),
        "none": (None, None, 100000, True),
        "forced": (2000, None, 100000, False),
    }
    assert (
        f"{conf}, line 9: OverSubscribe=YES or FORCE read and not simulated (partition forced): "
        "read as NO, no CPU is shared by two jobs"
    ) in platform.notes
    assert (
        f"{conf}: PartitionName keys read and not simulated (ignored): MaxMemPerCPU (line 7)"
    ) in platform.notes


KEYS = """\
SelectType={select}
SelectTypeParameters=CR_Core_Memory
DefMemPerGPU=100
NodeName=n[1-2] CPUs=8 RealMemory=8000 CoreSpecCount=1 MemSpecLimit=500 Weight=3 TmpDisk=100
PartitionName=p Nodes=ALL DefMemPerCPU=1000 MaxCPUsPerNode=4 OverSubscribe=NO
"""


def test_keys_followed_on_shared_nodes_are_no_longer_said_as_not_simulated(tmp_path):
    conf = write(tmp_path, KEYS.format(select="select/cons_tres"))
    platform = read_slurm_conf(conf).platform()
    assert platform.notes == (
        f"{conf}: settings read and not simulated (ignored): DefMemPerGPU (line 3)",
        f"{conf}: NodeName keys read and not simulated (ignored): TmpDisk (line 4)",
        f"{conf}: PartitionName keys read and not simulated (ignored): MaxCPUsPerNode (line 5)",
    )
    (group,) = platform.groups
    assert (group.cores, group.memory, group.weight) == (7, 7500, 3)  # (a core, 500 MB kept)


def test_on_whole_nodes_the_same_keys_are_said_as_before(tmp_path):
    conf = write(tmp_path, KEYS.format(select="select/linear"))
    platform = read_slurm_conf(conf).platform()
    assert platform.sharing == "whole"
    assert platform.notes == (
        f"{conf}: settings read and not simulated (ignored): SelectTypeParameters (line 2), "
        "DefMemPerGPU (line 3)",
        f"{conf}: NodeName keys read and not simulated (ignored): CoreSpecCount (line 4), "
        "MemSpecLimit (line 4), Weight (line 4), TmpDisk (line 4)",
        f"{conf}: PartitionName keys read and not simulated (ignored): DefMemPerCPU (line 5), "
        "MaxCPUsPerNode (line 5), OverSubscribe (line 5)",
        f"{conf}, line 4: the nodes' RealMemory read and not simulated: jobs get whole nodes "
        "(SelectType=select/linear, Slurm's default: say select/cons_tres for nodes shared by "
        "CPUs, memory and GPUs)",
    )
    (group,) = platform.groups
    assert (group.cores, group.memory, group.weight) == (8, 0, 1)


def test_what_slurm_reads_differently_is_said_once(tmp_path):
    """Without RealMemory a node has Slurm's 1 MB; a Gres not in GresTypes is left out, as
    slurmctld leaves it; a no_consume one is not simulated."""
    text = (
        "SelectType=select/cons_tres\nGresTypes=gpu\n"
        "NodeName=a[1-2] CPUs=4\nNodeName=b1 CPUs=4 Weight=2\n"
        "NodeName=g1 CPUs=4 RealMemory=1000 Gres=gpu:1,mps:100,bw:lustre:no_consume:4G\n"
        "PartitionName=p Nodes=ALL\n"
    )
    conf = write(tmp_path, text)
    platform = read_slurm_conf(conf).platform()
    assert [(g.nodes, g.memory, g.gres) for g in platform.groups] == [
        (2, 1, ()), (1, 1, ()), (1, 1000, (("gpu", 1),))
    ]  # fmt: skip
    notes = [n for n in platform.notes if "select/cons_tres without" not in n]
    assert notes == [
        f"{conf}, line 3: RealMemory not given (and 1 more NodeName lines): Slurm's default of "
        "1 MB a node; memory is a resource (CR_Core_Memory), so a job asking for memory fits no "
        "such node (one asking none takes its 1 MB)",
        f"{conf}, line 5: Gres mps is not in GresTypes=gpu (line 2): Slurm leaves it out of the "
        "nodes, and so does the simulation (a job asking for it fits nowhere)",
        f"{conf}, line 5: Gres bw is no_consume: not simulated (left out of the nodes: a job "
        "asking for it fits nowhere)",
    ]


EQUIVALENT_CONF = """\
ClusterName=eq
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
DefMemPerCPU=1000
NodeName=cpu[1-4] Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=128000 MemSpecLimit=8000
NodeName=gpu[1-2] CPUs=32 RealMemory=256000 Gres=gpu:a100:4 Weight=10
PartitionName=batch Nodes=cpu[1-4] Default=YES MaxTime=1-00:00:00
PartitionName=gpu Nodes=gpu[1-2] DefMemPerNode=64000 MaxMemPerNode=200000 OverSubscribe=EXCLUSIVE
"""
#: The same site as a platform file, written from docs/formats.md: 2 x 8 cores of 2 threads
#: (32 CPUs) with 128000 - 8000 MB; 32 one-thread CPUs, 256000 MB, 4 A100 and weight 10
EQUIVALENT_TOML = """\
name = "eq"
sharing = "cr_core_memory"
over_limits = "hold"
[[groups]]
name = "cpus32"
nodes = 4
cores = 32
threads_per_core = 2
memory = 120000
[[groups]]
name = "cpus32-gpu:a100:4"
nodes = 2
cores = 32
memory = 256000
gres = {"gpu:a100" = 4}
weight = 10
[[partitions]]
name = "batch"
nodes = "cpus32"
default = true
max_time = "1-00:00:00"
def_mem_per_cpu = 1000
[[partitions]]
name = "gpu"
nodes = "cpus32-gpu:a100:4"
def_mem_per_node = 64000
max_mem_per_node = 200000
oversubscribe = "exclusive"
"""


def test_a_shared_slurm_conf_is_the_platform_file_of_the_same_site(tmp_path):
    """The platform of the slurm.conf and that of its platform file are equal (but for their
    source, notes and Slurm settings), and so are their exports (summary.json's)."""
    from_conf = read_slurm_conf(write(tmp_path, EQUIVALENT_CONF)).platform()
    from_toml = parse_platform(EQUIVALENT_TOML, "eq.toml")
    assert replace(from_conf, source="eq.toml", notes=(), slurm=None) == from_toml
    exported = {k: v for k, v in from_conf.to_dict().items() if k != "source"}
    assert exported == {k: v for k, v in from_toml.to_dict().items() if k != "source"}


#: Seven jobs at time 0, 100 s each (SWF: processors in fields 5 and 8, KB per processor in
#: field 10; -1: no memory asked, so each such job asks its nodes' whole memory, as Slurm)
TRACE = """\
1 0 -1 100 3 -1 -1 3 100 1024000 1 1 1 1 1 -1 -1 -1
2 0 -1 100 3 -1 -1 3 100 1024000 1 1 1 1 1 -1 -1 -1
3 0 -1 100 2 -1 -1 2 100 1024000 1 1 1 1 1 -1 -1 -1
4 0 -1 100 4 -1 -1 4 100 512000 1 1 1 1 1 -1 -1 -1
5 0 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
6 0 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
7 0 -1 100 8 -1 -1 8 100 102400 1 1 1 1 1 -1 -1 -1
"""


def test_fcfs_on_the_tres_cluster_packs_jobs_onto_nodes(tmp_path, capsys):
    """By the placement of docs/semantics.md ("Resources inside nodes"): J1 (3 CPUs at 1000 MB)
    takes c1 (every node covers it: the first); J2 (3) and J3 (2) fill c1's fewest-but-enough
    CPUs (5, then 2: c1 is full, 8 CPUs and 8000 MB). J4 (4 at 500 MB) takes c2. J5 and J6 ask
    every MB of a node: only nodes holding no memory take them, c3 then c4. J7 (8 CPUs at 100
    MB) finds c2's 4 CPUs only (c3 and c4 have no memory left): it starts at 100 on c1."""
    trace = tmp_path / "t.swf"
    trace.write_text(TRACE)
    conf = write(tmp_path, TRES)
    out = tmp_path / "run"
    args = ["simulate", str(trace), "--slurm-conf", str(conf), "--policy", "fcfs"]
    assert main([*args, "--out", str(out)]) == 0, capsys.readouterr().err
    jobs = pd.read_parquet(out / "jobs.parquet").sort_values("job_id")
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, 0, 0, 0, 0, 0, 100])
    assert jobs["alloc_nodes"].tolist() == ["0", "0", "0", "1", "2", "3", "0"]
    assert jobs["alloc_cpus"].tolist() == [3, 3, 2, 4, 1, 1, 8]
    assert jobs["alloc_memory_mb"].tolist() == [3000, 3000, 2000, 2000, 8000, 8000, 800]


def test_gpus_of_the_tres_cluster_bind_as_its_gres_says(tmp_path):
    """The jobs of slurm-tres-cluster.md, in this order: five of 2 CPUs, 3000 MB and a GPU,
    three of 3 CPUs and 1000 MB, one -N1 --exclusive. G1, G2 fill c1's GPUs (fewest CPUs that
    cover them: c1 after G1); G3, G4 c2's; G5 takes c3. C1 (3 CPUs): c1 and c2 offer 4, c3 6,
    c4 8: c1. C2: c2 (4). C3: c3 (6). The exclusive job has c4, the only idle node, with all
    its CPUs and GPUs and every MB (it asked none)."""
    platform = read_slurm_conf(write(tmp_path, TRES)).platform()
    n = 9
    jobs = pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1),
            "submit": np.zeros(n),
            "run_time": np.full(n, 20.0),
            "requested_time": np.full(n, 60.0),
            "nodes": np.ones(n, np.int64),
            "user": np.ones(n, np.int64),
            "cpus": [2] * 5 + [3] * 3 + [1],
            "req_nodes": [0] * 8 + [1],
            "mem_per_node": [3000.0] * 5 + [1000.0] * 3 + [np.nan],
            "gres": ["gpu:1"] * 5 + [""] * 4,
            "exclusive": [False] * 8 + [True],
        }
    )
    result = hpcsched.simulate(Workload(jobs=jobs, nodes=4), "fcfs", platform=platform)
    got = result.jobs.sort_values("job_id")
    assert (got["start"] == 0).all()
    assert got["alloc_nodes"].tolist() == ["0", "0", "1", "1", "2", "0", "1", "2", "3"]
    assert got["alloc_cpus"].tolist() == [2, 2, 2, 2, 2, 3, 3, 3, 8]
    assert got["alloc_gres"].tolist() == ["gpu=1"] * 5 + [""] * 3 + ["gpu=2"]
    assert got["alloc_memory_mb"].tolist() == [3000] * 5 + [1000] * 3 + [8000]
