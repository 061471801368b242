"""``--policy slurm`` from the outside: a slurm.conf's scheduling settings read into numbers,
the engine's Slurm inputs built from a workload and an association file, and whole runs whose
schedules are computed by hand (the engine's own cases: crates/core/tests/it/slurm.rs)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hpcsched import simulate
from hpcsched.exceptions import InputError
from hpcsched.policies import PolicySpec
from hpcsched.run.options import open_platform
from hpcsched.site.slurm.conf import read_slurm_conf
from hpcsched.site.slurm.settings import SlurmSettings
from tests.conftest import require_traces, run_cli

REPO = Path(__file__).resolve().parents[1]

NODES = """\
ClusterName=mini
NodeName=n[1-2] CPUs=4 State=UNKNOWN
PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
"""

#: The test cluster's scheduling lines (scripts/slurm-cluster.sh, with accounting).
FAIR = """\
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageEnforce=associations,limits,qos
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=1
PriorityType=priority/multifactor
PriorityDecayHalfLife=00:05:00
PriorityCalcPeriod=1
PriorityMaxAge=00:10:00
PriorityWeightFairshare=1000
"""


def conf(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "slurm.conf"
    path.write_text(NODES + text)
    return path


def swf(tmp_path: Path, jobs: list[tuple[int, int, int, int, int, int]]) -> Path:
    """An SWF trace of (id, submit, run, processors, requested time, user, group) rows as
    (id, submit, run, nodes, user, group) with 4 processors per node, limits equal to the run."""
    lines = ["; MaxNodes: 2", "; MaxProcs: 8"]
    for job, submit, run, nodes, user, group in jobs:
        procs = 4 * nodes
        lines.append(
            f"{job} {submit} 0 {run} {procs} -1 -1 {procs} {run} -1 1 {user} {group} -1 1 -1 -1 -1"
        )
    path = tmp_path / "trace.swf"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_test_clusters_settings_read_into_numbers() -> None:
    settings = SlurmSettings.from_conf(
        "x.conf",
        {
            "PriorityType": "priority/multifactor",
            "PriorityDecayHalfLife": "00:10:00",
            "PriorityCalcPeriod": "1",
            "PriorityMaxAge": "00:10:00",
            "PriorityWeightAge": "1000",
            "PriorityWeightFairshare": "10000",
            "PriorityFlags": "NO_FAIR_TREE,MAX_TRES,INCR_ONLY",
        },
        {"bf_interval": "1", "sched_interval": "1", "bf_window": "90", "bf_continue": ""},
        {
            "AccountingStorageType": "accounting_storage/slurmdbd",
            "AccountingStorageEnforce": "associations,limits,qos",
        },
        {"debug": 1, "batch": 2},
    )
    p, s = settings.priority, settings.scheduler
    assert (p["decay_half_life"], p["calc_period"], p["max_age"]) == (600.0, 60.0, 600.0)
    assert (p["weight_age"], p["weight_fairshare"], p["weight_job_size"]) == (1000, 10000, 0)
    assert p["fair_share"] == "classic" and p["charge_at_end"] is True
    assert settings.enforce_limits is True
    assert (s["bf_interval"], s["sched_interval"], s["bf_window"]) == (1.0, 1.0, 5400.0)
    assert s["bf_continue"] is True and s["bf_resolution"] == 60.0
    assert settings.partition_factors == {"debug": 1, "batch": 2}
    # MAX_TRES is followed (billable TRES); INCR_ONLY is said as not simulated
    assert settings.max_tres is True
    assert any("INCR_ONLY" in n for n in settings.notes)
    assert not any("MAX_TRES" in n for n in settings.notes)


def test_without_slurmdbd_slurm_ignores_age_and_fair_share_weights_and_says_so() -> None:
    settings = SlurmSettings.from_conf(
        "x.conf",
        {"PriorityType": "priority/multifactor", "PriorityWeightFairshare": "500"},
        {},
        {},
        {},
    )
    assert settings.priority["weight_fairshare"] == 0.0
    assert not settings.enforce_limits and settings.priority["charge_at_end"] is False
    assert any("SlurmDBD" in n or "slurmdbd" in n for n in settings.notes)


def test_priority_basic_is_submission_order_and_sched_builtin_has_no_backfill() -> None:
    settings = SlurmSettings.from_conf(
        "x.conf",
        {"PriorityWeightAge": "1000"},
        {},
        {"SchedulerType": "sched/builtin"},
        {},
    )
    assert settings.priority["weight_age"] == 0.0
    assert settings.scheduler["bf_interval"] is None


@pytest.mark.parametrize(
    ("priority", "scheduler", "settings", "key"),
    [
        ({"PriorityWeightAge": "lots"}, {}, {}, "PriorityWeightAge"),
        ({"PriorityMaxAge": "soon"}, {}, {}, "PriorityMaxAge"),
        ({"PriorityCalcPeriod": "0:30"}, {}, {}, "PriorityCalcPeriod"),
        ({"PriorityFavorSmall": "maybe"}, {}, {}, "PriorityFavorSmall"),
        ({"PriorityType": "priority/fancy"}, {}, {}, "PriorityType"),
        ({}, {"bf_interval": "0"}, {}, "SchedulerParameters bf_interval"),
        ({}, {"bf_window": "-5"}, {}, "SchedulerParameters bf_window"),
        ({}, {"default_queue_depth": "many"}, {}, "SchedulerParameters default_queue_depth"),
        ({}, {}, {"SchedulerType": "sched/wiki"}, "SchedulerType"),
    ],
)
def test_a_setting_that_cannot_be_read_names_the_file_and_the_key(
    priority: dict[str, str], scheduler: dict[str, str], settings: dict[str, str], key: str
) -> None:
    with pytest.raises(InputError) as caught:
        SlurmSettings.from_conf("site/slurm.conf", priority, scheduler, settings, {})
    assert caught.value.path == "site/slurm.conf"
    assert key in str(caught.value)


def test_a_slurm_conf_gives_the_platform_its_scheduling_settings(tmp_path: Path) -> None:
    platform = open_platform(conf(tmp_path, FAIR))
    assert platform.slurm is not None
    assert platform.slurm.priority["weight_fairshare"] == 1000.0
    assert platform.slurm.scheduler["bf_interval"] == 1.0
    curie = read_slurm_conf(REPO / "examples" / "slurm" / "slurm.conf").platform()
    assert curie.slurm is not None
    assert curie.slurm.scheduler["bf_resolution"] == 600.0
    assert curie.slurm.scheduler["bf_window"] == 2880 * 60.0


def fair_share_trace(tmp_path: Path) -> Path:
    """Two users in two groups (accounts) on 2 nodes: user 1's job 1 holds both nodes 0-1200,
    user 2's job 2 1200-1800; user 1's job 3 and user 2's job 4 wait from 1300 (100 s each)."""
    return swf(
        tmp_path,
        [
            (1, 0, 1200, 2, 1, 1),
            (2, 1200, 600, 2, 2, 2),
            (3, 1300, 100, 2, 1, 1),
            (4, 1301, 100, 2, 2, 2),
        ],
    )


