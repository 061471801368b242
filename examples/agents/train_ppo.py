"""Train a small PPO agent (stable-baselines3, CPU) to pick the next job, as RLScheduler does,
and evaluate it with the same metrics as every built-in policy.

    pip install 'hpcsched[gym]' stable-baselines3
    python examples/agents/train_ppo.py --trace ../shared/traces/pwa/lublin_256.swf.gz \\
        --steps 50000
    python examples/agents/train_ppo.py --platform examples/platforms/curie-cores.toml \\
        --trace ../shared/traces/pwa/CEA-Curie-2011-2.1-cln.swf.gz   # sharing nodes by cores

Training: episodes of 256 consecutive jobs drawn at random from the trace, 32 queue slots,
reward = 1 / mean bounded slowdown at the episode's end (RLScheduler's objective), four
environments vectorised. Evaluation: the trained agent schedules a held-out slice of the
trace as a Python policy (asking the engine for the features it learned from) in
hpcsched.compare, next to FCFS, SJF and F1 with EASY: the same metrics, tables and plots as
every policy, in an HTML report (--report).
"""

from __future__ import annotations

import argparse

import hpcsched
from hpcsched.experiment import slice_workload
from hpcsched.gym import SchedulingEnv
from hpcsched.protocol import Decision, View

SLOTS = 32


class PPOPolicy:
    """A trained PPO model as an hpcsched policy: the slot it picks goes first, EASY after."""

    name = "ppo"
    observation_slots = SLOTS

    def __init__(self, model) -> None:
        self.model = model

    def decide(self, view: View) -> Decision:
        if not len(view.queue) or view.observation is None:
            return Decision()
        slot, _ = self.model.predict(view.observation, deterministic=True)
        slot = int(slot) if int(slot) < len(view.queue) else 0
        return Decision(order=[int(view.queue[slot])])


def train(trace: str, steps: int, seed: int = 0, platform: str | None = None):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    workload = hpcsched.load_workload(trace)
    training = slice_workload(workload, 0, int(len(workload) * 0.7))
    env = make_vec_env(
        lambda: SchedulingEnv(
            training, slots=SLOTS, reward="bsld", episode_jobs=256, platform=platform
        ),
        n_envs=4,
        seed=seed,
    )
    model = PPO("MlpPolicy", env, n_steps=256, batch_size=256, seed=seed, verbose=0, device="cpu")
    model.learn(total_timesteps=steps)
    return model, workload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="../shared/traces/pwa/lublin_256.swf.gz")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--report", default="ppo-report.html")
    parser.add_argument(
        "--platform",
        default=None,
        help="a platform preset or file (partitions, jobs sharing nodes by cores), e.g. "
        "examples/platforms/curie-cores.toml",
    )
    args = parser.parse_args()
    model, workload = train(args.trace, args.steps, platform=args.platform)
    test = slice_workload(workload, int(len(workload) * 0.7), int(len(workload) * 0.7) + 1024)
    # the trained agent next to the baselines, with the same metrics, tables and plots
    comparison = hpcsched.compare(
        test, ["fcfs", "sjf", "f1", PPOPolicy(model)], platform=args.platform, processes=1
    )
    print(f"held-out slice: {len(test)} jobs")
    for row in comparison.table.itertuples():
        print(
            f"{row.policy:12s} mean bounded slowdown {row.bsld_mean:8.2f}   "
            f"mean wait {row.wait_mean / 3600:6.2f} h"
        )
    print(f"report: {comparison.report(args.report, title='PPO against the baselines')}")


if __name__ == "__main__":
    main()
