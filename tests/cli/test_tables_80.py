"""Every table the commands print is readable at 80 columns, which is also what a pipe gets:
no cell is cut (rich marks a cut with an ellipsis), every number appears whole."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from tests.conftest import run_cli as run

from hpcsched.cli import _console
from hpcsched.cli.compare import print_table

FIXTURES = Path(__file__).parent.parent / "advise" / "fixtures"


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch):
    monkeypatch.setattr(_console.console, "width", 80)
    monkeypatch.setattr(_console.err_console, "width", 80)


def readable(out: str) -> None:
    assert "…" not in out, out
    assert max(len(line) for line in out.splitlines()) <= 80, out


@pytest.fixture
def workload(tmp_path, capsys):
    path = tmp_path / "m.json"
    assert run(["generate", "markovian", path, "--jobs", "300", "--seed", "5"], capsys)[0] == 0
    return path


def test_simulate_inspect_and_policies(tmp_path, workload, capsys):
    code, out, _ = run(["simulate", workload, "--out", tmp_path / "run"], capsys)
    assert code == 0
    readable(out)
    code, out, _ = run(["inspect", workload], capsys)
    assert code == 0
    readable(out)
    code, out, _ = run(["policies"], capsys)
    assert code == 0
    readable(out)


def test_inspect_with_long_queue_names_and_many_partitions(tmp_path, capsys):
    # DAS2's queue name is a sentence; Curie has 18 partitions in use
    header = ";         Queue: 1 - All jobs submitted to same (and only) queue\n" + "".join(
        f"; Partition: {k}  partition-{k}-{'x' * 3 * k}\n" for k in range(1, 19)
    )
    jobs = "".join(
        f"{k} {10 * k} {1000 * k} 3600 {k} -1 -1 {k} 7200 -1 {k % 6} 3 1 -1 1 {k % 18 + 1} -1 -1\n"
        for k in range(1, 40)
    )
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 64\n;    (123456 jobs removed)\n" + header + jobs)
    code, out, _ = run(["inspect", path], capsys)
    assert code == 0
    readable(out)
    for text in ("(and only)", "queue)", "\npartitions", "recorded waits by size class"):
        assert text in out, text
    assert "-xxxxxxxxxxxx" in out  # a long partition name folds onto more lines, never cut


def test_compare_with_every_column(tmp_path, workload, capsys):
    code, out, _ = run(
        ["compare", workload, "--platform", "AOBA-64", "--processes", "1", "--out", tmp_path / "c"]
        + [
            a
            for p in ("fcfs-b+ipm", "snf+ipm", "snf-icon", "snf-icon-ngnf")
            for a in ("--policy", p)
        ],
        capsys,
    )
    assert code == 0
    readable(out)
    for value in ("FCFS/B+IPM", "SNF-ICON-NGNF"):
        assert value in out


def test_a_wide_results_table_is_split_and_every_number_shown_whole(capsys):
    # a reproduce-like table: long labels, many metrics, large numbers
    table = pd.DataFrame(
        {
            "workload": ["SDSC-BLUE-2000-4.2-cln-0-3000", "generated-markovian-3000"],
            "platform": ["AOBA-1152", "AOBA-64"],
            "policy": ["SNF-ICON-NGNF", "FCFS/B+IPM"],
            "jobs": [3000, 3000],
            "completed": [3000, 2999],
            "wait_mean": [123456789.0, 4321.0],
            "wait_median": [1234.0, 0.0],
            "wait_p95": [98765432.0, 60.0],
            "wait_max": [987654321.0, 3600.0],
            "bsld_mean": [12345.678, 1.0],
            "utilization": [0.987654, 0.4],
            "energy_total_mwh": [12345.6789, 5.0],
            "energy_wasted_mwh": [1234.56789, 1.0],
            "icon_share": [0.712, float("nan")],
            "searches": [123456, 0],
            "drains": [7890, 0],
            "simulate_seconds": [1.5, 0.01],
        }
    )
    print_table(table, "every run", labels=("workload", "platform", "policy"))
    out = capsys.readouterr().out
    readable(out)
    for number in ("34,293.55", "27,434.84", "274,348.42", "12,345.68", "98.77", "123,456"):
        assert number in out, number
    assert "(1/" in out  # split into several tables rather than squeezed


def test_advise_plan(capsys):
    code, out, err = run(
        [
            "advise",
            "--from-json",
            FIXTURES / "squeue-mixed.json",
            FIXTURES / "sinfo-mixed.json",
            "--reservations",
            FIXTURES / "scontrol-reservation.txt",
            "--policy",
            "fcfs",
        ],
        capsys,
    )
    assert code == 0, err
    readable(out)


def test_the_spread_over_seeds_keeps_every_number_whole(capsys):
    # reproduce snf-icon --seeds: mean ± std cells beside long case names
    from hpcsched.cli.reproduce import _print_spread

    summary = pd.DataFrame(
        {
            "workload": ["SDSC-BLUE-2000-4.2-cln-0-3000", "generated-markovian-3000"],
            "platform": ["AOBA-1152", "Taurus-64"],
            "policy": ["FCFS/B+IPM", "SNF-ICON"],
            "wait_mean": [7154.6, 20.9],
            "wait_mean_std": [1.7, 0.4],
            "energy_wasted_mwh": [36.2791, 0.874],
            "energy_wasted_mwh_std": [0.0183, 0.0012],
            "icon_share": [float("nan"), 0.7104],
        }
    )
    _print_spread(summary, 10)
    out = capsys.readouterr().out
    readable(out)
    for cell in ("7,155 ± 2", "21 ± 0", "36.279 ± 0.018", "0.874 ± 0.001", "71.0"):
        assert cell in out, cell


def _show(labels, metrics, title="t") -> None:
    for view in _console.fitted_tables(title, labels, metrics, _console.console.width):
        _console.console.print(view)


def test_rows_stack_under_their_first_label_rather_than_cut_it(capsys):
    # reproduce snf-icon's table at 80 columns: long workload names, three policies each;
    # folded, each name took two or three lines mid-word (24 rows in 52 lines)
    workloads = ["DAS2-fs1-0-3000", "generated-markovian-3000", "SDSC-BLUE-2000-4.2-cln-0-3000"]
    rows = [(w, p) for w in workloads for p in ("FCFS/B+IPM", "SNF+IPM", "SNF-ICON")]
    labels = [
        ("workload", [w for w, _ in rows]),
        ("platform", ["AOBA-1152"] * len(rows)),
        ("policy", [p for _, p in rows]),
    ]
    metrics = [
        ("mean wait (h)", [f"{k + 0.25:,.2f}" for k in range(len(rows))]),
        ("max (h)", [f"{100 * k + 0.5:,.2f}" for k in range(len(rows))]),
        ("wasted (MWh)", [f"{1000 * k + 0.125:,.3f}" for k in range(len(rows))]),
    ]
    _show(labels, metrics, "SNF-ICON reproduction")
    out = capsys.readouterr().out
    readable(out)
    lines = out.splitlines()
    for name in workloads:  # each name whole, once, as the heading of its rows
        assert [line.strip() for line in lines if name in line] == [f"workload: {name}"]
    assert sum("SNF+IPM" in line for line in lines) == 3
    for _, cells in metrics:  # every number whole
        assert all(any(cell in line for line in lines) for cell in cells)
    assert len(lines) <= 3 + 3 * 4  # title, header and rule, a heading and 3 rows each


def test_a_wide_terminal_keeps_one_table(monkeypatch, capsys):
    monkeypatch.setattr(_console.console, "width", 200)
    labels = [
        ("workload", ["SDSC-BLUE-2000-4.2-cln-0-3000"] * 2),
        ("platform", ["AOBA-1152"] * 2),
        ("policy", ["SNF+IPM", "SNF-ICON"]),
    ]
    _show(labels, [("mean wait (h)", ["1.00", "2.00"])])
    out = capsys.readouterr().out
    assert sum("SDSC-BLUE-2000-4.2-cln-0-3000" in line for line in out.splitlines()) == 2


README_GRID = """
[sweep]
out = "{out}"
platforms = ["AOBA-64", "Taurus-64"]

