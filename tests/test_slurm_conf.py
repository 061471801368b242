"""A site from a slurm.conf (issue 30, point 2): two realistic site files written for the tests
(overlapping partitions, GPUs in Gres, Include, node sets, defaults, continued lines) give the
site their text describes, worked out here from the text; malformed variants each give one
line naming the file, the line and the key, exit 2. The test cluster's own file, against what
its slurmctld reports, is in tests/advise/test_slurm_live.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.site.slurm.conf import read_slurm_conf
from tests.invariants import check_partitions

TIGER = """\
# CPU nodes of two generations, GPU nodes, overlapping partitions.
ClusterName=tiger
SlurmctldHost=head(10.0.0.1)
SchedulerType=sched/backfill
SchedulerParameters=bf_window=2880,bf_resolution=600,bf_max_job_test=1000,bf_continue
PriorityType=priority/multifactor
PriorityWeightAge=1000
priorityweightfairshare=10000   # keys are case-insensitive
PriorityMaxAge=7-0
EnforcePartLimits=ALL
FastSchedule=1   # gone since Slurm 20.11: kept and reported
Include nodes.conf
PartitionName=DEFAULT State=UP MaxTime=1-00:00:00
PartitionName=cpu Nodes=cpu[001-064],old[01-32] Default=YES MaxNodes=32
PartitionName=debug Nodes=cpu[061-064] MaxTime=30 PriorityTier=10 MaxNodes=2
PartitionName=gpu Nodes=gpus MaxTime=2-00:00:00
PartitionName=all Nodes=ALL PriorityTier=0 State=DRAIN \\
    MaxTime=UNLIMITED
