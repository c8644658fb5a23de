"""Type inference for the kernel subset, done the way rustc does it for these constructs.

Unsuffixed literals get inference variables that may only become integer (resp. float) types, and
that default to i32 (resp. f64) when nothing constrains them. The IR is first built with these
variables in its `ty` fields; `resolve_function` then rebuilds it with concrete types.
"""
from __future__ import annotations

import dataclasses

from rs2gpu.ir import nodes, walk
from rs2gpu.ir.types import F64, I32, ArrayType, PrimType, RefType, SliceType, TupleType, Type


class InferVar:
    """A type not known yet. `kind` restricts it: "int", "float", or "any"."""

    __slots__ = ("kind", "parent", "value")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parent: InferVar | None = None
        self.value: Type | None = None

    def __repr__(self) -> str:
        return "{integer}" if self.kind == "int" else "{float}" if self.kind == "float" else "_"

    __str__ = __repr__


class TypeMismatch(Exception):
    def __init__(self, expected: object, found: object) -> None:
        super().__init__(f"expected `{expected}`, found `{found}`")
        self.expected = expected
        self.found = found


def find(ty):
    """The representative of `ty`: a concrete Type, or an unresolved InferVar."""
    while isinstance(ty, InferVar):
        if ty.value is not None:
            ty = ty.value
        elif ty.parent is not None:
            ty = ty.parent
        else:
            return ty
    return ty


def _fits(kind: str, ty: Type) -> bool:
    if kind == "any":
        return True
    return isinstance(ty, PrimType) and (ty.is_int if kind == "int" else ty.is_float)


def unify(expected, found) -> None:
    """Make two types equal, or raise TypeMismatch (rustc's E0308)."""
    a, b = find(expected), find(found)
    if a is b:
        return
    if isinstance(a, InferVar) and isinstance(b, InferVar):
        if a.kind != "any" and b.kind != "any" and a.kind != b.kind:
            raise TypeMismatch(a, b)
        keep, drop = (a, b) if a.kind != "any" else (b, a)
        drop.parent = keep
        return
    if isinstance(a, InferVar) or isinstance(b, InferVar):
        var, ty = (a, b) if isinstance(a, InferVar) else (b, a)
        if not _fits(var.kind, ty):
            raise TypeMismatch(expected_display(expected), expected_display(found))
        var.value = ty
        return
    _unify_concrete(a, b)


def _unify_concrete(a: Type, b: Type) -> None:
    if isinstance(a, RefType) and isinstance(b, RefType) and a.mutable == b.mutable:
        return unify(a.target, b.target)
    if isinstance(a, SliceType) and isinstance(b, SliceType):
        return unify(a.elem, b.elem)
    if isinstance(a, ArrayType) and isinstance(b, ArrayType) and a.length == b.length:
        return unify(a.elem, b.elem)
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        for x, y in zip(a.elems, b.elems):
            unify(x, y)
        return
    if a != b:
        raise TypeMismatch(display(a), display(b))


def display(ty) -> str:
    ty = find(ty)
    if isinstance(ty, InferVar):
        return str(ty)
    if isinstance(ty, TupleType):
        return "(" + ", ".join(display(t) for t in ty.elems) + ("," if len(ty.elems) == 1 else "") + ")"
    if isinstance(ty, RefType):
        return f"&{'mut ' if ty.mutable else ''}{display(ty.target)}"
    if isinstance(ty, SliceType):
        return f"[{display(ty.elem)}]"
    if isinstance(ty, ArrayType):
        return f"[{display(ty.elem)}; {ty.length}]"
    return str(ty)


expected_display = display


def zonk(ty):
    """The concrete type of `ty`, applying rustc's literal defaults to unconstrained variables."""
    ty = find(ty)
    if isinstance(ty, InferVar):
        default = I32 if ty.kind == "int" else F64 if ty.kind == "float" else None
        if default is None:
            raise TypeMismatch("a known type", "`_`")
        ty.value = default
        return default
    if isinstance(ty, RefType):
        return RefType(zonk(ty.target), ty.mutable)
    if isinstance(ty, SliceType):
        return SliceType(zonk(ty.elem))
    if isinstance(ty, ArrayType):
        return ArrayType(zonk(ty.elem), ty.length)
    if isinstance(ty, TupleType):
        return TupleType(tuple(zonk(t) for t in ty.elems))
    return ty


def contains_var(ty) -> bool:
    ty = find(ty)
    if isinstance(ty, InferVar):
        return True
    if isinstance(ty, (RefType,)):
        return contains_var(ty.target)
    if isinstance(ty, (SliceType, ArrayType)):
        return contains_var(ty.elem)
    if isinstance(ty, TupleType):
        return any(contains_var(t) for t in ty.elems)
    return False


def resolve_function(fn: nodes.Function) -> nodes.Function:
    """`fn` rebuilt with every inference variable replaced by its concrete type."""
    bindings: dict[int, nodes.Binding] = {}

    def concrete_binding(b: nodes.Binding) -> nodes.Binding:
        new = bindings.get(id(b))
        if new is None:
            new = dataclasses.replace(b, ty=zonk(b.ty))
            bindings[id(b)] = new
        return new

    def rewrite(node):
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if f.name == "ty" and value is not None:
                changes["ty"] = zonk(value)
            elif isinstance(value, nodes.Binding):
                changes[f.name] = concrete_binding(value)
        return dataclasses.replace(node, **changes) if changes else None

    params = tuple(concrete_binding(p) for p in fn.params)
    body = walk.rebuild(fn.body, rewrite)
    return dataclasses.replace(fn, params=params, body=body, ret=zonk(fn.ret))
