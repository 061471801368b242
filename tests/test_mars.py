"""MARS (look-ahead by MCTS) end to end: the paper's two behaviours on crafted scenarios,
honest look-ahead, determinism, and the decision log."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.workload import Downtime, DowntimeCalendar
from tests.conftest import workload_from

HOUR = 3600.0


def mars(name: str, **search) -> hpcsched.PolicySpec:
    options = {"iterations": 200, "trees": 2, "seed": 5, **search}
    return hpcsched.PolicySpec(name, search=hpcsched.SearchSpec(**options))


def starvation_case():
    """4 nodes. Three 1-node jobs run for an hour; four 10-hour 1-node jobs and a short
    4-node job L wait. Greedy starts the long jobs on nodes as they free up and L waits ~11 h;
    draining the machine for an hour lets L run first (MARS Fig. 5)."""
    specs = [(0, HOUR, HOUR, 1)] * 3 + [(10, 10 * HOUR, 10 * HOUR, 1)] * 4
    specs.append((10, 0.1 * HOUR, 0.1 * HOUR, 4))
    return workload_from(specs, 4)


def test_mars_cw_drains_to_start_the_starving_large_job():
    workload = starvation_case()
    greedy = hpcsched.simulate(workload, "fcfs")
    result = hpcsched.simulate(workload, mars("mars-cw"))
    large = result.jobs.iloc[-1]
    # FCFS+EASY (and any greedy order) starts the long jobs first: L waits until ~11 h.
    assert greedy.jobs.iloc[-1]["start"] > 10 * HOUR
    # MARS-CW leaves the free node idle at t=10 s and starts L when the 3 running jobs end.
    assert large["start"] == HOUR
    assert large["start_kind"] == "drain"
    assert result.decisions["drain"].any()
    assert result.info["search"]["drains"] >= 1
    assert result.info["wait"]["mean"] < greedy.info["wait"]["mean"]
    for policy in ("sjf", "srf", "wfp3", "f1"):
        other = hpcsched.simulate(workload, policy, window=256)
        assert result.info["wait"]["mean"] <= other.info["wait"]["mean"], policy


def maintenance_case():
    """10 nodes; whole-machine maintenance at 48 h, announced 48 h ahead (so known at once).
    A 10-node job runs 0-38 h. Then ten 1-hour 1-node jobs (submitted first) compete with a
    10-node job of exactly 10 hours, which fits the 10 hours left only if it starts at 38 h."""
    t0, window_start = 38 * HOUR, 48 * HOUR
    specs = [(0, t0, t0, 10)] + [(1, HOUR, HOUR, 1)] * 10 + [(2, 10 * HOUR, 10 * HOUR, 10)]
    calendar = DowntimeCalendar((Downtime(window_start, window_start + HOUR, "scheduled"),))
    return workload_from(specs, 10), calendar


@pytest.mark.parametrize("lookahead", ["tree", "rollout"])
def test_mars_cu_packs_the_machine_before_an_announced_maintenance(lookahead):
    workload, calendar = maintenance_case()
    fcfs = hpcsched.simulate(workload, "fcfs", downtime=calendar)
    cu = hpcsched.simulate(workload, mars("mars-cu", lookahead=lookahead), downtime=calendar)

    def before(result):
        (window,) = result.info["utilization"]["before_maintenance"]
        return window["utilization"]

    # FCFS+EASY starts the ten short jobs; the big job no longer fits before the window.
    assert before(fcfs) == pytest.approx((38 * 10 + 10) / (48 * 10))
    # MARS-CU starts the big job at 38 h: the machine is full until the maintenance.
    assert before(cu) == pytest.approx(1.0)
    assert cu.jobs.iloc[-1]["start"] == 38 * HOUR
    # MARS-CW, asked for short waits instead, prefers the ten short jobs, as FCFS does.
    cw = hpcsched.simulate(workload, mars("mars-cw"), downtime=calendar)
    assert cw.info["wait"]["mean"] <= cu.info["wait"]["mean"]


def test_mars_cu_is_mars_cw_without_a_maintenance():
    """Away from a maintenance CU's utilization term is 1 for every choice: its reward is an
    increasing function of CW's, so the rollout look-ahead (an argmax) takes the same choices."""
    workload = hpcsched.workload.generate.markovian(n_jobs=400, target_util=0.95, seed=11)
    cu = hpcsched.simulate(workload, mars("mars-cu", lookahead="rollout"))
    cw = hpcsched.simulate(workload, mars("mars-cw", lookahead="rollout"))
    assert (cu.decisions["outcomes"] >= 2).sum() >= 20
    pd.testing.assert_frame_equal(cu.jobs, cw.jobs)