[[workloads]]
generate = "markovian"
jobs = 60
seed = 42

[[workloads]]
generate = "markovian"
jobs = 60
seed = [43, 44]

[[policies]]
name = "snf-icon"
alpha = [1000, 5000, 20000]
screen_window = [3600, 7200]

[[policies]]
name = "fcfs-b+ipm"
"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 200])
def test_the_readmes_sweep_reads_at_80_columns_and_wide(tmp_path, monkeypatch, capsys, width):
    # README's alpha.toml grid (2 platforms x 3 workloads x 7 policies), small workloads
    monkeypatch.setattr(_console.console, "width", width)
    config = tmp_path / "alpha.toml"
    config.write_text(README_GRID.format(out=tmp_path / "res"))
    code, out, _ = run(["sweep", config, "--processes", "2"], capsys)
    assert code == 0, out
    if width == 80:
        readable(out)
    assert "…" not in out
    table = out.split("42 runs done now")[0]
    # the grid's parameters are label columns, the metrics stay metrics, numbers are rounded
    assert "alpha" in table and "screen" in table and "window" in table
    for metric in ("median", "waited", "before", "maintenance"):
        assert metric not in table, metric
    assert not re.search(r"\d\.\d{4,}", table), table
    for name in ("markovian-seed42", "markovian-seed43", "FCFS/B+IPM", "Taurus-64"):
        assert name in table
    if width == 80:  # one table, stacked by workload: a heading and 14 rows each
        assert "(1/2)" not in table
        assert len(table.splitlines()) <= 1 + 3 + 3 * 15
    else:  # the report: the energy figure's points are short keys, spelled out in a table
        report = (tmp_path / "res" / "report.html").read_text()
        keys = re.findall(r"<td>([a-z]{1,2})</td><td>([^<]*)</td>", report)
        assert len(keys) == 14  # 7 policy settings x 2 platforms
        assert keys[0] == ("a", "SNF-ICON alpha=1000 screen_window=3600 platform=AOBA-64")
        assert "waited" not in report.split("<h2>Waiting time")[0]
        _assert_point_labels_apart(tmp_path / "res" / "results.parquet")


