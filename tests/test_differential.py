"""Differential test: the engine against an independent pure-Python FCFS+EASY replay.

``benchmarks/python_baseline.py`` was written separately from the engine, straight from the
EASY semantics of DESIGN §5; both must give the same schedule to the job.
"""

from __future__ import annotations

import numpy as np
from benchmarks.python_baseline import load_swf, replay_fcfs_easy
from hypothesis import given, settings
from hypothesis import strategies as st

import hpcsched
from tests.conftest import workload_from

job = st.tuples(
    st.integers(0, 300).map(float),
    st.integers(0, 90).map(float),
    st.integers(0, 90).map(float),
    st.integers(1, 6),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(job, min_size=1, max_size=60))
def test_same_schedule_as_the_python_baseline_on_random_workloads(specs):
    specs = sorted(specs, key=lambda s: s[0])
    result = hpcsched.simulate(workload_from(specs, 6), "fcfs")
    submit, run, req, nodes = (list(col) for col in zip(*specs, strict=True))
    start, kind = replay_fcfs_easy(submit, run, req, nodes, 6)
    np.testing.assert_array_equal(result.jobs["start"].to_numpy(), start)
    expected_kinds = ["backfill" if k else "primary" for k in kind]
    assert result.jobs["start_kind"].tolist() == expected_kinds


def test_same_schedule_as_the_python_baseline_on_hpc2n(traces_dir):
    trace = traces_dir / "pwa" / "HPC2N-2002-2.2-cln.swf.gz"
    submit, run, req, nodes, machine, _ = load_swf(str(trace))
    start, kind = replay_fcfs_easy(submit, run, req, nodes, machine)
    result = hpcsched.simulate(trace, "fcfs")
    assert result.workload.nodes == machine
    np.testing.assert_array_equal(result.jobs["start"].to_numpy(), start)
    assert (result.jobs["start_kind"] == "backfill").sum() == sum(kind)
