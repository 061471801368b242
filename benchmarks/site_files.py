"""Hostile site files benchmark (issue 40): a site's own files never hang the reader, never
blow up its memory, never crash the engine.

Each measurement is one fresh ``hpcsched`` process, timed from outside with its peak RSS
(``wait4``) and killed at ``--timeout`` seconds (then reported as such), against reading the
same trace with a small, ordinary slurm.conf in the same run:

- slurm.conf: a FIFO given as the file, a FIFO and ``/dev/zero`` (by a symlink) included,
  ``--levels`` files each including the next twice, a chain of ``--chain`` Includes, one logical
  line of ``--line-mb`` MB, 200 lines of ``NodeName=a{k}n[1-99999]``, a 607-byte
  ``PartitionName`` of 40 wide parts;
- accounts: a chain of ``--depth`` accounts under ``--policy slurm`` with fair-share;
- sacct: a ``--sacct-mb`` MB ``--parsable2`` record (peak RSS against the file's size).

    python benchmarks/site_files.py [--levels 18] [--chain 1500] [--line-mb 1] [--depth 15000]
        [--sacct-mb 200] [--timeout 60] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SITE = "NodeName=n[1-4] CPUs=4\nPartitionName=batch Nodes=ALL Default=YES MaxTime=UNLIMITED\n"
# Fair-share needs the accounting store, as in Slurm.
FAIR = (
    "AccountingStorageType=accounting_storage/slurmdbd\n"
    "PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"
    "PriorityDecayHalfLife=0\nPriorityCalcPeriod=1\n"
)
TRACE = "".join(
    f"{i} {10 * i} -1 {600 + 60 * i} 2 -1 -1 2 3600 -1 1 {1 + i % 2} 1 -1 1 -1 -1 -1\n"
    for i in range(1, 9)
)


#: A process past this resident size is killed (the machine is shared; before issue 40 an
#: Include of /dev/zero grew until the kernel's OOM killer stopped it).
MAX_RSS_MIB = 6144


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)
    except OSError:
        return 0.0


def timed(command: list[str], timeout: float) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, outcome: 'exit N', 'killed at T s' or 'killed at M MiB')
    of one fresh process."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        over_time = time.perf_counter() - started > timeout
        if over_time or _rss_mib(child.pid) > MAX_RSS_MIB:
            child.kill()
            _, status, usage = os.wait4(child.pid, 0)
            seconds = time.perf_counter() - started
            limit = f"{timeout:g} s" if over_time else f"{MAX_RSS_MIB} MiB"
            return seconds, usage.ru_maxrss / 1024, f"killed at {limit}"
        time.sleep(0.01)
    seconds = time.perf_counter() - started
    return seconds, usage.ru_maxrss / 1024, f"exit {os.waitstatus_to_exitcode(status)}"


def doubling_includes(folder: Path, levels: int) -> Path:
    """``inc0.conf`` includes ``inc1.conf`` twice, ... ; the last holds one setting."""
    for k in range(levels):
        nxt = f"inc{k + 1}.conf"
        (folder / f"inc{k}.conf").write_text(f"Include {nxt}\nInclude {nxt}\n")
    (folder / f"inc{levels}.conf").write_text("PriorityWeightAge=1\n")
    top = folder / "doubling.conf"
    top.write_text(SITE + "Include inc0.conf\n")
    return top


def chained_includes(folder: Path, length: int) -> Path:
    for k in range(length):
        (folder / f"chain{k}.conf").write_text(f"Include chain{k + 1}.conf\n")
    (folder / f"chain{length}.conf").write_text("PriorityWeightAge=1\n")
    top = folder / "chain.conf"
    top.write_text(SITE + "Include chain0.conf\n")
    return top


def long_line(folder: Path, megabytes: float) -> Path:
    """One logical line of about ``megabytes`` MB, most of it one quoted value: shlex's
    reading of it was quadratic before issue 40. Under the 1 MiB cap it must be read."""
    value = "x " * int(megabytes * 1e6 / 2)
    path = folder / "long.conf"
    path.write_text(SITE + f'NodeName=m1 CPUs=4 Feature="{value}"\n')
    return path


def wide_hostlists(folder: Path, lines: int) -> Path:
    path = folder / "wide.conf"
    path.write_text(
        "".join(f"NodeName=a{k}n[1-99999] CPUs=1\n" for k in range(lines))
        + "PartitionName=p Nodes=ALL\n"
    )
    return path


def wide_partition(folder: Path) -> Path:
    path = folder / "wide-partition.conf"
    parts = ",".join(f"a{k}n[1-99999]" for k in range(40))
    path.write_text(SITE + f"PartitionName=wide Nodes={parts}\n")
    return path


def deep_accounts(folder: Path, depth: int) -> Path:
    # The trace's jobs are charged to account group1 (SWF field 13), so the walk from their
    # association to the root crosses every level.
    names = [f"a{k}" for k in range(1, depth)] + ["group1"]
    tables = [
        f'[accounts.{name}]\nparent = "{parent}"\n'
        for parent, name in zip(["root", *names], names, strict=False)
    ]
    path = folder / "deep.toml"
    path.write_text("".join(tables) + "users = { user1 = 1, user2 = 1 }\n")
    return path


def sacct_record(path: Path, megabytes: float) -> None:
    """A --parsable2 record of about ``megabytes`` MB: jobs with their .batch and .extern
    steps, as sacct prints them."""
    rng = random.Random(3)
    header = (
        "JobIDRaw|JobID|Submit|Eligible|Start|End|Timelimit|NNodes|NCPUS|ReqCPUS|User|Group|"
        "Account|Partition|QOS|State|JobName\n"
    )
    with open(path, "w") as f:
        f.write(header)
        size, job = len(header), 1000
        while size < megabytes * 1e6:
            submit = 1_700_000_000 + job * 30
            start = submit + rng.randint(0, 7200)
            end = start + rng.randint(60, 86400)
            nodes = rng.choice((1, 1, 2, 4, 16))

            def stamp(t: int) -> str:
                return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))

            times = f"{stamp(submit)}|{stamp(submit)}|{stamp(start)}|{stamp(end)}"
            user = f"u{rng.randint(1, 300)}"
            line = (
                f"{job}|{job}|{times}|1-00:00:00|{nodes}|{nodes * 32}|{nodes * 32}|{user}|g1|"
                f"acct{rng.randint(1, 20)}|batch|normal|COMPLETED|run.sh\n"
            )
            cpus = f"{nodes}|{nodes * 32}|{nodes * 32}"
            steps = "".join(
                f"{job}.{s}|{job}.{s}|{times}||{cpus}||||||COMPLETED|{s}\n"
                for s in ("batch", "extern")
            )
            f.write(line + steps)
            size += len(line) + len(steps)
            job += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=18)
    parser.add_argument("--chain", type=int, default=1500)
    parser.add_argument("--line-mb", type=float, default=1.0)
    parser.add_argument("--depth", type=int, default=15000)
    parser.add_argument("--sacct-mb", type=float, default=200.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--smoke", action="store_true", help="small inputs (CI)")
    args = parser.parse_args()
    if args.smoke:
        args.levels, args.chain, args.line_mb = 6, 50, 0.05
        args.depth, args.sacct_mb = 200, 1.0
    cli = [sys.executable, "-m", "hpcsched"]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trace = folder / "t.swf"
        trace.write_text(TRACE)
        site = folder / "site.conf"
        site.write_text(SITE)

        def inspect(conf: Path) -> list[str]:
            return [*cli, "inspect", str(trace), "--platform", str(conf)]

        base = timed(inspect(site), args.timeout)
        assert base[2] == "exit 0", base
        print(f"\nreference: inspect with a 2-line slurm.conf, {base[0]:.2f} s, {base[1]:.0f} MiB")
        fifo = folder / "fifo.conf"
        os.mkfifo(fifo)
        (folder / "zero.conf").symlink_to("/dev/zero")
        include_fifo = folder / "include-fifo.conf"
        include_fifo.write_text(SITE + "Include fifo.conf\n")
        include_zero = folder / "include-zero.conf"
        include_zero.write_text(SITE + "Include zero.conf\n")
        cases = [
            ("a FIFO as the slurm.conf", fifo),
            ("Include of a FIFO", include_fifo),
            ("Include of /dev/zero (a symlink)", include_zero),
            (f"{args.levels} levels of doubling Includes", doubling_includes(folder, args.levels)),
            (f"a chain of {args.chain} Includes", chained_includes(folder, args.chain)),
            (f"a {args.line_mb:g} MB logical line", long_line(folder, args.line_mb)),
            ("200 lines NodeName=a{k}n[1-99999]", wide_hostlists(folder, 200)),
            ("PartitionName of 40 wide parts (607 B)", wide_partition(folder)),
        ]
        print("\n| slurm.conf | bytes | outcome | wall s | peak MiB | vs reference |")
        print("|---|---:|---|---:|---:|---:|")
        for name, conf in cases:
            size = 0 if conf == fifo else conf.stat().st_size
            seconds, peak, outcome = timed(inspect(conf), args.timeout)
            extra = f"{seconds - base[0]:+.2f} s, {peak - base[1]:+.0f} MiB"
            print(f"| {name} | {size:,} | {outcome} | {seconds:.2f} | {peak:.0f} | {extra} |")

        accounts = deep_accounts(folder, args.depth)
        fair = folder / "fair.conf"
        fair.write_text(SITE + FAIR)
        run = [*cli, "simulate", str(trace), "--policy", "slurm", "--slurm-conf", str(fair)]
        flat = folder / "flat.toml"
        flat.write_text('[accounts.group1]\nparent = "root"\nusers = { user1 = 1, user2 = 1 }\n')
        print("\n| --policy slurm with fair-share | outcome | wall s | peak MiB |")
        print("|---|---|---:|---:|")
        for name, tree in (("one account", flat), (f"a chain of {args.depth} accounts", accounts)):
            out = folder / f"run-{tree.stem}"
            command = [*run, "--slurm-accounts", str(tree), "--out", str(out)]
            seconds, peak, outcome = timed(command, args.timeout)
            print(f"| {name} | {outcome} | {seconds:.2f} | {peak:.0f} |")

        record = folder / "record.sacct"
        sacct_record(record, args.sacct_mb)
        size = record.stat().st_size
        seconds, peak, outcome = timed(
            [*cli, "inspect", str(record), "--nodes", "20000"], max(args.timeout, 300.0)
        )
        print(
            "\n| sacct --parsable2 | MB | outcome | wall s | peak MiB | peak / file "
            "| (peak - reference) / file |"
        )
        print("|---|---:|---|---:|---:|---:|---:|")
        ratio = peak * (1 << 20) / size
        growth = (peak - base[1]) * (1 << 20) / size
        print(
            f"| {record.name} | {size / 1e6:.1f} | {outcome} | {seconds:.2f} | {peak:.0f} "
            f"| {ratio:.2f}x | {growth:.2f}x |"
        )


if __name__ == "__main__":
    main()
