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


def rejected_column(raw: dict[str, Any]) -> pd.Categorical[str]:
    """``jobs.parquet``'s ``rejected`` column: why each job was refused (null: it was not)."""
    import pandas as pd

    return pd.Categorical.from_codes(np.asarray(raw["rejected"], np.int64), pd.Index(REJECTIONS))


def rejected_summary(table: pd.DataFrame) -> dict[str, Any]:
    """Jobs refused at submission, in all and by reason."""
    counts = table["rejected"].value_counts()
    return {
        "total": int(counts.sum()),
        "by_reason": {reason: int(counts.get(reason, 0)) for reason in REJECTIONS},
    }