def test_search_is_honest_about_run_times():
    """Changing the actual run times of running jobs and of jobs not yet submitted does not
    change the first decision: the search sees requested times only."""
    workload = hpcsched.workload.generate.markovian(n_jobs=400, target_util=0.95, seed=11)
    spec = mars("mars-cw", iterations=40)
    first = hpcsched.simulate(workload, spec)
    searched = first.decisions[first.decisions["outcomes"] >= 2].iloc[0]
    t = searched["time"]
    jobs = workload.jobs.copy()
    table = first.jobs
    running = ((table["start"] <= t) & (table["end"] > t)).to_numpy()
    future = (jobs["submit"] > t).to_numpy()
    assert running.any() and future.any()
    elapsed = t - table["start"].to_numpy()
    remaining = table["end"].to_numpy() - t
    jobs.loc[running, "run_time"] = (elapsed + 3 * remaining)[running]
    jobs.loc[future, "run_time"] = jobs.loc[future, "run_time"] * 0.3
    changed = hpcsched.Workload(jobs=jobs, nodes=workload.nodes)
    second = hpcsched.simulate(changed, spec)
    again = second.decisions[second.decisions["outcomes"] >= 2].iloc[0]
    pd.testing.assert_series_equal(
        searched.drop(["seconds"]), again.drop(["seconds"]), check_names=False
    )


@pytest.mark.parametrize(
    "model",
    [
        {},
        {"runtime_model": "history", "arrivals": "recent", "rollout": "guided"},
        {"runtime_model": "history", "arrivals": "recent", "lookahead": "rollout"},
        {"runtime_model": "history", "arrivals": "recent", "prior": "rollout"},
        {"runtime_model": "running", "lookahead": "rollout"},
    ],
    ids=[
        "paper model",
        "sampled run times and arrivals",
        "rollout look-ahead",
        "tree with a prior",
        "rollout look-ahead, running jobs drawn",
    ],
)
def test_identical_results_with_one_and_two_threads(tmp_path, model):
    workload = hpcsched.workload.generate.markovian(n_jobs=600, target_util=0.9, seed=2)
    one = hpcsched.simulate(
        workload, mars("mars-cw", iterations=30, threads=1, **model), out=tmp_path / "1"
    )
    two = hpcsched.simulate(
        workload, mars("mars-cw", iterations=30, threads=2, **model), out=tmp_path / "2"
    )
    assert (tmp_path / "1" / "jobs.parquet").read_bytes() == (
        tmp_path / "2" / "jobs.parquet"
    ).read_bytes()
    cols = ["time", "outcomes", "iterations", "heuristic", "window", "started", "drain"]
    pd.testing.assert_frame_equal(one.decisions[cols], two.decisions[cols])
    assert (tmp_path / "1" / "decisions.parquet").is_file()


def test_decision_log_and_summary():
    workload = hpcsched.workload.generate.markovian(n_jobs=300, target_util=0.9, seed=4)
    result = hpcsched.simulate(workload, mars("mars-cu", iterations=10))
    log = result.decisions
    assert list(log.columns) == [
        "time",
        "queue_length",
        "outcomes",
        "iterations",
        "heuristic",
        "window",
        "actions",
        "name",
        "started",
        "drain",
        "seconds",
    ]
    searched = log[log["outcomes"] >= 2]
    assert (searched["iterations"] == 20).all()  # 10 per tree, 2 trees
    assert (log.loc[log["outcomes"] == 1, "iterations"] == 0).all()
    assert np.all(np.diff(log["time"].to_numpy()) >= 0)
    stats = result.info["search"]
    assert stats["searches"] == len(searched)
    assert stats["branching"]["max"] == searched["outcomes"].max()
    reward = result.info["inputs"]["policy"]["search"]["reward"]
    # MARS-CU: wait 1, maintenance_utilization 3 (docs/semantics.md, "Rewards")
    assert tuple(reward) == (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0)
    # each outcome stands for at least one of the 161 actions, all of them when single
    assert (log["actions"] >= 1).all() and (log["actions"] <= 161).all()
    assert (log.loc[log["outcomes"] == 1, "actions"] == 161).all()


