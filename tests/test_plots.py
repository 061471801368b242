"""The comparison figures: each renders on its own and draws what the results say."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch
from matplotlib.text import Text

import hpcsched
from hpcsched import plots
from hpcsched.experiment import summary_row
from hpcsched.run import Result, read_run
from hpcsched.workload import generate
from tests.conftest import workload_from, workload_with_record

HOUR = 3600.0
DAY = 86400.0


# --- runs (once per module) --------------------------------------------------------------------


@pytest.fixture(scope="module")
def workload() -> hpcsched.Workload:
    # busy enough that jobs wait, backfill and MARS has choices to search
    return generate.markovian(300, 64, 7200.0, 0.9, 0.35, 43)


@pytest.fixture(scope="module")
def calendar(workload: hpcsched.Workload, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two scheduled whole-machine maintenances and a partial outage, in the trace's clock."""
    origin = workload.time_origin
    path = tmp_path_factory.mktemp("calendar") / "downtime.txt"
    path.write_text(
        f"{origin + 0.4 * DAY} {origin + 0.4 * DAY + 4 * HOUR} S - maintenance\n"
        f"{origin + 0.8 * DAY} {origin + 0.8 * DAY + 2 * HOUR} U 16 rack failure\n"
        f"{origin + 1.0 * DAY} {origin + 1.0 * DAY + 3 * HOUR} S\n"
    )
    return path


@pytest.fixture(scope="module")
def queue_runs(workload: hpcsched.Workload, calendar: Path) -> dict[str, Result]:
    """Heuristics and MARS under a downtime calendar (no power model)."""
    search = hpcsched.SearchSpec(iterations=20, trees=1)
    return {
        "FCFS +EASY": hpcsched.simulate(workload, "fcfs", downtime=calendar),
        "WFP3 +EASY": hpcsched.simulate(workload, "wfp3", downtime=calendar),
        "MARS-CW": hpcsched.simulate(
            workload, hpcsched.PolicySpec("mars-cw", search=search), downtime=calendar
        ),
    }


@pytest.fixture(scope="module")
def power_runs(workload: hpcsched.Workload) -> dict[str, Result]:
    """A queue policy and two power managers on a platform with a power model."""
    return {
        "FCFS": hpcsched.simulate(workload, "fcfs", platform="AOBA-64"),
        "FCFS/B+IPM": hpcsched.simulate(workload, "fcfs-b+ipm", platform="AOBA-64"),
        "SNF-ICON": hpcsched.simulate(workload, "snf-icon", platform="AOBA-64"),
    }


@pytest.fixture(scope="module")
def plain_runs(workload: hpcsched.Workload) -> dict[str, Result]:
    return {"FCFS": hpcsched.simulate(workload, "fcfs"), "SJF": hpcsched.simulate(workload, "sjf")}


def assert_drawn(fig: Figure) -> None:
    """A non-empty figure: every visible axes has drawn artists."""
    assert isinstance(fig, Figure)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert visible
    for ax in visible:
        assert ax.lines or ax.patches or ax.collections, f"empty axes {ax.get_title()!r}"


def assert_renders(fig: Figure) -> bytes:
    """A non-empty figure whose PNG is a real picture."""
    assert_drawn(fig)
    png = plots.figure_to_png(fig)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) > 5000
    return png


def started_waits(result: Result) -> np.ndarray:
    jobs = result.jobs
    return jobs.loc[jobs["start"].notna(), "wait"].to_numpy()


# --- wait-time box plots -----------------------------------------------------------------------


def test_wait_boxplot_one_box_per_policy_with_the_true_means(
    queue_runs: dict[str, Result],
) -> None:
    fig = plots.wait_boxplot(queue_runs)
    assert_renders(fig)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    boxes = [p for p in ax.patches if isinstance(p, PathPatch)]
    assert len(boxes) == len(queue_runs)
    (means,) = [line for line in ax.lines if line.get_gid() == "mean-markers"]
    expected = [max(r.info["wait"]["mean"], 1.0) / HOUR for r in queue_runs.values()]
    np.testing.assert_allclose(means.get_ydata(), expected, rtol=1e-12)
    # the box spans the quartiles of the waits (floored at 1 s), in hours; whisker caps sit
    # at the 5th and 95th percentiles
    caps = [tuple(line.get_ydata()) for line in ax.lines if line.get_gid() != "mean-markers"]
    for box, result in zip(boxes, queue_runs.values(), strict=True):
        hours = np.maximum(started_waits(result), 1.0) / HOUR
        low, high = box.get_path().get_extents().intervaly
        np.testing.assert_allclose([low, high], np.percentile(hours, [25, 75]), rtol=1e-9)
        p5, p95 = np.percentile(hours, [5, 95])
        assert (p5, p5) in caps
        assert (p95, p95) in caps
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert all(label in tick for label, tick in zip(queue_runs, ticks, strict=True))


