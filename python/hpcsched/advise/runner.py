"""The advisor's ticks: read, plan, write (with ``apply``), log; the loop and the release.

Each tick appends one JSON line to the decision log: the state in numbers, the policy's
decision, the planned order and every write with its outcome. The log also tells ``release``
which jobs the advisor manages.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hpcsched.advise.adapter import WRITTEN, Adapter, Write
from hpcsched.advise.plan import DEFAULT_UNLIMITED, Plan, in_scope, make_plan
from hpcsched.policies import PolicySpec


@dataclass
class TickResult:
    number: int
    plan: Plan
    writes: list[Write]
    held: list[int]
    released: list[int]
    #: wall-clock seconds of each phase
    read_seconds: float
    decide_seconds: float
    write_seconds: float


@dataclass
class Advisor:
    """Ties an adapter, a policy and a scope together across ticks."""

    adapter: Adapter
    policy: PolicySpec
    partition: str | None = None
    apply: bool = False
    drain_holds: bool = False
    unlimited: float = DEFAULT_UNLIMITED
    log_path: str | None = None
    ticks: int = 0
    #: jobs this advisor holds for a drain (lifted at the next tick)
    held: list[int] = field(default_factory=list)

    def tick(self) -> TickResult:
        self.ticks += 1
        released = []
        if self.apply and self.held:
            self.adapter.unhold(self.held)  # last tick's drain holds; replanned below
            released, self.held = self.held, []
        t0 = time.perf_counter()
        state = self.adapter.read()
        t1 = time.perf_counter()
        plan = make_plan(
            state,
            self.policy,
            partition=self.partition,
            unlimited=self.unlimited,
            drain_holds=self.drain_holds,
        )
        t2 = time.perf_counter()
        writes: list[Write] = []
        if self.apply:
            writes = self.adapter.set_priorities(
                [(c.job.job_id, c.old, c.new) for c in plan.writes]
            )
            if plan.holds:
                self.held = [j.job_id for j in plan.holds]
                self.adapter.hold(self.held)
        t3 = time.perf_counter()
        result = TickResult(
            self.ticks, plan, writes, list(self.held), released, t1 - t0, t2 - t1, t3 - t2
        )
        self._log(state.source, state.manager, result)
        return result

    def run(
        self,
        interval: float,
        *,
        max_ticks: int | None = None,
        stop: threading.Event | None = None,
        on_tick: Callable[[TickResult], None] | None = None,
    ) -> int:
        """Ticks every ``interval`` seconds until ``stop`` is set (or ``max_ticks``)."""
        stop = stop or threading.Event()
        done = 0
        while not stop.is_set():
            started = time.monotonic()
            result = self.tick()
            done += 1
            if on_tick is not None:
                on_tick(result)
            if max_ticks is not None and done >= max_ticks:
                break
            stop.wait(max(0.0, interval - (time.monotonic() - started)))
        return done

    def release(self) -> list[int]:
        """Returns every managed pending job in scope to the resource manager's own priority
        (and lifts this advisor's holds). Managed: written by a tick in the log; without a
        log, every pending job in scope that is not held."""
        if self.held:
            self.adapter.unhold(self.held)
            self.held = []
        state = self.adapter.read()
        written = managed_jobs(self.log_path)
        jobs = [
            j.job_id
            for j in state.jobs
            if j.pending
            and not j.held
            and in_scope(j, self.partition)
            and (written is None or j.job_id in written)
        ]
        self.adapter.release(jobs)
        self._append({"time": _iso(state.now), "event": "release", "jobs": jobs})
        return jobs

    def _log(self, source: str, manager: str, result: TickResult) -> None:
        plan = result.plan
        self._append(
            {
                "time": _iso(plan.now),
                "event": "tick",
                "tick": result.number,
                "mode": "apply" if self.apply else "dry-run",
                "source": source,
                "manager": manager,
                "scope": plan.scope,
                "policy": plan.policy,
                "state": plan.summary,
                "decision": {k: _number(v) for k, v in plan.decision.items()},
                "plan": [
                    {
                        "job": c.job.job_id,
                        "rank": c.rank,
                        "old": c.old,
                        "new": c.new,
                        "planned_start": _number(c.planned_start),
                        "why": c.why,
                    }
                    for c in plan.changes
                ],
                "skipped": [{"job": j.job_id, "why": why} for j, why in plan.skipped],
                "writes": [w.__dict__ for w in result.writes],
                "holds": result.held,
                "unheld": result.released,
                "seconds": {
                    "read": result.read_seconds,
                    "decide": result.decide_seconds,
                    "write": result.write_seconds,
                },
            }
        )

    def _append(self, entry: dict[str, Any]) -> None:
        if self.log_path is None:
            return
        line = json.dumps(entry, default=_plain, allow_nan=False) + "\n"
        # one write per line, flushed: a tick is in the log whole or not at all
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def managed_jobs(log_path: str | None) -> set[int] | None:
    """Jobs whose priority a tick in the log wrote (None without a log)."""
    if log_path is None or not os.path.exists(log_path):
        return None
    jobs: set[int] = set()
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash: the ticks before it still count
            for write in entry.get("writes", []):
                if write.get("outcome") == WRITTEN:
                    jobs.add(int(write["job_id"]))
    return jobs


def _iso(unix: float) -> str:
    return datetime.datetime.fromtimestamp(unix, tz=datetime.UTC).isoformat(timespec="seconds")


def _number(value: Any) -> Any:
    """JSON has no NaN or infinity: a start that never comes, a decision never made, is null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON-able: {value!r}")
