"""Agents and Python policies (issue 7): environment steps per second, and the cost of a
policy written in Python against the same policy built in.

    python benchmarks/agents.py [--traces DIR]

1. Steps per second of SchedulingEnv, single process, random actions, over episodes of 256
   Lublin jobs (32 slots) for the pick-a-job and MARS action spaces, and of the spare-target
   space on the Markovian workload (AOBA-64). Target: >= 10,000 steps/s for pick-a-job.
   Baseline in the same run: a bare engine replay of the same slices under FCFS+EASY
   (decisions per second when nothing crosses into Python).
2. The full KTH-SP2 trace (28,476 jobs) under FCFS+EASY: built in, and as Python policies
   (the example that decides every start itself, and one that returns the FCFS order).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import hpcsched
from hpcsched.experiment import slice_workload
from hpcsched.gym import SchedulingEnv
from hpcsched.protocol import Decision, load_policy
from hpcsched.workload import generate

REPO = Path(__file__).resolve().parents[1]


def steps_per_second(env: SchedulingEnv, steps: int) -> tuple[float, int]:
    env.reset(seed=0)
    env.action_space.seed(0)
    count, episodes = 0, 1
    start = time.perf_counter()
    while count < steps:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        count += 1
        if terminated or truncated:
            env.reset()
            episodes += 1
    return count / (time.perf_counter() - start), episodes


class FcfsOrder:
    name = "fcfs order (python)"

    def decide(self, view):
        return Decision(order=view.queue)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--smoke", action="store_true", help="2,000 steps, Lublin only (CI)")
    args = parser.parse_args()
    if args.smoke:
        args.steps = 2000
    lublin = args.traces / "pwa" / "lublin_256.swf.gz"
    kth = args.traces / "pwa" / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not (lublin.is_file() and kth.is_file()):
        sys.exit(f"traces not found under {args.traces} (give --traces DIR)")
    workload = hpcsched.load_workload(lublin)
    print("## Environment steps per second (one process, random actions)\n")
    for action in ("job", "mars"):
        env = SchedulingEnv(workload, action=action, slots=32, episode_jobs=256)
        rate, episodes = steps_per_second(env, args.steps)
        print(f"{action:7s} Lublin slices of 256 jobs: {rate:10,.0f} steps/s ({episodes} episodes)")
    markovian = generate.markovian(3000, 64, seed=43)
    env = SchedulingEnv(markovian, action="spares", platform="AOBA-64", episode_jobs=256)
    rate, episodes = steps_per_second(env, args.steps // 4)
    print(f"spares  Markovian on AOBA-64:     {rate:10,.0f} steps/s ({episodes} episodes)")
    rng = np.random.default_rng(0)
    decisions, start = 0, time.perf_counter()
    for _ in range(10 if args.smoke else 200):
        first = int(rng.integers(len(workload) - 256))
        result = hpcsched.simulate(slice_workload(workload, first, first + 256), "fcfs")
        decisions += result.info["engine"]["invocations"]
    rate = decisions / (time.perf_counter() - start)
    print(f"baseline: simulate() of the same slices under FCFS+EASY: {rate:10,.0f} decisions/s")

    print("\n## A policy in Python against the same policy built in (KTH-SP2, 28,476 jobs)\n")
    trace = hpcsched.load_workload(lublin if args.smoke else kth)
    rows = [
        ("built-in fcfs (EASY)", "fcfs"),
        (
            "python, decides every start",
            load_policy(f"python:{REPO}/examples/policies/fcfs_easy.py:FcfsEasy"),
        ),
        ("python, returns the order", FcfsOrder()),
    ]
    base = None
    for name, policy in rows:
        best = min(_timed(trace, policy) for _ in range(1 if args.smoke else 3))
        base = base or best
        print(f"{name:30s} {best:6.2f} s  ({best / base:5.1f}x the built-in)")


def _timed(trace, policy) -> float:
    start = time.perf_counter()
    hpcsched.simulate(trace, policy)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
