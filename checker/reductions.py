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
from rs2gpu.ir.types import PrimType
from rs2gpu.ir.walk import walk

COMBINING_OPS = {"+", "*", "&", "|", "^"}
COMMUTATIVE_BINARY = {"+", "*", "&", "|", "^"}


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
    if isinstance(v, ir.Intrinsic) and v.name in ("min", "max") and len(v.args) == 2:
        if _is_var(v.args[0], acc):
            return v.name, v.args[1]
        if _is_var(v.args[1], acc):
            return v.name, v.args[0]
    return None


def _is_var(e: ir.Expr, b: ir.Binding) -> bool:
    return isinstance(e, ir.Var) and e.binding is b


def find_reductions(loop: ir.For, accumulators: set[ir.Binding], sink: DiagnosticSink) -> tuple[Reduction, ...]:
    found: dict[ir.Binding, Reduction] = {}
    update_reads: set[int] = set()
    for node in walk(loop.body):
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
                       help="reductions work on 32- and 64-bit integers and floats (and `&`, `|`, `^` on integers)")
            continue
        found.setdefault(acc, Reduction(acc, op, node.span))
    for node in walk(loop.body):
        if isinstance(node, ir.Var) and node.binding in found and id(node) not in update_reads:
            sink.error("RG0104", f"`{node.binding.name}` is read inside the parallel loop that reduces it",
                       node.span, "its value here depends on the order of the iterations",
                       help="read the reduced value after the loop")
    return tuple(found.values())


def _reducible_type(ty, op: str) -> bool:
    if not isinstance(ty, PrimType) or ty.bits < 32:
        return False
    if op in ("&", "|", "^"):
        return ty.is_int
    return ty.is_int or ty.is_float
