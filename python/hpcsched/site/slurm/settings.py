"""Slurm's scheduling settings as numbers: the multifactor priority's (``Priority*``,
``FairShareDampeningFactor``, the accounting gates) and the schedulers' (``SchedulerType``,
``SchedulerParameters``), read from a ``slurm.conf``'s values with Slurm 22.05's defaults
(docs/semantics.md, "Slurm's scheduler"). ``--policy slurm`` runs with them; without a
slurm.conf, with :meth:`SlurmSettings.defaults`.

What Slurm itself does silently is done here and said in ``notes``: without
``AccountingStorageType=accounting_storage/slurmdbd`` the age and fair-share weights are 0
(Slurm logs "can only be used with SlurmDBD, ignoring"); without ``limits`` (or ``safe``, ``all``)
in ``AccountingStorageEnforce`` QOS limits are not enforced and a job's usage since the last
recalculation is never charged when it ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hpcsched import _core
from hpcsched.exceptions import InputError, shown
from hpcsched.site.slurm.keys import PRIORITY_FLAGS, SCHEDULER_PARAMETERS, unknown_notes
from hpcsched.site.slurm.text import slurm_duration, whole_number
from hpcsched.site.slurm.tres import FOLLOWED, parse_weights

if TYPE_CHECKING:
    from hpcsched.site.slurm.accounts import SlurmAccounts

#: ``PriorityFlags`` hpcsched follows; the others are reported in the notes and ignored.
FOLLOWED_FLAGS = (
    "NO_FAIR_TREE",
    "SMALL_RELATIVE_TO_TIME",
    "FAIR_TREE",
    "MAX_TRES",
    "NO_NORMAL_TRES",
)
#: ``SchedulerParameters`` hpcsched follows (the others are reported and ignored).
FOLLOWED_PARAMETERS = (
    "sched_interval",
    "default_queue_depth",
    "bf_interval",
    "bf_window",
    "bf_resolution",
    "bf_max_job_test",
    "bf_max_job_user",
    "bf_continue",
)
#: Parameters that change nothing in a simulation (its cycles take no time and never yield).
NO_EFFECT = (
    "bf_continue",
    "bf_yield_interval",
    "bf_yield_sleep",
    "bf_max_time",
    "max_sched_time",
    "sched_min_interval",
    "batch_sched_delay",
    "max_rpc_cnt",
)


#: Every ``SchedulerParameters`` name, lower case (Slurm reads them in any case).
_KNOWN_PARAMETERS = {p.lower() for p in SCHEDULER_PARAMETERS}
#: The priority weights by slurm.conf key, with the engine's name of each.
PRIORITY_WEIGHTS = {
    "PriorityWeightAge": "weight_age",
    "PriorityWeightFairshare": "weight_fairshare",
    "PriorityWeightJobSize": "weight_job_size",
    "PriorityWeightPartition": "weight_partition",
    "PriorityWeightQOS": "weight_qos",
    "PriorityWeightAssoc": "weight_assoc",
}


def _name_notes(
    head: str, unknown: list[str], unused: list[str], kind: str, known: list[str]
) -> list[str]:
    """The notes of a list of names (PriorityFlags, SchedulerParameters): the unknown ones
    with the nearest real name, then those read and not simulated, once each."""
    notes = unknown_notes(head, unknown, kind, known)
    if unused:
        notes.append(f"{head} read and not simulated (ignored): {', '.join(dict.fromkeys(unused))}")
    return notes


def _unfollowed_tres(where: str, what: str, weights: dict[str, float]) -> list[str]:
    """A note for the TRES of ``weights`` hpcsched knows no amount of (they weigh nothing)."""
    other = [name for name in weights if name.split("/")[0] not in FOLLOWED]
    if not other:
        return []
    return [
        f"{where}: {what} weighs {', '.join(other)}, which the simulation does not track "
        "(they count for nothing; cpu, mem, node and gres are followed)"
    ]


def _priority_defaults() -> dict[str, Any]:
    return {
        "weight_age": 0.0,
        "weight_fairshare": 0.0,
        "weight_job_size": 0.0,
        "weight_partition": 0.0,
        "weight_qos": 0.0,
        "weight_assoc": 0.0,
        "max_age": 7 * 86400.0,
        "decay_half_life": 7 * 86400.0,
        "calc_period": 300.0,
        "favor_small": False,
        "small_relative_to_time": False,
        "fair_share": "fair_tree",
        "dampening": 1.0,
        "charge_at_end": False,
    }


def _scheduler_defaults() -> dict[str, Any]:
    return {
        "sched_interval": 60.0,
        "default_queue_depth": 100,
        "bf_interval": 30.0,
        "bf_window": 1440 * 60.0,
        "bf_resolution": 60.0,
        "bf_max_job_test": 500,
        "bf_max_job_user": 0,
        "bf_continue": False,
    }


@dataclass(frozen=True)
class SlurmSettings:
    """The settings the engine's Slurm policy takes (``priority``, ``scheduler``: its names),
    whether QOS limits are enforced, each partition's ``PriorityJobFactor`` by name, and what
    was read but not followed."""

    priority: dict[str, Any] = field(default_factory=_priority_defaults)
    scheduler: dict[str, Any] = field(default_factory=_scheduler_defaults)
    enforce_limits: bool = False
    partition_factors: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: ``PriorityWeightTRES`` (TRES -> weight: ``cpu``, ``mem``, ``gres/gpu``, ...)
    tres_weights: dict[str, float] = field(default_factory=dict)
    #: each partition's ``TRESBillingWeights`` by name (none: billed its CPUs)
    billing_weights: dict[str, dict[str, float]] = field(default_factory=dict)
    #: ``PriorityFlags=MAX_TRES`` (billable TRES: the largest node TRES term, plus the others)
    max_tres: bool = False
    #: TRES priority terms over the partition's TRES (``NO_NORMAL_TRES`` turns it off)
    normal_tres: bool = True
    #: the site's associations and QOS (``--slurm-accounts``); None: the workload's own
    accounts: SlurmAccounts | None = None

    @classmethod
    def defaults(cls) -> SlurmSettings:
        """Slurm 22.05's defaults: every weight 0 (jobs in submission order), backfill every
        30 s, no limits."""
        return cls()

    @classmethod
    def from_conf(
        cls,
        path: str,
        priority: dict[str, str],
        scheduler: dict[str, str],
        settings: dict[str, str],
        partition_factors: dict[str, int],
        *,
        lines: Mapping[str, int] | None = None,
        billing: Mapping[str, tuple[str, int]] | None = None,
    ) -> SlurmSettings:
        """The settings of a slurm.conf's values (``SlurmConf.priority``, ``.scheduler``,
        ``.settings``; ``lines``: the line of each setting); an :class:`InputError` naming the
        file, the line and the key for a value that cannot be read or is past the engine's
        range (counts up to ``_core.MAX_COUNT``, times up to ``_core.MAX_TIME``). ``billing``:
        each partition's ``TRESBillingWeights`` and its line."""
        notes: list[str] = []
        at = dict(lines or {})

        def fail(key: str, what: str) -> InputError:
            line = at.get(key.split(" ", 1)[0])
            return InputError(what, path=path, line=line, field=key)

        def whole(
            key: str, text: str, minimum: int = 0, maximum: int = _core.MAX_COUNT, of: str = ""
        ) -> int:
            try:
                return whole_number(text, maximum, minimum, of)
            except ValueError as exc:
                raise fail(key, str(exc)) from None

        def seconds(key: str, text: str) -> float:
            try:
                value = slurm_duration(text)
            except ValueError as e:
                raise fail(key, str(e)) from None
            if value is None:
                raise fail(key, "must be a duration, not UNLIMITED")
            return value

        def said(key: str) -> str:
            line = at.get(key)
            return f"{path}, line {line}" if line is not None else path

        p = _priority_defaults()
        kind = priority.get("PriorityType", "priority/basic").lower()
        multifactor = kind == "priority/multifactor"
        if kind not in ("priority/basic", "priority/multifactor"):
            raise fail(
                "PriorityType", f"must be priority/basic or priority/multifactor, not {shown(kind)}"
            )
        for key, name in PRIORITY_WEIGHTS.items():
            if key in priority:  # (the engine's weights are 32-bit, as Slurm's)
                p[name] = float(whole(key, priority[key]))
        for key, name in (
            ("PriorityMaxAge", "max_age"),
            ("PriorityDecayHalfLife", "decay_half_life"),
        ):
            if key in priority:
                p[name] = seconds(key, priority[key])
        if "PriorityCalcPeriod" in priority:
            p["calc_period"] = seconds("PriorityCalcPeriod", priority["PriorityCalcPeriod"])
            if p["calc_period"] < 60:
                raise fail("PriorityCalcPeriod", "must be at least 1 minute")
        favor = priority.get("PriorityFavorSmall", "NO").upper()
        if favor not in ("YES", "NO"):
            raise fail("PriorityFavorSmall", f"must be YES or NO, not {shown(favor)}")
        p["favor_small"] = favor == "YES"
        unused: list[str] = []
        unknown: list[str] = []
        for flag in (f.strip().upper() for f in priority.get("PriorityFlags", "").split(",")):
            if flag == "NO_FAIR_TREE":
                p["fair_share"] = "classic"
            elif flag == "SMALL_RELATIVE_TO_TIME":
                p["small_relative_to_time"] = True
            elif flag and flag not in PRIORITY_FLAGS:
                unknown.append(flag)
            elif flag and flag not in FOLLOWED_FLAGS:
                unused.append(flag)
        head = f"{said('PriorityFlags')}: PriorityFlags"
        notes += _name_notes(head, unknown, unused, "a flag", PRIORITY_FLAGS)
        if "FairShareDampeningFactor" in settings:
            p["dampening"] = float(
                whole("FairShareDampeningFactor", settings["FairShareDampeningFactor"], 1)
            )
        flags = {f.strip().upper() for f in priority.get("PriorityFlags", "").split(",")}
        tres_weights: dict[str, float] = {}
        if "PriorityWeightTRES" in priority and multifactor:
            key = "PriorityWeightTRES"
            tres_weights = parse_weights(priority[key], path, at.get(key), key)
            notes += _unfollowed_tres(said(key), key, tres_weights)
        billing_weights: dict[str, dict[str, float]] = {}
        for name, (text, line) in (billing or {}).items():
            if text.strip():
                weights = parse_weights(text, path, line, "TRESBillingWeights")
                billing_weights[name] = weights
                where = f"{path}, line {line}"
                notes += _unfollowed_tres(where, f"partition {name}'s TRESBillingWeights", weights)
        if (
            "PriorityUsageResetPeriod" in priority
            and priority["PriorityUsageResetPeriod"].upper() != "NONE"
        ):
            notes.append(
                f"{said('PriorityUsageResetPeriod')}: PriorityUsageResetPeriod is not simulated "
                "(usage is never reset)"
            )
        if not multifactor:
            for name in PRIORITY_WEIGHTS.values():
                p[name] = 0.0
        dbd = settings.get("AccountingStorageType", "").lower() == "accounting_storage/slurmdbd"
        if multifactor and not dbd and (p["weight_age"] or p["weight_fairshare"]):
            notes.append(
                f"{path}: without AccountingStorageType=accounting_storage/slurmdbd Slurm ignores "
                "PriorityWeightAge and PriorityWeightFairshare; so does the simulation"
            )
            p["weight_age"] = p["weight_fairshare"] = 0.0
        enforce = {
            e.strip().lower() for e in settings.get("AccountingStorageEnforce", "").split(",")
        }
        limits = bool(enforce & {"limits", "safe", "all"})
        p["charge_at_end"] = limits

        s = _scheduler_defaults()
        scheduler_type = settings.get("SchedulerType", "sched/backfill").lower()
        if scheduler_type not in ("sched/backfill", "sched/builtin"):
            raise fail(
                "SchedulerType",
                f"must be sched/backfill or sched/builtin, not {shown(scheduler_type)}",
            )
        unused, unknown = [], []
        for key, text in scheduler.items():
            name = key.lower()
            field_name = f"SchedulerParameters {key}"
            if name in ("sched_interval", "bf_interval"):
                if text.strip() == "-1":
                    s[name] = None
                    continue
                try:
                    s[name] = float(whole_number(text, int(_core.MAX_TIME), 1))
                except ValueError:
                    raise fail(
                        field_name,
                        f"must be -1 or a whole number of seconds from 1 to "
                        f"{_core.MAX_TIME:.0f}, not {shown(text)}",
                    ) from None
            elif name in ("default_queue_depth", "bf_max_job_test"):
                s[name] = whole(field_name, text, 1)  # (the engine needs one at least)
            elif name == "bf_max_job_user":
                s[name] = whole(field_name, text)
            elif name == "bf_window":  # minutes
                s[name] = 60.0 * whole(field_name, text, 1, int(_core.MAX_TIME) // 60, "minutes")
            elif name == "bf_resolution":
                s[name] = float(whole(field_name, text, 1, int(_core.MAX_TIME), "seconds"))
            elif name == "bf_continue":
                s[name] = True
            elif name not in _KNOWN_PARAMETERS:
                unknown.append(key)
            elif name not in NO_EFFECT:
                unused.append(key)
        head = f"{said('SchedulerParameters')}: SchedulerParameters"
        notes += _name_notes(head, unknown, unused, "a parameter", SCHEDULER_PARAMETERS)
        if scheduler_type == "sched/builtin":
            s["bf_interval"] = None
        return cls(
            priority=p,
            scheduler=s,
            enforce_limits=limits,
            partition_factors=dict(partition_factors),
            notes=tuple(notes),
            tres_weights=tres_weights,
            billing_weights=billing_weights,
            max_tres="MAX_TRES" in flags,
            normal_tres="NO_NORMAL_TRES" not in flags,
        )
