"""compare, sweep and reproduce from the command line: results, reports and mistakes."""

from __future__ import annotations

import os

import pandas as pd
import pytest
from tests.conftest import run_cli as run

from hpcsched.reproduce import SNF_ICON_CASES


@pytest.fixture
def trace(tmp_path, capsys):
    path = tmp_path / "m.json"
    assert run(["generate", "markovian", path, "--jobs", "200", "--seed", "3"], capsys)[0] == 0
    return path


def test_compare_prints_the_table_and_writes_runs_and_report(tmp_path, trace, capsys):
    out, report = tmp_path / "cmp", tmp_path / "r" / "cmp.html"
    code, stdout, _ = run(
        [
            "compare", trace, "--policy", "fcfs", "--policy", "wfp3:8", "--policy", "snf",
            "--out", out, "--report", report, "--processes", "2",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, stdout
    for label in ("FCFS +EASY", "WFP3 w=8 +EASY", "SNF"):
        assert label in stdout
    assert sorted(os.listdir(out)) == ["fcfs-easy", "snf", "wfp3-w8-easy"]
    assert report.is_file() and "<h2>Plots</h2>" in report.read_text()


def test_compare_mistakes_exit_2_and_write_nothing(tmp_path, trace, capsys):
    for policy, message in (("wfp3:x", "whole number"), ("nope", "unknown policy")):
        code, _, err = run(
            ["compare", trace, "--policy", "fcfs", "--policy", policy, "--out", tmp_path / "o"],
            capsys,
        )
        assert code == 2 and message in err and "Traceback" not in err
    code, _, err = run(["compare", trace, "--policy", "snf-icon", "--out", tmp_path / "o"], capsys)
    assert code == 2 and "--platform" in err
    assert not (tmp_path / "o").exists()


def test_sweep_runs_resumes_and_reports_mistakes(tmp_path, capsys):
    config = tmp_path / "s.toml"
    config.write_text(
        '[sweep]\nout = "res"\n[[workloads]]\ngenerate = "mmk"\njobs = 60\nservers = 4\n'
        'load = [0.5, 0.9]\n[[policies]]\nname = "fcfs"\n[[policies]]\nname = "sjf"\n'
        "window = [2, 8]\n"
    )
    code, out, _ = run(["sweep", config, "--dry-run"], capsys)
    assert code == 0 and "6 runs" in out
    code, out, _ = run(["sweep", config], capsys)
    assert code == 0 and "6 runs done now, 0 already complete" in out
    report = (tmp_path / "res" / "report.html").read_text()
    assert "<h2>Runs</h2>" in report and report.count("<tr>") == 7  # heading row + 6 runs
    table = pd.read_parquet(tmp_path / "res" / "results.parquet")
    assert len(table) == 6 and set(table["window"].dropna()) == {2, 8}
    code, out, _ = run(["sweep", config], capsys)
    assert code == 0 and "0 runs done now, 6 already complete" in out

    # a Ray head that does not answer: a clear message at once, not minutes of waiting
    code, _, err = run(["sweep", config, "--out", tmp_path / "r", "--ray", "127.0.0.1:1"], capsys)
    assert code == 2 and "--ray" in err and "Traceback" not in err

    config.write_text('[[workloads]]\ngenerate = "mmk"\n[[policies]]\nname = "fcfs"\nalpha = 1\n')
    code, _, err = run(["sweep", config], capsys)
    assert code == 2 and "s.toml" in err and "policies[0]" in err and "Traceback" not in err


def test_reproduce_names_the_files_to_download(tmp_path, capsys):
    code, _, err = run(["reproduce", "snf-icon", "--data", tmp_path], capsys)
    assert code == 2
    assert "DAS2-fs1-0-3000.json.gz" in err and "Parallel Workloads Archive" in err
    code, _, err = run(["reproduce", "mars", "--data", tmp_path], capsys)
    assert code == 2 and "ALCF-Theta-2022.swf.gz" in err


@pytest.mark.slow
def test_reproduce_snf_icon_matches_the_paper(traces_dir, tmp_path, capsys, monkeypatch):
    from hpcsched.cli import _console

    monkeypatch.setattr(_console.console, "width", 80)  # what a pipe gets
    out = tmp_path / "snf"
    code, stdout, _ = run(["reproduce", "snf-icon", "--data", traces_dir, "--out", out], capsys)
    assert code == 0, stdout
    # its table at 80 columns: nothing cut, each workload named whole, as a heading
    lines = stdout.splitlines()
    assert "…" not in stdout and max(len(line) for line in lines) <= 80
    for name, _, _, _ in SNF_ICON_CASES:
        assert sum(line.strip() == f"workload: {name}" for line in lines) >= 1, name
    table = pd.read_parquet(out / "results.parquet")
    for name, platform, paper_vs_fcfs, _ in SNF_ICON_CASES:
        case = table[(table["workload"] == name) & (table["platform"] == platform)]
        mean = case.set_index("policy_name")["wait_mean"]
        reduction = 100 * (1 - mean["snf-icon"] / mean["fcfs-b+ipm"])
        # SNF-ICON's mean-wait reduction against FCFS/B+IPM: within 3 points of Table III, and
        # at least half the paper's, since 3 points exceed the effect on DAS2-fs1 and fs3 (2.2
        # and 2.4) and no reduction at all would pass there. Measured: 2.0, 44.8, 4.3, 14.1,
        # 41.0 and 17.0 (paper 2.2, 44.8, 2.4, 11.6, 42.4, 16.4).
        assert max(paper_vs_fcfs - 3.0, paper_vs_fcfs / 2) <= reduction, name
        assert reduction <= paper_vs_fcfs + 3.0, name
    assert (out / "report.html").is_file()
