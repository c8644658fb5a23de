"""From a `KernelPlan` to the template context of one generated file, and to its manifest entry.

The argument layout decided here is the ABI both sides must agree on: each `&[T]`/`&mut [T]` is a
pointer followed by a 64-bit length, `&[T; N]` and `&S` are pointers, scalars and structs go by value
at their exact width, and each launch appends the loop's first index, its iteration count, and one
result pointer per reduction.
"""
from __future__ import annotations

import math

from rs2gpu.emit.cxx_stmt import BodyEmitter
from rs2gpu.emit.cxx_types import cxx_type, float_literal, int_literal, tuple_struct_name
from rs2gpu.emit.hostexpr import host_expr
from rs2gpu.emit.names import LocalNames, cxx_name
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import HostLoop, KernelPlan, ParallelLoop, Reduction, is_host_evaluable
from rs2gpu.ir.types import (ArrayType, PrimType, RefType, SliceType, StructType, TupleType, Type, align_of,
                             size_of)
from rs2gpu.ir.walk import walk

OP_NAMES = {"+": "add", "*": "mul", "min": "min", "max": "max", "&": "and", "|": "or", "^": "xor"}
USIZE = PrimType("usize")


def symbol(kernel: str, index: int) -> str:
    return f"rs2gpu_{kernel}_{index}"


def param_abi(p: ir.Binding, restrict: bool, names: LocalNames) -> list[dict]:
    """The C++ parameters, and their sizes, that one Rust parameter becomes."""
    name = names.name(p)
    qualifier = " __restrict__" if restrict else ""
    ty = p.ty
    if isinstance(ty, RefType):
        target = ty.target
        elem = target.elem if isinstance(target, (SliceType, ArrayType)) else target
        const = "" if ty.mutable else "const "
        out = [{"name": name, "cxx": f"{const}{cxx_type(elem)}*{qualifier} {name}", "role": "pointer",
                "size": 8, "align": 8}]
        if isinstance(target, SliceType):
            length = names.length_name(p)
            out.append({"name": length, "cxx": f"const usize {length}", "role": "length", "size": 8, "align": 8})
        return out
    const = "" if p.mutable else "const "  # `mut x: f64` may be assigned in the body
    return [{"name": name, "cxx": f"{const}{cxx_type(ty)} {name}", "role": "value", "size": size_of(ty),
             "align": align_of(ty)}]


def global_names(crate: ir.Crate) -> frozenset[str]:
    """The C++ names of the crate's helpers, consts and structs, which no local may hide: Rust allows
    `let square = square(x);`, but in C++ the new `square` is already in scope in its initializer."""
    return frozenset(cxx_name(n) for n in [*(f.name for f in crate.functions if not f.is_kernel),
                                           *(c.name for c in crate.consts), *(s.ty.name for s in crate.structs)])


def parameter_names(fn: ir.Function, reserved=frozenset()) -> LocalNames:
    """The names of `fn`'s parameters and slice lengths, given out before any local's: parameters keep
    their Rust names (mangled where C++ needs it); locals that shadow them get suffixes."""
    names = LocalNames(reserved)
    for p in fn.params:
        names.name(p)
        if isinstance(p.ty, RefType) and isinstance(p.ty.target, SliceType):
            names.length_name(p)
    return names


def helper_context(fn: ir.Function, sites: PanicSites | None = None, reserved=frozenset()) -> dict:
    names = parameter_names(fn, reserved)
    params = []
    for p in fn.params:
        params += [a["cxx"] for a in param_abi(p, restrict=False, names=names)]
    signature = f"{cxx_type(fn.ret) if fn.ret != TupleType(()) else 'void'} {cxx_name(fn.name)}({', '.join(params)})"
    emitter = BodyEmitter(names, indent=1, sites=sites)
    emitter.block(fn.body, "return")
    return {"rust_name": fn.source_name, "source": str(fn.span), "signature": signature, "body": emitter.lines}


BLOCK = 256  # threads per block; the block reductions and the runtime's launch geometry rely on it


