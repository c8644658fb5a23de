"""IR → checked IR: which loops run in parallel, proofs that they cannot race, and the transfer plan.

`check_crate(crate)` returns a `CheckedCrate` with one `KernelPlan` per kernel that passed, and the
diagnostics explaining every kernel that did not.
"""
from __future__ import annotations

from rs2gpu.checker.affine import Affine, AffineAnalysis, LoopVar, constant
from rs2gpu.checker.bounds import IndexListWrite, plan_bounds
from rs2gpu.checker.by_value import arrays_by_value
from rs2gpu.checker.races import Nest, check_carried, check_exits, check_reads, check_writes, collect_accesses, private_definitions
from rs2gpu.checker.reductions import find_reductions
from rs2gpu.checker.scatters import find_scatters
from rs2gpu.checker.structure import split_kernel
from rs2gpu.checker.transfers import plan_transfers
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink, Note
from rs2gpu.ir.plan import (CheckedCrate, HostLoop, IndexListCheck, KernelPlan, LaunchCheck, LoopDim, ParallelLoop,
                            is_host_evaluable)
from rs2gpu.ir.walk import walk


def check_crate(crate: ir.Crate) -> tuple[CheckedCrate, DiagnosticSink]:
    sink = DiagnosticSink()
    plans = []
    functions = {f.name: f for f in crate.functions}
    consts = {c.name: c.value for c in crate.consts}
    for fn in crate.kernels:
        before = len(sink.items)
        plan = check_kernel(fn, sink, functions, consts)
        if len(sink.items) == before or not any(d.severity == "error" for d in sink.items[before:]):
            plans.append(plan)
    return CheckedCrate(crate, tuple(plans)), sink


MAX_DIMS = 3


def fold_nest(loop: ir.For, uniform: set[ir.Binding]) -> Nest:
    """`loop` and the range loops directly inside it (the whole body, nothing else) whose bounds do not
    depend on the outer variables: they become one 2-D or 3-D launch."""
    dims = [loop]
    while len(dims) < MAX_DIMS:
        body = dims[-1].body
        inner = body.tail if not body.stmts else (
            body.stmts[0].expr if len(body.stmts) == 1 and body.tail is None and isinstance(body.stmts[0], ir.ExprStmt)
            else None)
        if not isinstance(inner, ir.For):
            break
        outer_vars = {d.var for d in dims}
        if any(isinstance(n, ir.Var) and (n.binding in outer_vars or n.binding not in uniform and
                                          n.binding.kind != "param")
               for bound in (inner.start, inner.end) for n in walk(bound)):
            break
        dims.append(inner)
    return Nest(tuple(dims))


def _loop_vars(nest: Nest, analysis: AffineAnalysis) -> list[LoopVar]:
    """The thread dimensions, then every sequential loop inside the body, with their extents (None
    where a bound is not invariant, e.g. a triangular `for k in 0..i`)."""
    out = [LoopVar(d.var, analysis.extent(d.start, d.end, d.inclusive), True) for d in nest.dims]
    for node in walk(nest.body):
        if isinstance(node, ir.For):
            out.append(LoopVar(node.var, analysis.extent(node.start, node.end, node.inclusive), False))
    return out


