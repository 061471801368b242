"""Policy specifications: a name plus its parameters, validated before any run starts.

The engine names its policies (``_core.policy_names()``): the 17 heuristics of MARS Table II,
``snf``, ``mars`` and ``random``. Two presets add a reward to ``mars``: ``mars-cw`` (cumulative
wait) and ``mars-cu`` (cumulative utilization).

Any of them may run under a power manager (``PowerSpec(manager=...)``: ``ipm``, ``icon`` and
ICON's ablations ``icon-ng``, ``icon-nf``, ``icon-ngnf``). The SNF-ICON paper's names stand for
such pairs: ``fcfs-b+ipm`` is FCFS with EASY under IPM, ``snf+ipm`` SNF under IPM, ``snf-icon``
(and ``-ng``, ``-nf``, ``-ngnf``) SNF under ICON (and its ablations).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from hpcsched import _core
from hpcsched._records import Capabilities, SearchDefaults
from hpcsched.exceptions import (
    OptionError,
    close_names,
    did_you_mean,
    shown,
    unknown_name,
)
from hpcsched.rewards import REWARD_TERMS, parse_reward

#: The orderings an action or guide names (fcfs, sjf, wfp3, f1, ...).
HEURISTICS: tuple[str, ...] = tuple(_core.heuristic_names())
#: Whether jobs behind a blocked top job may start (the engine's names).
BACKFILLS: tuple[str, ...] = tuple(_core.option_names()["backfill"])
#: Not a scheduler: the starts the trace records, replayed (``hpcsched.run.recorded``).
RECORDED = "recorded"
#: What each policy takes: the engine's (``_core.policy_capabilities``) and the recorded
#: schedule's (no window, no backfilling, no power manager): the facts every check reads.
CAPABILITIES: dict[str, Capabilities] = {
    **_core.policy_capabilities(),
    RECORDED: {"searches": False, "window": False, "backfill": "none", "power": False},
}
SEARCH_POLICIES = tuple(name for name, c in CAPABILITIES.items() if c["searches"])
#: The paper's names for a queue policy under a power manager (``snf-icon``, ``fcfs-b+ipm``...).
POWER_POLICIES = tuple(name for name, c in CAPABILITIES.items() if c["power"])
#: Power managers a queue policy may run under (``none``: nodes never sleep).
MANAGERS = tuple(_core.manager_names())
#: Defaults of the look-ahead and of SNF-ICON, as the engine defines them.
_SEARCH_DEFAULTS: SearchDefaults = _core.search_defaults()
_ICON_DEFAULTS: dict[str, Any] = _core.icon_defaults()
#: How many of the terms every run key lists (later ones only when weighted).
KEYED_TERMS = REWARD_TERMS.index("maintenance_utilization")
#: The terms of the paper's forms, which the gym environment reports.
PAPER_TERMS = ("wait", "bsld", "utilization", "energy")
PRESETS = {"mars-cw": "cw", "mars-cu": "cu", "mars-wb": "wb"}
#: The names each look-ahead option (and EASY's estimates) takes, as the engine lists them.
_OPTION_NAMES: dict[str, list[str]] = _core.option_names()
RUNTIME_MODELS = tuple(_OPTION_NAMES["runtime_model"])
ARRIVAL_MODELS = tuple(_OPTION_NAMES["arrivals"])
ROLLOUTS = tuple(_OPTION_NAMES["rollout"])
LOOKAHEADS = tuple(_OPTION_NAMES["lookahead"])
PRIORS = tuple(_OPTION_NAMES["prior"])
ESTIMATES = tuple(_OPTION_NAMES["estimates"])


def capabilities_of(name: str) -> Capabilities:
    """What policy ``name`` takes (``searches``, ``window``, ``backfill``: the mode it always
    uses or None, ``power``), as the engine states it; presets are ``mars``."""
    return CAPABILITIES["mars" if name in PRESETS else name]


def policy_names() -> list[str]:
    """Names accepted by ``--policy``."""
    return [*_core.policy_names(), *PRESETS, RECORDED]


def check_actions(spec: object, option: str) -> list[str]:
    """The names of the actions ``spec`` lists (``paper``, or e.g. ``fcfs,wfp3:256,sjf``), as
    the engine's parser reads them; ``OptionError`` naming ``option`` with its reason (an
    unknown heuristic, a bad window, an empty list, item or window)."""
    if not isinstance(spec, str):
        raise OptionError(
            f"give actions such as 'paper' or 'fcfs,sjf:256', not {shown(spec)}", option=option
        )
    try:
        return _core.action_names(spec)
    except ValueError as exc:
        reason = str(exc)  # the engine's; the near misses of an unknown heuristic added here
        unknown = re.match(r'unknown heuristic "([^"]*)"', reason)
        close = did_you_mean(close_names(unknown[1], HEURISTICS)) if unknown else ""
        raise OptionError(f"{reason}; {close}" if close else reason, option=option) from None


def check_integer(name: str, value: object, minimum: int, maximum: int) -> None:
    """``OptionError`` naming ``--name`` unless ``value`` is an integer in [minimum, maximum]
    (the range the engine's type for it takes)."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise OptionError(
            f"must be an integer from {minimum} to {maximum}, not {shown(value)}",
            option=f"--{name.replace('_', '-')}",
        )


