"""Scope and Slurm's JSON shapes against the real test cluster (issue 11, 6c and 6d): a job
submitted to several partitions is managed only when all of them are in scope; list-valued
``job_state`` (newer Slurm) is read, unknown shapes stop the advisor; the header says "apply"
whenever --apply is given."""

from __future__ import annotations

import json

from hpcsched.cli import main


def advise(capsys, *args):
    code = main(["advise", "--slurm", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def last_tick(log) -> dict:
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in entries if e["event"] == "tick"][-1]


def test_a_job_also_in_another_partition_is_outside_the_scope(slurm, capsys, tmp_path):
    slurm.blocker()  # debug covers c1-c4, batch c3-c4: all busy
    both = slurm.submit("both", 1, 1, 1, "-p", "batch,debug")
    batch = [slurm.submit(f"batch{i}", 1, 5, 1, "-p", "batch") for i in range(2)]
    debug = [slurm.submit(f"debug{i}", 4, 5 - i, 1, "-p", "debug") for i in range(2)]
    slurm.wait_for_priorities([both, *batch, *debug])
    before = slurm.priorities([both, *batch])
    log = tmp_path / "log.jsonl"
    code, out, err = advise(
        capsys, "--policy", "sjf", "--partition", "debug", "--apply", "--log", log
    )
    assert code == 0, err
    tick = last_tick(log)
    assert sorted(p["job"] for p in tick["plan"]) == debug
    assert f"left alone: job {both} (also submitted to batch, outside the scope)" in out
    assert slurm.priorities([both, *batch]) == before  # not raised above the batch jobs
    assert {w["job_id"] for w in tick["writes"]} <= set(debug)
    # with both partitions in scope it is managed
    code, out, err = advise(capsys, "--policy", "sjf", "--partition", "debug,batch", "--log", log)
    assert code == 0, err
    assert both in [p["job"] for p in last_tick(log)["plan"]]


def test_list_valued_job_states_are_planned_and_applied(fake_slurm, slurm, capsys, tmp_path):
    slurm.blocker()
    jobs = [slurm.sbatch(f"job{i}", 4, 5 - i, 1) for i in range(3)]
    slurm.wait_for_priorities(jobs)
    before = slurm.priorities(jobs)
    fake_slurm.set(job_state="list")  # squeue --json prints "job_state": ["PENDING"]
    log = tmp_path / "log.jsonl"
    code, out, err = advise(
        capsys, "--policy", "sjf", "--partition", "debug", "--apply", "--log", log
    )
    assert code == 0, err
    assert out.startswith("tick 1 (apply)") and "dry run" not in out
    assert sorted(p["job"] for p in last_tick(log)["plan"]) == jobs
    assert slurm.priorities(jobs) != before
    # the next tick has nothing to write: still "apply", never "dry run"
    code, out, err = advise(
        capsys, "--policy", "sjf", "--partition", "debug", "--apply", "--log", log
    )
    assert code == 0 and out.startswith("tick 1 (apply)") and "dry run" not in out
    assert "0 priorities written" in err and last_tick(log)["writes"] == []


def test_an_unknown_job_state_shape_exits_2_naming_it(fake_slurm, slurm, capsys, tmp_path):
    slurm.blocker()
    slurm.wait_for_priorities([slurm.sbatch("job", 4, 5, 1)])
    fake_slurm.set(job_state={"current": ["PENDING"]})
    log = tmp_path / "log.jsonl"
    code, out, err = advise(capsys, "--partition", "debug", "--apply", "--log", log)
    assert code == 2 and "Traceback" not in err and out == ""
    assert "squeue --json" in err and "jobs[0].job_state" in err
    assert len(err.strip().splitlines()) == 1
    assert fake_slurm.updates() == []
