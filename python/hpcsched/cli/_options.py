"""The commands' options, each declared once: single options as typer ``Annotated`` aliases,
and the groups several commands take (reading a trace, a run's setting, a policy's tuning) as
frozen dataclasses whose fields carry the typer metadata.

A command takes a group as one parameter annotated with the group's class; :func:`command`
puts the group's fields in the command's signature at that place (typer sees plain options,
in the order and panels the fields declare) and hands the command one instance. A new option
is a new field: every command that takes its group gets it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from hpcsched.exceptions import OptionError, shown

if TYPE_CHECKING:
    from hpcsched.policies import PolicySpec
    from hpcsched.protocol import PythonPolicySpec
    from hpcsched.site.platform import Platform

LOOK_AHEAD = "Look-ahead (mars, random)"
POWER = "Power management"

R = TypeVar("R")

#: The option groups (classes marked by :func:`option_group`).
_GROUPS: set[type] = set()
G = TypeVar("G", bound=type)


def option_group(cls: G) -> G:
    """Marks a frozen dataclass as a group of options: its fields are options (typer
    ``Annotated`` types with defaults) or other groups, flattened in field order."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__}: an option group is a dataclass")
    _GROUPS.add(cls)
    return cls


def _is_group(annotation: object) -> bool:
    return isinstance(annotation, type) and annotation in _GROUPS


@functools.cache
def _hints(group: type) -> dict[str, Any]:
    return typing.get_type_hints(group, include_extras=True)


def _parameters(group: type) -> list[inspect.Parameter]:
    """The group's options as keyword parameters, nested groups flattened."""
    found = []
    for f in dataclasses.fields(group):
        hint = _hints(group)[f.name]
        if _is_group(hint):
            found += _parameters(hint)
        else:
            found.append(
                inspect.Parameter(
                    f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hint
                )
            )
    return found


def _build(group: type, values: dict[str, Any]) -> Any:
    """The group's instance from the command's arguments (its options taken out of them)."""
    return group(
        **{
            f.name: _build(_hints(group)[f.name], values)
            if _is_group(_hints(group)[f.name])
            else values.pop(f.name)
            for f in dataclasses.fields(group)
        }
    )


def command(func: Callable[..., R]) -> Callable[..., R]:
    """The command ``func`` as typer reads it: each parameter annotated with an option group
    becomes the group's options, in place; ``func`` is called with one instance per group."""
    signature = inspect.signature(func, eval_str=True)
    groups: dict[str, type] = {}
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if _is_group(parameter.annotation):
            groups[parameter.name] = parameter.annotation
            parameters += _parameters(parameter.annotation)
        else:
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    names = [p.name for p in parameters]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TypeError(f"{func.__name__}: options declared twice: {', '.join(twice)}")

    @functools.wraps(func)
    def run(**values: Any) -> R:
        for name, group in groups.items():
            values[name] = _build(group, values)
        return func(**values)

    run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.__annotations__["return"] = signature.return_annotation
    return run


def option_name(group: type, name: str) -> str:
    """The option a field of ``group`` is given by (``--power`` for ``power``)."""
    for meta in typing.get_args(_hints(group)[name])[1:]:
        decls = [getattr(meta, "default", None), *(getattr(meta, "param_decls", None) or ())]
        for decl in decls:
            if isinstance(decl, str) and decl.startswith("--"):
                return decl
    return "--" + name.replace("_", "-")


