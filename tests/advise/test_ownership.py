"""What the advisor may touch, against the real Slurm test cluster (issue 11): its log lives at
one per-user place, ``--release`` hands back only what the log shows it changed, a write cut
off part-way is honestly undone (or logged so that ``--release`` finds it), jobs held between
the read and the write are not written, and drain holds survive a crash of the advisor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpcsched.advise import runner
from hpcsched.advise.adapter import ControllerError
from hpcsched.advise.runner import Advisor
from hpcsched.advise.slurm import SlurmCluster
from hpcsched.cli import main
from hpcsched.policies import PolicySpec

SJF = ["--policy", "sjf", "--partition", "debug"]


def advise(capsys, *args):
    code = main(["advise", "--slurm", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def ticks(log: Path) -> list[dict]:
    return [e for e in entries(log) if e["event"] == "tick"]


def written(log: Path) -> set[int]:
    return {w["job_id"] for t in ticks(log) for w in t["writes"] if w["outcome"] == "written"}


def queue_behind_a_blocker(slurm, limits=(5, 4, 3, 2)) -> list[int]:
    """A whole-machine job running; whole-machine jobs behind it (each runs alone, so their
    start order is their priority order), submitted longest first."""
    slurm.blocker()
    jobs = [slurm.sbatch(f"job{i}", 4, minutes, 1) for i, minutes in enumerate(limits)]
    slurm.wait_for_priorities(jobs)
    return jobs


@pytest.fixture
def state_home(tmp_path, monkeypatch) -> Path:
    """The advisor's per-user state folder, and a current folder elsewhere."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


# --- 4. the log's place, and --release without a log -----------------------------------------


def test_the_default_log_is_per_user_not_per_folder(tmp_path, monkeypatch):
    from hpcsched.advise.runner import default_log_path

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    expected = tmp_path / "home" / ".local" / "state" / "hpcsched" / "advise.jsonl"
    assert default_log_path() == expected
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # not absolute: ignored (XDG rule)
    assert default_log_path() == expected
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_log_path() == tmp_path / "xdg" / "hpcsched" / "advise.jsonl"
    monkeypatch.chdir(tmp_path)
    assert default_log_path().is_absolute()


def test_release_with_no_log_touches_nothing(slurm, capsys, tmp_path, state_home, monkeypatch):
    # an administrator pinned priorities, in both partitions; the advisor never ran here
    slurm.blocker()
    mine = slurm.submit("admin-debug", 1, 5, 1, "-p", "debug")
    other = slurm.submit("admin-batch", 1, 5, 1, "-p", "batch")
    slurm.wait_for_priorities([mine, other])
    slurm.pin(mine, 5000)
    slurm.pin(other, 5001)
    monkeypatch.chdir(tmp_path)
    code, out, _ = advise(capsys, "--release")
    assert code == 0 and "nothing to release" in out
    assert str(state_home / "hpcsched" / "advise.jsonl") in out
    assert slurm.priorities([mine, other]) == {mine: 5000, other: 5001}
    assert slurm.pinned([mine, other]) == {mine: True, other: True}
    # an empty log is no different
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, _ = advise(capsys, "--release", "--log", empty)
    assert code == 0 and "nothing to release" in out
    assert slurm.priorities([mine, other]) == {mine: 5000, other: 5001}


def test_release_from_elsewhere_hands_back_only_the_advisors_jobs(
    slurm, capsys, tmp_path, state_home, monkeypatch
):
    jobs = queue_behind_a_blocker(slurm)
    first = tmp_path / "first"
    first.mkdir()
    monkeypatch.chdir(first)
    code, out, err = advise(capsys, *SJF, "--apply")
    assert code == 0, err
    log = state_home / "hpcsched" / "advise.jsonl"
    assert log.is_file() and not list(first.iterdir())  # the log is not in the current folder
    ours = written(log)
    assert len(ours) >= 3 and ours <= set(jobs)
    # since then: an administrator pins a job the advisor never touched, and re-pins one of
    # the advisor's
    outsider = slurm.submit("outsider", 1, 5, 1, "-p", "batch")
    slurm.wait_for_priorities([outsider])
    slurm.pin(outsider, 5000)
    repinned = sorted(ours)[0]
    slurm.pin(repinned, 7777)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = advise(capsys, "--release")  # every partition, default log
    assert code == 0, err
    assert f"released {len(ours) - 1} jobs" in out
    assert f"left alone: job {repinned}" in out
    assert slurm.priorities([outsider, repinned]) == {outsider: 5000, repinned: 7777}
    handed_back = sorted(ours - {repinned})
    assert not any(slurm.pinned(handed_back).values())  # Slurm computes them again
    assert not any(r.startswith("JobHeld") for r in slurm.reasons(jobs).values())
    # a second release has nothing left to do
    code, out, _ = advise(capsys, "--release")
    assert code == 0 and "nothing to release" in out
    assert slurm.priorities([outsider, repinned]) == {outsider: 5000, repinned: 7777}


