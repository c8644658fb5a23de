"""From a `KernelPlan` and its launches' template contexts to the kernel's typed ABI (`ir.abi.KernelABI`).

The emitter decides the argument layout and the entry points while it renders the C++ (see
`emit.kernels`); this module states them as data for the host side, with every host expression the runtime
and the Rust host module evaluate.
"""
from __future__ import annotations

from rs2gpu.emit.covering import COVERING_LIMIT
from rs2gpu.emit.hostexpr import host_expr
from rs2gpu.emit.kernels import (arrays_by_value, element_seed, launch_axes, param_abi, parameter_names, result_words,
                                 seed_expr, signals_done)
from rs2gpu.emit.privatize import capacity, private_scatter
from rs2gpu.emit.vector import VECTOR_BYTES
from rs2gpu.emit.verify import read_windows
from rs2gpu.ir import abi
from rs2gpu.ir import plan as checked
from rs2gpu.ir.abi import EntryKind
from rs2gpu.ir.plan import KernelPlan, ParallelLoop, is_host_evaluable
from rs2gpu.ir.types import ArrayType, PrimType, RefType, SliceType, StructType, Type, align_of, size_of


def kernel_abi(plan: KernelPlan, files: dict[str, str], consts: dict, panics: list[dict], launches: list[dict],
               reserved=frozenset()) -> abi.KernelABI:
    """The ABI of `plan`'s kernel; `launches` are its launches' template contexts, `panics` the panic sites of
    its file, `files` its generated file per target."""
    fn = plan.function
    names = parameter_names(fn, reserved)
    by_value = arrays_by_value(plan)
    params = tuple(_param(pp, param_abi(pp.binding, True, names, by_value=pp.binding in by_value))
                   for pp in plan.params)
    host_values: set = set()
    preamble = []
    for let in plan.preamble:
        if let.init is not None and is_host_evaluable(let.init, host_values):
            preamble.append(abi.HostLet(let.binding.name, str(let.binding.ty), host_expr(let.init, consts=consts),
                                        str(let.span)))
            host_values.add(let.binding)
    returns = None
    if plan.result is not None:
        reductions = {b for loop in plan.loops for r in loop.reductions for b in (r.binding, r.location) if b}
        returns = abi.Returned(str(fn.ret), host_expr(plan.result, reductions, consts))
    generic = abi.GenericInstance(fn.source_name, tuple(str(t) for t in fn.type_args)) if fn.type_args else None
    return abi.KernelABI(
        name=plan.name, source=str(fn.span), rust_path=fn.rust_path, files=dict(files), fast_math=fn.fast_math,
        params=params, preamble=tuple(preamble),
        launches=tuple(_launch(plan, i, loop, context, consts)
                       for i, (loop, context) in enumerate(zip(plan.loops, launches))),
        returns=returns, panics=tuple(abi.PanicSite(**site) for site in panics), result_words=result_words(plan),
        generic=generic,
        schedule=tuple(_step(step, consts) for step in plan.schedule) if plan.host_loops else None)


def _launch(plan: KernelPlan, index: int, loop: ParallelLoop, context: dict, consts) -> abi.Launch:
    return abi.Launch(
        source=str(loop.span),
        dims=tuple(abi.Dim(d.index.name, str(d.index.ty), axis, host_expr(d.start, consts=consts),
                           host_expr(d.end, consts=consts), d.inclusive)
                   for d, axis in zip(loop.dims, launch_axes(loop))),
        lengths=tuple(context["lengths"]), numbered=context["numbered"], stops=context["stops"],
        signals_done=signals_done(plan, index),
        entry_points=tuple(_entry_point(e, loop, consts) for e in context["entries"]),
        reductions=tuple(_reduction(plan, r, consts) for r in loop.reductions),
        scatters=tuple(abi.Scatter(s.param.name, s.op, tuple(str(u.assign.span) for u in s.updates))
                       for s in loop.scatters),
        stride_checks=tuple(abi.StrideCheck(_poly(c.terms, consts), str(c.span)) for c in loop.launch_checks),
        bounds=tuple(_bounds(b, consts) for b in loop.bounds),
        guarded_bounds=tuple(_bounds(b, consts) for b in loop.guarded_bounds),
        index_lists=tuple(_index_list(c, consts) for c in loop.index_lists),
        uniforms=tuple(abi.Uniform(b.name, str(b.ty)) for b in loop.uniforms),
        inner_loops=context["inner_loops"])


def _entry_point(entry: dict, loop: ParallelLoop, consts) -> abi.EntryPoint:
    """What the host needs of one entry point, by its kind (see `ir.abi.EntryKind`)."""
    kind = entry["kind"]
    fields: dict = {}
    if kind in (EntryKind.TILES, EntryKind.COVERING, EntryKind.PROVEN):
        block = tuple(entry["block"]) if entry["block"] else None
        fields["grid"] = abi.CoveringGrid(block, COVERING_LIMIT, entry["lead"], tuple(entry["tile"]), entry["staging"],
                                          entry["fill"])
    if kind == EntryKind.PROVEN:
        lists = [c.list_param.name for c in loop.index_lists] + [r.list_param.name for r in loop.list_reads]
        fields["proof"] = abi.ListProof(tuple(dict.fromkeys(lists)), tuple(
            abi.ListRead(r.list_param.name, r.param.name, r.scale, _poly(r.offset, consts), str(r.span))
            for r in loop.list_reads))
    if kind == EntryKind.VECTOR:
        lanes = entry["plan"]
        tested = () if lanes.rows_checked else lanes.aligned  # a nest's rows test their own alignment
        fields["vector"] = abi.VectorLanes(lanes.width, VECTOR_BYTES, tuple(
            abi.AlignedSlice(s.slice.name, lanes.head + lanes.first_offset(s)) for s in tested))
        if lanes.rows_checked:  # one thread per group of a row, on a grid that covers them
            fields["grid"] = abi.CoveringGrid(None, COVERING_LIMIT)
    if kind == EntryKind.L2_ADDS:
        fields["l2_adds"] = abi.L2Footprint(entry["plan"].bytes_per_iteration)
    if "split" in entry:
        fields["split"] = abi.SplitIterations(**entry["split"])
    if kind == EntryKind.PRIVATE:
        scatter = private_scatter(loop)
        fields["private"] = abi.PrivateCopy(scatter.param.name, capacity(scatter))
    return abi.EntryPoint(kind, entry["symbol"], entry["records_panics"], tuple(entry["checks"]), **fields)


