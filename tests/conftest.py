"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The real traces in ``../shared/traces`` next to the repository; skip when absent."""
    path = (REPO_ROOT / ".." / "shared" / "traces").resolve()
    if not path.is_dir():
        pytest.skip(f"real traces not found at {path}: tests need ../shared/traces")
    return path


def workload_from(specs, nodes: int):
    """A Workload from (submit, run time, requested time, nodes) tuples; ids 1, 2, ..."""
    import numpy as np
    import pandas as pd

    from hpcsched.workload.model import Workload

    submit, run, req, size = (np.array(col, dtype=float) for col in zip(*specs, strict=True))
    jobs = pd.DataFrame(
        {
            "job_id": np.arange(1, len(specs) + 1, dtype=np.int64),
            "submit": submit,
            "run_time": run,
            "requested_time": req,
            "nodes": size.astype(np.int64),
            "user": np.zeros(len(specs), dtype=np.int64),
        }
    )
    return Workload(jobs=jobs, nodes=nodes, source="<test>")


PWA_TRACES = [
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "DAS2-fs1-2003-1.swf.gz",
    "ALCF-Theta-2022.swf.gz",
    "lublin_256.swf.gz",
]


def small_platform(nodes: int, switch_on: float = 50.0, switch_off: float = 40.0):
    """A platform of `nodes` nodes with round powers (W): computing 100, idle 10, sleeping 1,
    switching on 20, switching off 30; latencies `switch_on` and `switch_off` (std 10 %)."""
    from hpcsched.platform import parse_platform

    return parse_platform(
        f"""
nodes = {nodes}
[power]
computing = 100.0
idle = 10.0
sleeping = 1.0
switching_on = 20.0
switching_off = 30.0
[transitions]
switch_on = {switch_on}
switch_on_std = {switch_on / 10}
switch_off = {switch_off}
switch_off_std = {switch_off / 10}
""",
        f"small-{nodes}.toml",
    )