@pytest.mark.parametrize(("half_life", "first"), [("0", 4), ("00:05:00", 3)])
def test_fair_share_from_the_conf_and_the_traces_users_and_groups(
    tmp_path: Path, half_life: str, first: int
) -> None:
    """Hand-computed (as the engine's fair-share case): without decay user 2 (600 s used
    against 1200) runs first at 1800; with a half-life of 5 min user 1's usage, 600 to 1800 s
    old, has decayed below user 2's recent 600 s, and user 1 runs first."""
    text = FAIR.replace("00:05:00", half_life)
    platform = open_platform(conf(tmp_path, text))
    result = simulate(str(fair_share_trace(tmp_path)), PolicySpec("slurm"), platform=platform)
    starts = result.jobs.set_index("job_id")["start"]
    assert starts[first] == 1800.0
    assert starts[7 - first] == 1900.0


@pytest.mark.parametrize(("half_life", "first"), [("0", 4), ("00:05:00", 3)])
def test_mars_orders_by_slurms_priorities_from_the_conf(
    tmp_path: Path, half_life: str, first: int
) -> None:
    """MARS with the one action ``slurm`` (Slurm's order, then EASY) starts the fair-share case
    as Slurm does (the same hand-computed order), though MARS started jobs 1 and 2 itself; with
    ``fcfs`` alone, job 3 first whatever the usage."""
    from hpcsched.policies import SearchSpec

    platform = open_platform(conf(tmp_path, FAIR.replace("00:05:00", half_life)))
    trace = str(fair_share_trace(tmp_path))
    for actions, expected in (("slurm", first), ("fcfs", 3)):
        search = SearchSpec(actions=actions, iterations=4, trees=1)
        assert search.orders_by_slurm == (actions == "slurm")
        result = simulate(trace, PolicySpec("mars", search=search), platform=platform)
        starts = result.jobs.set_index("job_id")["start"]
        assert (starts[expected], starts[7 - expected]) == (1800.0, 1900.0), actions


