"""Scatter reductions: `&mut` slices whose elements several iterations update with one combining operation.

    for i in 0..data.len() { values[bins[i]] += data[i]; }        // iterations with one bin share it
    for z in 0..zones.len() { let i = zones[z]; x[i] += v[z]; x[i + 1] += v[z]; }  // zones share nodes

A `&mut` slice is a scatter target in a parallel loop when the loop touches it only through updates
`t[e] op= v` (or `t[e] = t[e] op v`, `t[e] = t[e].min(v)`, `.max(v)`, `.wrapping_add(v)`, ...) of one
combining operation, at any index `e`, and neither `v` nor `e` reads `t`. Then the iterations' updates
commute like those of a scalar reduction (exactly for integers, which wrap; up to rounding for floats),
so the GPU applies them with atomics in any order. `-=` is `+=` of the negated value, the same
operation: IEEE `a - b` is `a + (-b)`, and wrapping subtraction is wrapping addition of the negation.

Input: one parallel loop, its accesses (`races.collect_accesses`) and its affine analysis. Output:
- the scatters (`ir.plan.Scatter`), each with its updates for the emitter;
- for a slice that is updated with combining operations but breaks one of the rules, a note saying
  which, for the race diagnostics the checker then reports about that slice.
A slice whose updates the race checker proves to hit distinct elements of every iteration (`a[i] += x`)
needs no atomics, and is left to it.
"""
from __future__ import annotations

from rs2gpu.checker.affine import AffineAnalysis
from rs2gpu.checker.races import LoopAccesses, Nest, check_reads, check_writes
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink, Note
from rs2gpu.ir.plan import Scatter, ScatterUpdate
from rs2gpu.ir.types import PrimType, RefType
from rs2gpu.ir.walk import same_value, walk

# Compound assignments that combine (`/=`, `%=` and the shifts do not commute).
COMPOUND_OPS = {"+", "-", "*", "&", "|", "^"}
# `t[e] = t[e] op v`; "-" only with the element on the left.
BINARY_OPS = {"+", "-", "*", "&", "|", "^"}
COMMUTATIVE = {"+", "*", "&", "|", "^", "min", "max"}
METHOD_OPS = {"min": "min", "max": "max", "wrapping_add": "+", "wrapping_sub": "-", "wrapping_mul": "*"}
BITWISE = {"&", "|", "^"}


def find_scatters(nest: Nest, accesses: LoopAccesses,
                  analysis: AffineAnalysis) -> tuple[list[Scatter], dict[ir.Binding, Note]]:
    """The loop's scatter targets, and why each other slice updated with combining operations is not one."""
    scatters: list[Scatter] = []
    refusals: dict[ir.Binding, Note] = {}
    for param, assigns in _assignments(nest.body).items():
        updates = [_update(a) for a in assigns]
        if not any(updates):
            continue  # plain stores only: the race checker's business alone
        refusal = _refusal(param, assigns, updates, nest.body, accesses)
        if refusal is not None:
            refusals[param] = refusal
        elif not _proven_distinct(param, nest, accesses, analysis):
            scatters.append(Scatter(param, _combining(updates[0].op), tuple(updates)))
    return scatters, refusals


def _assignments(body: ir.Block) -> dict[ir.Binding, list[ir.Assign]]:
    """The assignments to elements of each slice parameter, in source order."""
    out: dict[ir.Binding, list[ir.Assign]] = {}
    for node in walk(body):
        if isinstance(node, ir.Assign):
            element = _element_of(node.target)
            if element is not None:
                out.setdefault(element.base.binding, []).append(node)
    return out


def _element_of(place: ir.Expr) -> ir.Index | None:
    """`p[e]` for a place `p[e]` or `p[e].field...` of a slice parameter `p`."""
    while isinstance(place, ir.Field):
        place = place.base
    if isinstance(place, ir.Index) and isinstance(place.base, ir.Var) and place.base.binding.kind == "param" \
            and isinstance(place.base.ty, RefType):
        return place
    return None


