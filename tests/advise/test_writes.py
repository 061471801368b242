"""Writes, undo and the ledger, against a cluster kept in memory (the live tests in
test_ownership.py do the same against Slurm): a write cut off part-way is undone as far as the
controller lets it and said exactly, the tick is logged as partial with every write made, and
``release`` finds those jobs later."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import replace

import pytest

from hpcsched.advise.adapter import (
    CHANGED,
    HELD,
    HELD_NOW,
    LIFTED,
    LOST,
    NOT_HELD,
    NOT_PENDING,
    NOT_TRIED,
    RELEASED,
    VANISHED,
    WRITTEN,
    ControllerError,
    Write,
)
from hpcsched.advise.runner import Advisor, Ledger
from hpcsched.advise.slurm import _outcome
from hpcsched.advise.state import ClusterState, Job, Node
from hpcsched.policies import PolicySpec

NOW = 1_800_000_000.0


def pending(job_id: int, limit: float, priority: int, pinned: bool = False) -> Job:
    return Job(
        job_id=job_id, name=f"j{job_id}", user="alice", partitions=("debug",), state="PENDING",
        reason="Priority", nodes=4, time_limit=limit, submit=NOW - 1000 + job_id, start=None,
        priority=priority, nice=0, pinned=pinned,
    )  # fmt: skip


class MemoryCluster:
    """Four nodes and pending whole-machine jobs; Slurm's own priority of each job is the one
    it was created with. ``answers`` writes are answered, then the controller is lost."""

    name = "memory"

    def __init__(self, jobs: Sequence[Job], answers: int | None = None) -> None:
        self.jobs = {j.job_id: j for j in jobs}
        self.own = {j.job_id: j.priority for j in jobs if not j.pinned}
        self.answers = answers
        self.down = False
        self.calls: list[tuple[str, int]] = []

    def read(self) -> ClusterState:
        self.check()
        nodes = [Node(f"c{i}", ("idle",), ("debug",)) for i in range(4)]
        return ClusterState(NOW, list(self.jobs.values()), nodes, source="memory")

    def check(self) -> None:
        if self.down:
            raise ControllerError("the Slurm controller does not answer")

    def _answer(self, action: str, job: int) -> str | None:
        self.calls.append((action, job))
        if self.down:
            return NOT_TRIED if action == "update" else f"{LOST}no answer"
        if self.answers is not None:
            if self.answers == 0:
                self.down = True
                return f"{LOST}unable to contact slurm controller"
            self.answers -= 1
        return None

    def set_priorities(self, priorities):
        writes = []
        for job, old, new in priorities:
            outcome = self._answer("update", job)
            if outcome is None:
                self.jobs[job] = replace(self.jobs[job], priority=new, pinned=True)
                outcome = WRITTEN
            writes.append(Write(job, old, new, outcome))
        return writes

    def hold(self, job_ids):
        out = {}
        for job in job_ids:
            out[job] = self._answer("hold", job) or HELD
            if out[job] == HELD:
                self.jobs[job] = replace(self.jobs[job], priority=0, reason="JobHeldAdmin")
        return out

    def unhold(self, job_ids):
        out = {}
        for job in job_ids:
            if self.jobs[job].reason != "JobHeldAdmin":
                out[job] = NOT_HELD
                continue
            out[job] = self._answer("release", job) or LIFTED
            if out[job] == LIFTED:
                self._own(job)
        return out

    def release(self, jobs):
        out = {}
        for job, expected in jobs:
            if expected is not None and self.jobs[job].priority != expected:
                out[job] = CHANGED
                continue
            out[job] = self._answer("release", job) or RELEASED
            if out[job] == RELEASED:
                self._own(job)
        return out

    def _own(self, job: int) -> None:
        self.jobs[job] = replace(
            self.jobs[job], priority=self.own.get(job, 1), reason="Priority", pinned=False
        )


def comes_back(cluster: MemoryCluster):
    """A ``check`` after which a lost controller answers again (for the undo)."""

    def check() -> None:
        if cluster.down:
            cluster.down, cluster.answers = False, None

    return check


def queue() -> list[Job]:
    # SJF order: 4, 3, 2, 1 (shortest first); all at Slurm's own 1000 (job 2 pinned by an
    # administrator at 5000)
    return [
        pending(1, 500.0, 1000),
        pending(2, 400.0, 5000, pinned=True),
        pending(3, 300.0, 1000),
        pending(4, 200.0, 1000),
    ]


def advisor(cluster: MemoryCluster, tmp_path, **options) -> Advisor:
    return Advisor(
        cluster, PolicySpec("sjf"), apply=True, log_path=tmp_path / "log.jsonl", **options
    )


def log_of(tmp_path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]


def test_a_lost_controller_is_not_said_undone(tmp_path):
    cluster = MemoryCluster(queue(), answers=2)
    with pytest.raises(ControllerError) as error:
        advisor(cluster, tmp_path).tick()
    message = str(error.value)
    # SJF writes 4, 3, 2, 1 (5000, 4999, 4998, 4997): 4 and 3 were written, job 2's write
    # got no answer, job 1's was not tried
    assert "2 of 4 priorities were written before" in message
    assert "NOT undone: jobs 4, 3 keep the advisor's priority" in message
    assert "job 2 got no answer and may have been written" in message
    assert "were undone" not in message and str(tmp_path / "log.jsonl") in message
    events = log_of(tmp_path)
    assert [e["event"] for e in events] == ["write", "tick"]
    tick = events[-1]
    assert tick["partial"] is True and tick["error"] == message
    assert {w["job_id"]: w["outcome"][:11] for w in tick["writes"]} == {
        4: "written",
        3: "written",
        2: "controller:",
        1: "not tried: ",
    }
    # once Slurm answers, --release finds exactly the jobs the advisor may have changed
    cluster.down, cluster.answers = False, None
    result = advisor(cluster, tmp_path).release()
    assert sorted(result.released) == [3, 4]
    assert result.left_alone == [
        (2, "its priority 5,000 is not the advisor's: set by someone else")
    ]
    assert {j: cluster.jobs[j].priority for j in (1, 2, 3, 4)} == {
        1: 1000,
        2: 5000,
        3: 1000,
        4: 1000,
    }
    assert Ledger.replay(advisor(cluster, tmp_path).log).empty


def test_undo_hands_back_slurms_priority_and_restores_a_pin(tmp_path):
    cluster = MemoryCluster(queue(), answers=3)
    advisor_ = advisor(cluster, tmp_path)
    cluster.check = comes_back(cluster)  # type: ignore[method-assign]
    with pytest.raises(ControllerError) as error:
        advisor_.tick()
    assert "undone: 2 returned to Slurm's own priority, 1 set back to the value pinned before" in (
        str(error.value)
    )
    assert "NOT undone" not in str(error.value)
    # 4 and 3 by hold + release (not pinned), 2 by writing its pinned value back
    assert ("release", 4) in cluster.calls and ("release", 3) in cluster.calls
    assert ("update", 2) in cluster.calls[4:]
    assert {j: (cluster.jobs[j].priority, cluster.jobs[j].pinned) for j in (2, 3, 4)} == {
        2: (5000, True),
        3: (1000, False),
        4: (1000, False),
    }
    assert Ledger.replay(advisor_.log).written.keys() == {(1, NOW - 999.0)}  # the unanswered


def test_the_advisors_own_pin_is_restored_not_released(tmp_path):
    cluster = MemoryCluster(queue())
    first = advisor(cluster, tmp_path)
    first.tick()  # 4: 5000, 3: 4999, 2: 4998, 1: 4997
    assert cluster.jobs[3].priority == 4999
    # job 4 runs out of the queue; the next tick moves 3, 2 and 1 up and is cut off after one
    del cluster.jobs[4]
    cluster.jobs[5] = pending(5, 100.0, 1000)  # a new job, shortest: it goes first
    cluster.own[5] = 1000
    cluster.answers = 2

    cluster.check = comes_back(cluster)  # type: ignore[method-assign]
    with pytest.raises(ControllerError):
        first.tick()
    undo = {u["job_id"]: (u["how"], u["outcome"]) for u in log_of(tmp_path)[-1]["undo"]}
    # 5 had Slurm's own priority: released; 3 had the advisor's 4999: written back
    assert undo == {5: ("return", RELEASED), 3: ("restore", WRITTEN)}
    assert cluster.jobs[3].priority == 4999 and cluster.jobs[5].priority == 1000


def test_a_controller_lost_before_the_writes_changes_and_logs_nothing(tmp_path):
    cluster = MemoryCluster(queue())
    read = cluster.read

    def read_then_lose() -> ClusterState:
        state = read()
        cluster.down = True
        return state

    cluster.read = read_then_lose  # type: ignore[method-assign]
    with pytest.raises(ControllerError, match="does not answer"):
        advisor(cluster, tmp_path).tick()
    assert cluster.calls == []
    assert not (tmp_path / "log.jsonl").exists()


def test_release_without_records_reads_nothing(tmp_path):
    cluster = MemoryCluster(queue())
    cluster.down = True  # it is not even asked
    result = advisor(cluster, tmp_path).release()
    assert not result.had_records and result.released == []
    assert not (tmp_path / "log.jsonl").exists()


def test_logs_of_earlier_versions_still_release_their_jobs(tmp_path):
    (tmp_path / "log.jsonl").write_text(
        json.dumps({"event": "tick", "writes": [{"job_id": 3, "old": 1000, "new": 1500,
                                                  "outcome": "written"}], "holds": []})
        + "\n{cut by a crash\n"
    )  # fmt: skip
    cluster = MemoryCluster([replace(j, priority=1500) if j.job_id == 3 else j for j in queue()])
    assert advisor(cluster, tmp_path).release().released == [3]


@pytest.mark.parametrize(
    ("stderr", "outcome"),
    [
        ("Invalid job id specified for job 99999", VANISHED),
        ("slurm_load_jobs error: Invalid job id specified", VANISHED),
        ("Job has already finished for job 2", NOT_PENDING),
        ("Job is in held state, pending scheduler release for job 10", HELD_NOW),
        ("slurm_load_jobs error: Unable to contact slurm controller (connect failure)", LOST),
        ("Access/permission denied for job 7", "denied: "),
        ("Invalid priority value", "error: "),
    ],
)
def test_scontrol_messages(stderr, outcome):
    # recorded from Slurm 22.05.8 (scontrol and squeue -j on the test cluster)
    done = subprocess.CompletedProcess(["scontrol"], 1, stdout="", stderr=stderr + "\n")
    assert _outcome(done).startswith(outcome)