def test_the_command_line_takes_slurm_as_a_base_ordering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rollout planner's tie (jobs 3 and 4 are worth the same at 1800) goes to its first
    base ordering's own outcome: Slurm's (job 4, no decay) before FCFS's."""
    trace = str(fair_share_trace(tmp_path))
    site = ["--slurm-conf", str(conf(tmp_path, FAIR.replace("00:05:00", "0")))]
    for bases, first in (("slurm,fcfs", 4), ("fcfs,slurm", 3)):
        out = tmp_path / bases.replace(",", "-")
        args = ["simulate", trace, "--policy", "mars", "--actions", "fcfs,slurm"]
        args += ["--lookahead", "rollout", "--bases", bases, "--iterations", "4", "--trees", "1"]
        code, _, err = run_cli([*args, *site, "--out", str(out)], capsys)
        assert code == 0, err
        jobs = pd.read_parquet(out / "jobs.parquet").set_index("job_id")
        assert jobs.loc[first, "start"] == 1800.0, bases


def test_the_workloads_users_and_accounts_become_the_association_tree(tmp_path: Path) -> None:
    from hpcsched.site.slurm.policy import slurm_inputs
    from hpcsched.workload import load_workload

    workload = load_workload(str(fair_share_trace(tmp_path)))
    inputs = slurm_inputs(workload, None, workload.nodes, None, None)
    native = inputs.native
    # root, group1, group2, then user1 in group1, user2 in group2
    assert native["assoc_parent"] == [-1, 0, 0, 1, 2]
    assert native["assoc_user"] == [False, False, False, True, True]
    assert native["job_association"].tolist() == [3, 4, 3, 4]
    assert native["job_user"].tolist() == [0, 1, 0, 1]
    assert native["job_qos"].tolist() == [0, 0, 0, 0]


def test_an_accounts_file_gives_shares_and_users_it_lacks_are_added_and_said(
    tmp_path: Path,
) -> None:
    from hpcsched.site.slurm.accounts import read_slurm_accounts
    from hpcsched.site.slurm.policy import slurm_inputs
    from hpcsched.workload import load_workload

    accounts = tmp_path / "accounts.toml"
    accounts.write_text("[accounts.group1]\nshares = 3\nusers = { user1 = 2 }\n")
    workload = load_workload(str(fair_share_trace(tmp_path)))
    inputs = slurm_inputs(workload, None, workload.nodes, read_slurm_accounts(accounts), None)
    parents, shares = inputs.native["assoc_parent"], inputs.native["assoc_shares"]
    assert shares[1] == 3  # group1
    assert shares[inputs.native["job_association"][0]] == 2  # user1
    assert any("user2 in group2" in n for n in inputs.notes)
    assert parents[inputs.native["job_association"][1]] != 0


def test_the_command_line_runs_slurm_with_a_conf_and_accounts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = fair_share_trace(tmp_path)
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(
        "[accounts.group1]\nusers = { user1 = 1 }\n[accounts.group2]\nusers = { user2 = 1 }\n"
    )
    out = tmp_path / "run"
    site = ["--slurm-conf", str(conf(tmp_path, FAIR)), "--slurm-accounts", str(accounts)]
    code, _, err = run_cli(
        ["simulate", str(trace), "--policy", "slurm", *site, "--out", str(out)], capsys
    )
    assert code == 0, err
    jobs = pd.read_parquet(out / "jobs.parquet").set_index("job_id")
    assert jobs.loc[3, "start"] == 1800.0  # decay of 5 min: user 1 first
    # --slurm-accounts needs the site: one line, exit 2, nothing written
    args = ["simulate", str(trace), "--policy", "slurm", "--slurm-accounts", str(accounts)]
    code, _, err = run_cli([*args, "--out", str(tmp_path / "r2")], capsys)
    assert code == 2
    assert "--slurm-accounts" in err and "Traceback" not in err
    assert not (tmp_path / "r2").exists()