@dataclass(frozen=True)
class SearchSpec:
    """Parameters of MARS (and of the random baseline, which uses ``actions`` and ``seed``).

    ``iterations`` is per tree and per decision; ``time_budget`` (seconds per decision) stops
    every tree when reached. ``trees`` root-parallel trees run on ``threads`` threads; results
    depend on ``trees`` and the seed, never on ``threads`` (with an iteration budget).

    The forward model: ``runtime_model`` ``requested`` (jobs run for their request, as in the
    paper), ``history`` (ratios actual / requested drawn from jobs completed so far) or
    ``running`` (as ``history`` for the running jobs only; waiting jobs run for their request);
    ``arrivals`` ``none`` or ``recent`` (a block of ``arrival_horizon`` seconds of submissions
    from the last ``arrival_window`` seconds, replayed from now on). With either drawn, each
    tree searches its own sampled future. ``horizon`` is the span of the ``utilization``
    reward term. Rollouts pick uniformly among the ``actions`` (the paper), among the distinct
    ``outcomes``, or are ``guided`` by the ordering ``guide`` with ``epsilon`` random choices.

    ``lookahead`` ``tree`` is the paper's Monte Carlo Tree Search; ``rollout`` follows each
    distinct outcome of the decision with each of the ``bases`` orderings (EASY) to the
    horizon, in ``trees`` x (``iterations`` / (outcomes x bases)) sampled futures (one when
    nothing is sampled); an outcome is worth its best base's mean return, and the outcome
    worth most is taken (Bertsekas's rollout algorithm). ``prior`` ``rollout`` gives the tree
    search a prior at expansion: each new child starts with one visit worth that value, and
    the best is tried first.
    """

    reward: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)
    actions: str = "paper"
    iterations: int | None = _SEARCH_DEFAULTS["iterations"]
    time_budget: float | None = _SEARCH_DEFAULTS["time_budget"]
    depth: int = _SEARCH_DEFAULTS["depth"]
    gamma: float = _SEARCH_DEFAULTS["gamma"]
    exploration: float = _SEARCH_DEFAULTS["exploration"]
    #: P = the number of cores (the paper's default)
    trees: int = field(default_factory=lambda: int(_SEARCH_DEFAULTS["trees"]))
    threads: int | None = None
    seed: int = _SEARCH_DEFAULTS["seed"]
    runtime_model: str = "requested"
    arrivals: str = "none"
    arrival_window: float = 7 * 86400.0
    arrival_horizon: float = 86400.0
    horizon: float = 86400.0
    rollout: str = "actions"
    guide: str = "f1:256"
    epsilon: float = 0.1
    lookahead: str = "tree"
    bases: str = "f1:256,f2:256,sjf:256,wfp3:256,unicef:256,fcfs"
    prior: str = "none"

    def __post_init__(self) -> None:
        # counts within the engine's u32, the seed within its u64 (issue 25: 2**64 was an
        # internal OverflowError at run time)
        for name, minimum, maximum in (
            ("iterations", 1, _core.MAX_COUNT),
            ("depth", 1, _core.MAX_COUNT),
            ("trees", 1, _core.MAX_COUNT),
            ("threads", 1, _core.MAX_COUNT),
            ("seed", 0, _core.MAX_SEED),
        ):
            value = getattr(self, name)
            if value is not None or name in ("depth", "trees", "seed"):
                check_integer(name, value, minimum, maximum)
        if self.time_budget is not None and not (
            isinstance(self.time_budget, int | float)
            and not isinstance(self.time_budget, bool)
            and math.isfinite(self.time_budget)
            and 0 < self.time_budget <= _core.MAX_TIME
        ):
            raise OptionError(
                f"must be a number of seconds in (0, {_core.MAX_TIME:g}], "
                f"not {shown(self.time_budget)}",
                option="--time-budget",
            )
        if self.iterations is None and self.time_budget is None:
            raise OptionError("give --iterations, --time-budget or both", option="--iterations")
        if not 0 < self.gamma < 1:
            raise OptionError(f"must be in (0, 1), not {shown(self.gamma)}", option="--gamma")
        if not (math.isfinite(self.exploration) and self.exploration >= 0):
            raise OptionError(
                f"must be >= 0, not {shown(self.exploration)}", option="--exploration"
            )
        for name, value, choices in (
            ("runtime_model", self.runtime_model, RUNTIME_MODELS),
            ("arrivals", self.arrivals, ARRIVAL_MODELS),
            ("rollout", self.rollout, ROLLOUTS),
            ("lookahead", self.lookahead, LOOKAHEADS),
            ("prior", self.prior, PRIORS),
        ):
            if value not in choices:
                raise OptionError(
                    unknown_name(name.replace("_", " "), value, choices),
                    option=f"--{name.replace('_', '-')}",
                )
        for name in ("arrival_window", "arrival_horizon", "horizon"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (math.isfinite(value) and 0 < value <= _core.MAX_TIME)
            ):
                raise OptionError(
                    f"must be a positive number of seconds, not {shown(value)}",
                    option=f"--{name.replace('_', '-')}",
                )
        if not (isinstance(self.epsilon, int | float) and 0 <= self.epsilon <= 1):
            raise OptionError(f"must be in [0, 1], not {shown(self.epsilon)}", option="--epsilon")
        for name in ("actions", "guide", "bases"):
            count = len(check_actions(getattr(self, name), f"--{name}"))
            if name == "guide" and count != 1:
                raise OptionError(
                    f"the guide is one ordering with its window (e.g. f1:256), not "
                    f"{shown(self.guide)} ({count} actions)",
                    option="--guide",
                )
        # Shorter weight tuples (older configs) get zero weights for the later terms.
        weights = tuple(self.reward) + (0.0,) * (len(REWARD_TERMS) - len(self.reward))
        if len(weights) != len(REWARD_TERMS):
            raise OptionError(f"one weight per term ({', '.join(REWARD_TERMS)})", option="--reward")
        object.__setattr__(
            self, "reward", parse_reward(dict(zip(REWARD_TERMS, weights, strict=True)))
        )
        self._check_used()

    @property
    def orders_by_slurm(self) -> bool:
        """Whether an action, the base orderings or the guide is Slurm's priority order
        (``slurm``): the run then keeps Slurm's priorities (``--slurm-conf``, or Slurm's
        defaults) beside the search. Options a look-ahead does not use keep their defaults."""
        return any(
            name.split(":")[0] == "slurm"
            for option in (self.actions, self.bases, self.guide)
            for name in _core.action_names(option)
        )

    def _check_used(self) -> None:
        """An option this configuration does not use is an error naming it and why, never
        ignored: a value other than its default given to a part of the search that does not
        run (the options are dataclass fields, so "given" is "not the default")."""
        tree = self.lookahead == "tree"
        unused = {
            "prior": not tree and "the rollout look-ahead has no tree to give a prior",
            "bases": tree
            and self.prior == "none"
            and "only --lookahead rollout and --prior rollout follow bases",
            "rollout": not tree
            and "the rollout look-ahead follows the --bases orderings, not random rollouts",
            "exploration": not tree and "the rollout look-ahead has no tree to explore",
            "guide": self.rollout != "guided" and "only --rollout guided follows a guide",
            "epsilon": self.rollout != "guided" and "only --rollout guided takes random choices",
            "arrival_window": self.arrivals == "none"
            and "only --arrivals recent replays recent submissions",
            "arrival_horizon": self.arrivals == "none"
            and "only --arrivals recent replays recent submissions",
            "horizon": self.reward[REWARD_TERMS.index("utilization")] == 0
            and "only the utilization reward term has a horizon",
        }
        defaults = {f.name: f.default for f in fields(self)}
        for name, why in unused.items():
            if why and getattr(self, name) != defaults[name]:
                raise OptionError(
                    f"{why}; this configuration does not use it",
                    option=f"--{name.replace('_', '-')}",
                )

    def to_native(self, overrun: str = "continue") -> dict[str, object]:
        """The options as the engine reads them (``overrun``: the run's, so that sampled run
        times never exceed a request when jobs are killed at it)."""
        native = asdict(self)
        native["threads"] = self.threads or self.trees
        native["reward"] = dict(zip(REWARD_TERMS, self.reward, strict=True))
        native["overrun_kill"] = overrun == "kill"
        return native

    @property
    def samples(self) -> bool:
        """The forward model draws futures (each tree its own)."""
        return self.runtime_model != "requested" or self.arrivals != "none"


