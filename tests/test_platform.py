"""Platforms (presets and TOML files) and the energy of runs on them."""

from __future__ import annotations

import pytest

import hpcsched
from hpcsched.site.platform import load_platform, parse_platform, preset_names
from hpcsched.workload import Downtime, DowntimeCalendar
from tests.conftest import workload_from

# DESIGN.md §3.5, from the SNF-ICON authors' platform files:
# (computing, idle, sleeping, switching on, switching off, on latency, std, off latency, std)
AOBA = (2100, 600, 60, 600, 600, 1200, 60, 600, 60)
TAURUS = (167, 91, 8, 130, 110, 182, 18.2, 15, 1.5)


@pytest.mark.parametrize(
    ("name", "nodes", "values"),
    [
        ("AOBA-64", 64, AOBA),
        ("AOBA-1152", 1152, AOBA),
        ("Taurus-64", 64, TAURUS),
        ("Taurus-1152", 1152, TAURUS),
    ],
)
def test_presets_carry_the_design_values(name, nodes, values):
    platform = load_platform(name.lower())
    assert (platform.name, platform.nodes) == (name, nodes)
    power = platform.power
    assert (
        power.computing,
        power.idle,
        power.sleeping,
        power.switching_on,
        power.switching_off,
        power.switch_on,
        power.switch_on_std,
        power.switch_off,
        power.switch_off_std,
    ) == values


def test_preset_names():
    assert preset_names() == [
        "AOBA-1152",
        "AOBA-64",
        "CEA-Curie",
        "CTC-SP2",
        "SDSC-BLUE",
        "Taurus-1152",
        "Taurus-64",
    ]


PLATFORM = """
name = "tiny"
nodes = 4
[power]
computing = 100.0
idle = 10.0
sleeping = 1.0
switching_on = 20.0
switching_off = 20.0
[transitions]
switch_on = 5.0
switch_on_std = 0.0
switch_off = 5.0
switch_off_std = 0.0
"""


def test_energy_integrates_state_time_times_power(tmp_path):
    # 4 nodes. J1 (2 nodes) runs 0-100; J2 (4 nodes) waits for it and runs 100-150.
    # An outage takes 1 node during [50, 60); a later one, after the last completion, does not
    # count: the energy horizon ends at 150.
    path = tmp_path / "tiny.toml"
    path.write_text(PLATFORM)
    calendar = DowntimeCalendar(
        (Downtime(50.0, 60.0, "unscheduled", 1), Downtime(300.0, 400.0, "unscheduled"))
    )
    result = hpcsched.simulate(
        workload_from([(0, 100, 100, 2), (0, 50, 50, 4)], 4),
        "fcfs",
        platform=path,
        downtime=calendar,
    )
    energy = result.info["energy"]
    # computing: 2*100 + 4*50 = 400 node-s; down: 1*10; idle: 4*150 - 400 - 10 = 190.
    assert energy["node_seconds"] == {
        "computing": 400.0,
        "idle": 190.0,
        "down": 10.0,
        "switching_on": 0.0,
        "switching_off": 0.0,
        "sleeping": 0.0,
    }
    assert energy["horizon_seconds"] == 150.0
    joules = 400 * 100.0 + 190 * 10.0
    assert energy["total_mwh"] == pytest.approx(joules / 3.6e9)
    assert energy["wasted_mwh"] == pytest.approx(190 * 10.0 / 3.6e9)
    assert energy["computing_mwh"] == pytest.approx(400 * 100.0 / 3.6e9)
    assert result.info["inputs"]["platform"]["name"] == "tiny"


def test_no_power_model_no_energy():
    result = hpcsched.simulate(workload_from([(0, 10, 10, 1)], 2), "fcfs")
    assert "energy" not in result.info
    platform = parse_platform("nodes = 2\n", "two.toml")
    result = hpcsched.simulate(workload_from([(0, 10, 10, 1)], 2), "fcfs", platform=platform)
    assert "energy" not in result.info


def test_platform_sets_the_machine_size(traces_dir):
    trace = traces_dir / "snf-icon-paper" / "SDSC-BLUE-2000-4.2-cln-0-3000.json.gz"
    result = hpcsched.simulate(trace, "snf", platform="AOBA-1152")
    assert result.workload.nodes == 1152
    # the engine's node-state accounting against the job table (two records kept apart; idle
    # is up minus computing, so their sum would hold by construction)
    jobs = result.jobs
    computing = result.info["energy"]["node_seconds"]["computing"]
    assert computing == pytest.approx(((jobs["end"] - jobs["start"]) * jobs["nodes"]).sum())
    with pytest.raises(hpcsched.OptionError, match="platform AOBA-64 has 64"):
        hpcsched.simulate(trace, "snf", platform="AOBA-64", nodes=1152)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("nodes = 0\n", "nodes"),
        ("nodes = 4.5\n", "nodes"),
        ("nodes = 4\ncolour = 'red'\n", "colour"),
        (PLATFORM.replace("idle = 10.0", "idle = -1.0"), "power.idle"),
        (PLATFORM.replace("idle = 10.0", "idle = 'ten'"), "power.idle"),
        (PLATFORM.replace("[transitions]", "[other]"), "other"),
        (PLATFORM.split("[transitions]")[0], "transitions"),
        (PLATFORM.replace("sleeping = 1.0", "sleepy = 1.0"), "power.sleepy"),
    ],
)
def test_bad_platform_files_name_the_field(tmp_path, text, field):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(hpcsched.InputError) as info:
        load_platform(path)
    assert info.value.field == field
    assert info.value.path == str(path)


def test_invalid_toml_and_unknown_preset(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("nodes = [\n")
    with pytest.raises(hpcsched.InputError, match="invalid TOML"):
        load_platform(path)
    with pytest.raises(hpcsched.OptionError, match="neither a preset"):
        load_platform("AOBA-65")
