"""Type inference for the kernel subset, done the way rustc does it for these constructs.

Unsuffixed literals get inference variables that may only become integer (resp. float) types, and
that default to i32 (resp. f64) when nothing constrains them. The IR is first built with these
variables in its `ty` fields; `resolve_function` then rebuilds it with concrete types.
"""
from __future__ import annotations

import dataclasses

from rs2gpu.ir.walk import CHILD_FIELDS, FIELDS
from rs2gpu.ir import nodes
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


def may_be_int(ty) -> bool:
    """Whether `ty` is, or may still become, an integer type."""
    ty = find(ty)
    if isinstance(ty, InferVar):
        return ty.kind in ("int", "any")
    return isinstance(ty, PrimType) and ty.is_int


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


def _has_var(ty) -> bool:
    """Whether `ty` mentions an inference variable, so that `zonk` would change it."""
    kind = type(ty)
    if kind is PrimType:
        return False
    if kind is InferVar:
        return True
    if kind is RefType:
        return _has_var(ty.target)
    if kind is SliceType or kind is ArrayType:
        return _has_var(ty.elem)
    if kind is TupleType:
        return any(_has_var(t) for t in ty.elems)
    return False


# Node class -> (position, name, is the `ty` field) of each field `resolve_function` looks at: `ty`,
# and every field that may hold a node or a binding.
_RESOLVE_PLANS = {
    cls: tuple((i, f.name, f.name == "ty") for i, f in enumerate(dataclasses.fields(cls))
               if f.name == "ty" or f.name in CHILD_FIELDS[cls] or f.type == "Binding")
    for cls in FIELDS
}


def resolve_function(fn: nodes.Function) -> nodes.Function:
    """`fn` rebuilt with every inference variable replaced by its concrete type.

    Every `ty` field and every binding's type is zonked; a node is copied only when something under
    it changed, and each binding is replaced by one new binding wherever it is used (bindings are
    compared by identity).
    """
    bindings: dict[nodes.NodeId, nodes.Binding] = {}
    plans = _RESOLVE_PLANS
    fields = FIELDS
    binding_class = nodes.Binding

    def concrete_binding(b: nodes.Binding) -> nodes.Binding:
        new = bindings.get(b.node_id)
        if new is None:
            new = dataclasses.replace(b, ty=zonk(b.ty)) if _has_var(b.ty) else b
            bindings[b.node_id] = new
        return new

    def resolve(node):
        cls = type(node)
        values = None
        for i, name, is_ty in plans[cls]:
            old = getattr(node, name)
            if is_ty:
                if old is None or not _has_var(old):
                    continue
                new = zonk(old)
            else:
                kind = type(old)
                if kind in fields:
                    new = resolve(old)
                elif kind is tuple:
                    new = resolve_tuple(old)
                elif kind is binding_class:
                    new = concrete_binding(old)
                else:
                    continue
            if new is not old:
                if values is None:
                    values = [getattr(node, n) for n in fields[cls]]
                values[i] = new
        return node if values is None else cls(*values)

    def resolve_tuple(items: tuple) -> tuple:
        out = None
        for i, old in enumerate(items):
            kind = type(old)
            if kind in fields:
                new = resolve(old)
            elif kind is tuple:
                new = resolve_tuple(old)
            else:
                continue
            if new is not old:
                if out is None:
                    out = list(items)
                out[i] = new
        return items if out is None else tuple(out)

    params = tuple(concrete_binding(p) for p in fn.params)
    body = resolve(fn.body)
    return dataclasses.replace(fn, params=params, body=body, ret=zonk(fn.ret))
