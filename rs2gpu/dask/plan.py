"""How a kernel's iteration space splits into chunks, read from what the checker proved.

A kernel chunks along the outermost variable `s` of its parallel loops (the slow dimension of a row-major
nest, the only one of a plain loop). Every access to a chunked slice must have the affine form

    stride · s + Σ coefficient · v + rest

with one `stride` shared by every access (a row of `stride` elements: 1 for a 1-D loop), `v` the inner
loop variables (inner thread dimensions and sequential loops, whose ranges do not depend on `s`), and
`rest` and every coefficient made of integer constants and scalar parameters. Each iteration `s` then
writes only row `s` and reads rows `s + d` for `d` in a range the accesses give: the halo, in rows.

Everything else is refused with a diagnostic (RG0201–RG0204) that names the access: a chunk would
compute something else than the whole call. The numbers (stride, halo) depend on the scalar arguments;
`ChunkPlan.resolve` computes them for a call.
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.checker.affine import AffineAnalysis, LoopVar, Poly, constant_value
from rs2gpu.checker.races import collect_accesses, private_definitions
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import KernelABI
from rs2gpu.ir.diagnostics import Diagnostic, Note
from rs2gpu.ir.plan import CheckedCrate, KernelPlan, ParallelLoop
from rs2gpu.ir.types import RefType
from rs2gpu.ir.walk import children, walk

# The operators of reductions whose chunks' partial results combine into the whole call's.
COMBINABLE = {"+", "*", "min", "max", "&", "|", "^"}


class ChunkingError(ValueError):
    """A kernel whose calls cannot be split into Dask chunks; the message is the diagnostic, naming the
    kernel, the access and its line."""

    def __init__(self, diagnostic: Diagnostic, sources: dict[str, str]) -> None:
        super().__init__(diagnostic.render(sources))
        self.diagnostic = diagnostic
        self.code = diagnostic.code


@dataclass(frozen=True)
class InnerRange:
    """An inner loop variable's values, `start..end` (`..=end` when inclusive)."""

    start: ir.Expr
    end: ir.Expr
    inclusive: bool


@dataclass(frozen=True)
class Reach:
    """One access of a chunked slice: its index minus `stride · s` is `rest + Σ coefficient · v`."""

    param: str
    written: bool
    rest: Poly
    inner: tuple[tuple[Poly, InnerRange], ...]
    span: ir.Span


@dataclass(frozen=True)
class LoopChunks:
    """What one parallel loop needs of a chunk: its accesses, and whether it reduces."""

    reaches: tuple[Reach, ...]
    reduces: bool
    span: ir.Span


