"""Every job on named nodes (issue 42, "See the schedule"): the layout of a hand-computed
one-pool schedule with an outage, the engine's names on a site of whole nodes, the Gantt
chart's boxes (checked on the figure's data), Batsim's jobs.csv read back by evalys, the
command line, and on real traces that no node ever holds two things at once while every
count the run recorded (job sizes, partitions, the power timeline) holds."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.export import BATSIM_COLUMNS, batsim_jobs, write_batsim_jobs
from hpcsched.node_ranges import parse_ranges
from hpcsched.placement import placement
from hpcsched.plots import figure_to_png
from hpcsched.plots.gantt import JOBS_GID, KILLED_GID, STATES_GID, busiest_day, gantt_chart
from hpcsched.workload import Downtime, DowntimeCalendar
from tests.conftest import TRACES, require_traces, workload_from
from tests.test_partitions import PLATFORM, TRACE

#: 4 nodes; (submit, run, requested, nodes). An outage of the whole machine over [200, 260)
#: kills J3 (started at 10); it starts again at 260.
SPECS = [(0, 100, 100, 2), (0, 50, 50, 1), (10, 300, 300, 1), (120, 50, 50, 3)]
OUTAGE = DowntimeCalendar((Downtime(200.0, 260.0, "unscheduled"),))


@pytest.fixture(scope="module")
def outage_run() -> hpcsched.Result:
    return hpcsched.simulate(workload_from(SPECS, 4), "fcfs", downtime=OUTAGE)


def test_one_pool_is_laid_out_lowest_nodes_first_around_an_outage(outage_run):
    """By hand: J1 takes 0-1 and J2 node 2 at 0, J3 node 3 at 10; J4 (3 nodes) at 120 takes
    0-2, freed by J1 and J2. At 200 the outage kills J3 and holds all four nodes; at 260 J3
    starts again on node 0, the lowest free."""
    placed = placement(outage_run)
    assert placed.laid_out
    rows = {(r.job_id, r.killed): (r.start, r.end, r.nodes) for r in placed.jobs.itertuples()}
    assert rows == {
        (1, False): (0.0, 100.0, "0-1"),
        (2, False): (0.0, 50.0, "2"),
        (3, True): (10.0, 200.0, "3"),
        (4, False): (120.0, 170.0, "0-2"),
        (3, False): (260.0, 560.0, "0"),
    }
    assert placed.states.to_dict("records") == [
        {"state": "down", "start": 200.0, "end": 260.0, "nodes": "0-3"}
    ]


def test_the_gantt_chart_draws_each_attempt_on_its_nodes(outage_run, tmp_path):
    fig = gantt_chart(outage_run)
    ax = fig.axes[0]
    by_gid = {c.get_gid(): c for c in ax.collections}

    def boxes(gid: str) -> set[tuple[float, float, float, float]]:
        # (start s, end s, first node, end node) of each rectangle, from its corners
        out = set()
        for path in by_gid[gid].get_paths():
            (x0, y0), (x1, y1) = path.vertices.min(axis=0), path.vertices.max(axis=0)
            out.add((round(x0 * 3600, 6), round(x1 * 3600, 6), y0, y1))
        return out

    assert boxes(JOBS_GID) == {
        (0.0, 100.0, 0, 2),
        (0.0, 50.0, 2, 3),
        (120.0, 170.0, 0, 3),
        (260.0, 560.0, 0, 1),
    }
    assert boxes(KILLED_GID) == {(10.0, 200.0, 3, 4)}
    assert boxes(STATES_GID.format(state="down")) == {(200.0, 260.0, 0, 4)}
    assert ax.get_ylim() == (0, 4)
    png = figure_to_png(fig)
    assert png.startswith(b"\x89PNG")
    # a window clips the boxes to it
    clipped = gantt_chart(outage_run, start=150.0, end=300.0)
    jobs = {c.get_gid(): c for c in clipped.axes[0].collections}[JOBS_GID]
    spans = sorted(
        (round(p.vertices[:, 0].min() * 3600, 6), round(p.vertices[:, 0].max() * 3600, 6))
        for p in jobs.get_paths()
    )
    assert spans == [(150.0, 170.0), (260.0, 300.0)]


def test_a_site_of_whole_nodes_names_each_jobs_nodes_inside_its_partition(tmp_path):
    """The hand-computed two-tier site of test_partitions: J1 (6 nodes of batch) on batch's
    own nodes 0-5, J3 (debug) on debug's 6-7, J4 (debug, 1 node) on 6 at 52 and J7 (batch)
    beside it on 7, J8 on 7 after J7, J2 (all 8) at 552; J5 and J6 never start."""
    (tmp_path / "site.toml").write_text(PLATFORM)
    (tmp_path / "trace.swf").write_text(TRACE)
    result = hpcsched.simulate(
        tmp_path / "trace.swf", "fcfs", platform=str(tmp_path / "site.toml"), out=tmp_path / "r"
    )
    assert result.jobs["alloc_nodes"].tolist() == ["0-5", "0-7", "6-7", "6", "", "", "7", "7"]
    back = hpcsched.read_run(tmp_path / "r")  # kept in jobs.parquet
    assert back.jobs["alloc_nodes"].tolist() == result.jobs["alloc_nodes"].tolist()
    placed = placement(back)
    assert not placed.laid_out
    assert placed.partitions == (("batch", ((0, 8),)), ("debug", ((6, 8),)))
    fig = gantt_chart(back)
    names = [t.get_text() for t in fig.axes[0].texts]
    assert names == ["batch", "debug"]


def test_batsim_jobs_csv_holds_every_attempt_as_batsim_writes_it(outage_run, tmp_path):
    table = batsim_jobs(outage_run)
    assert tuple(table.columns) == BATSIM_COLUMNS
    assert table["job_id"].tolist() == ["1", "2", "3#1", "4", "3"]
    assert table["allocated_resources"].tolist() == ["0-1", "2", "3", "0-2", "0"]
    assert table["final_state"].tolist() == [
        "COMPLETED_SUCCESSFULLY",
        "COMPLETED_SUCCESSFULLY",
        "COMPLETED_KILLED",
        "COMPLETED_SUCCESSFULLY",
        "COMPLETED_SUCCESSFULLY",
    ]
    assert table["success"].tolist() == [1, 1, 0, 1, 1]
    row = table[table["job_id"] == "3"].iloc[0]
    assert (row.submission_time, row.starting_time, row.finish_time) == (10.0, 260.0, 560.0)
    assert (row.waiting_time, row.turnaround_time, row.execution_time) == (250.0, 550.0, 300.0)
    assert row.stretch == pytest.approx(550.0 / 300.0)
    assert row.requested_number_of_resources == 1
    assert (table["consumed_energy"] == -1.0).all()  # no power model


# evalys 4.0.7 calls pandas APIs that pandas 3 deprecates: its warnings, not ours
@pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_evalys_reads_the_jobs_csv_and_draws_its_gantt_chart(outage_run, tmp_path):
    evalys_jobset = pytest.importorskip("evalys.jobset", reason="evalys is a test dependency")
    import matplotlib

    matplotlib.use("Agg")
    from evalys import visu

    path = write_batsim_jobs(outage_run, tmp_path / "jobs.csv")
    js = evalys_jobset.JobSet.from_csv(path)
    assert js.MaxProcs == 4
    assert sorted(map(str, js.df["allocated_resources"])) == ["0", "0-1", "0-2", "2", "3"]
    np.testing.assert_allclose(sorted(js.df["execution_time"]), [50, 50, 100, 190, 300])
    assert js.utilisation["load"].max() == 4  # all four nodes busy at once between 120 and 170
    visu.gantt.plot_gantt(js)
    import matplotlib.pyplot as plt

    fig = plt.gcf()
    bars = [p for p in fig.axes[0].patches if p.get_width() > 0]
    assert len(bars) == 5  # one rectangle per attempt (each on consecutive nodes)
    fig.savefig(tmp_path / "evalys.png")
    plt.close(fig)


def test_simulate_writes_the_chart_and_the_csv_and_refuses_mistakes(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text(
        "; MaxNodes: 4\n"
        + "".join(
            f"{i + 1} {s} -1 {r} {n} -1 -1 {n} {q} -1 1 1 1 1 1 -1 -1 -1\n"
            for i, (s, r, q, n) in enumerate(SPECS)
        )
    )
    chart, jobs_csv = tmp_path / "g.svg", tmp_path / "jobs.csv"
    args = ["simulate", str(trace), "--out", str(tmp_path / "run")]
    assert main([*args, "--gantt", str(chart), "--batsim-jobs", str(jobs_csv)]) == 0
    assert chart.read_text().lstrip().startswith("<?xml")
    assert pd.read_csv(jobs_csv)["allocated_resources"].tolist() == ["0-1", "2", "3", "0-2"]
    assert "Gantt chart:" in capsys.readouterr().out
    for extra, says in [
        (["--gantt-hours", "0:1"], "--gantt-hours: a span of the chart needs the chart"),
        (["--gantt", "g.jpg"], "--gantt: write the chart as .png, .svg, .pdf"),
        (["--gantt", "g.png", "--gantt-hours", "2:1"], "TO larger than FROM"),
        (["--gantt", "g.png", "--gantt-hours", "soon"], "give FROM:TO hours"),
    ]:
        assert main([*args, "--force", *extra]) == 2
        assert says in capsys.readouterr().err


def _holders(placed) -> dict[int, list[tuple[float, float]]]:
    per_node: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for frame in (placed.jobs, placed.states):
        for start, end, nodes in zip(frame["start"], frame["end"], frame["nodes"], strict=True):
            for first, last in parse_ranges(nodes):
                for node in range(first, last + 1):
                    per_node[node].append((start, end))
    return per_node


def _check_no_node_held_twice(placed) -> None:
    for node, spans in _holders(placed).items():
        assert 0 <= node < placed.node_count
        spans.sort()
        for (s1, e1), (s2, e2) in itertools.pairwise(spans):
            # (an attempt of no length holds nothing)
            assert s2 >= e1 or e1 == s1 or e2 == s2, f"node {node}: {s1}-{e1} and {s2}-{e2}"


def _count(nodes: str) -> int:
    return sum(last - first + 1 for first, last in parse_ranges(nodes))


@pytest.mark.parametrize("policy", ["snf-icon", "fcfs-b+ipm"])
def test_a_power_managed_run_laid_out_keeps_every_count_of_its_timeline(policy):
    """Over a real trace under a power manager: each job on as many nodes as it asked, no node
    held twice at once, and at every instant of the run's timeline (the engine's own record
    of nodes per state) the layout's nodes in each state are the timeline's count."""
    trace = require_traces(TRACES / "snf-icon-paper" / "DAS2-fs2-0-3000.json.gz")
    result = hpcsched.simulate(trace, policy, platform="AOBA-64")
    placed = placement(result)
    sizes = result.jobs["nodes"].to_numpy()
    counts = np.array([_count(n) for n in placed.jobs["nodes"]])
    np.testing.assert_array_equal(counts, sizes[placed.jobs["job_index"].to_numpy()])
    _check_no_node_held_twice(placed)
    timeline = result.timeline
    states = placed.states.assign(size=[_count(n) for n in placed.states["nodes"]])
    jobs = placed.jobs.assign(size=counts)
    for row in timeline.iloc[:: max(1, len(timeline) // 400)].itertuples():
        t = row.time
        for state in ("sleeping", "switching_on", "switching_off", "down"):
            held = states[(states["state"] == state) & (states["start"] <= t) & (states["end"] > t)]
            assert held["size"].sum() == getattr(row, state), (state, t)
        running = jobs[(jobs["start"] <= t) & (jobs["end"] > t)]
        assert running["size"].sum() == row.computing, t


def test_real_sites_name_nodes_inside_each_jobs_partition():
    """Curie's first 20,000 jobs on its preset (three partitions) under a maintenance of one
    partition, and as cores (jobs sharing nodes): every attempt on as many nodes as it held,
    all inside its partition, no node held twice at once."""
    trace = require_traces(TRACES / "pwa" / "CEA-Curie-2011-2.1-cln.swf.gz")
    workload = hpcsched.load_workload(trace)
    from hpcsched.experiment import slice_workload

    part = slice_workload(workload, 0, 20000)
    origin = part.time_origin
    window = DowntimeCalendar(
        (Downtime(8e5 + origin, 9e5 + origin, "unscheduled", partition="large"),)
    )
    for platform, downtime in [
        ("CEA-Curie", window),
        (str(Path(__file__).parents[1] / "examples/platforms/curie-cores.toml"), None),
    ]:
        result = hpcsched.simulate(part, "fcfs", platform=platform, downtime=downtime)
        placed = placement(result)
        assert not placed.laid_out
        ranges = dict(placed.partitions)
        for r in placed.jobs[~placed.jobs["killed"]].itertuples():
            for first, last in parse_ranges(r.nodes):
                assert any(a <= first and last < b for a, b in ranges[r.partition]), r
        started = result.jobs[result.jobs["start"].notna()]
        if "alloc_cpus" not in result.jobs:  # whole nodes: as many as it asked
            final = placed.jobs[~placed.jobs["killed"]]
            counts = [_count(n) for n in final["nodes"]]
            np.testing.assert_array_equal(
                counts, result.jobs["nodes"].to_numpy()[final["job_index"].to_numpy()]
            )
            assert placed.jobs["killed"].any()  # the maintenance killed some
            assert len(placed.states) == 1
            _check_no_node_held_twice(placed)
        assert len(placed.jobs[~placed.jobs["killed"]]) == len(started)
        day = busiest_day(placed)
        assert day[1] - day[0] == 86400.0


TWO_PARTITIONS = """
name = "two"
[[groups]]
name = "cpu"
nodes = 8
cores = 1
[[partitions]]
name = "a"
nodes = "0-3"
default = true
[[partitions]]
name = "b"
nodes = "4-7"
"""


def _recorded_trace(path: Path, jobs: list[tuple[int, int, int, int, int]]) -> Path:
    """An SWF trace of (submit, wait, run, procs, partition) jobs on TWO_PARTITIONS."""
    lines = ["; MaxNodes: 8", "; MaxProcs: 8", "; Partition: 1 a", "; Partition: 2 b"]
    for i, (submit, wait, run, procs, part) in enumerate(jobs):
        lines.append(
            f"{i + 1} {submit} {wait} {run} {procs} -1 -1 {procs} {run} -1 1 1 1 1 1 {part} -1 -1"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_recorded_schedule_is_laid_out_in_the_partitions_it_names(tmp_path):
    """The record: J1 (b, 2 nodes) at 0, J3 (b, 2 nodes) at 5, J2 (a, 4 nodes) at 10. Each is
    laid out inside its own partition (b is nodes 4-7): J1 on 4-5, J3 on 6-7, J2 on 0-3. A
    record that holds more of b than b has (J4, one more node of b at 20) has no layout: a
    clear error, and a report leaves its chart out."""
    (tmp_path / "two.toml").write_text(TWO_PARTITIONS)
    platform = str(tmp_path / "two.toml")
    jobs = [(0, 0, 100, 2, 2), (0, 10, 50, 4, 1), (5, 0, 20, 2, 2)]
    trace = _recorded_trace(tmp_path / "r.swf", jobs)
    placed = placement(hpcsched.simulate(trace, "recorded", platform=platform))
    assert placed.laid_out
    assert dict(zip(placed.jobs["job_id"], placed.jobs["nodes"], strict=True)) == {
        1: "4-5",
        2: "0-3",
        3: "6-7",
    }
    over = _recorded_trace(tmp_path / "over.swf", [*jobs, (20, 0, 10, 1, 2)])
    result = hpcsched.simulate(over, "recorded", platform=platform)
    with pytest.raises(hpcsched.InputError, match="more nodes than its partitions"):
        placement(result)
    from hpcsched.plots.gantt import schedule_plots

    fcfs = hpcsched.simulate(over, "fcfs", platform=platform)
    titles = [title for title, _ in schedule_plots({"Recorded": result, "FCFS": fcfs})]
    assert titles == ["Schedule: FCFS"]
