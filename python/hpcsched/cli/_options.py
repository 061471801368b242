"""Options shared by the commands that run policies (simulate, compare), declared once.

Each alias is a typer option with its help text; :func:`policy_spec` turns the options into a
:class:`PolicySpec` the way both commands need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hpcsched.exceptions import OptionError

if TYPE_CHECKING:
    from hpcsched.policies import PolicySpec
    from hpcsched.protocol import PythonPolicySpec

LOOK_AHEAD = "Look-ahead (mars, random)"
POWER = "Power management"

Backfill = Annotated[
    str | None,
    typer.Option(
        help="easy or none (default easy; SNF, MARS and the power managers have their own)."
    ),
]
Nodes = Annotated[
    int | None, typer.Option(help="Machine size in nodes (default: from the trace header).")
]
ProcsPerNode = Annotated[
    str | None,
    typer.Option(help="Processors per node (default 1), or 'auto' (MaxProcs / MaxNodes)."),
]
Format = Annotated[str | None, typer.Option(help="swf or json (default: from the name).")]
Downtime = Annotated[Path | None, typer.Option(help="Downtime calendar file.")]
Platform = Annotated[
    str | None,
    typer.Option(
        help="Platform preset (AOBA-64, AOBA-1152, Taurus-64, Taurus-1152) or TOML file: "
        "sets the machine size and reports energy."
    ),
]
AnnounceLead = Annotated[
    float | None,
    typer.Option(help="Notice of scheduled maintenance (s; default 172800, 48 h)."),
]
Overrun = Annotated[
    str | None,
    typer.Option(help="continue (default) or kill jobs past their requested time."),
]

Reward = Annotated[
    str | None,
    typer.Option(
        help="mars: cw, cu, wb, 'wait=1,bsld=0.5,utilization=2,energy=1', "
        "or a TOML file with a \\[reward] table.",
        rich_help_panel=LOOK_AHEAD,
    ),
]
Iterations = Annotated[
    int | None,
    typer.Option(
        help="Iterations per tree per decision (default 100).", rich_help_panel=LOOK_AHEAD
    ),
]
TimeBudget = Annotated[
    float | None,
    typer.Option(
        help="Seconds per decision (wall clock; not deterministic).", rich_help_panel=LOOK_AHEAD
    ),
]
Depth = Annotated[
    int | None,
    typer.Option(
        help="Horizon D in scheduling cycles that start jobs (default 50).",
        rich_help_panel=LOOK_AHEAD,
    ),
]
Gamma = Annotated[
    float | None, typer.Option(help="Discount factor (default 0.99).", rich_help_panel=LOOK_AHEAD)
]
Exploration = Annotated[
    float | None,
    typer.Option(help="c0 in c = c0 (Qmax - Qmin) (default 1).", rich_help_panel=LOOK_AHEAD),
]
Trees = Annotated[
    int | None,
    typer.Option(
        help="Root-parallel trees (default: number of cores).", rich_help_panel=LOOK_AHEAD
    ),
]
Threads = Annotated[
    int | None,
    typer.Option(help="Threads for the trees (default: one per tree).", rich_help_panel=LOOK_AHEAD),
]
Seed = Annotated[
    int | None, typer.Option(help="Random seed (default 17).", rich_help_panel=LOOK_AHEAD)
]
Actions = Annotated[
    str | None,
    typer.Option(
        help="'paper' (161 actions, the default) or e.g. 'fcfs,wfp3:256,sjf,lrf:all'.",
        rich_help_panel=LOOK_AHEAD,
    ),
]
RuntimeModel = Annotated[
    str | None,
    typer.Option(
        help="Run times in the look-ahead: 'requested' (the paper), 'history' (drawn from "
        "jobs completed so far) or 'running' (drawn for running jobs only).",
        rich_help_panel=LOOK_AHEAD,
    ),
]
Arrivals = Annotated[
    str | None,
    typer.Option(
        help="Arrivals in the look-ahead: 'none' (the paper) or 'recent' (the last days' "
        "submissions replayed).",
        rich_help_panel=LOOK_AHEAD,
    ),
]
Rollout = Annotated[
    str | None,
    typer.Option(
        help="Rollout choices: 'actions' (uniform, the paper), 'outcomes' (uniform over "
        "distinct outcomes) or 'guided' (F1 w=256 with 10% random choices).",
        rich_help_panel=LOOK_AHEAD,
    ),
]
Lookahead = Annotated[
    str | None,
    typer.Option(
        help="How a decision is valued: 'tree' (Monte Carlo Tree Search, the paper) or "
        "'rollout' (each outcome followed by the --bases orderings, the best taken).",
        rich_help_panel=LOOK_AHEAD,
    ),
]
Bases = Annotated[
    str | None,
    typer.Option(
        help="The orderings the 'rollout' look-ahead follows each outcome with; an outcome is "
        "worth the best of them (default f1:256,f2:256,sjf:256,wfp3:256,unicef:256,fcfs).",
        rich_help_panel=LOOK_AHEAD,
    ),
]
Prior = Annotated[
    str | None,
    typer.Option(
        help="A prior at expansion for the tree: 'none' (the paper) or 'rollout' (each new "
        "child starts with the --bases rollout value, best tried first).",
        rich_help_panel=LOOK_AHEAD,
    ),
]
DecisionLog = Annotated[
    str | None,
    typer.Option(
        "--decision-log",
        metavar="compact|full",
        help="What decisions.parquet holds for look-ahead policies and power managers: "
        "'compact' (default: one row of scalars per decision) or 'full' (also every "
        "candidate of each decision; can be hundreds of MB on a year-long trace).",
    ),
]


def decision_log(value: str | None, specs: Sequence[PolicySpec | PythonPolicySpec]) -> str:
    """``--decision-log``, checked: compact unless given; refused where no policy keeps a
    decision log (it would change nothing)."""
    from hpcsched.run import check_decision_log

    if value is None:
        return "compact"
    check_decision_log(value, specs)
    return value


Estimates = Annotated[
    str | None,
    typer.Option(
        help="What a heuristic's EASY plans with: 'requested' times or 'history' (run times "
        "predicted from completed jobs).",
    ),
]

MaxWait = Annotated[
    float | None,
    typer.Option(
        help="SNF's starvation guard: jobs waiting this long (s) go first and hold a "
        "reservation (default: none, the paper's SNF).",
    ),
]
PowerManager = Annotated[
    str | None,
    typer.Option(
        "--power",
        help="Power manager under the queue policy: none, ipm, icon, icon-ng, icon-nf, "
        "icon-ngnf (needs --platform with a power model; the paper names such as snf-icon "
        "imply theirs).",
        rich_help_panel=POWER,
    ),
]
IdleTimeout = Annotated[
    float | None,
    typer.Option(
        help="Seconds an idle node waits before it is switched off (default 7200).",
        rich_help_panel=POWER,
    ),
]
SampleTransitions = Annotated[
    int | None,
    typer.Option(
        help="Draw transition latencies from Normal(mean, std) "
        "with this seed (default: mean latencies).",
        rich_help_panel=POWER,
    ),
]
Alpha = Annotated[
    float | None,
    typer.Option(help="SNF-ICON waiting weight (default 5000).", rich_help_panel=POWER),
]
Beta = Annotated[
    float | None, typer.Option(help="SNF-ICON energy weight (default 1).", rich_help_panel=POWER)
]
ScreenWindow = Annotated[
    float | None,
    typer.Option(help="SNF-ICON screen window (s; default 7200).", rich_help_panel=POWER),
]
RecencyWindow = Annotated[
    float | None,
    typer.Option(help="SNF-ICON arrival-recency window (s; default 43200).", rich_help_panel=POWER),
]
MaxHorizon = Annotated[
    float | None,
    typer.Option(help="SNF-ICON maximum horizon (s; default 86400).", rich_help_panel=POWER),
]
MinSpares = Annotated[
    int | None,
    typer.Option(help="SNF-ICON minimum spare nodes (default 1).", rich_help_panel=POWER),
]
MaxSpares = Annotated[
    int | None,
    typer.Option(help="SNF-ICON maximum spare nodes (default: all).", rich_help_panel=POWER),
]


#: The commands' option names that configure look-ahead policies and power managers.
SEARCH_OPTIONS = (
    "iterations",
    "time_budget",
    "depth",
    "gamma",
    "exploration",
    "trees",
    "threads",
    "seed",
    "actions",
    "runtime_model",
    "arrivals",
    "rollout",
    "lookahead",
    "bases",
    "prior",
)
POWER_OPTIONS = (
    "idle_timeout",
    "sample_transitions",
    "alpha",
    "beta",
    "screen_window",
    "recency_window",
    "max_horizon",
    "min_spares",
    "max_spares",
)


def given(options: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The options among ``names`` the user gave (unset ones are None: the spec fills them)."""
    return {k: options[k] for k in names if options.get(k) is not None}


