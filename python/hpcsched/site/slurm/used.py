"""What a run under Slurm's settings (``--policy slurm``, or MARS ordering by Slurm's
priorities) took of them: the slurm.conf they come from, or Slurm's defaults (said among the
run's warnings), and the settings that differ from Slurm's defaults as slurm.conf writes them
(``summary.json``'s ``inputs.slurm``; the report's Inputs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hpcsched.site.slurm.settings import PRIORITY_WEIGHTS, SlurmSettings

if TYPE_CHECKING:
    from hpcsched.site.platform import Platform

#: The priority settings by slurm.conf key: (the engine's name, how the value is written).
_PRIORITY_KEYS = {
    **PRIORITY_WEIGHTS,
    "PriorityMaxAge": "max_age",
    "PriorityDecayHalfLife": "decay_half_life",
    "PriorityCalcPeriod": "calc_period",
    "FairShareDampeningFactor": "dampening",
}
_DURATIONS = ("max_age", "decay_half_life", "calc_period")
#: SchedulerParameters in minutes (the engine keeps seconds).
_MINUTES = ("bf_window",)


def slurm_conf_of(platform: Platform | None) -> str | None:
    """The slurm.conf the platform was read from (``--slurm-conf``, ``--platform FILE.conf``),
    None when the run has Slurm's defaults (no platform, or a platform of another kind)."""
    if platform is None or platform.slurm is None or not platform.source.endswith(".conf"):
        return None
    return platform.source


def defaults_warning(policy: bool) -> str:
    """What a run under Slurm's settings without a slurm.conf says: ``policy`` for ``--policy
    slurm`` (else a look-ahead ordering by Slurm's priorities)."""
    defaults = SlurmSettings.defaults().scheduler
    what = (
        "--policy slurm runs with Slurm's defaults (every priority weight 0, so jobs in "
        f"submission order; backfill every {defaults['bf_interval']:.0f} s over "
        f"{defaults['bf_window'] / 3600:.0f} h)"
        if policy
        else "the slurm ordering has Slurm's defaults (every priority weight 0: submission order)"
    )
    return f"no slurm.conf given: {what}; give the site's with --slurm-conf FILE"


def slurm_used(platform: Platform | None) -> dict[str, Any]:
    """``inputs.slurm``: the slurm.conf (None: Slurm's defaults) and each setting the run
    takes that differs from Slurm's defaults, by its slurm.conf key."""
    settings = (platform.slurm if platform is not None else None) or SlurmSettings.defaults()
    return {"slurm_conf": slurm_conf_of(platform), "differs_from_defaults": differences(settings)}


def differences(settings: SlurmSettings) -> dict[str, str]:
    """The settings that differ from Slurm 22.05's defaults, as slurm.conf writes them
    (``PriorityWeightAge``: ``1000``; ``SchedulerParameters``: ``bf_window=2880,...``); what
    Slurm ignores (the age and fair-share weights without slurmdbd) is left out, as the run
    leaves it out."""
    defaults = SlurmSettings.defaults()
    out: dict[str, str] = {}
    priority, base = settings.priority, defaults.priority
    for key, name in _PRIORITY_KEYS.items():
        if priority[name] != base[name]:
            out[key] = _duration(priority[name]) if name in _DURATIONS else _number(priority[name])
    if priority["favor_small"]:
        out["PriorityFavorSmall"] = "YES"
    flags = [
        flag
        for flag, on in (
            ("NO_FAIR_TREE", priority["fair_share"] == "classic"),
            ("SMALL_RELATIVE_TO_TIME", priority["small_relative_to_time"]),
        )
        if on
    ]
    if flags:
        out["PriorityFlags"] = ",".join(flags)
    if settings.enforce_limits:
        out["AccountingStorageEnforce"] = "limits"
    scheduler = settings.scheduler
    if scheduler["bf_interval"] is None:
        out["SchedulerType"] = "sched/builtin"
    parameters = [
        _parameter(name, value)
        for name, value in scheduler.items()
        if value != defaults.scheduler[name] and not (name == "bf_interval" and value is None)
    ]
    if parameters:
        out["SchedulerParameters"] = ",".join(parameters)
    factors = {p: f for p, f in sorted(settings.partition_factors.items()) if f != 1}
    if factors:
        out["PriorityJobFactor"] = ", ".join(f"{p} {f}" for p, f in factors.items())
    return out


def _parameter(name: str, value: Any) -> str:
    if value is True:
        return name
    if value is None:
        return f"{name}=-1"
    return f"{name}={_number(value / 60 if name in _MINUTES else value)}"


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"


def _duration(seconds: float) -> str:
    """Seconds as slurm.conf's ``D-HH:MM:SS``."""
    whole = round(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
