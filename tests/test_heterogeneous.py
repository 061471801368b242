"""Platforms of several node groups: each group its own count and power model, a job on one
group, energy counted group by group."""

from __future__ import annotations

import pytest

import hpcsched
from hpcsched.site.platform import load_platform, parse_platform
from tests.conftest import workload_from

GROUPS = """
name = "two-kinds"
[[groups]]
name = "fast"
nodes = 2
[groups.power]
computing = 100.0
idle = 10.0
sleeping = 1.0
switching_on = 20.0
switching_off = 30.0
[groups.transitions]
switch_on = 50.0
switch_on_std = 5.0
switch_off = 40.0
switch_off_std = 4.0
[[groups]]
name = "frugal"
nodes = 2
[groups.power]
computing = 50.0
idle = 5.0
sleeping = 0.5
switching_on = 10.0
switching_off = 15.0
[groups.transitions]
switch_on = 20.0
switch_on_std = 2.0
switch_off = 10.0
switch_off_std = 1.0
"""


def test_a_platform_file_with_node_groups():
    platform = parse_platform(GROUPS, "two-kinds.toml")
    assert platform.nodes == 4 and platform.heterogeneous
    assert [(g.name, g.nodes, g.power.computing) for g in platform.groups] == [
        ("fast", 2, 100.0),
        ("frugal", 2, 50.0),
    ]
    with pytest.raises(hpcsched.InputError, match="belongs inside each"):
        parse_platform("nodes = 4\n" + GROUPS)
    with pytest.raises(hpcsched.InputError, match=r"groups\[1\]\.nodes"):
        parse_platform(
            GROUPS.replace(
                "nodes = 2\n[groups.power]\ncomputing = 50.0",
                "nodes = 0\n[groups.power]\ncomputing = 50.0",
            )
        )


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        (GROUPS.replace('name = "frugal"', 'name = "fast"'), "groups[1].name",
         r"'fast' names groups\[0\] too"),
        (GROUPS.replace('name = "frugal"\n', ""), "groups[1].name", "missing key name"),
        (GROUPS.replace('name = "frugal"', "name = 2"), "groups[1].name",
         "name must be a non-empty text in quotes, not 2"),
        (GROUPS.replace('name = "fast"', 'name = " "'), "groups[0].name", "non-empty text"),
        (GROUPS.replace('name = "fast"', "name = true"), "groups[0].name", "not True"),
        (GROUPS.replace('name = "two-kinds"', "name = 64"), "name", "not 64"),
        ("name = 1.5\nnodes = 4\n", "name", "not 1.5"),
    ],
)  # fmt: skip
def test_platform_and_group_names_are_texts_of_their_own(tmp_path, text, field, says):
    # they were accepted: two groups "fast", a group without a name ("group 1"), name = 2
    path = tmp_path / "groups.toml"
    path.write_text(text)
    with pytest.raises(hpcsched.InputError, match=says) as error:
        load_platform(path)
    assert (error.value.path, error.value.field) == (str(path), field)
    assert str(error.value).startswith(f"{path}, field {field}: ")


def test_jobs_run_within_one_group_and_energy_counts_each_groups_power():
    # 4 nodes: "fast" (0, 1: 100 W computing, 10 W idle), "frugal" (2, 3: 50 W, 5 W).
    # FCFS with EASY under IPM, timeout 1000 s (nothing sleeps before the last completion).
    # t=0: J1 (2 nodes, 100 s) goes to the frugal group (lower computing power), J2 (2 nodes,
    # 50 s) to the fast one; J5 (3 nodes) fits no group: skipped. t=50: J2 ends; J3 (1 node,
    # 10 s) starts on node 0; J4 (2 nodes, 30 s) does not fit in one group (1 idle node in
    # each would not do either) and holds nodes 0 and 1 until 60, when J3 ends. J4 runs 60-90.
    specs = [(0, 100, 100, 2), (0, 50, 50, 2), (10, 10, 10, 1), (20, 30, 30, 2), (0, 5, 5, 3)]
    workload = workload_from(specs, 4)
    spec = hpcsched.PolicySpec("fcfs", power=hpcsched.PowerSpec(manager="ipm", idle_timeout=1000))
    result = hpcsched.simulate(workload, spec, platform=parse_platform(GROUPS, "two-kinds.toml"))
    assert result.info["workload"]["skipped"] == {"larger than any node group": 1}
    assert result.jobs["start"].tolist() == [0.0, 0.0, 50.0, 60.0]
    # Up to 100 s: node 0 computes 90 s and idles 10; node 1 computes 80, idles 20; the frugal
    # nodes compute 100 s each.
    energy = result.info["energy"]
    assert energy["node_seconds"]["computing"] == 370.0
    assert energy["node_seconds"]["idle"] == 30.0
    computing = (90 + 80) * 100.0 + 200 * 50.0
    idle = 30 * 10.0
    assert energy["computing_mwh"] == pytest.approx(computing / 3.6e9)
    assert energy["total_mwh"] == pytest.approx((computing + idle) / 3.6e9)
    joules = [2 * 100 * 50.0, 2 * 50 * 100.0, 10 * 100.0, 2 * 30 * 100.0]
    assert result.jobs["energy_kwh"].tolist() == pytest.approx([j / 3.6e6 for j in joules])
    assert result.timeline.iloc[0]["power_kw"] == pytest.approx(0.3)


def test_without_a_power_manager_nodes_never_sleep_but_jobs_stay_in_one_group():
    specs = [(0, 100, 100, 2), (0, 50, 50, 2), (10, 10, 10, 1), (20, 30, 30, 2)]
    workload = workload_from(specs, 4)
    result = hpcsched.simulate(workload, "fcfs", platform=parse_platform(GROUPS, "two-kinds.toml"))
    assert result.jobs["start"].tolist() == [0.0, 0.0, 50.0, 60.0]
    seconds = result.info["energy"]["node_seconds"]
    assert seconds["sleeping"] == 0.0 and seconds["switching_off"] == 0.0


def test_snf_icon_on_a_mixed_platform(traces_dir):
    trace = traces_dir / "snf-icon-paper" / "DAS2-fs1-0-3000.json.gz"
    text = GROUPS.replace("nodes = 2", "nodes = 32")
    platform = parse_platform(text, "mixed-64.toml")
    result = hpcsched.simulate(trace, "snf-icon", platform=platform)
    jobs = result.jobs
    assert not jobs["start"].isna().any()
    assert result.info["workload"]["skipped"]["larger than any node group"] > 0
    energy = result.info["energy"]
    assert jobs["energy_kwh"].sum() / 1000 == pytest.approx(energy["computing_mwh"], rel=1e-9)
    # every job's energy is its nodes x run time x one group's computing power
    per_node_second = jobs["energy_kwh"] * 3.6e6 / (jobs["nodes"] * (jobs["end"] - jobs["start"]))
    ran = (jobs["end"] > jobs["start"]).to_numpy()
    assert set(per_node_second[ran].round(6)) <= {100.0, 50.0}