def identity(r: Reduction) -> str:
    """The value a thread's private accumulator starts from: combining with it changes nothing."""
    ty: PrimType = r.binding.ty
    t = cxx_type(ty)
    if r.op in ("minloc", "maxloc"):
        r = Reduction(r.binding, "min" if r.op == "minloc" else "max", r.span)
    if r.op == "+" or r.op in ("|", "^"):
        return float_literal(0.0, "0.0", ty) if ty.is_float else int_literal(0, ty)
    if r.op == "*":
        return float_literal(1.0, "1.0", ty) if ty.is_float else int_literal(1, ty)
    if r.op == "&":
        return f"(({t})~({t})0)"
    if ty.is_float:
        inf = float_literal(math.inf, "inf", ty)
        return inf if r.op == "min" else f"(-{inf})"
    return f"rs2gpu_int<{t}>::{'max' if r.op == 'min' else 'min'}"


class PanicSites:
    """Numbers the places of one generated file that can panic, in rendering order (the same for every
    target), and remembers what each one is, for the manifest."""

    def __init__(self) -> None:
        self.sites: list[dict] = []
        self._numbers: dict[tuple, int] = {}

    def site(self, kind: str, span) -> int:
        key = (kind, span)
        if key not in self._numbers:
            self.sites.append({"site": len(self.sites) + 1, "kind": kind, "source": str(span)})
            self._numbers[key] = len(self.sites)
        return self._numbers[key]


AXES = ("x", "y", "z")  # the innermost loop runs along x, so consecutive iterations are adjacent threads


def launch_axes(loop: ParallelLoop) -> list[str]:
    """The grid axis of each dimension, outermost first."""
    return list(reversed(AXES[:len(loop.dims)]))


def launch_context(plan: KernelPlan, index: int, loop: ParallelLoop, sites: PanicSites,
                   reserved=frozenset()) -> dict:
    names = parameter_names(plan.function, reserved)
    params = []
    for p in plan.function.params:
        params += [a["cxx"] for a in param_abi(p, restrict=True, names=names)]
    axes = launch_axes(loop)
    for dim, axis in zip(loop.dims, axes):
        params += [f"const {cxx_type(dim.index.ty)} rs2gpu_start_{axis}", f"const usize rs2gpu_count_{axis}"]
    params += [f"const {cxx_type(b.ty)} {names.name(b)}" for b in loop.uniforms]
    reductions = []
    for r in loop.reductions:
        name, ty = names.name(r.binding), cxx_type(r.binding.ty)
        params.append(f"{ty}* __restrict__ rs2gpu_result_{name}")
        declarations = [f"{ty} {name} = {identity(r)};"]
        if r.location is None:
            finish = f"rs2gpu_reduce_block<{BLOCK}>(rs2gpu_result_{name}, {name}, rs2gpu_op_{OP_NAMES[r.op]}());"
        else:
            # each block writes its best (value, location) pair; the host picks among the blocks
            loc, loc_ty = names.name(r.location), cxx_type(r.location.ty)
            params.append(f"{loc_ty}* __restrict__ rs2gpu_result_{loc}")
            declarations.append(f"{loc_ty} {loc} = rs2gpu_int<{loc_ty}>::{'max' if r.first else 'min'};")
            finish = (f"rs2gpu_reduce_block_location<{BLOCK}, {str(r.op == 'minloc').lower()}, "
                      f"{str(r.first).lower()}>(rs2gpu_result_{name}, rs2gpu_result_{loc}, {name}, {loc});")
        reductions.append({"declarations": declarations, "finish": finish})
    preamble = BodyEmitter(names, indent=1, sites=sites)
    used = {n.binding for n in walk(loop.body) if isinstance(n, ir.Var)}
    for let in _needed_preamble((*plan.preamble, *loop.lets), used):
        preamble.statement(let)
    loop_open, loop_close = [], []
    for depth, (dim, axis) in enumerate(zip(loop.dims, axes)):
        pad = "    " * (depth + 1)
        t = f"rs2gpu_t{axis}"
        index_type = cxx_type(dim.index.ty)
        wide = dim.index.ty in (USIZE, PrimType("u64"))
        value = f"rs2gpu_start_{axis} + {t}" if wide else f"({index_type})((u64)rs2gpu_start_{axis} + {t})"
        loop_open += [f"{pad}for (usize {t} = (usize)blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis}; "
                      f"{t} < rs2gpu_count_{axis}; {t} += (usize)gridDim.{axis} * blockDim.{axis}) {{",
                      f"{pad}    const {index_type} {names.name(dim.index)} = {value};"]
        loop_close.insert(0, f"{pad}}}")
    body = BodyEmitter(names, indent=len(loop.dims) + 1, sites=sites, hoisted=loop.hoisted)
    body.block(loop.body)
    return {"symbol": symbol(plan.name, index), "source": str(loop.span), "params": params,
            "host_loops": [f"`{h.var.name}` at {h.span}" for h in host_loops_around(plan.schedule, index) or ()],
            "preamble": preamble.lines, "reductions": reductions, "loop_open": loop_open,
            "loop_close": loop_close, "body": body.lines,
            "iteration": ", ".join(names.name(d.index) for d in loop.dims)}


