"""Hostile slurm.conf and platform files (issue 40, points 1-4, 9, 10, 13, 14, 16): a site's own
files never hang, never blow up, never end in a traceback, and leave out nothing unsaid.

Each refusal is exit 2 with one line naming the file (and the line and the field where there is
one); the cases that used to hang or grow for minutes run in a subprocess with a timeout, so
that a regression fails instead of hanging the suite. docs/semantics.md, "Hostile slurm.conf
and platform files", says every rule tested here."""

from __future__ import annotations

import os
import random
import shlex
import subprocess
import sys
from pathlib import Path

import hostlist
import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.site.slurm.conf import read_slurm_conf

#: A subprocess imports the package these tests import (whichever checkout it is).
PACKAGE_ENV = {**os.environ, "PYTHONPATH": str(Path(hpcsched.__file__).parents[1])}

TRACE = (
    "1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n2 5 -1 20 2 -1 -1 2 30 -1 1 1 1 1 1 -1 -1 -1\n"
)
SITE = "NodeName=c[1-4] CPUs=2\nPartitionName=p Nodes=ALL Default=YES\n"


def trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    return path


def write(folder: Path, files: dict[str, str]) -> Path:
    """The files of a site (``slurm.conf`` first); returns the top file."""
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder / next(iter(files))


