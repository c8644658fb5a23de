"""Generic traversal of IR nodes, so that analyses need not list every node class."""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

from rs2gpu.ir import nodes

_NODE_TYPES = tuple(
    cls for cls in vars(nodes).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls not in (nodes.Span, nodes.Binding)
)


def is_node(value: object) -> bool:
    return isinstance(value, _NODE_TYPES)


def children(node: object) -> Iterator[object]:
    """The IR nodes directly inside `node`, in source order."""
    for f in dataclasses.fields(node):
        yield from _nodes_in(getattr(node, f.name))


def _nodes_in(value: object) -> Iterator[object]:
    if is_node(value):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _nodes_in(item)


def walk(node: object, *, into: Callable[[object], bool] = lambda n: True) -> Iterator[object]:
    """Every node under `node` (itself included), pre-order; `into(n)` false skips n's children."""
    yield node
    if into(node):
        for child in children(node):
            yield from walk(child, into=into)


def rebuild(node: object, rewrite: Callable[[object], object | None]) -> object:
    """A copy of `node` where `rewrite(n)` replaced every sub-node it returned non-None for.

    Children are rewritten first, so `rewrite` sees nodes whose children are already rebuilt.
    """
    changes = {}
    for f in dataclasses.fields(node):
        old = getattr(node, f.name)
        new = _rebuild_value(old, rewrite)
        if new is not old:
            changes[f.name] = new
    if changes:
        node = dataclasses.replace(node, **changes)
    replaced = rewrite(node)
    return node if replaced is None else replaced


def _rebuild_value(value: object, rewrite: Callable[[object], object | None]) -> object:
    if is_node(value):
        return rebuild(value, rewrite)
    if isinstance(value, tuple):
        items = tuple(_rebuild_value(v, rewrite) for v in value)
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def same_value(a: object, b: object) -> bool:
    """Structural equality of two expressions, ignoring where they were written (their spans)."""
    if type(a) is not type(b):
        return False
    if not is_node(a):
        if isinstance(a, tuple):
            return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
        return a is b if isinstance(a, nodes.Binding) else a == b
    return all(same_value(getattr(a, f.name), getattr(b, f.name))
               for f in dataclasses.fields(a) if f.name != "span")
