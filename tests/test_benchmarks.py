"""Every benchmark script runs (``--smoke``: small inputs, one repeat), so that none rots
between the times someone measures with it. Their figures live in BENCHMARKS.md; nothing here
is timed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_traces

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces"
#: Modules of the folder that are not benchmarks: what several of them import.
HELPERS = {"__init__.py", "slurm_log.py"}
SCRIPTS = sorted(p.name for p in (REPO / "benchmarks").glob("*.py") if p.name not in HELPERS)
#: Scripts that read ../shared/traces (skipped without it, failed in CI).
NEED_TRACES = {
    "agreement.py",
    "agents.py",
    "capture.py",
    "experiments.py",
    "mars_icon.py",
    "mars_quality.py",
    "mars_speed.py",
    "partitions.py",
    "replay.py",
    "shared_nodes.py",
    "slurm_speed.py",
    "snf_icon.py",
}


def test_every_benchmark_is_listed():
    assert {
        *NEED_TRACES,
        "advise.py",
        "hostile.py",
        "memory.py",
        "python_baseline.py",
        "site_files.py",
        "slurm_replay.py",
        "slurm_spread.py",
        "slurm_tres_replay.py",
        "startup.py",
    } == set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_runs_with_smoke(script, tmp_path):
    if script in NEED_TRACES:
        require_traces(TRACES)  # skipped without them, failed in CI
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), "--smoke"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO / "benchmarks")},
        timeout=900,
    )
    assert done.returncode == 0, f"{script}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} printed nothing"