def check_kernel(fn: ir.Function, sink: DiagnosticSink, functions: dict[str, ir.Function] | None = None,
                 consts: dict[str, ir.Expr] | None = None) -> KernelPlan:
    shape = split_kernel(fn, sink)
    outer = set(fn.params) | {s.binding for s in shape.preamble} | set(shape.accumulators) | shape.uniform
    host_values = shape.host_values
    reduced_somewhere: dict[ir.Binding, ir.For] = {}
    loops, accesses_per_loop, scattered = [], [], set()
    for loop, around in zip(shape.loops, shape.around):
        nest = fold_nest(loop, set(shape.uniform))
        for d in nest.dims:
            _check_bounds_on_host(d, host_values, sink)
        innermost = nest.dims[-1]
        accesses = collect_accesses(innermost, outer, functions)
        analysis = AffineAnalysis([], set(shape.uniform), private_definitions(innermost), functions, consts)
        analysis.set_loop_vars(_loop_vars(nest, analysis))
        scatters, refusals = find_scatters(nest, accesses, analysis)
        scattered |= {s.param for s in scatters}
        others = accesses.without({s.param for s in scatters})
        forms, checks, index_lists = check_writes(nest, others, analysis, sink, refusals)
        index_lists = _one_per_target(index_lists)
        check_reads(nest, others, forms, analysis, sink, checks, refusals)
        reductions = find_reductions(innermost, set(shape.accumulators), sink)
        if around and reductions:
            sink.error("RG0104", f"`{reductions[0].binding.name}` is reduced in a parallel loop inside a host loop",
                       reductions[0].span, notes=(Note(f"the host loop over `{around[0].loop.var.name}` starts here",
                                                       around[0].loop.span),),
                       help="reductions across the iterations of a host loop are not supported: reduce in a "
                            "kernel without the host loop, called after this one")
        for r in reductions:
            if r.binding in reduced_somewhere:
                sink.error("RG0104", f"`{r.binding.name}` is reduced in two parallel loops", r.span,
                           help="use one accumulator per loop and combine them in the result")
            reduced_somewhere[r.binding] = loop
        check_carried(innermost, accesses, set(shape.accumulators), sink)
        check_exits(innermost, sink)
        dims = tuple(LoopDim(d.var, d.start, d.end, d.inclusive, d.span) for d in nest.dims)
        launch_checks = tuple(_launch_check(poly, span, analysis) for poly, span in dict.fromkeys(checks))
        writes = [IndexListWrite(g.key, target, Affine(((g.key, constant(scale)),), offset))
                  for g, scale, offset, target, _ in index_lists]
        where = plan_bounds(innermost.body, analysis, nest.dims, writes)
        lists = tuple(IndexListCheck(g.list_param, _terms(g.offset, analysis), scale, _terms(offset, analysis),
                                     target, span, where.list_bounds[k], tuple(where.list_gathers[k]))
                      for k, (g, scale, offset, target, span) in enumerate(index_lists))
        uniforms, lets = _host_loop_values(innermost, around, host_values)
        loops.append(ParallelLoop(dims, innermost.body, reductions, launch_checks, loop.span, lists,
                                  tuple(sorted(where.bounds, key=lambda c: c.order)), frozenset(where.hoisted),
                                  tuple(where.guarded), frozenset(where.optional), tuple(scatters), uniforms, lets,
                                  tuple(where.list_reads), frozenset(where.listed)))
        # a loop inside a host loop may run zero times: its writes never make an upload unnecessary
        accesses_per_loop.append((loop if len(nest.dims) == 1 and not around else None, accesses))
    for acc, let in shape.accumulators.items():
        if acc not in reduced_somewhere:
            continue
        for other in shape.loops:
            if other is not reduced_somewhere[acc] and _mentions(other, acc):
                sink.error("RG0104", f"`{acc.name}` is used in a later parallel loop than the one that reduces it",
                           other.span, help="return the reduced value, and pass it to a second kernel call")
    by_value = arrays_by_value(fn, [loop.body for loop in loops], set(shape.uniform))
    params = plan_transfers(fn, accesses_per_loop, by_value, scattered)
    schedule = tuple(_host_loop(step, host_values, sink) for step in shape.schedule)
    return KernelPlan(fn, tuple(shape.preamble), tuple(loops), params, shape.result, schedule)


def _one_per_target(index_lists: list) -> list:
    """The first write of each slice written through an index list: `check_writes` rejects two writes of
    one slice at different indices, so later writes of the slice are at the same list value in the same
    iteration, which a verification of the first covers (verifying each would take the one value the
    iteration writes twice for a repeat)."""
    first: dict = {}
    for entry in index_lists:
        first.setdefault(entry[3], entry)  # (gather, scale, offset, target, span)
    return list(first.values())


def _host_loop(step, host_values, sink: DiagnosticSink):
    """A schedule step of the plan: a launch's index as it is, a host loop with its bounds checked."""
    if isinstance(step, int):
        return step
    _check_bounds_on_host(step.loop, host_values, sink)
    loop = step.loop
    return HostLoop(loop.var, loop.start, loop.end, loop.inclusive, tuple(step.lets),
                    tuple(_host_loop(s, host_values, sink) for s in step.body), loop.span,
                    tuple(let for let in step.lets if let.binding in host_values))


def _host_loop_values(loop: ir.For, around, host_values) -> tuple[tuple[ir.Binding, ...], tuple[ir.Let, ...]]:
    """What a launch in the host loops `around` gets of their values: the variables and host-evaluated
    `let`s its body reads (directly or through the other `let`s), as arguments, and the `let`s only a
    thread can compute, to recompute. Its bounds are the host's: the launch gets the iteration space."""
    lets = [let for host in around for let in host.lets]
    used = {n.binding for n in walk(loop.body) if isinstance(n, ir.Var)}
    for let in reversed(lets):
        if let.binding in used and let.binding not in host_values:
            used |= {n.binding for n in walk(let.init) if isinstance(n, ir.Var)}
    values = [b for host in around for b in (host.loop.var, *(let.binding for let in host.lets))]
    return (tuple(b for b in values if b in used and b in host_values),
            tuple(let for let in lets if let.binding in used and let.binding not in host_values))


def _terms(poly, analysis: AffineAnalysis) -> tuple:
    """A polynomial over invariant atoms as (coefficient, factors) with the atoms' IR expressions."""
    return tuple((coefficient, tuple(analysis.atoms[atom] for atom in monomial)) for monomial, coefficient in poly)


def _launch_check(poly, span, analysis: AffineAnalysis) -> LaunchCheck:
    return LaunchCheck(_terms(poly, analysis), span)


def _check_bounds_on_host(loop: ir.For, host_values, sink: DiagnosticSink) -> None:
    """Launch geometry is decided on the host, so it must be able to evaluate every bound."""
    for bound in (loop.start, loop.end):
        if not is_host_evaluable(bound, host_values):
            sink.error("RG0106", "the bounds of a parallel loop must be computable before the launch", bound.span,
                       "the host cannot evaluate this bound",
                       help="use parameters, slice lengths, constants and arithmetic on them")


def _mentions(node, binding) -> bool:
    from rs2gpu.ir.walk import walk
    return any(isinstance(n, ir.Var) and n.binding is binding for n in walk(node))


__all__ = ["check_crate", "check_kernel"]