@dataclass(frozen=True)
class ChunkPlan:
    """A kernel that chunks: which slices follow the chunks, which travel whole, and how far each loop
    reaches. `atoms` are the invariant values the polynomials name (scalar parameters and constants)."""

    kernel: str
    chunked: tuple[str, ...]
    whole: tuple[str, ...]
    stride: Poly
    loops: tuple[LoopChunks, ...]
    atoms: dict[str, ir.Expr]
    consts: dict[str, ir.Expr]
    sources: dict[str, str]
    reductions: dict[str, ir.Span]  # where each reduction is, by name

    def resolve(self, scalars: dict) -> "Resolved":
        """The stride and each loop's reach in rows for the scalar arguments `scalars` (by name)."""
        values = Evaluator(scalars, self.consts)
        stride = values.poly(self.stride, self.atoms)
        if stride <= 0:
            raise ValueError(f"`{self.kernel}`: the row stride of its accesses is {stride} for these arguments; "
                             f"chunks need a positive one")
        halos = []
        for loop in self.loops:
            left = right = 0
            for reach in loop.reaches:
                low = high = values.poly(reach.rest, self.atoms)
                for coefficient, var in reach.inner:
                    c = values.poly(coefficient, self.atoms)
                    first = values.expr(var.start)
                    last = values.expr(var.end) - (0 if var.inclusive else 1)
                    if last < first:
                        continue  # the loop never runs: no reach
                    low += min(c * first, c * last)
                    high += max(c * first, c * last)
                if reach.written and (low < 0 or high >= stride):
                    raise ChunkingError(diagnostic(
                        "RG0202", f"`{self.kernel}` writes `{reach.param}` outside the row of its iteration",
                        reach.span, f"reaches elements {low}..={high} of a row of {stride}",
                        "a chunk owns the rows of its iterations: write row `s` in iteration `s`"), self.sources)
                left = max(left, -(low // stride))
                right = max(right, high // stride)
            halos.append((left, right))
        return Resolved(stride, tuple(halos))


@dataclass(frozen=True)
class Resolved:
    stride: int
    halos: tuple[tuple[int, int], ...]  # per loop: rows read before and after the iteration's own


class Evaluator:
    """Integer values of the invariant expressions a chunk plan keeps (see `plan_chunks`'s checks)."""

    def __init__(self, scalars: dict, consts: dict[str, ir.Expr]) -> None:
        self.scalars = scalars
        self.consts = consts

    def poly(self, p: Poly, atoms: dict[str, ir.Expr]) -> int:
        total = 0
        for monomial, coefficient in p:
            term = coefficient
            for atom in monomial:
                term *= self.expr(atoms[atom])
            total += term
        return total

    def expr(self, e: ir.Expr) -> int:
        if isinstance(e, ir.Lit):
            return int(e.value)
        if isinstance(e, ir.ConstRef):
            return self.expr(self.consts[e.name])
        if isinstance(e, ir.Var):
            return int(self.scalars[e.binding.name])
        if isinstance(e, ir.Cast):
            return self.expr(e.operand)
        if isinstance(e, ir.Unary):
            return -self.expr(e.operand)
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        return {"+": a + b, "-": a - b, "*": a * b}[e.op]


def evaluable(e: ir.Expr) -> bool:
    """Whether `Evaluator.expr` computes `e`: integer literals, constants, scalar parameters, `+ - *`, casts."""
    for node in walk(e):
        if isinstance(node, ir.Var):
            if node.binding.kind != "param" or isinstance(node.binding.ty, RefType):
                return False
        elif isinstance(node, ir.Binary):
            if node.op not in ("+", "-", "*"):
                return False
        elif isinstance(node, ir.Unary):
            if node.op != "-":
                return False
        elif not isinstance(node, (ir.Lit, ir.ConstRef, ir.Cast)):
            return False
    return True


def plan_chunks(kernel: str, checked: CheckedCrate, entry: KernelABI) -> ChunkPlan:
    """The chunk plan of `kernel`, or ChunkingError naming what keeps it from chunking."""
    crate = checked.crate
    plan = next(p for p in checked.kernels if p.name == kernel)
    sources = crate.sources
    consts = {c.name: c.value for c in crate.consts}
    functions = {f.name: f for f in crate.functions}

    def refuse(code: str, message: str, span: ir.Span, label: str, help: str = "", notes=()) -> ChunkingError:
        return ChunkingError(diagnostic(code, f"`{kernel}` cannot run on Dask chunks: {message}", span, label,
                                         help, notes), sources)

    if plan.host_loops:
        step = next(s for s in plan.schedule if not isinstance(s, int))
        raise refuse("RG0203", "its parallel loops run inside a host loop (time steps)", step.span,
                     "every step reads what the whole previous step wrote",
                     "run the time loop in Python, one `rs2gpu.dask.call` per step (see examples/heat/heat.py)")
    _check_results(kernel, plan, entry, refuse)
    in_memory = {p.name for p in entry.params if p.in_memory}
    atoms: dict[str, ir.Expr] = {}
    per_loop = [_loop_reaches(plan, loop, functions, atoms, in_memory, refuse) for loop in plan.loops]
    chunked = {reach.param for reaches, _ in per_loop for reach, slow in reaches if slow}
    stride: Poly | None = None
    for _, loop_stride in per_loop:
        if loop_stride is None:
            continue
        if stride is not None and loop_stride[0] != stride:
            raise refuse("RG0202", "its loops step through the slices by different strides", loop_stride[1],
                         "a different stride than the kernel's first loop",
                         "chunks are rows of one length: index every loop's slices as `stride * s + ...`")
        stride = loop_stride[0]
    for reaches, _ in per_loop:
        for reach, slow in reaches:
            if slow:
                continue
            if reach.param in chunked:
                raise refuse("RG0202", f"it reads `{reach.param}` both with and without its outermost loop's "
                                       f"variable", reach.span, "this access does not move with the chunked loop",
                             "a slice either follows the chunks (every index `stride * s + ...`) or is read whole")
            if reach.written:
                raise refuse("RG0202", f"it writes `{reach.param}` at an index that does not move with the chunked "
                                       f"loop", reach.span, "every chunk would write this element",
                             "write the element of the iteration: an index `stride * s + ...`")
    loops = [LoopChunks(tuple(r for r, slow in reaches if slow), bool(loop.reductions), loop.span)
             for (reaches, _), loop in zip(per_loop, plan.loops)]
    _check_lengths(plan, chunked, refuse)
    if stride is None:
        raise refuse("RG0202", "no access moves with its outermost loop", plan.function.span,
                     "there is nothing to split into chunks",
                     "chunks split slices indexed by the outermost parallel loop's variable")
    names = [p.name for p in entry.params]
    return ChunkPlan(kernel, tuple(n for n in names if n in chunked),
                     tuple(n for n in names if n in in_memory and n not in chunked), stride, tuple(loops), atoms,
                     consts, sources,
                     {r.binding.name: r.span for loop in plan.loops for r in loop.reductions})


def _check_lengths(plan: KernelPlan, chunked: set[str], refuse) -> None:
    """A chunk sees its own lengths: the loops may use a chunked slice's length only through their bounds
    (which `ChunkLayout.check` compares with the whole call's)."""
    sized = set()  # the preamble's values that depend on a chunked slice's length
    for let in plan.preamble:
        if let.init is not None and any(_is_length(n, chunked) or isinstance(n, ir.Var) and n.binding in sized
                                        for n in walk(let.init)):
            sized.add(let.binding)
    for loop in plan.loops:
        for node in walk(loop.body):
            if _is_length(node, chunked) or isinstance(node, ir.Var) and node.binding in sized:
                what = f"`{node.binding.name}`" if isinstance(node, ir.Var) else "the length"
                raise refuse("RG0203", f"its loop uses {what}, which depends on a chunked slice's length",
                             node.span, "a chunk sees the length of its own window",
                             "use slice lengths only in the bounds of the parallel loops")


def _is_length(node, chunked: set[str]) -> bool:
    return (isinstance(node, ir.Intrinsic) and node.name == "len" and isinstance(node.args[0], ir.Var)
            and node.args[0].binding.name in chunked)


def _check_results(kernel: str, plan: KernelPlan, entry: KernelABI, refuse) -> None:
    """Chunks' partial results combine into the whole call's only when the kernel returns its reductions
    themselves, each combined by an operator chunks can apply to partials."""
    if entry.returns is None:
        return
    expr = entry.returns.expr
    items = expr["tuple"] if "tuple" in expr else [expr]
    span = plan.result.span if plan.result is not None else plan.function.span
    if not all(isinstance(item, dict) and set(item) == {"reduction"} for item in items):
        raise refuse("RG0204", "its result is computed from its reductions, not the reductions themselves", span,
                     "each chunk would compute this from its own partial reductions",
                     "return the reductions, and compute the result from them after `compute()`")
    for loop in plan.loops:
        for r in loop.reductions:
            if r.location is not None or r.op not in COMBINABLE:
                raise refuse("RG0204", f"the location reduction `{r.binding.name}` cannot combine chunks' results",
                             r.span, "a chunk's location is an index into its own rows",
                             "return the extreme value alone, or find its location in a second kernel")
    for launch in entry.launches:
        for r in launch.reductions:
            if r.seed_on_device:
                rspan = next(x.span for loop in plan.loops for x in loop.reductions if x.binding.name == r.name)
                raise refuse("RG0204", f"the reduction `{r.name}` starts from an element of a slice", rspan,
                             "each chunk would start from its own first element",
                             "start the reduction from its operator's identity")


def _loop_reaches(plan: KernelPlan, loop: ParallelLoop, functions, atoms: dict, in_memory: set[str],
                  refuse) -> tuple[list[tuple[Reach, bool]], tuple[Poly, ir.Span] | None]:
    """Each access of a slice in `loop` with whether it moves with the outermost variable, and the loop's stride."""
    if loop.scatters or loop.index_lists or loop.list_reads:
        span = (loop.scatters[0].updates[0].assign.span if loop.scatters
                else loop.index_lists[0].span if loop.index_lists else loop.list_reads[0].span)
        raise refuse("RG0201", "this access goes through an index list or updates arbitrary elements", span,
                     "the elements it touches depend on data, not on the chunk's rows",
                     "call the kernel on whole arrays (one chunk), or on plain arrays")
    fake = ir.For(loop.dims[-1].index, loop.dims[-1].start, loop.dims[-1].end, loop.dims[-1].inclusive, loop.body,
                  loop.span)
    invariant = set(plan.function.params) | {let.binding for let in plan.preamble}
    analysis = AffineAnalysis([], invariant, private_definitions(fake), functions)
    slow = loop.dims[0].index
    inner_dims = [LoopVar(d.index, None, True) for d in loop.dims]
    sequential = [LoopVar(n.var, None, False) for n in walk(loop.body) if isinstance(n, ir.For)]
    analysis.set_loop_vars(inner_dims + sequential)
    ranges = {d.index.node_id: InnerRange(d.start, d.end, d.inclusive) for d in loop.dims[1:]}
    ranges.update({n.var.node_id: InnerRange(n.start, n.end, n.inclusive) for n in walk(loop.body)
                   if isinstance(n, ir.For)})
    accesses = collect_accesses(fake, set())
    if accesses.helper_slices:
        param, span = accesses.helper_slices[0]
        raise refuse("RG0201", f"it passes `{param.name}` to a helper function", span,
                     "the chunks cannot see which elements the helper touches",
                     "index the slice in the kernel itself")
    out: list[tuple[Reach, bool]] = []
    stride: tuple[Poly, ir.Span] | None = None
    for access, written in [(a, True) for a in accesses.writes] + [(a, False) for a in accesses.reads]:
        if access.param.name not in in_memory:
            continue
        form = analysis.form(access.index)
        if form is None or any(k not in analysis.loop_vars for k, _ in form.coeffs):
            raise refuse("RG0201", f"the index of `{access.param.name}` is not an affine function of the loop "
                                   f"variables", access.span, "the elements it touches depend on data",
                         "chunks follow indices like `a[i]`, `a[i + 1]`, `a[(i - 1) * n + j]`")
        slow_coefficient = form.coeff(slow.node_id)
        inner = []
        for key, coefficient in form.coeffs:
            if key == slow.node_id:
                continue
            if key not in ranges or not evaluable(ranges[key].start) or not evaluable(ranges[key].end):
                name = analysis.loop_vars[key].binding.name
                raise refuse("RG0202", f"the range of `{name}`, which the index of `{access.param.name}` uses, is "
                                       f"not computable from scalar parameters and constants", access.span,
                             "how far this access reaches depends on it",
                             "give inner loops bounds made of constants and scalar parameters")
            inner.append((coefficient, ranges[key]))
        polys = [slow_coefficient, form.rest, *(c for c, _ in inner)]
        for p in polys:
            for monomial, _ in p:
                for atom in monomial:
                    if not evaluable(analysis.atoms[atom]):
                        raise refuse("RG0202", f"the index of `{access.param.name}` depends on a slice length or "
                                               f"a value computed in the kernel", access.span,
                                     "a chunk's lengths are not the whole array's, so this offset would move",
                                     "make offsets and strides constants or scalar parameters")
                    atoms[atom] = analysis.atoms[atom]
        if slow_coefficient:
            if stride is None:
                stride = (slow_coefficient, access.span)
            elif slow_coefficient != stride[0]:
                raise refuse("RG0202", f"`{access.param.name}` is indexed with another stride of "
                                       f"`{slow.name}` than the kernel's other accesses", access.span,
                             "rows of another length than the others'", "index every slice as `stride * s + ...`",
                             (Note("the first access, with the kernel's stride", stride[1]),))
            if constant_value(slow_coefficient) is not None and constant_value(slow_coefficient) < 0:
                raise refuse("RG0202", f"`{access.param.name}` is indexed backwards along `{slow.name}`",
                             access.span, "a chunk's rows would come from the other end", "")
        out.append((Reach(access.param.name, written, form.rest, tuple(inner), access.span), bool(slow_coefficient)))
    _check_value_uses(loop, slow, analysis, refuse)
    return out, stride


def _check_value_uses(loop: ParallelLoop, slow: ir.Binding, analysis: AffineAnalysis, refuse) -> None:
    """The outermost variable may only index chunked slices: a chunk's `s` counts its own rows, so any
    other use (`(i + 1) as f64`, a bound of an inner loop) would see another number than the whole call."""
    def moves_with_chunks(node: ir.Index) -> bool:
        if not (isinstance(node.base, ir.Var) and node.base.binding.kind == "param"):
            return False
        form = analysis.form(node.index)
        return form is not None and bool(form.coeff(slow.node_id))

    def free_uses(node, tainted: set):
        """The variables of `tainted` that `node` uses outside the indices of chunked slices."""
        if isinstance(node, ir.Index) and moves_with_chunks(node):
            return
        if isinstance(node, ir.Let) and node.binding in tainted:
            return  # an index-like `let`: its uses are checked where they are
        if isinstance(node, ir.Var) and node.binding in tainted:
            yield node
        for child in children(node):
            yield from free_uses(child, tainted)

    tainted = {slow}
    changed = True
    while changed:
        changed = False
        for binding, init in analysis.definitions.items():
            if binding not in tainted and next(free_uses(init, tainted), None) is not None:
                tainted.add(binding)
                changed = True
    use = next(free_uses(loop.body, tainted), None)
    if use is not None:
        raise refuse("RG0203", f"it uses the loop variable `{slow.name}` as a value", use.span,
                     "a chunk's iterations count from its own first row",
                     f"use `{slow.name}` only in indices of slices, or pass the position as data")


def diagnostic(code: str, message: str, span: ir.Span, label: str, help: str, notes=()) -> Diagnostic:
    return Diagnostic("error", code, message, span, label, tuple(notes), help)
