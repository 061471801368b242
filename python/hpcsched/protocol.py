"""Policies written in Python: the engine's one decision contract, a read-only view in and a
decision out (as the built-in policies, in Rust).

At every scheduling invocation (an event time with jobs waiting, or every event time on a
platform whose nodes sleep) the engine calls ``policy.decide(view)`` and applies the
:class:`Decision` it returns, validating it exactly as a built-in policy's: a job that does not
fit, is not waiting or would run into an announced maintenance is a :class:`DecisionError`
naming the policy, the time and the decision. See docs/policies.md for a complete example.

Jobs are named by their **index** in the workload's job table (replay order), the same in the
view's arrays and in the decision; ``view.queue_id`` gives the trace's job ids.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from hpcsched import _core
from hpcsched.exceptions import DecisionError, OptionError, shown
from hpcsched.node_ranges import node_list

#: Node power states in ``View.node_state``: codes into the engine's ``node_state_names()``.
NODE_STATES: tuple[str, ...] = tuple(_core.node_state_names())
IDLE, COMPUTING, SWITCHING_ON, SWITCHING_OFF, SLEEPING = (
    NODE_STATES.index(name)
    for name in ("idle", "computing", "switching_on", "switching_off", "sleeping")
)


class Decision(NamedTuple):
    """What a policy decides now.

    - ``start``: waiting jobs (indices) to start now, exactly these (``backfilled``: more
      jobs to start now, recorded as backfilled: started behind a job that waits);
    - or ``order``: a priority order of waiting jobs (the rest follow in FCFS order) that the
      engine scans, starting jobs while they fit, then, with ``backfill="easy"``, backfilling
      behind the first that does not (EASY: without delaying its reservation), or stopping
      there with ``backfill="none"``;
    - ``timers``: times at which to be called again even if nothing happens;
    - ``power_on`` / ``power_off``: nodes to switch (platforms with a power model; a node
      switches off only when idle);
    - ``nodes``: where jobs share nodes, the nodes (indices) among which a job of ``start`` or
      ``backfilled`` is placed, by job index: the engine places it there by the cons_tres
      rule and refuses the decision when it does not fit there (jobs not named here go
      wherever the rule puts them in their partitions).

    ``Decision()`` starts nothing (the jobs wait). Immutable (a named tuple: cheap to build at
    every invocation)."""

    start: Sequence[int] = ()
    backfilled: Sequence[int] = ()
    order: Sequence[int] | None = None
    backfill: str = "easy"
    timers: Sequence[float] = ()
    power_on: Sequence[int] = ()
    power_off: Sequence[int] = ()
    nodes: Mapping[int, Sequence[int]] | None = None


def _none_array(dtype: type) -> np.ndarray:
    empty: np.ndarray = np.empty(0, dtype=dtype)
    empty.flags.writeable = False
    return empty


_NO_INTS = _none_array(np.int64)
_NO_BOOLS = _none_array(np.bool_)
_NO_GRES = np.empty((0, 0), dtype=np.int64)
_NO_GRES.flags.writeable = False


class View(NamedTuple):
    """What a scheduler knows at ``now`` (never the real run time of a job).

    Queue arrays are in FCFS order (requeued jobs first); running arrays by estimated end.
    Read-only: a named tuple (the engine builds one at every invocation) of read-only numpy
    arrays and tuples; a policy that wants to change an array works on a copy."""

    now: float
    machine_nodes: int
    #: nodes up and running nothing (on a power-managed platform: awake and idle)
    free: int
    #: waiting jobs: index, trace id, submit time, nodes, requested time (s)
    queue: np.ndarray
    queue_id: np.ndarray
    queue_submit: np.ndarray
    queue_nodes: np.ndarray
    queue_requested: np.ndarray
    #: running jobs: index, trace id, nodes, start, estimated end = max(start + requested, now)
    running: np.ndarray
    running_id: np.ndarray
    running_nodes: np.ndarray
    running_start: np.ndarray
    running_estimated_end: np.ndarray
    #: downtime in progress: (end, nodes down); announced maintenance: (start, end, nodes)
    down: tuple[tuple[float, int], ...]
    announced: tuple[tuple[float, float, int], ...]
    #: per-node power state (IDLE, COMPUTING, ...) on power-managed platforms, else empty
    node_state: np.ndarray
    #: events since the last call: jobs submitted; jobs completed with their start and end
    arrived: np.ndarray
    completed: np.ndarray
    completed_start: np.ndarray
    completed_end: np.ndarray
    #: the agent features of hpcsched.gym (slots x 8 job features, then 9 cluster features),
    #: when the policy sets ``observation_slots``; else None
    observation: np.ndarray | None = None
    #: on a platform with partitions: each partition (name, nodes, free nodes), and each
    #: waiting job's partitions (indices into ``partitions``) where it may start; the engine
    #: starts a job in the first of them where its nodes are free. Empty on one pool.
    partitions: tuple[tuple[str, int, int], ...] = ()
    queue_partitions: tuple[tuple[int, ...], ...] = ()
    #: where jobs share nodes (empty elsewhere): each node's free CPUs, memory (MB) and
    #: generic resources (nodes x kinds, in ``gres_kinds`` order; an exclusive job's node and
    #: a node down offer nothing), and each waiting job's request: tasks, CPUs per task, ``-N``
    #: (0: not given), memory in MB per node or, with ``queue_memory_per_cpu``, per CPU (-1:
    #: all of each node), generic resource units per node, ``--exclusive``
    gres_kinds: tuple[str, ...] = ()
    node_free_cpus: np.ndarray = _NO_INTS
    node_free_memory: np.ndarray = _NO_INTS
    node_free_gres: np.ndarray = _NO_GRES
    queue_tasks: np.ndarray = _NO_INTS
    queue_cpus_per_task: np.ndarray = _NO_INTS
    queue_req_nodes: np.ndarray = _NO_INTS
    queue_memory: np.ndarray = _NO_INTS
    queue_memory_per_cpu: np.ndarray = _NO_BOOLS
    queue_gres: np.ndarray = _NO_INTS
    queue_exclusive: np.ndarray = _NO_BOOLS
    #: where jobs share nodes: the nodes each waiting job would take if it alone started now
    #: (index ranges ``0-3,7``; empty: it does not fit now), by the engine's placement rule
    queue_fit_nodes: tuple[str, ...] = ()

    def fits(self, job: int) -> np.ndarray | None:
        """Whether waiting job ``job`` (index) fits now, and where: the nodes the engine's
        placement would give it if it alone started now (jobs sharing nodes), an empty array
        on whole nodes when its nodes are free (nodes are counted there, not named), ``None``
        when it does not fit now."""
        positions = np.flatnonzero(self.queue == job)
        if not len(positions):
            raise ValueError(f"job index {job} is not waiting")
        k = int(positions[0])
        if self.queue_fit_nodes:
            text = self.queue_fit_nodes[k]
            if not text:
                return None
            return np.asarray(node_list(text), dtype=np.int64)
        need = int(self.queue_nodes[k])
        if self.partitions:  # free in one of the partitions it may start in
            fits = any(self.partitions[p][2] >= need for p in self.queue_partitions[k])
        else:
            fits = need <= self.free
        return _NO_INTS if fits else None

    @property
    def idle_nodes(self) -> np.ndarray:
        """Indices of awake idle nodes (power-managed platforms)."""
        return np.flatnonzero(self.node_state == IDLE)

    @property
    def sleeping_nodes(self) -> np.ndarray:
        return np.flatnonzero(self.node_state == SLEEPING)


@runtime_checkable
class Policy(Protocol):
    """A scheduling policy in Python: a ``name`` and ``decide(view) -> Decision``."""

    name: str

    def decide(self, view: View) -> Decision: ...


class _Adapter:
    """What the engine calls: builds the :class:`View` from the engine's arrays."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.name = policy_name(policy)
        # a policy trained in hpcsched.gym asks for the same features it learned from
        self.observation_slots = getattr(policy, "observation_slots", None)

    def decide(self, arrays: dict[str, Any]) -> Decision:
        view = View(**{name: _read_only(value) for name, value in arrays.items()})
        try:
            decision = self.policy.decide(view)
        except KeyboardInterrupt:  # Ctrl-C and SIGTERM (hpcsched.cli) stay interrupts
            raise
        except BaseException as exc:  # SystemExit and RecursionError too: the policy failed
            raise DecisionError(
                f"{self._at(view)}: decide raised {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(decision, Decision):
            raise DecisionError(
                f"{self._at(view)}: decide returned {shown(decision)} "
                f"({type(decision).__name__}), not a hpcsched.protocol.Decision"
            )
        return decision

    def _at(self, view: View) -> str:
        """``name at t=5``, as the engine names a decision it refuses (t as Rust prints it)."""
        now = int(view.now) if float(view.now).is_integer() else view.now
        return f"{self.name} at t={now}"


def _read_only(value: Any) -> Any:
    """The view's fields as a policy gets them: arrays flagged read-only (an assignment into
    ``view.queue`` raises instead of passing unnoticed), lists as tuples."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, list):
        return tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return value


def policy_name(policy: object) -> str:
    name = getattr(policy, "name", None)
    return str(name) if name else f"python:{type(policy).__qualname__}"


def is_python_policy(policy: object) -> bool:
    return callable(getattr(policy, "decide", None)) and not isinstance(policy, str)


@dataclass(frozen=True)
class PythonPolicySpec:
    """A Python policy as :func:`hpcsched.simulate` records it (the same fields as a
    :class:`~hpcsched.PolicySpec` where they apply)."""

    policy: Any
    source: str | None = None
    window: None = None
    backfill: str = "python"
    search: None = None
    #: the power manager it runs under (a :class:`~hpcsched.PowerSpec`), if any
    power: Any = None

    @property
    def name(self) -> str:
        return policy_name(self.policy)

    @property
    def label(self) -> str:
        return self.name

    @property
    def engine_name(self) -> str:
        return "python"

    @property
    def is_power(self) -> bool:
        return self.power is not None

    @property
    def is_search(self) -> bool:
        return False

    def adapter(self) -> _Adapter:
        return _Adapter(self.policy)

    def __reduce__(self) -> tuple[Any, ...]:
        # A policy loaded from python:FILE:CLASS travels to worker processes as its source
        # (a class loaded from a file path cannot be pickled by reference).
        if self.source is not None:
            return (_load_with_power, (self.source, self.power))
        return (PythonPolicySpec, (self.policy, self.source, None, "python", None, self.power))

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "python": self.source or type(self.policy).__qualname__,
            "power": asdict(self.power) if self.power is not None else None,
        }


def _load_with_power(text: str, power: Any) -> PythonPolicySpec:
    """A Python policy from its source, under the power manager it ran under."""
    return replace(load_policy(text), power=power)


def _classes_in(module: Any) -> str:
    """``its policies: A, B`` (classes with ``decide``), else its classes, else none."""
    classes = [
        name
        for name, value in vars(module).items()
        if isinstance(value, type) and value.__module__ == module.__name__
    ]
    policies = [name for name in classes if callable(getattr(vars(module)[name], "decide", None))]
    if policies:
        return f"its policies (classes with decide): {', '.join(policies)}"
    if classes:
        return f"it defines no class with decide(view); its classes: {', '.join(classes)}"
    return "it defines no class"


def load_policy(text: str) -> PythonPolicySpec:
    """``python:MODULE:CLASS`` or ``python:path/to/file.py:CLASS``: imports the module (the
    working directory is searched first) and instantiates the class without arguments."""
    _, _, target = text.partition("python:")
    module_name, sep, class_name = target.rpartition(":")
    if not sep or not module_name or not class_name:
        raise OptionError(
            f"{shown(text)}: write python:MODULE:CLASS or python:FILE.py:CLASS", option="--policy"
        )
    try:
        if module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(
                os.path.basename(module_name)[:-3], module_name
            )
            if spec is None or spec.loader is None or not os.path.isfile(module_name):
                raise OptionError(f"{module_name}: no such file", option="--policy")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # dataclasses in it look their module up
            spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except OptionError:
        raise
    except Exception as exc:  # the user's module failed to import: say which and why
        raise OptionError(
            f"cannot import {shown(module_name)}: {type(exc).__name__}: {exc}", option="--policy"
        ) from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise OptionError(
            f"{module_name} has no {shown(class_name)}; {_classes_in(module)}", option="--policy"
        )
    try:
        policy = cls()
    except Exception as exc:
        raise OptionError(
            f"{class_name}() failed: {type(exc).__name__}: {exc}", option="--policy"
        ) from None
    if not is_python_policy(policy):
        raise OptionError(f"{class_name} has no decide(view) method", option="--policy")
    return PythonPolicySpec(policy, source=text)
