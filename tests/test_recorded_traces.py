"""The recorded schedule of every bundled PWA trace that records waits (issue 28): every job
accounted for, the starts those the file records, each conflict kind reported; the synthetic
trace, which records none, refused."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import hpcsched
from hpcsched.exceptions import InputError
from hpcsched.workload.record import CONFLICT_KINDS
from tests.conftest import PWA_TRACES


def file_waits(path) -> dict[int, float]:
    """Line number -> SWF field 3, read here independently of the reader."""
    waits = {}
    with gzip.open(path, "rt") as f:
        for number, line in enumerate(f, 1):
            if line.strip() and not line.lstrip().startswith(";"):
                waits[number] = float(line.split()[2])
    return waits


@pytest.mark.slow
@pytest.mark.parametrize("trace", PWA_TRACES)
def test_the_recorded_schedule_of_every_real_trace(traces_dir, trace):
    path = traces_dir / "pwa" / trace
    workload = hpcsched.load_workload(path)
    if trace == "lublin_256.swf.gz":  # synthetic: every wait is -1
        with pytest.raises(InputError, match="records no wait"):
            hpcsched.simulate(workload, "recorded")
        return
    result = hpcsched.simulate(workload, "recorded")
    info, jobs = result.info, result.jobs
    record = info["record"]
    unknown = record["conflicts"]["unknown_wait"]["jobs"]
    # every job of the workload accounted for: replayed, or kept unstarted for want of a wait
    assert record["replayed"] + unknown == len(workload) == info["workload"]["jobs"]
    assert info["jobs"]["completed"] == record["replayed"]
    assert info["jobs"]["never_started"] == unknown
    assert set(record["conflicts"]) == set(CONFLICT_KINDS)
    for kind in record["conflicts"].values():
        assert kind["jobs"] >= len(kind["examples"]) and kind["treated"]
    # the starts are the file's submit + wait, line by line (the clock starts at the first)
    waits = file_waits(path)
    recorded = np.array([waits[line] for line in workload.jobs["line"]])
    expected = np.where(recorded >= 0, workload.jobs["submit"].to_numpy() + recorded, np.nan)
    assert np.array_equal(jobs["start"].to_numpy(), expected, equal_nan=True)
    assert (jobs["wait"].dropna() >= 0).all()
    assert info["wait"]["mean"] == pytest.approx(recorded[recorded >= 0].mean())
    assert info["utilization"]["overall_uptime"] > 0
