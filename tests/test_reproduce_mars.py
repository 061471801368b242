"""``reproduce mars``'s Slurm row: run on the slice's own site, and held to its verdicts (the
full reproduction takes about 70 min: BENCHMARKS.md; these check its parts on small inputs)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hpcsched.policies import PolicySpec
from hpcsched.reproduce import (
    SLURM_ROW,
    VERDICT_BASELINES,
    MarsSlice,
    mars_policies,
    mars_verdicts,
    slice_runs,
)


def test_the_slurm_row_runs_on_the_slices_machine_with_the_site_settings(tmp_path: Path) -> None:
    trace = tmp_path / "t.swf"
    rows = [
        f"{i} {10 * i} 0 100 {1 + i % 4} -1 -1 {1 + i % 4} 200 -1 1 {i % 2} 1 -1 1 -1 -1 -1"
        for i in range(1, 13)
    ]
    trace.write_text("; MaxProcs: 6\n" + "\n".join(rows) + "\n")
    slice_ = MarsSlice("tiny", trace, 2, 10)
    policies = [(PolicySpec("fcfs"), {}), (PolicySpec("slurm"), {})]
    fcfs, slurm = slice_runs(slice_, tmp_path / "calendars", policies)
    assert fcfs.platform is None
    assert slurm.platform is not None
    conf = Path(slurm.platform).read_text()
    assert "NodeName=n[1-6] CPUs=1" in conf
    assert "PriorityType=priority/multifactor" in conf
    result = slurm.execute()
    assert len(result.jobs) == 8
    assert result.jobs["start"].notna().all()
    # one Slurm row among the policies of the evaluation, whatever the seeds
    assert sum(p.name == "slurm" for p, _ in mars_policies(seeds=2)) == 1


def _summary(slurm_wait: float, slurm_before: float) -> pd.DataFrame:
    """One slice: every baseline and Random wait 2 h (utilization before maintenance 0.5), F1
    waits at most 10 h; MARS-CW waits 1 h, MARS-CU keeps 0.6 busy and waits 1.5 h."""

    def row(policy: str, wait: float, before: float) -> dict[str, object]:
        return {
            "workload": "s",
            "policy": policy,
            "wait_mean": wait,
            "bsld_mean": wait,
            "wait_max": 10.0,
            "utilization_before_maintenance": before,
        }

    rows = [row(b, 2.0, 0.5) for b in (*VERDICT_BASELINES, "Random")]
    rows += [row("MARS-CW", 1.0, 0.5), row("MARS-CU", 1.5, 0.6)]
    rows.append(row(SLURM_ROW, slurm_wait, slurm_before))
    return pd.DataFrame(rows)


def test_mars_is_held_to_slurms_figures_too() -> None:
    verdicts = mars_verdicts(_summary(slurm_wait=3.0, slurm_before=0.4)).set_index("criterion")
    assert verdicts.loc["MARS-CW mean wait below Slurm's", "overall"] == "PASS"
    assert verdicts.loc["MARS-CU utilization before maintenance above Slurm's", "overall"] == "PASS"
    # a Slurm that waits less and packs more: both fail, the other criteria stand
    verdicts = mars_verdicts(_summary(slurm_wait=0.5, slurm_before=0.7)).set_index("criterion")
    assert verdicts.loc["MARS-CW mean wait below Slurm's", "overall"] == "FAIL"
    assert verdicts.loc["MARS-CU utilization before maintenance above Slurm's", "overall"] == "FAIL"
    assert verdicts.loc["MARS-CW mean wait below every baseline and Random", "overall"] == "PASS"
