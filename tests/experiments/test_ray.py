"""A sweep on a local Ray instance gives the same results table as the local process pool."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcsched.sweep import comparable, read_sweep, run_sweep

pytest.importorskip(
    "ray", reason="ray is not installed (pip install 'hpcsched[ray]'): the Ray backend is untested"
)

SWEEP = """
[sweep]
platforms = ["Taurus-64"]

[[workloads]]
generate = "markovian"
jobs = 200
seed = [43, 7]

[[policies]]
name = "snf-icon"
alpha = [500, 5000]

[[policies]]
name = "snf+ipm"

[[policies]]
name = "mars-cw"
iterations = 10
trees = 2
"""


@pytest.mark.slow  # starts a Ray instance
def test_ray_and_the_process_pool_give_the_same_results(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    pool = read_sweep(path)
    pool.out = str(tmp_path / "pool")
    on_ray = read_sweep(path)
    on_ray.out = str(tmp_path / "ray")

    by_pool = run_sweep(pool, processes=2)
    by_ray = run_sweep(on_ray, ray="local")

    assert not by_pool.failures and not by_ray.failures
    assert len(by_ray.table) == len(pool.runs) == 8
    pd.testing.assert_frame_equal(comparable(by_ray.table), comparable(by_pool.table))
    # and the run directories hold the same jobs
    for key in by_pool.table["key"][:3]:
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "ray" / "runs" / key / "jobs.parquet"),
            pd.read_parquet(tmp_path / "pool" / "runs" / key / "jobs.parquet"),
        )
