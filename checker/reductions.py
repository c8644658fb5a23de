"""Recognizing reductions: accumulators declared before a parallel loop and combined in it.

    let mut sum = 0.0;
    for i in 0..n { sum += a[i] * b[i]; }     // "+" reduction
    let mut m = f64::INFINITY;
    for i in 0..n { m = m.min(a[i]); }        // "min" reduction

Every update of the accumulator in the loop must use the one combining operation, and the loop may
not read it otherwise: then the iterations can be combined in any order (exactly for integers, up
to rounding for floats).
"""
from __future__ import annotations

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink, Note
from rs2gpu.ir.plan import Reduction
from rs2gpu.ir.types import BOOL, PrimType
from rs2gpu.ir.walk import same_value, walk

COMBINING_OPS = {"+", "*", "&", "|", "^"}
COMMUTATIVE_BINARY = {"+", "*", "&", "|", "^"}
# Method forms of the same combining operations (integer + and * wrap in a release build anyway).
_METHOD_OPS = {"min": "min", "max": "max", "wrapping_add": "+", "wrapping_mul": "*"}


def _update_op(assign: ir.Assign, acc: ir.Binding) -> tuple[str, ir.Expr] | None:
    """The combining operation and the combined value of `acc op= e` / `acc = acc op e` / `acc = acc.min(e)`."""
    if assign.op is not None:
        return (assign.op, assign.value) if assign.op in COMBINING_OPS else None
    v = assign.value
    if isinstance(v, ir.Binary) and v.op in COMMUTATIVE_BINARY:
        if _is_var(v.lhs, acc):
            return v.op, v.rhs
        if _is_var(v.rhs, acc):
            return v.op, v.lhs
    if isinstance(v, ir.Intrinsic) and v.name in _METHOD_OPS and len(v.args) == 2:
        op = _METHOD_OPS[v.name]
        if _is_var(v.args[0], acc):
            return op, v.args[1]
        if _is_var(v.args[1], acc):
            return op, v.args[0]
    return None


def _is_var(e: ir.Expr, b: ir.Binding) -> bool:
    return isinstance(e, ir.Var) and e.binding is b


def _location_update(node, accumulators: set[ir.Binding]):
    """`if e < m { m = e; loc = i; }` (and `<=`, `>`, `>=`, or `m > e`): a min/max-location reduction.
    Returns (Reduction, the ids of the nodes it accounts for) or None."""
    if not (isinstance(node, ir.If) and node.orelse is None and isinstance(node.cond, ir.Binary)
            and node.cond.op in ("<", "<=", ">", ">=") and node.then.tail is None and len(node.then.stmts) == 2):
        return None
    cond = node.cond
    first, second = node.then.stmts
    if not (isinstance(first, ir.Assign) and isinstance(second, ir.Assign) and first.op is None and second.op is None
            and isinstance(first.target, ir.Var) and isinstance(second.target, ir.Var)):
        return None
    if not (_is_var(cond.lhs, first.target.binding) or _is_var(cond.rhs, first.target.binding)):
        first, second = second, first  # the value's assignment is the one whose variable is compared
    value, loc = first.target.binding, second.target.binding
    if value not in accumulators or loc not in accumulators:
        return None
    op = cond.op
    if _is_var(cond.rhs, value) and same_value(cond.lhs, first.value):
        candidate = cond.lhs
    elif _is_var(cond.lhs, value) and same_value(cond.rhs, first.value):
        candidate = cond.rhs
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]  # m > e is e < m
    else:
        return None
    if any(_is_var(n, value) or _is_var(n, loc) for n in (*walk(candidate), *walk(second.value))):
        return None
    kind = "minloc" if op in ("<", "<=") else "maxloc"
    handled = {id(n) for n in walk(node)}
    return Reduction(value, kind, node.span, loc, op in ("<", ">")), handled


def find_reductions(loop: ir.For, accumulators: set[ir.Binding], sink: DiagnosticSink) -> tuple[Reduction, ...]:
    found: dict[ir.Binding, Reduction] = {}
    # by `id()`: marks on nodes of `loop.body` (which keeps them alive) for the walks below, never kept; the
    # variables among them have no `node_id`
    update_reads: set[int] = set()
    for node in walk(loop.body):
        located = _location_update(node, accumulators)
        if located is not None:
            reduction, handled = located
            found[reduction.binding] = reduction
            found[reduction.location] = reduction
            update_reads |= handled
    for node in walk(loop.body):
        if id(node) in update_reads:
            continue
        if not (isinstance(node, ir.Assign) and isinstance(node.target, ir.Var)
                and node.target.binding in accumulators):
            continue
        acc = node.target.binding
        # An update is either accepted or reported below: its own uses of `acc` are not reads to report again.
        update_reads.update(id(n) for n in walk(node) if _is_var(n, acc))
        update = _update_op(node, acc)
        if update is None:
            sink.error("RG0104", f"`{acc.name}` is assigned in a parallel loop but not as a reduction", node.span,
                       "not a `+=`, `*=`, `&=`, `|=`, `^=`, `.min()` or `.max()` update",
                       help="iterations run in parallel; a variable from outside the loop can only accumulate")
            continue
        op, value = update
        if any(_is_var(n, acc) for n in walk(value)):
            sink.error("RG0104", f"the update of `{acc.name}` reads `{acc.name}` again", node.span,
                       help="the combined value must not depend on the accumulator")
            continue
        previous = found.get(acc)
        if previous is not None and previous.op != op:
            sink.error("RG0104", f"`{acc.name}` is combined with both `{previous.op}` and `{op}`", node.span,
                       notes=(Note("first combined here", previous.span),),
                       help="use one combining operation per accumulator")
            continue
        if not _reducible_type(acc.ty, op):
            sink.error("RG0104", f"cannot reduce a `{acc.ty}` with `{op}` on the GPU", node.span,
                       help="reduce a `u32` flag instead, `let mut ok = 1u32; ... ok &= c as u32;`, and return "
                            "`ok != 0`" if acc.ty == BOOL else
                       "reductions work on 32- and 64-bit integers and floats (and `&`, `|`, `^` on integers)")
            continue
        found.setdefault(acc, Reduction(acc, op, node.span))
    for node in walk(loop.body):
        if isinstance(node, ir.Var) and node.binding in found and id(node) not in update_reads:
            sink.error("RG0104", f"`{node.binding.name}` is read inside the parallel loop that reduces it",
                       node.span, "its value here depends on the order of the iterations",
                       help="read the reduced value after the loop")
    return tuple(dict.fromkeys(found.values()))


def _reducible_type(ty, op: str) -> bool:
    if not isinstance(ty, PrimType) or ty.bits < 32:
        return False
    if op in ("&", "|", "^"):
        return ty.is_int
    return ty.is_int or ty.is_float
