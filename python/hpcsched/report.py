"""Self-contained HTML reports: inputs, summary tables and plots in one file, images embedded.

:class:`Report` assembles a page from headings, paragraphs, tables and matplotlib figures;
:func:`comparison_report` builds the standard report of a comparison: whatever holds its runs,
their headline table and the workload's label (:class:`Compared`; a
:class:`~hpcsched.comparison.Comparison` does, and calls it from its ``report``). The report
knows nothing of how runs are compared.
"""

from __future__ import annotations

import base64
import datetime
import html
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from hpcsched import plots
from hpcsched._io import atomic_write_bytes
from hpcsched.plots.catalog import reading_of
from hpcsched.policies import RECORDED
from hpcsched.report_record import add_agreement, add_sweep_agreement
from hpcsched.tables import is_given, parameter_text, summary_columns

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hpcsched.run import Result

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 1000px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.5em; }
.meta { color: #666; font-size: 0.9em; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.6em; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { caption-side: bottom; text-align: left; color: #666; font-size: 0.85em;
          padding-top: 0.3em; }
figure { margin: 1.2em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: 600; }
dd { margin: 0; }
code { font-size: 0.9em; }
"""


class Report:
    """An HTML page built section by section."""

    def __init__(self, title: str, subtitle: str | None = None) -> None:
        self.title = title
        self.parts: list[str] = [f"<h1>{html.escape(title)}</h1>"]
        generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        from hpcsched import __version__

        meta = f"hpcsched {__version__}, generated {generated}"
        if subtitle:
            meta = f"{html.escape(subtitle)} · {meta}"
        self.parts.append(f'<p class="meta">{meta}</p>')

    def heading(self, text: str, level: int = 2) -> None:
        self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def paragraph(self, text: str) -> None:
        self.parts.append(f"<p>{html.escape(text)}</p>")

    def definitions(self, items: Mapping[str, Any]) -> None:
        rows = "".join(
            f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>"
            for k, v in items.items()
        )
        self.parts.append(f"<dl>{rows}</dl>")

    def table(self, frame: pd.DataFrame, caption: str | None = None) -> None:
        """A table of already formatted cells; cells that read as numbers align right."""
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
        body = []
        for row in frame.itertuples(index=False):
            cells = []
            for value in row:
                text = str(value)
                numeric = _looks_numeric(text)
                css = ' class="num"' if numeric else ""
                cells.append(f"<td{css}>{html.escape(text)}</td>")
            body.append(f"<tr>{''.join(cells)}</tr>")
        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        self.parts.append(  # wide tables scroll sideways instead of overflowing the page
            f'<div class="wide"><table>{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>"
        )

    def figure(self, figure: Figure, caption: str) -> None:
        """Embeds the figure as a PNG; the figure is closed afterwards."""
        data = base64.b64encode(plots.figure_to_png(figure)).decode("ascii")
        alt = html.escape(caption, quote=True)
        self.parts.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{alt}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )

    def html(self) -> str:
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(self.title)}</title><style>{_STYLE}</style></head>"
            f"<body>\n{chr(10).join(self.parts)}\n</body></html>\n"
        )

    def write(self, path: str | os.PathLike[str]) -> str:
        """Writes the page atomically (temporary name, then rename); returns its path."""
        target = os.path.abspath(os.fspath(path))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        atomic_write_bytes(target, self.html().encode("utf-8"))
        return target


def _looks_numeric(text: str) -> bool:
    stripped = text.replace(",", "").replace("%", "").strip()
    if stripped in ("-", ""):
        return stripped == "-"
    try:
        float(stripped)
    except ValueError:
        return False
    return True


def formatted(table: pd.DataFrame, label: str = "policy") -> pd.DataFrame:
    """The headline metrics of a results table, formatted for reading."""
    out = pd.DataFrame({label: table[label]})
    for column, heading, fmt in summary_columns(table):
        out[heading] = table[column].map(fmt)
    return out


class Compared(Protocol):
    """What the report of a comparison reads of it: each policy's run by label, one row of
    headline metrics per policy, and the workload's label."""

    @property
    def results(self) -> dict[str, Result]: ...

    @property
    def table(self) -> pd.DataFrame: ...

    @property
    def workload(self) -> str: ...


