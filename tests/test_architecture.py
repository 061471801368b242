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
    "sched": 5,
    "power": 6,
    "search": 7,
    "advise": 8,
    "agent": 8,
}
#: Upward uses the engine crate still has: (file under crates/core/src, area it uses).
RUST_KNOWN = {
    # point 1: the decision contract and admission move into the engine, the power manager
    # behind an engine-owned trait
    ("engine/core.rs", "power"),
    ("engine/core.rs", "sched"),
    ("engine/record.rs", "power"),
    ("engine/state.rs", "power"),
    ("engine/view.rs", "power"),
}


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
