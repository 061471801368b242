"""Type stubs of the native module built from crates/python (PyO3). Bindings only."""

from typing import Any, final

import numpy as np
import numpy.typing as npt

from hpcsched._records import (
    Capabilities,
    DecisionColumns,
    IconDefaults,
    RunResults,
    SearchDefaults,
    TimelineColumns,
)

__all__ = [
    "BSLD_TAU",
    "MAX_COUNT",
    "MAX_LINE_BYTES",
    "MAX_NODES",
    "MAX_SEED",
    "MAX_TIME",
    "PRE_MAINTENANCE",
    "QUOTED_CHARS",
    "Simulation",
    "__version__",
    "action_names",
    "bounded_slowdowns",
    "heuristic_names",
    "icon_defaults",
    "inflated_cap",
    "manager_names",
    "node_state_names",
    "option_names",
    "parse_swf",
    "parse_swf_file",
    "plan_snapshot",
    "policy_capabilities",
    "policy_names",
    "power_alias",
    "power_mode_names",
    "power_policy_names",
    "predict_remaining",
    "rejection_text",
    "reward_presets",
    "reward_terms",
    "screen_statistics",
    "search_defaults",
    "start_kind_names",
    "utilization",
]

__version__: str
MAX_NODES: int
BSLD_TAU: float
PRE_MAINTENANCE: float
MAX_TIME: float
MAX_LINE_BYTES: int
QUOTED_CHARS: int
MAX_COUNT: int
MAX_SEED: int

def inflated_cap(compressed: int) -> int: ...
def node_state_names() -> list[str]: ...
def bounded_slowdowns(
    wait: npt.NDArray[np.float64], run_time: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]: ...
def utilization(
    start: npt.NDArray[np.float64],
    end: npt.NDArray[np.float64],
    nodes: npt.NDArray[np.float64],
    machine_nodes: int,
    down_start: npt.NDArray[np.float64],
    down_end: npt.NDArray[np.float64],
    down_scheduled: npt.NDArray[np.bool_],
    down_nodes: npt.NDArray[np.int64],
    horizon: tuple[float, float],
) -> tuple[
    float | None,
    list[tuple[float, float, float | None]],
    list[tuple[int, float, float | None]],
]: ...
def policy_capabilities() -> dict[str, Capabilities]: ...
def search_defaults() -> SearchDefaults: ...
def option_names() -> dict[str, list[str]]: ...
def reward_terms() -> list[str]: ...
def reward_presets() -> dict[str, dict[str, float]]: ...
def icon_defaults() -> IconDefaults: ...
def policy_names() -> list[str]: ...
def power_alias(name: str) -> tuple[str, str, str] | None: ...
def power_mode_names() -> list[str]: ...
def rejection_text(bits: int) -> str: ...
def manager_names() -> list[str]: ...
def action_names(spec: str) -> list[str]: ...
def heuristic_names() -> list[str]: ...
def power_policy_names() -> list[str]: ...
def start_kind_names() -> list[str]: ...
def parse_swf(data: bytes, path: str, lenient: bool = False) -> dict[str, Any]: ...
def parse_swf_file(path: str, lenient: bool = False) -> dict[str, Any]: ...
def plan_snapshot(
    now: float,
    machine_nodes: int,
    down_nodes: int,
    pending_id: npt.NDArray[np.int64],
    pending_submit: npt.NDArray[np.float64],
    pending_nodes: npt.NDArray[np.int64],
    pending_limit: npt.NDArray[np.float64],
    running_id: npt.NDArray[np.int64],
    running_start: npt.NDArray[np.float64],
    running_nodes: npt.NDArray[np.int64],
    running_limit: npt.NDArray[np.float64],
    maint_start: npt.NDArray[np.float64],
    maint_end: npt.NDArray[np.float64],
    maint_nodes: npt.NDArray[np.int64],
    policy: str,
    window: int | None,
    backfill: str,
    search: dict[str, Any] | None = None,
) -> dict[str, Any]: ...
def screen_statistics(samples: list[float]) -> tuple[float, float, float]: ...
def predict_remaining(
    observed: list[tuple[float, float]],
    requested: float,
    elapsed: float,
    smoothing: float,
    sigma_floor: float,
) -> float: ...

@final
class Simulation:
    def __new__(
        cls,
        job_id: npt.NDArray[np.int64],
        submit: npt.NDArray[np.float64],
        run_time: npt.NDArray[np.float64],
        requested_time: npt.NDArray[np.float64],
        nodes: npt.NDArray[np.int64],
        machine_nodes: int,
        policy: str,
        window: int | None,
        backfill: str,
        overrun: str,
        down_start: npt.NDArray[np.float64],
        down_end: npt.NDArray[np.float64],
        down_scheduled: npt.NDArray[np.bool_],
        down_nodes: npt.NDArray[np.int64],
        announce_lead: float,
        search: dict[str, Any] | None = None,
        power: dict[str, float] | None = None,
        manager: dict[str, Any] | None = None,
        python: Any = None,
        user: npt.NDArray[np.int64] | None = None,
        estimates: str = "requested",
        down_asleep: npt.NDArray[np.bool_] | None = None,
        max_wait: float | None = None,
        groups: list[tuple[int, dict[str, Any]]] | None = None,
        decision_log: str = "compact",
    ) -> Simulation: ...
    @property
    def now(self) -> float: ...
    @property
    def submitted(self) -> int: ...
    @property
    def invocations(self) -> int: ...
    @property
    def policy_name(self) -> str: ...
    @property
    def pending_log_rows(self) -> int: ...
    def decisions(self) -> DecisionColumns: ...
    def power_decisions(self) -> dict[str, Any]: ...
    def timeline(self, all: bool = True) -> TimelineColumns: ...
    def peek(self) -> float | None: ...
    def run_until(self, until: float) -> None: ...
    def run_events(self, events: int) -> bool: ...
    def run(self) -> None: ...
    def results(self) -> RunResults: ...
    def view(self) -> dict[str, Any]: ...
    def advance_to_decision(self, every_event: bool) -> bool: ...
    def observe(
        self, slots: int
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]]: ...
    def apply(self, decision: Any) -> None: ...
    def apply_action(self, index: int, actions: str) -> int: ...
    def apply_slot(self, slot: int, slots: int) -> bool: ...
    def episode_terms(self) -> tuple[float, float, float, float]: ...
    @property
    def queue_length(self) -> int: ...
    @property
    def running_length(self) -> int: ...
