"""Honesty of the look-ahead on a real trace: no decision before a time T depends on anything
unobservable before T.

A run of MARS on a slice of ALCF Theta is repeated with the future changed in three ways that a
real scheduler could not see before T: the actual run times of the jobs still running at T,
every submission after T, and an unannounced outage after T. Every decision before T (the
decision log and the starts) must be the same. A control changes something observable before T
(the run time of a job that completed well before T) and must change a decision. Both forward
models are checked: the paper's (requested run times, no arrivals) and the stochastic one (run
times drawn from completed jobs, arrivals from the recent past), with the tree search and with
the rollout look-ahead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.experiment import WorkloadSpec
from hpcsched.workload import Downtime, DowntimeCalendar
from tests.conftest import require_traces

MODELS = {
    "paper": {"runtime_model": "requested", "arrivals": "none"},
    "stochastic": {"runtime_model": "history", "arrivals": "recent"},
    "rollout look-ahead": {"lookahead": "rollout", "runtime_model": "requested"},
    "rollout look-ahead, stochastic": {
        "lookahead": "rollout",
        "runtime_model": "history",
        "arrivals": "recent",
    },
    # `mars_quality.py --search-pays rollout`: only the running jobs' ends drawn
    "rollout look-ahead, running jobs drawn": {
        "lookahead": "rollout",
        "runtime_model": "running",
        "depth": 100,
        "gamma": 0.999,
    },
}
DECISION_COLUMNS = ["time", "queue_length", "outcomes", "iterations", "name", "started", "drain"]


@pytest.fixture(scope="module")
def theta(traces_dir):
    path = require_traces(traces_dir / "pwa" / "ALCF-Theta-2022.swf.gz")
    # a busy stretch: queues of tens of jobs, real choices
    return WorkloadSpec(path=str(path), start=12000, stop=12700).load()


def policy(model: str) -> hpcsched.PolicySpec:
    search = hpcsched.SearchSpec(iterations=20, trees=2, seed=3, **MODELS[model])
    return hpcsched.PolicySpec("mars-cw", search=search)


def before(result: hpcsched.Result, t: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The decisions taken before `t` and the starts before `t` (job id, start), attempts an
    outage killed later included."""
    log = result.decisions
    decisions = log.loc[log["time"] < t, DECISION_COLUMNS].reset_index(drop=True)
    jobs = result.jobs
    lost = result.lost
    starts = pd.concat(
        [
            jobs.loc[jobs["start"] < t, ["job_id", "start"]],
            pd.DataFrame(
                {
                    "job_id": jobs["job_id"].to_numpy()[lost["job_index"].to_numpy(np.int64)],
                    "start": lost["start"].to_numpy(),
                }
            ).loc[lambda f: f["start"] < t],
        ]
    )
    return decisions, starts.sort_values(["start", "job_id"]).reset_index(drop=True)


def with_jobs(workload: hpcsched.Workload, jobs: pd.DataFrame) -> hpcsched.Workload:
    return hpcsched.Workload(
        jobs=jobs.reset_index(drop=True),
        nodes=workload.nodes,
        source=workload.source,
        time_origin=workload.time_origin,
    )


@pytest.mark.parametrize("model", sorted(MODELS))
def test_no_decision_before_t_depends_on_what_is_unobservable_before_t(theta, model):
    spec = policy(model)
    reference = hpcsched.simulate(theta, spec)
    searched = reference.decisions[reference.decisions["outcomes"] >= 2]
    assert len(searched) >= 20, "the slice must offer real choices"
    t = float(searched["time"].iloc[len(searched) // 2])
    expected = before(reference, t)
    table = reference.jobs
    running = ((table["start"] < t) & (table["end"] > t)).to_numpy()
    assert running.sum() >= 3

    # 1. Actual run times of the jobs running at t: they end much later or much sooner, but
    # after t in every case.
    jobs = theta.jobs.copy()
    start, end = table["start"].to_numpy(), table["end"].to_numpy()
    stretched = (t - start) + 3.0 * (end - t)
    shrunk = (t - start) + 0.1 * (end - t)
    jobs["run_time"] = np.where(running & (np.arange(len(jobs)) % 2 == 0), stretched, shrunk)
    jobs.loc[~running, "run_time"] = theta.jobs.loc[~running, "run_time"]
    for changed in (with_jobs(theta, jobs),):
        got = before(hpcsched.simulate(changed, spec), t)
        pd.testing.assert_frame_equal(got[0], expected[0])
        pd.testing.assert_frame_equal(got[1], expected[1])

    # 2. Every submission after t: gone, or twice as large and half as long.
    future = (theta.jobs["submit"] > t).to_numpy()
    assert future.any()
    gone = with_jobs(theta, theta.jobs.loc[~future])
    other = theta.jobs.copy()
    other.loc[future, "nodes"] = np.minimum(other.loc[future, "nodes"] * 2, theta.nodes)
    other.loc[future, "run_time"] = other.loc[future, "run_time"] / 2
    for changed in (gone, with_jobs(theta, other)):
        got = before(hpcsched.simulate(changed, spec), t)
        pd.testing.assert_frame_equal(got[0], expected[0])
        pd.testing.assert_frame_equal(got[1], expected[1])

    # 3. An unannounced outage of half the machine an hour after t.
    outage = DowntimeCalendar(
        (
            Downtime(
                theta.time_origin + t + 3600,
                theta.time_origin + t + 7200,
                "unscheduled",
                nodes=theta.nodes // 2,
            ),
        )
    )
    got = before(hpcsched.simulate(theta, spec, downtime=outage), t)
    pd.testing.assert_frame_equal(got[0], expected[0])
    pd.testing.assert_frame_equal(got[1], expected[1])

    # Control: something observable before t, the run time of a long job that completed well
    # before it, does change a decision.
    done = ((table["end"] < t - 3600) & (table["run_time"] > 3600)).to_numpy()
    assert done.any()
    observable = theta.jobs.copy()
    observable.loc[done, "run_time"] = observable.loc[done, "run_time"] / 4
    got = before(hpcsched.simulate(with_jobs(theta, observable), spec), t)
    assert not got[0].equals(expected[0]) or not got[1].equals(expected[1])


def test_mars_cu_sees_a_maintenance_only_once_announced(theta):
    """MARS-CU weighs the utilization up to the next *announced* maintenance: a maintenance
    announced after T changes no decision before T; announced before T, it does (control)."""
    search = hpcsched.SearchSpec(iterations=20, trees=2, seed=3, lookahead="rollout")
    spec = hpcsched.PolicySpec("mars-cu", search=search)
    reference = hpcsched.simulate(theta, spec)
    searched = reference.decisions[reference.decisions["outcomes"] >= 2]
    t = float(searched["time"].iloc[len(searched) // 2])
    expected = before(reference, t)
    lead = 48 * 3600.0

    def maintenance_at(start: float) -> DowntimeCalendar:
        origin = theta.time_origin
        return DowntimeCalendar((Downtime(origin + start, origin + start + 8 * 3600, "scheduled"),))

    # announced an hour after t (it starts 49 h after t)
    later = hpcsched.simulate(
        theta, spec, downtime=maintenance_at(t + lead + 3600), announce_lead=lead
    )
    got = before(later, t)
    pd.testing.assert_frame_equal(got[0], expected[0])
    pd.testing.assert_frame_equal(got[1], expected[1])
    # control: announced a day before t (it starts a day after t)
    earlier = hpcsched.simulate(
        theta, spec, downtime=maintenance_at(t + lead / 2), announce_lead=lead
    )
    got = before(earlier, t)
    assert not got[0].equals(expected[0]) or not got[1].equals(expected[1])
