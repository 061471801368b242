"""Logs written while the run goes (issue 14, point 9): a run with a directory takes the
engine's logs out in batches and appends them to Parquet as row groups. The files must hold
exactly what a run kept in memory holds, the run's results must not change (MARS seeds its
scenarios by decision number, the timeline merges changes at one instant), and a batch boundary
must never split or duplicate a row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import hpcsched
import hpcsched.run.replay
from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec


def _same(stored: pd.DataFrame, kept: pd.DataFrame) -> None:
    """Equal row for row; categories compared by value (each batch has its own dictionary)."""
    assert list(stored.columns) == list(kept.columns)
    assert len(stored) == len(kept)
    for name in kept.columns:
        a, b = stored[name], kept[name]
        if isinstance(b.dtype, pd.CategoricalDtype):
            assert a.astype(str).tolist() == b.astype(str).tolist(), name
        elif name == "seconds":  # wall-clock time of each call: measured, not simulated
            continue
        elif name.startswith("candidate_") and name != "candidate_offsets":
            # list columns (Arrow lists in memory, object arrays read back)
            assert [len(x) for x in a] == [len(x) for x in b], name
            flat = [np.asarray([v for x in column for v in x]) for column in (a, b)]
            np.testing.assert_array_equal(flat[0], flat[1], err_msg=name)  # NaN equals NaN
        else:
            pd.testing.assert_series_equal(a, b, check_names=False, obj=name)


def _row_groups(path) -> int:
    return pq.ParquetFile(path).num_row_groups


@pytest.mark.parametrize("decision_log", ["compact", "full"])
def test_power_logs_streamed_in_batches_equal_the_logs_kept_in_memory(
    tmp_path, markovian_trace, monkeypatch, decision_log
):
    trace = markovian_trace
    options = {"platform": "AOBA-64", "decision_log": decision_log}
    kept = hpcsched.simulate(trace, "snf-icon", **options)
    monkeypatch.setattr(hpcsched.run.replay, "BATCH_ROWS", 500)  # many batches
    streamed = hpcsched.simulate(trace, "snf-icon", out=tmp_path / "run", **options)
    run = tmp_path / "run"
    assert _row_groups(run / "decisions.parquet") >= 3  # slices start at 256 event times
    assert _row_groups(run / "timeline.parquet") >= 3
    pd.testing.assert_frame_equal(streamed.jobs, kept.jobs)
    _same(pd.read_parquet(run / "decisions.parquet"), kept.decisions)
    _same(pd.read_parquet(run / "timeline.parquet"), kept.timeline)
    # the result reads its logs back from the run directory
    _same(streamed.decisions, kept.decisions)
    _same(streamed.timeline, kept.timeline)
    assert streamed.info["energy"] == kept.info["energy"]
    assert not (run / "power_decisions.parquet").exists()


def test_mars_under_icon_streams_both_logs_and_keeps_its_results(tmp_path, traces_dir, monkeypatch):
    """MARS draws each decision's scenarios from the decision's number: taking its log out
    mid-run must not renumber decisions (sampled run times make the seeds matter)."""
    trace = traces_dir / "snf-icon-paper" / "DAS2-fs3-0-3000.json.gz"
    search = SearchSpec(iterations=8, trees=2, seed=3, runtime_model="history")
    spec = PolicySpec("mars-cw", search=search, power=PowerSpec(manager="icon"))
    options = {"platform": "AOBA-64", "decision_log": "full"}
    kept = hpcsched.simulate(trace, spec, **options)
    monkeypatch.setattr(hpcsched.run.replay, "BATCH_ROWS", 300)
    streamed = hpcsched.simulate(trace, spec, out=tmp_path / "run", **options)
    run = tmp_path / "run"
    assert _row_groups(run / "decisions.parquet") >= 2
    assert _row_groups(run / "power_decisions.parquet") >= 2
    pd.testing.assert_frame_equal(streamed.jobs, kept.jobs)
    _same(streamed.decisions, kept.decisions)
    _same(streamed.power_decisions, kept.power_decisions)
    _same(streamed.timeline, kept.timeline)
    measured = "seconds_per_search"  # wall clock
    assert {k: v for k, v in streamed.info["search"].items() if k != measured} == {
        k: v for k, v in kept.info["search"].items() if k != measured
    }


def test_a_streamed_result_writes_a_complete_copy_elsewhere(tmp_path, traces_dir, monkeypatch):
    trace = traces_dir / "snf-icon-paper" / "DAS2-fs2-0-3000.json.gz"
    monkeypatch.setattr(hpcsched.run.replay, "BATCH_ROWS", 1000)
    streamed = hpcsched.simulate(trace, "snf-icon", platform="AOBA-64", out=tmp_path / "a")
    streamed.write(tmp_path / "b")
    for name in ("jobs.parquet", "decisions.parquet", "timeline.parquet"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "a" / name), pd.read_parquet(tmp_path / "b" / name)
        )


def test_a_failed_run_leaves_no_staging_folder(tmp_path, traces_dir, monkeypatch):
    trace = traces_dir / "snf-icon-paper" / "DAS2-fs2-0-3000.json.gz"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(hpcsched.run.replay, "build_result", interrupted)
    with pytest.raises(KeyboardInterrupt):
        hpcsched.simulate(trace, "snf-icon", platform="AOBA-64", out=tmp_path / "run")
    assert list(tmp_path.iterdir()) == []
