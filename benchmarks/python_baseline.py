"""Pure-Python FCFS + EASY-backfilling replay of rigid HPC jobs.

This module is the speed baseline the Rust engine is benchmarked against and an
independent oracle for differential tests. It uses the standard library only and
favours readability over speed (while avoiding anything pathologically slow).

Semantics (product spec):

* Events at the same time: all completions at that time are applied first, then
  all submissions at that time, then the scheduler is invoked once. Completions
  of zero-run-time jobs started at ``t`` are new events at ``t``: they are
  processed after that invocation and followed by another invocation at ``t``.
* Queue order is FCFS (replay order). Jobs are started in queue order while they
  fit; the first job that does not fit is the *top job*.
* EASY: the top job is reserved at the *shadow time*, found by walking running
  jobs by estimated end (ties by job index) until the top job fits. Estimated
  end = ``max(start + requested_time, now)``. ``extra`` = (free nodes now + nodes
  of every running job with estimated end <= shadow) - top job's nodes. Each later
  queued job that fits in the free nodes starts if ``now + requested_time <=
  shadow`` or else if ``nodes <= extra`` (then ``extra -= nodes``).
* A started job ends at ``start + run_time`` (overrun policy "continue").

Hand-checked example (more in ``_selfcheck``, run by ``python
benchmarks/python_baseline.py --selfcheck``). 4 nodes; A (3 nodes, req 10) starts
at 0. At t=1 B (2 nodes) is the top job: shadow 10, extra = 1 + 3 - 2 = 2. C
(1 node, req 100) ends after the shadow but fits in ``extra`` and is backfilled;
B starts at 10 when A ends.

>>> replay_fcfs_easy([0, 1, 1], [10, 5, 100], [10, 5, 100], [3, 2, 1], 4)
([0.0, 10.0, 1.0], [0, 0, 1])
"""

from __future__ import annotations

import bisect
import gzip
import heapq
import sys
import time
from collections.abc import Sequence


def replay_fcfs_easy(
    submit: Sequence[float],
    run_time: Sequence[float],
    requested_time: Sequence[float],
    nodes: Sequence[int],
    N: int,
) -> tuple[list[float], list[int]]:
    """Replay jobs (already in replay order) under FCFS + EASY backfilling.

    Returns ``(start, kind)`` per job: start time and 0 for a primary start,
    1 for a backfill start.
    """
    n = len(submit)
    start: list[float] = [0.0] * n
    kind: list[int] = [0] * n

    free = N
    queue: list[int] = []  # waiting job indices, FCFS order
    completions: list[tuple[float, int]] = []  # heap of (end time, job index)
    # Running jobs sorted by (start + requested_time, index). Estimated ends are
    # max(start + requested_time, now); clamping to `now` is monotone, so this order
    # is the order of estimated ends except among jobs clamped to `now`, whose
    # relative order does not change the shadow time or `extra`.
    running: list[tuple[float, int]] = []
    next_submit = 0  # next job to be submitted

    def start_job(j: int, now: float, backfill: int) -> None:
        nonlocal free
        free -= nodes[j]
        start[j] = now
        kind[j] = backfill
        heapq.heappush(completions, (now + run_time[j], j))
        bisect.insort(running, (now + requested_time[j], j))

    def schedule(now: float) -> None:
        nonlocal queue
        # Primary FCFS scan.
        i = 0
        while i < len(queue) and nodes[queue[i]] <= free:
            start_job(queue[i], now, 0)
            i += 1
        if i == len(queue):
            queue = []
            return
        top = queue[i]
        need = nodes[top]

        # Shadow time: walk running jobs by estimated end until the top job fits.
        avail = free
        shadow = now
        for est_raw, j in running:
            avail += nodes[j]
            if avail >= need:
                shadow = max(est_raw, now)
                break
        # extra = (free now + nodes of every running job with est end <= shadow) - need.
        extra = free - need
        for est_raw, j in running:
            if max(est_raw, now) > shadow:
                break
            extra += nodes[j]

        # Backfill scan over the rest of the queue.
        remaining = [top]
        for k in range(i + 1, len(queue)):
            j = queue[k]
            nj = nodes[j]
            if nj <= free:
                if now + requested_time[j] <= shadow:
                    start_job(j, now, 1)
                    continue
                if nj <= extra:
                    extra -= nj
                    start_job(j, now, 1)
                    continue
            remaining.append(j)
        queue = remaining

    while next_submit < n or completions:
        # Smallest pending event time.
        now = completions[0][0] if completions else submit[next_submit]
        if next_submit < n and submit[next_submit] < now:
            now = submit[next_submit]
        # Completions at `now` first ...
        while completions and completions[0][0] == now:
            _, j = heapq.heappop(completions)
            free += nodes[j]
            del running[bisect.bisect_left(running, (start[j] + requested_time[j], j))]
        # ... then submissions at `now` ...
        while next_submit < n and submit[next_submit] == now:
            queue.append(next_submit)
            next_submit += 1
        # ... then one scheduler invocation.
        schedule(now)

    if queue:  # cannot happen when every job has 1 <= nodes <= N
        raise RuntimeError(f"{len(queue)} jobs never started")
    return [float(s) for s in start], kind


