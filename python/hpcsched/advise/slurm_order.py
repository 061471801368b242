"""Slurm's own order of the queue, beside the advisor's plan (docs/semantics.md, "Slurm's
order beside the plan").

The cluster's ``slurm.conf`` gives the priority weights, the partitions' ``PriorityJobFactor``
and the cluster's nodes and CPUs; the associations and QOS come from ``--slurm-accounts``
(else one account per account name of the queue, every user under it with shares 1, QOS
``normal``); each job's user, account, QOS, nice value and CPUs from squeue. The engine ranks the
pending jobs by Slurm's multifactor priority at the read time (``SlurmPolicy::rank_queue``,
the same code as ``--policy slurm``: nothing of the formula is written here) and plans them
in that order with EASY, as it plans the policy's order.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hpcsched import _core
from hpcsched.advise.state import Job
from hpcsched.site.platform import Platform
from hpcsched.site.slurm.policy import slurm_inputs
from hpcsched.workload import Workload


@dataclass(frozen=True)
class SlurmOrder:
    """What ranks the queue as Slurm would: a slurm.conf's platform (its settings, nodes and
    partitions) with the associations and QOS, and where they were read from."""

    platform: Platform
    #: the slurm.conf read
    source: str

    @classmethod
    def read(
        cls, conf: str | os.PathLike[str], accounts: str | os.PathLike[str] | None = None
    ) -> SlurmOrder:
        """Reads the slurm.conf ``conf`` (its Include files too) and, when given, the
        associations and QOS of ``accounts`` (``--slurm-accounts``'s formats)."""
        from dataclasses import replace

        from hpcsched.site.slurm.accounts import read_slurm_accounts
        from hpcsched.site.slurm.conf import read_slurm_conf
        from hpcsched.site.slurm.settings import SlurmSettings

        platform = read_slurm_conf(conf).platform()
        if accounts is not None:
            settings = platform.slurm or SlurmSettings.defaults()
            tree = read_slurm_accounts(accounts)
            platform = replace(platform, slurm=replace(settings, accounts=tree))
        return cls(platform, os.fspath(conf))

    def native(
        self, tasks: Sequence[Job], running: Sequence[Job], partitions: list[str] | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The engine's Slurm inputs (``plan_snapshot``'s ``slurm``) for these pending tasks
        and running jobs (their attributes in that order) on the site's ``partitions`` (None:
        one pool), and the notes on what is not known."""
        jobs = [*tasks, *running]
        frame = pd.DataFrame(
            {
                "user_name": [j.user for j in jobs],
                "account": [j.account for j in jobs],
                "qos": [j.qos for j in jobs],
                "nice": np.array([j.nice for j in jobs], dtype=np.int64),
                "nodes": np.array([j.nodes for j in jobs], dtype=np.int64),
            }
        )
        platform = self.platform
        settings = platform.slurm
        inputs = slurm_inputs(
            Workload(frame, platform.nodes, source=self.source),
            platform,
            platform.nodes,
            settings.accounts if settings is not None else None,
            partitions,
        )
        native = inputs.native
        # the CPUs the job asks for, as Slurm's job-size factor counts them (whole nodes of the
        # smallest when squeue does not say)
        asked = np.array([j.cpus for j in jobs], dtype=np.int64)
        native["job_cpus"] = np.where(asked > 0, asked, native["job_cpus"])
        notes = list(inputs.notes)
        priority = inputs.native["priority"]
        if priority["weight_fairshare"] > 0:
            notes.append(
                "fair-share without usage (sshare is not read): every user's factor is 1, "
                "so it orders no job"
            )
        if priority["weight_age"] > 0:
            notes.append("age counted to the read time (Slurm's is its last recalculation's)")
        return native, notes


def per_job(
    result: dict[str, Any], owner: list[int], count: int
) -> tuple[list[float], list[float]]:
    """Per pending job (``count`` of them; ``owner`` gives each task's), its best place in
    Slurm's order and its first task's start under that order (inf: none)."""
    rank = np.full(count, np.inf)
    start = np.full(count, np.inf)
    ranks = np.asarray(result["slurm_rank"], dtype=np.float64)
    ranks[ranks < 0] = np.inf
    np.minimum.at(rank, owner, ranks)
    np.minimum.at(start, owner, np.nan_to_num(result["slurm_start"], nan=np.inf))
    return rank.tolist(), start.tolist()


def compare(
    plan_starts: Sequence[float], slurm_ranks: Sequence[float], slurm_starts: Sequence[float],
    now: float, never: float,
) -> tuple[list[int | None], dict[str, Any]]:  # fmt: skip
    """For managed jobs in planned order (their planned starts), with their places in Slurm's
    order (inf: none) and starts under it: each one's place among them in Slurm's order, and
    the summary (how many the plan moves ahead of Slurm's order, behind, in place; the rank
    correlation; mean planned waits of the jobs that start before ``never`` in both)."""
    ranked = sorted(
        (k for k, r in enumerate(slurm_ranks) if math.isfinite(r)),
        key=lambda k: (slurm_ranks[k], k),
    )
    place: list[int | None] = [None] * len(slurm_ranks)
    for p, k in enumerate(ranked):
        place[k] = p
    pairs = [(k, p) for k, p in enumerate(place) if p is not None]
    ahead = sum(1 for k, p in pairs if k < p)
    behind = sum(1 for k, p in pairs if k > p)
    correlation = (
        _core.rank_correlation(
            np.array([k for k, _ in pairs], dtype=np.float64),
            np.array([p for _, p in pairs], dtype=np.float64),
        )
        if len(pairs) > 1
        else None
    )
    both = [
        (a - now, b - now)
        for a, b in zip(plan_starts, slurm_starts, strict=True)
        if max(a, b) < never
    ]
    return place, {
        "jobs": len(pairs),
        "ahead": ahead,
        "behind": behind,
        "in_place": len(pairs) - ahead - behind,
        "rank_correlation": correlation,
        "mean_wait": {
            "jobs": len(both),
            "plan": sum(a for a, _ in both) / len(both) if both else None,
            "slurm": sum(b for _, b in both) / len(both) if both else None,
        },
    }
