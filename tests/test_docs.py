"""Every command and Python snippet of the README and docs/ runs as written.

Each page's fenced ``bash`` and ``python`` blocks run in order in a sandbox folder laid out as a
clone is: ``../shared/traces`` beside it (a symbolic link to the real one) and ``examples/``.
The README runs there as written, with nothing else but the advisor's saved snapshot (made by
commands not run here) and its sweep file as ``alpha.toml`` (which it says to save): its
examples name the traces by their paths in ../shared/traces (issue 27). The other pages also
get the files they name by bare names: the real traces (symbolic links), small stand-ins for
the names that stand for "your trace" (``trace.swf``: the first 500 jobs of KTH-SP2;
``theta.swf.gz``: the first 300 of ALCF Theta) and a ``maintenance.txt`` calendar. Python
blocks of a page share one namespace, as a reader typing them in order would.

Not run here, with where they are checked instead: the set-up scripts (CI runs both), commands
that need a live Slurm cluster (tests/advise/test_slurm_live.py, against a real one in CI) or a
Ray cluster (tests/experiments/test_ray.py), package installs, ``reproduce mars`` (minutes of
MARS searches; ``benchmarks/mars_quality.py --smoke`` runs its code), and the PPO example
(stable-baselines3 is optional). docs/experiments.md's larger sweep file is expanded and
validated, run by run, without running it.
"""

from __future__ import annotations

import gzip
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from hpcsched.cli import main

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces"
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))]

# skipped without the traces, failed in CI (tests/conftest.py, require_traces)
pytestmark = [pytest.mark.usefixtures("traces_dir"), pytest.mark.slow]

#: Lines not run, by what they start with (see the module docstring for where they are checked).
NOT_HERE = (
    "python3 -m venv ",
    "./scripts/",
    "pip ",
    "squeue ",
    "TZ=UTC scontrol",
    "hpcsched advise --slurm",
    "hpcsched reproduce mars",
    "python examples/agents/train_ppo.py",
)
NEEDS_A_CLUSTER = "--ray"


def blocks(page: str) -> list[tuple[str, str]]:
    """(language, text) of each fenced block of a page, in order."""
    text = (REPO / page).read_text()
    return [(m[1], m[2]) for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S)]


def commands(text: str) -> list[str]:
    """The command lines of a bash block: comments dropped, continuations joined."""
    joined = text.replace("\\\n", " ")
    lines = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            lines.append(" ".join(shlex.quote(w) for w in words))
    return lines


def swf_head(source: Path, target: Path, jobs: int) -> None:
    """The header and the first ``jobs`` job lines of an SWF trace."""
    kept, lines = 0, []
    with gzip.open(source, "rt") as f:
        for line in f:
            if not line.startswith(";"):
                kept += 1
                if kept > jobs:
                    break
            lines.append(line)
    opener = gzip.open if target.suffix == ".gz" else open
    with opener(target, "wt") as out:
        out.writelines(lines)


@pytest.fixture
def sandbox(tmp_path_factory, request):
    """A fresh folder per page, laid out as a clone: pages are read independently."""
    root = tmp_path_factory.mktemp("docs")
    work = root / "work"
    work.mkdir()
    (root / "shared").mkdir()
    (root / "shared" / "traces").symlink_to(TRACES)  # reproduce's default data folder
    (work / "examples").symlink_to(REPO / "examples")
    # the advisor's saved snapshot (README step 1), from the test fixtures
    fixtures = REPO / "tests" / "advise" / "fixtures"
    shutil.copy(fixtures / "squeue-partitions.json", work / "squeue.json")
    shutil.copy(fixtures / "sinfo-partitions.json", work / "sinfo.json")
    shutil.copy(fixtures / "scontrol-reservation.txt", work / "reservations.txt")
    shutil.copy(fixtures / "scontrol-partition.txt", work / "partitions.txt")
    readme_sweep = next(text for lang, text in blocks("README.md") if lang == "toml")
    (work / "alpha.toml").write_text(readme_sweep)
    if request.node.callspec.params.get("page") != "README.md":
        _bare_names(work)
    cwd = os.getcwd()
    os.chdir(work)
    yield work
    os.chdir(cwd)


