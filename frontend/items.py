"""Finding the items of a crate: kernels, helper fns, consts and `#[repr(C)]` structs.

Only items that kernels reach are lowered, so a crate may hold ordinary Rust (tests, host code)
beside its kernels. `mod x { ... }` blocks are searched; `#[cfg(test)]` modules and `impl` blocks are
not.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from rs2gpu.frontend.source import SourceFile, text_of

KERNEL_ATTRIBUTES = ("kernel", "rs2gpu::kernel")


@dataclass
class RawItem:
    """An item as found in the source, not yet lowered."""

    kind: str  # "fn" | "struct" | "const"
    name: str
    node: Node
    file: SourceFile
    attributes: list[Node] = field(default_factory=list)
    module: tuple[str, ...] = ()

    def attribute_names(self) -> list[str]:
        return [attribute_path(a) for a in self.attributes]

    def attribute(self, name: str) -> Node | None:
        return next((a for a in self.attributes if attribute_path(a) == name), None)


def attribute_path(attribute_item: Node) -> str:
    attr = next(c for c in attribute_item.named_children if c.type == "attribute")
    path = attr.named_children[0]
    return text_of(path).replace(" ", "")


def attribute_arguments(attribute_item: Node) -> str:
    """The text inside `#[name(...)]`'s parentheses ("" when there are none)."""
    attr = next(c for c in attribute_item.named_children if c.type == "attribute")
    args = attr.child_by_field_name("arguments")
    return text_of(args)[1:-1].strip() if args is not None else ""


def token_list(token_tree: Node) -> list[list[Node]]:
    """The comma-separated entries of a token tree `( ... )`, each a list of tokens."""
    entries: list[list[Node]] = [[]]
    for token in token_tree.children[1:-1]:
        if token.type == ",":
            entries.append([])
        elif token.type not in ("line_comment", "block_comment"):
            entries[-1].append(token)
    return [e for e in entries if e]


def attribute_options(attribute_item: Node) -> list[tuple[str, list[list[Node]] | None]]:
    """`#[name(a, b(x, y))]` as [("a", None), ("b", [[x], [y]])]; an entry that is not a name, or a
    name followed by anything but one parenthesized list, comes back as its text with an empty list."""
    attr = next(c for c in attribute_item.named_children if c.type == "attribute")
    args = attr.child_by_field_name("arguments")
    out = []
    for entry in token_list(args) if args is not None else []:
        name = text_of(entry[0])
        if len(entry) == 1 and entry[0].type == "identifier":
            out.append((name, None))
        elif len(entry) == 2 and entry[0].type == "identifier" and entry[1].type == "token_tree" \
                and text_of(entry[1]).startswith("("):
            out.append((name, token_list(entry[1])))
        else:
            out.append((" ".join(text_of(t) for t in entry), []))
    return out


def generic_names(function_item: Node) -> list[str]:
    """The names of a fn's type parameters."""
    params = function_item.child_by_field_name("type_parameters")
    if params is None:
        return []
    return [text_of(p.child_by_field_name("name") or p) for p in params.named_children
            if p.type in ("type_parameter", "type_identifier")]


def collect_items(files: list[SourceFile]) -> list[RawItem]:
    items: list[RawItem] = []
    for file in files:
        _collect(file.tree.root_node, file, items, file_module(file.name))
    return items


def file_module(name: str) -> tuple[str, ...]:
    """The module path cargo gives a file: src/lib.rs is the crate root, src/a/b.rs and src/a/b/mod.rs
    are `a::b`. A lone file outside a crate is a root too."""
    parts = name.split("/")
    if parts[0] == "src":
        parts = parts[1:]
    else:
        parts = parts[-1:]
    parts[-1] = parts[-1].removesuffix(".rs")
    if parts[-1] == "mod":
        parts = parts[:-1]
    if len(parts) == 1 and parts[0] in ("lib", "main") or name.count("/") == 0:
        return ()
    return tuple(parts)


def _collect(container: Node, file: SourceFile, out: list[RawItem], module: tuple[str, ...]) -> None:
    pending: list[Node] = []
    for child in container.named_children:
        if child.type == "attribute_item":
            pending.append(child)
            continue
        attributes, pending = pending, []
        kind = {"function_item": "fn", "struct_item": "struct", "const_item": "const"}.get(child.type)
        if kind is not None:
            name = text_of(child.child_by_field_name("name"))
            out.append(RawItem(kind, name, child, file, attributes, module))
        elif child.type == "mod_item" and not _is_cfg_test(attributes):
            body = child.child_by_field_name("body")
            if body is not None:
                _collect(body, file, out, (*module, text_of(child.child_by_field_name("name"))))


def _is_cfg_test(attributes: list[Node]) -> bool:
    return any(attribute_path(a) == "cfg" and attribute_arguments(a) == "test" for a in attributes)


def is_kernel(item: RawItem) -> bool:
    return item.kind == "fn" and any(n in KERNEL_ATTRIBUTES for n in item.attribute_names())


def kernel_attribute(item: RawItem) -> Node | None:
    return next((a for a in item.attributes if attribute_path(a) in KERNEL_ATTRIBUTES), None)


def is_repr_c(item: RawItem) -> bool:
    return any(attribute_path(a) == "repr" and "C" in attribute_arguments(a).replace(" ", "").split(",")
               for a in item.attributes)
