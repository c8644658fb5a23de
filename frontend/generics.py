"""Generic kernels without `types(...)`: the body is checked once, each type parameter standing for every
type its bounds admit, and an instantiation is made when a caller names its types (the Python API names
them from the arguments of a call, as numba and Triton do).

While the body is checked, a type parameter is a `TypeParam`: a primitive type of its own, which unifies
only with itself (so no other type, no other parameter and no literal is one), and whose operations are
lowered as those of one type its bounds admit (its `name`, the witness). What that lowering accepts
beyond the bounds (an operator whose trait is not a bound, a compound assignment without the `*Assign`
trait, a cast, a method, a literal where the parameter is expected, an element moved out without `Copy`)
`check_bounds` rejects afterwards, as rustc would. The instantiations themselves are lowered like those
of `types(...)`, with the types in place of the parameters.
"""
from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from rs2gpu.frontend.source import text_of
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink
from rs2gpu.ir.types import PRIMITIVES, ArrayType, PrimType, RefType, SliceType, Type
from rs2gpu.ir.walk import walk

_EVERY_KIND = frozenset({"bool", "signed", "unsigned", "float", "half"})
_NUMBERS = frozenset({"signed", "unsigned", "float", "half"})
_BITS = frozenset({"bool", "signed", "unsigned"})
_INTEGERS = frozenset({"signed", "unsigned"})

# The std traits a bound may name, and the kinds of primitive type that implement each.
TRAIT_KINDS: dict[str, frozenset[str]] = {
    **{t: _EVERY_KIND for t in ("Copy", "Clone", "Send", "Sync", "Sized", "Default", "Debug", "PartialEq",
                                "PartialOrd")},
    **{t: _BITS for t in ("Eq", "Ord", "Hash", "Not")},
    **{t + s: _NUMBERS for t in ("Add", "Sub", "Mul", "Div", "Rem") for s in ("", "Assign")},
    **{t + s: _BITS for t in ("BitAnd", "BitOr", "BitXor") for s in ("", "Assign")},
    **{t + s: _INTEGERS for t in ("Shl", "Shr") for s in ("", "Assign")},
    "Neg": frozenset({"signed", "float", "half"}),
}
# What a #[repr(C)] struct of the crate satisfies as far as rs2gpu can tell (rustc checks its derives).
STRUCT_TRAITS = frozenset({"Copy", "Clone", "Send", "Sync", "Sized"})
_IMPLIED = {"Ord": ("PartialOrd", "Eq", "PartialEq"), "Eq": ("PartialEq",), "PartialOrd": ("PartialEq",),
            "Copy": ("Clone",)}
OPERATORS = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div", "%": "Rem", "&": "BitAnd", "|": "BitOr", "^": "BitXor",
             "<<": "Shl", ">>": "Shr", "==": "PartialEq", "!=": "PartialEq", "<": "PartialOrd",
             "<=": "PartialOrd", ">": "PartialOrd", ">=": "PartialOrd"}
_UNARY = {"-": "Neg", "!": "Not"}
# The witness: the first type the bounds admit, in this order (floats first: a body that checks with a
# float type seldom leans on integer-only lowering).
_WITNESS_ORDER = ("f64", "f32", "i64", "i32", "u64", "u32", "i16", "u16", "i8", "u8", "isize", "usize", "bool")


@dataclass(frozen=True, slots=True)
class TypeParam(PrimType):
    """A kernel's type parameter `param` while its generic body is checked: lowered as the primitive type
    `name`, bounded by `bounds` (the traits it may use, those they imply included)."""

    param: str
    bounds: tuple[str, ...]

    def __str__(self) -> str:
        return self.param


class UnknownBound(Exception):
    """A bound names a trait this module cannot tell the implementations of."""

    def __init__(self, bound: str, node: Node) -> None:
        super().__init__(bound)
        self.bound = bound
        self.node = node


