"""Mutation testing of the Python a change touches (the twin of scripts/mutants.sh, which does
the engine's Rust with cargo-mutants).

mutmut mutates the functions and methods of ``python/hpcsched`` whose lines changed since REF
(default: origin/main if it exists, else the merge base with main), runs the tests that reach
each mutant (``pytest -m "not slow and not live"``) and lists the mutants no test caught::

    python scripts/mutants_python.py [--ref REF] [--jobs N] [--all-functions] [FILE ...]

FILE limits it to some of the changed files (paths under python/hpcsched). Needs ``pip install
mutmut`` (3.x). mutmut wants its code under ``src/``: the work happens in a copy of the tree
beside it (``../<name>-mutants``, so that ``../shared/traces`` is found there too) with
``python/`` renamed ``src/``; its results stay there for the next run (``mutmut browse`` in that
folder). Each survivor is killed by a test with an expectation computed by hand, or explained
(an equivalent mutant) in the change's closing note.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path("python/hpcsched")
#: Tests that read the tree by its real layout (python/, the folder of the package) or start
#: processes that import it from there: they cannot run in the renamed copy.
#: (Not the live cluster's tests: each mutant's run would start a cluster on the same ports.)
SELECTION = ["tests", "-m", "not slow and not live", "-p", "no:cacheprovider"]
LAYOUT_TESTS = [
    "tests/test_architecture.py",
    "tests/test_suite_rules.py",
    "tests/cli/test_startup.py",
]
#: Other tests that cannot run under mutmut are found by running them there once (those that
#: start ``hpcsched`` in another folder: mutated code reads mutmut's configuration from the
#: working folder when it is imported) and left out.
#: What mutmut needs of its configuration (``forkserver``: the engine's threads do not survive
#: a fork of a process that has used them).
CONFIG = """
[tool.mutmut]
source_paths = ["src/hpcsched"]
only_mutate = {only}
also_copy = {also}
pytest_add_cli_args_test_selection = {selection}
process_isolation = "forkserver"
forkserver_warmup = "none"
"""


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout


def default_ref() -> str:
    probe = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "origin/main"], cwd=REPO, capture_output=True
    )
    return "origin/main" if probe.returncode == 0 else git("merge-base", "HEAD", "main").strip()


def changed_lines(ref: str) -> dict[Path, set[int]]:
    """The lines (of today's files) changed since ``ref``, by file of the package."""
    out: dict[Path, set[int]] = {}
    current: Path | None = None
    for line in git("diff", "-U0", ref, "--", str(PACKAGE)).splitlines():
        if line.startswith("+++ "):
            name = line[4:].removeprefix("b/")
            current = Path(name) if name.endswith(".py") else None
        elif line.startswith("@@") and current is not None:
            match = re.search(r"\+(\d+)(?:,(\d+))?", line)
            assert match is not None
            start, count = int(match.group(1)), int(match.group(2) or 1)
            out.setdefault(current, set()).update(range(start, start + count))
    return {path: lines for path, lines in out.items() if (REPO / path).exists()}


def functions(path: Path) -> list[tuple[str, int, int]]:
    """(mutmut's mangled name, first line, last line) of each function and method of a file
    (a nested function is part of the one around it, as mutmut mutates it)."""
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    out = []

    def span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        return first, node.end_lineno or node.lineno

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((f"x_{node.name}", *span(node)))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    out.append((f"x\u01c1{node.name}\u01c1{item.name}", *span(item)))
    return out


def module_name(path: Path) -> str:
    parts = list(path.relative_to("python").with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def prepare(work: Path, files: list[Path], left_out: list[str]) -> None:
    """The copy of the tree mutmut works in: python/ renamed src/, its configuration added."""
    work.mkdir(exist_ok=True)
    tops = []
    for entry in REPO.iterdir():
        if entry.name in (".git", "target", ".venv", "mutants") or entry.name.startswith("."):
            continue
        target = work / ("src" if entry.name == "python" else entry.name)
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        if entry.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(entry, target, ignore=ignore, symlinks=True)
        else:
            shutil.copy2(entry, target)
        if entry.name not in ("python", "tests", "pyproject.toml"):
            tops.append(target.name)
    only = [str(Path("src", *f.parts[1:])) for f in files]
    deselect = [arg for test in LAYOUT_TESTS for arg in ("--ignore", test)]
    deselect += [arg for test in left_out for arg in ("--deselect", test)]
    selection = [*SELECTION, *deselect]
    config = CONFIG.format(only=only, also=sorted(tops), selection=selection).replace("'", '"')
    pyproject = work / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + config, encoding="utf-8")
    # mutmut keeps its mutants and results between runs, but takes a file it copied unmutated
    # last time as unchanged: another choice of files starts afresh
    previous = work / ".mutated-files"
    if not previous.exists() or previous.read_text() != "\n".join(only):
        shutil.rmtree(work / "mutants", ignore_errors=True)
        previous.write_text("\n".join(only))
    # nor does it copy the engine again when it was rebuilt since (an older _core then fails
    # every test at import)
    kept = work / "mutants" / "src" / "hpcsched"
    if kept.is_dir():
        for engine in (REPO / PACKAGE).glob("_core*"):
            shutil.copy2(engine, kept / engine.name)


def failing_under_mutmut(work: Path) -> list[str]:
    """The tests that fail in mutmut's copy, its mutants switched off (as mutmut's own first
    run of the tests)."""
    mutants = work / "mutants"
    ignore = [arg for test in LAYOUT_TESTS for arg in ("--ignore", test)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *SELECTION, *ignore, "-q", "-rf"],
        cwd=mutants,
        capture_output=True,
        text=True,
        env={**os.environ, "MUTANT_UNDER_TEST": "stats", "PYTHONPATH": str(mutants / "src")},
    )
    # "FAILED tests/a.py::test_x[a b] - message": the test with all its parameters (a prefix)
    failed = [line[7:] for line in done.stdout.splitlines() if line.startswith("FAILED ")]
    return sorted({test.split(" - ")[0].split("[")[0] for test in failed})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--ref", default=None)
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once")
    parser.add_argument(
        "--all-functions",
        action="store_true",
        help="every function of the changed files, not only those whose lines changed",
    )
    args = parser.parse_args()
    if shutil.which("mutmut") is None:
        print("mutmut is not installed: pip install mutmut", file=sys.stderr)
        return 2
    ref = args.ref or default_ref()
    changed = changed_lines(ref)
    if args.files:
        wanted = {f.resolve() for f in args.files}
        changed = {p: lines for p, lines in changed.items() if (REPO / p).resolve() in wanted}
    patterns = []
    for path, lines in sorted(changed.items()):
        for name, first, last in functions(path):
            if args.all_functions or lines & set(range(first, last + 1)):
                patterns.append(f"{module_name(path)}.{name}__mutmut_*")
    if not patterns:
        print(f"no function of {PACKAGE} changed since {ref}")
        return 0
    print(f"== mutmut over {len(patterns)} functions of {len(changed)} files changed since {ref}")
    work = REPO.parent / f"{REPO.name}-mutants"
    command = ["mutmut", "run", "--max-children", str(args.jobs), *patterns]
    prepare(work, sorted(changed), [])
    run = subprocess.run(command, cwd=work)
    if run.returncode != 0 and (work / "mutants").is_dir():
        left_out = failing_under_mutmut(work)
        if left_out:
            print(f"== left out, they cannot run under mutmut: {' '.join(left_out)}")
            prepare(work, sorted(changed), left_out)
            run = subprocess.run(command, cwd=work)
    if run.returncode != 0:
        return run.returncode
    results = subprocess.run(
        ["mutmut", "results"], cwd=work, capture_output=True, text=True, check=True
    ).stdout
    survivors = [line.strip() for line in results.splitlines() if line.strip()]
    mine = [
        s for s in survivors if any(re.fullmatch(p.replace("*", ".*") + ".*", s) for p in patterns)
    ]
    print(f"== survivors ({len(mine)}; 'mutmut show NAME' in {work} shows one)")
    print("\n".join(mine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
