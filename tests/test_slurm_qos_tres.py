"""Slurm's QOS limits in TRES (issue 41, point 5): GrpTRES, MaxTRESPerUser and MaxTRESPerJob on
memory and generic resources, read from a TOML or ``sacctmgr show qos -P`` file and followed by
``--policy slurm`` on shared nodes (``acct_policy.c``: docs/semantics.md, "QOS limits in
TRES"), start times computed by hand."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

import hpcsched
from hpcsched.cli import main
from hpcsched.run.shared import asked_tres
from hpcsched.site.slurm.accounts import read_slurm_accounts
from hpcsched.site.slurm.conf import read_slurm_conf
from hpcsched.site.slurm.policy import whole_node_tres
from hpcsched.workload import Workload

#: one node of 8 CPUs, 8000 MB and 2 GPUs, jobs sharing it; QOS limits enforced
SITE = """\
ClusterName=qos
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageEnforce=limits
NodeName=c1 CPUs=8 RealMemory=8000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=c1 Default=YES MaxTime=INFINITE State=UP
"""


def starts(tmp_path: Path, qos: str, users: list[str], mb: list[float], gres: list[str]) -> list:
    """Each job's start: job j of user ``users[j]`` (account ``a``) asks 1 CPU, ``mb[j]`` MB
    and ``gres[j]``, is submitted at j seconds and runs 100 s, under QOS ``normal`` = ``qos``."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(SITE)
    accounts = tmp_path / "accounts.toml"
    accounts.write_text("[accounts.a]\nusers = { u1 = 1, u2 = 1 }\n[qos.normal]\n" + qos)
    platform = read_slurm_conf(conf).platform()
    assert platform.slurm is not None
    slurm = replace(platform.slurm, accounts=read_slurm_accounts(accounts))
    n = len(users)
    jobs = pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1),
            "submit": np.arange(n, dtype=float),
            "run_time": [100.0] * n,
            "requested_time": [100.0] * n,
            "nodes": [1] * n,
            "user_name": users,
            "account": ["a"] * n,
            "cpus": [1] * n,
            "mem_per_node": mb,
            "gres": gres,
        }
    )
    workload = Workload(jobs=jobs, nodes=1)
    result = hpcsched.simulate(workload, "slurm", platform=replace(platform, slurm=slurm))
    return result.jobs.sort_values("job_id")["start"].tolist()


def test_grp_tres_on_gpus_holds_the_second_gpu_job_and_lets_a_cpu_job_start(tmp_path):
    # GrpTRES gres/gpu=1: J1 holds the QOS' GPU; J2 (a GPU too) waits until J1 ends at 100,
    # J3 (no GPU) starts at its arrival. Without the limit J2 starts at 1.
    gres = ["gpu:1", "gpu:1", ""]
    args = (["u1", "u1", "u2"], [1000.0] * 3, gres)
    assert starts(tmp_path, 'grp_tres = "gres/gpu=1"\n', *args) == [0.0, 100.0, 2.0]
    assert starts(tmp_path, 'grp_tres = "gres/gpu=2"\n', *args) == [0.0, 1.0, 2.0]


def test_max_tres_per_user_on_memory_binds_each_user_apart(tmp_path):
    # MaxTRESPerUser mem=2500 (MB): u1's J1 holds 2000, so u1's J2 (1000 more) waits until
    # 100; u2's J3 (2000) starts at 2; u1's J4 (500: 2500 with J1) starts at 3.
    users, mb = ["u1", "u1", "u2", "u1"], [2000.0, 1000.0, 2000.0, 500.0]
    got = starts(tmp_path, 'max_tres_per_user = "mem=2500M"\n', users, mb, [""] * 4)
    assert got == [0.0, 100.0, 2.0, 3.0]


def test_max_tres_per_job_on_typed_gpus_holds_a_job_for_good(tmp_path):
    # MaxTRESPerJob gres/gpu=1: J1 asks 2 (typed or not, gres/gpu counts them) and never
    # starts; J2 (one) starts at its arrival.
    got = starts(
        tmp_path, 'max_tres_per_job = "gres/gpu=1"\n', ["u1", "u1"], [100.0, 100.0],
        ["gpu:2", "gpu:1"],
    )  # fmt: skip
    assert np.isnan(got[0]) and got[1] == 1.0


def test_a_jobs_asked_tres_count_typed_gpus_toward_their_name():
    shared = {
        "nodes": np.array([0, 2, 0], np.uint32),
        "tasks": np.array([2, 2, 4], np.uint32),
        "cpus_per_task": np.ones(3, np.uint32),
        "memory_kind": np.array([1, 0, 2], np.uint8),  # per CPU, per node, whole node
        "memory": np.array([500, 1000, 0], np.uint64),
        "gres_request_names": ["gpu", "gpu:a100"],
        "gres_offsets": np.array([0, 1, 2, 2], np.uint32),
        "gres_name": np.array([1, 0], np.uint32),
        "gres_count": np.array([2, 1], np.uint32),
    }
    conf_groups = type("P", (), {"groups": [type("G", (), {"memory": 6000})()]})()
    got = asked_tres(shared, conf_groups, ["mem", "gres/gpu", "gres/gpu:a100"])  # type: ignore[arg-type]
    # J1: 2 CPUs x 500 MB, 2 gpu:a100 (both gres/gpu and gres/gpu:a100); J2: -N2, 1000 MB and
    # an untyped GPU per node (not gres/gpu:a100); J3: a whole node's memory, no GPU
    assert got.reshape(3, 3).tolist() == [[1000, 2, 2], [2000, 2, 0], [6000, 0, 0]]


def test_whole_nodes_count_the_least_node_of_the_platform(tmp_path):
    group = type("G", (), {})
    big, small = group(), group()
    big.memory, big.gres, small.memory, small.gres = 8000, (("gpu:a100", 2),), 6000, (("gpu", 4),)
    platform = type("P", (), {"groups": [big, small]})()
    tres = ["mem", "gres/gpu", "gres/gpu:a100"]
    got = whole_node_tres(tres, platform, np.array([1, 3]))  # type: ignore[arg-type]
    # per node: memory 6000 (the least), gpu 2 (typed counted), gpu:a100 0 (the small has none)
    assert got.reshape(2, 3).tolist() == [[6000, 2, 0], [18000, 6, 0]]
    # a platform that says nothing has none
    assert whole_node_tres(tres, None, np.array([2])).tolist() == [0, 0, 0]


def test_tres_limits_not_simulated_are_said_once_and_a_bad_one_exits_2(tmp_path, capsys):
    conf = tmp_path / "slurm.conf"
    conf.write_text(SITE)
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(
        '[accounts.group1]\nusers = { user1 = 1 }\n[qos.normal]\n'
        'grp_tres = "gres/gpu=2,license/matlab=1,billing=10"\n'
    )  # fmt: skip
    out = tmp_path / "run"
    args = ["simulate", str(trace), "--policy", "slurm", "--slurm-conf", str(conf)]
    assert main([*args, "--slurm-accounts", str(accounts), "--out", str(out)]) == 0
    said = "QOS limits on TRES not simulated (ignored): GrpTRES license/matlab (QOS normal), "
    assert (out / "summary.json").read_text().count(said + "GrpTRES billing (QOS normal)") == 1
    capsys.readouterr()
    accounts.write_text('[accounts.group1]\n[qos.normal]\ngrp_tres = "mem=4X"\n')
    code = main([*args, "--slurm-accounts", str(accounts), "--out", str(out), "--force"])
    assert code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {accounts}, line 3, field qos.normal.grp_tres: mem='4X': not a count"
    ]
