"""JSON files nested deeper than Python's recursion limit (issue 40, point 15) and TOML files of
integers past Python's digits (point 13): every reader of such a file a user names says so as
an input error (exit 2), never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.exceptions import InputError

FIXTURES = Path(__file__).parent / "advise" / "fixtures"
DEEP = "[" * 200_000 + "]" * 200_000


def test_a_deep_squeue_snapshot_is_an_input_error(tmp_path, capsys):
    squeue = tmp_path / "squeue.json"
    squeue.write_text('{"jobs": ' + DEEP + "}")
    args = ["advise", "--from-json", squeue, FIXTURES / "sinfo-mixed.json"]
    code = main([str(a) for a in [*args, "--log", tmp_path / "log.jsonl"]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"error: {squeue}: not JSON: nested too deep"), err


def test_a_run_directory_whose_summary_nests_too_deep_is_an_input_error(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 -1 100 1 -1 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    folder = hpcsched.simulate(str(trace), "fcfs").write(tmp_path / "run")
    (Path(folder) / "summary.json").write_text(DEEP)
    with pytest.raises(InputError, match="not a complete hpcsched run directory"):
        hpcsched.read_run(folder)


def test_a_sweep_file_of_an_integer_of_5000_digits_is_an_input_error(tmp_path, capsys):
    sweep = tmp_path / "s.toml"
    sweep.write_text("[sweep]\nseeds = " + "9" * 5000 + "\n")
    code = main(["sweep", str(sweep), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip() == f"error: {sweep}: invalid TOML: a number of thousands of digits"
