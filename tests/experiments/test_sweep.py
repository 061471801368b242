"""Sweeps: grid expansion, validation, resume after an interruption, the results table."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import hpcsched
from hpcsched.exceptions import InputError
from hpcsched.sweep import comparable, expand_sweep, read_sweep, run_sweep

SWEEP = """
[sweep]
out = "out"
platforms = ["AOBA-64"]

[[workloads]]
generate = "markovian"
jobs = 150
seed = [43, 44]

[[policies]]
name = "snf-icon"
alpha = [1000, 20000]
screen_window = [3600, 7200]

[[policies]]
name = "fcfs-b+ipm"
"""


@pytest.fixture
def sweep_file(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    return path


def test_grid_is_the_product_of_workloads_platforms_and_each_policy_block(sweep_file):
    sweep = read_sweep(sweep_file)
    # 2 workloads x 1 platform x (2 x 2 SNF-ICON + 1 FCFS/B+IPM)
    assert len(sweep.runs) == 2 * (4 + 1)
    assert sweep.out == str(sweep_file.parent / "out")
    icon = [r for r in sweep.runs if r.policy.name == "snf-icon"]
    combos = {(r.workload.label, r.policy.power.alpha, r.policy.power.screen_window) for r in icon}
    assert combos == {
        (f"markovian-seed{seed}", alpha, window)
        for seed in (43, 44)
        for alpha in (1000, 20000)
        for window in (3600, 7200)
    }
    # the parameters not swept keep their Table I defaults
    assert all(r.policy.power.beta == 1.0 and r.platform == "AOBA-64" for r in icon)
    assert len({r.key() for r in sweep.runs}) == len(sweep.runs)


def test_parameters_route_to_the_right_policy_part():
    sweep = expand_sweep(
        {
            "workloads": [{"generate": "mmk", "jobs": 50, "servers": 8}],
            "policies": [
                {"name": "wfp3", "window": [16, 64], "backfill": ["easy", "none"]},
                {"name": "mars", "reward": ["cw", "wait=1,utilization=2"], "iterations": 7},
            ],
        }
    )
    heuristics = [(r.policy.window, r.policy.backfill) for r in sweep.runs[:4]]
    assert heuristics == [(16, "easy"), (16, "none"), (64, "easy"), (64, "none")]
    rewards = [r.policy.search.reward for r in sweep.runs[4:]]
    zeros = (0.0,) * 5
    assert rewards == [(1.0, 0.0, 0.0, *zeros), (1.0, 0.0, 2.0, *zeros)]
    assert all(r.policy.search.iterations == 7 for r in sweep.runs[4:])


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"policies": [{"name": "fcfs"}]}, "workloads"),
        ({"workloads": [{"generate": "mmk"}], "policies": [{"name": "nope"}]}, "policies[0]"),
        (
            {"workloads": [{"generate": "mmk"}], "policies": [{"name": "fcfs", "alpha": 3}]},
            "policies[0]",
        ),
        (
            {"workloads": [{"generate": "mmk", "colour": 1}], "policies": [{"name": "fcfs"}]},
            "workloads[0].colour",
        ),
        (
            {"workloads": [{"path": "missing.swf"}], "policies": [{"name": "fcfs"}]},
            None,
        ),
        (
            {
                "sweep": {"platforms": ["Nowhere-3"]},
                "workloads": [{"generate": "mmk"}],
                "policies": [{"name": "fcfs"}],
            },
            "sweep.platforms[0]",
        ),
        (
            {"sweep": {"colour": 1}, "workloads": [{"generate": "mmk"}], "policies": [{}]},
            "sweep.colour",
        ),
        (
            {
                "sweep": {"decision_log": "verbose"},
                "workloads": [{"generate": "mmk"}],
                "policies": [{"name": "snf-icon"}],
            },
            "sweep.decision_log",
        ),
    ],
)
def test_mistakes_in_a_sweep_file_name_the_field(tmp_path, document, field):
    with pytest.raises(InputError) as error:
        expand_sweep(document, str(tmp_path / "s.toml"))
    if field is not None:
        assert error.value.field == field
    assert error.value.path.endswith(".toml") or error.value.path.endswith("missing.swf")


MARKOVIAN = {"generate": "markovian", "jobs": 30}


@pytest.mark.parametrize(
    ("document", "field", "message"),
    [
        # a power policy without a platform with a power model failed run by run
        ({"policies": [{"name": "snf-icon"}]}, "sweep.platforms", "switches nodes on and off"),
        (
            {"sweep": {"platforms": ["NODES_ONLY"]}, "policies": [{"name": "fcfs-b+ipm"}]},
            "sweep.platforms[0]",
            "switches nodes on and off",
        ),
        (
            {"policies": [{"name": "mars", "reward": "energy=1", "iterations": 2, "trees": 1}]},
            "sweep.platforms",
            "energy reward needs a platform",
        ),
        # a generator's parameter was found at run time, under the generator's own name
        ({"workloads": [{**MARKOVIAN, "jobs": -5}]}, "workloads[0].jobs", "from 1 to"),
        ({"workloads": [{"generate": "mmk", "load": 0}]}, "workloads[0].load", "positive"),
        ({"workloads": [{**MARKOVIAN, "slice": [40, 50]}]}, "workloads[0].slice", "is empty"),
        # an empty list was a grid of no run, exit 0
        ({"policies": [{"name": "wfp3", "window": []}]}, "policies[0].window", "empty list"),
        ({"workloads": [{**MARKOVIAN, "seed": []}]}, "workloads[0].seed", "empty list"),
        # the same value twice ran the same key twice (two identical rows)
        (
            {"policies": [{"name": "mars", "trees": 1, "iterations": [2, 2]}]},
            "policies[0].iterations",
            "2 is listed twice",
        ),
        ({"workloads": [{**MARKOVIAN, "seed": [1, 1.0]}]}, "workloads[0].seed", "listed twice"),
        (
            {"sweep": {"platforms": ["AOBA-64", "AOBA-64"]}},
            "sweep.platforms",
            "'AOBA-64' is listed twice",
        ),
        # ... and so did two spellings of one run, or one block given twice
        (
            {"policies": [{"name": "mars", "trees": 1, "iterations": 2, "reward": ["cw", "wait"]}]},
            "policies[0]",
            "the same run twice",
        ),
        ({"policies": [{"name": "fcfs"}, {"name": "fcfs"}]}, "policies[1]", "the same run twice"),
        # the settings every run shares (the command line refuses --decision-log for fcfs)
        ({"sweep": {"decision_log": "full"}}, "sweep.decision_log", "keeps no decision log"),
        ({"sweep": {"overrun": "explode"}}, "sweep.overrun", "unknown overrun"),
        ({"sweep": {"announce_lead": -1}}, "sweep.announce_lead", "from 0 to"),
    ],
)
def test_the_whole_grid_is_checked_before_the_first_run(tmp_path, capsys, document, field, message):
    """Issue 25, point 10: each of these ran (or ran nothing) before failing, or failed run by
    run; the file and the field are named, exit 2, and nothing is written."""
    from hpcsched.cli import main

    platform = tmp_path / "nodes-only.toml"
    platform.write_text('name = "nodes-only"\nnodes = 64\n')
    settings = {"out": "out", **document.get("sweep", {})}
    if "platforms" in settings:
        settings["platforms"] = [
            str(platform) if p == "NODES_ONLY" else p for p in settings["platforms"]
        ]
    full = {
        "sweep": settings,
        "workloads": document.get("workloads", [MARKOVIAN]),
        "policies": document.get("policies", [{"name": "fcfs"}]),
    }
    path = tmp_path / "s.toml"
    with pytest.raises(InputError, match=re.escape(message)) as error:
        expand_sweep(full, str(path))
    assert (error.value.path, error.value.field) == (str(path), field)
    path.write_text(_toml(full))
    assert main(["sweep", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}, field {field}: ")
    assert not (tmp_path / "out").exists()


def test_a_full_decision_log_is_taken_when_some_run_keeps_one():
    """As for compare: the setting goes to the runs that keep a log."""
    sweep = expand_sweep(
        {
            "sweep": {"platforms": ["AOBA-64"], "decision_log": "full"},
            "workloads": [MARKOVIAN],
            "policies": [{"name": "fcfs"}, {"name": "snf-icon"}],
        }
    )
    assert [r.decision_log for r in sweep.runs] == ["full", "full"]


def test_a_malformed_calendar_is_found_before_the_first_run(tmp_path):
    calendar = tmp_path / "cal.txt"
    calendar.write_text("100 50 S\n")  # ends before it starts
    with pytest.raises(InputError) as error:
        expand_sweep(
            {
                "sweep": {"downtime": str(calendar)},
                "workloads": [MARKOVIAN],
                "policies": [{"name": "fcfs"}],
            },
            str(tmp_path / "s.toml"),
        )
    assert error.value.path == str(calendar)


def _toml(document) -> str:
    """A sweep document as TOML (the few shapes these tests use)."""

    def value(v):
        return json.dumps(v)  # strings, numbers and lists of them read the same in TOML

    lines = ["[sweep]", *(f"{k} = {value(v)}" for k, v in document["sweep"].items())]
    for table in ("workloads", "policies"):
        for block in document[table]:
            lines += [f"[[{table}]]", *(f"{k} = {value(v)}" for k, v in block.items())]
    return "\n".join(lines) + "\n"


def test_a_sweep_keeps_the_full_decision_log_on_request(tmp_path):
    document = {
        "sweep": {"platforms": ["AOBA-64"], "decision_log": "full", "processes": 1},
        "workloads": [{"generate": "markovian", "jobs": 150, "seed": 43}],
        "policies": [{"name": "snf-icon"}],
    }
    sweep = expand_sweep(document, str(tmp_path / "s.toml"))
    assert [r.decision_log for r in sweep.runs] == ["full"]
    outcome = run_sweep(sweep, processes=1)
    run_dir = outcome.table["run_dir"].iloc[0]
    log = pd.read_parquet(Path(sweep.out) / run_dir / "decisions.parquet")
    assert "candidate_cost" in log.columns and log["candidates"].max() >= 1
    compact = expand_sweep({**document, "sweep": {"platforms": ["AOBA-64"]}}, "s.toml")
    assert compact.runs[0].decision_log == "compact"
    assert compact.runs[0].key() != sweep.runs[0].key()


def test_interrupted_sweep_resumes_and_gives_the_same_table(sweep_file, tmp_path):
    sweep = read_sweep(sweep_file)
    reference = run_sweep(expand_sweep_into(sweep_file, tmp_path / "reference"), processes=1).table

    finished = []

    def interrupt_after_three(index: int, result: hpcsched.Result) -> None:
        finished.append(index)
        if len(finished) == 3:
            raise KeyboardInterrupt  # as Ctrl-C would, in the middle of the sweep

    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, processes=1, on_result=interrupt_after_three)
    runs = sweep.out + "/runs"
    assert len([d for d in os.listdir(runs) if not d.startswith(".")]) == 3
    # what was finished is already in the results table
    assert len(pd.read_parquet(sweep.out + "/results.parquet")) == 3

    resumed = run_sweep(read_sweep(sweep_file), processes=1)
    assert (resumed.reused, resumed.ran) == (3, len(sweep.runs) - 3)
    pd.testing.assert_frame_equal(comparable(resumed.table), comparable(reference))
    again = run_sweep(read_sweep(sweep_file), processes=1)
    assert (again.reused, again.ran) == (len(sweep.runs), 0)


def expand_sweep_into(sweep_file, out):
    sweep = read_sweep(sweep_file)
    sweep.out = str(out)
    return sweep


def test_results_table_matches_each_run(sweep_file):
    outcome = run_sweep(read_sweep(sweep_file), processes=2)
    table = outcome.table
    assert len(table) == 10 and not outcome.failures
    assert list(table.columns[:6]) == [
        "key",
        "workload",
        "platform",
        "policy",
        "policy_name",
        "run",
    ]
    assert {"alpha", "screen_window"} <= set(table.columns)
    assert table.loc[table["policy_name"] == "fcfs-b+ipm", "alpha"].isna().all()
    # every row agrees with its run directory, which is an ordinary run directory
    out = os.path.dirname(outcome.results_path)
    for row in table.itertuples():
        folder = os.path.join(out, row.run_dir)
        summary = json.loads(Path(folder, "summary.json").read_text())
        config = json.loads(Path(folder, "config.json").read_text())
        assert config["key"] == row.key
        assert summary["wait"]["mean"] == pytest.approx(row.wait_mean)
        assert summary["energy"]["wasted_mwh"] == pytest.approx(row.energy_wasted_mwh)
        jobs = pd.read_parquet(os.path.join(folder, "jobs.parquet"))
        assert jobs["wait"].mean() == pytest.approx(row.wait_mean)
    # the same run outside a sweep gives the same figures
    first = table[(table["policy_name"] == "snf-icon")].iloc[0]
    workload = hpcsched.workload.generate.markovian(150, 64, seed=43)
    direct = hpcsched.simulate(
        workload,
        hpcsched.PolicySpec(
            "snf-icon",
            power=hpcsched.PowerSpec(alpha=first["alpha"], screen_window=first["screen_window"]),
        ),
        platform="AOBA-64",
    )
    assert direct.info["wait"]["mean"] == pytest.approx(first["wait_mean"])


def test_a_failing_run_is_reported_and_the_others_complete(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("1 0 5 10 2 -1 -1 2 20 -1 1 3 1 -1 1 1 -1 -1\nnot a job line\n")
    sweep = expand_sweep(
        {
            "sweep": {"out": "out"},
            "workloads": [{"path": "bad.swf"}, {"generate": "mmk", "jobs": 40, "servers": 4}],
            "policies": [{"name": "fcfs"}],
        },
        str(tmp_path / "s.toml"),
    )
    outcome = run_sweep(sweep, processes=1)
    assert len(outcome.table) == 1
    [(label, message, user_error)] = outcome.failures
    assert "bad" in label and "line 2" in message and user_error


def test_tree_search_runs_keep_the_keys_they_had_before_the_rollout_look_ahead():
    # Computed by hpcsched at commit 2232a28, before SearchSpec had `lookahead` and `bases`:
    # a finished sweep of the tree search must not run again after an upgrade.
    from hpcsched.experiment import RunConfig, WorkloadSpec
    from hpcsched.policies import PolicySpec, SearchSpec

    workload = WorkloadSpec(generator="markovian", params={"jobs": 100, "seed": 1})
    spec = SearchSpec(iterations=50, trees=2, seed=1)
    tree = RunConfig(workload=workload, policy=PolicySpec("mars-cw", search=spec))
    assert tree.key() == "1f5d6abc75fd8241"
    rollout = RunConfig(
        workload=workload,
        policy=PolicySpec("mars-cw", search=replace(spec, lookahead="rollout")),
    )
    assert rollout.key() != tree.key()


def test_a_runs_key_follows_the_bytes_of_its_slurm_accounts(tmp_path: Path) -> None:
    """A run with the site's accounts differs from one without, and editing the file makes a
    new key: a sweep never reuses a result computed from other shares."""
    from hpcsched.experiment import RunConfig, WorkloadSpec
    from hpcsched.policies import PolicySpec

    workload = WorkloadSpec(generator="markovian", params={"jobs": 10, "seed": 1})
    accounts = tmp_path / "accounts.toml"
    accounts.write_text("[accounts.a]\nshares = 1\nusers = { u = 1 }\n")
    plain = RunConfig(workload=workload, policy=PolicySpec("fcfs"))
    with_accounts = replace(plain, slurm_accounts=str(accounts))
    before = with_accounts.key()
    assert before != plain.key()
    accounts.write_text("[accounts.a]\nshares = 2\nusers = { u = 1 }\n")
    assert with_accounts.key() != before


def test_a_sweep_runs_slurm_on_slurm_conf_platforms_with_the_sites_accounts(tmp_path: Path):
    """Platforms may be slurm.conf files and ``slurm_accounts`` gives every run the site's
    associations: the fair-share case of tests/test_slurm_policy.py (no decay), where equal
    shares start user 2's job 4 at 1800 and shares of 10 to 1 for group1 start job 3 there."""
    from tests.test_slurm_policy import FAIR, conf, fair_share_trace

    trace = fair_share_trace(tmp_path)
    site = conf(tmp_path, FAIR.replace("00:05:00", "0"))
    (tmp_path / "accounts.toml").write_text(
        "[accounts.group1]\nshares = 10\nusers = { user1 = 1 }\n"
        "[accounts.group2]\nshares = 1\nusers = { user2 = 1 }\n"
    )
    document = {
        "sweep": {"platforms": [site.name], "processes": 1},
        "workloads": [{"path": trace.name}],
        "policies": [{"name": "slurm"}],
    }

    def first(sweep_document: dict[str, object], out: str) -> int:
        settings = {**sweep_document["sweep"], "out": out}
        sweep = expand_sweep({**sweep_document, "sweep": settings}, str(tmp_path / "s.toml"))
        outcome = run_sweep(sweep, processes=1)
        assert not outcome.failures, outcome.failures
        run_dir = Path(sweep.out) / outcome.table["run_dir"].iloc[0]
        jobs = pd.read_parquet(run_dir / "jobs.parquet").set_index("job_id")
        return 3 if jobs.loc[3, "start"] == 1800.0 else 4

    assert first(document, "plain") == 4
    shared = {**document, "sweep": {**document["sweep"], "slurm_accounts": "accounts.toml"}}
    assert first(shared, "accounts") == 3
    # the accounts need a site (the sweep file's field named); a missing file is named itself
    with pytest.raises(InputError, match="need a site") as caught:
        expand_sweep({**document, "sweep": {"slurm_accounts": "accounts.toml"}}, "s.toml")
    assert caught.value.field == "sweep.slurm_accounts"
    missing = {**shared["sweep"], "slurm_accounts": "nowhere.toml"}
    with pytest.raises(InputError, match="cannot read") as caught:
        expand_sweep({**document, "sweep": missing}, str(tmp_path / "s.toml"))
    assert caught.value.path == str(tmp_path / "nowhere.toml")


def test_a_runs_key_follows_the_files_its_slurm_conf_includes(tmp_path: Path) -> None:
    """A site's scheduling settings may live in an included file: editing it makes a new key."""
    from hpcsched.experiment import RunConfig, WorkloadSpec
    from hpcsched.policies import PolicySpec

    (tmp_path / "slurm.conf").write_text(
        "NodeName=n[1-2] CPUs=4\nPartitionName=batch Nodes=n[1-2] Default=YES\n"
        "Include priority.conf\n"
    )
    included = tmp_path / "priority.conf"
    included.write_text("PriorityType=priority/multifactor\nPriorityWeightAge=1000\n")
    workload = WorkloadSpec(generator="markovian", params={"jobs": 10, "seed": 1})
    run = RunConfig(workload=workload, policy=PolicySpec("slurm"),
                    platform=str(tmp_path / "slurm.conf"))  # fmt: skip
    before = run.key()
    included.write_text("PriorityType=priority/multifactor\nPriorityWeightAge=2000\n")
    assert run.key() != before
