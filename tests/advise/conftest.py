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
import sys
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

    def submit(self, name: str, nodes: int, minutes: int, seconds: float, *extra: str) -> int:
        """A whole-node job with any options (``-p`` in ``extra`` picks the partitions)."""
        out = self.run(
            "sbatch", "--parsable", "-o", "/dev/null", "--exclusive", "-J", name,
            "-N", str(nodes), "-t", str(minutes), *extra, "--wrap", f"sleep {seconds}",
        )  # fmt: skip
        return int(out.strip().split(";")[0])

    def blocker(self) -> int:
        """A whole-machine job, running (10 minutes): every job submitted after it waits."""
        job = self.sbatch("blocker", 4, 10, 600)
        deadline = time.monotonic() + 20
        while self.jobs()[job]["job_state"] != "RUNNING":
            assert time.monotonic() < deadline, "the blocker did not start"
            time.sleep(0.2)
        return job

    def pin(self, job: int, priority: int) -> None:
        """What an administrator does: an explicit priority, which Slurm never recomputes."""
        self.run("scontrol", "update", f"JobId={job}", f"Priority={priority}")

    def reasons(self, ids: list[int]) -> dict[int, str]:
        jobs = self.jobs()
        return {i: jobs[i]["state_reason"] for i in ids}

    def pinned(self, ids: list[int]) -> dict[int, bool]:
        """Whether each pending job's priority was set by hand: sprio lists such a job with
        every priority factor 0 (a computed priority is the sum of its factors)."""
        deadline = time.monotonic() + 20
        while True:  # a job just released is listed again after the next scheduling pass
            rows: dict[int, bool] = {}
            for line in self.run("sprio", "-h", "-o", "%i|%Y|%A|%F|%J|%P|%Q").splitlines():
                job, priority, *factors = line.strip().split("|")
                rows[int(job)] = int(priority) > 0 and all(int(f) == 0 for f in factors)
            if set(ids) <= rows.keys():
                return {i: rows[i] for i in ids}
            assert time.monotonic() < deadline, f"sprio does not list {set(ids) - rows.keys()}"
            time.sleep(0.2)

    def wait_for_priorities(self, ids: list[int]) -> None:
        """Until a scheduling pass has given every job its own priority."""
        deadline = time.monotonic() + 20
        while any(p == 0 for p in self.priorities(ids).values()):
            assert time.monotonic() < deadline, "the jobs got no priority"
            time.sleep(0.2)

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


#: Fake Slurm commands: each passes through to the real one, except what ``control.json``
#: (next to it) asks for. Every call is recorded in ``calls.log``.
FAKE = r"""#!{python}
import fcntl, json, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
name, args = os.path.basename(sys.argv[0]), sys.argv[1:]
update = name == "scontrol" and args[:1] == ["update"]
job = next((a.split("=", 1)[1] for a in args if a.startswith("JobId=")), None)
with open(os.path.join(here, "control.json"), "r+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    c = json.load(f)
    with open(os.path.join(here, "calls.log"), "a") as log:
        log.write(json.dumps([name, *args]) + "\n")
    # the controller is lost at the update after `lose_after` answered ones, or at an update
    # of job `lose_at`; it stays lost for `lost_calls` calls (every call: None)
    if update and not c["down"]:
        if c.get("lose_after") is not None:
            c["down"] = c["updates"] >= c["lose_after"]
        if c.get("lose_at") is not None:
            c["down"] = job == str(c["lose_at"])
        if c["down"]:
            c["lose_after"] = c["lose_at"] = None
        else:
            c["updates"] += 1
    down = c["down"]
    if down and c.get("lost_calls") is not None:
        c["lost_calls"] -= 1
        c["down"] = c["lost_calls"] > 0
    f.seek(0)
    f.truncate()
    json.dump(c, f)
if down:
    if name == "scontrol" and args[:1] == ["ping"]:
        print("Slurmctld(primary) at vm is DOWN")
    else:
        print(f"{{name}}: error: Unable to contact slurm controller (connect failure)",
              file=sys.stderr)
    sys.exit(1)
real = c["real"][name]
refusal = c.get("refuse_update")
if update and refusal and (refusal.get("job") in (None, job)):
    print(refusal["message"], file=sys.stderr)
    sys.exit(1)
if update and c.get("update_lifts_hold"):
    # as the issue reports for Slurm: writing a priority lifts a hold
    reason = subprocess.run([c["real"]["squeue"], "-h", "-j", job, "-o", "%r"],
                            capture_output=True, text=True).stdout
    if "JobHeld" in reason:
        subprocess.run([real, "release", job], capture_output=True)
if name == "squeue" and "--json" in args and "job_state" in c:
    done = subprocess.run([real, *args], capture_output=True, text=True)
    document = json.loads(done.stdout)
    for record in document["jobs"]:
        state = record["job_state"]
        record["job_state"] = [state] if c["job_state"] == "list" else c["job_state"]
    print(json.dumps(document))
    sys.exit(done.returncode)
os.execv(real, [real, *args])
"""


class FakeSlurm:
    """Slurm's client commands on PATH, faked as ``control`` says (see FAKE)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.control_path = folder / "control.json"

    def set(self, **control: object) -> None:
        data = json.loads(self.control_path.read_text())
        data.update(control)
        self.control_path.write_text(json.dumps(data))

    def restore(self) -> None:
        """The controller answers again; nothing faked any more."""
        data = json.loads(self.control_path.read_text())
        self.control_path.write_text(
            json.dumps({"real": data["real"], "down": False, "updates": 0})
        )

    def calls(self) -> list[list[str]]:
        log = self.folder / "calls.log"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    def updates(self) -> list[str]:
        """The job ids of every `scontrol update ... Priority=` call."""
        return [
            next(a.split("=", 1)[1] for a in call if a.startswith("JobId="))
            for call in self.calls()
            if call[:2] == ["scontrol", "update"]
        ]


@pytest.fixture
def fake_slurm(
    slurm: Slurm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeSlurm]:
    """Fake Slurm commands in front of the real ones (first on PATH)."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    real = {}
    for name in ("scontrol", "squeue", "sinfo", "sprio", "sbatch", "scancel"):
        found = shutil.which(name)
        assert found, f"{name} not found"
        real[name] = found
        script = folder / name
        script.write_text(
            FAKE.replace("{python}", sys.executable).replace("{{", "{").replace("}}", "}")
        )
        script.chmod(0o755)
    (folder / "control.json").write_text(json.dumps({"real": real, "down": False, "updates": 0}))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    fake = FakeSlurm(folder)
    yield fake
    fake.restore()  # the cluster's clean-up after the test goes through these commands
