"""The gymnasium environment: API conformance per action space, determinism, vectorisation,
rewards against the built-in schedules, and a few hundred steps of training."""

from __future__ import annotations

import importlib.util
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import hpcsched
from hpcsched import _core
from hpcsched.gym import CLUSTER_FEATURES, JOB_FEATURES, SchedulingEnv
from hpcsched.workload import generate
from tests.conftest import REPO_ROOT, small_platform

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # gymnasium's checker notes


@pytest.fixture(scope="module")
def workload():
    return generate.markovian(400, 64, target_util=0.8, seed=7)


def envs(workload):
    platform = small_platform(64)
    return {
        "job": SchedulingEnv(workload, slots=16),
        "mars": SchedulingEnv(workload, action="mars"),
        "spares": SchedulingEnv(workload, action="spares", platform=platform),
        "nodes": SchedulingEnv(workload, action="nodes", platform=platform, max_steps=500),
    }


@pytest.mark.parametrize("action", ["job", "mars", "spares", "nodes"])
def test_check_env_passes_for_every_action_space(workload, action):
    env = envs(workload)[action]
    check_env(env, skip_render_check=True)
    observation, info = env.reset(seed=1)
    assert observation.shape == (env.slots * JOB_FEATURES + CLUSTER_FEATURES,)
    assert env.observation_space.contains(observation)
    assert set(info["terms"]) == {"wait", "bsld", "utilization", "energy"}


def run_episode(env, seed, actions=None):
    observation, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    trace, done = [observation], False
    while not done:
        action = env.action_space.sample() if actions is None else actions(env)
        observation, reward, terminated, truncated, info = env.step(action)
        trace.append((observation, reward))
        done = terminated or truncated
    return trace, info


def test_a_seeded_episode_is_reproducible(workload):
    first, _ = run_episode(SchedulingEnv(workload, slots=16, episode_jobs=200), seed=5)
    second, _ = run_episode(SchedulingEnv(workload, slots=16, episode_jobs=200), seed=5)
    other, _ = run_episode(SchedulingEnv(workload, slots=16, episode_jobs=200), seed=6)
    assert len(first) == len(second)
    for a, b in zip(first[1:], second[1:], strict=True):
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]
    assert len(other) != len(first) or any(
        not np.array_equal(a[0], b[0]) for a, b in zip(first[1:], other[1:], strict=False)
    )


def test_always_the_head_is_fcfs_easy_and_the_reward_is_its_mean_wait(workload):
    env = SchedulingEnv(workload, slots=16, reward="wait")
    trace, info = run_episode(env, seed=0, actions=lambda env: 0)
    fcfs = hpcsched.simulate(workload, "fcfs")
    mean_wait_hours = fcfs.jobs["wait"].mean() / 3600
    assert trace[-1][1] == pytest.approx(1 / (1 + mean_wait_hours))
    assert info["terms"]["wait"] == pytest.approx(1 / (1 + mean_wait_hours))
    # the MARS action "fcfs over the whole queue" gives the same schedule
    names = _core.action_names("paper")
    index = names.index(next(n for n in names if n.startswith("fcfs")))
    env = SchedulingEnv(workload, action="mars", reward="wait")
    trace, _ = run_episode(env, seed=0, actions=lambda env: index)
    assert trace[-1][1] == pytest.approx(1 / (1 + mean_wait_hours))


def test_step_rewards_telescope_to_the_final_value(workload):
    final, _ = run_episode(SchedulingEnv(workload, slots=16, reward="bsld"), seed=2)
    step, _ = run_episode(
        SchedulingEnv(workload, slots=16, reward="bsld", reward_mode="step"), seed=2
    )
    assert sum(r for _, r in step[1:]) == pytest.approx(final[-1][1] - 1.0)  # starts at 1


def test_invalid_slots_and_unfinished_episodes(workload):
    env = SchedulingEnv(workload, slots=16)
    env.reset(seed=0)
    mask = env.action_masks()
    assert mask[0] and not mask.all()
    _, _, _, _, info = env.step(15)  # an empty slot acts as slot 0
    assert info["invalid_action"]
    # every node asleep forever: the jobs never start, the episode ends without credit
    platform = small_platform(64)
    env = SchedulingEnv(workload, action="nodes", platform=platform)
    _, info = run_episode(env, seed=0, actions=lambda env: np.zeros(64, dtype=np.int8))
    assert info["unfinished"]


def test_vector_envs(workload):
    def make():
        return SchedulingEnv(workload, slots=16, episode_jobs=100)

    results = []
    for kind in (gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv):
        vector = kind([make, make])
        observations, _ = vector.reset(seed=3)
        assert observations.shape == (2, 16 * JOB_FEATURES + CLUSTER_FEATURES)
        for _ in range(50):
            observations, rewards, *_ = vector.step(np.zeros(2, dtype=np.int64))
        assert rewards.shape == (2,)
        results.append(observations)
        vector.close()
    # the same seeds give the same episodes in this process and in worker processes
    np.testing.assert_array_equal(results[0], results[1])


