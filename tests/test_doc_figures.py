"""Every time and count quoted in the README and docs/ comes from one place (issue 27, point 5).

Each figure the pages quote (a duration such as ``7.6 s`` or ``70 min``, a number of runs or
tests, a rate per second, a speed-up ``8.2x``) is found by ``CLAIM`` and must be covered by an
entry of ``FIGURES`` saying where it comes from:

- ``code``: a number the code computes (the runs ``reproduce mars`` makes), so a change of the
  grid that is not carried to the docs fails here; an approximate figure ("about 1,200 tests")
  within its ``tolerance`` (a share of the computed value);
- ``bench``: a recorded benchmark: the excerpt is in BENCHMARKS.md and holds every figure of
  the phrase as written (no rounding: the docs quote what was measured);
- ``given``: not a measurement (sample output, a default, a definition), with why.

Two pages that quote the same fact cannot then disagree (they once said "about 15 s", "about
8 s" and "about 10 s" for the same command, "115 runs" and "85 runs" for another), and an entry
that no longer matches its page fails too, so the list stays the list of what the docs say.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))]

NUMBER = r"\d[\d,]*(?:\.\d+)?"
RANGE = rf"{NUMBER}(?:\s*[-\u2013]\s*{NUMBER})?"
#: What reads as a quoted time or count.
CLAIM = re.compile(
    "|".join(
        [
            rf"\b{RANGE}\s*(?:ms|s|min|minutes|seconds)\b",
            rf"\b{NUMBER}\s+runs\b",
            rf"\b{NUMBER}\s+tests\b",
            rf"\b{RANGE}\s+(?:iterations|rollouts|times|steps|decisions|jobs)\s+per\s+second\b",
            rf"\b{NUMBER}x\b",
        ]
    )
)


def flat(text: str) -> str:
    """Whitespace collapsed: a figure may be wrapped across lines."""
    return re.sub(r"\s+", " ", text)


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` as written (``3,100``, ``0.21``)."""
    return re.findall(NUMBER, text)


@dataclass(frozen=True)
class Source:
    kind: str  # code, bench or given
    detail: str
    value: Callable[[], float] | None = None
    tolerance: float = 0.0  # the share of value a figure may be off by ("about 1,200")


def code(what: str, value: Callable[[], float], tolerance: float = 0.0) -> Source:
    return Source("code", what, value, tolerance)


def bench(excerpt: str) -> Source:
    return Source("bench", excerpt)


def given(why: str) -> Source:
    return Source("given", why)


def _snf_icon_runs(seeds: int | None = None) -> int:
    from hpcsched.reproduce import snf_icon_run_count

    return snf_icon_run_count(seeds)


def _mars_runs(seeds: int) -> int:
    from hpcsched.reproduce import mars_run_count

    return mars_run_count(seeds)


def _captured_runs() -> int:
    return len(json.loads((REPO / "benchmarks" / "capture-hashes.json").read_text())["full"])


