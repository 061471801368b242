"""Invariants every run must satisfy, checked from its outputs only (DESIGN §10)."""

from __future__ import annotations

import numpy as np

from hpcsched.run import Result
from hpcsched.site.platform import Platform


def executed_intervals(result: Result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, nodes) of every attempt that held nodes: completed ones and killed ones."""
    jobs, lost = result.jobs, result.lost
    started = ~jobs["start"].isna()
    start = np.concatenate([jobs.loc[started, "start"].to_numpy(), lost["start"].to_numpy()])
    end = np.concatenate([jobs.loc[started, "end"].to_numpy(), lost["end"].to_numpy()])
    nodes = np.concatenate([jobs.loc[started, "nodes"].to_numpy(), lost["nodes"].to_numpy()])
    return start, end, nodes


def max_busy_nodes(result: Result) -> int:
    """The most nodes ever held at once (a job ending at t frees its nodes for jobs starting at
    t)."""
    start, end, nodes = executed_intervals(result)
    times = np.concatenate([end, start])
    delta = np.concatenate([-nodes, nodes])
    # At equal times, releases (kind 0) come before acquisitions (kind 1).
    kind = np.concatenate([np.zeros(len(end)), np.ones(len(start))])
    order = np.lexsort((kind, times))
    return int(np.cumsum(delta[order]).max(initial=0))


def check_jobs(result: Result, overrun: str = "continue") -> None:
    """Every job starts at or after its submission and ends after running exactly its run
    time (or its requested time when killed for overrunning); its killed attempts are its
    requeues. (The job table has one row per job of the workload by construction: that a job
    ran once and only once is checked against the engine's node states, in
    :func:`check_power_records`.)"""
    jobs = result.jobs
    assert not jobs["start"].isna().any(), "a job never started"
    assert (jobs["start"] >= jobs["submit"]).all(), "a job started before its submission"
    expected = jobs["run_time"].to_numpy()
    if overrun == "kill":
        expected = np.minimum(expected, jobs["requested_time"].to_numpy())
        assert (jobs["killed"] == (jobs["run_time"] > jobs["requested_time"])).all()
    # end = start + duration exactly; subtracting back may round by an ulp at fractional times
    np.testing.assert_allclose(
        (jobs["end"] - jobs["start"]).to_numpy(), expected, rtol=1e-12, atol=1e-9
    )
    assert (result.lost["end"] >= result.lost["start"]).all()
    assert len(result.lost) == int(jobs["requeues"].sum())


def check_downtime(result: Result) -> None:
    """Busy nodes never exceed what the calendar's windows leave up, at any instant. Both are
    step functions, so they are compared at every time either changes (attempt starts and
    ends, window starts and ends): a job running straight through an outage is caught, not
    only one starting inside it."""
    machine = result.workload.nodes
    start, end, nodes = executed_intervals(result)
    windows = list(result.calendar)
    bounds = [t for w in windows for t in (w.start, w.end)]
    for t in np.unique(np.concatenate([start, end, np.array(bounds, dtype=float)])):
        busy = int(nodes[(start <= t) & (end > t)].sum())
        down = sum(machine if w.nodes is None else w.nodes for w in windows if w.start <= t < w.end)
        assert busy <= max(machine - down, 0), f"t={t}: {busy} nodes busy, {down} down"


def check_power_records(result: Result) -> None:
    """The job table against the engine's power accounting, which keeps its own record of
    every node's state: at every instant of the timeline, the nodes computing are those of
    the attempts running then (completed and killed ones), and the computing node-seconds are
    theirs. A job that ran twice, never ran, or ran other than its row says disagrees."""
    start, end, nodes = executed_intervals(result)
    timeline = result.timeline
    times = timeline["time"].to_numpy()
    running = (start[None, :] <= times[:, None]) & (end[None, :] > times[:, None])
    expected = (running * nodes[None, :]).sum(axis=1)
    mismatch = np.flatnonzero(timeline["computing"].to_numpy() != expected)
    assert not len(mismatch), (
        f"t={times[mismatch[0]]}: {timeline['computing'].iloc[mismatch[0]]} nodes computing, "
        f"the job table runs {expected[mismatch[0]]}"
    )
    energy = result.info["energy"]
    horizon = energy["horizon_seconds"]
    held = (np.minimum(end, horizon) - np.minimum(start, horizon)) * nodes
    np.testing.assert_allclose(energy["node_seconds"]["computing"], held.sum(), rtol=1e-9)


def check_capacity(result: Result) -> None:
    machine = result.workload.nodes
    assert max_busy_nodes(result) <= machine, "more nodes busy than the machine has"


def check_reservations_honoured(result: Result) -> None:
    """With FCFS, estimates that never under-run (overrun=kill) and no downtime, EASY promises
    the top job a start no later than its shadow time: backfilled jobs must not delay it."""
    res = result.reservations
    if res.empty:
        return
    start = result.jobs["start"].to_numpy()[res["job_index"].to_numpy()]
    late = start > res["shadow_time"].to_numpy()
    assert not late.any(), f"{int(late.sum())} reservations broken, e.g.\n{res[late].head()}"


def check_reservation_capacity(result: Result) -> None:
    """At every reservation, the jobs running after the decision (by their estimated ends)
    leave the top job its nodes at the shadow time. Loops in Python: small runs only."""
    jobs = result.jobs
    start, end = jobs["start"].to_numpy(), jobs["end"].to_numpy()
    requested, nodes = jobs["requested_time"].to_numpy(), jobs["nodes"].to_numpy()
    machine = result.workload.nodes
    # Zero-length jobs give several invocations at one instant, and an invocation that leaves
    # no node free records no reservation: the last row of an instant may then come from an
    # earlier invocation, before later ones started more jobs. At such instants only the
    # jobs started before it are attributable to the reservation.
    res = result.reservations.drop_duplicates("time", keep="last")
    for t, top, shadow in zip(res["time"], res["job_index"], res["shadow_time"], strict=True):
        if start[top] == t:
            continue  # the top job itself started at this instant: nothing left to protect
        reinvoked = bool(((start == t) & (end == t)).any())
        running = ((start < t) if reinvoked else (start <= t)) & (end > t)
        estimated_end = np.maximum(start + requested, t)
        still_busy = nodes[running & (estimated_end > shadow)].sum()
        assert still_busy + nodes[top] <= machine, (
            f"at t={t}, the reservation of job index {top} at {shadow} is over-committed"
        )


def check_partitions(result: Result) -> None:
    """On a platform with partitions (read from the summary's platform, not from the engine):
    every job that ran names a partition, within its limits and up; a job refused at
    submission never ran; and at every instant the jobs of any set of partitions hold no more
    nodes than those partitions have between them (the count of nodes their union holds):
    with overlapping partitions, that is what a placement of every job on its own nodes
    needs (Hall's condition), so no node is used twice."""
    site = result.info["inputs"]["platform"]["site"]
    partitions = site["partitions"]
    jobs = result.jobs
    ran = ~jobs["start"].isna()
    assert jobs.loc[ran, "partition"].notna().all(), "a job ran in no partition"
    assert jobs.loc[~ran, "partition"].isna().all(), "a job that never ran names a partition"
    assert not (ran & jobs["rejected"].notna()).any(), "a refused job ran"
    nodes_of = {p["name"]: {n for a, b in p["ranges"] for n in range(a, b)} for p in partitions}
    start, end = jobs["start"].to_numpy(), jobs["end"].to_numpy()
    size, requested = jobs["nodes"].to_numpy(), jobs["requested_time"].to_numpy()
    names = jobs["partition"].astype(object).to_numpy()
    times = np.unique(start[ran])
    busy = {}
    for p in partitions:
        mine = ran & (names == p["name"])
        assert p["state"] == "up" or not mine.any(), f"a job ran in {p['name']} ({p['state']})"
        assert (size[mine] <= len(nodes_of[p["name"]])).all()
        assert (size[mine] >= p["min_nodes"]).all(), f"under {p['name']}'s MinNodes"
        if p["max_nodes"] is not None:
            assert (size[mine] <= p["max_nodes"]).all(), f"over {p['name']}'s MaxNodes"
        if p["max_time"] is not None:
            assert (requested[mine] <= p["max_time"]).all(), f"over {p['name']}'s MaxTime"
        # nodes held at each start instant: started by then, minus ended by then
        s_order, e_order = np.argsort(start[mine]), np.argsort(end[mine])
        s_sum = np.concatenate([[0], np.cumsum(size[mine][s_order])])
        e_sum = np.concatenate([[0], np.cumsum(size[mine][e_order])])
        started = s_sum[np.searchsorted(start[mine][s_order], times, side="right")]
        ended = e_sum[np.searchsorted(end[mine][e_order], times, side="right")]
        busy[p["name"]] = started - ended
    names_all = [p["name"] for p in partitions]
    for mask in range(1, 1 << len(names_all)):
        chosen = [n for k, n in enumerate(names_all) if mask >> k & 1]
        held = sum(busy[n] for n in chosen)
        room = len(set().union(*(nodes_of[n] for n in chosen)))
        worst = int(np.max(held, initial=0))
        assert worst <= room, f"partitions {chosen} hold {worst} nodes of {room}"


def index_ranges(text: str) -> list[int]:
    """Node indices from ``alloc_nodes`` (``0-3,7``)."""
    out: list[int] = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def check_shared(result: Result, platform: Platform, cpus_asked: np.ndarray) -> None:
    """Where jobs share nodes (a platform of one sharing mode but whole, its jobs' CPUs
    ``cpus_asked``): every started job holds exactly the CPUs it asked for on at least one and
    at most that many distinct nodes, all of one partition it may run in (or of the machine),
    never more nodes than it has CPUs; at no instant do the running jobs hold more CPUs than
    the machine, or than a partition, has (partitions apart)."""
    assert platform.shared
    jobs = result.jobs
    ran = jobs["start"].notna().to_numpy()
    cpus = jobs["alloc_cpus"].to_numpy()
    assert (cpus[~ran] == -1).all(), "a job that never started holds CPUs"
    np.testing.assert_array_equal(cpus[ran], cpus_asked[ran], "a job got other CPUs than asked")
    cores = np.concatenate([np.full(g.nodes, g.cores) for g in platform.groups])
    partition_of = np.full(len(cores), -1)
    if platform.site is not None:
        for k, p in enumerate(platform.site.partitions):
            for a, b in p.ranges:
                partition_of[a:b] = k
    names = [p.name for p in platform.site.partitions] if platform.site is not None else []
    for row in np.flatnonzero(ran):
        nodes = index_ranges(jobs["alloc_nodes"].iat[row])
        assert 1 <= len(nodes) <= cpus[row] and len(set(nodes)) == len(nodes)
        assert max(nodes) < len(cores)
        if names:
            held = {names[partition_of[n]] for n in nodes}
            assert held == {jobs["partition"].iat[row]}, f"job {row} ran outside its partition"
    start, end = jobs["start"].to_numpy()[ran], jobs["end"].to_numpy()[ran]
    groups = jobs["partition"].astype(object).to_numpy()[ran] if names else np.zeros(ran.sum())
    capacities = (
        {p.name: p.nodes * p.cores for p in platform.site.partitions}
        if platform.site is not None
        else {0: int(cores.sum())}
    )
    for name, capacity in capacities.items():
        mine = groups == name
        times = np.concatenate([end[mine], start[mine]])
        delta = np.concatenate([-cpus[ran][mine], cpus[ran][mine]])
        kind = np.concatenate([np.zeros(mine.sum()), np.ones(mine.sum())])
        order = np.lexsort((kind, times))
        busiest = int(np.cumsum(delta[order]).max(initial=0))
        assert busiest <= capacity, f"{name}: {busiest} CPUs held of {capacity}"


def check_shared_downtime(result: Result, windows: list[tuple[float, float, int, int]]) -> None:
    """On shared nodes, no attempt that ran to its end held a node while a window had it down:
    ``windows`` as (start, end, first node, last node); the attempts a window killed end at its
    start (``result.lost``)."""
    jobs = result.jobs
    ran = jobs["start"].notna().to_numpy()
    for row in np.flatnonzero(ran):
        nodes = index_ranges(jobs["alloc_nodes"].iat[row])
        start, end = jobs["start"].iat[row], jobs["end"].iat[row]
        for w_start, w_end, first, last in windows:
            if any(first <= n <= last for n in nodes):
                assert end <= w_start or start >= w_end, (
                    f"job {row} ran over [{start}, {end}) on a node down over [{w_start}, {w_end})"
                )
    for w_start, _, _, _ in windows:
        killed = result.lost[result.lost["end"] == w_start]
        assert (killed["start"] < w_start).all()