def load_example(name):
    spec = importlib.util.spec_from_file_location(
        name, REPO_ROOT / "examples" / "agents" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_a_small_agent_trains_for_a_few_hundred_steps_and_runs_as_a_policy(workload):
    reinforce = load_example("reinforce")
    env = SchedulingEnv(workload, slots=16, reward="bsld", episode_jobs=120)
    policy, returns, steps = reinforce.train(env, episodes=100, max_steps=300)
    assert steps == 300 and len(returns) >= 2
    result = hpcsched.simulate(workload, reinforce.LearnedPolicy(policy, 16))
    assert result.jobs["start"].notna().all()
    # untrained (all weights 0) it picks slot 0: exactly FCFS with EASY
    untrained = hpcsched.simulate(workload, reinforce.LearnedPolicy(reinforce.LinearScorer(), 16))
    fcfs = hpcsched.simulate(workload, "fcfs")
    np.testing.assert_array_equal(untrained.jobs["start"], fcfs.jobs["start"])
    # training moved it off FCFS: the learned weights reach the policy's decisions. Whether
    # 300 steps lower the bounded slowdown is seed luck (issue 25: over seeds 0-29 the mean
    # is 2.13 +- 0.035 against FCFS's 2.169, 16 of 30 below it; 1000 steps, 10 seeds: 2.22),
    # so the test claims no improvement.
    assert not np.array_equal(result.jobs["start"], fcfs.jobs["start"])


def test_the_ppo_example_runs_a_model_as_a_policy(workload):
    """examples/agents/train_ppo.py's adapter, with a stand-in for the trained model:
    stable-baselines3 (and torch, about 1 GB) is not a test dependency, so PPO's training is
    not run here; what the example adds to it is. A model choosing slot 0 is FCFS with EASY,
    and a slot past the queue falls back to slot 0."""
    ppo = load_example("train_ppo")

    class Model:
        def __init__(self, slot):
            self.slot, self.observations = slot, []

        def predict(self, observation, deterministic):
            assert deterministic
            self.observations.append(observation)
            return np.int64(self.slot), None

    fcfs = hpcsched.simulate(workload, "fcfs")
    for slot in (0, ppo.SLOTS - 1):
        model = Model(slot)
        result = hpcsched.simulate(workload, ppo.PPOPolicy(model))
        assert model.observations and model.observations[0].shape == (
            ppo.SLOTS * JOB_FEATURES + CLUSTER_FEATURES,
        )
        if slot == 0:
            np.testing.assert_array_equal(result.jobs["start"], fcfs.jobs["start"])
        assert result.jobs["start"].notna().all()


#: 16 nodes of 4 cores shared by CPUs (cr_core): jobs ask their processors as one-CPU tasks.
SHARED_PLATFORM = """
name = "shared-16"
sharing = "cr_core"
[[groups]]
name = "node"
nodes = 16
cores = 4
"""


@pytest.fixture(scope="module")
def shared_site(tmp_path_factory):
    """A shared-node platform, and a workload of 300 jobs of 1-16 processors on it."""
    folder = tmp_path_factory.mktemp("shared")
    (folder / "shared.toml").write_text(SHARED_PLATFORM)
    rng = np.random.default_rng(3)
    lines = ["; MaxNodes: 16", "; MaxProcs: 64"]
    submit = 0
    for i in range(300):
        submit += int(rng.integers(0, 120))
        run, procs = int(rng.integers(60, 3600)), int(rng.integers(1, 17))
        lines.append(
            f"{i + 1} {submit} -1 {run} {procs} -1 -1 {procs} {run * 2} -1 1 1 1 1 1 -1 -1 -1"
        )
    (folder / "t.swf").write_text("\n".join(lines) + "\n")
    return folder / "t.swf", str(folder / "shared.toml")


def test_check_env_passes_on_a_shared_node_site(shared_site):
    """Where jobs share nodes the features speak of CPUs: a slot's size is its CPUs over the
    machine's, and "fits now" the placement rule's answer."""
    trace, platform = shared_site
    env = SchedulingEnv(str(trace), slots=16, platform=platform)
    check_env(env, skip_render_check=True)
    observation, _ = env.reset(seed=1)
    assert env.observation_space.contains(observation)
    sizes = []
    done = False
    while not done:
        jobs = observation[: 16 * JOB_FEATURES].reshape(16, JOB_FEATURES)
        sizes.extend(jobs[jobs[:, 7] == 1, 2] * 64)
        observation, _, terminated, truncated, _ = env.step(0)
        done = terminated or truncated
    cpus = np.array(sizes)  # CPUs asked (1-16) over the machine's 64, not nodes over 16
    assert len(cpus) > 100 and np.allclose(cpus, np.round(cpus)) and cpus.max() == 16
    steps, info = run_episode(env, seed=2)
    assert len(steps) > 1 and set(info["terms"]) == {"wait", "bsld", "utilization", "energy"}


def test_the_ppo_example_runs_on_a_shared_node_site(shared_site):
    """The PPO example's adapter where jobs share nodes: a model choosing slot 0 schedules as
    FCFS with EASY does there."""
    trace, platform = shared_site
    ppo = load_example("train_ppo")

    class Model:
        def predict(self, observation, deterministic):
            return np.int64(0), None

    fcfs = hpcsched.simulate(trace, "fcfs", platform=platform)
    result = hpcsched.simulate(trace, ppo.PPOPolicy(Model()), platform=platform)
    np.testing.assert_array_equal(result.jobs["start"], fcfs.jobs["start"])
    assert result.jobs["alloc_nodes"].tolist() == fcfs.jobs["alloc_nodes"].tolist()
