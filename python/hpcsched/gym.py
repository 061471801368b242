"""A gymnasium environment on the engine: learn a scheduler or a power manager.

``SchedulingEnv`` runs episodes over a workload (a trace, a slice of it drawn at random each
episode, or a generator) on the same engine as every other policy. At each decision point the
agent sees fixed-size features and acts:

- ``action="job"``: pick one of the first ``slots`` waiting jobs (FCFS order) to go first; the
  engine then scans the queue with that job at its head and backfills with EASY (as
  RLScheduler with backfilling). ``info["action_mask"]`` marks the valid slots; an invalid
  slot acts as slot 0 (FCFS) and sets ``info["invalid_action"]``.
- ``action="mars"``: pick one of MARS's (heuristic, window) actions (``actions="paper"``: 161).
- ``action="spares"`` (platforms with a power model): the number of idle nodes to keep awake;
  jobs start FCFS with EASY on awake nodes, nodes the head job needs are woken, idle nodes
  beyond the target are switched off.
- ``action="nodes"`` (platforms with a power model): per node, awake (1) or asleep (0), as the
  SNF-ICON paper's RL baseline; jobs start FCFS with EASY on awake nodes; nothing else wakes.

Observation (``Box``, float32): ``slots x 8`` job features (wait h, requested h, nodes share,
requested node-hours share, fits now, ends before the next maintenance, FCFS rank, slot used),
then 9 cluster features (free, busy, down, idle, switching, sleeping shares, queue / slots,
hours to the next maintenance (capped at 48), hours since the start / 1000).

Reward: the named terms MARS uses (``wait``, ``bsld``, ``utilization``, ``energy``, each in
[0, 1], weights as ``--reward`` takes them), over the episode so far; ``reward_mode="final"``
gives the weighted value at the episode's end (0 before), ``"step"`` its change at each step
(the sum telescopes to the final value minus the starting one). An episode whose jobs cannot
all start (nodes left asleep forever) ends with reward 0 and ``info["unfinished"]``.

Requires ``pip install 'hpcsched[gym]'`` (gymnasium >= 1.0). See docs/agents.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hpcsched import _core
from hpcsched.exceptions import OptionError, unknown_name
from hpcsched.experiment import slice_workload
from hpcsched.policies import PAPER_TERMS
from hpcsched.protocol import IDLE, SLEEPING, SWITCHING_ON, Decision
from hpcsched.rewards import parse_reward
from hpcsched.run import native_run, new_simulation, resolve_platform
from hpcsched.run.options import open_platform
from hpcsched.run.site import agent_site
from hpcsched.site.platform import Platform
from hpcsched.workload import DowntimeCalendar, Workload, load_workload

JOB_FEATURES = 8
CLUSTER_FEATURES = 9
ACTIONS = ("job", "mars", "spares", "nodes")
POWER_ACTIONS = ("spares", "nodes")
TERMS = ("wait", "bsld", "utilization", "energy")
OBSERVATION_MAX = 1e9

WorkloadSource = Workload | str | os.PathLike[str] | Callable[[int], Workload]


class SchedulingEnv(gymnasium.Env):
    """Episodes of scheduling decisions on the hpcsched engine (see the module docstring)."""

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's class attribute)

    def __init__(
        self,
        workload: WorkloadSource,
        *,
        action: str = "job",
        slots: int = 128,
        reward: str | dict[str, float] = "bsld",
        reward_mode: str = "final",
        episode_jobs: int | None = None,
        platform: Platform | str | None = None,
        actions: str = "paper",
        max_steps: int | None = None,
    ) -> None:
        if action not in ACTIONS:
            raise OptionError(unknown_name("action", action, ACTIONS))
        if reward_mode not in ("final", "step"):
            raise OptionError(f"reward_mode must be final or step, not {reward_mode!r}")
        if not (isinstance(slots, int) and slots >= 1):
            raise OptionError(f"slots must be a positive integer, not {slots!r}")
        self.platform = open_platform(platform) if isinstance(platform, str) else platform
        if action in POWER_ACTIONS and (self.platform is None or self.platform.power is None):
            raise OptionError(f"action {action!r} switches nodes: give a platform with power")
        self._source = workload if callable(workload) else None
        self._workload = None if callable(workload) else _load(workload, self.platform)
        self.action_kind = action
        self.slots = slots
        self.weights = np.array(parse_reward(reward, PAPER_TERMS), dtype=np.float64)
        self.reward_mode = reward_mode
        self.episode_jobs = episode_jobs
        self.actions_spec = actions
        self.max_steps = max_steps
        nodes = self._nodes()
        if action == "job":
            self.action_space: spaces.Space[Any] = spaces.Discrete(slots)
        elif action == "mars":
            self.action_space = spaces.Discrete(len(_core.action_names(actions)))
        elif action == "spares":
            self.action_space = spaces.Discrete(nodes + 1)
        else:
            self.action_space = spaces.MultiBinary(nodes)
        size = slots * JOB_FEATURES + CLUSTER_FEATURES
        # every feature is >= 0; hours can grow large but never past this
        self.observation_space = spaces.Box(0.0, OBSERVATION_MAX, shape=(size,), dtype=np.float32)
        self._sim: Any = None
        self._value = 0.0
        self._steps = 0
        self._mask = np.zeros(slots, dtype=bool)

    # --- gymnasium API ----------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        workload = self._episode_workload()
        manager = {"sample_transitions": None} if self.action_kind in POWER_ACTIONS else None
        # on partitions, jobs sized in their partitions' nodes, each kept in its partitions;
        # where jobs share nodes, each with its request
        workload, site = agent_site(workload, self.platform)
        self._sim = new_simulation(
            native_run(workload, DowntimeCalendar(()), "agent", site=site, manager=manager)
        )
        self._jobs = len(workload)
        self._steps = 0
        self._done = not self._advance()
        self._value = self._weighted()
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            return self._observe(), 0.0, True, False, self._info()
        invalid = self._act(action)
        self._steps += 1
        terminated = not self._advance()
        truncated = not terminated and self.max_steps is not None and self._steps >= self.max_steps
        value = self._weighted()
        unfinished = terminated and self._sim.submitted == self._jobs and self._sim.queue_length
        if unfinished:
            reward = 0.0  # jobs left waiting forever: no credit for the ones that ran
        elif self.reward_mode == "step":
            reward = value - self._value
        else:
            reward = value if terminated else 0.0
        self._value = value
        self._done = terminated
        info = self._info()
        info["invalid_action"] = invalid
        info["unfinished"] = bool(unfinished)
        return self._observe(), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Valid actions now (``job``: the slots holding a job; all valid otherwise)."""
        if self.action_kind == "job":
            return self._mask.copy()
        if isinstance(self.action_space, spaces.Discrete):
            return np.ones(int(self.action_space.n), dtype=bool)
        return np.ones(self.action_space.shape or (), dtype=bool)

    # --- internals --------------------------------------------------------------------------

    def _nodes(self) -> int:
        if self.platform is not None:
            return self.platform.nodes
        if self._workload is not None:
            return self._workload.nodes
        assert self._source is not None
        return self._source(0).nodes

    def _episode_workload(self) -> Workload:
        if self._source is not None:
            workload = self._source(int(self.np_random.integers(2**31)))
        else:
            assert self._workload is not None
            workload = self._workload
        if self.episode_jobs is not None and len(workload) > self.episode_jobs:
            first = int(self.np_random.integers(len(workload) - self.episode_jobs + 1))
            workload = slice_workload(workload, first, first + self.episode_jobs)
        return workload

    def _advance(self) -> bool:
        """To the next decision point; False when the episode is over: no event left, or
        (power actions, where switching nodes makes events forever) every job has run."""
        sim = self._sim
        if not sim.advance_to_decision(self.action_kind in POWER_ACTIONS):
            return False
        all_done = sim.submitted == self._jobs and not sim.queue_length and not sim.running_length
        return not all_done

    def _act(self, action: Any) -> bool:
        sim = self._sim
        if self.action_kind == "mars":
            sim.apply_action(int(action), self.actions_spec)
            return False
        if self.action_kind == "job":
            return bool(sim.apply_slot(int(action), self.slots))
        fcfs = Decision(order=())  # jobs not named follow in FCFS order: FCFS with EASY
        if self.action_kind == "nodes":
            want = np.asarray(action, dtype=bool)
            sim.apply(fcfs)
            states = sim.view()["node_state"]
            on = [int(n) for n in np.flatnonzero(want & (states == SLEEPING))]
            off = [int(n) for n in np.flatnonzero(~want & (states == IDLE))]
            sim.apply(Decision(power_on=on, power_off=off))
            return False
        # spares: start what fits, wake what the head needs, keep `action` idle nodes awake
        sim.apply(fcfs)
        after = sim.view()
        states = after["node_state"]
        idle = np.flatnonzero(states == IDLE)
        sleeping = np.flatnonzero(states == SLEEPING)
        waking = int(np.sum(states == SWITCHING_ON))
        need = int(after["queue_nodes"][0]) - len(idle) - waking if len(after["queue"]) else 0
        target = int(action)
        wake = max(need, target - len(idle) - waking, 0)
        spare = max(len(idle) - target, 0) if need <= 0 else 0
        sim.apply(
            Decision(
                power_on=[int(n) for n in sleeping[:wake]],
                power_off=[int(n) for n in idle[len(idle) - spare :]] if spare else [],
            )
        )
        return False

    def _weighted(self) -> float:
        terms = np.array(self._sim.episode_terms(), dtype=np.float64)
        return float(terms @ self.weights / self.weights.sum())

    def _observe(self) -> np.ndarray:
        jobs, cluster, mask = self._sim.observe(self.slots)
        self._mask = mask
        observation = np.concatenate([jobs.ravel(), cluster])
        return np.clip(observation, 0.0, OBSERVATION_MAX, out=observation)

    def _info(self) -> dict[str, Any]:
        return {
            "time": float(self._sim.now),
            "action_mask": self.action_masks().astype(np.int8),
            "terms": dict(zip(TERMS, self._sim.episode_terms(), strict=True)),
        }


def _load(source: Workload | str | os.PathLike[str], platform: Platform | None) -> Workload:
    if isinstance(source, Workload):
        return source
    # (on partitions, the trace's own units: each episode is sized in its partitions)
    _, nodes = resolve_platform(platform, None)
    return load_workload(source, nodes=nodes)
