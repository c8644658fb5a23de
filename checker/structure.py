"""Splitting a kernel body into its uniform preamble, parallel loops and result.

Input: an `ir.Function` marked as a kernel. Output: the preamble `let`s (values every GPU thread can
recompute from the parameters), the top-level range loops (each one launch), reduction variables,
and the tail expression the host evaluates after the last launch.

    let n = a.len();          // preamble: uniform
    let mut sum = 0.0;        // reduction variable (updated with += in a loop)
    for i in 0..n { ... }     // parallel loop
    sum                       // result, evaluated on the host
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink
from rs2gpu.ir.plan import is_host_evaluable
from rs2gpu.ir.types import PrimType, RefType, StructType
from rs2gpu.ir.walk import walk



@dataclass
class KernelShape:
    preamble: list[ir.Let] = field(default_factory=list)
    accumulators: dict[ir.Binding, ir.Let] = field(default_factory=dict)
    loops: list[ir.For] = field(default_factory=list)
    result: ir.Expr | None = None
    uniform: set[ir.Binding] = field(default_factory=set)


def split_kernel(fn: ir.Function, sink: DiagnosticSink) -> KernelShape:
    shape = KernelShape()
    shape.uniform = {p for p in fn.params if _is_uniform_param(p)}
    assigned_later = _assigned_in_loops(fn.body)
    for stmt in fn.body.stmts:
        if isinstance(stmt, ir.Let):
            _top_level_let(stmt, shape, assigned_later, sink)
        elif isinstance(stmt, ir.ExprStmt) and isinstance(stmt.expr, ir.For):
            shape.loops.append(stmt.expr)
        else:
            sink.error("RG0107", "kernels run statements only inside parallel loops", stmt.span,
                       "this statement is outside any `for` loop",
                       help="put the work inside a top-level `for i in 0..n` loop; statements before the "
                            "loops may only be `let`s of values computed from the parameters")
    tail = fn.body.tail
    if isinstance(tail, ir.For):
        shape.loops.append(tail)
    elif tail is not None:
        shape.result = tail
        _check_result(tail, shape, sink)
    if not shape.loops:
        sink.error("RG0107", f"kernel `{fn.source_name}` has no parallel loop", fn.span,
                   "no top-level `for` loop here",
                   help="a kernel's work is a top-level `for i in 0..n` loop; each one becomes a GPU launch")
    return shape


def _top_level_let(stmt: ir.Let, shape: KernelShape, assigned_later: set[ir.Binding], sink: DiagnosticSink) -> None:
    b = stmt.binding
    if b in assigned_later:
        if stmt.init is None or not is_host_evaluable(stmt.init, {s.binding for s in shape.preamble}, elements=True):
            sink.error("RG0104", f"the initial value of `{b.name}` must be computed from the parameters",
                       stmt.span, help="start a reduction from a constant, a parameter, or one element such as `x[0]`")
        shape.accumulators[b] = stmt
        return
    if not isinstance(b.ty, PrimType):
        sink.error("RG0107", f"`{b.name}` of type `{b.ty}` cannot be declared outside a parallel loop",
                   stmt.span, help="values before the loops are scalars; declare arrays inside the loop")
        return
    if stmt.init is None or not is_uniform(stmt.init, shape.uniform):
        sink.error("RG0107", f"`{b.name}` must be computable from the parameters alone", stmt.span,
                   "this reads data that only a GPU thread can see",
                   help="move this `let` inside the parallel loop")
        return
    shape.preamble.append(stmt)
    shape.uniform.add(b)


def _is_uniform_param(p: ir.Binding) -> bool:
    return isinstance(p.ty, (PrimType, StructType)) or (isinstance(p.ty, RefType) and not p.ty.mutable)


def _assigned_in_loops(body: ir.Block) -> set[ir.Binding]:
    out = set()
    for node in walk(body):
        if isinstance(node, ir.Assign) and isinstance(node.target, ir.Var):
            out.add(node.target.binding)
    return out


def is_uniform(expr: ir.Expr, uniform: set[ir.Binding]) -> bool:
    """True when every thread computes the same value: no element reads, no thread-local state."""
    for node in walk(expr):
        if isinstance(node, ir.Var):
            b = node.binding
            if b not in uniform and not (b.kind == "param" and isinstance(b.ty, RefType)):
                return False
        elif isinstance(node, ir.Index):
            return False
        elif isinstance(node, (ir.For, ir.While, ir.Loop, ir.Break, ir.Continue, ir.Return, ir.Assign)):
            return False
    return True


def _check_result(tail: ir.Expr, shape: KernelShape, sink: DiagnosticSink) -> None:
    host_values = set(shape.accumulators) | {b.binding for b in shape.preamble}
    if not is_host_evaluable(tail, host_values):
        sink.error("RG0107", "the kernel's result must be computed from reductions and parameters", tail.span,
                   "computed on the host after the last launch",
                   help="return reduction variables, or arithmetic on them and on the parameters")
