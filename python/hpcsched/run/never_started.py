"""Jobs that never started, and why (docs/semantics.md, "Jobs that never start").

The engine starts what it can; a job left without a start has one of these reasons, told
apart here from what the run records:

- ``refused_at_submission``: the engine refused it (``jobs.parquet``'s ``rejected``: over its
  partitions' limits with ``over_limits = "reject"``, a QOS' ``MaxSubmitJobsPerUser``);
- ``held_by_partition``: no candidate partition would ever start it, and the site holds it
  pending for ever (``over_limits = "hold"``, Slurm's ``EnforcePartLimits=NO``), or only
  partitions in state DOWN accept it (``jobs.parquet``'s ``held`` says which limit);
- ``no_recorded_start``: ``--policy recorded``, and the trace records no wait for it;
- ``waiting_at_end``: any other, still pending when nothing more could happen (a QOS limit it
  can never meet, nodes down for ever, a Python policy that never started it).

Which jobs a site holds, and why, the engine records as it queues them (``model/site.rs``,
``Site::held``: a candidate refuses a job when drained, when the job is larger than it, over
its MaxNodes, under its MinNodes or over its MaxTime, in that order; a job no candidate accepts
gets the first candidate's reason).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hpcsched import _core
from hpcsched.run.refusals import by_reason, named

if TYPE_CHECKING:
    import pandas as pd

#: Why a job never started, in the order the summaries list them.
NEVER_STARTED_REASONS = (
    "refused_at_submission",
    "held_by_partition",
    "no_recorded_start",
    "waiting_at_end",
)
#: Why a site holds a job pending for ever, by the code in ``results()["held"]``: the partition
#: limit its first candidate refuses it by, or ``partition_down`` (only DOWN partitions
#: accept it).
HELD_REASONS = tuple(_core.held_names())


def held_column(codes: np.ndarray, started: np.ndarray) -> pd.Categorical[str]:
    """``jobs.parquet``'s ``held`` column: why the site held each job that never started
    pending for ever (null for the others)."""
    import pandas as pd

    shown = np.where(started, -1, codes).astype(np.int64)
    return pd.Categorical.from_codes(shown, pd.Index(named(HELD_REASONS, shown)))


def never_started_reasons(table: pd.DataFrame, *, recorded: bool) -> np.ndarray:
    """Per job, the code (into :data:`NEVER_STARTED_REASONS`) of why it never started, -1 for
    the jobs that did: from the job table's ``rejected`` and ``held`` columns; ``recorded``
    for the recorded schedule (a job without a start has no recorded wait)."""
    never = table["start"].isna().to_numpy()
    codes = np.full(len(table), -1, dtype=np.int8)
    if recorded:
        codes[never] = NEVER_STARTED_REASONS.index("no_recorded_start")
        return codes
    codes[never] = NEVER_STARTED_REASONS.index("waiting_at_end")
    if "held" in table:
        codes[never & table["held"].notna().to_numpy()] = NEVER_STARTED_REASONS.index(
            "held_by_partition"
        )
    if "rejected" in table:
        codes[table["rejected"].notna().to_numpy()] = NEVER_STARTED_REASONS.index(
            "refused_at_submission"
        )
    return codes


def never_started_summary(table: pd.DataFrame, *, recorded: bool) -> dict[str, int]:
    """The jobs that never started by reason (every reason, 0 when none)."""
    codes = never_started_reasons(table, recorded=recorded)
    counts = np.bincount(codes[codes >= 0], minlength=len(NEVER_STARTED_REASONS))
    return {reason: int(counts[k]) for k, reason in enumerate(NEVER_STARTED_REASONS)}


def held_summary(table: pd.DataFrame) -> dict[str, Any]:
    """Jobs held by their partition for ever, in all and by reason."""
    counts = table["held"].value_counts()
    return {
        "total": int(counts.sum()),
        "by_reason": by_reason(HELD_REASONS, counts),
    }


#: How the terminal and the reports name each reason.
REASON_TEXT = {
    "refused_at_submission": "refused at submission",
    "held_by_partition": "held by their partition",
    "no_recorded_start": "no recorded start",
    "waiting_at_end": "still waiting at the end",
}
#: The summary's entry that breaks a reason down (by the limit or the refusal).
_DETAIL = {"refused_at_submission": "rejected", "held_by_partition": "held"}


def never_started_text(jobs: dict[str, Any], *, refusals: bool = True) -> str:
    """A summary's ``jobs`` entry as "4,695 held by their partition (larger than partition
    4,695)": each reason with jobs, the holds by limit and, with ``refusals``, the refusals
    by reason; empty when every job started. (A summary written before the reasons were
    counted gives the total alone.)"""
    total = int(jobs.get("never_started") or 0)
    reasons = jobs.get("never_started_by_reason")
    if not total:
        return ""
    if not reasons:
        return f"{total:,}"
    parts = []
    for reason, count in reasons.items():
        if not count:
            continue
        detail = _DETAIL.get(reason) if refusals or reason != "refused_at_submission" else None
        by_limit = (jobs.get(detail) or {}).get("by_reason", {}) if detail else {}
        limits = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in by_limit.items() if v)
        parts.append(
            f"{count:,} {REASON_TEXT.get(reason, reason)}" + (f" ({limits})" if limits else "")
        )
    return ", ".join(parts)