def _step(step, consts) -> int | abi.HostLoop:
    """A launch's index, or a host loop with the `let`s the host evaluates in it."""
    if isinstance(step, int):
        return step
    return abi.HostLoop(
        var=step.var.name, type=str(step.var.ty), start=host_expr(step.start, consts=consts),
        end=host_expr(step.end, consts=consts), inclusive=step.inclusive, source=str(step.span),
        locals=tuple(abi.HostLet(let.binding.name, str(let.binding.ty), host_expr(let.init, consts=consts),
                                 str(let.span)) for let in step.host_lets),
        body=tuple(_step(s, consts) for s in step.body))


def _index_list(check: checked.IndexListCheck, consts) -> abi.IndexListWrite:
    """A write through an index list, with the reads through the list grouped in the windows the host
    computes for each call, in the order the launch takes them (see `emit.verify`)."""
    return abi.IndexListWrite(
        list=check.list_param.name, position=_poly(check.position, consts), scale=check.scale,
        offset=_poly(check.offset, consts), target=check.target.name, source=str(check.span),
        bounds=None if check.bounds is None else str(check.bounds),
        gathers=tuple(abi.ListGather(g.param.name, str(g.span)) for g in check.gathers),
        windows=tuple(abi.ReadWindow(param.name, scale, tuple(_poly(g.offset, consts) for g in gathers))
                      for param, scale, gathers in read_windows(check)))


def _bounds(check: checked.BoundsCheck, consts) -> abi.BoundsCheck:
    form = check.form
    loops = tuple(abi.IndexLoop(_poly(loop.start, consts), _poly(loop.end, consts), loop.inclusive, str(loop.ty),
                                _poly(loop.coefficient, consts), tuple(loop.at)) for loop in form.loops)
    index = abi.IndexForm(_poly(form.rest, consts), tuple(_poly(a, consts) for a in form.axes), loops,
                          tuple(form.at))
    return abi.BoundsCheck(check.param.name, _poly(check.low, consts), _poly(check.high, consts),
                           tuple(_poly(e, consts) for e in check.extents), str(check.span),
                           tuple(abi.ExactRange(_poly(bound, consts), low, high) for bound, low, high in check.exact),
                           index)


def _reduction(plan: KernelPlan, r: checked.Reduction, consts) -> abi.Reduction:
    location = None
    if r.location is not None:
        location = abi.Location(r.location.name, str(r.location.ty),
                                host_expr(seed_expr(plan, r.location), consts=consts), r.first)
    return abi.Reduction(r.binding.name, str(r.binding.ty), r.op, host_expr(seed_expr(plan, r.binding), consts=consts),
                         element_seed(plan, r) is not None, location)


def _poly(terms, consts) -> abi.Poly:
    """Σ coefficient · Π factors, each factor a host expression (evaluated with exact integers)."""
    return tuple(abi.Term(coefficient, tuple(host_expr(f, consts=consts) for f in factors))
                 for coefficient, factors in terms)


def _param(pp: checked.ParamPlan, parts: list[dict]) -> abi.Param:
    p, ty = pp.binding, pp.binding.ty
    abi_parts = tuple(abi.ArgPart(a["name"], abi.ArgRole(a["role"]), a["size"], a["align"]) for a in parts)
    common = dict(name=p.name, rust_type=str(ty), transfer=abi.Transfer(pp.transfer), reason=pp.reason,
                  parts=abi_parts)
    if isinstance(ty, RefType):
        target = ty.target
        if isinstance(target, SliceType):
            return abi.Param(kind=abi.ParamKind.SLICE, mutable=ty.mutable, layout=layout(target.elem), **common)
        if isinstance(target, ArrayType):
            return abi.Param(kind=abi.ParamKind.ARRAY, mutable=ty.mutable, layout=layout(target.elem),
                             length=target.length, **common)
        return abi.Param(kind=abi.ParamKind.STRUCT_REF, mutable=ty.mutable, layout=layout(target), **common)
    kind = abi.ParamKind.SCALAR if isinstance(ty, PrimType) else abi.ParamKind.STRUCT
    return abi.Param(kind=kind, mutable=False, layout=layout(ty), **common)


def layout(ty: Type) -> abi.Layout:
    """The memory layout of a Rust type, as the host side reads and writes its bytes."""
    if isinstance(ty, StructType):
        return abi.Layout(str(ty), ty.size, ty.align,
                          fields=tuple(abi.FieldLayout(f.name, f.offset, layout(f.ty)) for f in ty.fields))
    if isinstance(ty, ArrayType):
        return abi.Layout(str(ty), size_of(ty), align_of(ty), elem=layout(ty.elem), length=ty.length)
    return abi.Layout(str(ty), size_of(ty), align_of(ty))
