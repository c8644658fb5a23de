"""Where each index is checked against its slice's length: on the host before the launch, or on the device.

Rust panics on an out-of-bounds index. An index that is affine in the loop variables spans a range whose
ends are polynomials in the parameters, which the host evaluates before launching:
- an access every iteration performs (not under an `if`, a `match`, a `while` or `loop`, nor on the right
  of `&&`/`||`, nor after a `continue` that may skip it): if its range leaves the slice, Rust panics, so
  the host raises that panic and the device code needs no check at all;
- a conditional access: a range that leaves the slice does not mean Rust panics, since the branch may
  never be taken there. Its range is a *guarded* check: when every guarded range of a launch is in
  bounds, the launch runs the loop's variant without those checks; otherwise it runs the variant that
  checks them on the device. A conditional access at the index of an earlier unconditional access of
  the same slice needs neither, the earlier one's host check covers it.
Accesses through the index list a loop writes through (`x[list[ii] + c]` while writing `out[list[ii]]`)
are checked from the list's values by the loop's own checks of the list (`emit.verify`). Other accesses
through an index list are checked on the device, unless the list argument is a verified list whose least
and greatest values the host finds keeping them in bounds (`ListRead`). Every other access (indices of
mutable locals, accesses in helper functions) is checked on the device, which records the first violation
for the host to raise after the launch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rs2gpu.checker.affine import Affine, AffineAnalysis, Poly, add, constant, constant_value, mul, sub
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import BoundsCheck, IndexForm, ListGather, ListRead, SequentialLoop
from rs2gpu.ir.types import USIZE, RefType
from rs2gpu.ir.walk import children, walk


def _param_index(node) -> bool:
    return isinstance(node, ir.Index) and isinstance(node.base, ir.Var) and node.base.binding.kind == "param" \
        and isinstance(node.base.ty, RefType)


@dataclass(frozen=True)
class ParamAccess:
    """One `p[index]` of a slice parameter in a loop body. `order` sorts the accesses as Rust evaluates
    them (an assignment's value before its place); `every_iteration` is false when the access is
    conditional; `loops` are the sequential `for` loops around it, innermost last."""

    node: ir.Index
    order: tuple
    every_iteration: bool
    loops: tuple[ir.Binding, ...]


def param_accesses(body: ir.Block) -> list[ParamAccess]:
    """Every access to a slice parameter in `body`, in evaluation order."""
    found: list[ParamAccess] = []
    skipped = [False]  # per loop level, innermost last: a `continue` or `break` of that loop may have run
    loops: list[ir.Binding] = []

    def visit(node, order: tuple, conditional: bool) -> None:
        if isinstance(node, (ir.Continue, ir.Break)):
            for child in children(node):
                visit(child, order, conditional)
            skipped[-1] = True
            return
        if isinstance(node, (ir.If, ir.Match)):
            first = node.cond if isinstance(node, ir.If) else node.scrutinee
            visit(first, order, conditional)
            for child in children(node):
                if child is not first:
                    visit(child, order, True)
            return
        if isinstance(node, ir.Binary) and node.op in ("&&", "||"):
            visit(node.lhs, order, conditional)
            visit(node.rhs, order, True)
            return
        if isinstance(node, (ir.For, ir.While, ir.Loop)):
            if isinstance(node, ir.For):
                visit(node.start, order, conditional)
                visit(node.end, order, conditional)
                loops.append(node.var)
            skipped.append(False)
            # a `break` may end the loop before its later iterations make any of its body's accesses
            repeated = isinstance(node, ir.For) and not _breaks(node.body)
            for child in ([node.body] if isinstance(node, ir.For) else children(node)):
                visit(child, order, conditional or not repeated)
            skipped.pop()
            if isinstance(node, ir.For):
                loops.pop()
            return
        if isinstance(node, ir.Assign):
            visit(node.value, order, conditional)
            visit(node.target, (node.span.end_line, node.span.end_col), conditional)
            return
        if _param_index(node):
            found.append(ParamAccess(node, order or (node.span.line, node.span.col),
                                     not conditional and not any(skipped), tuple(loops)))
        for child in children(node):
            visit(child, order, conditional)

    visit(body, (), False)
    return found


def _breaks(body: ir.Block) -> bool:
    """Whether a `break` of the loop whose body this is (not of a loop inside it) occurs in `body`."""
    def visit(node) -> bool:
        if isinstance(node, ir.Break):
            return True
        if isinstance(node, (ir.For, ir.While, ir.Loop)):
            return False
        return any(visit(child) for child in children(node))
    return visit(body)


@dataclass(frozen=True)
class IndexListWrite:
    """A write `target[scale * list[i + position] + offset]` whose list the runtime verifies; `key` names
    the list value (`Gather.key`) in affine forms."""

    key: int
    target: ir.Binding
    form: Affine


@dataclass
class BoundsPlan:
    """Where each access of one parallel loop is checked.

    `bounds` the host raises on; `guarded` the host evaluates to choose the loop's variant; `hoisted`
    holds the accesses the device never checks, `optional` those it checks only in the
    checked variant. Per index-list write (in the order given): the access whose panic the list's
    verification raises for a written index out of bounds (the write, or an access at its index, that
    happens in every iteration; None: the verification leaves the bounds to the loop's own device
    check), and the gathers through the list that the verification checks."""

    bounds: list[BoundsCheck] = field(default_factory=list)
    guarded: list[BoundsCheck] = field(default_factory=list)
    hoisted: set[ir.NodeId] = field(default_factory=set)
    optional: set[ir.NodeId] = field(default_factory=set)
    list_bounds: list[ir.Span | None] = field(default_factory=list)
    list_gathers: list[list[ListGather]] = field(default_factory=list)
    list_reads: list[ListRead] = field(default_factory=list)
    listed: set[ir.NodeId] = field(default_factory=set)


def plan_bounds(body: ir.Block, analysis: AffineAnalysis, dims, lists: list[IndexListWrite]) -> BoundsPlan:
    """The host checks of the accesses whose range can be computed, and which accesses the device checks."""
    starts = {d.var.node_id: analysis.form(d.start) for d in dims}
    thread_vars = [d.var.node_id for d in dims]
    sequential: dict[ir.NodeId, ir.For] = {}
    for node in walk(body):
        if isinstance(node, ir.For):
            starts[node.var.node_id] = analysis.form(node.start)
            sequential[node.var.node_id] = node
    accesses = sorted(param_accesses(body), key=lambda a: a.order)
    forms = {a.node.node_id: analysis.form(a.node.index) for a in accesses}
    plan = BoundsPlan(list_bounds=[None] * len(lists), list_gathers=[[] for _ in lists])
    for k, write in enumerate(lists):
        plan.list_bounds[k] = next((a.node.span for a in accesses if a.every_iteration and a.node.base.binding
                                    is write.target and forms[a.node.node_id] == write.form), None)
    terms = analysis_terms(analysis)
    list_keys = {w.key: k for k, w in enumerate(lists)}
    checked: list[tuple[tuple, ParamAccess]] = []  # ((param, form), access) of the host-checked unconditional accesses
    guarded: dict[tuple, BoundsCheck] = {}
    for access in accesses:
        index, param, form = access.node, access.node.base.binding, forms[access.node.node_id]
        if any(w.target is param and w.form == form and plan.list_bounds[k] is not None for k, w in enumerate(lists)):
            plan.hoisted.add(index.node_id)
            continue
        through = _list_gather(form, list_keys)
        if through is not None and access.every_iteration:
            scale, offset, owner = through
            plan.list_gathers[owner].append(ListGather(param, scale, terms(offset), index.span))
            plan.hoisted.add(index.node_id)
            continue
        read = _list_read(form, analysis)
        if read is not None:
            scale, offset, gather = read
            plan.list_reads.append(ListRead(param, gather.list_param, scale, terms(offset), index.span))
            plan.listed.add(index.node_id)
            continue
        key = (param, form)
        if any(k == key and set(earlier.loops) <= set(access.loops) for k, earlier in checked):
            plan.hoisted.add(index.node_id)  # an earlier access at this index, made whenever this one is, is checked
            continue
        extents = _extents(access, thread_vars, analysis)
        bounds = _range(form, analysis, starts)
        if bounds is None or extents is None:
            continue
        low, high = bounds
        if _provably_inside(low, high, param, analysis):
            plan.hoisted.add(index.node_id)
            continue
        check = BoundsCheck(param, terms(low), terms(high), tuple(terms(e) for e in extents), index.span,
                            access.order, _index_form(form, access, dims, sequential, analysis, terms),
                            _exact_bounds(form, access, dims, sequential, analysis, terms))
        if access.every_iteration:
            checked.append((key, access))
            plan.hoisted.add(index.node_id)
            plan.bounds.append(check)
        else:
            plan.optional.add(index.node_id)
            guarded.setdefault((param, form, access.loops), check)
    plan.guarded = list(guarded.values())
    return plan


def _list_gather(form: Affine | None, list_keys: dict[int, int]) -> tuple[int, Poly, int] | None:
    """(scale, offset, list number) for an index `scale * list[i + position] + offset` through a verified list."""
    if form is None or len(form.coeffs) != 1 or form.coeffs[0][0] not in list_keys:
        return None
    scale = constant_value(form.coeffs[0][1])
    return None if scale is None else (scale, form.rest, list_keys[form.coeffs[0][0]])


def _list_read(form: Affine | None, analysis: AffineAnalysis):
    """(scale, offset, gather) for an index `scale * list[i + position] + offset` through any index list."""
    if form is None or len(form.coeffs) != 1 or form.coeffs[0][0] not in analysis.gathers:
        return None
    scale = constant_value(form.coeffs[0][1])
    return None if scale is None else (scale, form.rest, analysis.gathers[form.coeffs[0][0]])


def _extents(access: ParamAccess, thread_vars: list[ir.NodeId], analysis: AffineAnalysis) -> list[Poly] | None:
    """The iteration counts that must all be non-zero for the access to happen: the thread dimensions' and
    those of the sequential loops around it (None when one of those is not invariant)."""
    extents: list[Poly] = []
    for var_id in [*thread_vars, *(b.node_id for b in access.loops)]:
        var = analysis.loop_vars.get(var_id)
        if var is None or var.extent is None:
            if var_id in thread_vars:
                continue  # the launch's own count: no launch, no access
            return None
        if var.extent not in extents:
            extents.append(var.extent)
    return extents


def _range(form: Affine | None, analysis: AffineAnalysis, starts: dict) -> tuple[Poly, Poly] | None:
    """The lowest and highest index over all iterations."""
    if form is None:
        return None
    low = high = form.rest
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
    return low, high


def _provably_inside(low: Poly, high: Poly, param: ir.Binding, analysis: AffineAnalysis) -> bool:
    """low ≥ 0 and len(param) − 1 − high ≥ 0 for every value of the parameters."""
    length = analysis.form(ir.Intrinsic("len", (ir.Var(param, param.span),), USIZE, param.span))
    if length is None:
        return False
    room = sub(sub(length.rest, constant(1)), high)
    return analysis.proven_non_negative(low) and analysis.proven_non_negative(room)


def _index_form(form: Affine, access: ParamAccess, dims, sequential: dict[ir.NodeId, ir.For],
                analysis: AffineAnalysis, terms) -> IndexForm:
    """The access's index over the thread dimensions and the sequential loops around it, with those loops'
    bounds and where their bodies start: what the runtime needs to find the first iteration that leaves the
    slice."""
    loops = []
    for binding in access.loops:
        node = sequential[binding.node_id]
        start, end = analysis.form(node.start), analysis.form(node.end)  # invariant: the loop has an extent
        loops.append(SequentialLoop(terms(start.rest), terms(end.rest), node.inclusive, binding.ty,
                                    terms(form.coeff(binding.node_id)), (node.body.span.line, node.body.span.col)))
    return IndexForm(terms(form.rest), tuple(terms(form.coeff(d.var.node_id)) for d in dims), tuple(loops),
                     access.order[:2])


def _exact_bounds(form: Affine, access: ParamAccess, dims, sequential: dict[ir.NodeId, ir.For],
                  analysis: AffineAnalysis, terms) -> tuple:
    """The loop bounds a check's range is computed from, as (bound, least, greatest value of its type), where
    Rust's value of the bound (computed in the type, wrapping: `n - 1` with `n == 0`) may differ from the
    exact one: those of the thread dimensions the index depends on and of every loop around the access."""
    loops = [d for d in dims if form.coeff(d.var.node_id)] + [sequential[b.node_id] for b in access.loops]
    out = []
    for loop in loops:
        ty = loop.var.ty
        low, high = _type_range(ty)
        for bound in (loop.start, loop.end):
            poly = analysis.form(bound).rest
            if not _always_in(poly, low, high, analysis):
                out.append((terms(poly), low, high))
    return tuple(dict.fromkeys(out))


def _type_range(ty) -> tuple[int, int]:
    return (-(1 << (ty.bits - 1)), (1 << (ty.bits - 1)) - 1) if ty.is_signed else (0, (1 << ty.bits) - 1)


def _always_in(poly: Poly, low: int, high: int, analysis: AffineAnalysis) -> bool:
    """A constant in [low, high], or one value whose own type fits in it (`a.len()`, `n` for a usize loop)."""
    value = constant_value(poly)
    if value is not None:
        return low <= value <= high
    if len(poly) != 1 or poly[0][1] != 1 or len(poly[0][0]) != 1:
        return False
    ty = analysis.atoms[poly[0][0][0]].ty
    return ty.is_int and low <= _type_range(ty)[0] and _type_range(ty)[1] <= high


def analysis_terms(analysis: AffineAnalysis):
    def terms(poly: Poly):
        return tuple((coefficient, tuple(analysis.atoms[a] for a in monomial)) for monomial, coefficient in poly)
    return terms
