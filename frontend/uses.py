"""`use` declarations: the names they bring into a module, as rustc resolves them.

rs2gpu puts the crate's items in one namespace (RG0010), so a `use` of a crate item matters only for
the name it gives (`use crate::m::f as g;` makes `g` call `f`); a `use` of std brings the associated
constants of the primitive types (`use std::f64::consts::PI;`, `use std::f64::consts;` then
`consts::PI`, `use std::f64::consts::*;`). Each `use` applies to the module it is written in (a file,
or a `mod m { ... }` block), as in rustc.
"""
from __future__ import annotations

from tree_sitter import Node

from rs2gpu.frontend.items import file_module
from rs2gpu.frontend.source import SourceFile, text_of

Path = tuple[str, ...]


class Uses:
    """The `use`s of a crate by module (a module path names one module of the crate, whichever file
    holds it)."""

    def __init__(self, files: list[SourceFile]) -> None:
        self._names: dict[tuple[str, ...], dict[str, Path]] = {}
        self._globs: dict[tuple[str, ...], list[Path]] = {}
        for file in files:
            self._collect(file.tree.root_node, file, file_module(file.name))

    def _collect(self, container: Node, file: SourceFile, module: tuple[str, ...]) -> None:
        for child in container.named_children:
            if child.type == "use_declaration":
                for name, path in _use_tree(child.child_by_field_name("argument"), ()):
                    if name == "*":
                        self._globs.setdefault(module, []).append(path)
                    else:
                        self._names.setdefault(module, {})[name] = path
            elif child.type == "mod_item" and child.child_by_field_name("body") is not None:
                self._collect(child.child_by_field_name("body"), file,
                              (*module, text_of(child.child_by_field_name("name"))))

    def path(self, name: str, file: SourceFile, node: Node) -> Path | None:
        """The path `name` stands for where `node` is, if a `use` of that module names it, or one of a
        crate module that a `use m::*;` of it opens (`use super::*;` sees the parent's `use`s)."""
        return self._lookup(name, module_of(file, node), set())

    def _lookup(self, name: str, module: tuple[str, ...], seen: set) -> Path | None:
        found = self._names.get(module, {}).get(name)
        if found is not None or module in seen:
            return found
        seen.add(module)
        for glob in self._globs.get(module, []):
            opened = _crate_module(glob, module)
            found = self._lookup(name, opened, seen) if opened is not None else None
            if found is not None:
                return _absolute(found, opened)
        return None

    def globs(self, file: SourceFile, node: Node) -> list[Path]:
        """The paths whose items a `use path::*;` of the module of `node` brings in."""
        return self._globs.get(module_of(file, node), [])


def module_of(file: SourceFile, node: Node) -> tuple[str, ...]:
    """The module `node` is written in: its file's, then each enclosing `mod m { ... }`."""
    names = []
    parent = node.parent
    while parent is not None:
        if parent.type == "mod_item":
            names.append(text_of(parent.child_by_field_name("name")))
        parent = parent.parent
    return (*file_module(file.name), *reversed(names))


def _crate_module(path: Path, module: tuple[str, ...]) -> tuple[str, ...] | None:
    """The crate module a `use` path names from `module` (None for std, core and other crates' paths)."""
    if not path or path[0] in ("std", "core", "alloc"):
        return None
    if path[0] == "crate":
        at, rest = (), path[1:]
    else:
        at, rest = module, path
        while rest and rest[0] in ("self", "super"):
            at = at[:-1] if rest[0] == "super" else at
            rest = rest[1:]
    return (*at, *rest)


def _absolute(path: Path, module: tuple[str, ...]) -> Path:
    """`path`, written in `module`, from the crate root (std paths stay as they are)."""
    inside = _crate_module(path[:-1], module)
    return path if inside is None else ("crate", *inside, path[-1])


def _use_tree(node: Node | None, prefix: Path) -> list[tuple[str, Path]]:
    """The (name, path) pairs a use tree declares; a glob is ("*", the path it opens)."""
    if node is None:
        return []
    kind = node.type
    if kind in ("identifier", "scoped_identifier", "crate", "self", "super"):
        path = (*prefix, *_segments(node))
        if path and path[-1] == "self":  # `use a::b::{self}` names `b`
            path = path[:-1]
        return [(path[-1], path)] if path else []
    if kind == "use_as_clause":
        path = (*prefix, *_segments(node.child_by_field_name("path")))
        return [(text_of(node.child_by_field_name("alias")), path)]
    if kind == "use_wildcard":
        inner = [c for c in node.named_children]
        return [("*", (*prefix, *(_segments(inner[0]) if inner else ())))]
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        return _use_tree(node.child_by_field_name("list"), (*prefix, *(_segments(path) if path else ())))
    if kind == "use_list":
        return [pair for child in node.named_children for pair in _use_tree(child, prefix)]
    return []


def _segments(node: Node) -> Path:
    return tuple(p for p in text_of(node).replace(" ", "").split("::") if p)