def _collected_tests() -> float:
    """How many tests ``pytest --collect-only`` finds (collecting runs none: a few seconds)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    found = re.search(r"(\d+) tests? collected", done.stdout)
    assert found, done.stdout[-2000:] + done.stderr[-2000:]
    return float(found[1])


def _progress_seconds() -> float:
    from hpcsched.run.replay import PROGRESS_SECONDS

    return PROGRESS_SECONDS


SNF_ICON_RUNS = code("snf_icon_run_count()", _snf_icon_runs)
SNF_ICON_SEEDS = code("snf_icon_run_count(10)", lambda: _snf_icon_runs(10))
MARS_RUNS = code("mars_run_count(3)", lambda: _mars_runs(3))
SNF_ICON_TIME = bench(
    "| `reproduce snf-icon`, process pool (2 processes) | 7.6 s | 42 runs, results table"
)
MARS_TIME = bench("the 135 runs of `reproduce mars --seeds 3` take about 70 min")
ADVISE_SAMPLE = given("sample output of a dry run of `advise` (README)")
SLURM_ORDER_SAMPLE = given(
    "sample output of `advise --slurm-order` (README), asserted by tests/advise/test_slurm_order.py"
)

#: (page, phrase as written, where its figures come from). A phrase covers the figures in it.
FIGURES: list[tuple[str, str, Source]] = [
    # README: set-up
    (
        "README.md",
        "it took 3 min 43 s",
        bench("`./scripts/example.sh` with the build of the Rust engine took 3 min 43 s"),
    ),
    (
        "README.md",
        "about 1,600 tests of the package",
        code("the tests pytest --collect-only finds", _collected_tests, tolerance=0.1),
    ),
    (
        "README.md",
        "a clean `.ci/run` of everything took about 23 min",
        bench("a fresh clone (Rust build, live Slurm clusters, example) took about 23 min"),
    ),
    ("README.md", "`--idle-timeout` (7200 s)", given("a default (PowerSpec.idle_timeout)")),
    # docs/semantics.md: Slurm's scheduler (Slurm 22.05's own defaults and constants)
    ("docs/semantics.md", "`sched_interval` 60 s", given("Slurm's default (slurm.conf(5))")),
    ("docs/semantics.md", "`bf_interval` 30 s", given("Slurm's default (slurm.conf(5))")),
    ("docs/semantics.md", "`bf_resolution` 60 s", given("Slurm's default (slurm.conf(5))")),
    ("docs/semantics.md", "`batch_sched_delay`, 3 s", given("Slurm's default (slurm.conf(5))")),
    ("docs/semantics.md", "`KillWait` 30 s", given("Slurm's default (slurm.conf(5))")),
    (
        "docs/semantics.md",
        "up to 30 s after the first end rounded up to 30 s",
        given("Slurm's constant (cons_common job_test.c, _will_run_test)"),
    ),
    (
        "docs/semantics.md",
        "the jobs they started some 30 ms after the next cycles",
        given("read in slurmctld.log of the live cons_tres runs (benchmarks/slurm_tres_replay.py)"),
    ),
    (
        "docs/semantics.md",
        "the 2 s wall-clock cap of a will-run test",
        given("Slurm's constant (cons_common job_test.c, _will_run_test)"),
    ),
    # README: reproducing the papers
    ("README.md", "six cases and the ablations, 42 runs", SNF_ICON_RUNS),
    ("README.md", "42 runs: 7.6 s", SNF_ICON_TIME),
    ("README.md", "drawn latencies, 420 runs", SNF_ICON_SEEDS),
    ("README.md", "4 traces, 135 runs", MARS_RUNS),
    ("README.md", "135 runs: about 70 min", MARS_TIME),
    ("README.md", "then every 5 minutes", given("an example's --interval 300")),
    ("README.md", "MARS-CW decided in 0.00 s", ADVISE_SAMPLE),
    ("README.md", "│ 2 min │", ADVISE_SAMPLE),
    ("README.md", "│ 3 min │", ADVISE_SAMPLE),
    ("README.md", "│ 4 min │", ADVISE_SAMPLE),
    ("README.md", "│ 5 min │", ADVISE_SAMPLE),
    ("README.md", "│ in 1 min", ADVISE_SAMPLE),
    ("README.md", "│ in 3 min", ADVISE_SAMPLE),
    ("README.md", "│ in 6 min", ADVISE_SAMPLE),
    ("README.md", "│ in 10 min", ADVISE_SAMPLE),
    ("README.md", "mean planned wait 96 min (Slurm's order: 20.9 h)", SLURM_ORDER_SAMPLE),
    ("README.md", "│ in 30 min  │ in 26.5 h", SLURM_ORDER_SAMPLE),
    ("README.md", "│ in 3.5 h   │ in 30 min", SLURM_ORDER_SAMPLE),
    (
        "README.md",
        "hashes of every output of 222 runs",
        code("the runs in benchmarks/capture-hashes.json", _captured_runs),
    ),
    # README: performance
    (
        "README.md",
        "and writing the run directory, in 0.21 s",
        bench("- HPC2N under FCFS+EASY end to end in at most 2 s: **0.21 s**."),
    ),
    (
        "README.md",
        "takes 1.4-2 s on the same kind of machine, about 1 s of it",
        bench("takes 1.4-2 s on this machine, about 1 s of it the interpreter and imports"),
    ),
    (
        "README.md",
        "runs 3,100-4,700 iterations per second",
        bench("Target: at least 500 iterations/s/core: **met** (3,100-4,700)."),
    ),
    (
        "README.md",
        "the tree search meets 1,000 iterations per second",
        bench("the stochastic tree search meets 1,000 iterations per second per core"),
    ),
    (
        "README.md",
        "runs in at most 0.232 s",
        bench("every paper case in at most 0.232 s"),
    ),
    (
        "README.md",
        "under SNF-ICON in 12.6 s",
        bench("full SDSC-BLUE under SNF-ICON 12.6 s end to end"),
    ),
    ("README.md", "`hpcsched reproduce snf-icon` (42 runs", SNF_ICON_RUNS),
    ("README.md", "and the report) takes 7.6 s", SNF_ICON_TIME),
    (
        "README.md",
        "reads in 0.11 s, decides in 0.09 s and writes 500 priorities in 1.07 s",
        bench(
            "| live 4-node cluster, 8 writes at a time | 500 | MARS-CW (200 it. x 2 trees) | "
            "0.11 s | 0.09 s | 1.07 s (500 priorities) |"
        ),
    ),
    (
        "README.md",
        "steps 68,986 times per second",
        bench("one process, random actions | 68,986 steps/s"),
    ),
    # docs/
    ("docs/agents.md", "50,000 steps take 29 s", bench("29 s of training")),
    (
        "docs/experiments.md",
        "`interrupted: 2 of 3 runs complete",
        given("an example of compare's message"),
    ),
    ("docs/experiments.md", "reproduce snf-icon # 42 runs", SNF_ICON_RUNS),
    ("docs/experiments.md", "42 runs: 7.6 s", SNF_ICON_TIME),
    ("docs/experiments.md", "reproduce mars # 135 runs", MARS_RUNS),
    ("docs/experiments.md", "135 runs: about 70 min", MARS_TIME),
    ("docs/experiments.md", "(3 by default; 135 runs", MARS_RUNS),
    ("docs/formats.md", "(τ = 10 s)", given("the definition of bounded slowdown")),
    ("docs/formats.md", "tau = 10 s", given("the definition of bounded slowdown")),
    (
        "docs/policies.md",
        "runs in 0.43 s against 0.02 s built in, and the example above in 0.76 s",
        bench(
            "(28,476 jobs, 49,046 invocations) under FCFS+EASY built in | 0.02 s | | the same "
            "as a Python policy returning `Decision(order=view.queue)` | 0.43 s (25x) | | the "
            "same as the Python example that decides every start "
            "(`examples/policies/fcfs_easy.py`) | 0.76 s"
        ),
    ),
    ("docs/semantics.md", "A job that requested 0 s", given("an input case")),
    ("docs/semantics.md", "planned with a 0 s", given("an input case")),
    ("docs/semantics.md", "would make a 100 s", given("an input case")),
    (
        "docs/semantics.md",
        "report about every 0.1 s",
        code("hpcsched.run.replay.PROGRESS_SECONDS", _progress_seconds),
    ),
    ("docs/semantics.md", "is floored at 1 s", given("a definition (F1-F4's floors)")),
    ("docs/semantics.md", "(a request of 0 s", given("an input case")),
    ("docs/semantics.md", "max(executed, 10 s)", given("the definition of bounded slowdown")),
    (
        "docs/semantics.md",
        "sliced (about 0.1 s",
        code("hpcsched.run.replay.PROGRESS_SECONDS", _progress_seconds),
    ),
    (
        "docs/semantics.md",
        "in slices of about 0.1 s",
        code("hpcsched.run.replay.PROGRESS_SECONDS", _progress_seconds),
    ),
    ("docs/semantics.md", "first submission (216 s", given("a worked example's offset")),
    ("docs/semantics.md", "by 0.02% (216 s", given("a worked example's offset")),
    ("docs/semantics.md", "1/λ0 = 3600 s", given("SNF-ICON's initial value (its paper)")),
    ("docs/semantics.md", "under 1 s is drawn at 1 s", given("a definition (latency floor)")),
    ("docs/semantics.md", "every 50 ms", given("the engine's signal poll, in Rust")),
    (
        "docs/semantics.md",
        "`KeyboardInterrupt` follows, within 2 s",
        given("asserted by tests/cli/test_interrupts.py (seconds < 2.0)"),
    ),
    ("docs/semantics.md", "would wait ~10 s", given("Slurm's own timeout")),
    ("docs/semantics.md", "(`2 of 3 runs reused", given("an example of compare's message")),
    (
        "docs/semantics.md",
        "seconds below 2 minutes",
        given("hpcsched.units.duration_text's rule, tested with it"),
    ),
    ("docs/semantics.md", "`90 min`", given("an example of duration_text's output")),
]


def test_every_quoted_time_and_count_has_a_source():
    uncovered, stale = [], []
    for page in PAGES:
        text = flat((REPO / page).read_text())
        spans = []
        for where, phrase, _ in FIGURES:
            if where != page:
                continue
            found = [m.span() for m in re.finditer(re.escape(flat(phrase)), text)]
            if not found:
                stale.append(f"{page}: {phrase!r}")
            spans += found
        for claim in CLAIM.finditer(text):
            if not any(a <= claim.start() and claim.end() <= b for a, b in spans):
                context = text[max(claim.start() - 50, 0) : claim.end()]
                uncovered.append(f"{page}: {claim[0]!r} in ...{context!r}")
    assert not uncovered, "figures without a source in FIGURES:\n" + "\n".join(uncovered)
    assert not stale, "FIGURES entries no longer on their page:\n" + "\n".join(stale)


@pytest.mark.parametrize(
    ("page", "phrase", "source"),
    [f for f in FIGURES if f[2].kind != "given"],
    ids=[f"{f[0]}: {f[1]}" for f in FIGURES if f[2].kind != "given"],
)
def test_each_figure_matches_its_source(page, phrase, source):
    quoted = [n for claim in CLAIM.finditer(flat(phrase)) for n in numbers(claim[0])]
    assert quoted, f"{phrase!r} quotes no figure"
    if source.kind == "code":
        assert source.value is not None
        actual = source.value()
        figures = [float(n.replace(",", "")) for n in quoted]
        assert len(figures) == 1, f"{phrase!r} quotes {len(figures)} figures, not one"
        within = f" (a figure within {source.tolerance:.0%} of it passes)"
        assert abs(figures[0] - actual) <= source.tolerance * actual, (
            f"{page} says {phrase!r}; {source.detail} is {actual:g}"
            + (within if source.tolerance else "")
        )
    else:
        benchmarks = flat((REPO / "BENCHMARKS.md").read_text())
        assert flat(source.detail) in benchmarks, f"not in BENCHMARKS.md: {source.detail!r}"
        recorded = numbers(source.detail)
        missing = [n for n in quoted if n not in recorded]
        assert not missing, f"{page} says {phrase!r}; BENCHMARKS.md: {source.detail!r}"


@pytest.mark.slow  # reads the five MARS traces to find their middles
def test_the_run_counts_are_the_runs_the_commands_make(traces_dir, tmp_path):
    # the counts quoted above, against the runs the reproductions really build
    from hpcsched.reproduce import (
        mars_run_count,
        mars_runs,
        snf_icon_run_count,
        snf_icon_runs,
    )

    assert len(snf_icon_runs(traces_dir)) == snf_icon_run_count()
    assert len(snf_icon_runs(traces_dir, seeds=10)) == snf_icon_run_count(10)
    for seeds in (1, 3):
        runs = mars_runs(traces_dir, tmp_path, seeds=seeds)  # writes the calendars there
        assert len(runs) == mars_run_count(seeds)
