"""Where each index is checked against its slice's length: on the host before the launch, or on the device.

Rust panics on an out-of-bounds index. An access whose index is affine in the loop variables, and that
every iteration performs (not under an `if`, a `match`, a `while`, or after a `continue`), spans a range
whose ends are polynomials in the parameters: the runtime evaluates them before launching and raises the
panic Rust would raise, so the device code needs no check at all. Every other access (gathers through
an index list, conditional accesses, accesses in helper functions) is checked on the device, which
records the first violation for the host to raise after the launch.
"""
from __future__ import annotations

from rs2gpu.checker.affine import Affine, AffineAnalysis, Poly, add, constant, mul, sub
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import BoundsCheck
from rs2gpu.ir.types import USIZE, RefType
from rs2gpu.ir.walk import children, walk


def _param_index(node) -> bool:
    return isinstance(node, ir.Index) and isinstance(node.base, ir.Var) and node.base.binding.kind == "param" \
        and isinstance(node.base.ty, RefType)


def unconditional_indices(body: ir.Block) -> list[tuple[ir.Index, tuple]]:
    """The parameter accesses every iteration performs, with a key that orders them as Rust evaluates
    them (an assignment's value before its place). Empty if the body can skip ahead."""
    if any(isinstance(n, (ir.Continue, ir.Break, ir.Return)) for n in walk(body)):
        return []
    found: list[tuple[ir.Index, tuple]] = []

    def visit(node, order: tuple) -> None:
        if isinstance(node, (ir.If, ir.Match, ir.While, ir.Loop)):
            cond = node.cond if isinstance(node, (ir.If, ir.While)) else getattr(node, "scrutinee", None)
            if cond is not None and not isinstance(node, ir.While):
                visit(cond, order)
            return
        if isinstance(node, ir.Assign):
            visit(node.value, order)
            end = (node.span.end_line, node.span.end_col)
            visit(node.target, end)
            return
        if _param_index(node):
            found.append((node, order or (node.span.line, node.span.col)))
        for child in children(node):
            visit(child, order)

    visit(body, ())
    return found


def hoist_bounds(body: ir.Block, analysis: AffineAnalysis, dims) -> tuple[list[BoundsCheck], frozenset]:
    """Host checks for the accesses whose range can be computed, and the set of those accesses (the
    emitter checks every other access on the device)."""
    starts = {id(d.var): analysis.form(d.start) for d in dims}
    for node in walk(body):
        if isinstance(node, ir.For):
            starts[id(node.var)] = analysis.form(node.start)
    checks, hoisted = [], set()
    for index, order in unconditional_indices(body):
        bounds = _range(analysis.form(index.index), analysis, starts)
        if bounds is None:
            continue
        low, high, extents = bounds
        hoisted.add(id(index))
        if _provably_inside(low, high, index.base.binding, analysis):
            continue  # e.g. a[i] for i in 0..a.len(): no check at all, on either side
        terms = analysis_terms(analysis)
        checks.append(BoundsCheck(index.base.binding, terms(low), terms(high), tuple(terms(e) for e in extents),
                                  index.span, order, _step(analysis.form(index.index), analysis)))
    checks.sort(key=lambda c: c.order)
    return checks, frozenset(hoisted)


def _range(form: Affine | None, analysis: AffineAnalysis, starts: dict) -> tuple[Poly, Poly, list[Poly]] | None:
    """The lowest and highest index over all iterations, and the extents that must be non-zero for
    the access to happen at all."""
    if form is None:
        return None
    low = high = form.rest
    extents = []
    coeffs = dict(form.coeffs)
    if any(k not in analysis.loop_vars for k in coeffs):
        return None
    for var_id in [k for k in analysis.loop_vars if k in coeffs]:  # loop order, the same on every run
        coeff = coeffs[var_id]
        var = analysis.loop_vars.get(var_id)
        start = starts.get(var_id)
        if var is None or var.extent is None or start is None or start.coeffs:
            return None
        signs = {k > 0 for _, k in coeff}
        atoms_known = all(a in analysis.non_negative for m, _ in coeff for a in m)
        if len(signs) != 1 or not atoms_known:
            return None
        first = mul(coeff, start.rest)
        last = mul(coeff, add(start.rest, sub(var.extent, constant(1))))
        if signs == {False}:
            first, last = last, first
        low, high = add(low, first), add(high, last)
        extents.append(var.extent)
    return low, high, extents


def _provably_inside(low: Poly, high: Poly, param: ir.Binding, analysis: AffineAnalysis) -> bool:
    """low ≥ 0 and len(param) − 1 − high ≥ 0 for every value of the parameters."""
    length = analysis.form(ir.Intrinsic("len", (ir.Var(param, param.span),), USIZE, param.span))
    if length is None:
        return False
    room = sub(sub(length.rest, constant(1)), high)
    return analysis.proven_non_negative(low) and analysis.proven_non_negative(room)


def _step(form: Affine, analysis: AffineAnalysis) -> int | None:
    """The distance between consecutive indices in iteration order: c for `c * i + d`, and 1 for a
    row-major index whose strides are exactly the products of the inner extents (`j * w + i`, i < w).
    With it the runtime reports the first out-of-bounds index, as Rust's panic does."""
    from rs2gpu.checker.affine import constant_value

    if len(form.coeffs) == 1:
        c = constant_value(form.coeffs[0][1])
        return c if c is not None and c > 0 else None
    remaining = dict(form.coeffs)
    stride = constant(1)
    while remaining:
        match = next((k for k, c in remaining.items() if c == stride), None)
        var = analysis.loop_vars.get(match)
        if match is None or var is None or var.extent is None:
            return None
        del remaining[match]
        stride = mul(stride, var.extent)
    return 1


def analysis_terms(analysis: AffineAnalysis):
    def terms(poly: Poly):
        return tuple((coefficient, tuple(analysis.atoms[a] for a in monomial)) for monomial, coefficient in poly)
    return terms