"""
TIGER_NODES = """\
NodeName=DEFAULT RealMemory=192000 State=UNKNOWN
NodeName=cpu[001-064] CPUs=32 Feature=skylake
NodeName=old[01-32] Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=64000
NodeName=g[01-08] CPUs=48 RealMemory=384000 Gres=gpu:a100:4 Feature="ampere,nvlink"
NodeSet=gpus Feature=ampere
"""


@pytest.fixture
def tiger(tmp_path: Path) -> Path:
    (tmp_path / "slurm.conf").write_text(TIGER)
    (tmp_path / "nodes.conf").write_text(TIGER_NODES)
    return tmp_path / "slurm.conf"


def test_a_site_with_gpus_node_sets_and_an_include(tiger):
    conf = read_slurm_conf(tiger)
    assert conf.cluster == "tiger" and len(conf.node_names()) == 64 + 32 + 8
    assert conf.scheduler == {
        "bf_window": "2880", "bf_resolution": "600", "bf_max_job_test": "1000",
        "bf_continue": "",
    }  # fmt: skip
    assert conf.priority == {
        "PriorityType": "priority/multifactor",
        "PriorityWeightAge": "1000",
        "PriorityWeightFairshare": "10000",
        "PriorityMaxAge": "7-0",
    }
    assert list(conf.unknown) == ["FastSchedule"] and conf.unknown["FastSchedule"].line == 11
    platform = conf.platform()
    assert (platform.name, platform.nodes) == ("tiger", 104)
    # runs of nodes alike: 64 x 32 CPUs, 32 x 2 sockets x 8 cores, 8 GPU nodes of 48 CPUs
    assert [(g.name, g.nodes, g.cores) for g in platform.groups] == [
        ("cpus32", 64, 32), ("cpus16", 32, 16), ("cpus48-gpu:a100:4", 8, 48)
    ]  # fmt: skip
    site = platform.site
    assert site is not None and site.over_limits == "reject"  # EnforcePartLimits=ALL
    parts = {p.name: p for p in site.partitions}
    assert parts["cpu"].ranges == ((0, 96),) and parts["cpu"].default
    assert parts["cpu"].max_time == 86400.0 and parts["cpu"].max_nodes == 32
    assert parts["debug"].ranges == ((60, 64),)  # cpu061-064: inside cpu
    assert (parts["debug"].max_time, parts["debug"].tier, parts["debug"].cores) == (1800.0, 10, 32)
    assert parts["gpu"].ranges == ((96, 104),) and parts["gpu"].max_time == 172800.0
    assert parts["all"].ranges == ((0, 104),) and parts["all"].state == "drain"
    assert parts["all"].max_time is None and parts["all"].tier == 0  # (the continued line)
    assert parts["all"].cores == 16  # the smallest of its nodes, and said so
    assert any("partition all spans nodes of 16, 32, 48 CPUs" in n for n in platform.notes)


CURIE = """\
ClusterName=curie
Include %c-nodes.conf
PartitionName=standard Nodes=curie[1000-6039] Default=YES MaxTime=1-00:00:00
PartitionName=large Nodes=curie[6040-6399] MaxNodes=64
PartitionName=hybrid Nodes=curie[7000-7143]
PartitionName=test Nodes=curie[1000-1019] MaxTime=00:30:00 PriorityTier=5 MaxNodes=4
PartitionName=maint Nodes=curie[6040-6043] State=DOWN MinNodes=2
"""
CURIE_NODES = """\
NodeName=curie[1000-6039] Procs=16 RealMemory=64000
NodeName=curie[6040-6399] Sockets=4 CoresPerSocket=8 RealMemory=128000
NodeName=curie[7000-7143] CPUs=8 Gres=gpu:m2090:2 RealMemory=24000
"""


@pytest.fixture
def curie(tmp_path: Path) -> Path:
    (tmp_path / "slurm.conf").write_text(CURIE)
    (tmp_path / "curie-nodes.conf").write_text(CURIE_NODES)
    return tmp_path / "slurm.conf"


def test_a_curie_like_site_with_overlaps_and_a_cluster_named_include(curie):
    platform = read_slurm_conf(curie).platform()
    assert platform.nodes == 5040 + 360 + 144
    assert platform.notes == (  # (the first RealMemory is on curie-nodes.conf's first line)
        f"{curie.parent / 'curie-nodes.conf'}, line 1: the nodes' RealMemory, Gres read and not "
        "simulated: jobs get whole nodes (SelectType=select/linear, Slurm's default: say "
        "select/cons_tres for nodes shared by CPUs, memory and GPUs)",
    )
    assert [(g.nodes, g.cores) for g in platform.groups] == [(5040, 16), (360, 32), (144, 8)]
    site = platform.site
    assert site is not None and site.over_limits == "hold"  # EnforcePartLimits=NO (default)
    got = {p.name: (p.ranges, p.cores, p.tier, p.max_nodes, p.min_nodes, p.state)
           for p in site.partitions}  # fmt: skip
    assert got == {
        "standard": (((0, 5040),), 16, 1, None, 1, "up"),
        "large": (((5040, 5400),), 32, 1, 64, 1, "up"),
        "hybrid": (((5400, 5544),), 8, 1, None, 1, "up"),
        "test": (((0, 20),), 16, 5, 4, 1, "up"),
        "maint": (((5040, 5044),), 32, 1, None, 2, "down"),
    }


def test_curie_jobs_run_on_the_site_its_slurm_conf_describes(curie, traces_dir):
    """2,000 Curie jobs under FCFS+EASY with --slurm-conf: each in the partition its trace line
    names (standard, large, hybrid), every invariant of partitions holds."""
    from hpcsched.workload import load_workload

    workload = load_workload(traces_dir / "pwa" / "CEA-Curie-2011-2.1-cln.swf.gz")
    workload = replace(workload, jobs=workload.jobs.iloc[:2000].reset_index(drop=True))
    result = hpcsched.simulate(workload, "fcfs", platform=str(curie))
    check_partitions(result)
    assert set(result.jobs["partition"].dropna().astype(str)) <= {"standard", "large", "hybrid"}


TWO_DEFAULTS = (
    "NodeName=c[1-2]\nPartitionName=p Nodes=c1 Default=YES\nPartitionName=q Nodes=c2 Default=YES"
)
BAD = [
    # (the file's text, the line named, what the message says)
    ("NodeName=", 1, "names no node"),
    ("NodeName=c[1-", 1, "bad hostlist"),
    ("NodeName=c1 CPUs=four", 1, "field CPUs: must be a whole number"),
    ("NodeName=c1 CPUs=0", 1, "field CPUs: must be at least 1"),
    ("NodeName=c1 RealMemory=lots", 1, "field RealMemory: must be a whole number"),
    ("NodeName=c[1-2]\nNodeName=c2", 2, "node c2 is already described at line 1"),
    ("NodeName=c1\nPartitionName=p Nodes=c9", 2, "node c9 is in no NodeName line"),
    ("NodeName=c1\nPartitionName=p Nodes=c1 MaxTime=1h", 2, "field MaxTime: must be Slurm time"),
    ("NodeName=c1\nPartitionName=p Nodes=c1 MaxNodes=-1", 2, "field MaxNodes: must be a whole"),
    ("NodeName=c1\nPartitionName=p Nodes=c1 PriorityTier=high", 2, "field PriorityTier"),
    ("NodeName=c1\nPartitionName=p Nodes=c1 State=OPEN", 2, "field State: State must be one"),
    ("NodeName=c1\nPartitionName=p Nodes=c1 Default=MAYBE", 2, "field Default"),
    ("NodeName=c1\nPartitionName=p Nodes=c1\nPartitionName=p Nodes=c1", 3, "already described"),
    (TWO_DEFAULTS, 3, "two default partitions"),
    ("NodeName=c1\nPartitionName=p Nodes=", 2, "field Nodes: partition p has no nodes"),
    ("NodeName=c1\nInclude missing.conf", 2, "no such file"),
    ("NodeName=c1\nInclude slurm.conf", 2, "an include loop"),
    ("NodeName=c1\nbogus", 2, "'bogus' is not Key=Value"),
    ('NodeName=c1 Feature="a', 1, "cannot be split"),
    ("NodeName=c1\nNodeSet=s", 2, "field NodeSet: node set s names neither Nodes nor Feature"),
    ("Include %c.conf\nClusterName=x", 1, "Include names %c before ClusterName is set"),
    ("NodeName=c1 \\", 1, "the last line ends with a backslash"),
]


@pytest.mark.parametrize(("text", "line", "says"), BAD)
def test_a_malformed_slurm_conf_is_one_line_naming_file_and_line(
    text, line, says, tmp_path, capsys
):
    conf = tmp_path / "slurm.conf"
    conf.write_text(text + "\n")
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
    assert main(["simulate", str(trace), "--slurm-conf", str(conf)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {conf}, line {line}") and says in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_slurm_conf_and_platform_are_one_or_the_other(tiger, tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
    args = ["simulate", str(trace), "--slurm-conf", str(tiger), "--platform", "CEA-Curie"]
    assert main(args) == 2
    assert "give --platform or --slurm-conf, not both" in capsys.readouterr().err
    other = tmp_path / "site.txt"
    other.write_text(TIGER)
    assert main(["simulate", str(trace), "--slurm-conf", str(other)]) == 2
    assert "name ends in .conf" in capsys.readouterr().err


def test_an_include_wildcard_reads_every_file_it_matches_in_name_order(tmp_path):
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "2-gpu.conf").write_text("NodeName=g[1-2] CPUs=8\n")
    (tmp_path / "conf.d" / "1-cpu.conf").write_text("NodeName=c[1-3] CPUs=4\n")
    (tmp_path / "slurm.conf").write_text("Include conf.d/*.conf\nPartitionName=all Nodes=ALL\n")
    conf = read_slurm_conf(tmp_path / "slurm.conf")
    assert conf.node_names() == ["c1", "c2", "c3", "g1", "g2"]
    (tmp_path / "slurm.conf").write_text("Include none.d/*.conf\n")
    with pytest.raises(hpcsched.InputError, match="no such file"):
        read_slurm_conf(tmp_path / "slurm.conf")


def test_an_include_quoted_or_absolute_is_the_file_it_names(tmp_path):
    """Slurm strips the quotes around an Include's path and takes an absolute path as it is,
    not from the slurm.conf's folder (read_lines' docstring)."""
    (tmp_path / "site").mkdir()
    (tmp_path / "nodes a.conf").write_text("NodeName=a[1-2] CPUs=4\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "gpu.conf").write_text("NodeName=g1 CPUs=8\n")
    top = tmp_path / "site" / "slurm.conf"
    top.write_text(
        f'Include "{tmp_path / "nodes a.conf"}"\nInclude {elsewhere / "gpu.conf"}\n'
        "PartitionName=all Nodes=ALL\n"
    )
    assert read_slurm_conf(top).node_names() == ["a1", "a2", "g1"]
    (tmp_path / "site" / "slurm.conf").write_text('Include "gpu.conf"\n')
    with pytest.raises(hpcsched.InputError, match=r"no such file \(.*site/gpu\.conf\)"):
        read_slurm_conf(top)


def test_an_include_names_the_cluster_read_so_far(tmp_path):
    (tmp_path / "tiger-nodes.conf").write_text("NodeName=t[1-3] CPUs=4\n")
    (tmp_path / "slurm.conf").write_text(
        "ClusterName=tiger\nInclude %c-nodes.conf\nPartitionName=all Nodes=ALL\n"
    )
    assert read_slurm_conf(tmp_path / "slurm.conf").node_names() == ["t1", "t2", "t3"]
