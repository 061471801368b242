"""Job names, users and paths are printed as they are (issue 11, 3): any Slurm user names a job
and any operator picks a log path, so none of it may be read as rich markup or emoji codes."""

from __future__ import annotations

import os
import subprocess
import sys

from hpcsched.cli import main


def pending_named(slurm, *names: str) -> list[int]:
    slurm.blocker()
    jobs = [slurm.sbatch(name, 4, 5 - i, 1) for i, name in enumerate(names)]
    slurm.wait_for_priorities(jobs)
    return jobs


def test_a_dry_run_prints_names_literally(slurm, capsys, tmp_path):
    pending_named(slurm, "[/x]", ":smile:", "[bold]b[/bold]")
    log = tmp_path / "[" / "x]" / "log.jsonl"  # a path with "[/x]" in it
    log.parent.mkdir(parents=True)
    code = main(["advise", "--slurm", "--policy", "sjf", "--partition", "debug",
                 "--log", str(log)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("tick 1 (dry run) scope debug:")  # no markup, printed or read
    rows = out.splitlines()
    assert any("[/x]" in row for row in rows) and any(":smile:" in row for row in rows)
    assert any("[bold]b[/bold]" in row for row in rows) and "😄" not in out
    assert log.is_file()


def test_the_apply_loop_prints_names_and_the_log_path_literally(slurm, tmp_path):
    jobs = pending_named(slurm, "[/x]", ":smile:")
    log = tmp_path / "[" / "x]" / "log.jsonl"
    log.parent.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "hpcsched", "advise", "--slurm", "--policy", "sjf",
         "--partition", "debug", "--apply", "--interval", "0.2", "--max-ticks", "2",
         "--log", str(log)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(" (")[0] for line in lines if line.startswith("tick")] == [
        "tick 1",
        "tick 2",
    ]
    assert "(apply)" in lines[0] and "dry run" not in done.stdout
    for name in ("[/x]", ":smile:"):
        assert sum(name in line for line in lines) == 2  # in both ticks' tables
    assert str(log) in done.stderr  # where the decision log is
    assert "1 priorities written" in done.stderr  # the first tick writes the second job
    assert slurm.priorities(jobs)[jobs[1]] > slurm.priorities(jobs)[jobs[0]]
