"""Slurm's own order beside the plan (``--slurm-order``, ``--slurm-conf``): worked by hand on
the real capture ``squeue-mixed.json`` with the slurm.conf of the cluster it came from, whose
own priorities (squeue's ``priority``, computed by Slurm 22.05.8) check the order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import run_cli as run

from hpcsched.advise.slurm import config_path, parse_squeue
from hpcsched.cli import _console

FIXTURES = Path(__file__).parent / "fixtures"
SQUEUE = FIXTURES / "squeue-mixed.json"
SINFO = FIXTURES / "sinfo-mixed.json"
CONF = FIXTURES / "slurm-mixed.conf"
#: the snapshot's time: the latest submission of the capture
NOW = 1796030854.0
#: job 2 (train-2n, the only running job the model keeps on the 2 nodes up) started at
#: 1796030849 with a 30 min limit: the 2 nodes free then
FREE = 1796030849.0 + 1800


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch):
    monkeypatch.setattr(_console.console, "width", 80)
    monkeypatch.setattr(_console.err_console, "width", 80)


def advise(tmp_path, capsys, *extra):
    log = tmp_path / "log.jsonl"
    code, out, err = run(
        ["advise", "--from-json", SQUEUE, SINFO, "--policy", "fcfs", "--log", log, *extra],
        capsys,
    )
    entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return code, out, err, entries


def test_slurms_order_beside_the_plan_as_computed_by_hand(tmp_path, capsys):
    code, out, err, log = advise(tmp_path, capsys, "--slurm-conf", CONF)
    assert code == 0, err
    # Slurm's priority (PriorityWeightJobSize=1000, PriorityWeightPartition=1000; 4 nodes of
    # 4 CPUs): 1000 * (nodes / 4 + CPUs / 16) / 2 + 1000 - nice. Blocker (4 nodes, 4 CPUs):
    # 1625; unlimited-pend (3, 3): 1468; batch-job (2, 2): 1312; nice-pos (2, 2, nice 10):
    # 1302; my analysis run (1 node, -c 2): 1187; nice-neg (1, 1, nice -5): 1161; sweep (1, 1):
    # 1156: the priorities Slurm itself gave them (squeue's), so its order is theirs.
    tick = log[-1]
    by_slurm = sorted(tick["plan"], key=lambda p: p["slurm_rank"])
    assert [p["job"] for p in by_slurm] == [4, 11, 8, 6, 10, 5, 7]
    squeue = {j.job_id: j.priority for j in parse_squeue(json.loads(SQUEUE.read_text()))}
    assert [p["job"] for p in by_slurm] == sorted(
        (p["job"] for p in tick["plan"]), key=lambda j: -squeue[j]
    )
    # The plan (FCFS + EASY, the head 4 waiting for nodes down) starts 5, the sweep, 6, 10, 8
    # first; Slurm's order followed with EASY: 8 takes the 2 nodes when job 2 ends (FREE),
    # 6 when 8 ends (24 h), then 10 and 5 on a node each when 6 ends (2 h), the sweep's first
    # task when 5 ends (15 min); 4 and 11 need the nodes down.
    assert [p["job"] for p in tick["plan"]] == [5, 7, 6, 10, 8, 4, 11]
    start = {p["job"]: p["slurm_start"] for p in tick["plan"]}
    day_on = FREE + 86400
    assert {j: start[j] for j in (8, 6, 10, 5, 7)} == {
        8: FREE,
        6: day_on,
        10: day_on + 7200,
        5: day_on + 7200,
        7: day_on + 7200 + 900,
    }
    assert start[4] > 1e11 - 1 and start[11] > 1e11 - 1
    summary = tick["slurm_order"]
    # plan places 1..7 against Slurm's 6, 7, 4, 5, 3, 1, 2: four ahead, three behind
    assert (summary["ahead"], summary["behind"], summary["in_place"]) == (4, 3, 0)
    # Spearman: d = 5, 5, 1, 1, -2, -5, -5; sum d^2 = 106; 1 - 6 * 106 / (7 * 48)
    assert summary["rank_correlation"] == pytest.approx(1 - 6 * 106 / 336)
    assert summary["notes"] == []
    # side by side on 80 columns: plan place, Slurm's place, the move, both starts
    assert "…" not in out and max(map(len, out.splitlines())) <= 80, out
    flat = " ".join(out.split())
    assert "the plan moves 4 of 7 jobs ahead of it, 3 behind, 0 in place" in flat
    # the README's sample: the five jobs either order starts, their mean waits from NOW
    assert "rank correlation -0.89; mean planned wait 96 min (Slurm's order: 20.9 h)" in flat
    rows = {line.split()[0]: line.split("│") for line in out.splitlines() if "│" in line}
    assert [c.strip() for c in rows["8"][2:]] == ["5", "3", "-2", "in 3.5 h", "in 30 min"]
    assert [c.strip() for c in rows["5"][2:]] == ["1", "6", "+5", "in 30 min", "in 26.5 h"]


def test_without_the_option_nothing_changes(tmp_path, capsys):
    code, out, _, log = advise(tmp_path, capsys)
    assert code == 0
    assert "Slurm's own order" not in out
    assert "slurm_order" not in log[-1] and "slurm_rank" not in log[-1]["plan"][0]


def test_the_queues_accounts_qos_and_fair_share_are_said(tmp_path, capsys):
    # Fair-share weighted without usage: every factor 1, said; a QOS no accounts file defines.
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        CONF.read_text().replace("PriorityWeightFairshare=0", "PriorityWeightFairshare=10000")
        + "AccountingStorageType=accounting_storage/slurmdbd\n"
    )
    squeue = json.loads(SQUEUE.read_text())
    for record in squeue["jobs"]:
        if record["job_id"] == 5:
            record["qos"] = "high"
    path = tmp_path / "squeue.json"
    path.write_text(json.dumps(squeue))
    code, out, err = run(
        ["advise", "--from-json", path, SINFO, "--policy", "fcfs", "--log",
         tmp_path / "log", "--slurm-conf", conf],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    text = " ".join(out.split())
    assert "fair-share without usage (sshare is not read)" in text
    assert "QOS 'high' is not among the QOS given" in text or 'QOS "high"' in text, text


def test_old_snapshots_without_account_qos_or_cpus_are_read():
    document = json.loads(SQUEUE.read_text())
    for record in document["jobs"]:
        for key in ("account", "qos", "cpus"):
            record.pop(key, None)
    job = parse_squeue(document)[3]
    assert (job.account, job.qos, job.cpus) == ("", "", 0)


def test_the_live_clusters_slurm_conf_is_the_one_scontrol_names():
    text = "Configuration data as of 2026-11-30T12:00:00\nSLURM_CONF              = /etc/slurm/slurm.conf\nSLURM_VERSION = 22.05.8\n"  # noqa: E501
    assert config_path(text) == "/etc/slurm/slurm.conf"
    assert config_path("SLURM_VERSION = 22.05.8\n") is None


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--slurm-conf", "/nonexistent/slurm.conf"), "/nonexistent/slurm.conf"),
        (("--slurm-order",), "--slurm-conf FILE"),
        (("--policy", "slurm", "--slurm-conf", CONF), "Slurm's own scheduler"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, extra, says):
    code, out, err, _ = advise(tmp_path, capsys, *extra)
    assert code == 2, (out, err)
    assert "Traceback" not in err and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert says in " ".join(err.split()), err


def test_an_unreadable_slurm_conf_is_refused(tmp_path, capsys):
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=c[1-4 CPUs=4\n")  # a bad hostlist
    code, out, err, _ = advise(tmp_path, capsys, "--slurm-conf", conf)
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and str(conf) in err, err
