"""Policy specifications: a name plus its parameters, validated before any run starts.

The names themselves come from the engine (``_core.policy_names()``): the 17 heuristics of
MARS Table II and ``snf``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hpcsched import _core
from hpcsched.exceptions import OptionError

BACKFILLS = ("easy", "none")


def policy_names() -> list[str]:
    """Names accepted by ``--policy``."""
    return list(_core.policy_names())


@dataclass(frozen=True)
class PolicySpec:
    """A built-in policy: ``name`` (a heuristic or ``snf``), the heuristic's ``window`` (jobs at
    the head of the queue it sorts; ``None`` = the whole queue) and ``backfill``."""

    name: str
    window: int | None = None
    backfill: str = "easy"

    def __post_init__(self) -> None:
        name = str(self.name).strip().lower()
        object.__setattr__(self, "name", name)
        if name not in policy_names():
            raise OptionError(
                f"unknown policy {self.name!r}; choose one of: {', '.join(policy_names())}",
                option="--policy",
            )
        if self.window is not None:
            if isinstance(self.window, bool) or not isinstance(self.window, int):
                raise OptionError(
                    f"must be a positive integer, not {self.window!r}", option="--window"
                )
            if self.window < 1:
                raise OptionError(f"must be at least 1, not {self.window}", option="--window")
            if name == "snf":
                raise OptionError(
                    "snf orders the whole queue; it takes no window", option="--window"
                )
        if self.backfill not in BACKFILLS:
            raise OptionError(
                f"unknown backfill {self.backfill!r}; choose one of: {', '.join(BACKFILLS)}",
                option="--backfill",
            )
        if name == "snf":
            # SNF never backfills (DESIGN §5); record that instead of the default.
            object.__setattr__(self, "backfill", "none")

    @property
    def label(self) -> str:
        """A short human-readable name, e.g. ``wfp3 w=256 +EASY``."""
        if self.name == "snf":
            return "SNF"
        window = "" if self.window is None else f" w={self.window}"
        backfill = " +EASY" if self.backfill == "easy" else ""
        return f"{self.name.upper()}{window}{backfill}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)
