"""The layers of docs/architecture.md, read from the code's own `use` and `import` lines (as
import-linter does for Python): a module may import only from layers below its own.

The imports against the layers that the code still has are listed in ``KNOWN`` with the
point of issue 26 that removes them: the list may only shrink. A new upward import fails, and
so does a listed one that is gone (take it off the list)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "crates" / "core" / "src"

#: The engine crate's areas, bottom up: an area may use the areas of lower rank.
RUST_LAYERS = {
    "error": 0,
    "model": 1,
    "io": 2,
    "engine": 3,
    "estimate": 4,
    "layout": 4,
    "sched": 5,
    "power": 6,
    "search": 7,
    "advise": 8,
    "agent": 8,
    "spec": 8,
}
#: Upward uses the engine crate still has: (file under crates/core/src, area it uses). None:
#: keep it so (a new one fails the test below).
RUST_KNOWN: set[tuple[str, str]] = set()


def rust_area(path: Path, root: Path) -> str:
    return path.relative_to(root).parts[0].removesuffix(".rs")


def rust_upward_uses(root: Path = CORE) -> set[tuple[str, str]]:
    """(file, used area) for every `crate::area` a file names whose area ranks above its own
    (comments left out)."""
    found = set()
    for path in sorted(root.rglob("*.rs")):
        area = rust_area(path, root)
        if area not in RUST_LAYERS:
            continue  # lib.rs: the crate root re-exports every area
        for line in path.read_text().splitlines():
            code = line.split("//", 1)[0]
            for used in re.findall(r"\bcrate::([a-z_]+)", code):
                if used in RUST_LAYERS and RUST_LAYERS[used] > RUST_LAYERS[area]:
                    found.add((str(path.relative_to(root)), used))
    return found


def test_the_engine_crate_uses_only_lower_layers():
    found = rust_upward_uses()
    new = found - RUST_KNOWN
    assert not new, f"imports against the layers of docs/architecture.md: {sorted(new)}"
    gone = RUST_KNOWN - found
    assert not gone, f"no longer there, take them off RUST_KNOWN: {sorted(gone)}"


def test_an_upward_use_is_caught(tmp_path):
    # the check itself: a model file that uses the engine, a search file that uses the advisor
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "job.rs").write_text(
        "use crate::error::Result;\n// crate::engine in a comment\nuse crate::engine::View;\n"
    )
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "tree.rs").write_text("fn f() { crate::advise::plan(); }\n")
    assert rust_upward_uses(tmp_path) == {("model/job.rs", "engine"), ("search/tree.rs", "advise")}


PACKAGE = REPO / "python" / "hpcsched"
#: The package's layers, bottom up (docs/architecture.md): a module may import from its own
#: layer and those below. A module's layer is that of the longest name listed that holds it
#: (``site.slurm.text`` sits below the rest of ``site``). The package root
#: (`hpcsched/__init__.py`) re-exports and is exempt.
PYTHON_LAYERS = {
    **dict.fromkeys(
        [
            "exceptions",
            "_records",
            "_core",
            "classes",
            "logs",
            "units",
            "node_ranges",
            "site.slurm.text",
        ],
        0,
    ),
    "_io": 1,
    "workload": 2,
    **dict.fromkeys(
        ["site", "protocol", "policies", "metrics", "tables", "agreement", "rewards"],
        3,
    ),
    **dict.fromkeys(["output", "run"], 4),
    **dict.fromkeys(["experiment", "parallel", "placement", "export"], 5),
    **dict.fromkeys(
        ["comparison", "sweep_file", "sweep", "reproduce", "report", "report_record", "plots"], 6
    ),
    **dict.fromkeys(["gym", "advise"], 7),
    **dict.fromkeys(["cli", "__main__"], 8),
}
#: Import circles between modules the package still has (a ratchet, as RUST_KNOWN): none.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def python_imports(root: Path = PACKAGE, typing: bool = False) -> dict[str, set[str]]:
    """Module -> the hpcsched modules it imports, anywhere in it (a function's lazy import
    too), but for imports only for type checking (with ``typing``, those too)."""
    import ast

    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(("hpcsched", *parts))] = path
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        typing_only = {
            id(n)
            for node in ast.walk(tree)
            if not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
        found = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hpcsched"):
                base = node.module
                for alias in node.names:  # `from hpcsched.x import y`: y may be a module
                    name = f"{base}.{alias.name}"
                    found.add(name if name in modules else base)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("hpcsched.")}
        graph[module] = {m for m in found if m in modules and m != module}
    return graph


def python_upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    def layer(module: str) -> int | None:
        parts = module.split(".")[1:]
        for k in range(len(parts), 0, -1):
            if ".".join(parts[:k]) in PYTHON_LAYERS:
                return PYTHON_LAYERS[".".join(parts[:k])]
        return None

    return {
        (module, used)
        for module, uses in graph.items()
        for used in uses
        if layer(module) is not None and layer(used) is not None and layer(used) > layer(module)  # type: ignore[operator]
    }


def import_circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The modules of each import circle (strongly connected, more than one module)."""
    reach = {m: set() for m in graph}
    for start in graph:
        stack = [start]
        while stack:
            for used in graph.get(stack.pop(), ()):
                if used not in reach[start]:
                    reach[start].add(used)
                    stack.append(used)
    circles = set()
    for module in graph:
        together = frozenset({m for m in reach[module] if module in reach[m]} | {module})
        if len(together) > 1:
            circles.add(together)
    return circles