def comparison_report(
    comparison: Compared, path: str | os.PathLike[str], *, title: str | None = None
) -> str:
    """The standard report of a comparison: inputs, summary, waits per size class, energy and
    look-ahead tables when they apply, then every plot that applies."""
    results = comparison.results
    first = next(iter(results.values()))
    report = Report(title or f"Policy comparison on {comparison.workload}")
    report.heading("Inputs")
    report.definitions(inputs_of(first) | slurm_inputs(results))
    report.table(
        pd.DataFrame(
            {
                "policy": list(results),
                "parameters": [_parameters(r.info["inputs"]["policy"]) for r in results.values()],
            }
        ),
        caption="Each policy with the parameters it ran with.",
    )
    add_warnings(report, results)
    table = comparison.table
    recorded = [label for label, r in results.items() if r.info.get("record")]
    report.heading("Summary")
    report.table(
        formatted(table),
        caption="Waits in hours over the jobs that started; bounded slowdown with tau = 10 s; "
        "utilization over the machine's uptime."
        + "".join(
            f" {label}: what the site's scheduler did (not a simulation)." for label in recorded
        ),
    )
    add_never_started(report, results)
    add_agreement(report, table, results)
    add_partitions(report, {label: r.info for label, r in results.items()})
    add_detail_tables(report, results)
    report.heading("Plots")
    for heading, draw in plots.applicable_plots(results):
        report.figure(draw(), reading_of(heading))
    if table["energy_wasted_mwh"].notna().sum() >= 2:
        report.figure(
            plots.wait_energy_pareto(table),
            "Mean wait against wasted energy: lower left is better on both; the line joins the "
            "policies no other beats on both (the empirical Pareto frontier).",
        )
    return report.write(path)


def add_partitions(report: Report, infos: dict[str, dict[str, Any]]) -> None:
    """The section "By partition", on a platform with partitions: each run's jobs, waits,
    bounded slowdown and utilization in each partition."""
    from hpcsched.tables import partition_rows, partition_waits

    table = partition_waits(infos)
    if table.empty:
        return
    report.heading("By partition")
    report.table(
        partition_rows(table),
        caption="The jobs that ran in each partition: their waits and mean bounded slowdown, "
        "and the partition's utilization (their node-seconds over its nodes from 0 to the "
        "makespan; nodes two partitions share count in both). Jobs refused at submission "
        "ran nowhere.",
    )


def inputs_of(result: Result) -> dict[str, str]:
    """What a reader needs to know about the runs' inputs, from one run's summary."""
    info = result.info
    inputs, workload = info["inputs"], info["workload"]
    platform = inputs.get("platform")
    skipped = workload["skipped_total"]
    items = {
        "workload": str(inputs["trace"]),
        "jobs": f"{workload['jobs']:,} replayed"
        + (f", {skipped:,} skipped ({_skips(workload['skipped'])})" if skipped else ""),
        "machine": f"{inputs['nodes']:,} nodes",
        "platform": "none (no power model)" if platform is None else _platform_text(platform),
        "downtime": inputs["downtime"] or "none",
        "overrun": inputs["overrun"],
    }
    if inputs["downtime"]:
        items["maintenance notice"] = f"{inputs['announce_lead'] / 3600:g} h"
    return items


def _platform_text(platform: Mapping[str, Any]) -> str:
    """``curie (from examples/slurm/slurm.conf; 5,544 nodes in 4 partitions, without power
    model)``: the platform's name, the file it was read from, its partitions."""
    source = platform.get("source")
    site = platform.get("site") or {}
    partitions = len(site.get("partitions") or [])
    facts = [f"{platform['nodes']:,} nodes"] + (
        [f"{partitions} partition{'s' if partitions != 1 else ''}"] if partitions else []
    )
    where = f"from {source}; " if source and source != "<memory>" else ""
    power = "with" if platform.get("power") else "without"
    return f"{platform['name']} ({where}{', '.join(facts)}, {power} power model)"


def slurm_inputs(results: Mapping[str, Result]) -> dict[str, str]:
    """The Slurm settings the runs under Slurm's settings took (``inputs.slurm``): the
    slurm.conf or Slurm's defaults, and each setting that differs from Slurm's defaults."""
    used = {
        label: r.info["inputs"]["slurm"]
        for label, r in results.items()
        if r.info["inputs"].get("slurm")
    }
    items = {}
    for slurm in {repr(v): v for v in used.values()}.values():  # each distinct one once
        labels = ", ".join(label for label, v in used.items() if v == slurm)
        conf = slurm["slurm_conf"]
        changed = slurm["differs_from_defaults"]
        settings = "; ".join(f"{k}={v}" for k, v in changed.items())
        if conf is None:
            text = "Slurm's defaults (no slurm.conf: every priority weight 0, jobs in " + (
                "submission order)" if not settings else f"submission order); {settings}"
            )
        else:
            text = f"{conf}: " + (settings or "every setting at Slurm's default")
        items[f"Slurm settings ({labels})"] = text
    return items


