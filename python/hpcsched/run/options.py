"""Checking a run's options: the policy (a name, a spec or a Python policy), the overrun policy,
the platform, the notice of maintenance and the decision log. ``simulate`` checks its options
with these; a comparison, a sweep and the command line check theirs with them too, before
their first run."""

from __future__ import annotations

import os
from collections.abc import Sequence

from hpcsched import _core
from hpcsched.exceptions import OptionError, shown, unknown_name
from hpcsched.policies import PolicySpec
from hpcsched.protocol import Policy, PythonPolicySpec, is_python_policy, load_policy
from hpcsched.rewards import REWARD_TERMS
from hpcsched.site.platform import Platform, load_platform
from hpcsched.workload import DEFAULT_ANNOUNCE_LEAD

#: What happens to a job past its requested time (the engine's names).
OVERRUNS: tuple[str, ...] = tuple(_core.option_names()["overrun"])

#: What the decision logs hold: one row of scalars per decision, or also every candidate (the
#: engine's names).
DECISION_LOGS: tuple[str, ...] = tuple(_core.option_names()["decision_log"])


def as_policy_spec(
    policy: str | PolicySpec | PythonPolicySpec | Policy,
    window: int | None = None,
    backfill: str | None = None,
) -> PolicySpec | PythonPolicySpec:
    """The spec of a policy given as a name (with ``window`` and ``backfill``), a spec,
    ``"python:..."`` or a Python policy object."""
    if isinstance(policy, PolicySpec | PythonPolicySpec):
        return policy
    if isinstance(policy, str):
        if policy.startswith("python:"):
            return load_policy(policy)
        return PolicySpec(policy, window, backfill)
    if is_python_policy(policy):
        return PythonPolicySpec(policy)
    raise OptionError(
        f"a policy is a name, a PolicySpec or an object with decide(view), not {shown(policy)}",
        option="--policy",
    )


def check_power_model(spec: PolicySpec | PythonPolicySpec, platform: Platform | None) -> None:
    """``OptionError`` when the policy needs a platform with a power model and ``platform``
    has none (a sweep checks every run of its grid so before the first)."""
    if platform is not None and platform.power is not None:
        return
    if spec.search is not None and spec.search.reward[REWARD_TERMS.index("energy")] > 0:
        raise OptionError(
            "the energy reward needs a platform with a power model (e.g. --platform AOBA-64)",
            option="--reward",
        )
    if spec.power is not None:
        # say what is missing: the platform, not the queue policy, is at fault
        missing = (
            "no platform was given"
            if platform is None
            else f"platform {shown(platform.name)} has no power model"
        )
        raise OptionError(
            f"the power manager {spec.power.manager} ({spec.label}) switches nodes on and off "
            f"and needs a platform with a power model, but {missing}; give one "
            "(e.g. --platform AOBA-64)",
            option="--platform",
        )


def check_decision_log(
    value: str, specs: Sequence[PolicySpec | PythonPolicySpec], option: str = "--decision-log"
) -> None:
    """``OptionError`` for an unknown decision log, or a decision log given where no policy
    of ``specs`` keeps one (it would change nothing): a comparison or a sweep may mix
    policies, and the option then goes to those that keep one."""
    if value not in DECISION_LOGS:
        raise OptionError(unknown_name("decision log", value, DECISION_LOGS), option=option)
    if not any((isinstance(s, PolicySpec) and s.is_search) or s.power is not None for s in specs):
        names = ", ".join(dict.fromkeys(s.name for s in specs))
        raise OptionError(
            f"{names} keeps no decision log (look-ahead policies and power managers do)",
            option=option,
        )


def open_platform(name_or_path: str | os.PathLike[str]) -> Platform:
    """A preset, a platform TOML file, or a Slurm configuration file (a path ending in
    ``.conf``: :mod:`hpcsched.site.slurm.conf`)."""
    if os.fspath(name_or_path).endswith(".conf"):
        from hpcsched.site.slurm.conf import read_slurm_conf

        return read_slurm_conf(name_or_path).platform()
    return load_platform(name_or_path)


def resolve_platform(
    platform: Platform | str | os.PathLike[str] | None, nodes: int | None
) -> tuple[Platform | None, int | None]:
    """The platform (loaded when named) and the machine size a trace is read for: the
    platform's, or None on a platform with partitions (the trace is then read in its own
    units, processors for SWF, and each job sized in its partition's nodes: ``fit_partitions``)."""
    if platform is None:
        return None, nodes
    if not isinstance(platform, Platform):
        platform = open_platform(platform)
    if nodes is not None and nodes != platform.nodes:
        raise OptionError(
            f"{nodes} nodes given but platform {platform.name} has {platform.nodes}",
            option="--nodes",
        )
    return platform, None if platform.site is not None else platform.nodes


def with_slurm_accounts(
    platform: Platform | str | os.PathLike[str], accounts: str | os.PathLike[str]
) -> Platform:
    """``platform`` (loaded when named) with the associations and QOS of ``accounts`` (a
    ``sacctmgr dump`` file, ``sacctmgr show assoc -P`` output or TOML) for ``--policy slurm``."""
    from dataclasses import replace

    from hpcsched.site.slurm.accounts import read_slurm_accounts
    from hpcsched.site.slurm.settings import SlurmSettings

    if not isinstance(platform, Platform):
        platform = open_platform(platform)
    settings = platform.slurm or SlurmSettings.defaults()
    return replace(platform, slurm=replace(settings, accounts=read_slurm_accounts(accounts)))


def check_overrun(overrun: str) -> None:
    if overrun not in OVERRUNS:
        raise OptionError(
            unknown_name("overrun policy", overrun, OVERRUNS),
            option="--overrun",
        )


def check_announce_lead(announce_lead: object) -> float:
    """The notice of scheduled maintenance in seconds (the default when None); an
    ``OptionError`` unless a number from 0 to ``MAX_TIME``."""
    if announce_lead is None:
        return DEFAULT_ANNOUNCE_LEAD
    if (
        isinstance(announce_lead, bool)
        or not isinstance(announce_lead, int | float)
        or not 0 <= announce_lead <= _core.MAX_TIME
    ):
        raise OptionError(
            f"must be a number of seconds from 0 to {_core.MAX_TIME:g}, not {shown(announce_lead)}",
            option="--announce-lead",
        )
    return float(announce_lead)