def policy_spec(
    policy: str, window: int | None, backfill: str | None, options: Mapping[str, Any]
) -> PolicySpec | PythonPolicySpec:
    """The policy a command's ``options`` (its parameters by name) describe: search options
    go to look-ahead policies, power options to power managers (``--power`` puts any policy
    under one; :func:`check_used` refuses options no policy takes); ``python:MODULE:CLASS``
    loads a Python policy."""
    from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec, parse_reward
    from hpcsched.protocol import load_policy

    manager = options.get("power")
    if manager is not None and manager.strip().lower() == "none":
        manager = None
        if not policy.startswith("python:") and PolicySpec(policy, window, backfill).is_power:
            raise OptionError(f"{policy} runs under a power manager", option="--power")
    if policy.startswith("python:"):
        if window is not None:
            raise OptionError("a Python policy orders the queue itself", option="--window")
        if backfill is not None:
            raise OptionError(
                "a Python policy backfills as its decisions say (Decision.backfill)",
                option="--backfill",
            )
        spec = load_policy(policy)
        if manager is not None:
            spec = replace(spec, power=PowerSpec(manager=manager, **given(options, POWER_OPTIONS)))
        return spec
    base = PolicySpec(policy, window, backfill)
    power = None
    if base.is_power or manager is not None:
        power = PowerSpec(manager=manager, **given(options, POWER_OPTIONS))
    max_wait = options.get("max_wait")
    estimates = options.get("estimates")
    if estimates is not None:
        return PolicySpec(
            policy, window, backfill, estimates=estimates, power=power, max_wait=max_wait
        )
    if not base.is_search:
        return PolicySpec(policy, window, backfill, power=power, max_wait=max_wait)
    reward = options.get("reward")
    if reward is not None and base.name != "mars":
        raise OptionError(
            f"{base.name} has its reward built in; use --policy mars", option="--reward"
        )
    search: dict[str, Any] = given(options, SEARCH_OPTIONS)
    if "time_budget" in search and "iterations" not in search:
        search["iterations"] = None  # a time budget alone
    if reward is not None:
        search["reward"] = parse_reward(reward)
    return PolicySpec(
        policy, window, backfill, search=SearchSpec(**search), power=power, max_wait=max_wait
    )