def test_a_year_of_hpc2n_under_slurm_defaults_starts_every_job_once() -> None:
    """Invariants on a real trace: every job starts once, never before its submission; with
    every weight 0 the order is the submission order, so Slurm's main scheduler alone starts
    jobs in FCFS order (backfill only adds jobs ahead of it).

    And backfill keeps its reservations all year. No Slurm record of HPC2N exists, so the
    reference is FCFS with EASY on the same trace (``sched/easy.rs``, its own implementation
    and hand-computed tests): EASY reserves for the first waiting job only, Slurm's backfill
    for every job starting within ``bf_window`` of each cycle, so fewer jobs jump the queue
    (about 35,000 against 37,600) and the widest jobs wait no longer than under EASY (their
    mean within a quarter of EASY's). A backfill that lost its reservations (a window counted
    from the trace's start: none after the first day) starts about 52,500 jobs by backfill and
    makes the widest wait 1.6 times as long as under EASY."""
    trace = require_traces() / "pwa" / "HPC2N-2002-2.2-cln.swf.gz"
    result = simulate(str(trace), "slurm")
    jobs = result.jobs
    assert jobs["start"].notna().all()
    assert (jobs["start"] >= jobs["submit"]).all()
    primary = jobs[jobs["start_kind"] == "primary"].sort_values(["submit", "job_id"])
    assert primary["start"].is_monotonic_increasing
    easy = simulate(str(trace), "fcfs").jobs
    backfilled = (jobs["start_kind"] == "backfill").sum()
    assert backfilled < (easy["start_kind"] == "backfill").sum()
    wait, easy_wait = ((r["start"] - r["submit"]).set_axis(r["job_id"]) for r in (jobs, easy))
    widest = jobs["job_id"][jobs["nodes"] >= jobs["nodes"].quantile(0.99)]
    assert wait[widest].mean() <= 1.25 * easy_wait[widest].mean()


def test_a_new_jobs_first_priority_counts_the_cpus_it_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The engine's case (a_new_jobs_size_counts_the_cpus_it_asked_for_until_the_next_
    recalculation) from a sacct record: one node of 4 CPUs held by job 1 until 30 s; job 2
    asked for 1 CPU (``--exclusive``: given 4), job 3 for 4. Job size 100: job 2's first
    priority is 100 * (1 + 1/4) / 2 = 62, job 3's 100, so job 3 starts first, at 30, and job 2
    when it ends. Without ``ReqCPUS`` both count 4: a tie, job 2 (older) first."""
    site = tmp_path / "slurm.conf"
    site.write_text(
        "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 Default=YES\n"
        "AccountingStorageType=accounting_storage/slurmdbd\nPriorityType=priority/multifactor\n"
        "PriorityWeightJobSize=100\nPriorityWeightAge=1000\nPriorityMaxAge=00:10:00\n"
        "PriorityCalcPeriod=1\n"
    )
    header = "JobIDRaw|User|Account|Submit|Start|End|Timelimit|NNodes|NCPUS|ReqCPUS"
    rows = [
        "1|u|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:30|00:00:30|1|4|4",
        "2|u|a|2026-01-01T00:00:01|2026-01-01T00:00:30|2026-01-01T00:00:40|00:00:10|1|4|1",
        "3|u|a|2026-01-01T00:00:02|2026-01-01T00:00:40|2026-01-01T00:00:50|00:00:10|1|4|4",
    ]

    def starts(columns: int) -> list[float]:
        record = tmp_path / f"record{columns}.sacct"
        lines = [header, *rows]
        record.write_text("\n".join("|".join(line.split("|")[:columns]) for line in lines) + "\n")
        out = tmp_path / f"run{columns}"
        args = ["simulate", str(record), "--policy", "slurm", "--slurm-conf", str(site)]
        code, _, err = run_cli([*args, "--out", str(out)], capsys)
        assert code == 0, err
        jobs = pd.read_parquet(out / "jobs.parquet").set_index("job_id")
        return [float(jobs.loc[j, "start"]) for j in (1, 2, 3)]

    assert starts(10) == [0.0, 40.0, 30.0]
    assert starts(9) == [0.0, 30.0, 40.0]  # (no ReqCPUS)


def test_a_site_with_partitions_sizes_a_sacct_record_without_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read for a site with partitions, a sacct record is sized by the site's partitions: the
    reader's "no machine size" warning (given on one pool without --nodes) is not said."""
    site = tmp_path / "slurm.conf"
    site.write_text(
        "NodeName=n[1-4] CPUs=4\nPartitionName=debug Nodes=n[1-4] Default=YES\n"
        "PartitionName=batch Nodes=n[3-4]\n"
    )
    record = tmp_path / "record.sacct"
    record.write_text(
        "JobIDRaw|Partition|Submit|Start|End|Timelimit|NNodes|NCPUS\n"
        "1|debug|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:30|00:01:00|2|8\n"
    )
    out = tmp_path / "run"
    args = ["simulate", str(record), "--policy", "fcfs", "--slurm-conf", str(site)]
    code, said, err = run_cli([*args, "--out", str(out)], capsys)
    assert code == 0, err
    assert "no machine size" not in said + err
    code, said, err = run_cli(["simulate", str(record), "--out", str(tmp_path / "r2")], capsys)
    assert code == 0 and "no machine size" in said + err  # (on one pool it is said)


