"""Invariants on every real trace of ../shared/traces/pwa (DESIGN §10)."""

from __future__ import annotations

import pytest

import hpcsched
from tests.conftest import PWA_TRACES
from tests.invariants import check_capacity, check_jobs, check_reservations_honoured


@pytest.mark.parametrize("trace", PWA_TRACES)
def test_fcfs_easy_keeps_every_invariant_and_honours_reservations(traces_dir, trace):
    # With overrun=kill no job outlives its estimate, so every EASY reservation must hold.
    result = hpcsched.simulate(traces_dir / "pwa" / trace, "fcfs", overrun="kill")
    check_jobs(result, overrun="kill")
    check_capacity(result)
    assert len(result.reservations) > 0
    check_reservations_honoured(result)
    assert result.info["jobs"]["start_kinds"]["backfill"] > 0


@pytest.mark.parametrize("trace", PWA_TRACES)
def test_wfp3_window_256_keeps_every_invariant(traces_dir, trace):
    result = hpcsched.simulate(traces_dir / "pwa" / trace, "wfp3", window=256)
    check_jobs(result)
    check_capacity(result)


@pytest.mark.parametrize("trace", ["SDSC-BLUE-2000-4.2-cln.swf.gz", "DAS2-fs1-2003-1.swf.gz"])
def test_snf_keeps_every_invariant(traces_dir, trace):
    result = hpcsched.simulate(traces_dir / "pwa" / trace, "snf", procs_per_node="auto")
    check_jobs(result)
    check_capacity(result)
    assert result.info["jobs"]["start_kinds"]["backfill"] == 0
