"""Node indices as text, as the engine writes them (``alloc_nodes``: ``0-3,7``)."""

from __future__ import annotations


def parse_ranges(text: str) -> list[tuple[int, int]]:
    """Index ranges ``0-3,7`` as inclusive ``(first, last)`` pairs (empty text: none)."""
    out: list[tuple[int, int]] = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        out.append((int(first), int(last or first)))
    return out


def node_count(text: str) -> int:
    """How many nodes index ranges name."""
    return sum(last - first + 1 for first, last in parse_ranges(text))


def node_list(text: str) -> list[int]:
    """The node indices index ranges name, ascending as written."""
    return [n for first, last in parse_ranges(text) for n in range(first, last + 1)]
