"""Splitting a kernel body into its uniform preamble, parallel loops and result.

Input: an `ir.Function` marked as a kernel. Output: the preamble `let`s (values every GPU thread can
recompute from the parameters), the top-level range loops (each one launch), reduction variables,
and the tail expression the host evaluates after the last launch.

    let n = a.len();          // preamble: uniform
    let mut sum = 0.0;        // reduction variable (updated with += in a loop)
    for i in 0..n { ... }     // parallel loop
    sum                       // result, evaluated on the host

A top-level loop whose body holds loops, and writes an element whatever its own variable is, is a host
loop: its iterations (time steps) run on the host one after another, each launching the loops inside.

    for step in 0..steps {    // host loop: `step` is passed to the launches
        for i in 1..n - 1 { b[i] = 0.5 * (a[i - 1] + a[i + 1]); }   // launch
        for i in 1..n - 1 { a[i] = b[i]; }                          // launch
    }
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import DiagnosticSink, Note
from rs2gpu.ir.plan import is_host_evaluable
from rs2gpu.ir.types import PrimType, RefType, StructType
from rs2gpu.ir.walk import walk


@dataclass
class HostLoopShape:
    """A sequential loop around parallel loops: `lets` at the top of its body, then `body`, the indices of
    its parallel loops (in `KernelShape.loops`) and the host loops nested in it."""

    loop: ir.For
    lets: list[ir.Let] = field(default_factory=list)
    body: list = field(default_factory=list)


@dataclass
class KernelShape:
    preamble: list[ir.Let] = field(default_factory=list)
    accumulators: dict[ir.Binding, ir.Let] = field(default_factory=dict)
    loops: list[ir.For] = field(default_factory=list)
    result: ir.Expr | None = None
    uniform: set[ir.Binding] = field(default_factory=set)
    schedule: list = field(default_factory=list)  # indices into `loops`, and HostLoopShapes
    around: list[tuple[HostLoopShape, ...]] = field(default_factory=list)  # per loop: its host loops, outermost first
    host_values: set[ir.Binding] = field(default_factory=set)  # what the host computes before the launches need it


def split_kernel(fn: ir.Function, sink: DiagnosticSink) -> KernelShape:
    shape = KernelShape()
    shape.uniform = {p for p in fn.params if _is_uniform_param(p)}
    assigned_later = _assigned_in_loops(fn.body)
    host_names: dict[str, ir.Binding] = {}
    for stmt in fn.body.stmts:
        if isinstance(stmt, ir.Let):
            _top_level_let(stmt, shape, assigned_later, sink)
            host_names[stmt.binding.name] = stmt.binding  # the host knows it by this name from here on
        elif isinstance(stmt, ir.ExprStmt) and isinstance(stmt.expr, ir.For):
            _schedule_loop(stmt.expr, shape, (), shape.schedule, assigned_later, host_names, sink)
        else:
            sink.error("RG0107", "kernels run statements only inside parallel loops", stmt.span,
                       "this statement is outside any `for` loop",
                       help="put the work inside a top-level `for i in 0..n` loop; statements before the "
                            "loops may only be `let`s of values computed from the parameters")
    tail = fn.body.tail
    if isinstance(tail, ir.For):
        _schedule_loop(tail, shape, (), shape.schedule, assigned_later, host_names, sink)
    elif tail is not None:
        shape.result = tail
        _check_result(tail, shape, sink)
    shape.host_values |= {s.binding for s in shape.preamble}
    if not shape.loops:
        sink.error("RG0107", f"kernel `{fn.source_name}` has no parallel loop", fn.span,
                   "no top-level `for` loop here",
                   help="a kernel's work is a top-level `for i in 0..n` loop; each one becomes a GPU launch")
    return shape


def _schedule_loop(loop: ir.For, shape: KernelShape, around: tuple[HostLoopShape, ...], steps: list,
                   assigned_later: set[ir.Binding], host_names: dict, sink: DiagnosticSink) -> None:
    """Add `loop` to `steps`: as a parallel loop, or, if it is a host loop, with the loops inside it."""
    if not is_host_loop(loop):
        steps.append(len(shape.loops))
        shape.loops.append(loop)
        shape.around.append(around)
        return
    host = HostLoopShape(loop)
    steps.append(host)
    _host_name(loop.var, host_names, sink)
    shape.uniform.add(loop.var)
    shape.host_values.add(loop.var)
    body = [*loop.body.stmts, *([ir.ExprStmt(loop.body.tail, loop.body.tail.span)] if loop.body.tail else [])]
    for stmt in body:
        if isinstance(stmt, ir.Let):
            _host_loop_let(stmt, host, shape, assigned_later, host_names, sink)
        elif isinstance(stmt, ir.ExprStmt) and isinstance(stmt.expr, ir.For):
            _schedule_loop(stmt.expr, shape, (*around, host), host.body, assigned_later, host_names, sink)
        else:
            sink.error("RG0107", "a host loop runs only `let`s and parallel loops", stmt.span,
                       "this statement would run on the host between launches",
                       notes=(Note(f"the host loop over `{loop.var.name}` starts here", loop.span),),
                       help="move the statement into one of the parallel loops")


def _host_loop_let(stmt: ir.Let, host: HostLoopShape, shape: KernelShape, assigned_later: set[ir.Binding],
                   host_names: dict, sink: DiagnosticSink) -> None:
    b = stmt.binding
    if b in assigned_later:
        sink.error("RG0104", f"`{b.name}` is declared in a host loop and assigned in a parallel loop", stmt.span,
                   help="reductions inside a host loop are not supported: accumulate in a kernel without the "
                        "host loop, and call it after this one")
        return
    if not isinstance(b.ty, PrimType) or stmt.init is None or not is_uniform(stmt.init, shape.uniform):
        sink.error("RG0107", f"`{b.name}` must be computable from the parameters and the host loop's variable",
                   stmt.span, "this reads data that only a GPU thread can see",
                   help="move this `let` inside the parallel loop that uses it")
        return
    host.lets.append(stmt)
    shape.uniform.add(b)
    if is_host_evaluable(stmt.init, shape.host_values | {s.binding for s in shape.preamble}):
        _host_name(b, host_names, sink)
        shape.host_values.add(b)


def _host_name(b: ir.Binding, host_names: dict, sink: DiagnosticSink) -> None:
    """The host keeps the values of a host loop by name: two of one name would be one value to it."""
    previous = host_names.setdefault(b.name, b)
    if previous is not b:
        sink.error("RG0107", f"`{b.name}` names two values of the host loops", b.span, "declared again here",
                   notes=(Note(f"`{b.name}` is first declared here", previous.span),),
                   help="rename one of them")


def is_host_loop(loop: ir.For) -> bool:
    """A loop around parallel loops whose iterations must run one after another: its body has a `for` at
    the top, and writes an element whatever its variable is (as a parallel loop, iterations would race)."""
    body = loop.body
    if not any(isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.For) for s in body.stmts) \
            and not isinstance(body.tail, ir.For):
        return False
    depends = _dependents(loop.var, body)
    return any(not any(isinstance(n, ir.Var) and n.binding in depends for n in walk(index))
               for index in _write_indices(body))


def _dependents(var: ir.Binding, body: ir.Block) -> set[ir.Binding]:
    """`var` and every variable of `body` whose value is computed from it. (The variable of a loop whose
    bounds depend on `var` is not: for two values of `var` it still takes some of the same values.)"""
    found = {var}
    nodes = [n for n in walk(body) if isinstance(n, (ir.Let, ir.Assign))]
    while True:
        before = len(found)
        for n in nodes:
            if isinstance(n, ir.Let) and n.init is not None and _mentions_any(n.init, found):
                found.add(n.binding)
            elif isinstance(n, ir.Assign) and isinstance(n.target, ir.Var) and _mentions_any(n.value, found):
                found.add(n.target.binding)
        if len(found) == before:
            return found


def _write_indices(body: ir.Block) -> list[ir.Expr]:
    """The index of every element write to a slice parameter in `body`."""
    out = []
    for n in walk(body):
        if isinstance(n, ir.Assign):
            target = n.target
            while isinstance(target, ir.Field):
                target = target.base
            if isinstance(target, ir.Index) and isinstance(target.base, ir.Var) \
                    and target.base.binding.kind == "param":
                out.append(target.index)
    return out


def _mentions_any(expr, bindings: set[ir.Binding]) -> bool:
    return any(isinstance(n, ir.Var) and n.binding in bindings for n in walk(expr))


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
        # A value computed from an earlier loop's reduction is known only once that loop's launch has ended.
        after_reduction = stmt.init is not None and _mentions_any(stmt.init, set(shape.accumulators))
        sink.error("RG0107", f"`{b.name}` must be computable from the parameters alone", stmt.span,
                   "this reads data that only a GPU thread can see",
                   help="return the reduced value, and pass it to a second kernel call" if after_reduction
                   else "move this `let` inside the parallel loop")
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
