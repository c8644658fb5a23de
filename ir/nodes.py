"""The typed IR: what the frontend builds, the checker proves things about, and the emitter renders.

All nodes are frozen dataclasses. Every expression has `span` (where it came from in the .rs file) and
`ty` (its Rust type after inference). Passes never mutate a node: they build new ones.

The nodes that facts are recorded about (bindings, element accesses, assignments) have a `node_id`: the
checker's facts and the emitter's plans are keyed by it. A node gets it when it is made and keeps it
through `walk.rebuild` and `dataclasses.replace`, so a fact about an access still holds for the access
after a pass rebuilt the loop around it (which `id()` would not: the copy is another object, and a dead
node's `id()` may be handed to a new one). Identities come from one counter, so two nodes made apart
never share one (only a copy shares its original's), and a pass that makes new nodes needs no allocator
of the crate's. Spans could not serve: one span can hold several nodes (each use of a `for` pattern's
element name is an access of its own; the instances of a generic helper share its spans). The identity is
left out of `==`, `hash` and `repr`, which stay structural, and out of the printed IR.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Union

from rs2gpu.ir.types import UNIT, Type

NodeId = int

new_node_id = itertools.count(1).__next__  # () -> a NodeId no node made before has


def _identity():
    return field(default_factory=new_node_id, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Span:
    """A source range; lines and columns are 1-based like rustc's."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True, eq=False)
class Binding:
    """One variable: a parameter, a `let`, or a loop variable.

    Identity is the object itself (eq=False), so two `let x` that shadow each other are different
    bindings even though they share a name; `node_id` names it where a key must outlive the object or
    order keys the same way on every run.
    """

    name: str
    ty: Type
    mutable: bool
    kind: str  # "param" | "local" | "loop"
    span: Span
    node_id: NodeId = _identity()


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Lit:
    """A literal. `text` is the literal's digits as written (no suffix, no underscores), so that the
    emitter can reproduce the exact value rustc parses (for f32 this matters)."""

    value: int | float | bool
    text: str
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Var:
    binding: Binding
    span: Span

    @property
    def ty(self) -> Type:
        return self.binding.ty


@dataclass(frozen=True, slots=True)
class ConstRef:
    """A use of a crate-level `const` item (or an associated constant such as `i32::MAX`, already
    folded to a `Lit` by the frontend)."""

    name: str
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # "-" | "!"
    operand: "Expr"
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    op: str  # + - * / % & | ^ << >> == != < <= > >= && ||
    lhs: "Expr"
    rhs: "Expr"
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Cast:
    operand: "Expr"
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Index:
    """`base[index]` where base is a slice, an array, or a reference to one."""

    base: "Expr"
    index: "Expr"
    ty: Type
    span: Span
    node_id: NodeId = _identity()


@dataclass(frozen=True, slots=True)
class Field:
    """`base.name` on a struct, or `base.0` on a tuple (name is then the digits)."""

    base: "Expr"
    name: str
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Intrinsic:
    """A built-in operation from the intrinsic table: `len`, the float methods, `wrapping_*`, ...

    `args[0]` is the receiver for method forms (`x.sqrt()` is Intrinsic("sqrt", (x,))).
    """

    name: str
    args: tuple["Expr", ...]
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    """A call to a helper `fn` of the crate (a device function), by its monomorphized name."""

    func: str
    args: tuple["Expr", ...]
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class StructLit:
    struct: str
    fields: tuple[tuple[str, "Expr"], ...]
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class TupleLit:
    elems: tuple["Expr", ...]
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class ArrayLit:
    """`[a, b, c]`, or `[value; n]` when `repeat` is set (then `elems` holds the one value)."""

    elems: tuple["Expr", ...]
    repeat: int | None
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class If:
    cond: "Expr"
    then: "Block"
    orelse: "Block | None"
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class MatchArm:
    """One arm; `patterns` are integer values or inclusive (lo, hi) ranges; empty means `_`."""

    patterns: tuple[int | tuple[int, int], ...]
    body: "Expr"
    span: Span


@dataclass(frozen=True, slots=True)
class Match:
    scrutinee: "Expr"
    arms: tuple[MatchArm, ...]
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class BlockExpr:
    block: "Block"
    span: Span

    @property
    def ty(self) -> Type:
        return self.block.ty


@dataclass(frozen=True, slots=True)
class For:
    """`for var in start..end` (or `start..=end`). The only loop form that can be parallel."""

    var: Binding
    start: "Expr"
    end: "Expr"
    inclusive: bool
    body: "Block"
    span: Span
    ty: Type = UNIT


@dataclass(frozen=True, slots=True)
class While:
    cond: "Expr"
    body: "Block"
    span: Span
    ty: Type = UNIT


@dataclass(frozen=True, slots=True)
class Loop:
    """`loop { ... }`; its type is the type of the values its `break`s carry."""

    body: "Block"
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Break:
    value: "Expr | None"
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Continue:
    ty: Type
    span: Span


@dataclass(frozen=True, slots=True)
class Return:
    value: "Expr | None"
    ty: Type
    span: Span


Expr = Union[
    Lit, Var, ConstRef, Unary, Binary, Cast, Index, Field, Intrinsic, Call, StructLit, TupleLit,
    ArrayLit, If, Match, BlockExpr, For, While, Loop, Break, Continue, Return,
]

# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Let:
    binding: Binding
    init: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Assign:
    """`target = value` or, when `op` is set, `target op= value`. Targets are places: a variable,
    an index, a field, or a chain of those."""

    target: Expr
    value: Expr
    op: str | None
    span: Span
    node_id: NodeId = _identity()


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr
    span: Span


Stmt = Union[Let, Assign, ExprStmt]


@dataclass(frozen=True, slots=True)
class Block:
    stmts: tuple[Stmt, ...]
    tail: Expr | None
    ty: Type
    span: Span


# ---------------------------------------------------------------- items


@dataclass(frozen=True, slots=True)
class Function:
    """A `#[kernel]` or a helper fn, after monomorphization (generic helpers appear once per
    instantiation, named `name` with their type arguments in `type_args`)."""

    name: str
    source_name: str
    type_args: tuple[Type, ...]
    params: tuple[Binding, ...]
    ret: Type
    body: Block
    is_kernel: bool
    fast_math: bool
    span: Span
    module: tuple[str, ...] = ()  # the Rust module path, e.g. ("stream",) for src/stream.rs

    @property
    def rust_path(self) -> str:
        return "::".join((*self.module, self.source_name))


@dataclass(frozen=True, slots=True)
class StructDef:
    ty: Type  # a StructType
    span: Span


@dataclass(frozen=True, slots=True)
class ConstDef:
    name: str
    ty: Type
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Crate:
    """Everything the kernels of one crate (or one file) need, in dependency order: structs before
    the structs and functions that use them, helpers before their callers."""

    name: str
    root: str
    structs: tuple[StructDef, ...]
    consts: tuple[ConstDef, ...]
    functions: tuple[Function, ...]
    sources: dict[str, str] = field(compare=False, hash=False)

    @property
    def kernels(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.is_kernel)

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)
