"""Nothing a user asks for is ignored without a word, and every mistake names the option as
typed (issue 14, "silent no-ops" and "messages in internal names")."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from tests.conftest import run_cli as run

LINE = "{id} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 1 3 1 -1 1 1 -1 -1\n"


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(
        "; MaxProcs: 4\n"
        + LINE.format(id=1, submit=0, run=50, procs=2, req=20)  # runs past its request
        + LINE.format(id=2, submit=1, run=10, procs=4, req=20)
    )
    return path


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--policy", "fcfs", "--alpha", "3"], "--alpha"),
        (["--policy", "wfp3", "--idle-timeout", "60"], "--idle-timeout"),
        (["--policy", "fcfs", "--depth", "3"], "--depth"),
        (["--policy", "snf", "--iterations", "3"], "--iterations"),
        (["--policy", "snf-icon", "--platform", "AOBA-64", "--seed", "3"], "--seed"),
        (["--policy", "mars-cw", "--trees", "1", "--min-spares", "2"], "--min-spares"),
        (["--policy", "snf", "--backfill", "easy"], "--backfill"),
        (["--policy", "mars-cw", "--backfill", "none"], "--backfill"),
        (["--policy", "snf-icon", "--platform", "AOBA-64", "--backfill", "easy"], "--backfill"),
        (["--policy", "fcfs", "--decision-log", "full"], "--decision-log"),  # keeps no log
        (["--policy", "mars-cw", "--decision-log", "all"], "--decision-log"),
    ],
)
def test_an_option_the_policy_does_not_use_is_refused(tmp_path, trace, capsys, options, named):
    code, _, err = run(["simulate", trace, *options, "--out", tmp_path / "run"], capsys)
    assert code == 2
    assert err.startswith(f"error: {named}:"), err
    assert not (tmp_path / "run").exists()


def test_options_a_policy_uses_are_taken_and_agreeing_backfill_is_fine(tmp_path, trace, capsys):
    code, _, err = run(
        ["simulate", trace, "--policy", "snf", "--backfill", "none", "--out", tmp_path / "a"],
        capsys,
    )
    assert code == 0, err
    code, _, err = run(
        [
            *("simulate", trace, "--policy", "mars-cw", "--iterations", "5", "--trees", "1"),
            *("--depth", "7", "--out", tmp_path / "b"),
        ],
        capsys,
    )
    assert code == 0, err
    search = json.loads((tmp_path / "b" / "summary.json").read_text())["inputs"]["policy"]
    assert search["search"]["depth"] == 7 and search["search"]["iterations"] == 5


def test_compare_refuses_an_option_no_policy_uses_and_a_policy_given_twice(trace, capsys):
    code, _, err = run(
        ["compare", trace, "--policy", "fcfs", "--policy", "sjf", "--beta", "2"], capsys
    )
    assert code == 2 and err.startswith("error: --beta: no policy here uses it"), err
    code, _, err = run(["compare", trace, "--policy", "fcfs", "--policy", "fcfs"], capsys)
    assert code == 2 and "given twice" in err and err.startswith("error: --policy:"), err


def test_a_calendar_outside_the_run_is_a_warning(tmp_path, trace, capsys):
    calendar = tmp_path / "cal.txt"
    calendar.write_text("100000 200000 S -\n-500 -100 U 2\n")
    code, out, _ = run(
        ["simulate", trace, "--downtime", calendar, "--out", tmp_path / "run"], capsys
    )
    assert code == 0
    assert "2 windows (2 outside the run)" in out
    assert "warning: 2 of 2 downtime windows fall outside the run" in " ".join(out.split())
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["downtime"]["outside_run"] == 2 and summary["warnings"]


def test_overrun_kills_are_shown(tmp_path, trace, capsys):
    code, out, _ = run(["simulate", trace, "--overrun", "kill", "--out", tmp_path / "run"], capsys)
    assert code == 0
    assert re.search(r"killed at their requested time\s*│\s*1 jobs", out), out


def test_an_existing_run_directory_is_replaced_only_with_force(tmp_path, trace, capsys):
    out_dir = tmp_path / "run"
    assert run(["simulate", trace, "--out", out_dir], capsys)[0] == 0
    code, _, err = run(["simulate", trace, "--policy", "sjf", "--out", out_dir], capsys)
    assert code == 2 and "give --force" in err and err.startswith("error: --out:")
    assert json.loads((out_dir / "summary.json").read_text())["inputs"]["policy"]["name"] == "fcfs"
    code, _, _ = run(["simulate", trace, "--policy", "sjf", "--out", out_dir, "--force"], capsys)
    assert code == 0
    assert json.loads((out_dir / "summary.json").read_text())["inputs"]["policy"]["name"] == "sjf"
    folder = tmp_path / "cmp"
    assert run(["compare", trace, "--policy", "fcfs", "--out", folder], capsys)[0] == 0
    # the same comparison again resumes (keeps the run); another one needs --force
    config = (folder / "fcfs-easy" / "config.json").read_text()
    assert run(["compare", trace, "--policy", "fcfs", "--out", folder], capsys)[0] == 0
    other = ["compare", trace, "--policy", "fcfs", "--overrun", "kill", "--out", folder]
    code, _, err = run(other, capsys)
    assert code == 2 and "give --force" in err
    assert (folder / "fcfs-easy" / "config.json").read_text() == config
    assert run([*other, "--force"], capsys)[0] == 0
    assert (folder / "fcfs-easy" / "config.json").read_text() != config


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["markovian", "--target-util", "1.5"], "error: --target-util: must be at most 1"),
        (["markovian", "--jobs", "0"], "error: --jobs: must be an integer from 1"),
        (["mmk", "--load", "-1"], "error: --load: must be a positive number"),
        (["mmk", "--servers", "0"], "error: --servers:"),
        (["markovian", "--p", "0"], "error: --p:"),
    ],
)
def test_generator_ranges_name_the_option_as_typed(tmp_path, capsys, args, message):
    out = tmp_path / "w.json"
    code, _, err = run(["generate", args[0], out, *args[1:]], capsys)
    assert code == 2 and err.startswith(message), err
    assert not out.exists()


def test_each_unreadable_input_says_what_it_is(tmp_path, trace, capsys):
    code, _, err = run(["simulate", tmp_path], capsys)
    assert code == 2 and "is a folder; give a trace file" in err
    fake = tmp_path / "fake.swf.gz"
    fake.write_bytes(trace.read_bytes())
    code, _, err = run(["simulate", fake], capsys)
    assert code == 2 and "named .gz but not gzip data" in err and "line 1" not in err
    platform = tmp_path / "p.toml"
    platform.write_text(
        "nodes = 4\n[power]\ncomputing = 1\nidle = 1\nsleeping = 1\nswitching_on = 1\n"
        "[transitions]\nswitch_on = 1\nswitch_on_std = 1\nswitch_off = 1\nswitch_off_std = 1\n"
    )
    code, _, err = run(["simulate", trace, "--platform", platform], capsys)
    assert code == 2 and "field power.switching_off: missing key switching_off" in err, err
    module = tmp_path / "mine.py"
    module.write_text(
        "class Helper:\n    pass\n\n"
        "class Shortest:\n    name = 's'\n    def decide(self, view):\n        return None\n"
    )
    code, _, err = run(["simulate", trace, "--policy", f"python:{module}:Shortset"], capsys)
    assert code == 2 and "its policies (classes with decide): Shortest" in err, err


def test_a_gzip_named_trace_with_a_bad_body_is_a_gzip_error(tmp_path, capsys):
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(b"1 0 5 10 2")[:-6])  # truncated
    code, _, err = run(["simulate", path], capsys)
    assert code == 2 and "gzip" in err and "field" not in err, err


def test_version_and_help(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and re.fullmatch(r"hpcsched \d+\.\d+\.\d+\S*\n", out)
    code, out, _ = run(["simulate", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "python:FILE.py:CLASS" in text
    # clean value names: no Python types, no braces around arguments
    assert not re.search(r"<(bool|str|int|float|path|list\[str\])>|\{trace\}", out), out
    assert "Usage: hpcsched simulate [OPTIONS] TRACE" in out
