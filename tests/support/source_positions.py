"""Positions in Rust source text, numbered as rustc numbers them, so that a test names the text a
diagnostic points at rather than a line number copied from the output."""
from __future__ import annotations


def locate(source: str, context: str, target: str | None = None) -> tuple[int, int]:
    """The 1-based (line, column) of `target` inside the first occurrence of `context` in `source`
    (of `context` itself when no target is given), the way rustc numbers positions."""
    start = source.index(context)
    if target is not None:
        start += context.index(target)
    line = source.count("\n", 0, start) + 1
    column = start - (source.rfind("\n", 0, start) + 1) + 1
    return line, column