def host_loops_around(schedule, index: int, around: tuple[HostLoop, ...] = ()) -> tuple[HostLoop, ...] | None:
    """The host loops launch `index` runs in, outermost first (None if the schedule does not hold it)."""
    for step in schedule:
        if isinstance(step, HostLoop):
            found = host_loops_around(step.body, index, (*around, step))
            if found is not None:
                return found
        elif step == index:
            return around
    return None


def _needed_preamble(preamble: tuple[ir.Let, ...], used: set) -> list[ir.Let]:
    """The preamble `let`s a loop reads, directly or through other preamble `let`s, in order."""
    needed = set(used)
    for let in reversed(preamble):
        if let.binding in needed and let.init is not None:
            needed |= {n.binding for n in walk(let.init) if isinstance(n, ir.Var)}
    return [let for let in preamble if let.binding in needed]


def manifest_entry(plan: KernelPlan, files: dict[str, str], consts: dict, panics: list[dict],
                   reserved=frozenset()) -> dict:
    fn = plan.function
    params = []
    names = parameter_names(fn, reserved)
    for pp in plan.params:
        p = pp.binding
        entry = {"name": p.name, "type": str(p.ty), "transfer": pp.transfer, "reason": pp.reason,
                 "abi": [{k: a[k] for k in ("name", "role", "size", "align")} for a in param_abi(p, True, names)]}
        entry.update(_param_kind(p.ty))
        params.append(entry)
    reduction_bindings = {b for loop in plan.loops for r in loop.reductions for b in (r.binding, r.location) if b}
    launches = []
    for i, loop in enumerate(plan.loops):
        launches.append({
            "symbol": symbol(plan.name, i), "source": str(loop.span),
            "dims": [{"index": d.index.name, "index_type": str(d.index.ty), "axis": axis,
                      "start": host_expr(d.start, consts=consts), "end": host_expr(d.end, consts=consts),
                      "inclusive": d.inclusive} for d, axis in zip(loop.dims, launch_axes(loop))],
            "reductions": [_reduction_json(plan, r, consts) for r in loop.reductions],
            "checks": [{"poly": _poly_json(check.terms, consts), "source": str(check.span)}
                       for check in loop.launch_checks],
            "bounds": [{"param": b.param.name, "low": _poly_json(b.low, consts), "high": _poly_json(b.high, consts),
                        "extents": [_poly_json(e, consts) for e in b.extents], "source": str(b.span),
                        "step": b.step}
                       for b in loop.bounds],
            "index_lists": [{"list": c.list_param.name, "position": _poly_json(c.position, consts), "scale": c.scale,
                             "offset": _poly_json(c.offset, consts), "target": c.target.name, "source": str(c.span)}
                            for c in loop.index_lists],
        })
        if loop.uniforms:
            launches[-1]["uniforms"] = [{"name": b.name, "type": str(b.ty)} for b in loop.uniforms]
    preamble = []
    host_values: set = set()
    for let in plan.preamble:
        if let.init is not None and is_host_evaluable(let.init, host_values):
            preamble.append({"name": let.binding.name, "type": str(let.binding.ty),
                             "expr": host_expr(let.init, consts=consts), "source": str(let.span)})
            host_values.add(let.binding)
    result = None
    if plan.result is not None:
        result = {"type": str(fn.ret), "expr": host_expr(plan.result, reduction_bindings, consts)}
    entry = {"source": str(fn.span), "rust_path": fn.rust_path, "files": files, "fast_math": fn.fast_math, "params": params,
            "preamble": preamble, "launches": launches, "returns": result, "panics": panics,
            "geometry": "one thread per iteration of each parallel loop; a loop nest of up to three dimensions "
                        "maps its innermost loop to x; blocks of block_size threads, grid = ceil(count / block) "
                        "per axis (capped), threads stride by the grid when a count exceeds it"}
    if fn.type_args:
        entry["generic"] = {"name": fn.source_name, "type_args": [str(t) for t in fn.type_args]}
    if plan.host_loops:
        entry["schedule"] = [_schedule_json(step, consts) for step in plan.schedule]
    return entry


