"""Smallest need first (SNF-ICON's queue order), written against the Python policy protocol:
jobs sorted by (nodes, requested time, trace id), started while they fit, stopping at the
first that does not; no backfilling. Equals the built-in ``snf`` on workloads without
maintenance windows.

    hpcsched simulate trace.swf --policy python:examples/policies/snf.py:SmallestNeedFirst
"""

from __future__ import annotations

from hpcsched.protocol import Decision, View


class SmallestNeedFirst:
    name = "snf (python)"

    def decide(self, view: View) -> Decision:
        candidates = sorted(
            (int(nodes), float(requested), int(job_id), position)
            for position, (nodes, requested, job_id) in enumerate(
                zip(view.queue_nodes, view.queue_requested, view.queue_id, strict=True)
            )
            if nodes <= view.free
        )
        free, start = view.free, []
        for nodes, _, _, position in candidates:
            if nodes > free:
                break
            start.append(int(view.queue[position]))
            free -= nodes
        return Decision(start=start)