#: PowerSpec's integers and their largest values, the engine's types: u32 spares, the seed
#: a u64; sample counts are usize, held to u32 as the other counts (past any screen's history).
_POWER_COUNTS = {
    "min_spares": _core.MAX_COUNT,
    "max_spares": _core.MAX_COUNT,
    "screen_min_samples": _core.MAX_COUNT,
    "screen_max_samples": _core.MAX_COUNT,
    "sample_transitions": _core.MAX_SEED,
}


@dataclass(frozen=True)
class PowerSpec:
    """Parameters of the power managers (IPM and SNF-ICON; SNF-ICON Table I defaults).

    ``manager`` is ``ipm``, ``icon``, ``icon-ng``, ``icon-nf`` or ``icon-ngnf`` (implied by the
    paper's policy names such as ``snf-icon``). Times are in seconds. ``sample_transitions``
    draws each transition's latency from Normal(mean, std) clipped at 0 with that seed; by
    default transitions take their mean. Idle nodes always respect their timeout (Table I's
    "respect idle timeout: enabled")."""

    manager: str | None = None
    idle_timeout: float = _core.DEFAULT_IDLE_TIMEOUT
    sample_transitions: int | None = None
    alpha: float = _ICON_DEFAULTS["alpha"]
    beta: float = _ICON_DEFAULTS["beta"]
    initial_arrival_rate: float = _ICON_DEFAULTS["initial_arrival_rate"]
    arrival_smoothing: float = _ICON_DEFAULTS["arrival_smoothing"]
    service_smoothing: float = _ICON_DEFAULTS["service_smoothing"]
    resource_smoothing: float = _ICON_DEFAULTS["resource_smoothing"]
    sigma_floor: float = _ICON_DEFAULTS["sigma_floor"]
    min_spares: int = _ICON_DEFAULTS["min_spares"]
    max_spares: int | None = _ICON_DEFAULTS["max_spares"]
    max_horizon: float = _ICON_DEFAULTS["max_horizon"]
    recency_window: float = _ICON_DEFAULTS["recency_window"]
    screen_window: float = _ICON_DEFAULTS["screen_window"]
    screen_min_samples: int = _ICON_DEFAULTS["screen_min_samples"]
    screen_max_samples: int = _ICON_DEFAULTS["screen_max_samples"]
    cv_tolerance: float = _ICON_DEFAULTS["cv_tolerance"]
    max_autocorrelation: float = _ICON_DEFAULTS["max_autocorrelation"]
    ks_multiplier: float = _ICON_DEFAULTS["ks_multiplier"]
    ks_scale: float = _ICON_DEFAULTS["ks_scale"]
    require_service_samples: bool = _ICON_DEFAULTS["require_service_samples"]
    stale_completion_shutdown: bool = _ICON_DEFAULTS["stale_completion_shutdown"]

    def __post_init__(self) -> None:
        if self.manager is not None and self.manager not in MANAGERS:
            raise OptionError(
                unknown_name("power manager", self.manager, ["none", *MANAGERS]),
                option="--power",
            )
        for name, value in asdict(self).items():
            if value is None or name in (
                "manager",
                "require_service_samples",
                "stale_completion_shutdown",
                *_POWER_COUNTS,
            ):
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise OptionError(
                    f"must be a number >= 0, not {shown(value)}",
                    option=f"--{name.replace('_', '-')}",
                )
        for name in ("arrival_smoothing", "service_smoothing", "resource_smoothing"):
            if not 0 < getattr(self, name) <= 1:
                raise OptionError("must be in (0, 1]", option=f"--{name.replace('_', '-')}")
        for name in (
            "initial_arrival_rate",
            "sigma_floor",
            "screen_window",
            "ks_scale",
            "ks_multiplier",
        ):
            if getattr(self, name) <= 0:
                raise OptionError("must be > 0", option=f"--{name.replace('_', '-')}")
        for name in ("idle_timeout", "max_horizon", "recency_window", "screen_window"):
            if getattr(self, name) > _core.MAX_TIME:
                raise OptionError(
                    f"must be a number of seconds from 0 to {_core.MAX_TIME:g}, "
                    f"not {shown(getattr(self, name))}",
                    option=f"--{name.replace('_', '-')}",
                )
        for name, maximum in _POWER_COUNTS.items():
            value = getattr(self, name)
            if value is not None:
                check_integer(name, value, 0, maximum)

        for low, high in (
            ("min_spares", "max_spares"),
            ("screen_min_samples", "screen_max_samples"),
        ):
            if getattr(self, high) is not None and getattr(self, low) > getattr(self, high):
                raise OptionError(
                    f"must be at most {high} ({getattr(self, high)}), not {getattr(self, low)}",
                    option=f"--{low.replace('_', '-')}",
                )
        self._check_used()

    def _check_used(self) -> None:
        """A parameter the manager does not use, given a value other than its default, is an
        error naming it: IPM takes only the idle timeout and the transition seed; the -ng
        ablations have no arrival-recency gate. (Without a manager yet, the policy's name
        gives it later: the spec is checked again then.)"""
        defaults = {f.name: f.default for f in fields(self)}
        for name in _ICON_DEFAULTS:
            if getattr(self, name) == defaults[name]:
                continue
            if self.manager == "ipm":
                why = "an SNF-ICON parameter: ipm only switches nodes off after --idle-timeout"
            elif name == "recency_window" and self.manager in ("icon-ng", "icon-ngnf"):
                why = f"{self.manager} has no arrival-recency gate"
            else:
                continue
            raise OptionError(
                f"{why}; this configuration does not use it", option=f"--{name.replace('_', '-')}"
            )

    def to_native(self) -> dict[str, object]:
        native = asdict(self)
        native["name"] = native.pop("manager")
        return native