def add_warnings(report: Report, results: Mapping[str, Result]) -> None:
    """Each run's warnings (the reader's, the platform's, the run's), those of every run
    once; nothing when no run has any."""
    said = {
        label: list(
            dict.fromkeys([*r.info["workload"]["warnings"], *(r.info.get("warnings") or [])])
        )
        for label, r in results.items()
    }
    every = [w for w in next(iter(said.values()), []) if all(w in s for s in said.values())]
    rows = [{"run": "every run", "warning": w} for w in every] + [
        {"run": label, "warning": w}
        for label, warnings in said.items()
        for w in warnings
        if w not in every
    ]
    if not rows:
        return
    report.heading("Warnings")
    report.table(
        pd.DataFrame(rows),
        caption="What reading the inputs and running noticed and left as it is (the terminal "
        "prints the same after each run).",
    )


def add_never_started(report: Report, results: Mapping[str, Result]) -> None:
    """The section "Jobs that never started", when a run has some: how many, and why (the
    summary's waits are over the jobs that started)."""
    from hpcsched.run.never_started import NEVER_STARTED_REASONS, REASON_TEXT, never_started_text

    rows = []
    for label, result in results.items():
        jobs = result.info["jobs"]
        if not jobs.get("never_started"):
            continue
        reasons = jobs.get("never_started_by_reason") or {}
        row = {"policy": label, "never started": f"{jobs['never_started']:,}"}
        row |= {REASON_TEXT[k]: f"{reasons.get(k, 0):,}" for k in NEVER_STARTED_REASONS}
        row["in detail"] = never_started_text(jobs)
        rows.append(row)
    if not rows:
        return
    report.heading("Jobs that never started")
    report.table(
        pd.DataFrame(rows),
        caption="Jobs of the workload that a run never started, by reason: refused at "
        "submission (over their partitions' limits under EnforcePartLimits, or a QOS' "
        "MaxSubmitJobsPerUser), held by their partition for ever (over its limits without "
        "EnforcePartLimits, or only DOWN partitions accept them), no recorded start (the trace "
        "gives no wait), or still waiting when the run ended. Waits, slowdowns and the "
        "agreement are over the jobs that started.",
    )


def _skips(skipped: Mapping[str, int]) -> str:
    return ", ".join(f"{k}: {v:,}" for k, v in skipped.items() if v)


def _parameters(policy: Mapping[str, Any]) -> str:
    """A policy's parameters in one line: window, backfill, and the search or power
    parameters that apply (SNF-ICON's only under an ICON manager: IPM does not read them),
    numbers rounded to four significant digits."""
    if "python" in policy:
        return f"Python policy {policy['python']}"
    if policy["name"] == RECORDED:
        return "as recorded (each job starts at its submission plus its recorded wait)"
    parts: dict[str, Any] = {"window": policy["window"] or "all", "backfill": policy["backfill"]}
    if policy.get("search"):
        parts.update(policy["search"])
        if isinstance(parts.get("reward"), list):
            parts["reward"] = _reward_text(parts["reward"])
    power = policy.get("power")
    if power:
        icon_only = set(_icon_parameters()) if power.get("manager") == "ipm" else set()
        parts.update({k: v for k, v in power.items() if k not in icon_only})
    return ", ".join(f"{k}: {_rounded(v)}" for k, v in parts.items())


def _reward_text(weights: list[float]) -> str:
    """A reward by its terms' names (``wait=1 bsld=0.5``), and its preset's name when it is
    one (``cw (wait=1)``), rather than a list of weights."""
    from hpcsched.rewards import REWARD_PRESETS, REWARD_TERMS

    named = {t: float(w) for t, w in zip(REWARD_TERMS, weights, strict=False) if w}
    text = " ".join(f"{t}={_rounded(w)}" for t, w in named.items()) or "none"
    presets = [name for name, terms in REWARD_PRESETS.items() if terms == named]
    return f"{presets[0]} ({text})" if presets else text


def _icon_parameters() -> list[str]:
    """SNF-ICON's parameters, as the engine names them (``IconConfig``)."""
    from hpcsched import _core

    return list(_core.icon_defaults())