def test_wait_boxplot_all_zero_waits_sit_at_the_floor(plain_runs: dict[str, Result]) -> None:
    quiet = hpcsched.simulate(generate.markovian(100, 64, 3600.0, 0.2, 0.35, 5), "fcfs")
    assert quiet.info["wait"]["max"] == 0
    fig = plots.wait_boxplot({"idle machine": quiet, **plain_runs})
    assert_renders(fig)
    ax = fig.axes[0]
    (means,) = [line for line in ax.lines if line.get_gid() == "mean-markers"]
    assert means.get_ydata()[0] == pytest.approx(1.0 / HOUR)
    assert ax.get_ylim()[0] < 1.0 / HOUR  # the floor is inside the axis
    tick = ax.get_xticklabels()[0].get_text().replace("\u00a0", " ")  # no-break spaces
    assert "100 % no wait" in tick


def test_wait_by_class_boxplot_groups_by_class_with_counts(
    queue_runs: dict[str, Result],
) -> None:
    fig = plots.wait_by_class_boxplot(queue_runs)
    assert_renders(fig)
    ax = fig.axes[0]
    jobs = next(iter(queue_runs.values())).jobs
    present = [c for c in ("S", "M", "L", "XL") if (jobs["size_class"] == c).any()]
    assert "XL" not in present  # this workload has no XL job: its group is skipped
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert [t.split(":")[0] for t in ticks] == present
    for cls, tick in zip(present, ticks, strict=True):
        assert f"n={int((jobs['size_class'] == cls).sum())} jobs" in tick
    assert ticks[0].startswith("S: 1\u20132 nodes")  # 64 nodes: S is 1 to 2 nodes
    boxes = [p for p in ax.patches if isinstance(p, PathPatch)]
    assert len(boxes) == len(present) * len(queue_runs)
    s_means = next(line for line in ax.lines if line.get_gid() == "mean-markers")
    first = next(iter(queue_runs.values()))
    s_waits = first.jobs.loc[first.jobs["size_class"] == "S", "wait"].mean()
    assert s_means.get_ydata()[0] == pytest.approx(max(s_waits, 1.0) / HOUR)


# --- utilization and start kinds ---------------------------------------------------------------


def bar_heights(ax: Axes) -> list[list[float]]:
    return [[bar.get_height() for bar in c] for c in ax.containers if isinstance(c, BarContainer)]


def test_utilization_bars_are_the_summary_values(queue_runs: dict[str, Result]) -> None:
    fig = plots.utilization_plot(queue_runs)
    assert_renders(fig)
    windows, before = fig.axes[0], fig.axes[1]
    periods = [r.info["utilization"]["uptime_periods"] for r in queue_runs.values()]
    assert len(periods[0]) == 3  # two whole-machine maintenances split the run in three
    expected = [[100 * p["utilization"] for p in ps] for ps in periods]
    np.testing.assert_allclose(bar_heights(windows), expected)
    pre = [r.info["utilization"]["before_maintenance"] for r in queue_runs.values()]
    assert len(pre[0]) == 2
    np.testing.assert_allclose(
        bar_heights(before), [[100 * b["utilization"] for b in bs] for bs in pre]
    )


def test_utilization_without_downtime_draws_the_one_window(
    plain_runs: dict[str, Result],
) -> None:
    fig = plots.utilization_plot(plain_runs)
    assert_renders(fig)
    assert len(fig.axes) == 1
    expected = [[100 * r.info["utilization"]["overall_uptime"]] for r in plain_runs.values()]
    np.testing.assert_allclose(bar_heights(fig.axes[0]), expected)


def test_start_kind_bars_sum_to_100_percent(queue_runs: dict[str, Result]) -> None:
    fig = plots.start_kinds_plot(queue_runs)
    assert_renders(fig)
    ax = fig.axes[0]
    segments = [p for p in ax.patches if (p.get_gid() or "").startswith("start-kind-")]
    assert len(segments) == 3 * len(queue_runs)
    for i, result in enumerate(queue_runs.values()):
        mine = [p for p in segments if abs(p.get_x() + p.get_width() / 2 - i) < 1e-9]
        assert sum(p.get_height() for p in mine) == pytest.approx(100.0)
        kinds = result.jobs["start_kind"].value_counts()
        started = kinds.sum()
        for p in mine:
            kind = p.get_gid().removeprefix("start-kind-")
            assert p.get_height() == pytest.approx(100 * kinds[kind] / started)
    assert any(
        kinds["backfill"] for kinds in (r.info["jobs"]["start_kinds"] for r in queue_runs.values())
    )
    texts = [t.get_text() for t in ax.texts]
    fcfs_backfill = next(iter(queue_runs.values())).info["jobs"]["start_kinds"]["backfill"]
    assert any(t.startswith(f"{fcfs_backfill} (") for t in texts)


