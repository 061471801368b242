"""The advisor's ticks: read, plan, write (with ``apply``), log; the loop and the release.

The decision log (:mod:`hpcsched.advise.ledger`; JSON lines, appended) is
also the advisor's ledger of what it changed on the cluster. Every change is logged BEFORE it
is made (``write`` and ``hold`` entries: what the advisor is about to do) and its outcome
after (``tick``, ``unhold``, ``release``), so a crash at any point leaves a log that names
every job the advisor may have changed. :class:`Ledger` reads it back: the priorities the
advisor wrote (or may have written) and not since handed back, and the holds it placed (or
may have placed) and not since lifted. ``release`` and every tick with ``apply`` act only on
those, and only when the job still is as the advisor left it.
"""

from __future__ import annotations

import datetime
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hpcsched.advise.adapter import (
    DENIED,
    FAILED,
    HELD,
    LIFTED,
    LOST,
    NOT_TRIED,
    RELEASED,
    STUCK,
    WRITTEN,
    Adapter,
    ControllerError,
    Write,
    cut_off,
)
from hpcsched.advise.ledger import DecisionLog as DecisionLog
from hpcsched.advise.ledger import Key as Key
from hpcsched.advise.ledger import Ledger as Ledger
from hpcsched.advise.ledger import default_log_path as default_log_path
from hpcsched.advise.plan import DEFAULT_UNLIMITED, Plan, in_scope, make_plan
from hpcsched.advise.slurm_order import SlurmOrder
from hpcsched.advise.state import ClusterState, Job
from hpcsched.policies import PolicySpec


def _record(job: Job, **extra: Any) -> dict[str, Any]:
    return {"job_id": job.job_id, "submit": job.submit, **extra}


@dataclass
class TickResult:
    number: int
    plan: Plan
    writes: list[Write]
    #: jobs held for a drain this tick
    held: list[int]
    #: holds of earlier ticks (or runs) lifted before this tick's read
    released: list[int]
    #: wall-clock seconds of each phase
    read_seconds: float
    decide_seconds: float
    write_seconds: float
    #: "apply" or "dry run"
    mode: str = "dry run"
    #: jobs in scope the log shows held by the advisor and still held (a dry run lifts none)
    stale_holds: list[int] = field(default_factory=list)
    #: holds asked for but not placed, with why
    hold_failures: dict[int, str] = field(default_factory=dict)
    #: the decision log this tick went to (empty without one)
    log_path: str = ""


@dataclass
class ReleaseResult:
    """What ``release`` did."""

    #: returned to Slurm's own priority
    released: list[int] = field(default_factory=list)
    #: the advisor's holds lifted
    lifted: list[int] = field(default_factory=list)
    #: pending jobs the advisor wrote that someone changed since (priority or hold), with why
    left_alone: list[tuple[int, str]] = field(default_factory=list)
    #: jobs the release could not hand back, with the outcome
    failed: list[tuple[int, str]] = field(default_factory=list)
    #: False when the log records nothing the advisor changed and has not undone
    had_records: bool = True


