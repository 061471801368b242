"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The real traces, next to the repository.
TRACES = (REPO_ROOT / ".." / "shared" / "traces").resolve()


def require_traces(path: Path = TRACES) -> Path:
    """``path`` (the real traces folder, or a file in it); the calling test is skipped when it
    is absent, saying so, but fails where ``HPCSCHED_REQUIRE_TRACES`` is set (``.ci/run`` sets
    it when the folder is there), so that the suite never quietly skips them there (as the
    Slurm fixture of tests/advise fails in CI)."""
    if not path.exists():
        message = f"real traces not found at {path}: tests need ../shared/traces"
        if os.environ.get("HPCSCHED_REQUIRE_TRACES"):
            pytest.fail(f"{message} (HPCSCHED_REQUIRE_TRACES is set)")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The real traces in ``../shared/traces``: see :func:`require_traces`."""
    return require_traces()


@pytest.fixture(scope="session")
def markovian_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``generated-markovian-3000.json.gz`` of the SNF-ICON paper, generated as a user does
    (``hpcsched generate markovian``, whose defaults reproduce the paper's file bit for bit:
    tests/workload/test_generate.py), so tests of it need no ../shared/traces."""
    from hpcsched.cli import main

    path = tmp_path_factory.mktemp("markovian") / "generated-markovian-3000.json.gz"
    assert main(["generate", "markovian", str(path)]) == 0
    return path


def workload_from(specs, nodes: int):
    """A Workload from (submit, run time, requested time, nodes) tuples; ids 1, 2, ..."""
    import numpy as np
    import pandas as pd

    from hpcsched.workload.model import Workload

    submit, run, req, size = (np.array(col, dtype=float) for col in zip(*specs, strict=True))
    jobs = pd.DataFrame(
        {
            "job_id": np.arange(1, len(specs) + 1, dtype=np.int64),
            "submit": submit,
            "run_time": run,
            "requested_time": req,
            "nodes": size.astype(np.int64),
            "user": np.zeros(len(specs), dtype=np.int64),
        }
    )
    return Workload(jobs=jobs, nodes=nodes, source="<test>")


def workload_with_record(unit: float = 1.0):
    """Four jobs on four nodes whose trace records three waits, times in ``unit`` seconds.

    The record starts them at 0, 15, - (job 3's wait is unknown), 120; job 2 ran 50 for a
    request of 40 (an overrun). FCFS +EASY starts them at 0, 10, 60, 260 (job 4 needs the
    whole machine, free once job 3 ends); SJF +EASY at 0, 10, 110, 100 (job 4, the shortest
    request, first once jobs 1 and 2 end; job 3 cannot backfill before it)."""
    import numpy as np
    import pandas as pd

    from hpcsched.workload.model import Workload

    jobs = pd.DataFrame(
        {
            "job_id": [1, 2, 3, 4],
            "submit": np.array([0.0, 10.0, 20.0, 30.0]) * unit,
            "run_time": np.array([100.0, 50.0, 200.0, 10.0]) * unit,
            "requested_time": np.array([100.0, 40.0, 300.0, 10.0]) * unit,
            "nodes": [2, 2, 1, 4],
            "user": [1, 1, 2, 2],
            "recorded_wait": np.array([0.0, 5.0, np.nan, 90.0]) * unit,
        }
    )
    return Workload(jobs=jobs, nodes=4, source="<record>")


PWA_TRACES = [
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "DAS2-fs1-2003-1.swf.gz",
    "ALCF-Theta-2022.swf.gz",
    "CEA-Curie-2011-2.1-cln.swf.gz",
    "lublin_256.swf.gz",
]


def small_platform(nodes: int, switch_on: float = 50.0, switch_off: float = 40.0):
    """A platform of `nodes` nodes with round powers (W): computing 100, idle 10, sleeping 1,
    switching on 20, switching off 30; latencies `switch_on` and `switch_off` (std 10 %)."""
    from hpcsched.site.platform import parse_platform

    return parse_platform(
        f"""
nodes = {nodes}
[power]
computing = 100.0
idle = 10.0
sleeping = 1.0
switching_on = 20.0
switching_off = 30.0
[transitions]
switch_on = {switch_on}
switch_on_std = {switch_on / 10}
switch_off = {switch_off}
switch_off_std = {switch_off / 10}
""",
        f"small-{nodes}.toml",
    )


def run_cli(args, capsys):
    """``hpcsched ARGS`` in-process: (exit code, stdout, stderr)."""
    from hpcsched.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the live Slurm test cluster are marked ``live``: they start one cluster per
    session on fixed ports, so two sessions at once (mutation testing's) cannot both have it."""
    for item in items:
        if "slurm_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.live)


def write_site_trace(
    folder: Path,
    platform: str,
    jobs: list[tuple[int, int, int, int]],
    partitions: tuple[str, ...],
    header: tuple[int, int],
) -> tuple[Path, Path]:
    """A platform file (``platform``'s text) and an SWF trace of ``jobs`` (submit, run =
    requested time, processors, partition number: 1 names ``partitions[0]``) in ``folder``,
    the header giving (MaxNodes, MaxProcs): (trace, platform)."""
    (folder / "site.toml").write_text(platform)
    lines = [f"; MaxNodes: {header[0]}", f"; MaxProcs: {header[1]}"]
    lines += [f"; Partition: {k + 1} {name}" for k, name in enumerate(partitions)]
    for i, (submit, run, procs, part) in enumerate(jobs):
        lines.append(
            f"{i + 1} {submit} -1 {run} {procs} -1 -1 {procs} {run} -1 1 1 1 1 1 {part} -1 -1"
        )
    (folder / "t.swf").write_text("\n".join(lines) + "\n")
    return folder / "t.swf", folder / "site.toml"


def powered_group(name: str, nodes: int, computing: float, idle: float, cores: int = 1) -> str:
    """A platform file's ``[[groups]]`` table of ``nodes`` nodes drawing ``computing`` and
    ``idle`` W (sleeping 1, switching on 20 and off 30 W; latencies 50 and 40 s)."""
    return f"""
[[groups]]
name = "{name}"
nodes = {nodes}
cores = {cores}
[groups.power]
computing = {computing}
idle = {idle}
sleeping = 1.0
switching_on = 20.0
switching_off = 30.0
[groups.transitions]
switch_on = 50.0
switch_on_std = 5.0
switch_off = 40.0
switch_off_std = 4.0
"""