def test_compare_takes_the_sites_accounts_for_each_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``compare --slurm-accounts`` passes the associations to each run. The fair-share case
    without decay: with equal shares group2's user 2 (600 s used against 1200) goes first
    (job 4 at 1800); with group1's shares 10 to group2's 1, Fair Tree ranks group1 first (10/11
    of the shares for 2/3 of the usage, against 1/11 for 1/3): job 3 at 1800."""
    trace = fair_share_trace(tmp_path)
    site = str(conf(tmp_path, FAIR.replace("00:05:00", "0")))
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(
        "[accounts.group1]\nshares = 10\nusers = { user1 = 1 }\n"
        "[accounts.group2]\nshares = 1\nusers = { user2 = 1 }\n"
    )

    def first(*extra: str) -> int:
        out = tmp_path / f"cmp{len(extra)}"
        args = ["compare", str(trace), "--policy", "slurm", "--slurm-conf", site, *extra]
        code, _, err = run_cli([*args, "--processes", "1", "--out", str(out)], capsys)
        assert code == 0, err
        jobs = pd.read_parquet(out / "slurm" / "jobs.parquet").set_index("job_id")
        return 3 if jobs.loc[3, "start"] == 1800.0 else 4

    assert first() == 4
    assert first("--slurm-accounts", str(accounts)) == 3


def test_max_submit_jobs_per_user_refuses_submissions_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """QOS normal with MaxSubmitJobsPerUser 2 on the 2-node cluster: user 1's job 1 runs (0 to
    100) and job 2 waits, so job 3 at 20 is refused; job 4 at 150 comes in (job 1 has ended,
    job 2 runs from 100 to 200) and starts at 200. Without `limits` in AccountingStorageEnforce
    Slurm enforces no QOS limit: job 3 runs."""
    trace = swf(tmp_path, [(1, 0, 100, 2, 1, 1), (2, 10, 100, 2, 1, 1), (3, 20, 100, 2, 1, 1),
                           (4, 150, 100, 2, 1, 1)])  # fmt: skip
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(
        "[accounts.group1]\nusers = { user1 = 1 }\n[qos.normal]\nmax_submit_jobs_per_user = 2\n"
    )

    def run(text: str, out: Path) -> tuple[pd.DataFrame, str]:
        site = ["--slurm-conf", str(conf(tmp_path, text)), "--slurm-accounts", str(accounts)]
        args = ["simulate", str(trace), "--policy", "slurm", *site, "--out", str(out)]
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        return pd.read_parquet(out / "jobs.parquet").set_index("job_id"), stdout

    jobs, stdout = run(FAIR, tmp_path / "limited")
    assert jobs["start"].tolist()[:2] == [0.0, 100.0] and jobs.loc[4, "start"] == 200.0
    assert pd.isna(jobs.loc[3, "start"])
    assert jobs["rejected"].astype(object).fillna("").tolist() == [
        "", "", "over_max_submit_jobs_per_user", ""
    ]  # fmt: skip
    summary = json.loads((tmp_path / "limited" / "summary.json").read_text())
    assert summary["jobs"]["rejected"]["total"] == 1
    assert "refused at submission" in stdout and "1 job (over max submit jobs per user 1)" in stdout
    unenforced = FAIR.replace("associations,limits,qos", "associations")
    jobs, _ = run(unenforced, tmp_path / "unenforced")
    assert jobs["start"].tolist() == [0.0, 100.0, 200.0, 300.0]
