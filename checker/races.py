"""Proving that the iterations of one parallel loop cannot interfere.

For every `&mut` slice written in the loop: each write index must be an affine function of the loop
variable with a nonzero constant coefficient (so distinct iterations write distinct elements), several
writes of one iteration must not land on an element another iteration writes, and reads of that slice
must be at an index the same iteration writes. Variables declared outside the loop may not be
assigned inside it, except reduction variables. Slices that iterations only update with one combining
operation (`out[bins[i]] += v`) are scatters (checker/scatters.py), taken out of these checks.
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.checker.affine import Affine, AffineAnalysis, Poly, constant_value
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink, Note
from rs2gpu.ir.types import RefType
from rs2gpu.ir.walk import children, walk


@dataclass(frozen=True)
class Access:
    param: ir.Binding
    index: ir.Expr
    span: ir.Span
    conditional: bool  # under an `if`, `match` or inner loop: may not happen in every iteration


@dataclass
class LoopAccesses:
    writes: list[Access]
    reads: list[Access]
    carried: list[ir.Assign]
    # slice parameters passed to helpers: (parameter, where, whether the helper takes it as `&mut`)
    helper_slices: list[tuple[ir.Binding, ir.Span, bool]]

    def without(self, params: set[ir.Binding]) -> "LoopAccesses":
        """The accesses of every slice but `params`."""
        return LoopAccesses([w for w in self.writes if w.param not in params],
                            [r for r in self.reads if r.param not in params], self.carried,
                            [h for h in self.helper_slices if h[0] not in params])


def collect_accesses(loop: ir.For, outer: set[ir.Binding],
                     functions: dict[str, ir.Function] | None = None) -> LoopAccesses:
    """Every element write and read of a slice parameter in the loop body, and every assignment to a
    variable declared outside the loop. `functions` (the crate's, by IR name) tell which helpers take a
    `&mut` slice as `&` (rustc's reborrow): those only read it."""
    acc = LoopAccesses([], [], [], [])
    _visit(loop.body, acc, outer, False, functions or {})
    return acc


def _helper_may_write(call: ir.Call, position: int, functions: dict[str, ir.Function]) -> bool:
    callee = functions.get(call.func)
    if callee is None or position >= len(callee.params):
        return call.args[position].ty.mutable
    ty = callee.params[position].ty
    return isinstance(ty, RefType) and ty.mutable


def _root_param(expr: ir.Expr) -> tuple[ir.Binding, ir.Expr] | None:
    """For `p[idx]` or `p[idx].field`, the parameter p and the index idx."""
    while isinstance(expr, ir.Field):
        expr = expr.base
    if isinstance(expr, ir.Index) and isinstance(expr.base, ir.Var) and expr.base.binding.kind == "param" \
            and isinstance(expr.base.binding.ty, RefType):
        return expr.base.binding, expr.index
    return None


def _visit(node, acc: LoopAccesses, outer: set[ir.Binding], conditional: bool,
           functions: dict[str, ir.Function]) -> None:
    if isinstance(node, ir.Assign):
        _visit_assign(node, acc, outer, conditional, functions)
        return
    if isinstance(node, ir.Index):
        root = _root_param(node)
        if root is not None:
            acc.reads.append(Access(root[0], root[1], node.span, conditional))
        _visit(node.index, acc, outer, conditional, functions)
        if root is None:
            _visit(node.base, acc, outer, conditional, functions)
        return
    if isinstance(node, ir.Call):
        for position, arg in enumerate(node.args):
            if isinstance(arg, ir.Var) and isinstance(arg.ty, RefType) and arg.binding.kind == "param":
                acc.helper_slices.append((arg.binding, arg.span, _helper_may_write(node, position, functions)))
    branches = isinstance(node, (ir.If, ir.Match, ir.For, ir.While, ir.Loop))
    for child in children(node):
        inner_conditional = conditional or (branches and not (isinstance(node, ir.If) and child is node.cond)
                                            and not (isinstance(node, ir.Match) and child is node.scrutinee))
        _visit(child, acc, outer, inner_conditional, functions)


def _visit_assign(node: ir.Assign, acc: LoopAccesses, outer: set[ir.Binding], conditional: bool,
                  functions: dict[str, ir.Function]) -> None:
    target = node.target
    root = _root_param(target)
    if root is not None:
        acc.writes.append(Access(root[0], root[1], node.span, conditional))
        if node.op is not None:
            acc.reads.append(Access(root[0], root[1], node.span, conditional))
        _visit(root[1], acc, outer, conditional, functions)
    else:
        base = target
        while isinstance(base, (ir.Field, ir.Index)):
            if isinstance(base, ir.Index):
                _visit(base.index, acc, outer, conditional, functions)
            base = base.base
        if isinstance(base, ir.Var) and base.binding in outer:
            acc.carried.append(node)
    _visit(node.value, acc, outer, conditional, functions)


@dataclass(frozen=True)
class Nest:
    """A parallel loop: one range loop, or directly nested ones that fold into a 2-D/3-D grid."""

    dims: tuple[ir.For, ...]

    @property
    def body(self) -> ir.Block:
        return self.dims[-1].body

    @property
    def span(self) -> ir.Span:
        return self.dims[0].span

    @property
    def names(self) -> str:
        return ", ".join(f"`{d.var.name}`" for d in self.dims)


def _scatter_hint(param: ir.Binding, refusals: dict | None) -> str:
    """The help's pointer to scatter updates, unless the slice's updates nearly are some (a note says why not)."""
    if param in (refusals or {}):
        return ""
    return (f"; if the iterations only add into the element, write `{param.name}[k] += v` (or `-=`, `*=`, `&=`, "
            "`|=`, `^=`, `.min()`, `.max()`): such updates are combined with atomics")


def _notes(param: ir.Binding, refusals: dict | None, *notes: Note) -> tuple[Note, ...]:
    """`notes`, and why `param`'s updates are not a scatter, if they nearly are."""
    refusal = (refusals or {}).get(param)
    return notes + ((refusal,) if refusal is not None else ())


def check_writes(nest: Nest, accesses: LoopAccesses, analysis: AffineAnalysis, sink: DiagnosticSink,
                 refusals: dict | None = None):
    """Report every possible race. Returns the write forms per parameter (for the read check), the
    inequalities the runtime must confirm before launching (strides it could not compare here), and the
    index lists whose values the runtime must find distinct (writes like `out[idx[i]]`). `refusals`
    holds, per slice, a note on why its updates are not a scatter, for the diagnostics about it."""
    forms: dict[ir.Binding, list[tuple[Affine, Access]]] = {}
    launch_checks: list[tuple[Poly, ir.Span]] = []
    index_lists: list = []
    var = nest.dims[0].var.name if len(nest.dims) == 1 else "the loop variables"
    started = Note(f"the parallel loop over {nest.names} starts here", nest.span)
    for w in accesses.writes:
        form = analysis.form(w.index)
        name = w.param.name
        if form is None:
            sink.error("RG0102", f"cannot prove that iterations of this loop write distinct elements of `{name}`",
                       w.span, f"this index is not an affine function of {var}",
                       notes=_notes(w.param, refusals, started),
                       help=f"write `{name}[i]`, `{name}[i + k]`, `{name}[c * i + k]` or a row-major `j * w + i`; "
                            f"each iteration may run on a different GPU thread{_scatter_hint(w.param, refusals)}")
            continue
        proof = analysis.injectivity(form)
        if proof.independent_of:
            which = ", ".join(f"`{n}`" for n in proof.independent_of)
            message = (f"every iteration writes the same element of `{name}`" if len(nest.dims) == 1 else
                       f"iterations that differ only in {which} write the same element of `{name}`")
            sink.error("RG0101", message, w.span, f"this index does not depend on {which}",
                       notes=_notes(w.param, refusals, started),
                       help="all GPU threads would race on this element; if you want a sum or a minimum, "
                            "accumulate into a `let mut` variable declared before the loop and return it"
                            + _scatter_hint(w.param, refusals))
            continue
        if not proof.proven:
            sink.error("RG0102", f"cannot prove that iterations of this loop write distinct elements of `{name}`",
                       w.span, "the strides of this index cannot be ordered", notes=_notes(w.param, refusals, started),
                       help="use a constant stride (`c * i + k`), or row-major strides whose inner extents are "
                            f"the loop bounds (`j * w + i` with `i` in `0..w`){_scatter_hint(w.param, refusals)}")
            continue
        # a write under a condition may skip the iterations whose rows would meet: the launch decides
        overlap = analysis.row_overlap(form) if proof.launch_checks and not w.conditional else None
        if overlap is not None:
            j, i = overlap.outer, overlap.inner
            sink.error("RG0102", f"iterations of this loop write the same element of `{name}`", w.span,
                       f"rows overlap: the last iterations over `{i}` of one `{j}` write the first elements of the next",
                       notes=(Note(f"the row stride, the factor of `{j}`, is `{overlap.stride}`, and `{i}` takes "
                                   f"`{overlap.trip_count}` values, more than the stride"), started),
                       help=f"give `{i}` as many values as the row stride (`for {i} in 0..{overlap.stride}`), or "
                            f"make the stride the length of a row{_scatter_hint(w.param, refusals)}")
            continue
        launch_checks += [(check, w.span) for check in proof.launch_checks]
        if proof.index_list is not None:
            index_lists.append((proof.index_list, constant_value(form.coeffs[0][1]), form.rest, w.param, w.span))
        forms.setdefault(w.param, []).append((form, w))
    for param, writes in forms.items():
        _check_write_pairs(param, writes, nest, analysis, sink, launch_checks, refusals)
    return forms, launch_checks, index_lists


def _check_write_pairs(param, writes, nest: Nest, analysis: AffineAnalysis, sink, launch_checks: list,
                       refusals: dict | None) -> None:
    for a_index, (a, wa) in enumerate(writes):
        for b, wb in writes[a_index + 1:]:
            diff = b.minus(a)
            offset = constant_value(diff.rest)
            single = len(a.coeffs) == 1 and len(nest.dims) == 1 and a.coeffs[0][0] == nest.dims[0].var.node_id
            stride = constant_value(a.coeffs[0][1]) if single else None
            if not diff.coeffs and (offset is None or stride is None) and diff.rest \
                    and analysis.read_disjoint(b, a, launch_checks, wb.span):
                continue  # e.g. px[i] and px[i + 12 * n] with i < n: the two rows never meet
            if not diff.coeffs and offset not in (None, 0) and stride is None:
                low, high = (a, abs(offset)) if offset > 0 else (b, abs(offset))
                proof = analysis.paired_injectivity(low, high)
                if proof.proven:  # e.g. out[at] and out[at + HALF], `at` a row-major index: maybe at launch
                    launch_checks += [(check, wb.span) for check in proof.launch_checks]
                    continue
            if diff.coeffs or offset is None or (offset != 0 and stride is None):
                sink.error("RG0105", f"two writes to `{param.name}` may hit one element from different iterations",
                           wb.span, "this write", notes=_notes(param, refusals, Note("and this write", wa.span)),
                           help=f"write every element of `{param.name}` at `c * i + k` with one constant c and "
                                f"constant offsets k{_scatter_hint(param, refusals)}")
                return
            if offset != 0 and offset % stride == 0:
                i = nest.dims[0].var.name
                sink.error("RG0105", f"iteration `{i}` and iteration `{i} + {offset // stride}` write the same "
                           f"element of `{param.name}`", wb.span, "this write",
                           notes=_notes(param, refusals, Note("collides with this write of another iteration", wa.span)),
                           help="make the offsets of the writes differ by less than the stride, or split the "
                                f"work into two loops{_scatter_hint(param, refusals)}")
                return


def check_reads(nest: Nest, accesses: LoopAccesses, forms: dict, analysis: AffineAnalysis,
                sink: DiagnosticSink, launch_checks: list, refusals: dict | None = None) -> None:
    """A written slice may be read at the element the same iteration writes, or where no iteration
    writes (e.g. `px[i + 12 * n]` while iterations write `px[i]`, `i < n`); the latter may need a
    launch check, which is appended to `launch_checks`."""
    written = {w.param for w in accesses.writes}
    for r in accesses.reads:
        if r.param not in written:
            continue
        form = analysis.form(r.index)
        own = [f for f, _ in forms.get(r.param, [])]
        if form is not None and own and all(analysis.read_disjoint(form, w, launch_checks, r.span) for w in own):
            continue
        first_write = next(w for w in accesses.writes if w.param is r.param)
        sink.error("RG0103", f"this reads an element of `{r.param.name}` that another iteration may write",
                   r.span, "read here, at an index other than the one this iteration writes",
                   notes=_notes(r.param, refusals, Note(f"`{r.param.name}` is written here", first_write.span)),
                   help=f"iterations run in parallel, in no fixed order; read `{r.param.name}` only at the "
                        f"index this iteration writes, or read from a separate input slice"
                        + ("" if r.param in (refusals or {}) else
                           f"; if the iterations only add into `{r.param.name}`, update it with "
                           f"`{r.param.name}[k] += v` and read it in a later loop: such updates are combined "
                           "with atomics"))
    for param, span, helper_writes in accesses.helper_slices:
        if param in written or helper_writes:
            sink.error("RG0103", f"`{param.name}` is passed to a helper function inside a parallel loop "
                                 "while it is written", span, "passed here",
                       help="pass the elements the helper needs as values instead")


def check_carried(loop: ir.For, accesses: LoopAccesses, reductions: set[ir.Binding], sink: DiagnosticSink) -> None:
    for assign in accesses.carried:
        b = assign.target
        while not isinstance(b, ir.Var):
            b = b.base
        if b.binding in reductions:
            continue
        sink.error("RG0104", f"`{b.binding.name}` is carried from one iteration of a parallel loop to the next",
                   assign.span, f"`{b.binding.name}` is declared outside the loop and assigned here",
                   notes=(Note(f"`{b.binding.name}` is declared here", b.binding.span),),
                   help=f"iterations run in parallel; declare `{b.binding.name}` inside the loop, or, for a sum, "
                        "product, minimum or maximum, update it only with `+=`, `*=`, `.min()`, `.max()`, "
                        "`&=`, `|=` or `^=` so that it becomes a reduction")


def private_definitions(loop: ir.For) -> dict[ir.Binding, ir.Expr]:
    """Immutable `let`s inside the loop body, by binding, with their initializers."""
    return {n.binding: n.init for n in walk(loop.body)
            if isinstance(n, ir.Let) and not n.binding.mutable and n.init is not None}


def check_exits(loop: ir.For, sink: DiagnosticSink) -> None:
    """`return` in, or `break` out of, a parallel loop would stop iterations that already run elsewhere."""
    def visit(node, depth: int) -> None:
        if isinstance(node, ir.Return):
            sink.error("RG0108", "`return` inside a parallel loop", node.span,
                       "other iterations may already have run, or be running now",
                       help="iterations cannot stop each other; skip the rest of one iteration with `continue`")
        elif isinstance(node, ir.Break) and depth == 0:
            sink.error("RG0108", "`break` out of a parallel loop", node.span,
                       "other iterations may already have run, or be running now",
                       help="iterations cannot stop each other; skip the rest of one iteration with `continue`")
        inner = depth + 1 if isinstance(node, (ir.For, ir.While, ir.Loop)) else depth
        for child in children(node):
            visit(child, inner)
    visit(loop.body, 0)
