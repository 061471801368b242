"""Fuzzing a site's own files through the command line (issue 40): ``slurm.conf`` with its
``Include`` files and the accounts files (``sacctmgr`` parsable output, its dump, the TOML form);
``sacct`` records have theirs in test_sacct_hardening.py.

Inputs are drawn from each format's grammar with hostile values in every place (numbers past
every integer range, Unicode digits, huge durations, wide hostlists, unknown and misspelt keys,
Include chains, loops and repeats, long lines, NUL bytes, byte-order marks, invalid UTF-8). For
every input:

- the command exits 0 or 2, never 1 (an internal error) and never with a traceback;
- on exit 2, what it prints on stderr is one line, ``error: `` and the name of one of the
  input's files;
- reading costs bounded time and Python memory;
- a site that reads runs ``--policy slurm`` on a small trace to the end.

Bounded in CI by the number of examples (no deadline: the machine may be loaded).
"""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hpcsched.cli import main

#: the longest stderr any input may cause (one message naming file, line and field)
MAX_STDERR = 600
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slurm_accounts"

SETTINGS = settings(
    # HPCSCHED_FUZZ_EXAMPLES=5000 for a longer session by hand
    max_examples=int(os.environ.get("HPCSCHED_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

#: a small trace every site can run: 6 one- and two-node jobs of users 1 and 2
TRACE = "".join(
    f"{i} {10 * i} -1 {100 + 7 * i} {n} -1 -1 {n} 400 -1 1 {n} 1 -1 1 -1 -1 -1\n"
    for i, n in ((i, 1 + i % 2) for i in range(1, 7))
)

numbers = st.one_of(
    st.integers(-5, 5000).map(str),
    st.sampled_from(
        [
            "0",
            "-1",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "9223372036854775808",
            "1" * 400,
            "1e20",
            "1e300",
            "inf",
            "nan",
            "\u00b2",
            "\u0663",
            "0x10",
            "+3",
            " 7",
            "",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
)
durations = st.one_of(
    numbers,
    st.sampled_from(
        ["UNLIMITED", "INFINITE", "1-00:00:00", "99999999-00:00:00", "30:00", "1:2:3:4", "-5"]
    ),
)
words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r#"),
    min_size=1,
    max_size=8,
)
hostlists = st.one_of(
    st.sampled_from(
        ["n[1-4]", "n[1-2],m1", "n[1-5],n[3-9]", "a[1-99999]", "r[1-99]n[1-999]", "n[", "n[5-1]"]
    ),
    words,
)

NODE_KEYS = [
    "CPUs",
    "Procs",
    "Boards",
    "Sockets",
    "SocketsPerBoard",
    "CoresPerSocket",
    "ThreadsPerCore",
    "RealMemory",
    "MemSpecLimit",
    "CoreSpecCount",
    "Weight",
    "Gres",
    "Feature",
    "State",
    "CPUz",
]
PARTITION_KEYS = [
    "MaxTime",
    "DefaultTime",
    "MaxNodes",
    "MinNodes",
    "PriorityTier",
    "PriorityJobFactor",
    "Default",
    "State",
    "OverSubscribe",
    "QOS",
    "AllowAccounts",
    "MaxTim",
]
TOP_KEYS = [
    "PriorityType",
    "PriorityWeightAge",
    "PriorityWeightFairshare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityMaxAge",
    "PriorityDecayHalfLife",
    "PriorityCalcPeriod",
    "PriorityFavorSmall",
    "PriorityFlags",
    "FairShareDampeningFactor",
    "EnforcePartLimits",
    "SchedulerType",
    "SelectType",
    "SchedulerParamters",
    "ClusterName",
]
SCHEDULER_ITEMS = [
    "bf_window",
    "bf_resolution",
    "bf_interval",
    "bf_max_job_test",
    "bf_max_jobs_test",
    "bf_max_job_user",
    "default_queue_depth",
    "sched_interval",
    "bf_continue",
]


def _line(draw, head: str, keys: list[str], values) -> str:
    pairs = [head]
    for _ in range(draw(st.integers(0, 4))):
        pairs.append(f"{draw(st.sampled_from(keys))}={draw(values)}")
    return " ".join(pairs)


#: values a site writes, drawn as often as hostile ones so that many files read and run
plausible = st.one_of(
    st.integers(1, 64).map(str),
    st.sampled_from(["1-00:00:00", "30:00", "UNLIMITED", "YES", "NO", "UP", "DRAIN", "7-0"]),
)
values = st.one_of(plausible, numbers)
times_or_values = st.one_of(plausible, durations)


@st.composite
def slurm_conf_sets(draw) -> dict[str, bytes]:
    """A slurm.conf (``slurm.conf``: four nodes and a partition over them, then drawn lines)
    and up to three files it may include (``inc0.conf``...), which may include each other
    (loops, repeats)."""
    names = ["slurm.conf"] + [f"inc{k}.conf" for k in range(draw(st.integers(0, 3)))]
    files: dict[str, bytes] = {}
    for name in names:
        lines = []
        if name == "slurm.conf":
            lines += ["NodeName=n[1-4] CPUs=4", "PartitionName=batch Nodes=ALL Default=YES"]
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.integers(0, 9))
            if kind == 0:
                lines.append(_line(draw, f"NodeName={draw(hostlists)}", NODE_KEYS, values))
            elif kind in (1, 2):
                nodes = draw(st.one_of(st.just("ALL"), hostlists))
                head = f"PartitionName={draw(words)} Nodes={nodes}"
                lines.append(_line(draw, head, PARTITION_KEYS, times_or_values))
            elif kind in (3, 4, 5):
                key = draw(st.sampled_from(TOP_KEYS))
                lines.append(f"{key}={draw(st.one_of(times_or_values, words))}")
            elif kind in (6, 7):
                items = [
                    f"{draw(st.sampled_from(SCHEDULER_ITEMS))}={draw(times_or_values)}"
                    for _ in range(draw(st.integers(1, 4)))
                ]
                lines.append("SchedulerParameters=" + ",".join(items))
            elif kind == 8 and len(names) > 1:
                lines.append(f"Include {draw(st.sampled_from([*names[1:], 'nofile.conf']))}")
            else:
                lines.append(draw(st.sampled_from(["a=b \\", "x" * 100_000, '"unclosed', "\x00"])))
        text = "\n".join(lines).encode("utf-8", "surrogatepass")
        mutation = draw(st.integers(0, 12))
        if mutation == 0:
            text = b"\xef\xbb\xbf" + text
        elif mutation == 1:
            text += b"\xff\xfe"
        files[name] = text
    return files


@st.composite
def accounts_texts(draw) -> tuple[str, bytes]:
    """A real accounts fixture with some of its fields replaced by hostile values."""
    name = draw(
        st.sampled_from(
            ["assoc-and-qos.txt", "assoc-tree.txt", "qos.txt", "ci.dump", "site.toml", "assoc.txt"]
        )
    )
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(0, len(lines) - 1))
        separator = "|" if "|" in lines[k] else "=" if "=" in lines[k] else " "
        parts = lines[k].split(separator)
        parts[draw(st.integers(0, len(parts) - 1))] = draw(st.one_of(plausible, numbers, words))
        lines[k] = separator.join(parts)
    return name, "\n".join(lines).encode("utf-8", "surrogatepass")


def run_bounded(args: list[str], files: list[Path], size: int, capsys) -> int:
    """Runs the command; asserts exit 0 or 2, one line naming a file on 2, and the bounds."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        code = main([str(a) for a in args])
    finally:
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    _, err = capsys.readouterr()
    event(f"{args[0]} exit {code}")
    assert code in (0, 2), err
    assert "Traceback" not in err
    assert len(err) < MAX_STDERR, err[:300]
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("error: "), err
        assert any(str(f) in lines[0] or f.name in lines[0] for f in files), err
    # generous: a fixed allowance for a loaded machine, then linear in the input's size
    assert seconds < 20.0 + 50e-6 * size, f"{seconds:.2f} s for {size} bytes"
    assert peak < (64 << 20) + 400 * size, f"{peak >> 20} MiB for {size} bytes"
    return code


def _trace(folder: Path) -> Path:
    path = folder / "t.swf"
    path.write_text(TRACE)
    return path


@SETTINGS
@given(files=slurm_conf_sets())
def test_slurm_conf_fuzz(tmp_path_factory, capsys, files):
    folder = tmp_path_factory.mktemp("conf")
    paths = []
    for name, data in files.items():
        (folder / name).write_bytes(data)
        paths.append(folder / name)
    trace = _trace(folder)
    size = sum(len(d) for d in files.values())
    conf = folder / "slurm.conf"
    if run_bounded(["inspect", trace, "--platform", conf], paths, size, capsys) == 0:
        out = folder / "run"
        args = ["simulate", trace, "--platform", conf, "--policy", "slurm", "--out", out]
        run_bounded(args, paths, size, capsys)


SITE = (
    "NodeName=n[1-4] CPUs=4\nPartitionName=batch Nodes=ALL Default=YES\n"
    "PriorityType=priority/multifactor\nPriorityWeightFairshare=1000\nPriorityWeightQOS=100\n"
)


@SETTINGS
@given(drawn=accounts_texts())
def test_accounts_fuzz(tmp_path_factory, capsys, drawn):
    name, data = drawn
    folder = tmp_path_factory.mktemp("accounts")
    accounts = folder / name
    accounts.write_bytes(data)
    (folder / "slurm.conf").write_text(SITE)
    args = ["simulate", _trace(folder), "--platform", folder / "slurm.conf", "--policy", "slurm"]
    args += ["--slurm-accounts", accounts, "--out", folder / "run"]
    run_bounded(args, [accounts], len(data), capsys)
