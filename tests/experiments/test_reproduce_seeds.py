"""The SNF-ICON reproduction over transition seeds: means, spreads and verdicts."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hpcsched.reproduce import seed_summary, snf_icon_runs, snf_icon_verdicts


def _table(rows):
    return pd.DataFrame(
        rows,
        columns=["workload", "platform", "policy", "policy_name", "seed", "wait_mean"],
    ).assign(wait_max=1.0, energy_wasted_mwh=2.0, energy_total_mwh=50.0, icon_share=float("nan"))


def test_means_spreads_and_verdicts_over_seeds():
    rows = []
    # case A: SNF-ICON 100, 110, 120 (mean 110, sd 10); FCFS/B+IPM 130, 130, 160 (140, sd 17.32)
    for seed, (icon, fcfs) in enumerate([(100, 130), (110, 130), (120, 160)], start=1):
        rows.append(("A", "AOBA-64", "SNF-ICON", "snf-icon", seed, icon))
        rows.append(("A", "AOBA-64", "FCFS/B+IPM", "fcfs-b+ipm", seed, fcfs))
    # case B: SNF-ICON waits longer on average
    for seed, (icon, fcfs) in enumerate([(50, 40), (50, 50)], start=1):
        rows.append(("B", "Taurus-64", "SNF-ICON", "snf-icon", seed, icon))
        rows.append(("B", "Taurus-64", "FCFS/B+IPM", "fcfs-b+ipm", seed, fcfs))
    summary = seed_summary(_table(rows)).set_index(["workload", "policy_name"])
    assert summary.loc[("A", "snf-icon"), "wait_mean"] == pytest.approx(110.0)
    assert summary.loc[("A", "snf-icon"), "wait_mean_std"] == pytest.approx(10.0)
    assert summary.loc[("A", "fcfs-b+ipm"), "wait_mean_std"] == pytest.approx(math.sqrt(300))
    assert summary.loc[("B", "fcfs-b+ipm"), "seeds"] == 2
    verdicts = snf_icon_verdicts(seed_summary(_table(rows)))
    assert list(verdicts.values()) == [True, False]
    first, second = verdicts
    assert first.startswith("PASS") and "110 ± 10 s vs 140 ± 17 s" in first
    assert second.startswith("FAIL") and "on B (Taurus-64)" in second


def test_seeded_runs_draw_transitions(traces_dir):
    runs = snf_icon_runs(traces_dir, seeds=3)
    seeds = {r.policy.power.sample_transitions for r in runs}
    assert seeds == {1, 2, 3}
    assert len(runs) == 3 * len(snf_icon_runs(traces_dir))
    assert {r.parameters["seed"] for r in runs} == {1, 2, 3}
