"""A real Slurm cluster for the live tests.

`.ci/run` brings one up (4 nodes, scripts/slurm-cluster.sh) and passes it with
``HPCSCHED_SLURM=1`` and ``SLURM_CONF``. Run by hand, the tests start their own when Slurm is
installed (``scripts/slurm-cluster.sh install``) and skip, saying so, when it is not; in CI
(``CI`` set) a missing cluster is a failure, so the suite never quietly skips them there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "slurm-cluster.sh"


class Slurm:
    """The test cluster: submit, inspect and clean up jobs."""

    def __init__(self, conf: str) -> None:
        self.conf = conf

    def run(self, *args: str) -> str:
        done = subprocess.run(
            list(args), capture_output=True, text=True, check=True, timeout=60,
            env={**os.environ, "SLURM_CONF": self.conf},
        )  # fmt: skip
        return done.stdout

    def sbatch(self, name: str, nodes: int, minutes: int, seconds: float, *extra: str) -> int:
        """A whole-node job (``--exclusive``: the engine allocates whole nodes)."""
        out = self.run(
            "sbatch", "--parsable", "-o", "/dev/null", "--exclusive", "-p", "debug",
            "-J", name, "-N", str(nodes), "-t", str(minutes), *extra,
            "--wrap", f"sleep {seconds}",
        )  # fmt: skip
        return int(out.strip().split(";")[0])

    @property
    def base(self) -> Path:
        """The cluster's folder (SLURM_CONF is BASE/etc/slurm.conf)."""
        return Path(self.conf).parents[1]

    def restart(self) -> None:
        """The whole cluster again (after a test stopped a daemon)."""
        done = subprocess.run(
            ["bash", str(SCRIPT), "start", str(self.base)],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"the test cluster did not come back:\n{done.stderr}")

    def jobs(self) -> dict[int, dict]:
        return {j["job_id"]: j for j in json.loads(self.run("squeue", "--json"))["jobs"]}

    def priorities(self, ids: list[int]) -> dict[int, int]:
        jobs = self.jobs()
        return {i: jobs[i]["priority"] for i in ids}

    def clean(self) -> None:
        """No job pending or running (finished ones stay listed until MinJobAge)."""
        self.run("scancel", "--user", "root")
        deadline = time.monotonic() + 30
        while any(
            j["job_state"] in ("PENDING", "RUNNING", "COMPLETING") for j in self.jobs().values()
        ):
            if time.monotonic() > deadline:
                raise TimeoutError("jobs still active 30 s after scancel")
            time.sleep(0.3)

    def wait_done(self, ids: list[int], timeout: float = 90) -> dict[int, dict]:
        deadline = time.monotonic() + timeout
        while True:
            jobs = self.jobs()
            if all(jobs[i]["job_state"] not in ("PENDING", "RUNNING", "COMPLETING") for i in ids):
                return jobs
            if time.monotonic() > deadline:
                raise TimeoutError(f"jobs {ids} not finished after {timeout} s")
            time.sleep(0.5)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[Slurm]:
    if os.environ.get("HPCSCHED_SLURM") == "1" and os.environ.get("SLURM_CONF"):
        yield Slurm(os.environ["SLURM_CONF"])
        return
    if shutil.which("slurmctld") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must bring up the Slurm test cluster (.ci/run does)")
        pytest.skip("Slurm is not installed: scripts/slurm-cluster.sh install (or run .ci/run)")
    base = tempfile.mkdtemp(prefix="hpcsched-slurm-")
    done = subprocess.run(
        ["bash", str(SCRIPT), "start", base], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        pytest.fail(f"the Slurm test cluster did not come up:\n{done.stdout}\n{done.stderr}")
    try:
        yield Slurm(f"{base}/etc/slurm.conf")
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", base], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def slurm(slurm_cluster: Slurm, monkeypatch: pytest.MonkeyPatch) -> Iterator[Slurm]:
    """The cluster with no active job, and SLURM_CONF pointing at it."""
    monkeypatch.setenv("SLURM_CONF", slurm_cluster.conf)
    slurm_cluster.clean()
    yield slurm_cluster
    slurm_cluster.clean()
