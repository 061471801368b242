"""Utilization over uptime against a count kept apart from the code under test: at every
instant between consecutive event times, the nodes busy and the nodes down counted job by job
and window by window (quadratic, so only on small random cases)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcsched.metrics import utilization
from hpcsched.workload.calendar import Downtime, DowntimeCalendar


def counted(jobs, machine, windows, a, b):
    """(busy node-seconds, available node-seconds) over [a, b), instant by instant."""
    points = {a, b}
    points |= {t for s, e, _ in jobs for t in (s, e) if a < t < b}
    points |= {t for w in windows for t in (w.start, w.end) if a < t < b}
    busy = available = 0.0
    for lo, hi in zip(sorted(points), sorted(points)[1:], strict=False):
        mid = (lo + hi) / 2
        busy += (hi - lo) * sum(n for s, e, n in jobs if s <= mid < e)
        down = sum(
            machine if w.nodes is None else min(w.nodes, machine)
            for w in windows
            if w.start <= mid < w.end
        )
        available += (hi - lo) * (machine - min(down, machine))
    return busy, available


@pytest.mark.parametrize("seed", range(8))
def test_utilization_of_every_period_matches_the_instant_by_instant_count(seed):
    rng = np.random.default_rng(seed)
    machine = 16
    windows = []
    for _ in range(rng.integers(0, 25)):
        start = float(rng.integers(0, 5000))
        end = start + float(rng.integers(1, 3000))
        nodes = None if rng.random() < 0.2 else int(rng.integers(1, 20))  # some past the machine
        kind = "scheduled" if rng.random() < 0.5 else "unscheduled"
        windows.append(Downtime(start, end, kind, nodes))
    calendar = DowntimeCalendar(tuple(sorted(windows, key=lambda w: (w.start, w.end))))
    n = 40
    start = rng.uniform(0, 6000, n)
    end = start + rng.uniform(0, 800, n)
    start[rng.random(n) < 0.1] = np.nan  # never started
    end[np.isnan(start)] = np.nan
    nodes = rng.integers(1, 5, n)
    jobs = pd.DataFrame({"start": start, "end": end, "nodes": nodes})
    lost = pd.DataFrame({"start": [100.0], "end": [300.0], "nodes": [2]})
    horizon = (0.0, float(np.nanmax(end)))
    result = utilization(jobs, lost, machine, calendar, horizon)
    intervals = [
        (s, e, k) for s, e, k in zip(start, end, nodes, strict=True) if not np.isnan(s)
    ] + [(100.0, 300.0, 2)]

    def expected(a, b):
        busy, available = counted(intervals, machine, calendar.windows, a, b)
        return busy / available if available > 0 else None

    def check(actual, a, b):
        want = expected(a, b)
        if want is None:
            assert actual is None
        else:
            assert actual == pytest.approx(want, rel=1e-12, abs=1e-12)

    check(result["overall_uptime"], *horizon)
    for period in result["uptime_periods"]:
        check(period["utilization"], period["from"], period["to"])
    for before in result["before_maintenance"]:
        check(before["utilization"], before["from"], before["maintenance_start"])
