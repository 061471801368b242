"""A site's associations and QOS (for --policy slurm's fair-share and QOS limits): the real
sacctmgr captures of tests/fixtures/slurm_accounts (README.md there: Slurm 22.05.8, the
accounting test cluster) read to the tree written out by hand below, in each of their forms;
the hand-written TOML format; malformed variants, each one error naming the file, the line and
the field."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from hpcsched.exceptions import InputError
from hpcsched.site.slurm.accounts import (
    Account,
    Qos,
    SlurmAccounts,
    UserAssociation,
    read_slurm_accounts,
    read_slurm_qos,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "slurm_accounts"

#: The tree the captures show (README.md there), worked out from the sacctmgr commands.
ACCOUNTS = (
    Account("root", None, 1),
    Account("acct_a", "root", 1),
    Account("acct_c", "acct_a", 3),  # sacctmgr add account acct_c parent=acct_a Fairshare=3
    Account("acct_b", "root", 2),
)
USERS = (
    UserAssociation("root", "root", 1, None),
    UserAssociation("u1", "acct_a", 1, None),
    UserAssociation("u2", "acct_a", 1, "low"),
    UserAssociation("u1", "acct_c", None, "high"),  # Fairshare=parent; acct_c's default QOS
    UserAssociation("u3", "acct_b", 5, "normal"),
)
QOS = (
    Qos("normal", 0),
    Qos("high", 100, max_jobs_per_user=2, max_nodes_per_user=4, max_cpus_per_user=8, grp_nodes=8),
    Qos("low", 10, max_submit_jobs_per_user=5, grp_cpus=16, grp_jobs=10),
    Qos(
        "memcap",
        0,
        max_jobs_per_user=4,
        max_cpus_per_user=4,
        max_other_tres_per_user=(("mem", 4096),),
    ),  # mem=4G: 4096 MB
)


def test_the_dump_reads_to_the_tree_with_inherited_default_qos():
    # the dump writes Fairshare=parent as 2147483647, and no DefaultQOS for u1 in acct_c
    accounts = read_slurm_accounts(FIXTURES / "ci.dump")
    assert accounts == SlurmAccounts(ACCOUNTS, USERS, (Qos("normal"),))


@pytest.mark.parametrize(
    "name", ["assoc.txt", "assoc-tree.txt", "assoc-and-qos.txt", "assoc-and-qos-parsable.txt"]
)
def test_show_assoc_reads_to_the_same_tree(name):
    accounts = read_slurm_accounts(FIXTURES / name)
    assert (accounts.accounts, accounts.users) == (ACCOUNTS, USERS)
    # the QOS when the file has its table after the associations; else normal only
    assert accounts.qos == (QOS if "qos" in name else (Qos("normal"),))


def test_the_qos_table_alone_and_with_the_dump():
    assert read_slurm_qos(FIXTURES / "qos.txt") == QOS
    assert read_slurm_qos(FIXTURES / "assoc-and-qos.txt") == QOS
    both = read_slurm_accounts(FIXTURES / "ci.dump", qos=FIXTURES / "qos.txt")
    assert both == SlurmAccounts(ACCOUNTS, USERS, QOS)
    with pytest.raises(InputError, match="no QOS definitions") as caught:
        read_slurm_qos(FIXTURES / "ci.dump")
    assert caught.value.path == str(FIXTURES / "ci.dump")


def test_the_hand_written_toml_twin_reads_the_same(tmp_path):
    assert read_slurm_accounts(FIXTURES / "site.toml") == SlurmAccounts(ACCOUNTS, USERS, QOS)
    # recognised by its content too, and read gzip-compressed
    renamed = tmp_path / "site.conf.gz"
    renamed.write_bytes(gzip.compress((FIXTURES / "site.toml").read_bytes()))
    assert read_slurm_accounts(renamed) == SlurmAccounts(ACCOUNTS, USERS, QOS)


def test_the_toml_example_of_the_docs(tmp_path):
    page = (Path(__file__).resolve().parents[1] / "docs" / "formats.md").read_text()
    section = page.split("### Slurm associations and QOS", 1)[1]
    path = tmp_path / "site.toml"
    path.write_text(section.split("```toml\n", 1)[1].split("```", 1)[0])
    accounts = read_slurm_accounts(path)
    assert accounts.accounts == (Account("root", None, 1), Account("acct_a", "root", 2))
    assert accounts.users == (
        UserAssociation("u1", "acct_a", 1, None),
        UserAssociation("u2", "acct_a", 1, "high"),
    )
    # normal added (the file does not define it), first
    assert accounts.qos == (
        Qos("normal"),
        Qos("high", 100, max_jobs_per_user=2, max_nodes_per_user=4, max_cpus_per_user=64,
            grp_nodes=8),
    )  # fmt: skip


def test_toml_shares_parent_and_tres_followed_or_not(tmp_path):
    path = tmp_path / "site.toml"
    path.write_text(
        '[accounts.a]\n[accounts.sub]\nparent = "a"\nshares = "parent"\n'
        '[qos.gpu]\ngrp_tres = "node=2,gres/gpu:a100=4,license/matlab=1,billing=10,mem=1T"\n'
        'max_tres_per_job = "cpu=8,gres/gpu=2K"\n'
    )
    accounts = read_slurm_accounts(path)
    assert accounts.accounts[1:] == (Account("a", "root", 1), Account("sub", "a", None))
    # memory in MB (1T: 1024^2), a count's K 1024; license and billing kept by name only
    gpu = Qos("gpu", grp_nodes=2, grp_other_tres=(("gres/gpu:a100", 4), ("mem", 1024**2)),
              max_tres_per_job=(("cpu", 8), ("gres/gpu", 2048)),
              ignored_tres=("GrpTRES license/matlab", "GrpTRES billing"))  # fmt: skip
    assert accounts.qos == (Qos("normal"), gpu)
    assert gpu.tres_limits() == [
        ("group", "node", 2),
        ("group", "gres/gpu:a100", 4),
        ("group", "mem", 1024**2),
        ("per_job", "cpu", 8),
        ("per_job", "gres/gpu", 2048),
    ]


def test_sacctmgr_tables_read_mem_and_gres_limits_with_sacctmgrs_units(tmp_path):
    # sacctmgr show qos -P prints memory with a unit (mem=4G) and names per-job limits MaxTRES;
    # a count in M or K of memory is MB as it is (slurmdb_format_tres_str's conversion)
    path = tmp_path / "qos.txt"
    path.write_text(
        "Name|Priority|GrpTRES|MaxTRES|MaxTRESPU\n"
        "gpu|5|gres/gpu=8,mem=512M|gres/gpu:a100=2|mem=100K,cpu=16,fs/disk=10\n"
    )
    (qos,) = read_slurm_qos(path)
    assert qos == Qos(
        "gpu",
        5,
        max_cpus_per_user=16,
        grp_other_tres=(("gres/gpu", 8), ("mem", 512)),
        max_tres_per_job=(("gres/gpu:a100", 2),),
        max_other_tres_per_user=(("mem", 100),),
        ignored_tres=("MaxTRESPerUser fs/disk",),
    )


def test_several_clusters_need_one_named():
    path = FIXTURES / "assoc-two-clusters.txt"
    with pytest.raises(InputError, match=r"2 clusters \(ci, other\)") as caught:
        read_slurm_accounts(path)
    assert (caught.value.line, caught.value.field) == (11, "Cluster")
    assert read_slurm_accounts(path, cluster="ci").users == USERS
    other = read_slurm_accounts(path, cluster="other")
    assert other.accounts == (Account("root", None, 1), Account("acct_x", "root", 4))
    assert other.users == (
        UserAssociation("root", "root", 1, None),
        UserAssociation("u1", "acct_x", 1, None),
    )
    with pytest.raises(InputError, match="no associations of cluster nope"):
        read_slurm_accounts(path, cluster="nope")
    with pytest.raises(InputError, match="the dump is of cluster ci, not other"):
        read_slurm_accounts(FIXTURES / "ci.dump", cluster="other")


@pytest.mark.parametrize(
    ("name", "line", "field", "message"),
    [
        # the default columns name no parent: acct_c after acct_a's users could be either's
        ("assoc-default.txt", 4, "ParentName", "do not say account acct_a's parent"),
        ("assoc-partition.txt", 10, "Partition", "per-partition association .*partition batch"),
        ("ci-partition.dump", 25, "Partition", "per-partition association .*partition batch"),
        ("qos.txt", None, None, "no associations"),
    ],
)
def test_real_outputs_that_cannot_be_read_say_why(name, line, field, message):
    with pytest.raises(InputError, match=message) as caught:
        read_slurm_accounts(FIXTURES / name)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(FIXTURES / name), line, field)


def test_default_for_a_workload_without_its_sites_tree():
    accounts = SlurmAccounts.default_for([("u1", "a"), ("u2", "b"), ("u1", "a"), ("u3", "a")])
    assert accounts.accounts == (
        Account("root", None, 1),
        Account("a", "root", 1),
        Account("b", "root", 1),
    )
    assert [(u.user, u.account, u.shares) for u in accounts.users] == [
        ("u1", "a", 1), ("u2", "b", 1), ("u3", "a", 1)
    ]  # fmt: skip
    assert accounts.qos == (Qos("normal"),)
    with pytest.raises(ValueError, match="a user and an account"):
        SlurmAccounts.default_for([("u1", "")])


# --- malformed variants: one error each, naming the file, the line and the field -------------

DUMP = (FIXTURES / "ci.dump").read_text()
TABLE = (FIXTURES / "assoc-and-qos.txt").read_text()
TOML = (FIXTURES / "site.toml").read_text()


def line_of(text: str, start: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if line.startswith(start))


#: (base text, file suffix, old, new, the line that starts with (after the change), field,
#: message) for each variant.
MALFORMED = [
    # a dump
    (DUMP, "dump", "Parent - 'acct_b'", "Parent - 'acct_z'", "Parent - 'acct_z'",
     "Parent", "parent acct_z is not an account defined above"),
    (DUMP, "dump", "DefaultQOS='normal':Fairshare=5", "DefaultQOS='normal':Fairshare=-5",
     "User - 'u3'",
     "Fairshare", "whole number >= 0 or parent, not '-5'"),
    (DUMP, "dump", "Organization='ci':Fairshare=2", "Organization='ci':Fairshrae=2",
     "Account - 'acct_b'", "Fairshrae", "unknown option 'Fairshrae'; did you mean Fairshare"),
    (DUMP, "dump", "Parent - 'acct_b'", "Account - 'acct_a':Fairshare=1\nParent - 'acct_b'",
     "Account - 'acct_a':Fairshare=1", "Account", "account acct_a is already defined (line 16)"),
    (DUMP, "dump", "User - 'u2'", "User - 'u1':Fairshare=3\nUser - 'u2'", "User - 'u1':Fairshare=3",
     "User", "user u1 in account acct_a is already defined (line 19)"),
    (DUMP, "dump", "Account - 'acct_b':", "Account - 'acct_b:", "Account - 'acct_b",
     "Account", "a ' is not closed"),
    (DUMP, "dump", "\nParent - 'root'", "\nCluster - 'again'\nParent - 'root'", "Cluster - 'again'",
     "Cluster", "a second Cluster line"),
    # show assoc -P and show qos -P
    (TABLE, "txt", "ci|acct_b|u3||5|", "ci|acct_b|u3||-1|", "ci|acct_b|u3",
     "Share", "whole number >= 0 or parent, not '-1'"),
    (TABLE, "txt", "ci|acct_b|||2|root|", "ci|acct_b|||2|rot|", "ci|acct_b|||",
     "ParentName", "parent rot of account acct_b is no account"),
    (TABLE, "txt", "ci|acct_a|||1|root|", "ci|acct_a|||1|acct_c|", "ci|acct_a|||",
     "ParentName", "account acct_a is in a cycle of parents: acct_a -> acct_c -> acct_a"),
    (TABLE, "txt", "ci|acct_a|u2||1||high,low,normal|low", "ci|acct_a|u2||1||high,low,normal|lo",
     "ci|acct_a|u2", "Def QOS", "unknown default QOS 'lo'; did you mean low"),
    (TABLE, "txt", "|cpu=8,node=4|2|", "|cpu=8;node=4|2|", "high|",
     "MaxTRESPU", "cpu='8;node=4': not a count"),
    (TABLE, "txt", "|node=8|", "|nodes=8|", "high|",
     "GrpTRES", "unknown TRES 'nodes'; did you mean node"),
    (TABLE, "txt", "|cpu=4,mem=4G|4|", "|cpu=4,mem=4X|4|", "memcap|",
     "MaxTRESPU", "mem='4X': not a count"),
    (TABLE, "txt", "|cpu=16|", "|cpu=16,gres/gpu:=2|", "low|",
     "GrpTRES", "a generic resource is gres/NAME or gres/NAME:TYPE"),
    (TABLE, "txt", "low|10|", "low|ten|", "low|", "Priority", "whole number >= 0, not 'ten'"),
    (TABLE, "txt", "memcap|0|", "high|0|", "high|0|", "Name", "QOS high is already defined"),
    (TABLE, "txt", "|Partition|Share|", "|Partition|Shares|", "Cluster|", "Share",
     "no Share column"),
    # TOML
    (TOML, "toml", "shares = 2", "shares = -2", "shares = -2",
     "accounts.acct_b.shares", "whole number >= 0 or parent, not '-2'"),
    (TOML, "toml", "shares = 3", "share = 3", "share = 3",
     "accounts.acct_c.share", "unknown key 'share'; did you mean shares"),
    (TOML, "toml", '[accounts.acct_a]          # parent = "root" when not given',
     '[accounts.acct_a]\nparent = "acct_c"', 'parent = "acct_c"',
     "accounts.acct_a.parent", "cycle of parents: acct_a -> acct_c -> acct_a"),
    (TOML, "toml", 'u1 = "parent"', 'u1 = "parnet"', 'users = { u1 = "parnet"',
     "accounts.acct_c.users.u1", "whole number >= 0 or parent, not 'parnet'"),
    (TOML, "toml", '"node=4,cpu=8"', '"node=four,cpu=8"', 'max_tres_per_user = "node=four',
     "qos.high.max_tres_per_user", "node='four': not a count"),
    (TOML, "toml", '"cpu=4,mem=4G"', '"cpu=4,mem=4G,gres/gpu=-1"', 'max_tres_per_user = "cpu=4',
     "qos.memcap.max_tres_per_user", "gres/gpu='-1': not a count"),
    (TOML, "toml", 'default_qos = "high"', 'default_qos = "hihg"', 'default_qos = "hihg"',
     "accounts.acct_c.default_qos", "unknown default QOS 'hihg'; did you mean high"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("base", "suffix", "old", "new", "starts", "field", "message"),
    MALFORMED,
    ids=[f"{m[1]}-{m[5]}" for m in MALFORMED],
)
def test_a_malformed_variant_names_the_file_the_line_and_the_field(
    tmp_path, base, suffix, old, new, starts, field, message
):
    assert base.count(old) == 1, old
    text = base.replace(old, new)
    path = tmp_path / f"site.{suffix}"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_slurm_accounts(path)
    error = caught.value
    assert message in error.reason
    assert (error.path, error.line, error.field) == (str(path), line_of(text, starts), field)
    assert str(error).startswith(f"{path}, line {error.line}, field {field}: ")


def test_other_malformed_inputs(tmp_path):
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("[accounts.a]\nshares = = 2\n")
    with pytest.raises(InputError, match="invalid TOML") as caught:
        read_slurm_accounts(bad_toml)
    assert (caught.value.path, caught.value.line) == (str(bad_toml), 2)
    # sacctmgr's aligned columns (no -P), and the header left out (-n)
    aligned = tmp_path / "aligned.txt"
    aligned.write_text(
        "   Cluster    Account       User  Share\n---------- ---------- ---- -----\n"
    )
    with pytest.raises(InputError, match="run it with -P") as caught:
        read_slurm_accounts(aligned)
    assert caught.value.line == 1
    headless = tmp_path / "headless.txt"
    headless.write_text("".join(TABLE.splitlines(keepends=True)[1:]))
    with pytest.raises(InputError, match="no header line above") as caught:
        read_slurm_accounts(headless)
    assert caught.value.line == 1
    short = tmp_path / "short.txt"
    short.write_text(TABLE.replace("ci|acct_b|u3||5|", "ci|acct_b|u3|5|"))
    with pytest.raises(InputError, match="7 fields, its header \\(line 1\\) has 8") as caught:
        read_slurm_accounts(short)
    assert caught.value.line == 10
    # a QOS in both files
    with pytest.raises(InputError, match="QOS normal is already defined") as caught:
        read_slurm_accounts(FIXTURES / "assoc-and-qos.txt", qos=FIXTURES / "qos.txt")
    assert (caught.value.path, caught.value.line) == (str(FIXTURES / "qos.txt"), 2)
    # a user of an account the file does not define
    dump = tmp_path / "ci.dump"
    shutil.copy(FIXTURES / "ci.dump", dump)
    missing = tmp_path / "missing.txt"
    missing.write_text(TABLE.replace("ci|acct_b|u3|", "ci|acct_x|u3|"))
    with pytest.raises(InputError, match="account acct_x of user u3 is no account") as caught:
        read_slurm_accounts(missing)
    assert (caught.value.line, caught.value.field) == (10, "Account")