def test_the_package_imports_only_lower_layers_and_has_no_new_circle():
    graph = python_imports()
    upward = python_upward_imports(graph)
    assert not upward, f"imports against the layers of docs/architecture.md: {sorted(upward)}"
    circles = import_circles(graph)
    assert circles - KNOWN_CIRCLES == set(), f"new import circles: {circles - KNOWN_CIRCLES}"
    assert KNOWN_CIRCLES - circles == set(), "a known circle is gone: take it off the list"


#: Modules that still know each other through an import only for type checking (a ratchet).
KNOWN_PAIRS: set[frozenset[str]] = {frozenset({"hpcsched.report", "hpcsched.report_record"})}


def mutual_pairs(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Two modules that import each other, the package root left out (it re-exports)."""
    return {
        frozenset({module, used})
        for module, uses in graph.items()
        for used in uses
        if "hpcsched" not in (module, used) and module in graph.get(used, ())
    }


def test_no_two_modules_know_each_other_even_for_type_checking():
    # a comparison knows its report, a platform its partitions: never the other way round
    pairs = mutual_pairs(python_imports(typing=True))
    assert pairs - KNOWN_PAIRS == set(), f"modules that import each other: {pairs - KNOWN_PAIRS}"
    assert KNOWN_PAIRS - pairs == set(), "a known pair is gone: take it off the list"


def test_an_upward_import_and_a_circle_are_caught(tmp_path):
    (tmp_path / "workload").mkdir()
    (tmp_path / "workload" / "__init__.py").write_text("def f():\n    from hpcsched.run import x\n")
    (tmp_path / "run.py").write_text("from hpcsched.output import y\n")
    (tmp_path / "output.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hpcsched.report import R\n"
        "import hpcsched.run\n"
    )
    (tmp_path / "report.py").write_text(  # known to output only for type checking, both ways
        "import typing\nif typing.TYPE_CHECKING:\n    from hpcsched.output import O\n"
    )
    # Slurm's notations sit below the rest of the site: they may not import a platform
    (tmp_path / "site" / "slurm").mkdir(parents=True)
    (tmp_path / "site" / "slurm" / "text.py").write_text("from hpcsched.site.platform import P\n")
    (tmp_path / "site" / "platform.py").write_text("from hpcsched.site.slurm.text import t\n")
    graph = python_imports(tmp_path)
    assert mutual_pairs(python_imports(tmp_path, typing=True)) == {
        frozenset({"hpcsched.output", "hpcsched.report"}),
        frozenset({"hpcsched.run", "hpcsched.output"}),
        frozenset({"hpcsched.site.slurm.text", "hpcsched.site.platform"}),
    }
    assert python_upward_imports(graph) == {
        ("hpcsched.workload", "hpcsched.run"),
        ("hpcsched.site.slurm.text", "hpcsched.site.platform"),
    }
    assert import_circles(graph) == {
        frozenset({"hpcsched.run", "hpcsched.output"}),
        frozenset({"hpcsched.site.slurm.text", "hpcsched.site.platform"}),
    }


#: The longest a source file may be before it should be split by job (issue 26).
MAX_LINES = 700
#: Files that must be one piece past that, with the reason (docs/architecture.md repeats it).
LONG_FILES: dict[str, str] = {}


def test_no_source_file_is_longer_than_its_one_job_needs():
    roots = [CORE, REPO / "crates" / "python" / "src", PACKAGE]
    long = {
        str(path.relative_to(REPO)): n
        for root in roots
        for path in sorted([*root.rglob("*.rs"), *root.rglob("*.py")])
        if (n := len(path.read_text().splitlines())) > MAX_LINES
        and str(path.relative_to(REPO)) not in LONG_FILES
    }
    assert not long, f"split these by job or say why in LONG_FILES: {long}"


def rust_uses(root: Path = CORE) -> dict[str, set[str]]:
    """Module (`engine::core`) -> the engine crate's modules it names by `crate::` path
    (`use crate::a::{b, c}` names `a::b` and `a::c` where they are modules), its unit tests
    left out (a test module may use fixtures of a sibling)."""
    files = {}
    for path in sorted(root.rglob("*.rs")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts and parts[-1] != "lib":
            files["::".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        text = path.read_text().split("#[cfg(test)]\nmod tests", 1)[0]
        found = set()
        for line in text.splitlines():
            code = line.split("//", 1)[0]
            for used in re.findall(r"\bcrate::([a-z_:]+)", code):
                parts = used.strip(":").split("::")
                for k in range(len(parts), 0, -1):
                    if "::".join(parts[:k]) in files:
                        found.add("::".join(parts[:k]))
                        break
            for base, items in re.findall(r"\bcrate::([a-z_:]+)::\{([^}]*)\}", code):
                for item in items.split(","):
                    name = f"{base}::{item.strip().split('::')[0]}"
                    if name in files:
                        found.add(name)
        graph[module] = found - {module}
    return graph


def test_the_engine_crate_has_no_import_circle():
    circles = import_circles(rust_uses())
    assert not circles, f"modules of the engine crate that use each other: {circles}"


def test_a_rust_circle_is_caught(tmp_path):
    (tmp_path / "power").mkdir()
    (tmp_path / "power" / "config.rs").write_text("use crate::power::stats::Rejection;\n")
    (tmp_path / "power" / "stats.rs").write_text("use crate::power::{config::IconConfig};\n")
    (tmp_path / "power" / "plan.rs").write_text("use crate::power::{stats, config};\n")
    circles = import_circles(rust_uses(tmp_path))
    assert circles == {frozenset({"power::config", "power::stats"})}