def type_param_bounds(function_item: Node, names: list[str]) -> dict[str, tuple[str, ...]]:
    """The traits bounding each type parameter in `names`, from `<T: A + B>` and `where T: C`, with the
    traits they imply. An operator trait counts only with `Output = T` (what rustc needs for `a * b` to
    be a `T`), taking `T` itself as its right-hand side. UnknownBound for any other trait."""
    found: dict[str, list[str]] = {name: [] for name in names}
    params = function_item.child_by_field_name("type_parameters")
    predicates = [(p.child_by_field_name("name"), p.child_by_field_name("bounds"))
                  for p in (params.named_children if params is not None else ()) if p.type == "type_parameter"]
    for clause in (c for c in function_item.children if c.type == "where_clause"):
        predicates += [(p.child_by_field_name("left"), p.child_by_field_name("bounds"))
                       for p in clause.named_children if p.type == "where_predicate"]
    for name_node, bounds in predicates:
        name = text_of(name_node) if name_node is not None else ""
        if name not in found or bounds is None:
            continue
        for bound in bounds.named_children:
            if bound.type == "lifetime":
                continue
            trait = _usable_trait(bound, name)
            if trait is not None:
                found[name] += [trait, *_IMPLIED.get(trait, ())]
    return {name: tuple(dict.fromkeys(traits)) for name, traits in found.items()}


def _usable_trait(bound: Node, param: str) -> str | None:
    """The trait a bound gives `param` the use of, or None (`?Sized`, an operator trait whose output is
    not the parameter)."""
    if bound.type == "removed_trait_bound":
        return None
    path = bound.child_by_field_name("type") if bound.type == "generic_type" else bound
    trait = text_of(path.child_by_field_name("name") if path.type == "scoped_type_identifier" else path)
    if trait not in TRAIT_KINDS:
        raise UnknownBound(text_of(bound), bound)
    arguments = bound.child_by_field_name("type_arguments") if bound.type == "generic_type" else None
    parts = arguments.named_children if arguments is not None else []
    output = next((text_of(b.child_by_field_name("type")) for b in parts if b.type == "type_binding"
                   and text_of(b.child_by_field_name("name")) == "Output"), None)
    right = [text_of(p) for p in parts if p.type != "type_binding"]
    if right and right != [param]:
        return None
    if trait in OPERATORS.values() and trait not in ("PartialEq", "PartialOrd") or trait == "Neg" or trait == "Not":
        return trait if output == param else None
    return trait


def admits(bounds: tuple[str, ...], type_name: str, is_struct: bool = False) -> str | None:
    """The first of `bounds` that the type `type_name` does not satisfy, or None."""
    for trait in bounds:
        if is_struct and trait not in STRUCT_TRAITS:
            return trait
        if not is_struct and PRIMITIVES[type_name].kind not in TRAIT_KINDS[trait]:
            return trait
    return None


def witness(param: str, bounds: tuple[str, ...]) -> TypeParam | None:
    """The `TypeParam` that checks a body for `param`, or None where no primitive type meets its bounds."""
    name = next((t for t in _WITNESS_ORDER if admits(bounds, t) is None), None)
    return TypeParam(name, param, bounds) if name is not None else None


def is_open(fn: ir.Function) -> bool:
    """Whether `fn` is a generic body checked for its type parameters (not an instantiation)."""
    return any(isinstance(t, TypeParam) for t in fn.type_args)


@dataclass(frozen=True)
class GenericSignature:
    """What a call needs to instantiate a generic kernel without `types(...)`: its Rust name, its type
    parameters with the traits that bound each, and per kernel parameter the type parameter that is its
    type or its elements' (None for one of a type of its own)."""

    name: str
    type_params: tuple[str, ...]
    bounds: dict[str, tuple[str, ...]]
    params: tuple[tuple[str, str | None], ...]

    @staticmethod
    def of(fn: ir.Function) -> GenericSignature:
        params = tuple((p.name, _param_of(p.ty)) for p in fn.params)
        return GenericSignature(fn.source_name, tuple(t.param for t in fn.type_args),
                                {t.param: t.bounds for t in fn.type_args}, params)


