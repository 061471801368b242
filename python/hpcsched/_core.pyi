"""Type stubs of the native module built from crates/python (PyO3). Bindings only."""

from typing import Any, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "Simulation",
    "__version__",
    "heuristic_names",
    "parse_swf",
    "parse_swf_file",
    "policy_names",
    "power_policy_names",
    "predict_remaining",
    "screen_statistics",
    "start_kind_names",
]

__version__: str

def policy_names() -> list[str]: ...
def heuristic_names() -> list[str]: ...
def power_policy_names() -> list[str]: ...
def start_kind_names() -> list[str]: ...
def parse_swf(data: bytes, path: str, lenient: bool = False) -> dict[str, Any]: ...
def parse_swf_file(path: str, lenient: bool = False) -> dict[str, Any]: ...
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
    ) -> Simulation: ...
    @property
    def now(self) -> float: ...
    @property
    def submitted(self) -> int: ...
    @property
    def invocations(self) -> int: ...
    @property
    def policy_name(self) -> str: ...
    def decisions(self) -> dict[str, Any]: ...
    def power_decisions(self) -> dict[str, Any]: ...
    def timeline(self) -> dict[str, Any]: ...
    def peek(self) -> float | None: ...
    def run_until(self, until: float) -> None: ...
    def run(self) -> None: ...
    def results(self) -> dict[str, Any]: ...
