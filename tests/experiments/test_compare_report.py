"""compare() and its HTML report: parallel runs equal single runs; every section is there."""

from __future__ import annotations

import base64
import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import hpcsched
from hpcsched.comparison import compare, parse_policy, slug, unique_labels
from hpcsched.exceptions import OptionError
from hpcsched.workload import generate
from tests.conftest import workload_with_record


@pytest.fixture(scope="module")
def workload():
    return generate.markovian(400, 64, target_util=0.7, seed=5)


@pytest.fixture(scope="module")
def energy_comparison(workload):
    return compare(workload, ["fcfs-b+ipm", "snf+ipm", "snf-icon"], platform="AOBA-64")


@pytest.fixture(scope="module")
def search_comparison(workload):
    search = hpcsched.SearchSpec(iterations=10, trees=1)
    return compare(
        workload,
        ["fcfs", "wfp3:32", hpcsched.PolicySpec("mars-cw", search=search)],
        processes=1,
    )


def test_parallel_comparison_equals_single_runs(workload, energy_comparison):
    assert list(energy_comparison.results) == ["FCFS/B+IPM", "SNF+IPM", "SNF-ICON"]
    names = ["fcfs-b+ipm", "snf+ipm", "snf-icon"]
    for label, name in zip(energy_comparison.results, names, strict=True):
        alone = hpcsched.simulate(workload, name, platform="AOBA-64")
        pd.testing.assert_frame_equal(energy_comparison.results[label].jobs, alone.jobs)
    table = energy_comparison.table
    assert list(table["policy"]) == ["FCFS/B+IPM", "SNF+IPM", "SNF-ICON"]
    means = [r.jobs["wait"].mean() for r in energy_comparison.results.values()]
    assert table["wait_mean"].tolist() == pytest.approx(means)


def test_policy_names_windows_and_labels():
    assert parse_policy("wfp3:256") == hpcsched.PolicySpec("wfp3", 256)
    with pytest.raises(OptionError, match="whole number"):
        parse_policy("wfp3:big")
    assert unique_labels(["A", "B", "A", "A"]) == ["A", "B", "A #2", "A #3"]
    assert slug("WFP3 w=256 +EASY") == "wfp3-w256-easy"
    assert slug("FCFS/B+IPM") == "fcfs-b-ipm"


