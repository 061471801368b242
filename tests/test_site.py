"""Sites: partitions and routes in platform files, the presets of the bundled traces, and the
partitions each job may run in (issue 29). Every expectation is worked out by hand from the
files written here, or from the traces with zcat and awk (the commands are in the comments)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.site.assignment import assign_partitions
from hpcsched.site.machine import NodeGroup
from hpcsched.site.partitions import Partition, Route, Site, merged
from hpcsched.site.platform import load_platform, parse_platform, preset_names
from hpcsched.workload import load_workload
from hpcsched.workload.model import Workload

REPO = Path(__file__).resolve().parents[1]

#: 8 thin nodes (0-7) of 4 cores, 4 fat nodes (8-11) of 8 cores, no power model.
GROUPS = """
name = "mini"
[[groups]]
name = "thin"
nodes = 8
cores = 4
[[groups]]
name = "fat"
nodes = 4
cores = 8
"""

SITE = (
    'over_limits = "hold"\n'
    + GROUPS
    + """
[[partitions]]
name = "batch"
nodes = "thin"
default = true
aliases = ["parallel"]
[[partitions]]
name = "big"
nodes = ["fat"]
max_nodes = 3
min_nodes = 2
priority_tier = 2
state = "DRAIN"
[[partitions]]
name = "small"
nodes = "0-3"
max_time = "30"
[[routes]]
queue = "prod"
partition = "small"
max_nodes = 2
max_time = "1:00:00"
[[routes]]
queue = "prod"
partition = "parallel"
[[routes]]
queue = "fatq"
partition = "big"
"""
)


def test_a_site_file_gives_partitions_routes_and_what_over_limits_jobs_get():
    platform = parse_platform(SITE, "mini.toml")
    assert [(g.name, g.nodes, g.cores, g.power) for g in platform.groups] == [
        ("thin", 8, 4, None),
        ("fat", 4, 8, None),
    ]
    assert platform.power is None and platform.nodes == 12
    site = platform.site
    assert site is not None and site.over_limits == "hold"
    batch, big, small = site.partitions
    assert batch == Partition("batch", ((0, 8),), 4, default=True, aliases=("parallel",))
    assert big == Partition("big", ((8, 12),), 8, max_nodes=3, min_nodes=2, tier=2, state="drain")
    assert small == Partition("small", ((0, 4),), 4, max_time=1800.0)  # "30": minutes
    assert site.routes == (
        Route("small", "prod", max_nodes=2, max_time=3600.0),
        Route("batch", "prod"),  # an alias names its partition
        Route("big", "fatq"),
    )
    assert site.default is batch and site.index("parallel") == 0 and site.index("small") == 2
    assert site.to_native() == {
        "partitions": [
            {"name": "batch", "ranges": [[0, 8]], "max_time": None, "max_nodes": None,
             "min_nodes": 1, "tier": 1, "state": "up"},
            {"name": "big", "ranges": [[8, 12]], "max_time": None, "max_nodes": 3,
             "min_nodes": 2, "tier": 2, "state": "drain"},
            {"name": "small", "ranges": [[0, 4]], "max_time": 1800.0, "max_nodes": None,
             "min_nodes": 1, "tier": 1, "state": "up"},
        ],
        "over_limits": "hold",
    }  # fmt: skip
    assert platform.to_dict()["site"]["routes"][0] == {
        "partition": "small",
        "queue": "prod",
        "min_nodes": None,
        "max_nodes": 2,
        "max_time": 3600.0,
    }


def partitions_of(nodes: str, extra: str = "") -> tuple[Partition, ...]:
    text = GROUPS + f'[[partitions]]\nname = "p"\nnodes = {nodes}\n{extra}'
    site = parse_platform(text).site
    assert site is not None
    return site.partitions


@pytest.mark.parametrize(
    ("nodes", "ranges", "cores"),
    [
        ('"thin"', ((0, 8),), 4),
        ('"fat"', ((8, 12),), 8),
        ('["fat"]', ((8, 12),), 8),
        ('"0-1,3,5-6"', ((0, 2), (3, 4), (5, 7)), 4),  # Slurm's inclusive ranges, half-open
        ('"5-6,0-1,2"', ((0, 3), (5, 7)), 4),  # sorted, touching ranges joined
        ('"0-3,2-5"', ((0, 6),), 4),  # overlapping ones too
        ('"9-11"', ((9, 12),), 8),
        ("3", ((0, 3),), 4),  # a count: the first nodes
    ],
)
def test_the_nodes_of_a_partition(nodes, ranges, cores):
    (partition,) = partitions_of(nodes)
    assert (partition.ranges, partition.cores) == (ranges, cores)
    assert partition.nodes == sum(end - start for start, end in ranges)


def test_groups_of_equal_cores_make_one_partition_and_lists_merge():
    text = GROUPS.replace("cores = 8", "cores = 4")
    site = parse_platform(text + '[[partitions]]\nname = "all"\nnodes = ["fat", "thin"]\n').site
    assert site is not None and site.partitions[0].ranges == ((0, 12),)
    assert merged([(5, 6), (0, 2), (2, 4)]) == ((0, 4), (5, 6))


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ('"600"', 36000.0),  # bare Slurm time is minutes
        ('"45"', 2700.0),
        ('"1:30"', 90.0),  # minutes:seconds
        ('"1:00:00"', 3600.0),
        ('"2-00:00:00"', 172800.0),
        ('"1-2"', 93600.0),  # days-hours
        ('"1-2:30"', 95400.0),  # days-hours:minutes
        ('"UNLIMITED"', None),
        ('"infinite"', None),
        ("1800", 1800.0),  # a number: seconds
        ("90.5", 90.5),
    ],
)
def test_max_time_takes_seconds_or_slurm_time(value, seconds):
    (partition,) = partitions_of('"thin"', f"max_time = {value}\n")
    assert partition.max_time == seconds


def test_overlapping_partitions_are_allowed_and_one_pool_takes_partitions():
    site = parse_platform(
        'nodes = 10\n[[partitions]]\nname = "batch"\nnodes = 10\n'
        '[[partitions]]\nname = "debug"\nnodes = "8-9"\npriority_tier = 5\n'
    ).site
    assert site is not None
    batch, debug = site.partitions
    assert (batch.ranges, debug.ranges, debug.tier, debug.cores) == (((0, 10),), ((8, 10),), 5, 1)
    assert site.default is batch and site.over_limits == "reject"


def test_a_one_pool_platform_without_partitions_is_as_before():
    text = "name = 'tiny'\nnodes = 4\n"
    platform = parse_platform(text, "tiny.toml")
    assert platform == hpcsched.Platform("tiny", 4, None, "tiny.toml")
    assert platform.to_dict() == {"name": "tiny", "nodes": 4, "source": "tiny.toml", "power": None}
    assert "cores" not in NodeGroup("g", 2, None).to_dict()


def test_groups_may_leave_power_out_all_or_none(tmp_path):
    power = (
        "[groups.power]\ncomputing = 1.0\nidle = 1.0\nsleeping = 1.0\nswitching_on = 1.0\n"
        "switching_off = 1.0\n[groups.transitions]\nswitch_on = 1.0\nswitch_on_std = 0.0\n"
        "switch_off = 1.0\nswitch_off_std = 0.0\n"
    )
    text = f'[[groups]]\nname = "a"\nnodes = 2\n{power}[[groups]]\nname = "b"\nnodes = 2\n'
    path = tmp_path / "half.toml"
    path.write_text(text)
    with pytest.raises(hpcsched.InputError, match=r"every group or on none \(groups\[0\]") as e:
        load_platform(path)
    assert (e.value.path, e.value.field) == (str(path), "groups[1].power")
    platform = parse_platform(text + power)
    assert [g.power.computing for g in platform.groups] == [1.0, 1.0]
    assert platform.to_dict()["groups"][0]["power"]["idle"] == 1.0


PARTITION = '[[partitions]]\nname = "p"\nnodes = "thin"\n'


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ("partitions = 3\n", "partitions", r"\[\[partitions\]\] tables"),
        ("partitions = []\n", "partitions", "at least one"),
        (PARTITION + "maxtime = 5\n", "partitions[0].maxtime", "did you mean max_time"),
        ('[[partitions]]\nname = "p"\n', "partitions[0].nodes", "missing key nodes"),
        ('[[partitions]]\nnodes = "thin"\n', "partitions[0].name", "non-empty text"),
        ('[[partitions]]\nname = "a,b"\nnodes = 2\n', "partitions[0].name", "without commas"),
        (PARTITION.replace('"thin"', '"thn"'), "partitions[0].nodes", "did you mean thin"),
        (PARTITION.replace('"thin"', '["thin", "fatt"]'), "partitions[0].nodes", "fat"),
        (PARTITION.replace('"thin"', '"0-12"'), "partitions[0].nodes", "nodes 0-11"),
        (PARTITION.replace('"thin"', '"5-2"'), "partitions[0].nodes", "not within"),
        (PARTITION.replace('"thin"', "0"), "partitions[0].nodes", "from 1 to the machine's 12"),
        (PARTITION.replace('"thin"', "13"), "partitions[0].nodes", "not 13"),
        (PARTITION.replace('"thin"', "true"), "partitions[0].nodes", "group's name"),
        (PARTITION.replace('"thin"', '"7-8"'), "partitions[0].nodes",
         r"partition 'p' spans node groups with different cores per node \(thin 4, fat 8\)"),
        (PARTITION + "max_time = -5\n", "partitions[0].max_time", "seconds > 0"),
        (PARTITION + 'max_time = "1:xx"\n', "partitions[0].max_time", "Slurm time"),
        (PARTITION + 'max_time = "0"\n', "partitions[0].max_time", "not '0'"),
        (PARTITION + "max_time = true\n", "partitions[0].max_time", "not True"),
        (PARTITION + "max_nodes = 0\n", "partitions[0].max_nodes", "integer >= 1"),
        (PARTITION + "min_nodes = 3\nmax_nodes = 2\n", "partitions[0].min_nodes",
         "min_nodes 3 is more than max_nodes 2"),
        (PARTITION + "priority_tier = -1\n", "partitions[0].priority_tier", ">= 0"),
        (PARTITION + "priority_tier = 1.5\n", "partitions[0].priority_tier", "not 1.5"),
        (PARTITION + 'default = "yes"\n', "partitions[0].default", "true or false"),
        (PARTITION + 'state = "drained"\n', "partitions[0].state", "did you mean drain"),
        (PARTITION + 'aliases = "q"\n', "partitions[0].aliases", "list of non-empty"),
        (PARTITION + 'aliases = [""]\n', "partitions[0].aliases", "list of non-empty"),
        (PARTITION * 2, "partitions[1].name", r"already a name of partitions\[0\]"),
        (PARTITION + PARTITION.replace('"p"', '"q"') + 'aliases = ["p"]\n',
         "partitions[1].aliases", r"'p' is already a name of partitions\[0\]"),
        (PARTITION + "default = true\n" + PARTITION.replace('"p"', '"q"') + "default = true\n",
         "partitions[1].default", r"partitions\[0\] and partitions\[1\] are both marked default"),
        (PARTITION + '[[routes]]\npartition = "pp"\n', "routes[0].partition",
         "unknown partition 'pp'; did you mean p"),
        (PARTITION + '[[routes]]\npartition = "p"\nqueues = "x"\n', "routes[0].queues",
         "did you mean queue"),
        (PARTITION + '[[routes]]\npartition = "p"\nqueue = 5\n', "routes[0].queue", "not 5"),
        (PARTITION + '[[routes]]\npartition = "p"\nmin_nodes = 4\nmax_nodes = 2\n',
         "routes[0].min_nodes", "takes no job"),
        (PARTITION + '[[routes]]\npartition = "p"\nmax_time = "x"\n', "routes[0].max_time",
         "Slurm time"),
        ("routes = 1\n" + PARTITION, "routes", r"\[\[routes\]\] tables"),
        ('over_limits = "drop"\n' + PARTITION, "over_limits", "unknown over_limits value"),
        ('over_limits = "hold"\n', "over_limits", r"needs \[\[partitions\]\]"),
        ('[[routes]]\npartition = "p"\n', "routes", r"needs \[\[partitions\]\]"),
        ("partition = 1\n", "partition", "did you mean partitions"),
    ],
)  # fmt: skip
def test_bad_site_files_name_the_file_and_the_field(tmp_path, text, field, says):
    path = tmp_path / "site.toml"
    tables = text.find("[[") if "[[" in text else len(text)  # top-level keys go first
    path.write_text(text[:tables] + GROUPS + text[tables:])
    with pytest.raises(hpcsched.InputError, match=says) as error:
        load_platform(path)
    assert (error.value.path, error.value.field) == (str(path), field)
    assert str(error.value).startswith(f"{path}, field {field}: ")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (GROUPS.replace("cores = 4", "cores = 0"), "groups[0].cores"),
        (GROUPS.replace("cores = 4", "cores = 2.5"), "groups[0].cores"),
        (GROUPS.replace("cores = 4", "cores = 4\ncpus = 4"), "groups[0].cpus"),
    ],
)
def test_bad_group_cores_name_the_field(text, field):
    with pytest.raises(hpcsched.InputError) as error:
        parse_platform(text, "g.toml")
    assert error.value.field == field


def test_the_site_presets_load():
    assert {"CEA-Curie", "CTC-SP2", "SDSC-BLUE"} <= set(preset_names())
    curie = load_platform("cea-curie")
    # the header: 5040 thin nodes + 360 fat + 144 hybrid; 80640 + 11520 + 1152 processors
    assert [(g.name, g.nodes, g.cores) for g in curie.groups] == [
        ("thin", 5040, 16),
        ("fat", 360, 32),
        ("hybrid", 144, 8),
    ]
    assert curie.power is None and curie.site is not None
    assert [(p.name, p.ranges) for p in curie.site.partitions] == [
        ("standard", ((0, 5040),)),
        ("large", ((5040, 5400),)),
        ("hybrid", ((5400, 5544),)),
    ]
    assert curie.site.default.name == "standard"
    ctc = load_platform("CTC-SP2")  # "MaxNodes: 338 (batch partition; 512 total)"
    assert ctc.nodes == 512 and ctc.site is not None
    assert [(p.name, p.ranges) for p in ctc.site.partitions] == [("batch", ((0, 338),))]
    blue = load_platform("SDSC-BLUE")  # 144 nodes, "Each node is an 8-way SMP"
    assert blue.nodes == 144 and blue.groups[0].cores == 8 and blue.site is not None
    express = blue.site.partitions[blue.site.index("express")]  # "8 nodes for 2 hours"
    assert (express.max_nodes, express.max_time) == (8, 7200.0)
    assert blue.site.partitions[blue.site.index("normal")].max_time == 36 * 3600.0


def swf_job(job: int, submit: int, procs: int, requested: int, queue: int, partition: int) -> str:
    """One SWF line: fields 1 id, 2 submit, 3 wait, 4 run time, 5 and 8 processors, 9 requested
    time, 11 status, 12 user, 15 queue, 16 partition."""
    fields = [job, submit, 0, 10, procs, -1, -1, procs, requested, -1, 1, 1, 1, -1]
    return " ".join(map(str, [*fields, queue, partition, -1, -1]))


HEADER = """; MaxProcs: 64
; Queue: 1 prod
; Queue: 2 fatq
; Queue: 3 other
; Partition: 1 batch
; Partition: 2 parallel
; Partition: 3 big,batch
; Partition: 4 nowhere
; Partition: 5 test, big
"""

#: (procs, requested time, queue, partition) of each job, and its (partition, nodes)
#: candidates on SITE (batch 0: thin, 4 cores; big 1: fat, 8 cores; small 2: thin 0-3).
JOBS = [
    ((8, 600, -1, 1), "named", [(0, 2)]),  # batch: ceil(8 / 4)
    ((8, 600, -1, 2), "named", [(0, 2)]),  # parallel: batch's alias
    ((9, 600, -1, 3), "named", [(1, 2), (0, 3)]),  # big,batch: ceil(9 / 8), ceil(9 / 4)
    ((4, 600, -1, 4), "unknown_name", [(0, 1)]),  # nowhere: the default, batch
    ((16, 600, -1, 5), "named", [(1, 2)]),  # test (no such partition), big
    ((5, 600, 1, -1), "routed", [(2, 2)]),  # prod, 2 nodes <= 2, 600 s <= 1 h: small
    ((12, 600, 1, -1), "routed", [(0, 3)]),  # prod, 3 nodes: the second route, batch
    ((4, 7200, 1, -1), "routed", [(0, 1)]),  # prod, 1 node but 2 h: batch
    ((8, 600, 2, -1), "routed", [(1, 1)]),  # fatq: big, ceil(8 / 8)
    ((3, 600, 3, -1), "default", [(0, 1)]),  # other: no route
    ((3, 600, -1, -1), "default", [(0, 1)]),  # nothing recorded
    ((4, 600, 1, 1), "named", [(0, 1)]),  # a recorded partition wins over the queue's routes
    ((4, 600, 1, 6), "unknown_name", [(0, 1)]),  # 6: no name in the header, "6"
]


def test_jobs_get_their_candidate_partitions_from_an_swf_trace(tmp_path):
    path = tmp_path / "site.swf"
    lines = [swf_job(k + 1, 10 * k, *job) for k, (job, _, _) in enumerate(JOBS)]
    path.write_text(HEADER + "\n".join(lines) + "\n")
    workload = load_workload(path)
    placed = assign_partitions(workload, parse_platform(SITE))
    assert [placed.candidates(k) for k in range(len(JOBS))] == [c for _, _, c in JOBS]
    assert placed.how == {"named": 5, "routed": 4, "default": 2, "unknown_name": 2}
    assert placed.unknown_names == {"nowhere": 1, "test": 1, "6": 1}
    assert placed.offsets.tolist() == [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    for array in (placed.offsets, placed.partitions, placed.nodes):
        assert array.dtype == np.int64


def memory_workload(columns: dict[str, list[object]], procs_per_node: int = 1) -> Workload:
    count = len(next(iter(columns.values())))
    jobs = pd.DataFrame(
        {
            "job_id": np.arange(count),
            "submit": np.zeros(count),
            "run_time": np.ones(count),
            "requested_time": np.full(count, 100.0),
            "user": np.zeros(count, dtype=np.int64),
            **columns,
        }
    )
    return Workload(jobs, 12, procs_per_node=procs_per_node)


def test_a_partition_name_column_and_nodes_without_procs():
    # no procs column: procs = nodes x procs_per_node = 3 x 4 = 12
    workload = memory_workload(
        {"nodes": [3, 3, 3, 3], "partition_name": ["big", None, " small ", "batch,big"]}, 4
    )
    placed = assign_partitions(workload, parse_platform(SITE))
    assert [placed.candidates(k) for k in range(4)] == [
        [(1, 2)],  # ceil(12 / 8)
        [(0, 3)],  # no name: the default, ceil(12 / 4)
        [(2, 3)],
        [(0, 3), (1, 2)],
    ]
    assert placed.how == {"named": 3, "routed": 0, "default": 1, "unknown_name": 0}


def test_a_platform_without_partitions_is_one_partition_of_the_machine():
    workload = memory_workload({"nodes": [1, 5], "procs": [3, 40]})
    placed = assign_partitions(workload, parse_platform("nodes = 12\n"))
    assert [placed.candidates(k) for k in range(2)] == [[(0, 3)], [(0, 40)]]  # 1 core a node
    assert placed.how["default"] == 2


def test_site_and_route_values_build_in_code():
    site = Site((Partition("a", ((0, 4),), 2), Partition("b", ((2, 6),), 2, default=True)))
    assert site.default.name == "b" and site.routes == () and site.over_limits == "reject"
    with pytest.raises(KeyError):
        site.index("c")


@pytest.mark.slow
def test_curie_with_its_preset(traces_dir):
    workload = load_workload(traces_dir / "pwa" / "CEA-Curie-2011-2.1-cln.swf.gz")
    platform = load_platform("CEA-Curie")
    start = time.perf_counter()
    placed = assign_partitions(workload, platform)
    seconds = time.perf_counter() - start
    assert seconds < 1.0, f"{seconds:.2f} s to assign {len(workload)} jobs"
    assert (np.diff(placed.offsets) >= 1).all()
    assert sum(placed.how.values()) == len(workload) == 312807
    # zcat | awk '!/^;/ {p = $8 > 0 ? $8 : $5; if ($4 >= 0 && p > 0) n[$16]++}': 10 standard
    # 198498, 12 Burned 64, 4 large 96542, 8 hybrid 14259; the other 3444 name no partition
    assert placed.how == {"named": 309363, "routed": 0, "default": 0, "unknown_name": 3444}
    assert placed.unknown_names["BCS"] == 1996 and placed.unknown_names["TestIB"] == 1315
    assert np.bincount(placed.partitions).tolist() == [198498 + 64 + 3444, 96542, 14259]
    # the largest job of each fits its nodes: 79920 / 16 = 4995 thin, 11232 / 32 = 351 fat
    largest = [int(placed.nodes[placed.partitions == k].max()) for k in range(3)]
    assert largest == [4995, 351, 144]


def test_the_example_of_the_formats_page_parses():
    page = (REPO / "docs" / "formats.md").read_text()
    section = page.split("### Partitions", 1)[1]
    example = re.search(r"```toml\n(.*?)```", section, re.S)
    assert example is not None
    platform = parse_platform(example[1], "site.toml")
    site = platform.site
    assert site is not None
    assert [(p.name, p.ranges, p.cores) for p in site.partitions] == [
        ("batch", ((0, 96),), 32),
        ("debug", ((88, 96),), 32),
        ("gpu", ((96, 104),), 64),
        ("small", ((0, 96),), 32),
        ("medium", ((0, 96),), 32),
    ]
    debug = site.partitions[1]
    assert (debug.max_time, debug.max_nodes, debug.tier) == (1800.0, 4, 2)
    assert site.default.name == "batch" and site.over_limits == "reject"
    assert [(r.partition, r.queue, r.min_nodes, r.max_nodes) for r in site.routes] == [
        ("small", "prod", None, 24),
        ("medium", "prod", 25, 99),
    ]
