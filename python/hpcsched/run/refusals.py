"""Jobs the engine refused at submission: over a partition's limits (``EnforcePartLimits``)
or a QOS' ``MaxSubmitJobsPerUser`` under ``--policy slurm``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hpcsched import _core

if TYPE_CHECKING:
    import pandas as pd

#: Why the engine refused a job at submission, by the code in ``results()["rejected"]``.
REJECTIONS = tuple(_core.rejection_names())
#: Reasons only a site of shared nodes gives (the last codes): named in a run's column and
#: summary only when a job has one, so that the outputs of whole-node sites stay as they were.
SHARED_ONLY = ("over_max_mem_per_node",)


def named(names: tuple[str, ...], codes: np.ndarray) -> tuple[str, ...]:
    """The categories of a reason column with ``codes``: every name but the shared-nodes ones
    unless a code needs them."""
    base = tuple(n for n in names if n not in SHARED_ONLY)
    return names if len(codes) and int(np.max(codes)) >= len(base) else base


def by_reason(names: tuple[str, ...], counts: Any) -> dict[str, int]:
    """Every reason's count (0 when none), the shared-nodes ones only when some job has them."""
    out = {reason: int(counts.get(reason, 0)) for reason in names}
    return {r: n for r, n in out.items() if n or r not in SHARED_ONLY}


def rejected_column(raw: dict[str, Any]) -> pd.Categorical[str]:
    """``jobs.parquet``'s ``rejected`` column: why each job was refused (null: it was not)."""
    import pandas as pd

    codes = np.asarray(raw["rejected"], np.int64)
    return pd.Categorical.from_codes(codes, pd.Index(named(REJECTIONS, codes)))


def rejected_summary(table: pd.DataFrame) -> dict[str, Any]:
    """Jobs refused at submission, in all and by reason."""
    counts = table["rejected"].value_counts()
    return {
        "total": int(counts.sum()),
        "by_reason": by_reason(REJECTIONS, counts),
    }