def _schedule_json(step, consts) -> dict:
    """A launch (`{"launch": index}`) or a host loop, with the `let`s the host evaluates in it."""
    if isinstance(step, int):
        return {"launch": step}
    locals_ = [{"name": let.binding.name, "type": str(let.binding.ty), "expr": host_expr(let.init, consts=consts),
                "source": str(let.span)} for let in step.host_lets]
    return {"loop": {"var": step.var.name, "type": str(step.var.ty), "start": host_expr(step.start, consts=consts),
                     "end": host_expr(step.end, consts=consts), "inclusive": step.inclusive, "source": str(step.span),
                     "locals": locals_, "body": [_schedule_json(s, consts) for s in step.body]}}


def _reduction_json(plan: KernelPlan, r: Reduction, consts) -> dict:
    out = {"name": r.binding.name, "type": str(r.binding.ty), "op": r.op,
           "init": host_expr(_seed(plan, r.binding), consts=consts)}
    if r.location is not None:
        out.update({"location": r.location.name, "location_type": str(r.location.ty), "first": r.first,
                    "location_init": host_expr(_seed(plan, r.location), consts=consts)})
    return out


def _poly_json(terms, consts) -> list:
    """Σ coefficient · Π factors, each factor a host expression (evaluated with exact integers)."""
    return [[coefficient, [host_expr(f, consts=consts) for f in factors]] for coefficient, factors in terms]


def _seed(plan: KernelPlan, binding) -> ir.Expr:
    for stmt in plan.function.body.stmts:
        if isinstance(stmt, ir.Let) and stmt.binding is binding:
            return stmt.init
    raise KeyError(binding.name)


def _param_kind(ty: Type) -> dict:
    if isinstance(ty, RefType):
        target = ty.target
        if isinstance(target, SliceType):
            return {"kind": "slice", "mutable": ty.mutable, "elem": _layout(target.elem)}
        if isinstance(target, ArrayType):
            return {"kind": "array", "mutable": ty.mutable, "length": target.length, "elem": _layout(target.elem)}
        return {"kind": "struct_ref", "mutable": ty.mutable, "elem": _layout(target)}
    return {"kind": "scalar" if isinstance(ty, PrimType) else "struct", "layout": _layout(ty)}


def _layout(ty: Type) -> dict:
    out = {"type": str(ty), "size": size_of(ty), "align": align_of(ty)}
    if isinstance(ty, StructType):
        out["fields"] = [{"name": f.name, "offset": f.offset, **_layout(f.ty)} for f in ty.fields]
    if isinstance(ty, ArrayType):
        out["elem"] = _layout(ty.elem)
        out["length"] = ty.length
    return out


def struct_context(ty: StructType) -> dict:
    return {"name": cxx_name(ty.name), "rust_name": ty.name, "size": ty.size, "align": ty.align,
            "fields": [{"name": cxx_name(f.name), "rust_name": f.name, "type": cxx_type(f.ty), "offset": f.offset}
                       for f in ty.fields]}


def tuple_context(ty: TupleType) -> dict:
    return {"name": tuple_struct_name(ty),
            "fields": [{"name": f"f{i}", "type": cxx_type(t)} for i, t in enumerate(ty.elems)]}