def test_full_decision_log_lists_every_outcome_and_changes_nothing_else():
    workload = hpcsched.workload.generate.markovian(n_jobs=300, target_util=0.9, seed=4)
    compact = hpcsched.simulate(workload, mars("mars-cw", iterations=10))
    full = hpcsched.simulate(workload, mars("mars-cw", iterations=10), decision_log="full")
    pd.testing.assert_frame_equal(compact.jobs, full.jobs)
    log = full.decisions
    scalars = list(compact.decisions.columns)
    assert list(log.columns) == [
        *scalars,
        "candidate_names",
        "candidate_actions",
        "candidate_started",
        "candidate_visits",
        "candidate_values",
        "candidate_chosen",
    ]
    pd.testing.assert_frame_equal(
        log[scalars].drop(columns="seconds"), compact.decisions.drop(columns="seconds")
    )
    for row in log.itertuples():
        assert len(row.candidate_names) == row.outcomes
        chosen = list(row.candidate_chosen).index(True)
        assert sum(row.candidate_chosen) == 1
        assert row.candidate_names[chosen] == row.name
        assert row.candidate_actions[chosen] == row.actions
        assert row.candidate_started[chosen] == row.started
        assert sum(row.candidate_actions) == 161  # every action gives one of the outcomes
        visits = np.asarray(row.candidate_visits)
        if row.outcomes >= 2:
            assert visits.sum() == row.iterations  # every iteration visits one root child
            assert visits[chosen] == visits.max()  # the most visited wins
        else:
            assert visits.sum() == 0 and np.isnan(row.candidate_values).all()


def test_random_baseline_picks_only_outcomes_that_start_jobs():
    workload = starvation_case()
    result = hpcsched.simulate(workload, mars("random"))
    assert not result.decisions["drain"].any()
    assert (result.jobs["start_kind"] != "drain").all()


def test_custom_reward_and_action_set():
    workload = starvation_case()
    spec = hpcsched.PolicySpec(
        "mars",
        search=hpcsched.SearchSpec(
            reward=(1.0, 0.5, 0.0), actions="fcfs,lrf:all", iterations=50, trees=1
        ),
    )
    result = hpcsched.simulate(workload, spec)
    assert set(result.decisions["heuristic"]) <= {"fcfs", "lrf"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"iterations": 0}, "--iterations"),
        ({"iterations": None}, "give --iterations"),
        ({"gamma": 1.0}, "--gamma"),
        ({"depth": 0}, "--depth"),
        ({"reward": (0.0, 0.0, 0.0)}, "positive sum"),
        ({"time_budget": -1.0}, "--time-budget"),
        ({"lookahead": "beam"}, "--lookahead"),
        ({"bases": "f1:256,wfp9"}, "--bases"),
        ({"prior": "uniform"}, "--prior"),
    ],
)
def test_bad_search_options(kwargs, message):
    with pytest.raises(hpcsched.OptionError, match=message):
        hpcsched.SearchSpec(**kwargs)


def test_bad_action_set_is_an_option_error():
    # refused with the options, naming --actions (not at run time, as an input error)
    with pytest.raises(hpcsched.OptionError, match=r"^--actions: unknown heuristic"):
        hpcsched.SearchSpec(actions="wfp9:2")