def test_the_log_folder_is_created_or_the_error_names_it(slurm, capsys, tmp_path):
    jobs = queue_behind_a_blocker(slurm)
    before = slurm.priorities(jobs)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, _, err = advise(capsys, *SJF, "--apply", "--log", blocker / "log.jsonl")
    assert code == 2 and "Traceback" not in err and "internal error" not in err
    assert str(blocker) in err and len(err.strip().splitlines()) == 1
    assert slurm.priorities(jobs) == before  # nothing written before the log was usable
    log = tmp_path / "new" / "folders" / "log.jsonl"
    code, _, err = advise(capsys, *SJF, "--apply", "--log", log)
    assert code == 0, err
    assert written(log) and slurm.priorities(jobs) != before


# --- 5. a write cut off part-way -------------------------------------------------------------


def test_a_controller_lost_midway_is_reported_and_logged_then_released(
    fake_slurm, slurm, capsys, tmp_path
):
    jobs = queue_behind_a_blocker(slurm)
    log = tmp_path / "log.jsonl"
    fake_slurm.set(lose_after=2)  # two updates answered, then nothing answers
    code, _, err = advise(capsys, *SJF, "--apply", "--log", log)
    assert code == 2 and "Traceback" not in err
    assert "were undone" not in err
    [tick] = ticks(log)
    assert tick["partial"] is True
    made = {w["job_id"] for w in tick["writes"] if w["outcome"] == "written"}
    assert len(made) == 2
    assert "2 of" in err and "NOT undone" in err
    assert all(str(job) in err for job in made)
    assert {u["job_id"] for u in tick["undo"]} == made
    fake_slurm.restore()
    # the two jobs kept the advisor's priorities (pinned): nothing was undone
    assert all(slurm.pinned(sorted(made)).values())
    code, out, err = advise(capsys, "--release", "--log", log)
    assert code == 0, err
    assert "released 2 jobs" in out
    assert not any(slurm.pinned(jobs).values())  # Slurm computes them again


def test_an_undo_returns_jobs_to_slurm_or_to_their_pin(fake_slurm, slurm, tmp_path):
    # four whole-machine jobs; SJF writes them in the order a, pinned, b, c and the
    # controller does not answer the write of c (once)
    slurm.blocker()
    c, b, pinned, a = (slurm.sbatch(f"job-{m}", 4, m, 1) for m in (5, 4, 3, 2))
    slurm.wait_for_priorities([a, b, c, pinned])
    slurm.pin(pinned, 5000)  # an administrator's pin
    fake_slurm.set(lose_at=c, lost_calls=1)
    done = len(fake_slurm.updates())
    log = tmp_path / "log.jsonl"
    advisor = Advisor(
        SlurmCluster(parallel_writes=1),
        PolicySpec("sjf"),
        partition="debug",
        apply=True,
        log_path=log,
    )
    with pytest.raises(ControllerError) as error:
        advisor.tick()
    assert fake_slurm.updates()[done:] == [str(a), str(pinned), str(b), str(c), str(pinned)]
    [tick] = ticks(log)
    outcomes = {u["job_id"]: (u["how"], u["outcome"]) for u in tick["undo"]}
    assert outcomes == {
        a: ("return", "released"),
        pinned: ("restore", "written"),
        b: ("return", "released"),
    }
    assert "undone: 2 returned to Slurm's own priority, 1 set back" in str(error.value)
    assert "NOT undone" not in str(error.value)
    # a and b have Slurm's own priority again (not pinned); the administrator's pin is back
    assert slurm.pinned([a, b, pinned]) == {a: False, b: False, pinned: True}
    assert slurm.priorities([pinned]) == {pinned: 5000}
    assert not any(r.startswith("JobHeld") for r in slurm.reasons([a, b, c]).values())


