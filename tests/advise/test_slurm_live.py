"""The advisor against a real slurmctld (4 nodes): real start order, dry run, release,
races, and a controller that does not answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hpcsched.advise.adapter import NOT_PENDING, VANISHED, WRITTEN
from hpcsched.advise.plan import make_plan
from hpcsched.advise.runner import Advisor
from hpcsched.advise.slurm import SlurmCluster
from hpcsched.cli import main
from hpcsched.policies import PolicySpec, SearchSpec

MARS = ["--policy", "mars-cw", "--iterations", "30", "--trees", "1", "--partition", "debug"]


def advise(capsys, *args):
    code = main(["advise", "--slurm", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def last_tick(log: Path) -> dict:
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in entries if e["event"] == "tick"][-1]


def behind_a_blocker(slurm, blocker_seconds: float = 8) -> list[int]:
    """A whole-machine job running, and four whole-machine jobs behind it, submitted longest
    first: each runs alone, so their start order is their priority order."""
    slurm.sbatch("blocker", 4, 1, blocker_seconds)
    jobs = [slurm.sbatch(f"job{i}", 4, 6 - i, 1) for i in range(1, 5)]
    deadline = time.monotonic() + 20
    while slurm.jobs()[jobs[0] - 1]["job_state"] != "RUNNING":
        assert time.monotonic() < deadline, "the blocker did not start"
        time.sleep(0.2)
    return jobs


def test_jobs_start_in_the_order_the_advisor_chose(slurm, capsys, tmp_path):
    jobs = behind_a_blocker(slurm)
    log = tmp_path / "log.jsonl"
    code, out, _ = advise(capsys, *MARS, "--apply", "--log", log)
    assert code == 0, out
    planned = [entry["job"] for entry in last_tick(log)["plan"]]
    assert sorted(planned) == jobs
    assert planned != jobs  # MARS-CW reorders them (shortest limits first), not FCFS
    done = slurm.wait_done(jobs)
    started = sorted(jobs, key=lambda j: (done[j]["start_time"], j))
    assert started == planned
    assert all(done[j]["job_state"] == "COMPLETED" for j in jobs)


def test_dry_run_writes_nothing(slurm, capsys, tmp_path):
    jobs = behind_a_blocker(slurm, blocker_seconds=30)
    before = slurm.priorities(jobs)
    log = tmp_path / "log.jsonl"
    code, out, _ = advise(capsys, *MARS, "--log", log)
    assert code == 0 and "dry run" in out
    tick = last_tick(log)
    assert tick["mode"] == "dry-run" and tick["writes"] == []
    assert any(p["new"] != p["old"] for p in tick["plan"])  # there was something to write
    assert slurm.priorities(jobs) == before


def test_release_restores_slurms_own_ordering(slurm, capsys, tmp_path):
    # different sizes: Slurm's JobSize factor ranks the larger jobs first
    slurm.sbatch("blocker", 4, 1, 30)
    jobs = [slurm.sbatch(f"j{n}", n, 10 - n, 1) for n in (1, 2, 3, 4)]
    time.sleep(1.5)  # a scheduling pass sets the priorities

    def order() -> list[int]:
        priorities = slurm.priorities(jobs)
        return sorted(jobs, key=lambda j: (-priorities[j], j))

    own = order()
    assert own == jobs[::-1]
    log = tmp_path / "log.jsonl"
    # SNF: smallest first, the opposite of Slurm's own order here
    assert (
        advise(capsys, "--policy", "snf", "--partition", "debug", "--apply", "--log", log)[0] == 0
    )
    assert order() == jobs
    written = {w["job_id"] for w in last_tick(log)["writes"] if w["outcome"] == WRITTEN}
    code, out, _ = advise(capsys, "--partition", "debug", "--release", "--log", log)
    assert code == 0 and f"released {len(written)} jobs" in out
    time.sleep(1.5)
    assert order() == own  # Slurm computes them again: its own order is back
    states = slurm.jobs()
    assert all(states[j]["job_state"] == "PENDING" for j in jobs)
    assert not any(states[j]["state_reason"].startswith("JobHeld") for j in jobs)


class CancelAfterRead(SlurmCluster):
    """Cancels one pending job right after reading: the race the advisor must survive."""

    def __init__(self, slurm, victim: int) -> None:
        super().__init__()
        self.slurm, self.victim = slurm, victim

    def read(self):
        state = super().read()
        self.slurm.run("scancel", str(self.victim))
        return state


def test_a_job_cancelled_between_read_and_write_is_skipped(slurm, tmp_path):
    jobs = behind_a_blocker(slurm, blocker_seconds=30)
    victim = jobs[0]  # FCFS-first: the advisor (shortest first) moves it, so it is written
    advisor = Advisor(
        CancelAfterRead(slurm, victim),
        PolicySpec("sjf"),
        partition="debug",
        apply=True,
        log_path=str(tmp_path / "log.jsonl"),
    )
    result = advisor.tick()
    outcomes = {w.job_id: w.outcome for w in result.writes}
    assert outcomes[victim] in (NOT_PENDING, VANISHED)
    assert [o for j, o in outcomes.items() if j != victim] == [WRITTEN] * (len(outcomes) - 1)
    assert len(outcomes) >= 2


def test_a_stopped_slurmctld_exits_2_and_changes_nothing(slurm, tmp_path):
    pid = int((slurm.base / "run" / "pids" / "slurmctld.pid").read_text())
    log = tmp_path / "log.jsonl"
    os.kill(pid, signal.SIGTERM)
    try:
        deadline = time.monotonic() + 30
        while "UP" in subprocess.run(["scontrol", "ping"], capture_output=True, text=True).stdout:
            assert time.monotonic() < deadline, "slurmctld did not stop"
            time.sleep(0.2)
        done = subprocess.run(
            [sys.executable, "-m", "hpcsched", "advise", "--slurm", "--apply", "--log", str(log)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        slurm.restart()  # the whole test cluster back, for the tests that follow
    assert done.returncode == 2
    assert "controller does not answer" in done.stderr and "Traceback" not in done.stderr
    assert not log.exists()  # no tick happened: nothing read, nothing written, nothing logged


def test_mars_iteration_budget_is_deterministic_on_the_live_state(slurm):
    behind_a_blocker(slurm, blocker_seconds=30)
    spec = PolicySpec("mars-cw", search=SearchSpec(iterations=30, trees=1, seed=5))
    cluster = SlurmCluster()
    state = cluster.read()
    first = make_plan(state, spec, partition="debug")
    second = make_plan(state, spec, partition="debug")
    assert [c.job.job_id for c in first.changes] == [c.job.job_id for c in second.changes]


@pytest.mark.parametrize("flag", ["--apply", "--release"])
def test_snapshots_are_never_changed(flag, capsys):
    fixtures = Path(__file__).parent / "fixtures"
    code = main(
        ["advise", "--from-json", str(fixtures / "squeue-empty.json"),
         str(fixtures / "sinfo-idle.json"), flag]
    )  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 2 and "--from-json" in err


def test_the_loop_stops_on_sigterm_and_releases_its_jobs(slurm, tmp_path):
    jobs = behind_a_blocker(slurm, blocker_seconds=60)
    log = tmp_path / "log.jsonl"
    loop = subprocess.Popen(
        [sys.executable, "-m", "hpcsched", "advise", "--slurm", "--policy", "sjf",
         "--partition", "debug", "--apply", "--interval", "0.5", "--release-on-exit",
         "--log", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not log.exists() or log.read_text().count('"event": "tick"') < 2:
        assert loop.poll() is None and time.monotonic() < deadline, "the loop did not tick twice"
        time.sleep(0.2)
    steered = slurm.priorities(jobs)
    loop.send_signal(signal.SIGTERM)
    _, err = loop.communicate(timeout=60)
    assert loop.returncode == 0 and "Traceback" not in err
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert entries[-1]["event"] == "release" and sorted(entries[-1]["jobs"]) == sorted(
        {w["job_id"] for e in entries for w in e.get("writes", []) if w["outcome"] == WRITTEN}
    )
    # ticks after the first find nothing to change: priorities stay put
    ticks = [e for e in entries if e["event"] == "tick"]
    assert len(ticks) >= 2 and all(t["writes"] == [] for t in ticks[1:])
    time.sleep(1.5)
    assert slurm.priorities(jobs) != steered  # Slurm computes them again


def test_two_overlapping_partitions_start_in_the_planned_order_in_each(slurm, capsys, tmp_path):
    """debug = c[1-4] (tier 1) and batch = c[3-4] (tier 2, at most 2 nodes). Behind a
    whole-machine blocker: three batch jobs of 2 nodes and three debug jobs of 4, each
    submitted longest first (Slurm's own order would be FCFS: equal sizes, equal
    priorities). The advisor plans SJF on the site: batch's jobs first (its tier), shortest
    first, then debug's, shortest first; a job submitted to both but over batch's MaxNodes
    is of debug's tier and runs in debug. Every job starts in the order the plan gave it
    within its partition."""
    blocker = slurm.submit("blocker", 4, 1, 8, "-p", "debug")
    deadline = time.monotonic() + 20
    while slurm.jobs()[blocker]["job_state"] != "RUNNING":
        assert time.monotonic() < deadline, "the blocker did not start"
        time.sleep(0.2)
    batch = [slurm.submit(f"b{m}", 2, m, 1, "-p", "batch") for m in (4, 3, 2)]
    debug = [slurm.submit(f"d{m}", 4, m, 1, "-p", "debug") for m in (7, 6, 5)]
    both = slurm.submit("both", 3, 1, 1, "-p", "debug,batch")  # over batch's MaxNodes
    log = tmp_path / "log.jsonl"
    code, out, _ = advise(capsys, "--policy", "sjf", "--apply", "--log", log)
    assert code == 0, out
    assert "in debug (tier 1), batch (tier 2)" in " ".join(out.split())
    tick = last_tick(log)
    planned = [e["job"] for e in tick["plan"]]
    tiers = {e["job"]: (e["partition"], e["tier"]) for e in tick["plan"]}
    assert planned == [*batch[::-1], both, *debug[::-1]]  # tier 2, then SJF within tier 1
    assert {j: tiers[j] for j in batch} == {j: ("batch", 2) for j in batch}
    assert tiers[both] == ("debug", 1) and tiers[debug[0]] == ("debug", 1)
    done = slurm.wait_done([*batch, *debug, both], timeout=120)
    assert all(done[j]["job_state"] == "COMPLETED" for j in [*batch, *debug, both])
    for jobs in (batch, [both, *debug]):
        started = sorted(jobs, key=lambda j: (done[j]["start_time"], j))
        assert started == [j for j in planned if j in jobs]
    assert done[both]["partition"] == "debug"


def test_the_clusters_own_slurm_conf_gives_the_site_slurmctld_reports(slurm):
    """The test cluster's slurm.conf, read by hpcsched, against what its slurmctld reports
    (scontrol show partition, sinfo): the same nodes, and each partition's nodes, tier,
    limits, state and default."""
    from hpcsched.site.slurm.conf import read_slurm_conf

    platform = read_slurm_conf(slurm.conf).platform()
    state = SlurmCluster().read()
    assert platform.nodes == len(state.nodes) == 4
    assert [(g.nodes, g.cores) for g in platform.groups] == [(4, 4)]  # c[1-4], CPUs=4
    assert platform.site is not None
    ours = {
        p.name: (sum(b - a for a, b in p.ranges), p.tier, p.max_time, p.max_nodes, p.min_nodes,
                 p.state, p.default)
        for p in platform.site.partitions
    }  # fmt: skip
    reported = {
        p.name: (len(p.nodes), p.tier, p.max_time, p.max_nodes, p.min_nodes, p.state, p.default)
        for p in state.partitions
    }
    assert ours == reported
    assert ours["batch"] == (2, 2, 3600.0, 2, 1, "up", False)