def _given(group: object, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """The options of ``group`` the user gave (unset ones are None: the specs fill them)."""
    return {
        f.name: getattr(group, f.name)
        for f in dataclasses.fields(group)  # type: ignore[arg-type]
        if f.name not in leave_out and getattr(group, f.name) is not None
    }


# Single options several commands take.

Trace = Annotated[
    Path,
    typer.Argument(
        help="Workload: .swf, Batsim .json, or Slurm accounting records (sacct --parsable2 "
        "output as .sacct or .psv, sacct --json output as .json), optionally .gz."
    ),
]
Backfill = Annotated[
    str | None,
    typer.Option(
        help="easy or none (default easy; SNF, MARS and the power managers have their own)."
    ),
]
Lenient = Annotated[
    bool, typer.Option("--lenient", help="Skip malformed lines instead of failing.")
]
Processes = Annotated[int | None, typer.Option(help="Parallel processes (default: one per core).")]
Slice = Annotated[
    str | None,
    typer.Option(
        "--slice",
        metavar="FIRST:END",
        help="Replay only jobs FIRST to END-1 in replay order (0 is the first), resubmitted "
        "from time 0, as a sweep file's slice = [FIRST, END]; FIRST: runs to the last job, "
        ":END starts at the first (e.g. --slice 12000:16000).",
    ),
]


def job_slice(text: str | None) -> tuple[int, int | None]:
    """``--slice FIRST:END`` as (first, end), (0, None) when not given; a malformed value is an
    ``OptionError`` naming the option (one past the trace's end is found when it is read)."""
    if text is None:
        return 0, None
    first, colon, end = text.partition(":")
    try:
        if not colon:
            raise ValueError(text)
        start = int(first) if first.strip() else 0
        stop = int(end) if end.strip() else None
    except ValueError:
        raise OptionError(
            f"give FIRST:END job indices (e.g. 0:3000, 12000: or :3000), not {text!r}",
            option="--slice",
        ) from None
    if start < 0 or (stop is not None and stop <= start):
        raise OptionError(
            f"FIRST must be 0 or more and END larger than FIRST, not {text!r}", option="--slice"
        )
    return start, stop


def slice_suffix(start: int, stop: int | None) -> str:
    """What a default output name adds for a slice: ``-jobs12000-16000`` (``-jobs12000-``
    to the end), nothing without one."""
    if not start and stop is None:
        return ""
    return f"-jobs{start}-{'' if stop is None else stop}"


@option_group
@dataclass(frozen=True)
class TraceOptions:
    """How a trace is read: the machine size, processors per node, the format."""

    nodes: Annotated[
        int | None, typer.Option(help="Machine size in nodes (default: from the trace header).")
    ] = None
    procs_per_node: Annotated[
        str | None,
        typer.Option(help="Processors per node (default 1), or 'auto' (MaxProcs / MaxNodes)."),
    ] = None
    format: Annotated[
        str | None, typer.Option(help="swf, json or sacct (default: from the name).")
    ] = None

    def checked(self) -> tuple[int | None, int | str]:
        """The machine size and processors per node, checked (by the readers' own checks)
        before anything is read or run."""
        from hpcsched.workload.model import check_machine_nodes, check_procs_per_node

        ppn = 1 if self.procs_per_node is None else check_procs_per_node(self.procs_per_node)
        return (None if self.nodes is None else check_machine_nodes(self.nodes)), ppn


@option_group
@dataclass(frozen=True)
class SiteOptions:
    """The machine the jobs run on: a platform, or a site's slurm.conf (not both)."""

    platform: Annotated[
        str | None,
        typer.Option(
            help="Platform preset (AOBA-64, AOBA-1152, Taurus-64, Taurus-1152; CEA-Curie, "
            "CTC-SP2, SDSC-BLUE with partitions), TOML file or a site's slurm.conf: sets the "
            "machine size, its partitions, and with a power model reports energy."
        ),
    ] = None
    slurm_conf: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="A site's slurm.conf (its Include files too): the machine and its partitions "
            "from its NodeName and PartitionName lines (as --platform FILE.conf), and for "
            "--policy slurm its Priority* weights and SchedulerParameters (without it, "
            "Slurm's defaults: every weight 0, jobs in submission order).",
        ),
    ] = None

    def name(self) -> str | None:
        """The platform given, by name or path: ``--platform``, or ``--slurm-conf``'s file,
        which is read as a slurm.conf by its ``.conf`` name (``run.options.open_platform``)."""
        if self.slurm_conf is None:
            return self.platform
        if self.platform is not None:
            raise OptionError("give --platform or --slurm-conf, not both", option="--slurm-conf")
        if self.slurm_conf.suffix != ".conf":
            raise OptionError(
                f"{shown(str(self.slurm_conf))}: a Slurm configuration file's name ends in .conf",
                option="--slurm-conf",
            )
        return str(self.slurm_conf)