def cli(tmp_path: Path, *args: object, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """``hpcsched ARGS`` in a subprocess: a hang fails at ``timeout`` instead of hanging."""
    return subprocess.run(
        [sys.executable, "-m", "hpcsched", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
        check=False,
        env=PACKAGE_ENV,
    )


def refused(done: subprocess.CompletedProcess[str]) -> str:
    """The one line of a refusal (exit 2, no traceback)."""
    err = done.stderr.strip()
    assert done.returncode == 2, (done.returncode, err[-2000:])
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def simulate(tmp_path: Path, conf: Path, *more: str) -> tuple[int, str]:
    """``simulate --slurm-conf conf`` in-process: (exit code, stdout and stderr)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        swf = trace(tmp_path)
        out_dir = ["--out", str(tmp_path / "run"), "--force"]
        code = main(["simulate", str(swf), "--slurm-conf", str(conf), *more, *out_dir])
    return code, out.getvalue() + err.getvalue()


def error_line(tmp_path: Path, conf: Path, *more: str) -> str:
    code, text = simulate(tmp_path, conf, *more)
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in text, text[-2000:]
    return errors[0]


def warnings(text: str) -> list[str]:
    return [" ".join(w.split()) for w in text.split("warning: ")[1:]]


# --- 1. every file read must be a regular file ----------------------------------------------


@pytest.mark.parametrize(
    "how", ["fifo top", "fifo include", "fifo link", "zero include", "zero link"]
)
@pytest.mark.parametrize("command", ["--slurm-conf", "--platform", "inspect", "compare"])
def test_a_pipe_or_a_device_is_refused_at_once_naming_it_and_the_include_line(
    tmp_path, how, command
):
    conf = tmp_path / "slurm.conf"
    if how == "fifo top":
        os.mkfifo(conf)
    else:
        target = {"fifo": tmp_path / "pipe", "zero": Path("/dev/zero")}[how.split()[0]]
        if how == "fifo include":
            os.mkfifo(target)
        if how.endswith("link"):
            if how.startswith("fifo"):
                os.mkfifo(tmp_path / "real-pipe")
                os.symlink(tmp_path / "real-pipe", target)
            else:
                os.symlink(target, tmp_path / "zero.conf")
                target = tmp_path / "zero.conf"
        conf.write_text(SITE + f"Include {target}\n")
    swf = trace(tmp_path)
    args = {
        "--slurm-conf": ["simulate", swf, "--slurm-conf", conf],
        "--platform": ["simulate", swf, "--platform", conf],
        "inspect": ["inspect", swf, "--platform", conf],
        "compare": ["compare", swf, "--policy", "fcfs", "--platform", conf],
    }[command]
    err = refused(cli(tmp_path, *args))
    kind = "a pipe" if "fifo" in how else "a character device"
    if how == "fifo top":
        assert err == (
            f"error: {conf}: {kind}, not a regular file: inputs are read from files (save a "
            "stream to a file first)"
        )
    else:
        assert err.startswith(f"error: {conf}, line 3: Include '{target}': {kind}, not a "), err


def test_an_include_of_a_folder_names_the_including_file_and_line(tmp_path):
    conf = write(tmp_path, {"slurm.conf": SITE + "Include conf.d\n"})
    (tmp_path / "conf.d").mkdir()
    err = error_line(tmp_path, conf)
    assert err.startswith(f"error: {conf}, line 3: Include '{tmp_path / 'conf.d'}': a folder, ")


# --- 2. Include is bounded ------------------------------------------------------------------


def doubling(tmp_path: Path, levels: int) -> Path:
    """``levels`` files each including the next twice (2**levels reads of the last)."""
    files = {"slurm.conf": SITE + "Include f1.conf\n"}
    for k in range(1, levels):
        files[f"f{k}.conf"] = f"Include f{k + 1}.conf\nInclude f{k + 1}.conf\n"
    files[f"f{levels}.conf"] = "ClusterName=x\n"
    return write(tmp_path, files)


def test_includes_that_double_are_refused_after_ten_thousand_reads(tmp_path):
    conf = doubling(tmp_path, 18)
    err = refused(cli(tmp_path, "simulate", trace(tmp_path), "--slurm-conf", conf))
    # f1 is read once, f2 twice, ..., f14 8192 times: 16383 reads from f1 to f14; the 10,000th
    # file read is reached in the walk's depth-first order: the last levels repeat most
    assert "more than 10000 files read, a file included again counted again" in err
    assert err.startswith(f"error: {tmp_path}/f") and ", line " in err


def test_a_chain_of_1500_includes_is_read_without_recursion(tmp_path):
    files = {"slurm.conf": SITE + "Include c1.conf\n"}
    files |= {f"c{k}.conf": f"Include c{k + 1}.conf\n" for k in range(1, 1500)}
    files["c1500.conf"] = "ClusterName=deep\n"
    conf = read_slurm_conf(write(tmp_path, files))
    assert conf.cluster == "deep" and len(conf.included) == 1500
    assert conf.included[0] == str(tmp_path / "c1.conf")


# --- 3. a long line is read in linear time, and capped --------------------------------------


def test_a_line_over_a_mebibyte_is_refused_naming_it(tmp_path):
    # (4 MiB: shlex took minutes on it)
    conf = write(tmp_path, {"slurm.conf": SITE + 'NodeName=d1 Feature="' + "a b " * (1 << 20)})
    err = refused(cli(tmp_path, "simulate", trace(tmp_path), "--slurm-conf", conf))
    assert err == (
        f"error: {conf}, line 3: a line longer than 1 MiB (continued lines joined): not a "
        "slurm.conf line"
    )


def test_continued_lines_count_together(tmp_path):
    piece = "Feature=" + "a" * 1000 + " \\\n"
    conf = write(tmp_path, {"slurm.conf": SITE + "NodeName=d1 \\\n" + piece * 1100 + "\n"})
    assert error_line(tmp_path, conf) == (
        f"error: {conf}, line 3: a line longer than 1 MiB (continued lines joined): not a "
        "slurm.conf line"
    )


def test_the_word_splitter_splits_as_shlex():
    from hpcsched.site.slurm.conf_lines import split_words

    alphabet = ["a", "X", " ", "\t", '"', "'", "\\", "=", "#", "é"]
    rng = random.Random(40)
    for _ in range(20000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        try:
            expected: object = shlex.split(line, comments=False, posix=True)
        except ValueError as exc:
            expected = str(exc)
        try:
            got: object = split_words(line)
        except ValueError as exc:
            got = str(exc)
        assert got == expected, line


# --- 4. hostlists are counted before they are expanded --------------------------------------


PEAK = """
import resource, sys
from hpcsched.exceptions import InputError
from hpcsched.site.slurm.conf import read_slurm_conf
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_slurm_conf(sys.argv[1]).platform()
    print(0, "read")
except InputError as exc:
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) >> 10, exc)
"""


def test_200_lines_of_100_000_nodes_are_refused_before_any_is_expanded(tmp_path):
    lines = "".join(f"NodeName=a{k}n[1-99999]\n" for k in range(200))
    conf = write(tmp_path, {"slurm.conf": lines + "PartitionName=p Nodes=ALL\n"})
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(conf)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=PACKAGE_ENV,
    )
    grown_mib, message = done.stdout.split(maxsplit=1)
    # 167 lines are 16,699,833 nodes, the 168th 16,799,832: past the engine's 16,777,216
    assert message.strip() == (
        f"{conf}, line 168, field NodeName: the NodeName lines describe 16799832 nodes by this "
        "one: more than the engine's 16777216"
    )
    assert int(grown_mib) < 100, done.stdout  # (it was 5.6 GB)


def test_one_line_of_comma_separated_parts_counts_every_part(tmp_path):
    # python-hostlist caps a part at 100,000 names, never a comma list of parts
    parts = ",".join(f"r{k}n[1-99999]" for k in range(170))
    conf = write(tmp_path, {"slurm.conf": f"NodeName={parts}\nPartitionName=p Nodes=ALL\n"})
    err = refused(cli(tmp_path, "simulate", trace(tmp_path), "--slurm-conf", conf))
    assert err == (
        f"error: {conf}, line 1, field NodeName: the NodeName lines describe 16999830 nodes by "
        "this one: more than the engine's 16777216"
    )


def test_a_partition_stops_at_its_first_hostlist_of_unknown_nodes(tmp_path):
    parts = ",".join(f"a{k}n[1-99999]" for k in range(40))
    conf = write(tmp_path, {"slurm.conf": SITE + f"PartitionName=big Nodes={parts}\n"})
    assert error_line(tmp_path, conf) == (
        f"error: {conf}, line 3, field Nodes: node a0n1 is in no NodeName line (and 99998 more "
        "of 'a0n[1-99999]')"
    )


def test_partitions_and_node_sets_share_a_cap_on_the_names_they_expand(tmp_path, monkeypatch):
    from hpcsched.site.slurm import conf as slurm_conf

    monkeypatch.setattr(slurm_conf._core, "MAX_NODES", 100)
    text = "NodeName=n[1-60]\nNodeSet=s Nodes=n[1-30]\nPartitionName=p Nodes=n[1-60]\n"
    conf = write(tmp_path, {"slurm.conf": text + "PartitionName=q Nodes=n[1-20]\n"})
    # 30 + 60 names: within 100; the next 20 are 110
    assert error_line(tmp_path, conf) == (
        f"error: {conf}, line 4, field Nodes: the hostlists of partitions and node sets name "
        "more than 100 nodes in all by this line (repeats counted): past the engine's largest "
        "machine"
    )


def test_hostlists_read_as_python_hostlist_reads_them_with_repeats():
    from hpcsched.site.slurm.text import hostlist_names, hostlist_size

    alphabet = ["a", "b", "[", "]", ",", "-", "0", "1", "2", "9", "01"]
    rng = random.Random(40)
    for _ in range(20000):
        expression = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        try:
            expected = hostlist.expand_hostlist(expression, allow_duplicates=True)
        except hostlist.BadHostlist:
            expected = None
        try:
            got = hostlist_names(expression)
            assert hostlist_size(expression) == len(got)
        except ValueError:
            got = None
        assert got == expected, expression
    # bracket groups beyond Python's recursion: python-hostlist recursed once a group
    assert len(hostlist_names("x" + "[1]" * 5000)) == 1


# --- 9. every key is followed, said as not simulated, or said as unknown ---------------------


def test_a_misspelt_partition_key_is_said_with_the_nearest_real_key(tmp_path):
    conf = write(
        tmp_path,
        {"slurm.conf": "NodeName=c[1-4]\nPartitionName=p Nodes=ALL MaxTim=2-00:00:00\n"},
    )
    code, text = simulate(tmp_path, conf)
    assert code == 0
    assert (
        f"{conf}, line 2: MaxTim is not a PartitionName key of Slurm 22.05 (ignored); did you "
        "mean MaxTime?"
    ) in warnings(text)


def test_an_unknown_scheduler_parameter_is_unknown_not_not_simulated(tmp_path):
    conf = write(
        tmp_path,
        {"slurm.conf": SITE + "SchedulerParameters=bf_window=60,bf_max_jobs_test=10,defer\n"},
    )
    code, text = simulate(tmp_path, conf, "--policy", "slurm")
    assert code == 0
    said = warnings(text)
    assert (
        f"{conf}, line 3: SchedulerParameters bf_max_jobs_test is not a parameter of Slurm "
        "22.05 (ignored); did you mean bf_max_job_test?"
    ) in said
    assert (f"{conf}, line 3: SchedulerParameters read and not simulated (ignored): defer") in said
    assert not any("bf_max_jobs_test is not simulated" in w for w in said)


def test_a_file_of_many_unknown_keys_says_twenty_and_counts_the_rest(tmp_path):
    """A hostile file of 60,000 distinct unknown keys (a line just under a mebibyte) and as many
    unknown SchedulerParameters and PriorityFlags: each setting says its first 20 unknown names
    with the nearest real one and counts the rest in one note (each said at once cost a
    comparison with every real key: 11 s and 22 s for these lines, and 60,000 warnings)."""
    keys = " ".join(f"Feature{k}=x" for k in range(60_000))
    items = ",".join(f"bf_x{k}=1" for k in range(30_000))
    flags = ",".join(f"FLAG{k}" for k in range(30_000))
    text = f"{SITE}NodeName=m1 {keys}\nSchedulerParameters={items}\nPriorityFlags={flags}\n"
    conf = write(tmp_path, {"slurm.conf": text})
    code, out = simulate(tmp_path, conf, "--policy", "slurm")
    assert code == 0
    said = warnings(out)
    feature = [w for w in said if "is not a NodeName key" in w]
    assert len(feature) == 20
    assert feature[0] == (
        f"{conf}, line 3: Feature0 is not a NodeName key of Slurm 22.05 (ignored); did you mean "
        "Feature?"
    )
    assert f"{conf}, line 3: and 59,980 more keys Slurm 22.05 does not know (ignored)" in said
    for line, setting in ((4, "SchedulerParameters"), (5, "PriorityFlags")):
        assert sum(w.startswith(f"{conf}, line {line}: {setting} ") for w in said) == 20
        assert (
            f"{conf}, line {line}: {setting}: and 29,980 more names Slurm 22.05 does not know "
            "(ignored)"
        ) in said


def test_unknown_top_level_keys_and_flags_get_the_nearest_real_one(tmp_path):
    text = SITE + "SchedulerParamters=bf_window=60\nPriorityFlags=INCR_ONLY,SMALL_RELATIVE_TO_TME\n"
    conf = write(tmp_path, {"slurm.conf": text})
    code, out = simulate(tmp_path, conf, "--policy", "slurm")
    assert code == 0
    said = warnings(out)
    assert (
        f"{conf}, line 3: SchedulerParamters is not a slurm.conf setting of Slurm 22.05 "
        "(ignored); did you mean SchedulerParameters?"
    ) in said
    assert (
        f"{conf}, line 4: PriorityFlags SMALL_RELATIVE_TO_TME is not a flag of Slurm 22.05 "
        "(ignored); did you mean SMALL_RELATIVE_TO_TIME?"
    ) in said
    assert f"{conf}, line 4: PriorityFlags read and not simulated (ignored): INCR_ONLY" in said


def test_keys_read_and_not_simulated_are_named_once_each_with_their_first_line(tmp_path):
    text = (
        "SlurmctldHost=head\n"
        "NodeName=DEFAULT Weight=10\n"
        "NodeName=c[1-2] CPUs=4 DefMemPerCPU=100 State=UNKNOWN\n"
        "NodeName=c[3-4] CPUs=4 Weight=20 State=DOWN\n"
        "PartitionName=p Nodes=ALL OverSubscribe=YES QOS=normal AllowAccounts=a PreemptMode=OFF\n"
        "PartitionName=q Nodes=c[1-2] QOS=high DefMemPerCPU=100\n"
    )
    conf = write(tmp_path, {"slurm.conf": text})
    code, out = simulate(tmp_path, conf)
    assert code == 0
    said = warnings(out)
    # DefMemPerCPU is a partition key and a top-level one, not a node key: no node key is near
    assert f"{conf}, line 3: DefMemPerCPU is not a NodeName key of Slurm 22.05 (ignored)" in said
    assert f"{conf}: settings read and not simulated (ignored): SlurmctldHost (line 1)" in said
    assert (
        f"{conf}: NodeName keys read and not simulated (ignored): Weight (line 2), State=DOWN "
        "(line 4)"
    ) in said
    assert (
        f"{conf}: PartitionName keys read and not simulated (ignored): OverSubscribe (line 5), "
        "QOS (line 5), AllowAccounts (line 5), PreemptMode (line 5), DefMemPerCPU (line 6)"
    ) in said
    assert len(said) == 4, said


def test_the_partitions_priority_sets_tier_and_job_factor_as_slurm_reads_it(tmp_path):
    conf = write(
        tmp_path,
        {"slurm.conf": "NodeName=c[1-2]\nPartitionName=p Nodes=ALL Priority=7 PriorityTier=2\n"},
    )
    (part,) = read_slurm_conf(conf).partitions
    assert (part.tier, part.job_factor) == (7, 7)


# --- 10. nodes described twice, zero sizes, times past the engine's -------------------------


BAD = [
    # (the file's text after SITE's nodes, the line named, the field, what the message says)
    ("NodeName=n[1-5],n[3-9]", 3, "NodeName", "node n3 is named twice on this line"),
    ("NodeName=n1 CoresPerSocket=0", 3, "CoresPerSocket", "must be at least 1, not '0'"),
    ("NodeName=n1 Sockets=0 CoresPerSocket=4", 3, "Sockets", "must be at least 1, not '0'"),
    ("NodeName=n1 Boards=00", 3, "Boards", "must be at least 1, not '00'"),
    ("NodeName=n1 ThreadsPerCore=0", 3, "ThreadsPerCore", "must be at least 1, not '0'"),
    ("NodeName=n1 SocketsPerBoard=0", 3, "SocketsPerBoard", "must be at least 1, not '0'"),
    ("PriorityCalcPeriod=" + "1" + "0" * 20, 3, "PriorityCalcPeriod", "past the engine's times"),
    ("PriorityDecayHalfLife=1" + "0" * 20, 3, "PriorityDecayHalfLife", "past the engine's"),
    ("PriorityMaxAge=1157408-00:00:00", 3, "PriorityMaxAge", "past the engine's times"),
    ("PartitionName=q Nodes=c1 MaxTime=1" + "0" * 20, 3, "MaxTime", "past the engine's times"),
    ("PartitionName=q Nodes=c1 DefaultTime=1" + "0" * 20, 3, "DefaultTime", "past the engine"),
    (
        "SchedulerParameters=bf_window=1666666667",
        3,
        "SchedulerParameters bf_window",
        "must be a whole number of minutes from 1 to 1666666666",
    ),
]


@pytest.mark.parametrize(("text", "line", "field", "says"), BAD)
def test_a_node_twice_a_zero_size_or_a_time_past_the_engine_is_refused(
    tmp_path, text, line, field, says
):
    conf = write(tmp_path, {"slurm.conf": SITE + text + "\n"})
    err = error_line(tmp_path, conf, "--policy", "slurm")
    assert err.startswith(f"error: {conf}, line {line}, field {field}: ") and says in err, err


def test_a_slurm_conf_without_partitions_is_refused(tmp_path):
    conf = write(tmp_path, {"slurm.conf": "NodeName=c[1-4]\n"})
    assert error_line(tmp_path, conf) == (
        f"error: {conf}: no PartitionName line: jobs would have no partition to run in (add "
        "'PartitionName=all Nodes=ALL Default=YES')"
    )


# --- 13, 14, 16. numbers past the engine's range, Unicode digits, where the fault is ---------


U32 = "must be a whole number from 0 to 4294967295, not '4294967296'"
NUMBERS = [
    ("NodeName=n1 CPUs=4294967296", "CPUs", "must be a whole number from 1 to 4294967295"),
    (
        "NodeName=n1 Sockets=65536 CoresPerSocket=65536 ThreadsPerCore=2",
        "ThreadsPerCore",
        "Sockets x CoresPerSocket x ThreadsPerCore is 8589934592 CPUs a node: at most 4294967295",
    ),
    ("PartitionName=q Nodes=c1 PriorityTier=4294967296", "PriorityTier", U32),
    ("PartitionName=q Nodes=c1 MaxNodes=4294967296", "MaxNodes", U32),
    ("PartitionName=q Nodes=c1 MinNodes=4294967296", "MinNodes", U32),
    ("PartitionName=q Nodes=c1 PriorityJobFactor=4294967296", "PriorityJobFactor", U32),
    ("PriorityWeightAge=4294967296", "PriorityWeightAge", U32),
    ("PriorityWeightJobSize=4294967296", "PriorityWeightJobSize", U32),
    ("FairShareDampeningFactor=0", "FairShareDampeningFactor", "from 1 to 4294967295, not '0'"),
    ("SchedulerParameters=bf_max_job_test=0", "SchedulerParameters bf_max_job_test", "from 1"),
    (
        "SchedulerParameters=default_queue_depth=4294967296",
        "SchedulerParameters default_queue_depth",
        "from 1 to 4294967295",
    ),
    ("SchedulerParameters=bf_max_job_user=4294967296", "SchedulerParameters bf_max_job_user", U32),
    ("SchedulerParameters=bf_window=" + "9" * 400, "SchedulerParameters bf_window", "minutes"),
    ("SchedulerParameters=bf_interval=0", "SchedulerParameters bf_interval", "must be -1 or"),
    ("NodeName=n1 CPUs=\u00b2", "CPUs", "must be a whole number, not '\u00b2'"),
    ("PriorityWeightAge=\u00b2", "PriorityWeightAge", "must be a whole number, not '\u00b2'"),
    ("SchedulerParameters=bf_window=\u00b2", "SchedulerParameters bf_window", "not '\u00b2'"),
    ("PartitionName=q Nodes=c1 MaxTime=\u0663", "MaxTime", "must be Slurm time"),
]


@pytest.mark.parametrize(("text", "field", "says"), NUMBERS)
def test_a_number_past_the_engine_or_in_other_digits_names_file_line_and_field_once(
    tmp_path, text, field, says
):
    setting = (
        "PriorityType=priority/multifactor\nAccountingStorageType=accounting_storage/slurmdbd\n"
    )
    conf = write(tmp_path, {"slurm.conf": SITE + setting + text + "\n"})
    err = error_line(tmp_path, conf, "--policy", "slurm")
    assert err.startswith(f"error: {conf}, line 5, field {field}: ") and says in err, err
    assert f"field {field}: {field.split()[-1]}" not in err, err  # (the key once, not repeated)


@pytest.mark.parametrize(
    ("table", "field", "says"),
    [
        ("priority_tier = 4294967296", "priority_tier", "up to 4294967295"),
        ("max_nodes = 4294967296", "max_nodes", "up to 4294967295"),
        ("min_nodes = 4294967296", "min_nodes", "up to 4294967295"),
        ("max_time = 1e300", "max_time", "1e+300 s is past the engine's times"),
        # (past int()'s 4,300 digits: it was a ValueError)
        (f'nodes = "0-{"9" * 5000}"', "nodes", "is not within the machine's nodes 0-3"),
        ('nodes = "\u0660-\u0663"', "nodes", "nor node ranges"),
    ],
)
def test_a_platform_files_numbers_past_the_engine_are_input_errors(tmp_path, table, field, says):
    lines = ["nodes = 4", "[[partitions]]", 'name = "p"']
    lines += [table] if table.startswith("nodes") else ['nodes = "0-3"', table]
    platform = tmp_path / "site.toml"
    platform.write_text("\n".join(lines) + "\n")
    swf = trace(tmp_path)
    code, text = 0, ""
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["simulate", str(swf), "--platform", str(platform), "--out", str(tmp_path)])
    text = err.getvalue().strip()
    assert code == 2, text
    assert text.startswith(f"error: {platform}, field partitions[0].{field}: ") and says in text


def test_a_groups_cores_past_the_engine_are_an_input_error(tmp_path):
    platform = tmp_path / "site.toml"
    platform.write_text('[[groups]]\nname = "g"\nnodes = 4\ncores = 99999999999999999999\n')
    err = refused(cli(tmp_path, "simulate", trace(tmp_path), "--platform", platform))
    assert err.startswith(f"error: {platform}, field groups[0].cores: cores must be an integer ")


def test_an_integer_of_5000_digits_in_toml_is_an_input_error(tmp_path):
    platform = tmp_path / "site.toml"
    platform.write_text("nodes = " + "9" * 5000 + "\n")
    err = refused(cli(tmp_path, "simulate", trace(tmp_path), "--platform", platform))
    assert err == f"error: {platform}: invalid TOML: a number of thousands of digits"


@pytest.mark.parametrize(
    ("qos", "field", "says"),
    [
        ("priority = 4294967296", "qos.high.priority", U32),
        ('priority = "\u00b2"', "qos.high.priority", "must be a whole number >= 0, not '\u00b2'"),
        (
            'max_tres_per_user = "node=4294967296"',
            "qos.high.max_tres_per_user",
            "node " + U32,
        ),
        ("grp_jobs = 4294967296", "qos.high.grp_jobs", U32),
    ],
)
def test_qos_numbers_past_the_engine_are_input_errors(tmp_path, qos, field, says):
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(f"[accounts.a]\nusers = {{ u1 = 1 }}\n[qos.high]\n{qos}\n")
    conf = write(tmp_path, {"slurm.conf": SITE})
    err = error_line(tmp_path, conf, "--policy", "slurm", "--slurm-accounts", str(accounts))
    assert err == f"error: {accounts}, line 4, field {field}: {says}", err


def test_a_bare_node_count_in_a_calendar_on_partitions_names_the_calendar_line(tmp_path):
    calendar = tmp_path / "down.txt"
    calendar.write_text("# maintenance\n100 200 S 2 rack 1\n")
    conf = write(tmp_path, {"slurm.conf": SITE})
    assert error_line(tmp_path, conf, "--downtime", str(calendar)) == (
        f"error: {calendar}, line 2, field nodes: a count of nodes (2) on a platform with "
        "partitions: say which nodes go down, partition=NAME or nodes=FIRST-LAST"
    )


@pytest.mark.parametrize(
    ("window", "says"),
    [
        ("100 200 S 1e300", "nodes must be a whole number from 1 to 16777216, not '1e300'"),
        ("100 200 S nodes=0-" + "9" * 30, "from 0 to 16777215), not '0-99999999"),
        ("100 200 S nodes=\u0660-\u0661", "nodes= takes one range of node indices"),
    ],
)
def test_calendar_counts_past_the_engine_are_refused_as_such(tmp_path, window, says):
    calendar = tmp_path / "down.txt"
    calendar.write_text(window + "\n")
    conf = write(tmp_path, {"slurm.conf": SITE})
    err = error_line(tmp_path, conf, "--downtime", str(calendar))
    assert err.startswith(f"error: {calendar}, line 1, field nodes: ") and says in err, err


def test_a_down_nodes_line_is_one_setting_not_simulated_not_three_unknown_keys(tmp_path):
    conf = write(tmp_path, {"slurm.conf": SITE + 'DownNodes=c1 Reason="broken fan" State=DOWN\n'})
    code, out = simulate(tmp_path, conf)
    assert code == 0
    assert warnings(out) == [
        f"{conf}: settings read and not simulated (ignored): DownNodes (line 3)"
    ]


# --- the reader's edges, read in this process (mutants of site/slurm/conf_lines.py survived the
# --- tests above, which start hpcsched in another process) ----------------------------------


def test_a_top_file_that_is_a_pipe_says_why_it_is_refused(tmp_path):
    os.mkfifo(tmp_path / "slurm.conf")
    with pytest.raises(hpcsched.InputError) as caught:
        read_slurm_conf(tmp_path / "slurm.conf")
    assert caught.value.path == str(tmp_path / "slurm.conf")
    assert "a pipe, not a regular file" in str(caught.value)


def test_exactly_ten_thousand_files_are_read_and_one_more_is_refused(tmp_path):
    """The top file and a chain of 9,999 includes: 10,000 files read, the cap itself."""
    files = {"slurm.conf": SITE + "Include c1.conf\n"}
    files |= {f"c{k}.conf": f"Include c{k + 1}.conf\n" for k in range(1, 9999)}
    files["c9999.conf"] = "ClusterName=last\n"
    top = write(tmp_path, files)
    assert read_slurm_conf(top).cluster == "last"
    (tmp_path / "c9999.conf").write_text("Include c10000.conf\n")
    (tmp_path / "c10000.conf").write_text("ClusterName=over\n")
    with pytest.raises(hpcsched.InputError, match="more than 10000 files read"):
        read_slurm_conf(top)


def test_a_file_included_twice_one_after_the_other_is_no_loop(tmp_path):
    top = write(
        tmp_path,
        {
            "slurm.conf": "Include part.conf\nInclude part.conf\nInclude part.conf\n",
            "part.conf": "NodeName=DEFAULT CPUs=2",  # (one line, no final newline)
        },
    )
    (tmp_path / "slurm.conf").write_text(
        (tmp_path / "slurm.conf").read_text() + "NodeName=c1\nPartitionName=p Nodes=ALL\n"
    )
    conf = read_slurm_conf(top)
    assert conf.node_names() == ["c1"] and conf.included == (str(tmp_path / "part.conf"),)


def test_a_logical_line_of_exactly_a_mebibyte_is_read_first_or_after_another_line(tmp_path):
    """The cap counts each logical line from zero: 1,048,576 characters are read, one more
    is refused."""
    head = "NodeName=c1 CPUs=2 Feature="
    exact = head + "f" * ((1 << 20) - len(head))
    top = write(tmp_path, {"slurm.conf": f"ClusterName=x\n{exact}\nPartitionName=p Nodes=ALL\n"})
    (node,) = read_slurm_conf(top).nodes
    assert len(node.features) == (1 << 20) - len(head)
    top.write_text(f"{exact}\nPartitionName=p Nodes=ALL\n")  # (the first line too)
    assert read_slurm_conf(top).node_names() == ["c1"]
    top.write_text(f"ClusterName=x\n{exact}f\nPartitionName=p Nodes=ALL\n")
    with pytest.raises(hpcsched.InputError, match="a line longer than 1 MiB") as caught:
        read_slurm_conf(top)
    assert caught.value.line == 2


def test_continuations_keep_the_value_before_the_backslash_and_allow_trailing_blanks(tmp_path):
    """``CPUs=4\\`` continues with ``CPUs`` 4 (the backslash alone is cut), and a backslash
    followed by blanks still continues the line. The file has no final newline."""
    text = "NodeName=c[1-2] CPUs=4\\\n  Feature=big \\  \n  Gres=gpu:2\nPartitionName=p Nodes=ALL"
    (node,) = read_slurm_conf(write(tmp_path, {"slurm.conf": text})).nodes
    assert (node.names, node.cpus, node.features, node.gres) == (("c1", "c2"), 4, "big", "gpu:2")


def test_an_include_that_names_no_file_quotes_the_name_written(tmp_path):
    top = write(tmp_path, {"slurm.conf": SITE + 'Include "Xmissing.conf"\n'})
    with pytest.raises(hpcsched.InputError) as caught:
        read_slurm_conf(top)
    assert caught.value.line == 3
    assert str(caught.value).endswith(
        f"Include 'Xmissing.conf': no such file ({tmp_path / 'Xmissing.conf'})"
    )


def test_a_bad_hostlist_quotes_the_expression():
    from hpcsched.site.slurm.text import expand_hostlist

    with pytest.raises(ValueError, match=r"^bad hostlist 'c\[1-': "):
        expand_hostlist("c[1-")


def test_a_last_line_ending_with_a_backslash_is_refused_after_other_lines(tmp_path):
    top = write(tmp_path, {"slurm.conf": SITE + "NodeName=d1 \\\n"})
    with pytest.raises(hpcsched.InputError, match="the last line ends with a backslash") as caught:
        read_slurm_conf(top)
    assert caught.value.line == 3


def test_memory_and_gres_of_nodes_are_said_as_not_simulated_once(tmp_path):
    """Jobs get whole nodes: a site whose nodes give RealMemory or Gres is told so once, at the
    first line that gives any; a site that gives neither is told nothing of it."""
    site = (
        "NodeName=c[1-2] CPUs=4\nNodeName=m[1-2] CPUs=4 RealMemory=8000\n"
        "NodeName=g1 CPUs=4 Gres=gpu:2\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    conf = write(tmp_path, {"slurm.conf": site})
    notes = [n for n in read_slurm_conf(conf).platform().notes if "whole nodes" in n]
    assert notes == [
        f"{conf}, line 2: the nodes' RealMemory, Gres read and not simulated: jobs get whole "
        "nodes (SelectType=select/linear, Slurm's default: say select/cons_tres for nodes shared "
        "by CPUs, memory and GPUs)"
    ]
    conf.write_text(SITE)
    assert not [n for n in read_slurm_conf(conf).platform().notes if "whole nodes" in n]


# --- issue 41: the resources of shared nodes (SelectType=select/cons_tres) ------------------

#: a site whose jobs share nodes, before the line tested (line 3)
TRES = "SelectType=select/cons_tres\nGresTypes=gpu\n"
RESOURCES = [
    # (the file's text after TRES, the field, what the message says)
    ("NodeName=n1 CPUs=-4", "CPUs", "must be a whole number, not '-4'"),
    ("NodeName=n1 CPUs=6 CoresPerSocket=4 ThreadsPerCore=2", "CPUs",
     "6 CPUs are neither the sockets (1), the cores (4) nor the threads (8)"),
    ("NodeName=n1 CPUs=2 Sockets=2 CoresPerSocket=4", "CPUs",
     "2 CPUs are the node's sockets, neither its cores (8) nor its threads (8): slurmctld stops"),
    ("NodeName=n1 CPUs=2000000", "CPUs", "past the engine's 1048576 where jobs share nodes"),
    ("NodeName=n1 Sockets=2 SocketsPerBoard=2", "Sockets", "exclude each other"),
    ("NodeName=n1 Boards=2 Sockets=1", "Sockets", "Sockets 1 are fewer than Boards 2"),
    ("NodeName=n1 CPUs=4 RealMemory=-1", "RealMemory", "must be a whole number, not '-1'"),
    ("NodeName=n1 CPUs=4 RealMemory=0", "RealMemory", "from 1 to"),
    ("NodeName=n1 CPUs=4 RealMemory=2000000000000", "RealMemory",
     "2000000000000 MB a node is past the engine's 1099511627776 MB"),
    ("NodeName=n1 CPUs=4 RealMemory=" + "9" * 30, "RealMemory", "must be a whole number from 1"),
    ("NodeName=n1 CPUs=4 RealMemory=1000 MemSpecLimit=1000", "MemSpecLimit",
     "MemSpecLimit 1000 MB is all of the node's RealMemory (1000 MB)"),
    ("NodeName=n1 CPUs=4 MemSpecLimit=10", "MemSpecLimit", "RealMemory (1 MB by default)"),
    ("NodeName=n1 CPUs=4 CoreSpecCount=4", "CoreSpecCount", "keeps every one of the node's 4"),
    ("NodeName=n1 CPUs=4 CoreSpecCount=-1", "CoreSpecCount", "must be a whole number"),
    ("NodeName=n1 CPUs=4 CpuSpecList=0-7", "CpuSpecList", "'0-7' is not within the CPUs 0-3"),
    ("NodeName=n1 CPUs=4 CpuSpecList=a", "CpuSpecList", "'a' is not a CPU id or range"),
    ("NodeName=n1 CPUs=4 CpuSpecList=0-3", "CpuSpecList", "keeps every core of the node from jobs"),
    ("NodeName=n1 CPUs=4 CpuSpecList=0 CoreSpecCount=1", "CoreSpecCount", "exclude each other"),
    ("NodeName=n1 CPUs=4 Gres=gpu:-1", "Gres", "'gpu:-1' is not a generic resource"),
    ("NodeName=n1 CPUs=4 Gres=gpu:a:b:2", "Gres", "not a generic resource of Slurm 22.05's form"),
    ("NodeName=n1 CPUs=4 Gres=gpu:2Q", "Gres", "the count '2Q' is not a number"),
    ("NodeName=n1 CPUs=4 Gres=gpu:1g.5gb", "Gres", "the count '1g.5gb' is not a number"),
    ("NodeName=n1 CPUs=4 Gres=9gpu:2", "Gres", "'9gpu:2' is not a generic resource"),
    ("NodeName=n1 CPUs=4 Gres=gpu:2,gpu:a100:2", "Gres", "both with and without a type"),
    ("NodeName=n1 CPUs=4 Gres=gpu,gpu:2", "Gres", "gpu is given alone ('gpu') and again"),
    ("NodeName=n1 CPUs=4 Gres=gpu:" + "9" * 30, "Gres", "the count '" + "9" * 30),
    ("NodeName=n1 CPUs=4 Gres=gpu:20000P", "Gres", "a count past Slurm's 64 bits"),
    ("NodeName=n1 CPUs=4 Gres=gpu:2M", "Gres", "2097152 gpu a node is past the engine's 1048576"),
    ("NodeName=n1 CPUs=4 Weight=-1", "Weight", "must be a whole number, not '-1'"),
    ("NodeName=n1 CPUs=4 Weight=4294967296", "Weight", "from 0 to 4294967295"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "field", "says"), RESOURCES)
def test_a_shared_nodes_bad_resources_name_file_line_and_key(tmp_path, text, field, says):
    conf = write(tmp_path, {"slurm.conf": TRES + text + "\nPartitionName=p Nodes=ALL\n"})
    err = error_line(tmp_path, conf)
    assert err.startswith(f"error: {conf}, line 3, field {field}: ") and says in err, err


SETTINGS_AND_PARTITIONS = [
    # (the lines after a node line, the line named, the field, what the message says)
    ("SelectType=select/cons_tre", 2, "SelectType",
     "unknown plugin 'select/cons_tre'; did you mean select/cons_tres, "),
    ("SelectType=select/cons_tres\nSelectTypeParameters=CR_Bogus", 3, "SelectTypeParameters",
     "unknown value 'CR_Bogus'; choose one of: CR_CPU, CR_CPU_Memory"),
    ("SelectType=select/cons_tres\nSelectTypeParameters=CR_Core,CR_CPU", 3,
     "SelectTypeParameters", "names CR_Core and CR_CPU: one resource at most"),
    ("SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU,CR_ONE_TASK_PER_CORE", 3,
     "SelectTypeParameters", "CR_ONE_TASK_PER_CORE does not go with CR_CPU*"),
    ("SelectType=select/cons_tres\nSelectTypeParameters=CR_LLN", 3, "SelectTypeParameters",
     "names none of CR_CPU, CR_Core, CR_Socket"),
    ("SelectType=select/cons_res\nSelectTypeParameters=CR_Memory", 3, "SelectTypeParameters",
     "names none of CR_CPU, CR_Core, CR_Socket"),
    ("SelectTypeParameters=CR_Core_Memroy", 2, "SelectTypeParameters",
     "unknown value 'CR_Core_Memroy'; did you mean CR_Core_Memory?"),
    ("DefMemPerCPU=100\nDefMemPerNode=1000", 2, "DefMemPerCPU", "exclude each other"),
    ("MaxMemPerCPU=100\nMaxMemPerNode=1000", 2, "MaxMemPerCPU", "exclude each other"),
    ("DefMemPerNode=-5", 2, "DefMemPerNode", "must be a whole number, not '-5'"),
    ("DefMemPerCPU=UNLIMITED", 2, "DefMemPerCPU", "must be a whole number of MB"),
    ("MaxMemPerNode=2000000000000", 2, "MaxMemPerNode", "from 0 to 1099511627776"),
    ("PartitionName=q Nodes=n1 DefMemPerCPU=100 DefMemPerNode=100", 2, "DefMemPerCPU",
     "DefMemPerCPU and DefMemPerNode exclude each other"),
    ("PartitionName=DEFAULT DefMemPerNode=100\nPartitionName=q Nodes=n1 DefMemPerCPU=100", 3,
     "DefMemPerCPU", "exclude each other"),
    ("PartitionName=q Nodes=n1 MaxMemPerNode=lots", 2, "MaxMemPerNode", "must be a whole"),
    ("PartitionName=q Nodes=n1 MaxCPUsPerNode=-2", 2, "MaxCPUsPerNode", "must be a whole"),
    ("PartitionName=q Nodes=n1 OverSubscribe=MAYBE", 2, "OverSubscribe", "must be NO, EXCLUSIVE"),
    ("PartitionName=q Nodes=n1 OverSubscribe=YES:1", 2, "OverSubscribe", "not 'YES:1'"),
    ("PartitionName=q Nodes=n1 Shared=FORCE:0", 2, "Shared", "not 'FORCE:0'"),
    ("PartitionName=q Nodes=n1 OverSubscribe=EXCLUSIVE:2", 2, "OverSubscribe", "EXCLUSIVE:2"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "field", "says"), SETTINGS_AND_PARTITIONS)
def test_bad_sharing_settings_and_partition_memory_name_file_line_and_key(
    tmp_path, text, line, field, says
):
    conf = write(
        tmp_path,
        {"slurm.conf": f"NodeName=n1 CPUs=4 RealMemory=1000\n{text}\nPartitionName=p Nodes=ALL\n"},
    )
    err = error_line(tmp_path, conf)
    assert err.startswith(f"error: {conf}, line {line}, field {field}: ") and says in err, err


def test_a_file_of_many_gres_reads_in_linear_time(tmp_path):
    """A node line of 100,000 Gres kinds (a line near a mebibyte) reads in a second or so:
    each token is looked at once."""
    gres = ",".join(f"g{k}:1" for k in range(100_000))
    conf = write(tmp_path, {"slurm.conf": f"NodeName=n1 CPUs=4 Gres={gres}\n" + SITE})
    done = cli(tmp_path, "inspect", trace(tmp_path), "--platform", conf, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
