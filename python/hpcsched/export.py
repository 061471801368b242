"""A run as Batsim's ``jobs.csv``: one row per attempt that started, each on its named nodes
(``hpcsched.placement``), so that evalys and the rest of the Batsim tooling read hpcsched's
schedules as they are."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hpcsched._io import atomic_write_bytes
from hpcsched.node_ranges import node_count

if TYPE_CHECKING:
    from hpcsched.run import Result

#: Batsim's jobs.csv columns, in its order.
BATSIM_COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)


def batsim_jobs(result: Result) -> pd.DataFrame:
    """``result`` as Batsim's jobs.csv table, in start order.

    A job's last attempt keeps its id; an attempt that downtime killed is a row of its own,
    ``ID#K`` (its K-th start), ``COMPLETED_KILLED``, as Batsim names resubmissions. Jobs that
    never started are left out (Batsim lists only jobs it ran or rejected, and a rejection
    there is the scheduler's own act). ``allocated_resources`` is an interval set of node
    indices (``0-3 7``), ``consumed_energy`` the job's energy in J (-1 without a power
    model), ``metadata`` its partition on a site."""
    from hpcsched.placement import placement

    placed = placement(result)
    attempts = placed.jobs
    jobs = result.jobs
    index = attempts["job_index"].to_numpy(np.int64)
    killed = attempts["killed"].to_numpy(bool)
    ids = jobs["job_id"].to_numpy()[index].astype(np.int64).astype(str)
    order = attempts.groupby("job_index").cumcount().to_numpy() + 1
    ids = np.where(killed, np.char.add(np.char.add(ids, "#"), order.astype(str)), ids)
    submit = jobs["submit"].to_numpy(np.float64)[index]
    start = attempts["start"].to_numpy(np.float64)
    finish = attempts["end"].to_numpy(np.float64)
    requested = jobs["requested_time"].to_numpy(np.float64)[index]
    over = jobs["killed"].to_numpy(bool)[index] & ~killed
    state = np.where(
        killed,
        "COMPLETED_KILLED",
        np.where(over, "COMPLETED_WALLTIME_REACHED", "COMPLETED_SUCCESSFULLY"),
    )
    execution = finish - start
    turnaround = finish - submit
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, turnaround / execution, np.inf)
    if "energy_kwh" in jobs:
        energy = jobs["energy_kwh"].to_numpy(np.float64)[index] * 3.6e6
        energy = np.where(killed | np.isnan(energy), -1.0, energy)
    else:
        energy = np.full(len(attempts), -1.0)
    node_texts = attempts["nodes"].tolist()
    resources = [text.replace(",", " ") for text in node_texts]
    counts = [node_count(text) for text in node_texts]
    workload = Path(str(result.info["inputs"].get("trace", "w0"))).name
    return pd.DataFrame(
        {
            "job_id": ids,
            "workload_name": workload,
            "profile": "",
            "submission_time": submit,
            "requested_number_of_resources": np.asarray(counts, np.int64),
            "requested_time": requested,
            "success": (state == "COMPLETED_SUCCESSFULLY").astype(np.int64),
            "final_state": state,
            "starting_time": start,
            "execution_time": execution,
            "finish_time": finish,
            "waiting_time": start - submit,
            "turnaround_time": turnaround,
            "stretch": stretch,
            "allocated_resources": resources,
            "consumed_energy": energy,
            "metadata": [p if isinstance(p, str) else "" for p in attempts["partition"]],
        },
        columns=list(BATSIM_COLUMNS),
    )


def write_batsim_jobs(result: Result, path: str | os.PathLike[str]) -> str:
    """Writes ``result`` as Batsim's jobs.csv at ``path`` (replaced whole, never half
    written); returns the path."""
    buffer = io.StringIO()
    batsim_jobs(result).to_csv(buffer, index=False, float_format="%.6f")
    atomic_write_bytes(path, buffer.getvalue().encode())
    return os.fspath(path)