def check_used(specs: Sequence[PolicySpec | PythonPolicySpec], options: Mapping[str, Any]) -> None:
    """An option given that no policy of ``specs`` takes is an error naming it, never
    silently ignored (``simulate --policy fcfs --alpha 3``)."""
    from hpcsched.policies import POWER_POLICIES, SEARCH_POLICIES, PolicySpec

    groups = (
        (("reward", *SEARCH_OPTIONS), "is_search", "look-ahead", (*SEARCH_POLICIES, "mars-cw")),
        (POWER_OPTIONS, "is_power", "power", POWER_POLICIES),
    )
    names = ", ".join(dict.fromkeys(spec.name for spec in specs))
    for option_names, takes, kind, takers in groups:
        used = any(
            getattr(spec, "power", None) is not None
            if takes == "is_power"
            else isinstance(spec, PolicySpec) and getattr(spec, takes)
            for spec in specs
        )
        for name in option_names:
            if options.get(name) is not None and not used:
                who = "no policy here uses it" if len(specs) > 1 else f"{names} does not use it"
                raise OptionError(
                    f"{who}; it is a {kind} option (for {', '.join(takers[:3])}, ...)",
                    option="--" + name.replace("_", "-"),
                )


def with_estimates(
    specs: list[PolicySpec | PythonPolicySpec], estimates: str
) -> list[PolicySpec | PythonPolicySpec]:
    """``--estimates`` for compare: given to every heuristic with EASY backfilling (the others
    plan otherwise); an error when no policy takes it."""
    import dataclasses

    from hpcsched.policies import PolicySpec

    def takes(spec: PolicySpec | PythonPolicySpec) -> bool:
        return (
            isinstance(spec, PolicySpec)
            and not (spec.is_search or spec.is_power or spec.name == "snf")
            and spec.backfill == "easy"
        )

    if not any(takes(spec) for spec in specs):
        raise OptionError(
            "no policy here backfills with EASY on estimates (a heuristic such as fcfs or f1)",
            option="--estimates",
        )
    return [
        dataclasses.replace(spec, estimates=estimates)
        if takes(spec) and isinstance(spec, PolicySpec)
        else spec
        for spec in specs
    ]


def trace_stem(path: Path) -> str:
    """The trace's name without its format suffixes."""
    name = path.name
    for suffix in (".gz", ".swf", ".json"):
        name = name.removesuffix(suffix)
    return name
