"""The transfer plan: which way each parameter's data must travel for one call.

    &[T], &[T; N], &S      → "in"     host → device, never copied back
    small &[T; N] read at  → "value"  in the launch arguments, no device memory (see `by_value`)
      shared indices
    &mut [T] written       → "inout"  both ways, or "out" when every element is written before any
                                      read, so the old contents are never needed
    &mut [T] scattered     → "inout"  `out[k] += v` reads the old value, whatever the indices
    &mut [T] never written → "in"
    scalars and structs    → "value"  in the launch arguments
"""
from __future__ import annotations

from rs2gpu.checker.races import LoopAccesses
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import ParamPlan
from rs2gpu.ir.types import RefType
from rs2gpu.ir.walk import walk


def plan_transfers(fn: ir.Function, loops: list[tuple[ir.For | None, LoopAccesses]],
                   by_value: dict[ir.Binding, str], scattered: set[ir.Binding] = frozenset()) -> tuple[ParamPlan, ...]:
    """`loops` pairs each parallel loop's accesses with the loop itself when it is one-dimensional (the
    only shape whose coverage of a whole slice is recognised; others keep the old contents);
    `by_value` names the arrays passed in the launch arguments, with the reason; `scattered` are the
    scatter targets of some loop."""
    plans = []
    for p in fn.params:
        if not isinstance(p.ty, RefType):
            plans.append(ParamPlan(p, "value", False, "passed by value"))
            continue
        if p in by_value:
            plans.append(ParamPlan(p, "value", False, by_value[p]))
            continue
        writes = [(loop, w) for loop, acc in loops for w in acc.writes if w.param is p]
        reads = [r for _, acc in loops for r in acc.reads if r.param is p]
        if p in scattered:
            plans.append(ParamPlan(p, "inout", True, "updated by several iterations (atomics read the old values)"))
        elif not p.ty.mutable or not writes:
            plans.append(ParamPlan(p, "in", False, "only read" if p.ty.mutable else "shared reference"))
        elif not reads and any(loop is not None and _covers_whole_slice(loop, w) for loop, w in writes):
            plans.append(ParamPlan(p, "out", True, "every element written, none read: never uploaded"))
        else:
            why = "read and written" if reads else "not every element is provably written"
            plans.append(ParamPlan(p, "inout", True, why))
    return tuple(plans)


def _covers_whole_slice(loop: ir.For, write) -> bool:
    """`for i in 0..p.len() { p[i] = ... }` with the write unconditional at the top of the body."""
    starts_at_zero = isinstance(loop.start, ir.Lit) and loop.start.value == 0 and not loop.inclusive
    end = loop.end
    ends_at_len = isinstance(end, ir.Intrinsic) and end.name == "len" and isinstance(end.args[0], ir.Var) \
        and end.args[0].binding is write.param
    at_index = isinstance(write.index, ir.Var) and write.index.binding is loop.var
    top_level = any(isinstance(s, ir.Assign) and s.span == write.span for s in loop.body.stmts)
    exits_early = any(isinstance(n, (ir.Continue, ir.Break, ir.Return)) for n in walk(loop.body))
    return starts_at_zero and ends_at_len and at_index and top_level and not write.conditional and not exits_early