# --- search effort -----------------------------------------------------------------------------


def test_search_effort_plots_each_searched_decision(queue_runs: dict[str, Result]) -> None:
    decisions = queue_runs["MARS-CW"].decisions
    searched = decisions[decisions["outcomes"] >= 2]
    assert len(searched) > 10
    # an iteration budget every search used up: a constant panel is left out (issue 14)
    assert set(searched["iterations"]) == {20}
    fig = plots.search_effort_plot(queue_runs)
    assert_renders(fig)
    (branching_ax,) = fig.axes
    assert "every search ran 20 MCTS iterations" in branching_ax.get_title()
    (points,) = [c for c in branching_ax.collections if isinstance(c, PathCollection)]
    xy = points.get_offsets()
    np.testing.assert_allclose(xy[:, 0], searched["time"] / DAY)
    np.testing.assert_allclose(xy[:, 1], searched["outcomes"])


def test_search_effort_draws_iterations_when_they_vary(queue_runs: dict[str, Result]) -> None:
    mars = queue_runs["MARS-CW"]
    varied = mars.decisions.copy()
    varied["iterations"] = varied["iterations"] + np.arange(len(varied)) % 3  # a time budget
    fig = plots.search_effort_plot({"MARS-CW": mars.replace(decisions=varied)})
    assert_renders(fig)
    iterations_ax, branching_ax = fig.axes
    searched = varied[varied["outcomes"] >= 2]
    (iterations,) = iterations_ax.collections
    np.testing.assert_allclose(iterations.get_offsets()[:, 1], searched["iterations"])
    assert "MCTS" not in branching_ax.get_title()


def test_search_effort_needs_a_lookahead_run(
    plain_runs: dict[str, Result], power_runs: dict[str, Result]
) -> None:
    with pytest.raises(ValueError, match="look-ahead"):
        plots.search_effort_plot(plain_runs)
    with pytest.raises(ValueError, match="look-ahead"):
        plots.search_effort_plot(power_runs)


# --- Pareto ------------------------------------------------------------------------------------


def test_pareto_frontier_on_hand_made_points() -> None:
    x = [1, 2, 3, 4, 2, 5, 1, np.nan, 0.5]
    y = [5, 3, 4, 1, 3, 1, 6, 0, 9]
    # (3,4) is beaten by (2,3); (5,1) by (4,1) (same y, less x); (1,6) by (1,5) (same x);
    # NaN is never on the frontier; the duplicate (2,3) is kept twice
    expected = [True, True, False, True, True, False, False, False, True]
    np.testing.assert_array_equal(plots.pareto_frontier(x, y), expected)
    assert plots.pareto_frontier([], []).tolist() == []
    with pytest.raises(ValueError):
        plots.pareto_frontier([1, 2], [1])


def test_pareto_frontier_matches_the_definition_on_random_points() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 8, 60).astype(float), rng.integers(0, 8, 60).astype(float)
    dominated = [
        any(x[j] <= x[i] and y[j] <= y[i] and (x[j] < x[i] or y[j] < y[i]) for j in range(60))
        for i in range(60)
    ]
    np.testing.assert_array_equal(plots.pareto_frontier(x, y), ~np.array(dominated))


@pytest.fixture(scope="module")
def pareto_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "workload": ["a"] * 4 + ["b"] * 4,
            "policy": ["FCFS/B+IPM", "SNF+IPM", "SNF-ICON", "SNF-ICON-NG"] * 2,
            "wait_mean": [7200.0, 3600.0, 1800.0, 5400.0, 100.0, 300.0, 200.0, 200.0],
            "energy_wasted_mwh": [1.0, 2.0, 3.0, 2.5, 5.0, 4.0, 4.5, 4.5],
        }
    )