def _bare_names(work: Path) -> None:
    """The files the docs pages (not the README) name by bare names."""
    for name in (
        "HPC2N-2002-2.2-cln",
        "SDSC-BLUE-2000-4.2-cln",
        "KTH-SP2-1996-2.1-cln",
        "CEA-Curie-2011-2.1-cln",
    ):
        (work / f"{name}.swf.gz").symlink_to(TRACES / "pwa" / f"{name}.swf.gz")
    (work / "lublin_256.swf.gz").symlink_to(TRACES / "pwa" / "lublin_256.swf.gz")
    for name in ("DAS2-fs1-0-3000", "DAS2-fs2-0-3000"):
        (work / f"{name}.json.gz").symlink_to(TRACES / "snf-icon-paper" / f"{name}.json.gz")
    swf_head(TRACES / "pwa" / "KTH-SP2-1996-2.1-cln.swf.gz", work / "trace.swf", 500)
    swf_head(TRACES / "pwa" / "ALCF-Theta-2022.swf.gz", work / "theta.swf.gz", 300)
    (work / "maintenance.txt").write_text("# start end kind nodes note\n86400 93600 S - monthly\n")
    # docs/policies.md: "python:mypolicies.py:FcfsEasy", "mine.py:MyPolicy", "mypackage"
    shutil.copy(REPO / "examples" / "policies" / "fcfs_easy.py", work / "mypolicies.py")
    mine = "from hpcsched.protocol import Decision\n\n\nclass MyPolicy:\n    name = 'mine'\n\n"
    mine += "    def decide(self, view):\n        return Decision(order=view.queue)\n"
    (work / "mine.py").write_text(mine)
    (work / "mypackage").mkdir()
    (work / "mypackage" / "__init__.py").write_text("")
    (work / "mypackage" / "policies.py").write_text(mine)
    (work / "markovian.json.gz").write_bytes(b"")  # made by the generator below
    assert main(["generate", "markovian", str(work / "markovian.json.gz")]) == 0


@pytest.mark.parametrize("page", PAGES)
def test_every_snippet_of_the_page_runs(page, sandbox, capsys):
    namespace: dict[str, object] = {"__name__": "__main__"}
    ran = 0
    for language, text in blocks(page):
        if language == "python":
            exec(compile(text, f"{page} (python block)", "exec"), namespace)
            ran += 1
        elif language == "bash":
            for line in commands(text):
                if line.startswith(NOT_HERE) or NEEDS_A_CLUSTER in line:
                    continue
                assert line.startswith("hpcsched "), f"{page}: what runs {line!r}?"
                code = main(shlex.split(line)[1:])
                out, err = capsys.readouterr()
                assert code == 0, f"{page}: {line}\n{out[-2000:]}\n{err[-2000:]}"
                ran += 1
    if page in ("README.md", "docs/experiments.md", "docs/policies.md"):
        assert ran, f"{page}: nothing ran"


def test_the_sweep_file_of_the_experiments_page_is_valid(tmp_path):
    from hpcsched.sweep import read_sweep

    text = next(text for lang, text in blocks("docs/experiments.md") if lang == "toml")
    (tmp_path / "traces").mkdir()
    for name in ("DAS2-fs2-0-3000.json.gz",):
        (tmp_path / "traces" / name).symlink_to(TRACES / "snf-icon-paper" / name)
    (tmp_path / "traces" / "ALCF-Theta-2022.swf.gz").symlink_to(
        TRACES / "pwa" / "ALCF-Theta-2022.swf.gz"
    )
    (tmp_path / "sweeps").mkdir()
    path = tmp_path / "sweeps" / "alpha.toml"
    path.write_text(text)
    sweep = read_sweep(path)  # every run is checked, every input file read and hashed
    # DAS2, two Theta slices, three Markovian seeds; two platforms; 6 + 6 + 4 policy runs
    assert len(sweep.runs) == 6 * 2 * 16