def test_a_refused_write_exits_2_and_other_errors_are_reported(fake_slurm, slurm, capsys, tmp_path):
    jobs = queue_behind_a_blocker(slurm)
    before = slurm.priorities(jobs)
    log = tmp_path / "log.jsonl"
    fake_slurm.set(refuse_update={"message": "Access/permission denied for job"})
    code, _, err = advise(capsys, *SJF, "--apply", "--log", log)
    assert code == 2 and "root or the SlurmUser" in err and "no priority was changed" in err
    assert slurm.priorities(jobs) == before
    assert ticks(log)[-1]["partial"] is True
    # any other error: that job keeps its priority, the others are written, said on stderr
    odd = jobs[0]  # the longest: ranked last, so written
    fake_slurm.set(refuse_update={"job": str(odd), "message": "Invalid priority value"})
    code, _, err = advise(capsys, *SJF, "--apply", "--log", log)
    assert code == 0, err
    assert f"job {odd} keeps priority {before[odd]:,}: error: Invalid priority value" in err
    outcomes = {w["job_id"]: w["outcome"] for w in ticks(log)[-1]["writes"]}
    assert outcomes[odd] == "error: Invalid priority value"
    assert slurm.priorities([odd]) == {odd: before[odd]}
    assert [o for j, o in outcomes.items() if j != odd] == ["written"] * (len(outcomes) - 1)


# --- 6a. a job held between the read and the write -------------------------------------------


class HoldAfterRead(SlurmCluster):
    """Its user holds one job right after the advisor's read."""

    def __init__(self, slurm, victim: int) -> None:
        super().__init__()
        self.slurm, self.victim = slurm, victim

    def read(self):
        state = super().read()
        self.slurm.run("scontrol", "uhold", str(self.victim))
        return state


def test_a_job_held_after_the_read_is_not_written(fake_slurm, slurm, tmp_path):
    jobs = queue_behind_a_blocker(slurm)
    victim = jobs[0]  # the longest: SJF moves it, so the plan writes it
    fake_slurm.set(update_lifts_hold=True)  # a write would lift the hold
    advisor = Advisor(
        HoldAfterRead(slurm, victim),
        PolicySpec("sjf"),
        partition="debug",
        apply=True,
        log_path=tmp_path / "log.jsonl",
    )
    result = advisor.tick()
    outcomes = {w.job_id: w.outcome for w in result.writes}
    assert outcomes[victim] == "skipped: the job is held"
    assert str(victim) not in fake_slurm.updates()
    assert slurm.reasons([victim]) == {victim: "JobHeldUser"}
    assert [o for j, o in outcomes.items() if j != victim] == ["written"] * (len(outcomes) - 1)


# --- 6b. drain holds survive a crash ---------------------------------------------------------


class Crash(BaseException):
    """The advisor dies (as by kill -9) right after placing its holds."""


class CrashAfterHold(SlurmCluster):
    def hold(self, job_ids):
        super().hold(job_ids)
        raise Crash


@pytest.fixture
def drain_on_last(monkeypatch):
    """Plans with a drain that holds the last job of the plan (a MARS drain is not
    reproducible on demand)."""
    real = runner.make_plan

    def plan(*args, **kwargs):
        result = real(*args, **kwargs)
        if kwargs.get("drain_holds"):
            result.holds = [result.changes[-1].job]
        return result

    monkeypatch.setattr(runner, "make_plan", plan)


def crash_with_a_hold(slurm, log: Path) -> int:
    jobs = queue_behind_a_blocker(slurm)
    advisor = Advisor(
        CrashAfterHold(),
        PolicySpec("sjf"),
        partition="debug",
        apply=True,
        drain_holds=True,
        log_path=log,
    )
    with pytest.raises(Crash):
        advisor.tick()
    [held] = [j for j, r in slurm.reasons(jobs).items() if r == "JobHeldAdmin"]
    return held


def test_release_lifts_the_holds_of_a_crashed_advisor(drain_on_last, slurm, capsys, tmp_path):
    log = tmp_path / "log.jsonl"
    held = crash_with_a_hold(slurm, log)
    assert [e["event"] for e in entries(log)] == ["write", "hold"]  # logged before placed
    code, out, err = advise(capsys, "--release", "--log", log)
    assert code == 0, err
    assert "lifted 1 holds" in out
    assert slurm.reasons([held])[held] != "JobHeldAdmin"
    assert slurm.jobs()[held]["job_state"] == "PENDING"


def test_the_next_start_lifts_them_and_plans_the_job(drain_on_last, slurm, capsys, tmp_path):
    log = tmp_path / "log.jsonl"
    held = crash_with_a_hold(slurm, log)
    # a dry run changes nothing but says so
    code, _, err = advise(capsys, *SJF, "--log", log)
    assert code == 0 and f"still held by an earlier advisor run: {held}" in err
    assert slurm.reasons([held]) == {held: "JobHeldAdmin"}
    code, _, err = advise(capsys, *SJF, "--apply", "--log", log)
    assert code == 0, err
    assert slurm.reasons([held])[held] != "JobHeldAdmin"
    tick = ticks(log)[-1]
    assert tick["unheld"] == [held] and held in [p["job"] for p in tick["plan"]]