class _Page(HTMLParser):
    """Collects headings, tables (as lists of rows) and images of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.images: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._text: list[str] | None = None
        self._row: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2", "h3", "td", "th"):
            self._text = []
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag == "img":
            self.images.append(dict(attrs)["src"])

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3"):
            self.headings.append("".join(self._text or []))
            self._text = None
        elif tag in ("td", "th"):
            assert self._row is not None
            self._row.append("".join(self._text or []))
            self._text = None
        elif tag == "tr":
            self.tables[-1].append(self._row or [])


def parse(path) -> _Page:
    page = _Page()
    page.feed(Path(path).read_text(encoding="utf-8"))
    return page


def test_energy_report_has_every_section(energy_comparison, tmp_path):
    path = energy_comparison.report(tmp_path / "energy.html")
    page = parse(path)
    assert page.headings[0].startswith("Policy comparison on")
    for section in ("Inputs", "Summary", "Waits per size class", "Energy", "Plots"):
        assert section in page.headings
    assert "Look-ahead" not in page.headings  # no look-ahead policy compared
    summary = next(t for t in page.tables if t[0][:2] == ["policy", "jobs"])
    assert [row[0] for row in summary[1:]] == ["FCFS/B+IPM", "SNF+IPM", "SNF-ICON"]
    # mean wait column shows the run's mean in hours
    mean_h = float(summary[3][summary[0].index("mean wait (h)")])
    assert mean_h == pytest.approx(energy_comparison.table["wait_mean"][2] / 3600, abs=0.006)
    # self-contained: every image is an embedded PNG, nothing is fetched
    html = Path(path).read_text(encoding="utf-8")
    assert not re.search(r'src="(?!data:)', html) and "<link" not in html
    assert len(page.images) >= 7  # waits, classes, sizes, utilization, starts, modes, states x3
    for src in page.images:
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_look_ahead_report_adds_search_tables_and_plots(search_comparison, tmp_path):
    page = parse(search_comparison.report(tmp_path / "mars.html", title="MARS check"))
    assert page.headings[0] == "MARS check"
    assert "Look-ahead" in page.headings and "Energy" not in page.headings
    search_table = next(t for t in page.tables if "iterations / search" in t[0])
    assert [row[0] for row in search_table[1:]] == ["MARS-CW"]


def test_comparison_writes_one_run_directory_per_policy(search_comparison, tmp_path):
    paths = search_comparison.write(tmp_path / "runs")
    assert sorted(p.rsplit("/", 1)[1] for p in paths.values()) == [
        "fcfs-easy",
        "mars-cw",
        "wfp3-w32-easy",
    ]
    back = hpcsched.read_run(paths["MARS-CW"])
    pd.testing.assert_frame_equal(back.jobs, search_comparison.results["MARS-CW"].jobs)
    assert len(back.decisions) == len(search_comparison.results["MARS-CW"].decisions)


def test_parameter_listing_gives_icon_parameters_only_to_icon_rounded(energy_comparison, tmp_path):
    page = parse(energy_comparison.report(tmp_path / "energy.html"))
    listing = next(t for t in page.tables if t[0] == ["policy", "parameters"])
    params = {row[0]: dict(p.split(": ", 1) for p in row[1].split(", ")) for row in listing[1:]}
    icon_only = set(hpcsched._core.icon_defaults())
    for ipm in ("FCFS/B+IPM", "SNF+IPM"):  # IPM reads none of SNF-ICON's parameters
        assert params[ipm]["manager"] == "ipm" and params[ipm]["idle_timeout"] == "7200"
        assert not icon_only & set(params[ipm]), params[ipm]
    icon = params["SNF-ICON"]
    assert icon_only <= set(icon)
    assert icon["initial_arrival_rate"] == "0.0002778"  # 1/3600, rounded
    assert icon["alpha"] == "5000" and icon["max_horizon"] == "86400" and icon["beta"] == "1"
    assert icon["max_spares"] == "null" and icon["require_service_samples"] == "true"


def test_a_reward_is_listed_by_its_terms_and_preset(search_comparison, tmp_path):
    page = parse(search_comparison.report(tmp_path / "mars.html"))
    listing = next(t for t in page.tables if t[0] == ["policy", "parameters"])
    params = {row[0]: dict(p.split(": ", 1) for p in row[1].split(", ")) for row in listing[1:]}
    assert params["MARS-CW"]["reward"] == "cw (wait=1)"  # was [1, 0, 0, 0, 0, 0, 0, 0]


def test_reward_texts():
    from hpcsched.report import _reward_text

    assert _reward_text([1, 0, 0, 0, 0, 0, 0, 3]) == "cu (wait=1 maintenance_utilization=3)"
    assert _reward_text([1, 0.5, 0, 0, 0, 0, 0, 0]) == "wait=1 bsld=0.5"


@pytest.fixture(scope="module")
def recorded_comparison():
    # the four jobs of workload_with_record in units of 6 minutes (0.1 h): the record starts
    # jobs 1, 2 and 4 at 0, 1.5 and 12 h (job 3's wait is unknown), FCFS +EASY at 0, 1 and
    # 26 h, SJF +EASY at 0, 1 and 10 h
    return compare(workload_with_record(unit=360.0), ["fcfs", "sjf"], processes=1)


def test_report_with_a_record_ranks_the_policies_by_agreement(recorded_comparison, tmp_path):
    path = recorded_comparison.report(tmp_path / "record.html")
    page = parse(path)
    text = Path(path).read_text(encoding="utf-8")
    at = page.headings.index("Agreement with the recorded schedule")
    # (job 3, without a recorded wait, never started in the Recorded run: issue 40)
    assert page.headings[at - 2 : at] == ["Summary", "Jobs that never started"]
    assert page.headings[at + 1 : at + 4] == [
        "Closest to the record",
        "Agreement per size class",
        "Recorded: the record against the machine model",
    ]
    assert "It is not a simulation." in text
    assert escape("Recorded: what the site's scheduler did (not a simulation).") in text
    listing = next(t for t in page.tables if t[0] == ["policy", "parameters"])
    assert listing[1] == [
        "Recorded",
        "as recorded (each job starts at its submission plus its recorded wait)",
    ]
    ranked = next(t for t in page.tables if t[0][:3] == ["rank", "policy", "jobs compared"])
    head = ranked[0]
    rows = {row[1]: dict(zip(head, row, strict=True)) for row in ranked[1:]}
    # start errors: SJF 0, 0.5, 2 h (mean 0.83 h), FCFS 0, 0.5, 14 h (mean 4.83 h), one of
    # three jobs more than an hour off for both; waits, simulated minus recorded: SJF 0 - 0,
    # 0 - 0.5, 7 - 9 h (mean -0.83 h), FCFS 0 - 0, 0 - 0.5, 23 - 9 h (mean +4.50 h)
    assert [row[:2] for row in ranked[1:]] == [["1", "SJF +EASY"], ["2", "FCFS +EASY"]]
    sjf, fcfs = rows["SJF +EASY"], rows["FCFS +EASY"]
    assert sjf["jobs compared"] == fcfs["jobs compared"] == "3"
    assert (sjf["start error (h)"], fcfs["start error (h)"]) == ("0.83", "4.83")
    assert sjf["within 1 h (%)"] == fcfs["within 1 h (%)"] == "66.7"
    assert (sjf["mean wait diff. (h)"], fcfs["mean wait diff. (h)"]) == ("-0.83", "+4.50")
    # per size class: the three jobs compared are XL (2 or 4 of 4 nodes), job 3 (L) has no
    # recorded start
    by_class = next(t for t in page.tables if t[0][0] == "policy" and "XL error (h)" in t[0])
    assert by_class[0] == ["policy", "XL error (h)", "XL within 1 h (%)"]
    assert by_class[1:] == [["SJF +EASY", "0.83", "66.7"], ["FCFS +EASY", "4.83", "66.7"]]
    # the record's conflicts: job 3's unknown wait, job 2's overrun (ran 5 h for 4 requested)
    conflicts = next(t for t in page.tables if t[0][0] == "conflict")
    kinds = {row[0]: row for row in conflicts[1:]}
    assert conflicts[0] == ["conflict", "what it is", "jobs", "e.g. job ids", "treated"]
    assert kinds["no recorded start"][2:4] == ["1", "3"]
    assert kinds["ran past its request"][2:4] == ["1", "2"]
    assert kinds["more nodes busy than up"][2:5] == ["0", "-", ""]
    assert kinds["ran in a downtime window"][2] == "0"
    assert "left out by the reader</dt><dd>none" in text
    assert "left out by the archive</dt><dd>not stated by the trace" in text
    # the start-error figure is among the plots
    from hpcsched.plots.catalog import READING

    assert escape(READING["Start error against the recorded schedule"]) in text


def test_report_without_the_recorded_run_still_ranks_the_policies(tmp_path):
    comparison = compare(workload_with_record(), ["fcfs", "sjf"], processes=1, recorded=False)
    page = parse(comparison.report(tmp_path / "no-record-row.html"))
    assert "Agreement with the recorded schedule" in page.headings
    assert not [h for h in page.headings if "the record against the machine model" in h]
    ranked = next(t for t in page.tables if t[0][:2] == ["rank", "policy"])
    assert [row[1] for row in ranked[1:]] == ["SJF +EASY", "FCFS +EASY"]


def test_report_of_a_trace_without_a_record_has_no_agreement_section(search_comparison, tmp_path):
    path = search_comparison.report(tmp_path / "plain.html")
    page = parse(path)
    assert not [h for h in page.headings if "record" in h.lower()]
    assert not [t for t in page.tables if t[0][:1] in (["rank"], ["conflict"])]
    assert "not a simulation" not in Path(path).read_text(encoding="utf-8")
