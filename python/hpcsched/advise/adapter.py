"""What the advisor needs from a resource manager: read the state, write priorities, hold and
release jobs, each action checked against the job's state just before it is made.

Slurm is the first adapter (:mod:`hpcsched.advise.slurm`); PBS or Flux would be further
classes with the same methods. Every action reports one outcome per job (the strings below);
the runner decides what follows (undo, log, report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hpcsched.advise.state import ClusterState
from hpcsched.exceptions import HpcschedError

#: Outcomes of one action on one job.
WRITTEN = "written"
HELD = "held"
LIFTED = "lifted"
RELEASED = "released"
VANISHED = "skipped: the job is gone"
NOT_PENDING = "skipped: the job is no longer pending"
HELD_NOW = "skipped: the job is held"
NOT_HELD = "skipped: the job is not held by an administrator"
CHANGED = "skipped: its priority changed since the advisor wrote it"
NOT_TRIED = "not tried: the controller stopped answering"
#: Prefixes of outcomes that stop a batch: the controller did not answer (the action may or
#: may not have been made), or refused the command (permissions).
LOST = "controller: "
DENIED = "denied: "
#: Prefix of any other failure of the command on this job (nothing was changed).
FAILED = "error: "
#: Prefix of a release whose hold was placed but whose release failed: the job is held.
STUCK = "held: "


def cut_off(outcome: str) -> bool:
    """The controller stopped answering or refused the command: stop the batch."""
    return outcome.removeprefix(STUCK).startswith((LOST, DENIED))


class ControllerError(HpcschedError):
    """The resource manager's controller did not answer (or refused a command)."""


@dataclass(frozen=True)
class Write:
    """One priority write and what came of it."""

    job_id: int
    old: int
    new: int
    outcome: str


class Adapter(Protocol):
    """A resource manager the advisor can read and steer.

    Each action re-reads the job's state immediately before acting on it and skips the job
    when the action no longer applies (gone, started, held by someone). Once the controller
    stops answering (or refuses), the remaining jobs of the batch are not tried
    (:data:`NOT_TRIED`)."""

    #: e.g. ``slurm``
    name: str

    def read(self) -> ClusterState:
        """The state now. Raises :class:`ControllerError` when the controller does not
        answer."""
        ...

    def check(self) -> None:
        """Raises :class:`ControllerError` unless the controller answers now."""
        ...

    def set_priorities(self, priorities: Sequence[tuple[int, int, int]]) -> list[Write]:
        """Writes (job id, old, new) priorities to jobs still pending and not held."""
        ...

    def hold(self, job_ids: Sequence[int]) -> dict[int, str]:
        """Holds these jobs if still pending and not held (:data:`HELD` when placed)."""
        ...

    def unhold(self, job_ids: Sequence[int]) -> dict[int, str]:
        """Lifts an administrator's hold (the advisor's) from these jobs (:data:`LIFTED`);
        a job no longer held that way is :data:`NOT_HELD`."""
        ...

    def release(self, jobs: Sequence[tuple[int, int | None]]) -> dict[int, str]:
        """Returns these (job id, expected priority) jobs to the resource manager's own
        priority (:data:`RELEASED`), if still pending, not held and at the expected priority
        (else :data:`CHANGED`)."""
        ...