@dataclass
class Advisor:
    """Ties an adapter, a policy, a scope and a decision log together across ticks."""

    adapter: Adapter
    policy: PolicySpec
    partition: str | None = None
    apply: bool = False
    drain_holds: bool = False
    unlimited: float = DEFAULT_UNLIMITED
    log_path: str | os.PathLike[str] | None = None
    ticks: int = 0
    #: Slurm's own priorities, to show Slurm's order beside each plan (None: not shown)
    slurm: SlurmOrder | None = None

    def __post_init__(self) -> None:
        self.log = None if self.log_path is None else DecisionLog(self.log_path)
        self.ledger = Ledger.replay(self.log)

    # --- a tick ---

    def tick(self) -> TickResult:
        self.ticks += 1
        if self.log is not None:
            self.log.prepare()  # a log that cannot be written stops the tick before any change
        t0 = time.perf_counter()
        state = self.adapter.read()
        own = self._own_holds(state)
        lifted: list[int] = []
        stale: list[int] = []
        if own and self.apply:
            # the drain holds of the last tick, or of a run that crashed: lifted, replanned
            lifted = self._lift(own)
            state = self.adapter.read()
        elif own:
            stale = [j.job_id for j in own if j.reason == "JobHeldAdmin"]
        t1 = time.perf_counter()
        plan = make_plan(
            state,
            self.policy,
            partition=self.partition,
            unlimited=self.unlimited,
            drain_holds=self.drain_holds,
            slurm=self.slurm,
        )
        t2 = time.perf_counter()
        writes: list[Write] = []
        holds: dict[int, str] = {}
        if self.apply:
            writes = self._write(plan, state, t1 - t0, t2 - t1)
            if plan.holds:
                self._append(
                    {
                        "time": _iso(time.time()),
                        "event": "hold",
                        "why": "drain",
                        "tick": self.ticks,
                        "jobs": [_record(j) for j in plan.holds],
                    }
                )
                holds = self.adapter.hold([j.job_id for j in plan.holds])
        t3 = time.perf_counter()
        result = TickResult(
            self.ticks,
            plan,
            writes,
            [j for j, o in holds.items() if o == HELD],
            lifted,
            t1 - t0,
            t2 - t1,
            t3 - t2,
            mode="apply" if self.apply else "dry run",
            stale_holds=stale,
            hold_failures={j: o for j, o in holds.items() if o != HELD},
            log_path=self._where(),
        )
        entry = self._tick_entry(state, plan, writes, t1 - t0, t2 - t1, t3 - t2)
        entry["holds"] = [
            {"job_id": j.job_id, "submit": j.submit, "outcome": holds[j.job_id]}
            for j in plan.holds
            if j.job_id in holds
        ]
        entry["unheld"] = lifted
        self._append(entry)
        cut = [o for o in holds.values() if cut_off(o)]
        if cut:
            raise ControllerError(
                f"the Slurm controller stopped answering while jobs were held for a drain "
                f"({cut[0]}); the holds are in the decision log ({self._where()}): the next "
                "tick or --release lifts them"
            )
        return result

    def _write(self, plan: Plan, state: ClusterState, read: float, decide: float) -> list[Write]:
        """Writes the plan's priorities; on a controller lost part-way (or a refusal), undoes
        what it can, logs the tick as partial and raises :class:`ControllerError`."""
        if not plan.writes:
            return []
        self.adapter.check()  # nothing written (nor logged) when the controller is gone
        jobs = {c.job.job_id: c.job for c in plan.writes}
        self._append(
            {
                "time": _iso(time.time()),
                "event": "write",
                "tick": self.ticks,
                "jobs": [_record(c.job, old=c.old, new=c.new) for c in plan.writes],
            }
        )
        started = time.perf_counter()
        writes = self.adapter.set_priorities([(c.job.job_id, c.old, c.new) for c in plan.writes])
        cut = [w for w in writes if cut_off(w.outcome)]
        if not cut:
            return writes
        undo = self._undo([w for w in writes if w.outcome == WRITTEN], jobs)
        message = self._cut_message(writes, cut[0].outcome, undo)
        entry = self._tick_entry(
            state, plan, writes, read, decide, time.perf_counter() - started, partial=True
        )
        entry["undo"] = undo
        entry["error"] = message
        self._append(entry)
        raise ControllerError(message)

    def _undo(self, made: list[Write], jobs: dict[int, Job]) -> list[dict[str, Any]]:
        """Puts back the jobs written this tick. A job whose old priority was pinned (by the
        advisor, by an administrator, or maybe: the adapter cannot tell) gets that value
        written back, which pins it as before; a job that had Slurm's own priority goes back
        to it by hold + release (writing its old value would pin it)."""
        if not made:
            return []
        how = {
            w.job_id: "restore"
            if w.old in self.ledger.values(jobs[w.job_id]) or jobs[w.job_id].pinned is not False
            else "return"
            for w in made
        }

        def record(w: Write, outcome: str) -> dict[str, Any]:
            return _record(jobs[w.job_id], how=how[w.job_id], old=w.old, new=w.new, outcome=outcome)

        try:
            self.adapter.check()
        except ControllerError as exc:
            return [record(w, f"{LOST}{exc}") for w in made]
        restore = [w for w in made if how[w.job_id] == "restore"]
        back = [w for w in made if how[w.job_id] == "return"]
        records = []
        if restore:
            done = self.adapter.set_priorities([(w.job_id, w.new, w.old) for w in restore])
            records += [record(w, d.outcome) for w, d in zip(restore, done, strict=True)]
        if back and any(cut_off(r["outcome"]) for r in records):
            records += [record(w, NOT_TRIED) for w in back]
        elif back:
            self._append(
                {
                    "time": _iso(time.time()),
                    "event": "hold",
                    "why": "undo",
                    "tick": self.ticks,
                    "jobs": [_record(jobs[w.job_id]) for w in back],
                }
            )
            outcomes = self.adapter.release([(w.job_id, w.new) for w in back])
            records += [record(w, outcomes[w.job_id]) for w in back]
        return records

    def _cut_message(self, writes: list[Write], first: str, undo: list[dict[str, Any]]) -> str:
        if first.startswith(DENIED):
            head = (
                f"Slurm refused to set a priority ({first.removeprefix(DENIED)}): --apply needs "
                "root or the SlurmUser"
            )
        else:
            head = (
                "the Slurm controller stopped answering while priorities were written "
                f"({first.removeprefix(LOST)})"
            )
        made = [w for w in writes if w.outcome == WRITTEN]
        unanswered = [w.job_id for w in writes if w.outcome.startswith(LOST)]
        returned = [u["job_id"] for u in undo if u["how"] == "return" and u["outcome"] == RELEASED]
        restored = [u["job_id"] for u in undo if u["how"] == "restore" and u["outcome"] == WRITTEN]
        stuck = [u["job_id"] for u in undo if u["outcome"].startswith(STUCK)]
        kept = [u["job_id"] for u in undo if _failed(u["outcome"]) and u["job_id"] not in stuck]
        parts = [head]
        if not made and not unanswered:
            parts.append("no priority was changed")
        else:
            parts.append(f"{len(made)} of {len(writes)} priorities were written before")
            if returned or restored:
                parts.append(
                    f"undone: {len(returned)} returned to Slurm's own priority, "
                    f"{len(restored)} set back to the value pinned before"
                )
            if kept:
                parts.append(
                    f"NOT undone: {_jobs(kept)} keep the advisor's priority (the undo failed)"
                )
            if stuck:
                parts.append(f"{_jobs(stuck)} are left held by the advisor")
            if unanswered:
                parts.append(f"{_jobs(unanswered)} got no answer and may have been written")
            if kept or stuck or unanswered:
                parts.append("`hpcsched advise --release` hands them back once Slurm answers")
        where = self._where()
        parts.append(f"the tick is logged as partial ({where})" if where else "")
        return "; ".join(p for p in parts if p)

    def _own_holds(self, state: ClusterState) -> list[Job]:
        """Pending jobs in scope the log shows held by the advisor and not lifted."""
        return [
            j
            for j in state.jobs
            if j.pending and in_scope(j, self.partition) and self.ledger.held(j)
        ]

    def _lift(self, jobs: list[Job]) -> list[int]:
        """Lifts the advisor's holds on these jobs (if still held by an administrator)."""
        outcomes = self.adapter.unhold([j.job_id for j in jobs])
        self._append(
            {
                "time": _iso(time.time()),
                "event": "unhold",
                "jobs": [_record(j, outcome=outcomes[j.job_id]) for j in jobs],
            }
        )
        cut = [o for o in outcomes.values() if cut_off(o)]
        if cut:
            raise ControllerError(
                f"the Slurm controller stopped answering while the advisor's holds were lifted "
                f"({cut[0]}); the log keeps the rest ({self._where()}): run again or --release"
            )
        return [j for j, o in outcomes.items() if o == LIFTED]

    # --- the loop ---

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

    # --- the release ---

    def release(self) -> ReleaseResult:
        """Hands back, in scope, what the log shows the advisor changed and has not undone:
        its holds are lifted, and the jobs it wrote a priority to go back to Slurm's own
        priority (hold + release) if they still have a priority it wrote. Nothing else is
        touched: not a job the log does not name, not a job someone re-prioritised or held
        since (left alone, and no longer the advisor's). With no log, nothing."""
        if self.ledger.empty:
            return ReleaseResult(had_records=False)
        if self.log is not None:
            self.log.prepare()
        state = self.adapter.read()
        result = ReleaseResult()
        holds = self._own_holds(state)
        if holds:
            result.lifted = self._lift(holds)
        back: list[tuple[Job, int]] = []
        dropped: list[dict[str, Any]] = []
        for job in state.jobs:
            if not in_scope(job, self.partition) or self.ledger.held(job):
                continue
            values = self.ledger.values(job)
            if not values:
                continue
            if job.pending and not job.held and job.priority in values:
                back.append((job, job.priority))
                continue
            if not job.pending:
                why = "no longer pending"
            elif job.held:
                why = "held by someone else since the advisor wrote its priority"
            elif job.pinned is False:
                why = "has Slurm's own priority (a write that got no answer was not made)"
            else:
                why = f"its priority {job.priority:,} is not the advisor's: set by someone else"
            if job.pending and job.pinned is not False:
                result.left_alone.append((job.job_id, why))
            dropped.append(_record(job, why=why))
        outcomes: dict[int, str] = {}
        if back:
            self._append(
                {
                    "time": _iso(time.time()),
                    "event": "hold",
                    "why": "release",
                    "jobs": [_record(j) for j, _ in back],
                }
            )
            outcomes = self.adapter.release([(j.job_id, p) for j, p in back])
        if back or dropped:
            self._append(
                {
                    "time": _iso(state.now),
                    "event": "release",
                    "scope": self.partition or "all",
                    "jobs": [j for j, o in outcomes.items() if o == RELEASED],
                    "outcomes": [_record(j, outcome=outcomes[j.job_id]) for j, _ in back],
                    "dropped": dropped,
                }
            )
        result.released = [j for j, o in outcomes.items() if o == RELEASED]
        result.failed = [(j, o) for j, o in outcomes.items() if _failed(o) or o.startswith(STUCK)]
        cut = [o for _, o in result.failed if cut_off(o)]
        if cut:
            raise ControllerError(
                f"the Slurm controller stopped answering during the release ({cut[0]}): "
                f"{len(result.released)} of {len(back)} jobs were handed back; the log keeps "
                f"the others ({self._where()}): run --release again once Slurm answers"
            )
        return result

    # --- the log ---

    def _where(self) -> str:
        return "" if self.log is None else str(self.log.path)

    def _tick_entry(
        self,
        state: ClusterState,
        plan: Plan,
        writes: Sequence[Write],
        read: float,
        decide: float,
        write: float,
        *,
        partial: bool = False,
    ) -> dict[str, Any]:
        submit = {c.job.job_id: c.job.submit for c in plan.changes}
        return {
            "time": _iso(plan.now),
            "event": "tick",
            "tick": self.ticks,
            "mode": "apply" if self.apply else "dry-run",
            "partial": partial,
            "source": state.source,
            "manager": state.manager,
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
                    **({} if c.tier is None else {"partition": c.partition, "tier": c.tier}),
                    **(
                        {}
                        if plan.slurm is None
                        else {
                            "slurm_rank": c.slurm_rank,
                            "slurm_start": _number(c.slurm_start),
                        }
                    ),
                }
                for c in plan.changes
            ],
            **({} if plan.slurm is None else {"slurm_order": _numbers(plan.slurm)}),
            "skipped": [{"job": j.job_id, "why": why} for j, why in plan.skipped],
            "writes": [{**w.__dict__, "submit": submit.get(w.job_id)} for w in writes],
            "seconds": {"read": read, "decide": decide, "write": write},
        }

    def _append(self, entry: dict[str, Any]) -> None:
        if self.log is not None:
            self.log.append(entry)
        self.ledger.apply(entry)


def _failed(outcome: str) -> bool:
    """The action was not made because of the controller or an error (not a skip)."""
    return cut_off(outcome) or outcome == NOT_TRIED or outcome.startswith(FAILED)


def _jobs(ids: Sequence[int]) -> str:
    shown = ", ".join(map(str, ids[:10])) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    return f"job{'s' if len(ids) > 1 else ''} {shown}"


def _iso(unix: float) -> str:
    return datetime.datetime.fromtimestamp(unix, tz=datetime.UTC).isoformat(timespec="seconds")


def _number(value: Any) -> Any:
    """JSON has no NaN or infinity: a start that never comes, a decision never made, is null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _numbers(value: Any) -> Any:
    """:func:`_number` through dicts and lists."""
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return _number(value)