def test_wait_energy_pareto_draws_the_frontier_in_hours(pareto_table: pd.DataFrame) -> None:
    part = pareto_table[pareto_table["workload"] == "a"]
    fig = plots.wait_energy_pareto(part)
    assert_renders(fig)
    ax = fig.axes[0]
    (front,) = [line for line in ax.lines if line.get_gid() == "pareto-frontier"]
    # SNF-ICON-NG (2.5 MWh, 1.5 h) is beaten by SNF+IPM (2.0 MWh, 1 h)
    np.testing.assert_allclose(front.get_xdata(), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(front.get_ydata(), [2.0, 1.0, 0.5])
    assert front.get_drawstyle() == "steps-post"
    labels = {t.get_text() for t in ax.texts}
    assert labels == set(part["policy"])
    assert "Wasted energy (MWh)" in ax.get_xlabel()
    assert "(h)" in ax.get_ylabel()


def test_wait_energy_pareto_on_summary_rows_leaves_out_runs_without_energy(
    power_runs: dict[str, Result], plain_runs: dict[str, Result]
) -> None:
    runs = {**power_runs, "SJF (no platform)": plain_runs["SJF"]}
    table = pd.DataFrame([{"policy": label, **summary_row(r.info)} for label, r in runs.items()])
    fig = plots.wait_energy_pareto(table)
    assert_renders(fig)
    ax = fig.axes[0]
    (points,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    expected = [
        (r.info["energy"]["wasted_mwh"], r.info["wait"]["mean"] / HOUR) for r in power_runs.values()
    ]
    np.testing.assert_allclose(points.get_offsets(), expected)
    # the run without a power model has no energy: no point, and the legend says so
    assert "SJF (no platform)" not in {t.get_text() for t in ax.texts}
    legend_texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "1 row(s) without values left out" in legend_texts


def test_wait_energy_pareto_one_panel_per_group(pareto_table: pd.DataFrame) -> None:
    fig = plots.wait_energy_pareto(pareto_table, group="workload")
    assert_renders(fig)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["a", "b"]
    texts_b = {t.get_text() for t in panels[1].texts}
    # the two identical points of group b share one label
    assert "SNF-ICON / SNF-ICON-NG" in texts_b
    with pytest.raises(ValueError, match="no column"):
        plots.wait_energy_pareto(pareto_table, group="trace")


def test_wait_energy_pareto_lays_out_at_most_three_panels_a_row(
    pareto_table: pd.DataFrame,
) -> None:
    table = pd.concat([pareto_table.assign(workload=f"w{k}") for k in range(4)], ignore_index=True)
    fig = plots.wait_energy_pareto(table, group="workload")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 4
    columns = {round(ax.get_position().x0, 3) for ax in panels}
    assert len(columns) == 3


# --- wait by job size --------------------------------------------------------------------------


def test_wait_by_nodes_lines_are_mean_waits_per_size(queue_runs: dict[str, Result]) -> None:
    fig = plots.wait_by_nodes_plot(queue_runs)
    assert_renders(fig)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    # a log wait axis: a group waiting days must not flatten the others (issue 14)
    assert ax.get_yscale() == "log"
    lines = [line for line in ax.lines if line.get_label() and not line.get_label().startswith("_")]
    assert len(lines) == len(queue_runs)
    for line, result in zip(lines, queue_runs.values(), strict=True):
        jobs = result.jobs
        expected = jobs[jobs["start"].notna()].groupby("nodes")["wait"].mean()
        np.testing.assert_allclose(line.get_xdata(), expected.index)
        floored = np.maximum(expected.to_numpy(), plots.WAIT_FLOOR_S) / HOUR
        np.testing.assert_allclose(line.get_ydata(), floored)
    low, high = ax.get_ylim()
    assert low <= min(line.get_ydata().min() for line in lines)
    assert high >= max(line.get_ydata().max() for line in lines)


def test_wait_by_nodes_bins_many_sizes_in_powers_of_two() -> None:
    specs = [(60.0 * k, 600.0, 900.0, size) for k, size in enumerate(range(1, 41))]
    result = hpcsched.simulate(workload_from(specs, 64), "fcfs")
    fig = plots.wait_by_nodes_plot({"FCFS": result})
    assert_renders(fig)
    (line,) = fig.axes[0].lines
    np.testing.assert_array_equal(line.get_xdata(), [1, 2, 4, 8, 16, 32])
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["1", "2\u20133", "4\u20137", "8\u201315", "16\u201331", "32\u201363"]
    jobs = result.jobs
    in_bin = jobs[(jobs["nodes"] >= 16) & (jobs["nodes"] < 32)]
    assert line.get_ydata()[4] == pytest.approx(in_bin["wait"].mean() / HOUR)


# --- SNF-ICON modes and node states -----------------------------------------------------------


def test_icon_modes_bands_cover_the_run(power_runs: dict[str, Result]) -> None:
    fig = plots.icon_modes_plot(power_runs)
    assert_renders(fig)
    band_ax = fig.axes[0]
    bands = [c for c in band_ax.collections if isinstance(c, PolyCollection)]
    assert {c.get_gid() for c in bands} == {"mode-icon", "mode-fallback"}
    icon = power_runs["SNF-ICON"]
    horizon = icon.info["energy"]["horizon_seconds"]
    widths = {c.get_gid(): sum(p.get_extents().width for p in c.get_paths()) * DAY for c in bands}
    assert sum(widths.values()) == pytest.approx(horizon, rel=1e-9)
    occupancy = icon.info["energy"]["mode_occupancy"]
    assert widths["mode-icon"] / horizon == pytest.approx(occupancy["icon"], abs=1e-6)
    # only the SNF-ICON run gets a band: the IPM and queue runs have no modes to show
    assert [t.get_text().split("\n")[0] for t in band_ax.get_yticklabels()] == ["SNF-ICON"]
    assert len(fig.axes) >= 2  # the spare-target panel


def test_icon_modes_needs_an_icon_run(
    plain_runs: dict[str, Result], power_runs: dict[str, Result]
) -> None:
    with pytest.raises(ValueError, match="SNF-ICON"):
        plots.icon_modes_plot(plain_runs)
    with pytest.raises(ValueError, match="SNF-ICON"):
        plots.icon_modes_plot({"FCFS/B+IPM": power_runs["FCFS/B+IPM"]})


def area_vertices(fig: Figure) -> dict[str, np.ndarray]:
    """The outline of each node-state area, by gid."""
    areas = [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    return {c.get_gid(): c.get_paths()[0].vertices for c in areas}


def test_node_states_stack_to_the_machine(power_runs: dict[str, Result]) -> None:
    result = power_runs["SNF-ICON"]
    fig = plots.node_states_plot(result)
    assert_renders(fig)
    areas = area_vertices(fig)
    assert list(areas) == [f"state-{s}" for s in plots.NODE_STATES]
    assert np.max(areas["state-sleeping"][:, 1]) == pytest.approx(64)
    assert "snf-icon" in fig.axes[0].get_title()
    assert plots.node_states_plot(result, title="Mine").axes[0].get_title() == "Mine"


def test_node_states_needs_a_timeline(plain_runs: dict[str, Result]) -> None:
    with pytest.raises(ValueError, match="timeline"):
        plots.node_states_plot(plain_runs["FCFS"])


def test_node_states_large_timeline_is_averaged_and_keeps_node_hours(
    power_runs: dict[str, Result],
) -> None:
    rng = np.random.default_rng(0)
    n = 300_000
    computing = rng.integers(0, 65, n)
    sleeping = 64 - computing
    times = np.cumsum(rng.exponential(30.0, n))
    timeline = pd.DataFrame(
        {
            "time": times,
            "idle": np.zeros(n, dtype=int),
            "computing": computing,
            "switching_on": np.zeros(n, dtype=int),
            "switching_off": np.zeros(n, dtype=int),
            "sleeping": sleeping,
        }
    )
    big = power_runs["SNF-ICON"].replace(timeline=timeline)
    fig = plots.node_states_plot(big)  # its time is a benchmark's concern, not a test's
    assert_renders(fig)
    assert "averaged over" in fig.axes[0].get_xlabel()
    vertices = area_vertices(fig)["state-computing"]
    assert len(vertices) < 4 * plots.MAX_TIMELINE_POINTS + 10
    # the averaged steps keep the computing node-hours exactly
    end = max(times[-1], big.info["energy"]["horizon_seconds"])
    spans = np.diff(np.r_[times, end])
    edges, means = plots._time_weighted_resample(
        times, timeline[["computing"]].to_numpy(float), end, plots.MAX_TIMELINE_POINTS
    )
    assert np.sum(means[:, 0] * np.diff(edges)) == pytest.approx(np.sum(computing * spans))


# --- which plots -------------------------------------------------------------------------------


def titles(results: Mapping[str, Result]) -> list[str]:
    return [title for title, _ in plots.applicable_plots(results)]


def test_applicable_plots_for_queue_policies(
    queue_runs: dict[str, Result], plain_runs: dict[str, Result]
) -> None:
    always = [
        "Waiting time by policy",
        "Waiting time by job size class",
        "Mean waiting time by requested nodes",
        "Utilization",
        "Job start kinds",
    ]
    schedules = [f"Schedule: {label}" for label in plain_runs]
    assert titles(plain_runs) == [*always, *schedules]
    schedules = [f"Schedule: {label}" for label in queue_runs]
    assert titles(queue_runs) == [*always, "MCTS search effort", *schedules]


def test_applicable_plots_for_power_managers_all_render(power_runs: dict[str, Result]) -> None:
    listed = plots.applicable_plots(power_runs)
    names = [title for title, _ in listed]
    assert "SNF-ICON modes" in names
    assert "Power drawn over time" in names
    assert "MCTS search effort" not in names
    # one node-state figure for the two power-managed runs, not one each (issue 14)
    assert [n for n in names if n.startswith("Node power states")] == ["Node power states"]
    for _, make in listed:
        assert_drawn(make())


def test_node_states_overview_shows_the_first_run_and_every_runs_shares(
    power_runs: dict[str, Result],
) -> None:
    timed = {k: r for k, r in power_runs.items() if not r.timeline.empty}
    assert list(timed) == ["FCFS/B+IPM", "SNF-ICON"]
    fig = plots.node_states_overview_plot(power_runs)
    assert_renders(fig)
    timeline_ax, bars_ax = fig.axes[:2]
    assert "FCFS/B+IPM" in timeline_ax.get_title()
    assert [t.get_text() for t in bars_ax.get_yticklabels()] == list(timed)
    # each bar is the run's share of node-seconds not computing, from its summary
    ends = {}
    for patch in bars_ax.patches:
        row = round(patch.get_y() + patch.get_height() / 2)
        ends[row] = max(ends.get(row, 0.0), patch.get_x() + patch.get_width())
    for row, result in enumerate(timed.values()):
        seconds = result.info["energy"]["node_seconds"]
        idle_share = 100 * (1 - seconds["computing"] / sum(seconds.values()))
        assert ends[row] == pytest.approx(idle_share)


def test_plots_of_runs_read_back_from_disk(
    power_runs: dict[str, Result], queue_runs: dict[str, Result], tmp_path: Path
) -> None:
    runs = {"MARS-CW": queue_runs["MARS-CW"], **power_runs}
    back = {}
    for label, result in runs.items():
        result.write(tmp_path / label.replace("/", "-"))
        back[label] = read_run(tmp_path / label.replace("/", "-"))
    assert titles(back) == titles(runs)
    for _, make in plots.applicable_plots(back):
        assert_drawn(make())


def test_one_colour_per_policy_across_figures(power_runs: dict[str, Result]) -> None:
    box = plots.wait_boxplot(power_runs)
    lines = plots.wait_by_nodes_plot(power_runs)
    box_colors = [p.get_facecolor()[:3] for p in box.axes[0].patches if isinstance(p, PathPatch)]
    line_colors = [line.get_color()[:3] for line in lines.axes[0].lines if isinstance(line, Line2D)]
    assert box_colors == line_colors
    assert len(set(box_colors)) == len(power_runs)


def test_no_policies_is_an_error() -> None:
    with pytest.raises(ValueError, match="no results"):
        plots.wait_boxplot({})


def test_module_never_imports_pyplot() -> None:
    code = (
        "import sys, hpcsched.plots as p, pandas as pd\n"
        "fig = p.wait_energy_pareto(pd.DataFrame({'policy': ['a'], 'wait_mean': [1.0],"
        " 'energy_wasted_mwh': [1.0]}))\n"
        "p.figure_to_png(fig)\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_wait_energy_pareto_does_not_blow_up_a_tiny_energy_spread() -> None:
    # three runs 0.05 % of the total energy apart: no full-width trade-off (issue 14)
    table = pd.DataFrame(
        {
            "policy": ["A", "B", "C"],
            "energy_wasted_mwh": [1.235, 1.245, 1.280],
            "energy_total_mwh": [63.17, 63.18, 63.21],
            "wait_mean": [0.97 * HOUR, 0.61 * HOUR, 0.61 * HOUR],
        }
    )
    fig = plots.wait_energy_pareto(table)
    assert_renders(fig)
    low, high = fig.axes[0].get_xlim()
    assert high - low == pytest.approx(0.01 * 63.21)
    assert low < 1.235 and high > 1.280
    assert "at least 1 % of the total energy" in fig.legends[0].get_title().get_text()
    # a wide spread keeps matplotlib's own limits, and no note
    wide = table.assign(energy_wasted_mwh=[1.0, 5.0, 9.0])
    fig = plots.wait_energy_pareto(wide)
    low, high = fig.axes[0].get_xlim()
    assert low < 1.0 and high > 9.0 and high - low < 12
    assert not fig.legends[0].get_title().get_text()


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ((0.15, 12.0), {"0.2", "0.5", "1", "2", "5", "10"}),  # was 1 and 10 only
        ((1e-4, 100.0), {"0.001", "0.01", "0.1", "1", "10", "100"}),
    ],
)
def test_a_log_hours_axis_labels_enough_values_to_read_the_data(span, expected):
    from matplotlib.figure import Figure

    from hpcsched.plots._style import _hours_log_axis

    ax = Figure().subplots()
    ax.plot([0, 1], span)
    _hours_log_axis(ax)
    ax.figure.canvas.draw()
    low, high = ax.get_ylim()
    shown = {t.get_text() for t in ax.get_yticklabels() if low <= t.get_position()[1] <= high}
    assert expected <= shown, shown
    if span[0] < 1e-3:  # a wide span keeps the powers of ten alone
        assert not {"0.2", "0.5", "2", "5"} & shown


def test_the_utilization_axis_starts_where_the_differences_show():
    from hpcsched.plots.utilization import _axis_floor

    assert _axis_floor([91.5, 91.9]) == 85  # a 0-100 axis made these look equal
    assert _axis_floor([64.3, 64.5]) == 60
    assert _axis_floor([20.0, 90.0]) == 0  # spread or low values: from zero
    assert _axis_floor([35.0, 36.0]) == 0
    assert _axis_floor([]) == 0


def test_a_cut_utilization_axis_says_where_it_starts():
    import hpcsched
    from hpcsched.workload.generate import markovian

    workload = markovian(n_jobs=300, target_util=0.9, seed=4)
    results = {p: hpcsched.simulate(workload, p) for p in ("fcfs", "sjf")}
    shares = [100 * r.info["utilization"]["overall_uptime"] for r in results.values()]
    fig = plots.utilization_plot(results)
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    assert low <= min(shares) and max(shares) <= high <= 105
    if low > 0:
        assert f"axis from {low:.0f}" in ax.get_ylabel()


def test_every_figure_has_a_caption_that_says_what_to_read():
    import inspect

    from hpcsched.plots import catalog

    source = inspect.getsource(catalog.applicable_plots)
    titles = [*re.findall(r'\("([A-Z][^"]+)", partial', source), "Node power states"]
    assert len(titles) >= 9
    for title in titles:
        reading = catalog.reading_of(title)
        assert reading in catalog.READING.values() and title not in reading
        assert len(reading) > len(title) + 40, title  # a sentence, not the title again
    assert catalog.reading_of("Node power states: FCFS") == catalog.READING["Node power states"]


def test_power_lines_that_would_overlap_are_drawn_as_differences(
    power_runs: dict[str, Result],
) -> None:
    labels = [label for label, r in power_runs.items() if not r.timeline.empty]
    assert len(labels) >= 2
    fig = plots.power_plot(power_runs)
    assert_renders(fig)
    top, below = fig.axes
    assert [line.get_gid() for line in top.get_lines()] == labels[:1]
    drawn = {line.get_gid(): line for line in below.get_lines() if line.get_gid()}
    assert sorted(drawn) == sorted(labels[1:])
    assert top.get_legend() is None and below.get_legend() is None  # the legend is below
    # a run against itself differs by nothing; alone, a run gets one panel
    twice = {"a": power_runs[labels[0]], "b": power_runs[labels[0]]}
    fig = plots.power_plot(twice)
    (diff,) = [line for line in fig.axes[1].get_lines() if line.get_gid() == "b"]
    assert np.all(diff.get_ydata() == 0)
    assert len(plots.power_plot({"a": power_runs[labels[0]]}).axes) == 1


def test_notes_after_short_bars_stay_inside_the_axes(power_runs: dict[str, Result]) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from hpcsched.plots.power import _fit_notes

    fig = Figure(figsize=(4, 1.5), layout="constrained")
    ax = fig.subplots()
    ax.barh([0], [5.0])
    ax.set_xlim(0, 5.0 * 1.45)  # the old range: a short bar left no room for its note
    note = ax.annotate(
        "idle 3.1 · switching 0.4 · sleeping 1.5 %", (5.0, 0), xytext=(4, 0),
        textcoords="offset points", va="center", fontsize=8,
    )  # fmt: skip
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    assert note.get_window_extent(renderer).x1 > ax.get_window_extent(renderer).x1
    _fit_notes(fig, ax, [note])
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    assert note.get_window_extent(renderer).x1 <= ax.get_window_extent(renderer).x1
    # and in the real figure
    fig = plots.node_states_overview_plot(power_runs)
    fig.draw_without_rendering()
    renderer = FigureCanvasAgg(fig).get_renderer()
    bars = fig.axes[1]
    for text in bars.texts:
        assert text.get_window_extent(renderer).x1 <= bars.get_window_extent(renderer).x1


def test_both_utilization_panels_give_a_bar_the_same_width(queue_runs: dict[str, Result]) -> None:
    # the pre-maintenance panel was half as wide per bar: its value labels crammed, rotated
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = plots.utilization_plot(queue_runs)
    fig.draw_without_rendering()
    renderer = FigureCanvasAgg(fig).get_renderer()
    windows, before = fig.axes[:2]
    widths = [
        {round(p.get_window_extent(renderer).width) for p in ax.patches} for ax in (windows, before)
    ]
    assert len(widths[0] | widths[1]) == 1, widths
    rotations = {t.get_rotation() for ax in (windows, before) for t in ax.texts}
    assert len(rotations) <= 1  # labels read the same way in both
    for ax in (windows, before):  # and stay inside their axes
        frame = ax.get_window_extent(renderer)
        for text in ax.texts:
            box = text.get_window_extent(renderer)
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and box.y1 <= frame.y1 + 1


# --- a trace that records its schedule ---------------------------------------------------------


@pytest.fixture(scope="module")
def recorded_runs() -> dict[str, Result]:
    """Recorded, FCFS +EASY and SJF +EASY on four jobs whose trace records three waits."""
    return hpcsched.compare(workload_with_record(), ["fcfs", "sjf"], processes=1).results


def test_recorded_runs_list_the_start_error_figure_and_start_kinds_of_the_others(
    recorded_runs: dict[str, Result],
) -> None:
    assert list(recorded_runs) == ["Recorded", "FCFS +EASY", "SJF +EASY"]
    listed = titles(recorded_runs)
    assert listed[4:] == [
        "Start error against the recorded schedule",
        "Job start kinds",
        *(f"Schedule: {label}" for label in recorded_runs),
    ]
    for _, make in plots.applicable_plots(recorded_runs):
        assert_drawn(make())
    # the record alone: no agreement to draw, no start kinds to count
    alone = {"Recorded": recorded_runs["Recorded"]}
    assert "Start error against the recorded schedule" not in titles(alone)
    assert "Job start kinds" not in titles(alone)
    with pytest.raises(ValueError, match="start kinds"):
        plots.start_kinds_plot(alone)
    # the waits and the utilization draw the record as one more series, first
    box = plots.wait_boxplot(recorded_runs).axes[0]
    assert [t.get_text().split("\n")[0] for t in box.get_xticklabels()] == list(recorded_runs)
    bars = list(plots.utilization_plot(recorded_runs).axes[0].containers)
    assert len(bars) == len(recorded_runs)


def test_start_kinds_plot_leaves_out_the_recorded_run(recorded_runs: dict[str, Result]) -> None:
    fig = plots.start_kinds_plot(recorded_runs)
    assert_renders(fig)
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["FCFS +EASY\n4 started", "SJF +EASY\n4 started"]
    segments = [p for p in ax.patches if (p.get_gid() or "").startswith("start-kind-")]
    assert len(segments) == 3 * 2  # one bar per simulated run, none (empty) for the record
    notes = [t.get_text() for t in fig.findobj(Text) if t.get_text().startswith("Not shown")]
    assert notes == ["Not shown: Recorded (the trace records when its jobs started, not how)"]


def test_start_error_plot_draws_one_curve_per_simulated_policy(
    recorded_runs: dict[str, Result],
) -> None:
    # the record starts jobs 1, 2, 4 at 0, 15, 120 (job 3: unknown); FCFS at 0, 10, 260 and
    # SJF at 0, 10, 100: errors 0, 5, 140 s and 0, 5, 20 s
    errors = plots.start_errors(recorded_runs)
    assert list(errors) == ["FCFS +EASY", "SJF +EASY"]
    np.testing.assert_array_equal(errors["FCFS +EASY"], [0.0, 5.0, 140.0])
    np.testing.assert_array_equal(errors["SJF +EASY"], [0.0, 5.0, 20.0])
    for label, error in errors.items():
        agreement = recorded_runs[label].info["agreement"]
        assert error.mean() == pytest.approx(agreement["start_error"]["mean"])
    fig = plots.start_error_plot(recorded_runs)
    assert_renders(fig)
    ax = fig.axes[0]
    curves = [line for line in ax.lines if (line.get_gid() or "").startswith("start-error-")]
    assert [c.get_gid() for c in curves] == ["start-error-FCFS +EASY", "start-error-SJF +EASY"]
    fcfs = curves[0]
    # from 0 % at the left edge up a third at each job (the 0 s error drawn at 1 s), to 100 %
    x, y = fcfs.get_xdata(), fcfs.get_ydata()
    np.testing.assert_allclose(x[1:-1] * HOUR, [1.0, 5.0, 140.0])
    np.testing.assert_allclose(y, [0.0, 100 / 3, 200 / 3, 100.0, 100.0])
    assert ax.get_xscale() == "log"
    assert any(line.get_xdata()[0] == 1.0 for line in ax.lines if line not in curves)  # 1 h
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == [  # means of 145/3 and 25/3 s
        "FCFS +EASY: 100\u00a0% within 1\u00a0h, mean 48\u00a0s",
        "SJF +EASY: 100\u00a0% within 1\u00a0h, mean 8\u00a0s",
    ]
    # the colours of the other figures: the record keeps the first, unused here
    box = plots.wait_boxplot(recorded_runs).axes[0]
    box_colors = [p.get_facecolor()[:3] for p in box.patches if isinstance(p, PathPatch)]
    assert [c.get_color()[:3] for c in curves] == box_colors[1:]


def test_start_errors_of_runs_read_back_come_from_the_recorded_run(
    recorded_runs: dict[str, Result], tmp_path: Path
) -> None:
    back = {}
    for label, result in recorded_runs.items():
        back[label] = read_run(result.write(tmp_path / label.replace(" ", "-")))
    assert "recorded_wait" not in back["FCFS +EASY"].workload.jobs  # a run keeps no record
    errors = plots.start_errors(back)
    for label, error in plots.start_errors(recorded_runs).items():
        np.testing.assert_array_equal(errors[label], error)
    assert titles(back) == titles(recorded_runs)
