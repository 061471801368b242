"""An association tree of any depth: a chain of 15,000 accounts is read and runs under
``--policy slurm`` with fair-share (no recursion over the tree, in the reader or the engine:
crates/core/src/sched/slurm/fairshare.rs has the engine's 100,000-deep case), and a cycle of
parents under a deep chain is found in one walk. The last two tests pin what the one-pass walks
of the reader must keep (default QOS inherited over many levels, ``tree`` indentation): they
pass on today's main too (the behaviour is unchanged) and fail on mutants of the new walks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from hpcsched.exceptions import InputError
from hpcsched.site.slurm.accounts import read_slurm_accounts
from tests.test_slurm_policy import FAIR, conf, swf

DEPTH = 15_000


def chain(path: Path, depth: int, bottom: str, users: str) -> Path:
    """A TOML accounts file: root -> a1 -> a2 -> ... -> ``bottom`` (``depth`` accounts), the
    users ``users`` in ``bottom``."""
    names = [f"a{k}" for k in range(1, depth)] + [bottom]
    tables = [
        f'[accounts.{name}]\nparent = "{parent}"\n'
        for parent, name in zip(["root", *names], names, strict=False)
    ]
    path.write_text("".join(tables) + f"users = {{ {users} }}\n")
    return path


def test_a_chain_of_15000_accounts_runs_with_fair_share_from_its_deepest_users(
    tmp_path: Path,
) -> None:
    """Hand-computed (as test_slurm_policy's fair-share case, without decay): user 1's job 1
    holds both nodes 0-1200, user 2's job 2 1200-1800; at 1800 user 2 has used 600 s of the
    1800 charged to their account (level fair-share (1/2) / (1/3) = 3/2), user 1 1200
    ((1/2) / (2/3) = 3/4): user 2's job 4 starts first although job 3 was submitted before.
    Both users sit in the 15,000th account; Slurm sets no depth limit, so the run must not
    either (exit 0, no staging folder left)."""
    jobs = [(1, 0, 1200, 2, 1, 1), (2, 1200, 600, 2, 2, 1), (3, 1300, 100, 2, 1, 1)]
    trace = swf(tmp_path, [*jobs, (4, 1301, 100, 2, 2, 1)])
    accounts = chain(tmp_path / "deep.toml", DEPTH, "group1", "user1 = 1, user2 = 1")
    site = conf(tmp_path, FAIR.replace("00:05:00", "0"))
    out = tmp_path / "run"
    cli = [sys.executable, "-m", "hpcsched", "simulate", str(trace), "--policy", "slurm"]
    done = subprocess.run(
        [*cli, "--slurm-conf", str(site), "--slurm-accounts", str(accounts), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    starts = pd.read_parquet(out / "jobs.parquet").set_index("job_id")["start"]
    assert (starts[4], starts[3]) == (1800.0, 1900.0)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_cycle_of_parents_under_a_15000_deep_chain_is_found_in_one_walk(tmp_path: Path) -> None:
    """15,000 accounts chained under x1, listed before x1 and x2 that are each other's parent:
    each account reaches the cycle only through the whole chain above it, which walking from
    each one in turn (with a list of those seen) took hours; the error names the cycle."""
    names = [f"c{k}" for k in range(1, DEPTH + 1)]
    tables = [
        f'[accounts.{name}]\nparent = "{parent}"\n'
        for parent, name in zip(["x1", *names], names, strict=False)
    ]
    tables += ['[accounts.x1]\nparent = "x2"\n', '[accounts.x2]\nparent = "x1"\n']
    accounts = tmp_path / "cycle.toml"
    accounts.write_text("".join(tables))
    read = (
        "import sys\nfrom hpcsched.exceptions import InputError\n"
        "from hpcsched.site.slurm.accounts import read_slurm_accounts\n"
        "try:\n    read_slurm_accounts(sys.argv[1])\n"
        "except InputError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", read, str(accounts)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    line = 2 * DEPTH + 2  # (x1's parent)
    assert done.stdout.strip() == (
        f"{accounts}, line {line}, field accounts.x1.parent: account x1 is in a cycle of "
        "parents: x1 -> x2 -> x1"
    )


def test_a_default_qos_given_at_the_chains_top_reaches_its_deepest_users(tmp_path: Path) -> None:
    """Slurm's inheritance: a user without a default QOS takes the nearest account's above it
    that has one; here a1's, 15,000 accounts up (no account between names one), and the bottom
    account's own QOS for the user below it when given (inherited level by level in one pass:
    the reader no longer climbs from each user)."""
    accounts = chain(tmp_path / "deep.toml", DEPTH, "bottom", "u1 = 1, u2 = 1")
    text = accounts.read_text().replace(
        'parent = "root"\n', 'parent = "root"\ndefault_qos = "top"\n'
    )
    accounts.write_text(text + "[qos.top]\npriority = 10\n[qos.low]\npriority = 0\n")
    read = read_slurm_accounts(accounts)
    assert [(u.user, u.account, u.default_qos) for u in read.users] == [
        ("u1", "bottom", "top"),
        ("u2", "bottom", "top"),
    ]
    accounts.write_text(
        accounts.read_text().replace(
            "[accounts.bottom]\n", '[accounts.bottom]\ndefault_qos = "low"\n'
        )
    )
    assert {u.default_qos for u in read_slurm_accounts(accounts).users} == {"low"}


def test_an_account_indented_two_levels_below_the_one_above_is_under_no_account(
    tmp_path: Path,
) -> None:
    """``sacctmgr show assoc tree`` indents each account one space below its parent: a line
    indented two spaces deeper than the account above it has no parent, and a line back at a
    shallower depth is under the last account one less deep (b under root, not under a2)."""
    header = "Account|User|Share\nroot||1\n a1||1\n  a2||1\n b||1\n  b|u1|1\n"
    good = tmp_path / "tree.txt"
    good.write_text(header)
    assert [(a.name, a.parent) for a in read_slurm_accounts(good).accounts] == [
        ("root", None),
        ("a1", "root"),
        ("a2", "a1"),
        ("b", "root"),
    ]
    bad = tmp_path / "skipped.txt"
    bad.write_text(header + "    c||1\n")
    with pytest.raises(InputError) as caught:
        read_slurm_accounts(bad)
    assert str(caught.value) == (
        f"{bad}, line 7, field Account: account c is indented under no account"
    )