def _rounded(value: Any) -> str:
    """A parameter for reading: whole floats as integers (7200), others to four significant
    digits (0.2, 0.0002778),
    lists element by element, None as null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e9:
            return f"{value:.0f}"
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_rounded(v) for v in value) + "]"
    return str(value)


def add_detail_tables(report: Report, results: Mapping[str, Result], level: int = 2) -> None:
    """Waits per size class, then energy and look-ahead statistics where they apply, under
    headings of ``level``."""
    rows = []
    for label, result in results.items():
        row: dict[str, str] = {"policy": label}
        for cls, stats in result.info["wait_by_class"].items():
            mean, median = stats["mean"], stats["median"]
            row[f"{cls} jobs"] = f"{stats['count']:,}"
            row[f"{cls} mean / median (h)"] = (
                "-" if mean is None else f"{mean / 3600:.2f} / {median / 3600:.2f}"
            )
        rows.append(row)
    report.heading("Waits per size class", level)
    report.table(
        pd.DataFrame(rows),
        caption="Size classes of MARS Fig. 7: S <= N/32 nodes, M <= N/16, L <= N/4, XL > N/4.",
    )
    energy_rows = []
    for label, result in results.items():
        energy = result.info.get("energy")
        if not energy:
            continue
        modes = energy.get("mode_occupancy") or {}
        energy_rows.append(
            {
                "policy": label,
                "total (MWh)": f"{energy['total_mwh']:,.2f}",
                "computing": f"{energy['computing_mwh']:,.2f}",
                "wasted": f"{energy['wasted_mwh']:,.2f}",
                "idle": f"{energy['idle_mwh']:,.2f}",
                "switching": f"{energy['switching_mwh']:,.2f}",
                "sleeping": f"{energy['sleeping_mwh']:,.2f}",
                "modes": ", ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(modes.items())) or "-",
            }
        )
    if energy_rows:
        report.heading("Energy", level)
        report.table(
            pd.DataFrame(energy_rows),
            caption="From time 0 to the last completion. Wasted = everything not spent "
            "computing (idle, switching, sleeping). Modes: share of time in each power-manager "
            "mode.",
        )
    search_rows = []
    for label, result in results.items():
        search = result.info.get("search")
        if not search:
            continue
        searched = search["searches"] > 0
        search_rows.append(
            {
                "policy": label,
                "decisions": f"{search['invocations']:,}",
                "searches": f"{search['searches']:,}",
                "drain decisions": f"{search['drains']:,}",
                "iterations / search": f"{search['iterations_per_search']['mean']:,.0f}"
                if searched
                else "-",
                "ms / search": f"{1000 * search['seconds_per_search']['mean']:.1f}"
                if searched
                else "-",
                "median distinct outcomes": f"{search['branching']['median']:.0f}"
                if searched
                else "-",
            }
        )
    if search_rows:
        report.heading("Look-ahead", level)
        report.table(
            pd.DataFrame(search_rows),
            caption="A search runs when nodes are free, jobs wait and the actions lead to at "
            "least two distinct outcomes; a drain decision starts nothing on purpose (the "
            "start-kinds plot counts the jobs: every job waiting through one starts as 'drain').",
        )


def sweep_report(
    table: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    title: str,
    labels: tuple[str, ...],
    source: str,
) -> str:
    """The report of a sweep: its results table and, when runs report energy, mean wait
    against wasted energy per workload with the Pareto frontier."""
    report = Report(title, subtitle=f"sweep file {source}")
    report.heading("Runs")
    report.paragraph(
        f"{len(table)} completed runs. Every run's directory is runs/<key>/ beside this report; "
        "results.parquet holds every metric."
    )
    shown = formatted(table, label=labels[0])
    for position, column in enumerate(labels[1:], start=1):
        shown.insert(position, column, table[column].map(parameter_text).to_numpy())
    report.table(
        shown,
        caption="Waits in hours over the jobs that started; bsld: bounded slowdown (tau = 10 s); "
        "utilization over the machine's uptime.",
    )
    add_sweep_agreement(report, table, labels)
    if table["energy_wasted_mwh"].notna().sum() >= 2:
        report.heading("Waiting time against wasted energy")
        points, keys = keyed_points(table, labels)
        group = "workload" if points["workload"].nunique() > 1 else None
        report.figure(
            plots.wait_energy_pareto(points, label="point", group=group),
            "Mean wait against wasted energy, one point per run labelled by its key (table "
            "below); lower left is better on both, and the line joins the runs no other run "
            "beats on both (the empirical Pareto frontier).",
        )
        report.table(
            pd.DataFrame({"key": list(keys.values()), "configuration": list(keys)}),
            caption="The keys of the figure's points.",
        )
    return report.write(path)


def keyed_points(
    table: pd.DataFrame, labels: tuple[str, ...]
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The runs with energy, each with a short ``point`` key for its configuration (policy,
    parameters, platform when several), and the keys by configuration text: the figure shows
    the keys, a table spells them out (full labels overlap and leave the panels)."""
    energy = table[table["energy_wasted_mwh"].notna()]
    parameters = [c for c in labels if c not in ("workload", "platform", "policy")]
    if energy["platform"].nunique() > 1:
        parameters.append("platform")
    described = [
        " ".join(
            [row["policy"]]
            + [f"{c}={parameter_text(row[c])}" for c in parameters if is_given(row[c])]
        )
        for _, row in energy.iterrows()
    ]
    keys = {text: _point_key(k) for k, text in enumerate(dict.fromkeys(described))}
    return energy.assign(point=[keys[text] for text in described]), keys


def _point_key(index: int) -> str:
    """A short name for the ``index``-th configuration: a, b, ..., z, aa, ab, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    key = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        key = letters[rest] + key
    return key
