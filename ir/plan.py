"""What the checker proves about a kernel, in a form the emitter and the runtime can use.

A `KernelPlan` splits a kernel into a uniform preamble (scalar `let`s every thread can recompute) and
parallel loops (one GPU launch each), and records for each parameter how its data must travel.
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.nodes import Binding, Block, Crate, Expr, Function, Let, NodeId, Span
from rs2gpu.ir.types import PrimType, StructType
from rs2gpu.ir.walk import walk

# Expressions the host can evaluate before a launch (loop bounds) or after one (the result): the
# manifest carries them to the runtime in a small JSON expression language.
HOST_NODES = (ir.Lit, ir.ConstRef, ir.Var, ir.Unary, ir.Binary, ir.Cast, ir.TupleLit, ir.Intrinsic, ir.Field)
HOST_INTRINSICS = {"len", "min", "max", "abs", "sqrt", "wrapping_add", "wrapping_sub", "wrapping_mul", "floor", "ceil",
                   "round", "trunc"}


def is_host_evaluable(expr: Expr, host_values: set[Binding], elements: bool = False) -> bool:
    """True when `expr` uses only literals, consts, parameters, slice lengths and `host_values`; with
    `elements`, also single elements of slice parameters (`x[0]`, read before the launch)."""
    for node in walk(expr):
        if elements and isinstance(node, ir.Index) and isinstance(node.base, ir.Var) \
                and node.base.binding.kind == "param":
            continue
        if not isinstance(node, HOST_NODES):
            return False
        if isinstance(node, ir.Intrinsic) and node.name not in HOST_INTRINSICS:
            return False
        if isinstance(node, ir.Var) and node.binding.kind != "param" and node.binding not in host_values:
            return False
        if isinstance(node, ir.Field) and not (isinstance(node.base, (ir.Var, ir.Field))
                                               and isinstance(node.base.ty, StructType)):
            return False
    return True


@dataclass(frozen=True, slots=True)
class ParamPlan:
    """How one kernel parameter travels.

    transfer: "in" (host→device only), "out" (device→host only: the kernel writes every element
    before reading any), "inout" (both ways), "value" (passed by value in the launch arguments).
    """

    binding: Binding
    transfer: str
    written: bool
    reason: str


@dataclass(frozen=True, slots=True)
class Reduction:
    """A variable declared before a parallel loop and combined across its iterations with `op`."""

    binding: Binding
    op: str  # "+" | "*" | "min" | "max" | "&" | "|" | "^" | "minloc" | "maxloc"
    span: Span
    location: Binding | None = None  # for minloc/maxloc: the variable that records where the extreme is
    first: bool = True               # minloc/maxloc: ties keep the first index (`<`) or the last (`<=`)


@dataclass(frozen=True, slots=True)
class LoopDim:
    """One dimension of a parallel loop: `for index in start..end` (or `..=end`)."""

    index: Binding
    start: Expr
    end: Expr
    inclusive: bool
    span: Span


@dataclass(frozen=True, slots=True)
class LaunchCheck:
    """An inequality the race-freedom proof needs and only the runtime can decide:
    Σ coefficient · Π factors ≥ 0, with factors evaluated on the host (parameters, lengths, consts).
    For example `w - n ≥ 0` for a write `a[j * w + i]` with `i` in `0..n`."""

    terms: tuple[tuple[int, tuple[Expr, ...]], ...]
    span: Span


Terms = tuple[tuple[int, tuple[Expr, ...]], ...]  # Σ coefficient · Π factors, like `LaunchCheck.terms`


@dataclass(frozen=True, slots=True)
class SequentialLoop:
    """A sequential `for var in start..end` (or `..=end`) around a host-checked access, with invariant
    bounds (Rust computes them in `var`'s type, wrapping), the coefficient of `var` in the index, and where
    the loop's body starts in the evaluation order."""

    start: Terms
    end: Terms
    inclusive: bool
    ty: PrimType
    coefficient: Terms
    at: tuple[int, int]


@dataclass(frozen=True, slots=True)
class IndexForm:
    """The index of a host-checked access as the loop variables make it:
    rest + Σ axes[d] · (thread dimension d's variable) + Σ loops[k].coefficient · (loop k's variable),
    the thread dimensions outermost first, the sequential loops around the access outermost first. `at`
    is the access's place in the evaluation order (line, column; an assignment's place counts at the end of
    the assignment, after its value): within one iteration Rust makes the access at loop values
    y_0, y_1, ... in the order of (loops[0].at, y_0, loops[1].at, y_1, ..., at)."""

    rest: Terms
    axes: tuple[Terms, ...]
    loops: tuple[SequentialLoop, ...]
    at: tuple[int, int]


@dataclass(frozen=True, slots=True)
class BoundsCheck:
    """An access whose indices all lie in [low, high] over the whole iteration space: the runtime compares
    the ends with the slice's length before the launch (when every extent is non-zero). For an access every
    iteration performs, a violation is Rust's panic and the device code needs no check; for a conditional
    one (`ParallelLoop.guarded_bounds`), a violation only means that the launch must check it on the device.
    `low`, `high` and each of `extents` are sums of terms like `LaunchCheck.terms`, computed exactly; they are
    the real ones when each of `exact` (the bounds of the loops they depend on, which Rust computes in their
    types, wrapping) lies in its (low, high) range. `order` sorts the checks as Rust evaluates the accesses;
    `form` lets the runtime find the iteration where Rust's panic happens."""

    param: Binding
    low: Terms
    high: Terms
    extents: tuple[Terms, ...]
    span: Span
    order: tuple
    form: IndexForm
    exact: tuple[tuple[Terms, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class ListGather:
    """An access `param[scale * list[i + position] + offset]` that every iteration performs, through the list
    of an `IndexListCheck`: the list's verification checks its indices, so the loop's kernel does not."""

    param: Binding
    scale: int
    offset: tuple[tuple[int, tuple[Expr, ...]], ...]
    span: Span


@dataclass(frozen=True, slots=True)
class IndexListCheck:
    """A write `target[scale * list[i + position] + offset]`: race-free only if the list's values at
    the loop's positions are distinct, which the runtime verifies before the loop runs.
    `position` and `offset` are sums of terms like `LaunchCheck.terms`. `bounds` is the access whose panic
    the verification raises for a written index out of bounds (the write, or an access at its index, made
    in every iteration); None leaves that to the loop's own device check. `gathers` are the other accesses
    through the list that the verification checks."""

    list_param: Binding
    position: tuple[tuple[int, tuple[Expr, ...]], ...]
    scale: int
    offset: tuple[tuple[int, tuple[Expr, ...]], ...]
    target: Binding
    span: Span
    bounds: Span | None = None
    gathers: tuple[ListGather, ...] = ()


@dataclass(frozen=True, slots=True)
class ListRead:
    """An access `param[scale * list[i + position] + offset]` that the loop's kernel checks on the device:
    through a list no write of the loop goes through, or a conditional one. The launch may leave the check
    out when the list argument is a verified list (`rs2gpu.IndexList`) whose least and greatest values
    keep every such index in bounds."""

    param: Binding
    list_param: Binding
    scale: int
    offset: tuple[tuple[int, tuple[Expr, ...]], ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ScatterUpdate:
    """One update of a scatter target in the loop body, `target[e] op= value` (or `target[e] =
    target[e].min(value)`, ...): the emitter combines `value` into the element atomically. `op` is
    "-" for `-=`, which adds the negated value. `element` is the operand that reads the element in
    the forms that spell it twice (`t[e] = t[e].min(v)`): Rust checks that read's index first, before
    it evaluates `value` when `element_first`."""

    assign: ir.Assign
    op: str  # "+" | "-" | "*" | "min" | "max" | "&" | "|" | "^"
    value: Expr
    element: Expr | None = None
    element_first: bool = False


@dataclass(frozen=True, slots=True)
class Scatter:
    """A `&mut` slice that several iterations of a parallel loop may update at one element, and that
    the loop touches only through updates of one combining operation (`op`: "+" covers `+=` and `-=`),
    so the updates commute: exactly for integers, which wrap, up to rounding for floats."""

    param: Binding
    op: str
    updates: tuple[ScatterUpdate, ...]


@dataclass(frozen=True, slots=True)
class ParallelLoop:
    """One top-level range loop, or up to three directly nested ones with invariant bounds: one launch,
    one GPU thread per iteration of the (folded) iteration space. `dims` go from outermost to innermost."""

    dims: tuple[LoopDim, ...]
    body: Block
    reductions: tuple[Reduction, ...]
    launch_checks: tuple[LaunchCheck, ...]
    span: Span
    index_lists: tuple[IndexListCheck, ...] = ()
    bounds: tuple[BoundsCheck, ...] = ()
    hoisted: frozenset[NodeId] = frozenset()  # the ir.Index nodes (of `body`) the device never checks
    guarded_bounds: tuple[BoundsCheck, ...] = ()  # conditional accesses: all in bounds → the unchecked variant
    optional: frozenset[NodeId] = frozenset()  # the ir.Index nodes checked on the device only in the checked variant
    scatters: tuple[Scatter, ...] = ()
    uniforms: tuple[Binding, ...] = ()  # values of the host loops around it that it reads: launch arguments
    lets: tuple[Let, ...] = ()         # `let`s of the host loops around it only a thread can compute: recomputed
    list_reads: tuple[ListRead, ...] = ()  # accesses through index lists the device checks (see `ListRead`)
    listed: frozenset[NodeId] = frozenset()    # their ir.Index nodes


@dataclass(frozen=True, slots=True)
class HostLoop:
    """A sequential loop around parallel loops (time steps): the host runs `for var in start..end`, and
    in every iteration launches the loops of `body` in order, the data staying on the device. `body`
    holds indices into `KernelPlan.loops` and nested host loops; `lets` are the uniform `let`s at the
    top of its body, of which the host evaluates `host_lets` in every iteration (as Rust would, so a
    panic in one is raised there) and passes them to the launches that read them."""

    var: Binding
    start: Expr
    end: Expr
    inclusive: bool
    lets: tuple[Let, ...]
    body: tuple["int | HostLoop", ...]
    span: Span
    host_lets: tuple[Let, ...] = ()


@dataclass(frozen=True, slots=True)
class KernelPlan:
    function: Function
    preamble: tuple[Let, ...]
    loops: tuple[ParallelLoop, ...]
    params: tuple[ParamPlan, ...]
    result: Expr | None
    schedule: tuple[int | HostLoop, ...] = ()  # the launches in order: indices into `loops`, and host loops

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def host_loops(self) -> bool:
        return any(isinstance(step, HostLoop) for step in self.schedule)


@dataclass(frozen=True, slots=True)
class CheckedCrate:
    crate: Crate
    kernels: tuple[KernelPlan, ...]