@option_group
@dataclass(frozen=True)
class RunOptions:
    """What a run is replayed with besides its trace and policy."""

    downtime: Annotated[Path | None, typer.Option(help="Downtime calendar file.")] = None
    where: SiteOptions = SiteOptions()
    slurm_accounts: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="The site's associations and QOS for --policy slurm: a 'sacctmgr dump' file, "
            "'sacctmgr show assoc -P' output (with parentname) or a TOML file.",
        ),
    ] = None
    announce_lead: Annotated[
        float | None,
        typer.Option(help="Notice of scheduled maintenance (s; default 172800, 48 h)."),
    ] = None
    overrun: Annotated[
        str | None,
        typer.Option(help="continue (default) or kill jobs past their requested time."),
    ] = None

    def given(self) -> dict[str, Any]:
        """The notice of maintenance and the overrun policy, those given (the run's defaults
        otherwise)."""
        return _given(self, leave_out=("downtime", "where", "slurm_accounts"))

    def site(self) -> str | Platform | None:
        """The platform given: ``--platform``, or ``--slurm-conf``'s file (not both), which a
        run reads as a slurm.conf by its ``.conf`` name (``run.options.open_platform``); with
        ``--slurm-accounts``, the platform read, with the associations and QOS read."""
        site = self.site_name()
        if self.slurm_accounts is None or site is None:
            return site
        from hpcsched.run.options import with_slurm_accounts

        return with_slurm_accounts(site, self.slurm_accounts)

    def site_name(self) -> str | None:
        """The platform given, by name or path, for commands that pass it to other processes
        (``compare``, with :meth:`accounts_path`)."""
        site = self.where.name()
        if self.slurm_accounts is not None and site is None:
            raise OptionError(
                "give the site with it (--slurm-conf FILE, or --platform)",
                option="--slurm-accounts",
            )
        return site

    def accounts_path(self) -> str | None:
        """``--slurm-accounts``, as a path (``compare`` passes it to each run)."""
        return None if self.slurm_accounts is None else str(self.slurm_accounts)


