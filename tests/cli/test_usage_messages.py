"""Issue 27, point 7: every usage error is one line on stderr in the user's terms, exit 2,
with "did you mean" for near-miss names; the other messages the issue names (a sweep's missing
workload, a missing data folder, runs reused by compare, advise's time limits)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpcsched.cli import main
from hpcsched.exceptions import unknown_name
from hpcsched.units import duration_text

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "advise" / "fixtures"


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(
        "; MaxProcs: 4\n1 0 5 10 2 -1 -1 2 20 -1 1 3 1 -1 1 1 -1 -1\n"
        "2 1 5 10 4 -1 -1 4 20 -1 1 3 1 -1 1 1 -1 -1\n"
    )
    return path


def one_line_error(args, capsys) -> str:
    """The command's stderr, checked to be one error line with exit code 2."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in err and "Usage:" not in err and "Try '" not in err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err.removesuffix("\n")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["simulate", "x", "--window", "abc"], "error: --window: 'abc' is not a whole number"),
        (["simulate", "x", "--window", "1.5"], "error: --window: '1.5' is not a whole number"),
        (
            ["compare", "x", "--processes", "many"],
            "error: --processes: 'many' is not a whole number",
        ),
        (["simulate", "x", "--window"], "error: --window: needs a value"),
        (
            ["simulate", "x", "--polcy", "fcfs"],
            "error: --polcy: hpcsched simulate has no such option; did you mean --policy?",
        ),
        (["simulate", "x", "--zzz"], "error: --zzz: hpcsched simulate has no such option"),
        (["simulat", "x"], "error: hpcsched has no command 'simulat'; did you mean simulate?"),
        (
            ["reproduce", "snf-icn"],
            "error: hpcsched reproduce has no command 'snf-icn'; did you mean snf-icon?",
        ),
        (
            ["simulate"],
            "error: hpcsched simulate: missing argument TRACE "
            "(usage: hpcsched simulate [OPTIONS] TRACE)",
        ),
        (["simulate", "x", "y"], "error: hpcsched simulate: got unexpected extra argument(s) (y)"),
    ],
)
def test_usage_errors_are_one_line(args, line, capsys):
    assert one_line_error(args, capsys) == line


def test_a_usage_error_is_one_line_at_80_columns_piped():
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(REPO / "python")}
    done = subprocess.run(
        [sys.executable, "-m", "hpcsched", "simulate", "x", "--window", "abc"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "error: --window: 'abc' is not a whole number\n"
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--policy", "fcsf"],
            "error: --policy: unknown policy 'fcsf'; did you mean fcfs? "
            "('hpcsched policies' lists all 31)",
        ),
        (
            ["--policy", "mars", "--actions", "fcfs,sjff"],
            'error: --actions: unknown heuristic "sjff" in actions "fcfs,sjff"; did you mean sjf?',
        ),
        (
            ["--platform", "taurus-46"],
            "error: --platform: 'taurus-46' is neither a preset (AOBA-1152, AOBA-64, "
            "CEA-Curie, CTC-SP2, SDSC-BLUE, Taurus-1152, Taurus-64) nor a file; did you mean "
            "Taurus-64?",
        ),
        (
            ["--policy", "snf-icon", "--power", "icn-ng"],
            "error: --power: unknown power manager 'icn-ng'; did you mean icon-ng, icon-ngnf "
            "or icon-nf? (choose one of: none, ipm, icon, icon-ng, icon-nf, icon-ngnf)",
        ),
        (
            ["--policy", "mars", "--reward", "wiat=1"],
            "error: --reward: unknown reward term 'wiat'; did you mean wait? (choose one of: "
            "wait, bsld, utilization, energy, wait_started, utilization_since_root, max_wait, "
            "maintenance_utilization)",
        ),
        (
            ["--policy", "mars", "--runtime-model", "histroy"],
            "error: --runtime-model: unknown runtime model 'histroy'; did you mean history? "
            "(choose one of: requested, history, running)",
        ),
        (
            ["--backfill", "esy"],
            "error: --backfill: unknown backfill 'esy'; did you mean easy? "
            "(choose one of: easy, none)",
        ),
    ],
)
def test_names_from_a_list_suggest_the_near_misses(args, line, trace, capsys):
    assert one_line_error(["simulate", trace, *args], capsys) == line


def test_a_name_close_to_none_lists_the_choices():
    assert unknown_name("backfill", "zzz", ["easy", "none"]) == (
        "unknown backfill 'zzz'; choose one of: easy, none"
    )


def test_a_sweep_file_names_the_field_of_a_missing_workload(tmp_path, trace, capsys):
    config = tmp_path / "s.toml"
    config.write_text(
        f'[[policies]]\nname = "fcfs"\n[[workloads]]\npath = "{trace}"\n'
        '[[workloads]]\npath = "traces/nothere.swf"\n'
    )
    resolved = tmp_path / "traces" / "nothere.swf"
    assert one_line_error(["sweep", config], capsys) == (
        f"error: {config}, field workloads[1].path: 'traces/nothere.swf' does not exist "
        f"(read as {resolved}: paths are relative to the sweep file's folder)"
    )


@pytest.mark.parametrize("command", ["snf-icon", "mars"])
def test_a_data_folder_that_does_not_exist_is_said_so(command, tmp_path, capsys):
    missing = tmp_path / "nonexistent"
    assert one_line_error(["reproduce", command, "--data", missing], capsys) == (
        f"error: --data: the folder '{missing}' does not exist"
    )


def test_compare_says_it_reused_runs(tmp_path, trace, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out_dir = "runs"
    args = ["compare", str(trace), "--policy", "fcfs", "--policy", "sjf", "--out", str(out_dir)]
    assert main(args) == 0
    out, _ = capsys.readouterr()
    assert f"run directories: 3 in {out_dir}\n" in out  # the recorded schedule, then the two
    assert main([*args, "--policy", "lcfs"]) == 0
    out, _ = capsys.readouterr()
    assert (
        f"run directories: 4 in {out_dir}\n3 of 4 runs reused from an earlier run "
        "(--force reruns them)\n" in out
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (30, "30 s"),
        (90 * 60, "90 min"),
        (60 * 60, "60 min"),
        (2 * 3600, "2 h"),
        (1440 * 60, "24 h"),
        (36 * 3600, "36 h"),
        (3 * 86400, "3 d"),
        (2.5 * 86400, "2.5 d"),
    ],
)
def test_durations_read_in_their_unit(seconds, text):
    assert duration_text(seconds) == text


def test_advise_prints_limits_in_readable_units(capsys):
    code = main(
        [
            "advise",
            "--from-json",
            str(FIXTURES / "squeue-mixed.json"),
            str(FIXTURES / "sinfo-mixed.json"),
            "--policy",
            "fcfs",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "1440 min" not in out
    assert "│ 24 h " in out and "│ 2 h " in out
