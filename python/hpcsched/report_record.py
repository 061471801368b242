"""The report's section on the schedule the trace records (``--policy recorded``,
:mod:`hpcsched.agreement`): how close each run comes to it, and where the record disagrees with
the model of the machine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from hpcsched.tables import agreement_columns, by_agreement, parameter_text
from hpcsched.workload.record import CONFLICT_NAMES

if TYPE_CHECKING:
    from hpcsched.report import Report
    from hpcsched.run import Result


#: Each kind of conflict of the record with the machine model: its name and what it means
#: (:mod:`hpcsched.workload.record`).

_AGREEMENT_CAPTION = (
    "Closest first, by the mean start error. Every column but the utilization's compares the "
    "same jobs: those started both in the run and in the record (jobs compared). Start error: "
    "|simulated start - recorded start|, averaged over those jobs; within 1 h: the share of "
    "them started within an hour of their recorded start. Wait rank corr.: Spearman's rank "
    "correlation of the simulated and the recorded waits, 1 when the policy makes the same jobs "
    "wait longest whatever the scale, near 0 when its waits bear no relation to the record's. "
    "The differences are simulated minus recorded: the mean and the 95th percentile of the wait "
    "(h), and the utilization over uptime (percentage points) over the span both schedules "
    "cover, from the first submission to the earlier of their last ends; below zero the policy "
    "waits less, or keeps the machine less busy, than the site did."
)


def add_sweep_agreement(report: Report, table: pd.DataFrame, labels: tuple[str, ...]) -> None:
    """A sweep's runs ranked by their agreement with the recorded schedule of their workload,
    closest first within each (the runs identified by ``labels``); nothing when no workload
    records one."""
    columns = agreement_columns(table)
    if not columns:
        return
    ranked = by_agreement(table)
    shown = pd.DataFrame({label: ranked[label].map(parameter_text).to_numpy() for label in labels})
    for column, heading, fmt in columns:
        shown[heading] = ranked[column].map(fmt).to_numpy()
    report.heading("Agreement with the recorded schedule")
    report.paragraph(
        "For the workloads whose trace records each job's wait: how close each run comes to "
        "what the site's scheduler did (its Recorded row in the table above), job by job."
    )
    report.table(
        shown,
        caption=_AGREEMENT_CAPTION.replace(
            "Closest first", "Closest first within each workload", 1
        ),
    )


def add_agreement(report: Report, table: pd.DataFrame, results: Mapping[str, Result]) -> None:
    """The section "Agreement with the recorded schedule", when the trace records one: the
    runs ranked closest first (``tables.by_agreement``), their agreement per size class, and
    the recorded run's conflicts with the machine model and the jobs it leaves out; nothing
    for a trace without a record."""
    columns = agreement_columns(table)
    recorded = [label for label, r in results.items() if r.info.get("record")]
    if not columns and not recorded:
        return
    report.heading("Agreement with the recorded schedule")
    report.paragraph(_record_intro(recorded, bool(columns)))
    if columns:
        ranked = by_agreement(table)
        agreements = [results[label].info["agreement"] for label in ranked["policy"]]
        shown = pd.DataFrame(
            {
                "rank": [str(k) for k in range(1, len(ranked) + 1)],
                "policy": ranked["policy"].to_numpy(),
                "jobs compared": [f"{a['jobs']:,}" for a in agreements],
            }
        )
        for column, heading, fmt in columns:
            shown[heading] = ranked[column].map(fmt).to_numpy()
        report.heading("Closest to the record", 3)
        report.table(shown, caption=_AGREEMENT_CAPTION)
        by_class, counts = _agreement_by_group(list(ranked["policy"]), agreements, "by_class")
        report.heading("Agreement per size class", 3)
        report.table(
            by_class,
            caption="Mean start error (h) and share of jobs started within an hour of their "
            f"recorded start (%), per size class (as in Waits per size class); jobs compared: "
            f"{counts}.",
        )
        if all("by_partition" in a for a in agreements):
            by_partition, counts = _agreement_by_group(
                list(ranked["policy"]), agreements, "by_partition"
            )
            report.heading("Agreement per partition", 3)
            report.table(
                by_partition,
                caption="The same per partition (the one where the run started each job); jobs "
                f"compared: {counts}.",
            )
    for label in recorded:
        record = results[label].info["record"]
        report.heading(f"{label}: the record against the machine model", 3)
        report.table(
            _conflict_rows(record),
            caption="Where the record disagrees with the model of the machine the runs "
            f"simulate. {label} keeps every recorded start and counts each disagreement; a "
            "job may fall under several kinds. Job ids are the trace's.",
        )
        report.definitions(_record_notes(record, int(results[label].info["inputs"]["nodes"])))


def _record_intro(recorded: list[str], compared: bool) -> str:
    if recorded:
        rows = " and ".join(recorded)
        text = (
            f"The {rows} row is what the site's scheduler did, as the trace records it: each "
            "job started at its submission plus its recorded wait and ran its recorded run "
            "time. It is not a simulation."
        )
    else:
        text = (
            "The trace records when the site's scheduler started each job (its submission plus "
            "its recorded wait); that recorded schedule is not among the runs here."
        )
    if compared:
        text += (
            " Every other run simulates the same jobs on the model of the machine; below, how "
            "close each comes to what happened (the figure 'Start error against the recorded "
            "schedule' under Plots shows the distribution of each policy's start errors)."
        )
    return text


def _agreement_by_group(
    labels: list[str], agreements: list[dict[str, Any]], key: str
) -> tuple[pd.DataFrame, str]:
    """Per run (rows) and group of ``key`` (``by_class``: size classes, ``by_partition``):
    mean start error (h) and share within an hour (%); and the jobs compared per group, as
    text (a range where the runs differ)."""
    groups = [g for g in agreements[0][key] if any(a[key][g]["jobs"] for a in agreements)]
    rows = []
    for label, agreement in zip(labels, agreements, strict=True):
        row = {"policy": label}
        for group in groups:
            stats = agreement[key][group]
            error, within = stats["start_error_mean"], stats["within_1h"]
            row[f"{group} error (h)"] = "-" if error is None else f"{error / 3600:,.2f}"
            row[f"{group} within 1 h (%)"] = "-" if within is None else f"{100 * within:.1f}"
        rows.append(row)
    counts = []
    for group in groups:
        jobs = [a[key][group]["jobs"] for a in agreements]
        low, high = min(jobs), max(jobs)
        counts.append(f"{group} {low:,}" + ("" if low == high else f"-{high:,}"))
    return pd.DataFrame(rows), ", ".join(counts)


def _conflict_rows(record: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for kind, conflict in record["conflicts"].items():
        name, meaning = CONFLICT_NAMES.get(kind, (kind.replace("_", " "), "-"))
        examples = conflict["examples"]
        rows.append(
            {
                "conflict": name,
                "what it is": meaning,
                "jobs": f"{conflict['jobs']:,}",
                "e.g. job ids": ", ".join(str(i) for i in examples) or "-",
                "treated": conflict["treated"] if conflict["jobs"] else "",
            }
        )
    return pd.DataFrame(rows)


def _record_notes(record: Mapping[str, Any], machine: int) -> dict[str, str]:
    """The record's replayed jobs, its excess over the machine and the jobs left out."""
    over = record["conflicts"]["over_capacity"]
    left = record["left_out"]
    archive = left["by_the_archive"]
    notes = {"started as recorded": _jobs(record["replayed"])}
    if over["jobs"] and "by_resource" in over:
        resources = ", ".join(
            f"{name} ({_jobs(entry['jobs'])})"
            for name, entry in over["by_resource"].items()
            if entry["jobs"]
        )
        notes["over capacity"] = (
            f"checked {over['checked']}: more {resources} held than the nodes have; "
            f"{over['seconds'] / 3600:,.2f} h above"
        )
    elif over["jobs"]:
        notes["over capacity"] = (
            f"at most {over['peak_busy_nodes']:,} nodes busy on a {machine:,}-node machine; "
            f"{over['seconds'] / 3600:,.2f} h with more nodes busy than up "
            f"({over['node_seconds'] / 3600:,.2f} node-hours above)"
        )
    notes["left out by the reader"] = (
        f"{_jobs(left['by_the_reader'])} (in no run: see Inputs)"
        if left["by_the_reader"]
        else "none"
    )
    notes["left out by the archive"] = (
        "not stated by the trace" if archive is None else _jobs(archive)
    )
    return notes


def _jobs(count: int) -> str:
    return f"{count:,} job{'' if count == 1 else 's'}"


__all__ = ["add_agreement", "add_sweep_agreement"]
