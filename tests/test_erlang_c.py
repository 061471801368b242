"""FCFS on an M/M/k workload against the Erlang-C closed form."""

from __future__ import annotations

import math
import statistics

import hpcsched
from hpcsched.workload.generate import mmk


def erlang_c_mean_wait(servers: int, load: float, mean_service: float) -> float:
    """Mean wait in queue of M/M/k: ``Wq = C(k, a) / (k·mu - lambda)``, with ``a = k·rho`` and
    ``C(k, a) = (a^k/k!)/(1-rho) / (sum_{i<k} a^i/i! + (a^k/k!)/(1-rho))``."""
    a = servers * load
    top = a**servers / math.factorial(servers) / (1 - load)
    bottom = sum(a**i / math.factorial(i) for i in range(servers)) + top
    probability_of_waiting = top / bottom
    mu = 1 / mean_service
    return probability_of_waiting / (servers * mu - load * servers * mu)


def test_erlang_c_formula_on_a_known_value():
    # M/M/2 at rho = 0.5: C = 1/3, Wq = C / (2 mu - lambda) = (1/3) / (2 - 1) = 1/3 (mu = 1).
    assert math.isclose(erlang_c_mean_wait(2, 0.5, 1.0), 1 / 3)


#: Independent replications: one run's mean wait varies by about 4 % from seed to seed (waits
#: are strongly autocorrelated), so the test averages over seeds and allows 3 standard errors.
SEEDS = range(24)


def test_fcfs_mean_wait_matches_erlang_c_on_mm16_at_load_08():
    expected = erlang_c_mean_wait(16, 0.8, 3600.0)
    means = []
    for seed in SEEDS:
        workload = mmk(n_jobs=200_000, servers=16, load=0.8, mean_runtime=3600.0, seed=seed)
        result = hpcsched.simulate(workload, "fcfs")
        means.append(result.info["wait"]["mean"])
        # Single-node jobs never wait while a node is free: EASY has nothing to backfill.
        assert result.info["jobs"]["start_kinds"]["backfill"] == 0
    grand = statistics.fmean(means)
    standard_error = statistics.stdev(means) / math.sqrt(len(means))
    assert standard_error < 0.02 * expected, "the replications are too noisy to test anything"
    assert abs(grand - expected) < 3 * standard_error, (grand, expected, standard_error)
