"""The records the native module returns, as types (``hpcsched._core`` is typed by
``_core.pyi``; these TypedDicts name what its dictionaries hold). Columns are numpy arrays in
replay order (jobs) or in record order (decisions, timeline)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    F64 = npt.NDArray[np.float64]
    U32 = npt.NDArray[np.uint32]
    U64 = npt.NDArray[np.uint64]
    I64 = npt.NDArray[np.int64]
    Bools = npt.NDArray[np.bool_]
    U8 = npt.NDArray[np.uint8]


class EnergyJoules(TypedDict):
    """Energy from time 0 to the last completion, per node state (J)."""

    computing: float
    idle: float
    switching_on: float
    switching_off: float
    sleeping: float
    total: float
    wasted: float


class _RunResultsBase(TypedDict):
    start: F64
    end: F64
    start_kind: U8
    requeues: U32
    killed: Bools
    lost_job: U32
    lost_start: F64
    lost_end: F64
    reservation_time: F64
    reservation_job: U32
    reservation_shadow: F64
    reservation_extra: U32
    node_seconds: dict[str, float]
    horizon: float
    invocations: int
    event_times: int


class RunResults(_RunResultsBase, total=False):
    """``Simulation.results()``: per-job outcomes (start kinds are codes into
    ``start_kind_names()``), attempts lost to downtime, EASY reservations, node-seconds per
    state, and ``energy_j`` when the platform has a power model; where jobs share nodes, what
    each took (``alloc_*``: its nodes as index ranges, CPUs and MB in all, -1 never started,
    and generic resources as ``gpu=2``); on a site of whole nodes, each job's nodes named
    inside the atoms it took (``alloc_nodes``) and each killed attempt's (``lost_alloc_nodes``)."""

    energy_j: EnergyJoules
    alloc_nodes: list[str]
    lost_alloc_nodes: list[str]
    alloc_cpus: I64
    alloc_memory: I64
    alloc_gres: list[str]


class _DecisionColumnsBase(TypedDict):
    time: F64
    queue_length: U32
    outcomes: U32
    iterations: U64
    heuristic: list[str]
    window: I64
    actions: U32
    name: list[str]
    started: U32
    drain: Bools
    seconds: F64


class DecisionColumns(_DecisionColumnsBase, total=False):
    """``Simulation.decisions()``: one row per look-ahead decision (empty for others); with
    ``decision_log="full"`` also every distinct outcome of each decision, flat, decision ``i``
    owning ``candidate_offsets[i]:candidate_offsets[i + 1]``."""

    candidate_offsets: U64
    candidate_names: list[str]
    candidate_actions: U32
    candidate_started: U32
    candidate_visits: U64
    candidate_values: F64
    candidate_chosen: Bools


class TimelineColumns(TypedDict):
    """``Simulation.timeline()``: node counts per power state after each change, and the
    machine's power then."""

    time: F64
    idle: U32
    computing: U32
    switching_on: U32
    switching_off: U32
    sleeping: U32
    down: U32
    power_kw: F64


class SwfColumns(TypedDict):
    """``parse_swf`` / ``parse_swf_file``: the header's ``(key, value)`` lines, the text of its
    other comment lines, the malformed lines skipped (line, field or None, reason), and one array
    per SWF field read, in file order (``wait`` is field 3 as written: -1 when unknown)."""

    header: list[tuple[str, str]]
    comments: list[str]
    malformed: list[tuple[int, str | None, str]]
    job_id: I64
    submit: F64
    wait: F64
    run_time: F64
    allocated_procs: F64
    requested_procs: F64
    requested_time: F64
    requested_memory: F64
    status: I64
    user: I64
    group: I64
    queue: I64
    partition: I64
    line: U64


class Capabilities(TypedDict):
    """What a built-in policy takes (``policy_capabilities()``)."""

    searches: bool
    window: bool
    backfill: str | None
    power: bool


class SearchDefaults(TypedDict):
    iterations: int | None
    time_budget: float | None
    depth: int
    gamma: float
    exploration: float
    trees: int
    seed: int


#: ``icon_defaults()``: SNF-ICON Table I, by ``PowerSpec`` field name.
IconDefaults = dict[str, Any]