#: The largest window: any window past the queue's length orders the whole queue.
MAX_WINDOW = 2**32 - 1


@dataclass(frozen=True)
class PolicySpec:
    """A policy: ``name`` (a heuristic, ``snf``, ``mars``, ``mars-cw``, ``mars-cu`` or
    ``random``, or a paper name such as ``snf-icon``), the heuristic's ``window`` (jobs at the
    head of the queue it sorts; ``None`` = the whole queue), ``backfill``, for
    ``mars``/``random`` the ``search`` parameters, and the ``power`` manager it runs under.
    ``estimates`` is what a heuristic's EASY plans with: ``requested`` times (production EASY)
    or ``history``, run times predicted from the jobs completed so far (Tsafrir, Etsion and
    Feitelson 2007). ``backfill`` defaults to ``easy`` for the heuristics and is fixed for the
    others (SNF and the SNF managers never backfill, MARS and FCFS/B+IPM always do): giving
    another value is an error, not ignored."""

    name: str
    window: int | None = None
    #: None (unset) is resolved in __post_init__: after it, always "easy" or "none"
    backfill: str | None = None
    search: SearchSpec | None = None
    #: a PowerSpec (a manager's name, ``"icon"``, is taken as its PowerSpec with defaults)
    power: PowerSpec | None = None
    estimates: str = "requested"
    #: SNF's starvation guard (seconds): jobs waiting that long go first and hold a
    #: reservation; None (the paper's SNF) by default
    max_wait: float | None = None

    def __post_init__(self) -> None:
        name = str(self.name).strip().lower()
        object.__setattr__(self, "name", name)
        power: object = self.power
        if isinstance(power, str):  # power="icon": the manager's name with its defaults
            object.__setattr__(self, "power", PowerSpec(manager=power))
        elif power is not None and not isinstance(power, PowerSpec):
            raise OptionError(
                f"give a PowerSpec or a manager's name, not {shown(power)}", option="--power"
            )
        if self.max_wait is not None:
            if self.engine_name_of(name) != "snf":
                raise OptionError(
                    f"{name} has no starvation guard (SNF and SNF-ICON do)", option="--max-wait"
                )
            value = self.max_wait
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (math.isfinite(value) and 0 <= value <= _core.MAX_TIME)
            ):
                raise OptionError(
                    f"must be a number of seconds from 0 to {_core.MAX_TIME:g}, not {shown(value)}",
                    option="--max-wait",
                )
            object.__setattr__(self, "max_wait", float(value))
        if name not in policy_names():
            raise OptionError(
                unknown_name("policy", self.name, policy_names(), listed_by="'hpcsched policies'"),
                option="--policy",
            )
        if self.window is not None:
            if isinstance(self.window, bool) or not isinstance(self.window, int):
                raise OptionError(
                    f"must be a positive integer, not {shown(self.window)}", option="--window"
                )
            if not 1 <= self.window <= MAX_WINDOW:
                raise OptionError(
                    f"must be an integer from 1 to {MAX_WINDOW} (omit it for the whole queue), "
                    f"not {shown(self.window)}",
                    option="--window",
                )
            if name in ("snf", "slurm"):
                raise OptionError(
                    f"{name} orders the whole queue; it takes no window", option="--window"
                )
            if name == RECORDED:
                raise OptionError(
                    "recorded replays the starts the trace records; it takes no window",
                    option="--window",
                )
            if self.is_search:
                raise OptionError(
                    f"{name} chooses its own windows (see --actions)", option="--window"
                )
        forced = capabilities_of(name)["backfill"]
        if self.backfill is not None and self.backfill not in BACKFILLS:
            raise OptionError(
                unknown_name("backfill", self.backfill, BACKFILLS),
                option="--backfill",
            )
        if name == "slurm" and self.backfill not in (None, forced):
            raise OptionError(
                "slurm backfills as the site's slurm.conf says, not as --backfill does: "
                "SchedulerType=sched/builtin in it (--slurm-conf FILE) runs Slurm without "
                "backfilling; drop --backfill",
                option="--backfill",
            )
        if forced is not None and self.backfill not in (None, forced):
            raise OptionError(
                f"{name} always runs with backfill {forced}; drop --backfill",
                option="--backfill",
            )
        object.__setattr__(self, "backfill", self.backfill or forced or "easy")
        if self.estimates not in ESTIMATES:
            raise OptionError(
                unknown_name("estimate", self.estimates, ESTIMATES),
                option="--estimates",
            )
        if self.estimates != "requested" and (
            not capabilities_of(name)["window"] or self.backfill != "easy"
        ):
            raise OptionError(
                "predicted run times are for a heuristic with EASY backfilling and no power "
                "manager",
                option="--estimates",
            )
        if self.is_search:
            search = self.search or SearchSpec()
            if name in PRESETS:
                search = replace(search, reward=parse_reward(PRESETS[name]))
            object.__setattr__(self, "search", search)
        elif self.search is not None:
            raise OptionError(f"{name} takes no search options", option="--policy")
        alias = _core.power_alias(name)
        if alias is not None:
            if self.window is not None:
                raise OptionError(
                    f"{name} orders the queue itself; it takes no window", option="--window"
                )
            _, backfill, manager = alias
            power = self.power or PowerSpec()
            if power.manager is None:
                power = replace(power, manager=manager)
            elif power.manager != manager:
                raise OptionError(
                    f"{name} runs under {manager}; for another manager give the queue policy "
                    f"(e.g. --policy {alias[0]} --power {power.manager})",
                    option="--power",
                )
            object.__setattr__(self, "power", power)
            object.__setattr__(self, "backfill", backfill)
        elif self.power is not None and self.power.manager is None:
            raise OptionError(
                f"give the power manager {name} runs under ({', '.join(MANAGERS)})",
                option="--power",
            )
        if name == RECORDED and self.power is not None:
            raise OptionError(
                "recorded replays the starts the trace records; no power manager runs under it",
                option="--power",
            )

    @property
    def is_power(self) -> bool:
        """Whether a power manager runs under the queue policy."""
        return self.power is not None

    @property
    def is_search(self) -> bool:
        return capabilities_of(self.name)["searches"]

    @property
    def manager(self) -> str | None:
        """The power manager (``ipm``, ``icon``, ...), None without one."""
        return self.power.manager if self.power is not None else None

    @property
    def engine_name(self) -> str:
        """The engine's name for the queue policy (presets are ``mars`` with a reward, paper
        names the queue policy they stand for)."""
        return self.engine_name_of(self.name)

    @staticmethod
    def engine_name_of(name: str) -> str:
        alias = _core.power_alias(name)
        if alias is not None:
            return alias[0]
        return "mars" if name in PRESETS else name

    @property
    def label(self) -> str:
        """A short human-readable name, e.g. ``WFP3 w=256 +EASY`` or ``MARS-CW + ICON``."""
        if _core.power_alias(self.name) is not None:
            return self.name.upper().replace("FCFS-B", "FCFS/B")
        if self.name == RECORDED:
            return "Recorded"
        if self.name == "snf":
            base = "SNF"
        elif self.name == "slurm":
            base = "Slurm"
        elif self.is_search:
            base = self.name.upper() if self.name in PRESETS else self.name.capitalize()
            if self.search is not None and self.search.lookahead != "tree":
                base += f" ({self.search.lookahead})"
        else:
            window = "" if self.window is None else f" w={self.window}"
            backfill = " +EASY" if self.backfill == "easy" else ""
            predicted = " (predicted)" if self.estimates == "history" else ""
            base = f"{self.name.upper()}{window}{backfill}{predicted}"
        return f"{base} + {self.manager.upper()}" if self.manager else base

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        search = data.get("search")
        if isinstance(search, dict):
            # runs of the tree search without a prior keep the keys they had before these
            if search.get("prior") == "none":
                del search["prior"]
                if search.get("lookahead") == "tree":
                    del search["bases"]
            if search.get("lookahead") == "tree":
                del search["lookahead"]
            # terms added later are left out at weight 0, so older runs keep their keys
            reward = list(search["reward"])
            while len(reward) > KEYED_TERMS and reward[-1] == 0:
                reward.pop()
            search["reward"] = reward
        return data
