"""The composition table of docs/semantics.md ("What runs where", issue 42): every policy
family it says runs on a site with partitions and shared nodes runs there on a real trace
(Curie's first jobs as cores, its three partitions, under a maintenance of named nodes and an
outage) and keeps the invariants (each job ran once to its end, got exactly the CPUs it asked
on nodes of its partition, no partition ever held more CPUs than it has, no attempt ran on a
node while it was down, every job is on named nodes for a chart); and every cell the table
says is refused is refused, naming its option."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.placement import placement
from hpcsched.protocol import Decision, View
from hpcsched.site.platform import load_platform
from hpcsched.workload import load_workload
from tests.conftest import powered_group
from tests.invariants import check_jobs, check_shared, check_shared_downtime

REPO = Path(__file__).resolve().parents[1]
CURIE = "CEA-Curie-2011-2.1-cln.swf.gz"
JOBS = 2500
#: (start, end, first node, last node, kind) in the replay's clock: 300 thin nodes down for
#: maintenance, every hybrid node out for an hour
WINDOWS = [
    (2 * 86400.0, 2 * 86400.0 + 6 * 3600, 1000, 1299, "S"),
    (3 * 86400.0, 3 * 86400.0 + 3600, 5400, 5543, "U"),
]


class ShortestFirst:
    """A Python policy: the shortest requested time first, the engine places and backfills."""

    name = "python-shortest"

    def decide(self, view: View) -> Decision:
        order = view.queue[view.queue_requested.argsort(kind="stable")]
        return Decision(order=[int(j) for j in order])


FAMILIES = {
    "heuristic with EASY": ("wfp3", {}),
    "heuristic without backfilling": ("fcfs", {"backfill": "none"}),
    "SNF": ("snf", {}),
    "Slurm's scheduler": ("slurm", {}),
    "MARS": (
        hpcsched.PolicySpec("mars-cw", search=hpcsched.SearchSpec(iterations=8, trees=1)),
        {},
    ),
    "random": (hpcsched.PolicySpec("random", search=hpcsched.SearchSpec(seed=2)), {}),
    "Python policy": (ShortestFirst(), {}),
}


@pytest.fixture(scope="module")
def curie_site(traces_dir, tmp_path_factory):
    platform = load_platform(REPO / "examples/platforms/curie-cores.toml")
    workload = load_workload(traces_dir / "pwa" / CURIE)
    workload = replace(workload, jobs=workload.jobs.iloc[:JOBS].reset_index(drop=True))
    calendar = tmp_path_factory.mktemp("composition") / "down.txt"
    o = workload.time_origin
    calendar.write_text(
        "".join(f"{o + a} {o + b} {k} nodes={f}-{t}\n" for a, b, f, t, k in WINDOWS)
    )
    return workload, platform, calendar


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_the_table_allows_keeps_the_invariants_on_a_shared_site(curie_site, family):
    workload, platform, calendar = curie_site
    policy, options = FAMILIES[family]
    result = hpcsched.simulate(workload, policy, platform=platform, downtime=calendar, **options)
    check_jobs(result)
    check_shared(result, platform, result.workload.jobs["procs"].to_numpy())
    check_shared_downtime(result, [(a, b, f, t) for a, b, f, t, _ in WINDOWS])
    placed = placement(result)
    assert len(placed.jobs) >= result.jobs["start"].notna().sum()
    assert result.jobs["start"].notna().mean() > 0.9


def test_the_recorded_schedule_runs_on_the_shared_site(curie_site):
    workload, platform, _ = curie_site
    result = hpcsched.simulate(workload, "recorded", platform=platform)
    assert result.jobs["start"].notna().sum() > 0.9 * JOBS
    assert result.info["record"]["conflicts"] is not None


def _refusals() -> list[tuple[str, str, list[str], str]]:
    """The cells of the table marked refused on a site with partitions and shared nodes:
    (family, site, options, the option the refusal names)."""
    return [
        ("EASY on predicted run times", "shared", ["--estimates", "history"], "--estimates"),
        ("SNF's maximum wait", "shared", ["--policy", "snf", "--max-wait", "3600"], "--max-wait"),
        (
            "MARS with arrivals",
            "shared",
            ["--policy", "mars", "--arrivals", "recent"],
            "--arrivals",
        ),
        ("a power manager", "partitions", ["--policy", "snf-icon"], "--policy"),
        ("a power manager", "shared", ["--policy", "fcfs-b+ipm"], "--policy"),
        (
            "Slurm under a manager",
            "partitions",
            ["--policy", "slurm", "--power", "ipm"],
            "--policy",
        ),
    ]


SITES = {
    "partitions": 'name = "parts-power"\n'
    + powered_group("cpu", 8, 100.0, 10.0, 4)
    + '[[partitions]]\nname = "batch"\nnodes = "0-5"\ndefault = true\n'
    + '[[partitions]]\nname = "debug"\nnodes = "6-7"\n',
}
SITES["shared"] = SITES["partitions"].replace(
    'name = "parts-power"', 'name = "shared-power"\nsharing = "cr_core"'
)


@pytest.mark.parametrize(("what", "site", "args", "option"), _refusals())
def test_every_cell_the_table_refuses_is_refused_naming_its_option(
    tmp_path, capsys, what, site, args, option
):
    (tmp_path / "site.toml").write_text(SITES[site])
    trace = tmp_path / "t.swf"
    line = "{} {} -1 100 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1\n"
    trace.write_text(
        "; MaxNodes: 8\n; MaxProcs: 32\n" + "".join(line.format(i + 1, 10 * i) for i in range(20))
    )
    out = tmp_path / "run"
    platform = str(tmp_path / "site.toml")
    code = main(["simulate", str(trace), "--platform", platform, *args, "--out", str(out)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, f"{what} on {site}: {err}"
    assert re.search(rf"error: {re.escape(option)}:", err), err
    assert not out.exists()