def _update(assign: ir.Assign) -> ScatterUpdate | None:
    """The combining operation and operand of `t op= v`, `t = t op v`, `t = v op t`, `t = t.min(v)`, ..."""
    target = assign.target
    if assign.op is not None:
        return ScatterUpdate(assign, assign.op, assign.value) if assign.op in COMPOUND_OPS else None
    if any(isinstance(n, ir.Assign) or isinstance(n, ir.Call) and any(_mutable_ref(a) for a in n.args)
           for n in walk(target)):
        return None  # the two mentions of the element might not be the same element
    v = assign.value
    if isinstance(v, ir.Binary) and v.op in BINARY_OPS:
        operands, op = (v.lhs, v.rhs), v.op
    elif isinstance(v, ir.Intrinsic) and v.name in METHOD_OPS and len(v.args) == 2:
        operands, op = v.args, METHOD_OPS[v.name]
    else:
        return None
    first, second = operands
    if same_value(first, target):
        return ScatterUpdate(assign, op, second, element=first, element_first=True)
    if same_value(second, target) and op in COMMUTATIVE:
        return ScatterUpdate(assign, op, first, element=second, element_first=False)
    return None


def _mutable_ref(arg: ir.Expr) -> bool:
    return isinstance(arg.ty, RefType) and arg.ty.mutable


def _combining(op: str) -> str:
    return "+" if op == "-" else op


def _refusal(param: ir.Binding, assigns: list[ir.Assign], updates: list[ScatterUpdate | None], body: ir.Block,
             accesses: LoopAccesses) -> Note | None:
    """Why `param`'s updates cannot be applied as atomics, or None if they can."""
    name = param.name
    why = f"so the updates of `{name}` cannot be combined with atomics"
    for assign, update in zip(assigns, updates):
        if update is None:
            return Note(f"this assignment to `{name}` is not a `+=`, `-=`, `*=`, `&=`, `|=`, `^=`, `.min()` or "
                        f"`.max()` update, {why}", assign.span)
    ops = list(dict.fromkeys(_combining(u.op) for u in updates))
    if len(ops) > 1:
        second = next(u for u in updates if _combining(u.op) == ops[1])
        return Note(f"`{name}` is updated with both `{_shown(ops[0])}` and `{_shown(ops[1])}`, {why}",
                    second.assign.span)
    for update in updates:
        ty = update.assign.target.ty
        if not _atomic_type(ty, ops[0]):
            kinds = "integers" if ops[0] in BITWISE else "integers and floats"
            return Note(f"atomic `{_shown(ops[0])}` updates need 32- or 64-bit {kinds}, and the elements of "
                        f"`{name}` are `{ty}`", update.assign.span)
    owned = {_element_of(u.assign.target).node_id for u in updates} | \
            {_element_of(u.element).node_id for u in updates if u.element is not None}
    for node in walk(body):
        if isinstance(node, ir.Index) and node.node_id not in owned and _element_of(node) is node \
                and node.base.binding is param:
            return Note(f"`{name}` is also read here, {why}", node.span)
    for helper_param, span, _ in accesses.helper_slices:
        if helper_param is param:
            return Note(f"`{name}` is passed to a helper function here, {why}", span)
    return None


def _shown(op: str) -> str:
    return f".{op}()" if op in ("min", "max") else f"{op}="


def _atomic_type(ty, op: str) -> bool:
    if not isinstance(ty, PrimType) or ty.bits < 32 or ty.is_bool:
        return False
    return ty.is_int if op in BITWISE else ty.is_int or ty.is_float


def _proven_distinct(param: ir.Binding, nest: Nest, accesses: LoopAccesses, analysis: AffineAnalysis) -> bool:
    """Whether the race checker proves, with nothing left for the runtime to check, that no element of
    `param` is updated by two iterations: then plain read-modify-writes are exact and cheaper."""
    mine = LoopAccesses([w for w in accesses.writes if w.param is param],
                        [r for r in accesses.reads if r.param is param], [], [])
    scratch = DiagnosticSink()
    forms, launch_checks, index_lists = check_writes(nest, mine, analysis, scratch)
    check_reads(nest, mine, forms, analysis, scratch, launch_checks)
    return not scratch.items and not launch_checks and not index_lists