@option_group
@dataclass(frozen=True)
class SearchOptions:
    """The look-ahead policies' options (``reward`` for mars alone)."""

    reward: Annotated[
        str | None,
        typer.Option(
            help="mars: cw, cu, wb, weights of terms such as 'wait=1, bsld=0.5, "
            "utilization=2, energy=1', or a TOML file with a \\[reward] table.",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    iterations: Annotated[
        int | None,
        typer.Option(
            help="Iterations per tree per decision (default 100).", rich_help_panel=LOOK_AHEAD
        ),
    ] = None
    time_budget: Annotated[
        float | None,
        typer.Option(
            help="Seconds per decision (wall clock; not deterministic).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    depth: Annotated[
        int | None,
        typer.Option(
            help="Horizon D in scheduling cycles that start jobs (default 50).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    gamma: Annotated[
        float | None,
        typer.Option(help="Discount factor (default 0.99).", rich_help_panel=LOOK_AHEAD),
    ] = None
    exploration: Annotated[
        float | None,
        typer.Option(help="c0 in c = c0 (Qmax - Qmin) (default 1).", rich_help_panel=LOOK_AHEAD),
    ] = None
    trees: Annotated[
        int | None,
        typer.Option(
            help="Root-parallel trees (default: number of cores).", rich_help_panel=LOOK_AHEAD
        ),
    ] = None
    threads: Annotated[
        int | None,
        typer.Option(
            help="Threads for the trees (default: one per tree).", rich_help_panel=LOOK_AHEAD
        ),
    ] = None
    seed: Annotated[
        int | None, typer.Option(help="Random seed (default 17).", rich_help_panel=LOOK_AHEAD)
    ] = None
    actions: Annotated[
        str | None,
        typer.Option(
            help="'paper' (161 actions, the default) or a list such as "
            "'fcfs, wfp3:256, sjf, lrf:all'.",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    runtime_model: Annotated[
        str | None,
        typer.Option(
            help="Run times in the look-ahead: 'requested' (the paper), 'history' (drawn from "
            "jobs completed so far) or 'running' (drawn for running jobs only).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    arrivals: Annotated[
        str | None,
        typer.Option(
            help="Arrivals in the look-ahead: 'none' (the paper) or 'recent' (the last days' "
            "submissions replayed).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    rollout: Annotated[
        str | None,
        typer.Option(
            help="Rollout choices: 'actions' (uniform, the paper), 'outcomes' (uniform over "
            "distinct outcomes) or 'guided' (F1 w=256 with 10% random choices).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    lookahead: Annotated[
        str | None,
        typer.Option(
            help="How a decision is valued: 'tree' (Monte Carlo Tree Search, the paper) or "
            "'rollout' (each outcome followed by the --bases orderings, the best taken).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    bases: Annotated[
        str | None,
        typer.Option(
            help="The orderings the 'rollout' look-ahead follows each outcome with; an outcome "
            "is worth the best of them (default f1:256, f2:256, sjf:256, wfp3:256, unicef:256, "
            "fcfs).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None
    prior: Annotated[
        str | None,
        typer.Option(
            help="A prior at expansion for the tree: 'none' (the paper) or 'rollout' (each new "
            "child starts with the --bases rollout value, best tried first).",
            rich_help_panel=LOOK_AHEAD,
        ),
    ] = None

    def given(self) -> dict[str, Any]:
        """The :class:`SearchSpec` parameters given (the reward left to :func:`policy_spec`)."""
        return _given(self, leave_out=("reward",))


@option_group
@dataclass(frozen=True)
class PowerOptions:
    """The power manager (``--power``) and its parameters."""

    power: Annotated[
        str | None,
        typer.Option(
            "--power",
            help="Power manager under the queue policy: none, ipm, icon, icon-ng, icon-nf, "
            "icon-ngnf (needs --platform with a power model; the paper names such as snf-icon "
            "imply theirs).",
            rich_help_panel=POWER,
        ),
    ] = None
    idle_timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds an idle node waits before it is switched off (default 7200).",
            rich_help_panel=POWER,
        ),
    ] = None
    sample_transitions: Annotated[
        int | None,
        typer.Option(
            help="Draw transition latencies from Normal(mean, std) "
            "with this seed (default: mean latencies).",
            rich_help_panel=POWER,
        ),
    ] = None
    alpha: Annotated[
        float | None,
        typer.Option(help="SNF-ICON waiting weight (default 5000).", rich_help_panel=POWER),
    ] = None
    beta: Annotated[
        float | None,
        typer.Option(help="SNF-ICON energy weight (default 1).", rich_help_panel=POWER),
    ] = None
    screen_window: Annotated[
        float | None,
        typer.Option(help="SNF-ICON screen window (s; default 7200).", rich_help_panel=POWER),
    ] = None
    recency_window: Annotated[
        float | None,
        typer.Option(
            help="SNF-ICON arrival-recency window (s; default 43200).", rich_help_panel=POWER
        ),
    ] = None
    max_horizon: Annotated[
        float | None,
        typer.Option(help="SNF-ICON maximum horizon (s; default 86400).", rich_help_panel=POWER),
    ] = None
    min_spares: Annotated[
        int | None,
        typer.Option(help="SNF-ICON minimum spare nodes (default 1).", rich_help_panel=POWER),
    ] = None
    max_spares: Annotated[
        int | None,
        typer.Option(help="SNF-ICON maximum spare nodes (default: all).", rich_help_panel=POWER),
    ] = None

    @property
    def manager(self) -> str | None:
        """``--power``: None when not given or 'none'."""
        if self.power is None or self.power.strip().lower() == "none":
            return None
        return self.power

    def given(self) -> dict[str, Any]:
        """The :class:`PowerSpec` parameters given (the manager apart)."""
        return _given(self, leave_out=("power",))


@option_group
@dataclass(frozen=True)
class PolicyOptions:
    """Everything that tunes the policies of a run: look-ahead, SNF's guard, power
    management, EASY's estimates, the decision log."""

    search: SearchOptions = SearchOptions()
    max_wait: Annotated[
        float | None,
        typer.Option(
            help="SNF's starvation guard: jobs waiting this long (s) go first and hold a "
            "reservation (default: none, the paper's SNF).",
        ),
    ] = None
    managed: PowerOptions = PowerOptions()
    estimates: Annotated[
        str | None,
        typer.Option(
            help="What a heuristic's EASY plans with: 'requested' times or 'history' (run "
            "times predicted from completed jobs).",
        ),
    ] = None
    decision_log: Annotated[
        str | None,
        typer.Option(
            "--decision-log",
            metavar="compact|full",
            help="What decisions.parquet holds for look-ahead policies and power managers: "
            "'compact' (default: one row of scalars per decision) or 'full' (also every "
            "candidate of each decision; can be hundreds of MB on a year-long trace).",
        ),
    ] = None

    def log(self, specs: Sequence[PolicySpec | PythonPolicySpec]) -> str:
        """``--decision-log``, checked: compact unless given; refused where no policy keeps
        a decision log (it would change nothing)."""
        from hpcsched.run import check_decision_log

        if self.decision_log is None:
            return "compact"
        check_decision_log(self.decision_log, specs)
        return self.decision_log


def policy_spec(
    policy: str, window: int | None, backfill: str | None, options: PolicyOptions
) -> PolicySpec | PythonPolicySpec:
    """The policy ``options`` describe: search options go to look-ahead policies, power
    options to power managers (``--power`` puts any policy under one; :func:`check_used`
    refuses options no policy takes); ``python:MODULE:CLASS`` loads a Python policy."""
    from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec
    from hpcsched.protocol import load_policy
    from hpcsched.rewards import parse_reward

    power_options = options.managed
    manager = power_options.manager
    if (  # --power none under a policy that has its power manager built in
        power_options.power is not None
        and manager is None
        and not policy.startswith("python:")
        and PolicySpec(policy, window, backfill).is_power
    ):
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
            spec = replace(spec, power=PowerSpec(manager=manager, **power_options.given()))
        return spec
    base = PolicySpec(policy, window, backfill)
    power = None
    if base.is_power or manager is not None:
        power = PowerSpec(manager=manager, **power_options.given())
    max_wait = options.max_wait
    if options.estimates is not None:
        return PolicySpec(
            policy, window, backfill, estimates=options.estimates, power=power, max_wait=max_wait
        )
    if not base.is_search:
        return PolicySpec(policy, window, backfill, power=power, max_wait=max_wait)
    reward = options.search.reward
    if reward is not None and base.name != "mars":
        raise OptionError(
            f"{base.name} has its reward built in; use --policy mars", option="--reward"
        )
    search = options.search.given()
    if "time_budget" in search and "iterations" not in search:
        search["iterations"] = None  # a time budget alone
    if reward is not None:
        search["reward"] = parse_reward(reward)
    return PolicySpec(
        policy, window, backfill, search=SearchSpec(**search), power=power, max_wait=max_wait
    )


def check_used(specs: Sequence[PolicySpec | PythonPolicySpec], options: PolicyOptions) -> None:
    """An option given that no policy of ``specs`` takes is an error naming it, never
    silently ignored (``simulate --policy fcfs --alpha 3``)."""
    from hpcsched.policies import POWER_POLICIES, SEARCH_POLICIES, PolicySpec

    names = ", ".join(dict.fromkeys(spec.name for spec in specs))
    groups = (
        (
            options.search,
            _given(options.search),
            any(isinstance(spec, PolicySpec) and spec.is_search for spec in specs),
            "look-ahead",
            (*SEARCH_POLICIES, "mars-cw"),
        ),
        (
            options.managed,
            options.managed.given(),
            any(spec.power is not None for spec in specs),
            "power",
            POWER_POLICIES,
        ),
    )
    for group, given, used, kind, takers in groups:
        for name in given:
            if not used:
                who = "no policy here uses it" if len(specs) > 1 else f"{names} does not use it"
                raise OptionError(
                    f"{who}; it is a {kind} option (for {', '.join(takers[:3])}, ...)",
                    option=option_name(type(group), name),
                )


def with_estimates(
    specs: list[PolicySpec | PythonPolicySpec], estimates: str
) -> list[PolicySpec | PythonPolicySpec]:
    """``--estimates`` for compare: given to every heuristic with EASY backfilling (the others
    plan otherwise); an error when no policy takes it."""
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