# --------------------------------------------------------------------------- SWF


def _leading_int(text: str) -> int | None:
    digits = ""
    for ch in text.strip():
        if ch.isdigit() or (ch == "-" and not digits):
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return None


def load_swf(path: str) -> tuple[list[float], list[float], list[float], list[int], int, int]:
    """Load an SWF trace (.swf or .swf.gz).

    Returns ``(submit, run_time, requested_time, nodes, N, skipped)`` in replay
    order with time shifted so the first submission is 0.
    """
    opener = gzip.open if path.endswith(".gz") else open
    header: dict[str, str] = {}
    jobs: list[tuple[float, float, float, float, int]] = []  # (submit, id, run, req, size)
    skipped = 0
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            s = line.strip()
            if not s:
                continue
            if s.startswith(";"):
                key, sep, value = s[1:].partition(":")
                if sep:
                    header.setdefault(key.strip(), value.strip())
                continue
            f = s.split()
            if len(f) < 9:
                skipped += 1
                continue
            run = float(f[3])
            alloc = int(float(f[4]))
            req_procs = int(float(f[7]))
            req_time = float(f[8])
            size = req_procs if req_procs > 0 else alloc
            if run < 0 or size <= 0:  # run time -1 = unknown
                skipped += 1
                continue
            if req_time <= 0:
                req_time = run
            jobs.append((float(f[1]), float(f[0]), run, req_time, size))

    machine = None
    for key in ("MaxProcs", "MaxNodes"):
        if key in header:
            v = _leading_int(header[key])
            if v is not None and v > 0:
                machine = v
                break
    if machine is None:
        machine = max((j[4] for j in jobs), default=1)

    kept = [j for j in jobs if j[4] <= machine]
    skipped += len(jobs) - len(kept)
    kept.sort(key=lambda j: (j[0], j[1]))  # stable sort by (submit, id)
    t0 = kept[0][0] if kept else 0.0
    return (
        [j[0] - t0 for j in kept],
        [j[2] for j in kept],
        [j[3] for j in kept],
        [j[4] for j in kept],
        machine,
        skipped,
    )


# --------------------------------------------------------------------- self-check