def test_time_budget_alone_runs_searches():
    spec = hpcsched.PolicySpec(
        "mars-cw", search=hpcsched.SearchSpec(iterations=None, time_budget=0.005, trees=1)
    )
    result = hpcsched.simulate(starvation_case(), spec)
    searched = result.decisions[result.decisions["outcomes"] >= 2]
    assert len(searched) >= 1
    assert (searched["iterations"] >= 1).all()


def test_reward_from_a_toml_file(tmp_path):
    path = tmp_path / "goal.toml"
    path.write_text("[reward]\nwait = 2.0\nutilization = 1.0\n")
    assert hpcsched.policies.parse_reward(str(path)) == (2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    bad = tmp_path / "bad.toml"
    bad.write_text("[reward]\nwait = 'a lot'\n")
    with pytest.raises(hpcsched.HpcschedError):
        hpcsched.policies.parse_reward(str(bad))
    with pytest.raises(hpcsched.InputError, match="cannot read"):
        hpcsched.policies.parse_reward(str(tmp_path / "missing.toml"))


def test_energy_reward_needs_a_power_model_and_steers_the_search():
    # a busy 64-node machine: about 140 searched decisions with 30 iterations each
    workload = hpcsched.workload.generate.markovian(n_jobs=400, target_util=1.0, seed=8)

    def run(reward):
        search = hpcsched.SearchSpec(reward=reward, iterations=30, trees=1)
        return hpcsched.simulate(
            workload, hpcsched.PolicySpec("mars", search=search), platform="AOBA-64"
        )

    with pytest.raises(hpcsched.OptionError, match="energy reward needs a platform"):
        hpcsched.simulate(
            workload, hpcsched.PolicySpec("mars", search=hpcsched.SearchSpec(reward=(0, 0, 0, 1)))
        )
    energy = run((0, 0, 0, 1))
    assert tuple(energy.info["inputs"]["policy"]["search"]["reward"])[:4] == (0.0, 0.0, 0.0, 1.0)
    starts = energy.jobs["start"].to_numpy()
    # weights are normalised: twice the weight is the same goal, the same schedule
    np.testing.assert_array_equal(run((0, 0, 0, 2)).jobs["start"].to_numpy(), starts)
    # the energy term reaches the search: another goal, with the same seed, schedules otherwise
    for other in ((1, 0, 0, 0), (0, 0, 1, 0)):
        assert not np.array_equal(run(other).jobs["start"].to_numpy(), starts), other


def test_reward_presets_are_the_documented_weights():
    # docs/semantics.md, "Rewards": the presets, written out here (the engine holds them)
    from hpcsched.policies import parse_reward

    documented = {
        "cw": {"wait": 1},
        "cu": {"wait": 1, "maintenance_utilization": 3},
        "cu-horizon": {"utilization": 1},
        "wb": {"wait": 1, "bsld": 1},
        "cw-paper": {"wait_started": 1},
        "cu-paper": {"utilization_since_root": 1},
    }
    for name, weights in documented.items():
        assert parse_reward(name) == parse_reward(weights), name
    assert parse_reward("cu")[:2] == (1.0, 0.0) and parse_reward("cu")[-1] == 3.0


def test_every_option_name_the_engine_lists_runs_and_the_help_shows_it():
    """The look-ahead options' names (and EASY's estimates) have one list, the engine's: each
    name runs through the bindings' parser, and the CLI's help (which must not import the
    engine to start at once) shows the same names."""
    from hpcsched.cli import METAVARS

    names = hpcsched._core.option_names()
    assert set(names) == {"runtime_model", "arrivals", "rollout", "lookahead", "prior", "estimates"}
    workload = hpcsched.workload.generate.markovian(n_jobs=80, target_util=0.9, seed=3)
    for option, values in names.items():
        assert METAVARS[option] == "|".join(values), option
        for value in values:
            if option == "estimates":
                spec = hpcsched.PolicySpec("fcfs", estimates=value)
            else:
                spec = mars("mars-cw", iterations=4, **{option: value})
            assert len(hpcsched.simulate(workload, spec).jobs) == 80, (option, value)
    with pytest.raises(hpcsched.HpcschedError, match="choose one of requested, history, running"):
        mars("mars-cw", runtime_model="sampled")
