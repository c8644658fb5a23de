"""IR → checked IR: which loops run in parallel, proofs that they cannot race, and the transfer plan.

`check_crate(crate)` returns a `CheckedCrate` with one `KernelPlan` per kernel that passed, and the
diagnostics explaining every kernel that did not.
"""
from __future__ import annotations

from rs2gpu.checker.affine import AffineAnalysis
from rs2gpu.checker.races import check_carried, check_exits, check_reads, check_writes, collect_accesses, private_definitions
from rs2gpu.checker.reductions import find_reductions
from rs2gpu.checker.structure import split_kernel
from rs2gpu.checker.transfers import plan_transfers
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink
from rs2gpu.ir.plan import CheckedCrate, KernelPlan, ParallelLoop, is_host_evaluable


def check_crate(crate: ir.Crate) -> tuple[CheckedCrate, DiagnosticSink]:
    sink = DiagnosticSink()
    plans = []
    for fn in crate.kernels:
        before = len(sink.items)
        plan = check_kernel(fn, sink)
        if len(sink.items) == before or not any(d.severity == "error" for d in sink.items[before:]):
            plans.append(plan)
    return CheckedCrate(crate, tuple(plans)), sink


def check_kernel(fn: ir.Function, sink: DiagnosticSink) -> KernelPlan:
    shape = split_kernel(fn, sink)
    outer = set(fn.params) | {s.binding for s in shape.preamble} | set(shape.accumulators)
    host_values = {s.binding for s in shape.preamble}
    reduced_somewhere: dict[ir.Binding, ir.For] = {}
    loops, accesses_per_loop = [], []
    for loop in shape.loops:
        _check_bounds_on_host(loop, host_values, sink)
        accesses = collect_accesses(loop, outer)
        analysis = AffineAnalysis(loop.var, set(shape.uniform), private_definitions(loop))
        forms = check_writes(loop, accesses, analysis, sink)
        check_reads(loop, accesses, forms, analysis, sink)
        reductions = find_reductions(loop, set(shape.accumulators), sink)
        for r in reductions:
            if r.binding in reduced_somewhere:
                sink.error("RG0104", f"`{r.binding.name}` is reduced in two parallel loops", r.span,
                           help="use one accumulator per loop and combine them in the result")
            reduced_somewhere[r.binding] = loop
        check_carried(loop, accesses, set(shape.accumulators), sink)
        check_exits(loop, sink)
        loops.append(ParallelLoop(loop.var, loop.start, loop.end, loop.inclusive, loop.body, reductions, loop.span))
        accesses_per_loop.append((loop, accesses))
    for acc, let in shape.accumulators.items():
        if acc not in reduced_somewhere:
            continue
        for other in shape.loops:
            if other is not reduced_somewhere[acc] and _mentions(other, acc):
                sink.error("RG0104", f"`{acc.name}` is used in a later parallel loop than the one that reduces it",
                           other.span, help="return the reduced value, and pass it to a second kernel call")
    params = plan_transfers(fn, accesses_per_loop)
    return KernelPlan(fn, tuple(shape.preamble), tuple(loops), params, shape.result)


def _check_bounds_on_host(loop: ir.For, host_values, sink: DiagnosticSink) -> None:
    for bound in (loop.start, loop.end):
        if not is_host_evaluable(bound, host_values):
            sink.error("RG0106", "the bounds of a parallel loop must be computable before the launch", bound.span,
                       "the host cannot evaluate this bound",
                       help="use parameters, slice lengths, constants and arithmetic on them")


def _mentions(node, binding) -> bool:
    from rs2gpu.ir.walk import walk
    return any(isinstance(n, ir.Var) and n.binding is binding for n in walk(node))


__all__ = ["check_crate", "check_kernel"]
