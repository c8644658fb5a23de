"""Generic traversal of IR nodes, so that analyses need not list every node class.

Each node class's field names are read once (not with `dataclasses.fields` per node), and node-ness is
one dict lookup on the exact class (the IR's node classes are never subclassed): every pass walks
every function, so on a large crate these loops are a good part of the translation time.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

from rs2gpu.ir import nodes

# Node class -> its field names, in declaration order (the order `ir.walk` visits them in). The node
# classes are the ones `ir.walk` treats as nodes: every dataclass of `ir.nodes` but Span and Binding.
FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in dataclasses.fields(cls))
    for cls in vars(nodes).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls not in (nodes.Span, nodes.Binding)
}

# Field annotations that can never hold a node; fields declared with any other annotation are
# looked into (by value, the way `ir.walk` does).
LEAF_ANNOTATIONS = frozenset({
    "Span", "Type", "Binding", "NodeId", "str", "str | None", "bool", "int | None", "int | float | bool",
    "dict[str, str]", "tuple[str, ...]", "tuple[Type, ...]", "tuple[Binding, ...]",
    "tuple[int | tuple[int, int], ...]",
})

# Node class -> the names of its fields that may hold nodes, in declaration order.
CHILD_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in dataclasses.fields(cls) if f.type not in LEAF_ANNOTATIONS) for cls in FIELDS
}


def is_node(value: object) -> bool:
    return type(value) in FIELDS


def children(node: object) -> Iterator[object]:
    """The IR nodes directly inside `node`, in source order."""
    for name in CHILD_FIELDS[type(node)]:
        yield from _nodes_in(getattr(node, name))


def _nodes_in(value: object) -> Iterator[object]:
    kind = type(value)
    if kind in FIELDS:
        yield value
    elif kind is tuple:
        for item in value:
            yield from _nodes_in(item)


# The last walks' nodes, by the walked node's id (the entry keeps that node alive, so the id stays its own):
# the checker's and the emitter's passes walk the same loop bodies again and again, and nodes never change.
_WALKED: dict[int, tuple[object, list]] = {}
_WALKED_KEPT = 4096


def walk(node: object, *, into: Callable[[object], bool] | None = None) -> Iterator[object]:
    """Every node under `node` (itself included), pre-order; `into(n)` false skips n's children."""
    if into is None:
        walked = _WALKED.get(id(node))
        if walked is None:
            if len(_WALKED) >= _WALKED_KEPT:
                _WALKED.clear()  # all at once: a pass's walks are of one kernel, and clearing is safe across threads
            walked = _WALKED[id(node)] = (node, preorder(node))
        yield from walked[1]
        return
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if into(current):
            stack.extend(reversed(list(children(current))))


def preorder(root: object, classes: tuple[type, ...] | None = None) -> list:
    """Every node under `root` (itself included) in pre-order, the order of `ir.walk.walk(root)`;
    only the nodes of `classes` when given. A loop over a stack rather than nested recursive functions:
    a function that calls itself through its closure is a reference cycle, which would keep every node
    it saw alive until the cycle collector runs."""
    found: list = []
    child_fields = CHILD_FIELDS
    wanted = set(classes) if classes is not None else None
    append = found.append
    stack = [root]
    pop, push = stack.pop, stack.extend
    while stack:
        value = pop()
        cls = type(value)
        if cls is tuple:
            push(reversed(value))
            continue
        names = child_fields.get(cls)
        if names is None:
            continue
        if wanted is None or cls in wanted:
            append(value)
        if names:
            push([getattr(value, name) for name in reversed(names)])
    return found


def rebuild(node: object, rewrite: Callable[[object], object | None]) -> object:
    """Same as `ir.walk.rebuild`: a copy of `node` where `rewrite(n)` replaced every sub-node it
    returned non-None for, children first; unchanged sub-trees are shared, not copied, and a node copied
    because its children changed keeps its `node_id` (the facts about it still hold)."""
    cls = type(node)
    names = FIELDS[cls]
    values = [getattr(node, name) for name in names]
    changed = False
    for i, old in enumerate(values):
        new = _rebuild_value(old, rewrite)
        if new is not old:
            values[i] = new
            changed = True
    if changed:
        node = cls(*values)
    replaced = rewrite(node)
    return node if replaced is None else replaced


def _rebuild_value(value: object, rewrite: Callable[[object], object | None]) -> object:
    if type(value) in FIELDS:
        return rebuild(value, rewrite)
    if isinstance(value, tuple):
        items = tuple(_rebuild_value(v, rewrite) for v in value)
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def same_value(a: object, b: object) -> bool:
    """Structural equality of two expressions, ignoring where they were written (their spans) and which
    nodes they are (their identities)."""
    if type(a) is not type(b):
        return False
    if not is_node(a):
        if isinstance(a, tuple):
            return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
        return a is b if isinstance(a, nodes.Binding) else a == b
    return all(same_value(getattr(a, f.name), getattr(b, f.name))
               for f in dataclasses.fields(a) if f.name not in ("span", "node_id"))


def place_indices(place: object) -> list[nodes.Index]:
    """The index expressions of a place `p[e].f[k]...`, outermost first."""
    out = []
    while isinstance(place, (nodes.Index, nodes.Field)):
        if isinstance(place, nodes.Index):
            out.append(place)
        place = place.base
    return out