def _param_of(ty: Type) -> str | None:
    if isinstance(ty, RefType):
        ty = ty.target
    if isinstance(ty, (SliceType, ArrayType)):
        ty = ty.elem
    return ty.param if isinstance(ty, TypeParam) else None


def open_generics(crate: ir.Crate) -> list[GenericSignature]:
    """The generic kernels of `crate` that name no instantiation, each checked once."""
    return [GenericSignature.of(fn) for fn in crate.kernels if is_open(fn)]


def check_bounds(fn: ir.Function, sink: DiagnosticSink) -> None:
    """Report what the body of `fn` does with a `TypeParam` value that its bounds do not allow."""
    targets = {id(n.target) for n in walk(fn.body) if isinstance(n, ir.Assign)}
    for node in walk(fn.body):
        kind = type(node)
        if kind is ir.Lit and isinstance(node.ty, TypeParam):
            found = "`bool`" if isinstance(node.value, bool) else \
                "floating-point number" if isinstance(node.value, float) else "integer"
            sink.error("RG0005", "mismatched types", node.span, f"expected type parameter `{node.ty}`, found {found}",
                       help=f"a literal is not a `{node.ty}`; take the value as a parameter of type `{node.ty}`")
        elif kind is ir.Binary and isinstance(node.lhs.ty, TypeParam):
            _need(sink, node.lhs.ty, OPERATORS.get(node.op), node.span,
                  f"binary operation `{node.op}` cannot be applied to type `{node.lhs.ty}`")
        elif kind is ir.Unary and isinstance(node.operand.ty, TypeParam):
            _need(sink, node.operand.ty, _UNARY[node.op], node.span,
                  f"cannot apply unary operator `{node.op}` to type `{node.operand.ty}`")
        elif kind is ir.Assign and node.op is not None and isinstance(node.value.ty, TypeParam):
            trait = OPERATORS[node.op] + "Assign"
            _need(sink, node.value.ty, trait, node.span,
                  f"binary assignment operation `{node.op}=` cannot be applied to type `{node.value.ty}`")
        elif kind is ir.Cast and (isinstance(node.ty, TypeParam) or isinstance(node.operand.ty, TypeParam)):
            sink.error("RG0015", f"non-primitive cast: `{node.operand.ty}` as `{node.ty}`", node.span,
                       "an `as` conversion to or from a type parameter",
                       help="take the value in the type it is used in, or make the kernel generic over that type")
        elif kind is ir.Intrinsic and any(isinstance(a.ty, TypeParam) for a in node.args):
            ty = next(a.ty for a in node.args if isinstance(a.ty, TypeParam))
            if node.name in ("min", "max") and "Ord" in ty.bounds:
                continue  # `Ord::min` and `Ord::max`
            sink.error("RG0007", f"no method named `{node.name}` found for type parameter `{ty}` in the current scope",
                       node.span, f"method not found in `{ty}`",
                       help="the bounds of a type parameter say what a generic kernel may do with it; "
                            "list the instantiations with `#[kernel(types(...))]` to use the methods of each type")
        elif kind is ir.Index and isinstance(node.ty, TypeParam) and id(node) not in targets \
                and "Copy" not in node.ty.bounds:
            sink.error("RG0015", f"cannot move out of type `[{node.ty}]`, a non-copy slice", node.span,
                       f"move occurs because the element has type `{node.ty}`, which does not implement the "
                       f"`Copy` trait", help=f"add the bound `{node.ty}: Copy`")


def _need(sink: DiagnosticSink, ty: TypeParam, trait: str | None, span: ir.Span, message: str) -> None:
    if trait is not None and trait in ty.bounds:
        return
    output = f"<Output = {ty}>" if trait in OPERATORS.values() and trait not in ("PartialEq", "PartialOrd") \
        or trait in _UNARY.values() else ""
    sink.error("RG0015", message, span, f"`{ty}` has no bound that gives this operation",
               help=f"consider restricting type parameter `{ty}`: `{ty}: {trait}{output}`" if trait else "")


__all__ = ["TypeParam", "GenericSignature", "UnknownBound", "admits", "check_bounds", "is_open", "open_generics",
           "type_param_bounds", "witness"]
