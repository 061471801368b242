"""The command line as a user meets it: results, help, and mistakes (exit code 2, one line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tests.conftest import run_cli as run

GOOD = "1 0 5 10 2 -1 -1 2 20 -1 1 3 1 -1 1 1 -1 -1\n"


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 4\n" + GOOD + "2 1 5 10 4 -1 -1 4 20 -1 1 3 1 -1 1 1 -1 -1\n")
    return path


def test_simulate_writes_the_run_directory(tmp_path, trace, capsys):
    out_dir = tmp_path / "run"
    code, out, _ = run(
        ["simulate", trace, "--policy", "wfp3", "--window", "8", "--out", out_dir, "--csv"], capsys
    )
    assert code == 0
    assert "wait mean" in out
    assert sorted(os.listdir(out_dir)) == ["jobs.csv", "jobs.parquet", "summary.json"]
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["inputs"]["policy"]["window"] == 8


def test_look_ahead_policies_from_the_command_line(tmp_path, capsys):
    trace = tmp_path / "m.json"
    assert (
        run(["generate", "markovian", trace, "--jobs", "300", "--target-util", "0.9"], capsys)[0]
        == 0
    )
    out_dir = tmp_path / "cw"
    code, out, _ = run(
        [
            "simulate",
            trace,
            "--policy",
            "mars-cw",
            "--iterations",
            "5",
            "--trees",
            "1",
            "--out",
            out_dir,
        ],
        capsys,
    )
    assert code == 0
    assert "look-ahead" in out
    assert (out_dir / "decisions.parquet").is_file()
    code, _, _ = run(
        [
            "simulate",
            trace,
            "--policy",
            "mars",
            "--reward",
            "wait=1,utilization=1",
            "--iterations",
            "3",
            "--trees",
            "2",
            "--threads",
            "1",
            "--out",
            tmp_path / "mix",
        ],
        capsys,
    )
    assert code == 0
    summary = json.loads((tmp_path / "mix" / "summary.json").read_text())
    assert summary["inputs"]["policy"]["search"]["reward"] == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    for args, message in [
        (["--policy", "mars", "--reward", "speed=1"], "unknown reward term 'speed'"),
        (["--policy", "mars-cu", "--reward", "cw"], "has its reward built in"),
        (["--policy", "mars-cw", "--window", "8"], "chooses its own windows"),
        (["--policy", "mars-cw", "--gamma", "1.5"], "--gamma"),
        (["--policy", "mars-cw", "--actions", "wfp9"], "unknown heuristic"),
    ]:
        code, _, err = run(["simulate", trace, "--out", tmp_path / "bad", *args], capsys)
        assert code == 2 and message in err, (args, err)
        assert not (tmp_path / "bad").exists()


def test_platform_option_reports_energy(tmp_path, capsys):
    trace = tmp_path / "m.json"
    assert run(["generate", "markovian", trace, "--jobs", "100"], capsys)[0] == 0
    code, out, _ = run(
        ["simulate", trace, "--platform", "Taurus-64", "--out", tmp_path / "r"], capsys
    )
    assert code == 0 and "MWh" in out
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["energy"]["total_mwh"] > summary["energy"]["wasted_mwh"] > 0
    code, _, err = run(["simulate", trace, "--platform", "Taurus-65"], capsys)
    assert code == 2 and "neither a preset" in err


def test_default_run_directory_is_under_runs(tmp_path, trace, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(["simulate", trace, "--policy", "sjf"], capsys)
    assert code == 0
    assert (tmp_path / "runs" / "t-sjf" / "jobs.parquet").is_file()


def test_inspect_and_generate(tmp_path, capsys):
    out = tmp_path / "m.json.gz"
    assert run(["generate", "markovian", out, "--jobs", "200"], capsys)[0] == 0
    code, text, _ = run(["inspect", out], capsys)
    assert code == 0
    assert "offered load" in text and "jobs skipped" in text
    code, text, _ = run(["inspect", out, "--json"], capsys)
    assert json.loads(text)["jobs"] == 200
    swf = tmp_path / "k.swf"
    assert run(["generate", "mmk", swf, "--jobs", "100", "--servers", "4"], capsys)[0] == 0
    assert run(["simulate", swf, "--out", tmp_path / "r"], capsys)[0] == 0


RECORDED = (
    "; MaxProcs: 8\n; Queue:  1 DSI\n; Queue:  2 astro\n"
    ";         job<=14 (14 jobs removed)\n"
    # id submit wait run procs ... status(11) user group exe queue(15) partition(16)
    "1 0 10 100 2 -1 -1 2 200 -1 1 3 1 -1 1 1 -1 -1\n"
    "2 5 -1 50 4 -1 -1 4 200 -1 0 3 1 -1 2 1 -1 -1\n"
    "3 20 30 30 1 -1 -1 1 200 -1 1 3 1 -1 1 1 -1 -1\n"
)


def test_inspect_prints_what_the_site_recorded(tmp_path, capsys):
    path = tmp_path / "r.swf"
    path.write_text(RECORDED)
    code, text, _ = run(["inspect", path], capsys)
    assert code == 0
    for row in (
        "recorded wait mean / median / P95",
        "(unknown for 1",
        "recorded utilization",
        "jobs by status",
        "completed 2, failed 1",
        "removed by the archive",
        "14 jobs",
        "recorded waits by size class",
        "\nqueues",
        "astro",
        "recorded mean wait",
        "partition of every job",  # one partition: a row, not a table
    ):
        assert row in text, row
    assert "\npartitions" not in text
    code, text, _ = run(["inspect", path, "--json"], capsys)
    info = json.loads(text)
    assert info["recorded"]["jobs"] == 2 and info["recorded"]["wait"]["mean"] == 20.0
    assert info["status"] == {"completed": 2, "failed": 1}
    # queue 1: jobs 1 and 3 waited 10 s and 30 s; queue 2: job 2, wait unknown
    assert info["queues"] == [
        {"number": 1, "name": "DSI", "jobs": 2, "recorded_wait_mean": 20.0},
        {"number": 2, "name": "astro", "jobs": 1, "recorded_wait_mean": None},
    ]
    assert info["partitions"] == [
        {"number": 1, "name": None, "jobs": 3, "recorded_wait_mean": 20.0}
    ]
    assert info["removed_by_archive"] == 14


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        (
            "; MaxProcs: 4\n" + GOOD + "2 1 5 x 4 -1 -1 4 20 -1 1 3 1 -1 1 1 -1 -1\n",
            [],
            "line 3, field 4 (run time): not a number",
        ),
        ("; MaxProcs: 4\n" + GOOD + "2 1 5 10\n", [], "line 3: expected 18 fields, found 4"),
        (GOOD, ["--policy", "best"], "--policy: unknown policy 'best'"),
        (GOOD, ["--window", "-4"], "--window: must be an integer from 1 to 4294967295"),
        (GOOD, ["--backfill", "maybe"], "--backfill: unknown backfill"),
        (GOOD, ["--overrun", "later"], "--overrun: unknown overrun policy"),
        (GOOD, ["--procs-per-node", "many"], "--procs-per-node: expected a positive integer"),
        (GOOD, ["--nodes", "0"], "--nodes: must be an integer from 1 to 16777216, not 0"),
    ],
)
def test_mistakes_give_one_clear_line_and_exit_2(tmp_path, capsys, content, args, expected):
    trace = tmp_path / "bad.swf"
    trace.write_text(content)
    out_dir = tmp_path / "out"
    code, _, err = run(["simulate", trace, "--out", out_dir, *args], capsys)
    assert code == 2
    assert expected in err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert not out_dir.exists()
    assert sorted(os.listdir(tmp_path)) == ["bad.swf"]


def test_missing_file_and_bad_calendar(tmp_path, trace, capsys):
    code, _, err = run(["simulate", tmp_path / "nope.swf"], capsys)
    assert code == 2 and "nope.swf: cannot read file" in err
    calendar = tmp_path / "down.txt"
    calendar.write_text("100 50 S\n")
    code, _, err = run(["simulate", trace, "--downtime", calendar], capsys)
    assert code == 2 and "down.txt, line 1, field end" in err
    code, _, err = run(["simulate", tmp_path / "trace.txt"], capsys)
    assert code == 2 and "--format swf|json" in err


def test_usage_errors_exit_2(capsys):
    assert run(["simulate"], capsys)[0] == 2
    assert run(["simulate", "x.swf", "--window", "many"], capsys)[0] == 2
    assert run(["frobnicate"], capsys)[0] == 2


def test_policies_lists_every_policy_and_preset(capsys):
    from hpcsched import policy_names
    from hpcsched.cli.policies import DESCRIPTIONS

    assert set(DESCRIPTIONS) == set(policy_names())  # every policy is described
    code, out, _ = run(["policies"], capsys)
    assert code == 0
    for name in [*policy_names(), "AOBA-64", "Taurus-1152"]:
        assert name in out, name


def test_help_works_for_every_command(capsys):
    for args in (
        ["--help"],
        ["simulate", "--help"],
        ["inspect", "--help"],
        ["generate", "--help"],
        ["generate", "markovian", "--help"],
    ):
        code, out, _ = run(args, capsys)
        assert code == 0 and "Usage" in out


def test_console_script_exit_code_without_traceback(tmp_path):
    trace = tmp_path / "bad.swf"
    trace.write_text("1 2 3\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from hpcsched.cli import main; sys.exit(main())",
            "simulate",
            str(trace),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2
    assert "bad.swf, line 1" in proc.stderr
    assert "Traceback" not in proc.stderr
