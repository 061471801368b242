"""A small learned scheduler with numpy only: REINFORCE over a linear job-scoring policy.

The policy scores each waiting job from its features (as RLScheduler's kernel network, here
linear) and samples the job to go first from the softmax over valid slots; the episode's
reward (the environment's, e.g. 1 / mean bounded slowdown) trains it by policy gradient with
a moving baseline. Small enough to train in CI for a few hundred steps; for a real agent use
PPO (train_ppo.py).

    python examples/agents/reinforce.py --trace lublin_256.swf.gz --episodes 50
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

import numpy as np

from hpcsched.gym import JOB_FEATURES, SchedulingEnv
from hpcsched.protocol import Decision, View


@dataclass
class LinearScorer:
    """Scores job slots linearly; the agent picks the next job from their softmax."""

    weights: np.ndarray = field(default_factory=lambda: np.zeros(JOB_FEATURES))
    learning_rate: float = 0.05

    def probabilities(self, observation: np.ndarray, mask: np.ndarray, slots: int) -> np.ndarray:
        features = observation[: slots * JOB_FEATURES].reshape(slots, JOB_FEATURES)
        scores = features @ self.weights
        scores = np.where(mask, scores, -np.inf)
        scores -= scores[mask].max()
        p = np.exp(scores)
        return p / p.sum()

    def act(self, observation, mask, slots, rng, greedy=False) -> tuple[int, np.ndarray]:
        p = self.probabilities(observation, mask, slots)
        slot = int(np.argmax(p)) if greedy else int(rng.choice(slots, p=p))
        features = observation[: slots * JOB_FEATURES].reshape(slots, JOB_FEATURES)
        # d log softmax / d weights = x_chosen - E_p[x]
        return slot, features[slot] - p @ features


def train(
    env: SchedulingEnv, episodes: int, seed: int = 0, max_steps: int | None = None
) -> tuple[LinearScorer, list[float], int]:
    """Trains for `episodes` episodes (or until `max_steps` steps); returns the policy, the
    episode returns and the steps taken."""
    rng = np.random.default_rng(seed)
    policy, returns, baseline, steps = LinearScorer(), [], None, 0
    for episode in range(episodes):
        observation, info = env.reset(seed=seed + episode)
        gradients, total, done = [], 0.0, False
        while not done:
            slot, gradient = policy.act(
                observation, info["action_mask"].astype(bool), env.slots, rng
            )
            observation, reward, terminated, truncated, info = env.step(slot)
            gradients.append(gradient)
            total += reward
            steps += 1
            done = terminated or truncated or (max_steps is not None and steps >= max_steps)
        baseline = total if baseline is None else 0.9 * baseline + 0.1 * total
        if gradients:
            policy.weights += policy.learning_rate * (total - baseline) * np.sum(gradients, axis=0)
        returns.append(total)
        if max_steps is not None and steps >= max_steps:
            break
    return policy, returns, steps


class LearnedPolicy:
    """The trained scorer as an hpcsched policy: at each invocation the best-scored job goes
    first and the engine scans with EASY. It asks the engine for the features it was trained
    on (``observation_slots``), so it runs under hpcsched.simulate like any other policy."""

    name = "reinforce"

    def __init__(self, scorer: LinearScorer, slots: int) -> None:
        self.scorer, self.observation_slots = scorer, slots

    def decide(self, view: View) -> Decision:
        if not len(view.queue) or view.observation is None:
            return Decision()
        mask = np.arange(self.observation_slots) < len(view.queue)
        p = self.scorer.probabilities(view.observation, mask, self.observation_slots)
        return Decision(order=[int(view.queue[int(np.argmax(p))])])


def main() -> None:
    import hpcsched
    from hpcsched.experiment import slice_workload

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="../shared/traces/pwa/lublin_256.swf.gz")
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=256, help="jobs per episode (a random slice)")
    args = parser.parse_args()
    workload = hpcsched.load_workload(args.trace)
    env = SchedulingEnv(workload, slots=32, reward="bsld", episode_jobs=args.jobs)
    policy, returns, steps = train(env, args.episodes)
    print(
        f"{steps} steps; mean return first 10 episodes {np.mean(returns[:10]):.4f}, "
        f"last 10 {np.mean(returns[-10:]):.4f}; weights {np.round(policy.weights, 3)}"
    )
    test = slice_workload(workload, 5000, 5000 + 2 * args.jobs)
    for name, p in (
        ("FCFS +EASY", "fcfs"),
        ("SJF +EASY", "sjf"),
        ("REINFORCE", LearnedPolicy(policy, 32)),
    ):
        result = hpcsched.simulate(test, p)
        print(
            f"{name:12s} mean bounded slowdown {result.info['bounded_slowdown']['mean']:8.2f}, "
            f"mean wait {result.info['wait']['mean'] / 3600:6.2f} h"
        )


if __name__ == "__main__":
    main()
