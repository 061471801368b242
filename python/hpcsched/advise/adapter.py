"""What the advisor needs from a resource manager: read the state, write priorities.

Slurm is the first adapter (:mod:`hpcsched.advise.slurm`); PBS or Flux would be further
classes with the same methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hpcsched.advise.state import ClusterState
from hpcsched.exceptions import HpcschedError

#: Outcomes of one write.
WRITTEN = "written"
VANISHED = "skipped: the job is gone"
NOT_PENDING = "skipped: the job is no longer pending"


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
    """A resource manager the advisor can read and steer."""

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
        """Writes (job id, old, new) priorities. Jobs that vanished or started are skipped,
        not errors; if the controller stops answering part-way, the writes already made are
        undone and :class:`ControllerError` is raised."""
        ...

    def release(self, job_ids: Sequence[int]) -> None:
        """Returns these jobs to the resource manager's own priority."""
        ...

    def hold(self, job_ids: Sequence[int]) -> None:
        """Holds these pending jobs (they cannot start until released)."""
        ...

    def unhold(self, job_ids: Sequence[int]) -> None:
        """Lifts holds this advisor placed."""
        ...