def _assert_point_labels_apart(results) -> None:
    """The sweep report's energy figure: no two point labels overlap, none leaves its panel."""
    from itertools import combinations

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from hpcsched import plots
    from hpcsched.report import keyed_points
    from hpcsched.sweep import label_columns

    table = pd.read_parquet(results)
    points, _ = keyed_points(table, label_columns(table))
    fig = plots.wait_energy_pareto(points, label="point", group="workload")
    fig.draw_without_rendering()
    renderer = FigureCanvasAgg(fig).get_renderer()
    drawn = 0
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_text().strip()]
        drawn += len(boxes)
        assert not any(a.overlaps(b) for a, b in combinations(boxes, 2))
        assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 for b in boxes)
        assert all(frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
    assert drawn >= 14  # the points of 42 runs, those on one spot joined under one label


def test_the_results_tables_metric_columns_are_the_summary_rows():
    import hpcsched
    from hpcsched.experiment import METRIC_COLUMNS, summary_row
    from hpcsched.workload.generate import markovian

    result = hpcsched.simulate(markovian(n_jobs=30, seed=1), "fcfs")
    assert list(summary_row(result.info)) == list(METRIC_COLUMNS)


def test_every_column_of_the_results_table_is_documented():
    from hpcsched.experiment import METRIC_COLUMNS

    formats = (Path(__file__).parents[2] / "docs" / "formats.md").read_text()
    sweeps = formats.split("### Sweeps", 1)[1].split("\n### ", 1)[0]
    for column in ("key", "workload", "platform", "policy", "run", "run_dir", *METRIC_COLUMNS):
        assert f"`{column}`" in sweeps, column


@pytest.mark.slow
def test_compare_on_kth_shows_the_record_and_the_agreement_at_80_columns(tmp_path, capsys):
    # issue 28's acceptance: the recorded row and the agreement figures, in the terminal and
    # the report; the README quotes this table as the command prints it
    from tests.conftest import require_traces

    trace = require_traces() / "pwa" / "KTH-SP2-1996-2.1-cln.swf.gz"
    out_dir = tmp_path / "cmp"
    args = ["compare", trace, "--policy", "fcfs", "--policy", "wfp3", "--policy", "sjf"]
    code, out, _ = run([*args, "--out", out_dir], capsys)
    assert code == 0
    readable(out)
    rows = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert rows[:4] == ["Recorded", "FCFS +EASY", "WFP3 +EASY", "SJF +EASY"]
    assert "agreement with the recorded schedule, closest first" in out
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    quoted = readme.split("agreement with the recorded schedule, closest first", 1)[1]
    quoted = quoted.split("```", 1)[0].strip("\n")
    printed = out.split("agreement with the recorded schedule, closest first", 1)[1]
    printed = "\n".join(line.rstrip() for line in printed.splitlines())
    assert quoted in printed, "README's sample output is not what compare prints"
    report = (out_dir / "report.html").read_text()
    ranked = report.split("Closest to the record", 1)[1].split("</table>", 1)[0]
    assert ranked.index("SJF +EASY") < ranked.index("WFP3 +EASY") < ranked.index("FCFS +EASY")
    assert "Recorded: the record against the machine model" in report
