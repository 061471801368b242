"""How a results table reads: its cells as text and its headline columns with their formats,
for the terminal (``compare``, ``sweep``) and the HTML reports alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd


def is_given(value: Any) -> bool:
    """A table cell holds a value (not None, not NaN)."""
    return not (value is None or (isinstance(value, float) and pd.isna(value)))


def parameter_text(value: Any) -> str:
    """A parameter cell as text: ``-`` when absent; whole floats without decimals (a parameter
    column with gaps is float: 1000.0 reads as 1000)."""
    if not is_given(value):
        return "-"
    if isinstance(value, float) and value.is_integer():
        return f"{value:.0f}"
    return str(value)


def _cell(spec: str, times: float = 1.0, per: float = 1.0) -> Callable[[Any], str]:
    """A formatter of a metric cell: ``-`` when absent, else ``spec`` of ``value * times /
    per`` (seconds per 3600 for hours, fractions times 100 for percent)."""

    def format_cell(x: Any) -> str:
        return "-" if pd.isna(x) else spec.format(x * times / per)

    return format_cell


#: The headline cells: waits in hours, shares in percent, plain numbers.
_hours = _cell("{:,.2f}", per=3600)
_pct = _cell("{:.2f}", times=100)
_num = _cell("{:,.2f}")


def _count(x: Any) -> str:
    return f"{int(x):,}"


def _mwh(x: Any) -> str:
    """Energy in MWh, with as many decimals as a small partition needs."""
    return "-" if not is_given(x) else f"{float(x):.4g}"


#: The utilization of a resource beside the CPUs (runs on shared nodes).
RESOURCE_COLUMNS = ("utilization_memory",)


def summary_columns(table: pd.DataFrame) -> list[tuple[str, str, Callable[[Any], str]]]:
    """(column, heading, formatter) of the headline metrics present in a results table, for
    the terminal and the report."""

    columns: list[tuple[str, str, Callable[[Any], str]]] = [("completed", "jobs", _count)]
    if "never_started" in table and (table["never_started"].fillna(0) > 0).any():
        # the jobs that started beside those that never did: a run's waits are over the first
        columns = [("completed", "started", _count), ("never_started", "never started", _count)]
    columns += [
        ("wait_mean", "mean wait (h)", _hours),
        ("wait_median", "median (h)", _hours),
        ("wait_p95", "P95 (h)", _hours),
        ("wait_max", "max (h)", _hours),
        ("bsld_mean", "bsld", _num),
        ("utilization", "util. (%)", _pct),
    ]
    # where jobs share nodes, beside the CPUs' utilization: memory's and each GRES kind's
    columns += [
        (name, f"{name.removeprefix('utilization_').removeprefix('gres/')} util. (%)", _pct)
        for name in table.columns
        if name in RESOURCE_COLUMNS or name.startswith("utilization_gres/")
    ]
    if "utilization_before_maintenance" in table and (
        table["utilization_before_maintenance"].notna().any()
    ):
        columns.append(("utilization_before_maintenance", "before maint. (%)", _pct))
    if "energy_total_mwh" not in table:  # a summary of means: no energy, no search columns
        return columns
    if table["energy_total_mwh"].notna().any():
        columns += [
            ("energy_total_mwh", "energy (MWh)", _num),
            ("energy_wasted_mwh", "wasted (MWh)", _num),
        ]
    if table["icon_share"].notna().any():
        columns.append(("icon_share", "ICON (%)", _pct))
    if table["searches"].any():
        columns += [("searches", "searches", _count), ("drains", "drain decisions", _count)]
    columns.append(("simulate_seconds", "simulated in (s)", _num))
    return columns


def agreement_columns(table: pd.DataFrame) -> list[tuple[str, str, Callable[[Any], str]]]:
    """(column, heading, formatter) of the agreement with the recorded schedule
    (:mod:`hpcsched.agreement`); none when no run of the table has it."""
    if "start_error_mean" not in table or not table["start_error_mean"].notna().any():
        return []
    return [
        ("start_error_mean", "start error (h)", _hours),
        ("start_within_1h", "within 1 h (%)", _cell("{:.1f}", times=100)),
        ("wait_rank_corr", "wait rank corr.", _cell("{:.3f}")),
        ("wait_mean_diff", "mean wait diff. (h)", _cell("{:+,.2f}", per=3600)),
        ("wait_p95_diff", "P95 wait diff. (h)", _cell("{:+,.2f}", per=3600)),
        ("utilization_diff", "util. diff. (points)", _cell("{:+.1f}", times=100)),
    ]


def by_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """The runs that have an agreement with the recorded schedule, the closest first (the
    smallest mean start error; ties keep the table's order); a table of several workloads (a
    sweep's) is ranked within each, the workloads in their order."""
    if "start_error_mean" not in table:
        return table.iloc[:0]
    close = table[table["start_error_mean"].notna()]
    close = close.sort_values("start_error_mean", kind="stable")
    if "workload" in close and close["workload"].nunique() > 1:
        order = {w: k for k, w in enumerate(dict.fromkeys(table["workload"]))}
        close = close.sort_values("workload", kind="stable", key=lambda w: w.map(order))
    return close


def partition_waits(infos: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Per run (``infos``: label -> summary) and partition, the jobs that ran in it, their
    mean and P95 wait (s), mean bounded slowdown and the partition's utilization (fraction):
    one row per (run, partition), the runs in their order; empty when no run had partitions."""
    rows = [
        {
            "policy": label,
            "partition": name,
            "nodes": part["nodes"],
            "jobs": part["jobs"],
            "wait_mean": part["wait"]["mean"],
            "wait_p95": part["wait"]["p95"],
            "bsld_mean": part["bounded_slowdown_mean"],
            "utilization": part["utilization"],
            # (platforms with power models: each partition's nodes' energy)
            **(
                {
                    "energy_mwh": part["energy"]["total_mwh"],
                    "energy_wasted_mwh": part["energy"]["wasted_mwh"],
                }
                if "energy" in part
                else {}
            ),
        }
        for label, info in infos.items()
        for name, part in (info.get("partitions") or {}).items()
    ]
    return pd.DataFrame(rows)


def partition_rows(table: pd.DataFrame) -> pd.DataFrame:
    """``partition_waits`` as a report's table: counts, hours and percents as text."""
    return pd.DataFrame(
        {
            "policy": table["policy"],
            "partition": table["partition"],
            "nodes": table["nodes"].map(_count),
            "jobs": table["jobs"].map(_count),
            "mean wait (h)": table["wait_mean"].map(_hours),
            "P95 wait (h)": table["wait_p95"].map(_hours),
            "bsld": table["bsld_mean"].map(_num),
            "utilization (%)": table["utilization"].map(_pct),
            **(
                {
                    "energy (MWh)": table["energy_mwh"].map(_mwh),
                    "wasted (MWh)": table["energy_wasted_mwh"].map(_mwh),
                }
                if "energy_mwh" in table
                else {}
            ),
        }
    )


def partition_wait_cells(table: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """``partition_waits`` as terminal columns: each partition's mean wait (h), one row per
    run (in the order of ``table``)."""
    policies = list(dict.fromkeys(table["policy"]))
    cells = []
    for name in dict.fromkeys(table["partition"]):
        mine = table[table["partition"] == name].set_index("policy")
        cells.append((f"{name} (h)", [_hours(mine.at[p, "wait_mean"]) for p in policies]))
        if "energy_mwh" in mine:
            wasted = [_mwh(mine.at[p, "energy_wasted_mwh"]) for p in policies]
            cells.append((f"{name} wasted (MWh)", wasted))
    return cells