def _selfcheck() -> None:
    """Hand-computed schedules; raises AssertionError on mismatch."""
    cases = [
        # 1. Backfill through `extra` (4 nodes). A(3n, req 10) starts at 0, free 1.
        #    t=1: B(2n, req 5) is top; walk A(est 10): 1+3 = 4 >= 2 -> shadow 10;
        #    extra = 1 + 3 - 2 = 2. C(1n, req 100): 1+100 > 10 but 1 <= extra ->
        #    backfill at 1 (extra 1, free 0). t=10: A ends, B primary at 10.
        (
            "extra",
            ([0, 1, 1], [10, 5, 100], [10, 5, 100], [3, 2, 1], 4),
            ([0.0, 10.0, 1.0], [0, 0, 1]),
        ),
        # 2. Shadow window vs. no extra (4 nodes). A(2n, req 10) starts at 0, free 2.
        #    t=1: B(4n, req 5) top; walk A: 2+2 = 4 -> shadow 10; extra = 2+2-4 = 0.
        #    C(1n, req 20): 1+20 > 10 and 1 > extra -> waits.
        #    D(1n, req 5): 1+5 <= 10 -> backfill at 1 (extra unchanged, free 1).
        #    t=6: D ends; B top, shadow 10, extra 0; C still waits.
        #    t=10: A ends, free 4: B primary (ends 15, free 0); C top, waits.
        #    t=15: C primary.
        (
            "shadow-window",
            ([0, 1, 1, 1], [10, 5, 20, 5], [10, 5, 20, 5], [2, 4, 1, 1], 4),
            ([0.0, 10.0, 15.0, 1.0], [0, 0, 0, 1]),
        ),
        # 3. `extra` is consumed; a job must also fit in the free nodes (8 nodes).
        #    A(4n, req 10), B(2n, req 50) start at 0, free 2.
        #    t=1: T(4n, req 5) top; walk A(10): 2+4 = 6 >= 4 -> shadow 10;
        #    extra = 2 + 4 - 4 = 2 (B's est end 50 > 10 is not counted).
        #    L1(1n, req 100): 101 > 10, 1 <= extra -> backfill, extra 1, free 1.
        #    L2(2n, req 100): does not fit in free 1 -> waits.
        #    L3(1n, req 100): 1 <= extra 1 -> backfill, extra 0, free 0.
        #    t=10: A ends, free 4: T primary (ends 15), free 0; L2 top, waits.
        #    t=15: T ends, free 4: L2 primary at 15.
        (
            "extra-consumed",
            (
                [0, 0, 1, 1, 1, 1],
                [10, 50, 5, 100, 100, 100],
                [10, 50, 5, 100, 100, 100],
                [4, 2, 4, 1, 2, 1],
                8,
            ),
            ([0.0, 0.0, 10.0, 1.0, 15.0, 1.0], [0, 0, 0, 1, 0, 1]),
        ),
        # 4. Ties of estimated ends, overrun clamping, zero run time (4 nodes).
        #    Jobs: A(1n, req 5, run 8 = overrun), B(1n, 5/5), C(1n, 5/5), D(3n, 10/10),
        #    E(1n, 100/100) all at 0; Z(1n, req 0, run 0) at 5; Y(1n, req 0, run 2) at 6.
        #    t=0: A, B, C primary, free 1. D top; walk est ends (5,A),(5,B),(5,C):
        #    1+1+1 = 3 at B -> shadow 5; extra = 1 + 3 (A, B and C all <= 5) - 3 = 1.
        #    E: 100 > 5 but 1 <= extra -> backfill at 0, extra 0, free 0.
        #    t=5: B, C end, free 2; Z submitted. D top; A est max(5, 5) = 5: 2+1 -> shadow 5,
        #    extra 0. Z: 5+0 <= 5 -> backfill at 5, ends at 5 -> processed at t=5,
        #    second invocation at t=5: D still waits.
        #    t=6: Y submitted. D top; A's est end clamped to max(5, 6) = 6 -> shadow 6,
        #    extra 0. Y: 6+0 <= 6 -> backfill at 6 (ends 8). (Unclamped shadow 5 would
        #    make Y wait.) t=8: A (overrun) and Y end, free 3: D primary at 8.
        (
            "ties-overrun-zero",
            (
                [0, 0, 0, 0, 0, 5, 6],
                [8, 5, 5, 10, 100, 0, 2],
                [5, 5, 5, 10, 100, 0, 0],
                [1, 1, 1, 3, 1, 1, 1],
                4,
            ),
            ([0.0, 0.0, 0.0, 8.0, 0.0, 5.0, 6.0], [0, 0, 0, 0, 1, 1, 1]),
        ),
        # 5. A zero-run-time job's completion triggers a second invocation at the same
        #    time (1 node). A(run 0) starts at 0; B(run 3) is top (shadow 0, extra 0).
        #    A's completion at t=0 is processed next, then B starts (primary) at 0.
        (
            "zero-run-reinvoke",
            ([0, 0], [0, 3], [0, 3], [1, 1], 1),
            ([0.0, 0.0], [0, 0]),
        ),
    ]
    for name, args, expected in cases:
        got = replay_fcfs_easy(*args)
        assert got == expected, f"{name}: expected {expected}, got {got}"
    print(f"selfcheck: {len(cases)} cases OK")


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--selfcheck" in argv or "--smoke" in argv:
        _selfcheck()
        return
    if not argv:
        print("usage: python_baseline.py TRACE.swf[.gz] | --selfcheck", file=sys.stderr)
        raise SystemExit(2)
    path = argv[0]
    t0 = time.perf_counter()
    submit, run, req, nodes, machine, skipped = load_swf(path)
    t1 = time.perf_counter()
    start, kind = replay_fcfs_easy(submit, run, req, nodes, machine)
    t2 = time.perf_counter()
    n = len(submit)
    mean_wait = sum(s - q for s, q in zip(start, submit, strict=True)) / n if n else 0.0
    print(f"trace: {path}")
    print(f"machine size: {machine}; jobs kept: {n}; skipped: {skipped}")
    print(f"backfilled: {sum(kind)}")
    print(f"mean wait: {mean_wait:.3f} s")
    print(f"load: {t1 - t0:.3f} s; replay: {t2 - t1:.3f} s; {n / (t2 - t1):,.0f} jobs/s")


if __name__ == "__main__":
    main()
