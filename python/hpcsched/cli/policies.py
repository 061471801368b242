"""``hpcsched policies``: what each policy does, and the platform presets."""

from __future__ import annotations

from rich.table import Table

from hpcsched.cli._console import console, kept_whole

#: One line per policy family (the heuristics' scores are MARS Table II).
DESCRIPTIONS = {
    "fcfs": "first come, first served",
    "lcfs": "last come, first served",
    "sjf": "shortest requested time first",
    "ljf": "longest requested time first",
    "srf": "smallest node count first",
    "lrf": "largest node count first",
    "scf": "smallest node-seconds first",
    "lcf": "largest node-seconds first",
    "fcsj": "highest wait / requested time first",
    "wfp1": "WFP with exponent 1: old, short jobs first, weighted by size",
    "wfp3": "WFP3, the production ALCF priority: (wait / requested)^3 x nodes",
    "fat": "large jobs first, then old and short ones",
    "unicef": "fast turnaround for small jobs (Table II's sign kept)",
    "f1": "F1: log10(r) n + 870 log10(s), tuned for bounded slowdown",
    "f2": "F2: sqrt(r) n + 2.56e4 log10(s)",
    "f3": "F3: r n + 6.86e6 log10(s)",
    "f4": "F4: r sqrt(n) + 5.30e5 log10(s)",
    "snf": "smallest need first (nodes, requested time, id); stops at the first misfit",
    "mars": "MARS look-ahead by MCTS with the reward of --reward",
    "mars-cw": "MARS minimising mean wait (cumulative wait reward)",
    "mars-cu": "MARS maximising utilization (cumulative utilization reward)",
    "mars-wb": "MARS minimising mean wait and bounded slowdown (wait + bsld reward)",
    "random": "uniform among the distinct outcomes that start jobs (MARS's baseline)",
    "slurm": "Slurm 22.05: multifactor priority, main and backfill schedulers (--slurm-conf)",
    "fcfs-b+ipm": "FCFS with backfilling + intelligent power manager (PSAS+IPM)",
    "snf+ipm": "SNF + intelligent power manager",
    "snf-icon": "SNF-ICON: SNF, predictive wakes, warm spares when recent data look Markovian",
    "snf-icon-ng": "SNF-ICON without the arrival-recency gate",
    "snf-icon-nf": "SNF-ICON without the Markovianity fallback",
    "snf-icon-ngnf": "SNF-ICON without gate nor fallback",
    "recorded": "the starts the trace records, replayed; conflicts with the machine counted",
}


def policies() -> None:
    """List the policies and the platform presets."""
    from hpcsched import _core
    from hpcsched.policies import PRESETS, RECORDED, policy_names
    from hpcsched.site.platform import load_platform, preset_names

    heuristics = set(_core.heuristic_names())
    power = set(_core.power_policy_names())
    table = Table(title="policies (--policy)", title_justify="left")
    for column in ("name", "kind", "what it does"):
        table.add_column(column)
    for name in policy_names():
        if name in heuristics:
            kind = "heuristic (--window, --backfill)"
        elif name in power:
            kind = "power manager (--platform)"
        elif name in PRESETS or name in ("mars", "random"):
            kind = "look-ahead"
        elif name == RECORDED:
            kind = "what happened (a trace with waits)"
        else:
            kind = "queue order"
        table.add_row(name, kind, DESCRIPTIONS.get(name, ""))
    console.print(kept_whole(table))
    presets = Table(title="platform presets (--platform)", title_justify="left")
    for column in ("name", "nodes", "partitions", "W busy/idle/asleep", "s wake/sleep"):
        presets.add_column(column)
    for name in preset_names():
        p = load_platform(name)
        m = p.power
        presets.add_row(
            name,
            str(p.nodes),
            ", ".join(q.name for q in p.site.partitions) if p.site is not None else "-",
            f"{m.computing:g}/{m.idle:g}/{m.sleeping:g}" if m is not None else "-",
            f"{m.switch_on:g}/{m.switch_off:g}" if m is not None else "-",
        )
    console.print(kept_whole(presets))
