"""All or nothing: a tick whose writes the controller stops answering is undone."""

from __future__ import annotations

import pytest

from hpcsched.advise.adapter import NOT_PENDING, VANISHED, WRITTEN, ControllerError
from hpcsched.advise.slurm import SlurmCluster


class FlakyController(SlurmCluster):
    """Answers `answers` writes, then stops answering; job 13 vanished, job 14 started."""

    def __init__(self, answers: int) -> None:
        super().__init__(parallel_writes=1)  # one at a time: the failure point is exact
        self.answers = answers
        self.calls: list[tuple[int, int]] = []

    def check(self) -> None:
        return None

    def pending_ids(self) -> set[int]:
        return {10, 11, 12, 13}  # 14 started between the read and the write

    def _write_one(self, item: tuple[int, int, int]) -> str:
        job, _, new = item
        self.calls.append((job, new))
        if job == 13:
            return VANISHED
        if len(self.calls) > self.answers:
            return "controller: unable to contact slurm controller"
        return WRITTEN


PRIORITIES = [(10, 100, 500), (11, 200, 499), (12, 300, 498), (13, 400, 497), (14, 50, 496)]


def test_skips_are_not_errors():
    writes = FlakyController(answers=10).set_priorities(PRIORITIES)
    outcomes = {w.job_id: w.outcome for w in writes}
    assert outcomes == {10: WRITTEN, 11: WRITTEN, 12: WRITTEN, 13: VANISHED, 14: NOT_PENDING}


def test_a_controller_lost_midway_undoes_the_tick():
    cluster = FlakyController(answers=2)
    with pytest.raises(ControllerError, match="the 2 writes made were undone"):
        cluster.set_priorities(PRIORITIES)
    # 10 and 11 were written, 12 failed; then 10 and 11 got their old priorities back
    assert cluster.calls[:3] == [(10, 500), (11, 499), (12, 498)]
    assert sorted(cluster.calls[-2:]) == [(10, 100), (11, 200)]
