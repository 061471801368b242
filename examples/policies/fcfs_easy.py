"""FCFS with EASY backfilling, written against hpcsched's Python policy protocol.

It decides every start itself (``Decision(start=...)``), so it shows everything the view gives
a policy. On a workload without maintenance windows it produces exactly the schedule of the
built-in ``fcfs`` policy (the test suite checks it on a real trace):

    hpcsched simulate trace.swf --policy python:examples/policies/fcfs_easy.py:FcfsEasy
"""

from __future__ import annotations

from hpcsched.protocol import Decision, View


class FcfsEasy:
    name = "fcfs-easy (python)"

    def decide(self, view: View) -> Decision:
        free = view.free
        start: list[int] = []
        backfilled: list[int] = []
        started_ends: list[tuple[float, int]] = []
        queue = list(zip(view.queue, view.queue_nodes, view.queue_requested, strict=True))
        # FCFS: start jobs in order while they fit; the first that does not is the top job.
        top = None
        for k, (job, nodes, requested) in enumerate(queue):
            if nodes > free:
                top = k
                break
            start.append(int(job))
            started_ends.append((view.now + requested, int(nodes)))
            free -= nodes
        if top is None or free == 0:
            return Decision(start=start)
        # EASY: the top job's reservation (shadow time) from the estimated ends of the running
        # jobs and of those just started; nodes left over at the shadow time are "extra".
        releases = sorted(
            [*zip(view.running_estimated_end, view.running_nodes, strict=True), *started_ends],
            key=lambda r: r[0],
        )
        need, available, shadow = queue[top][1], free, None
        for end, nodes in releases:
            if shadow is not None and end > shadow:
                break
            available += nodes
            if shadow is None and available >= need:
                shadow = end
        if shadow is None:
            return Decision(start=start)
        extra = available - need
        # Backfill: a later job may start if it fits now and ends by the shadow time, or uses
        # only extra nodes.
        for job, nodes, requested in queue[top + 1 :]:
            if free == 0:
                break
            if nodes > free:
                continue
            if view.now + requested <= shadow:
                pass
            elif nodes <= extra:
                extra -= nodes
            else:
                continue
            backfilled.append(int(job))
            free -= nodes
        return Decision(start=start, backfilled=backfilled)
