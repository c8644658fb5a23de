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
from rs2gpu.ir.plan import KernelPlan, ParallelLoop, Reduction, is_host_evaluable
from rs2gpu.ir.types import (ArrayType, PrimType, RefType, SliceType, StructType, TupleType, Type, align_of,
                             size_of)
from rs2gpu.ir.walk import walk

OP_NAMES = {"+": "add", "*": "mul", "min": "min", "max": "max", "&": "and", "|": "or", "^": "xor"}
USIZE = PrimType("usize")


def symbol(kernel: str, index: int) -> str:
    return f"rs2gpu_{kernel}_{index}"


def param_abi(p: ir.Binding, restrict: bool) -> list[dict]:
    """The C++ parameters, and their sizes, that one Rust parameter becomes."""
    name = cxx_name(p.name)
    qualifier = " __restrict__" if restrict else ""
    ty = p.ty
    if isinstance(ty, RefType):
        target = ty.target
        elem = target.elem if isinstance(target, (SliceType, ArrayType)) else target
        const = "" if ty.mutable else "const "
        out = [{"name": name, "cxx": f"{const}{cxx_type(elem)}*{qualifier} {name}", "role": "pointer",
                "size": 8, "align": 8}]
        if isinstance(target, SliceType):
            out.append({"name": name + "_len", "cxx": f"const usize {name}_len", "role": "length", "size": 8,
                        "align": 8})
        return out
    return [{"name": name, "cxx": f"const {cxx_type(ty)} {name}", "role": "value", "size": size_of(ty),
             "align": align_of(ty)}]


def helper_context(fn: ir.Function) -> dict:
    names = LocalNames()
    params = []
    for p in fn.params:
        names.name(p)
        params += [a["cxx"] for a in param_abi(p, restrict=False)]
    signature = f"{cxx_type(fn.ret) if fn.ret != TupleType(()) else 'void'} {cxx_name(fn.name)}({', '.join(params)})"
    emitter = BodyEmitter(names, indent=1)
    emitter.block(fn.body, "return")
    return {"rust_name": fn.source_name, "source": str(fn.span), "signature": signature, "body": emitter.lines}


def identity(r: Reduction) -> str:
    ty: PrimType = r.binding.ty
    t = cxx_type(ty)
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


def launch_context(plan: KernelPlan, index: int, loop: ParallelLoop) -> dict:
    names = LocalNames()
    params = []
    for p in plan.function.params:
        names.name(p)  # parameters keep their Rust names; locals that shadow them get suffixes
        params += [a["cxx"] for a in param_abi(p, restrict=True)]
    index_type = cxx_type(loop.index.ty)
    params += [f"const {index_type} rs2gpu_start", "const usize rs2gpu_count"]
    reductions = []
    for r in loop.reductions:
        name = names.name(r.binding)
        params.append(f"{cxx_type(r.binding.ty)}* __restrict__ rs2gpu_result_{name}")
        reductions.append({"name": name, "type": cxx_type(r.binding.ty), "identity": identity(r),
                           "op_name": OP_NAMES[r.op]})
    preamble = BodyEmitter(names, indent=1)
    used = {n.binding for n in walk(loop.body) if isinstance(n, ir.Var)} | \
           {n.binding for n in walk(loop.end) if isinstance(n, ir.Var)}
    for let in _needed_preamble(plan.preamble, used):
        preamble.statement(let)
    index_name = names.name(loop.index)
    body = BodyEmitter(names, indent=2)
    body.block(loop.body)
    wide = loop.index.ty == USIZE or loop.index.ty == PrimType("u64")
    index_value = "rs2gpu_start + rs2gpu_t" if wide else f"({index_type})((u64)rs2gpu_start + rs2gpu_t)"
    return {"symbol": symbol(plan.name, index), "source": str(loop.span), "params": params,
            "preamble": preamble.lines, "reductions": reductions, "index": index_name,
            "index_type": index_type, "index_value": index_value, "body": body.lines}


def _needed_preamble(preamble: tuple[ir.Let, ...], used: set) -> list[ir.Let]:
    """The preamble `let`s a loop reads, directly or through other preamble `let`s, in order."""
    needed = set(used)
    for let in reversed(preamble):
        if let.binding in needed and let.init is not None:
            needed |= {n.binding for n in walk(let.init) if isinstance(n, ir.Var)}
    return [let for let in preamble if let.binding in needed]


def manifest_entry(plan: KernelPlan, files: dict[str, str], consts: dict) -> dict:
    fn = plan.function
    params = []
    for pp in plan.params:
        p = pp.binding
        entry = {"name": p.name, "type": str(p.ty), "transfer": pp.transfer, "reason": pp.reason,
                 "abi": [{k: a[k] for k in ("name", "role", "size", "align")} for a in param_abi(p, True)]}
        entry.update(_param_kind(p.ty))
        params.append(entry)
    reduction_bindings = {r.binding for loop in plan.loops for r in loop.reductions}
    launches = []
    for i, loop in enumerate(plan.loops):
        launches.append({
            "symbol": symbol(plan.name, i), "source": str(loop.span), "index_type": str(loop.index.ty),
            "start": host_expr(loop.start, consts=consts), "end": host_expr(loop.end, consts=consts),
            "inclusive": loop.inclusive,
            "reductions": [{"name": r.binding.name, "type": str(r.binding.ty), "op": r.op,
                            "init": host_expr(_seed(plan, r.binding), consts=consts)} for r in loop.reductions],
        })
    preamble = []
    host_values: set = set()
    for let in plan.preamble:
        if let.init is not None and is_host_evaluable(let.init, host_values):
            preamble.append({"name": let.binding.name, "type": str(let.binding.ty),
                             "expr": host_expr(let.init, consts=consts)})
            host_values.add(let.binding)
    result = None
    if plan.result is not None:
        result = {"type": str(fn.ret), "expr": host_expr(plan.result, reduction_bindings, consts)}
    return {"source": str(fn.span), "rust_path": fn.rust_path, "files": files, "fast_math": fn.fast_math, "params": params,
            "preamble": preamble, "launches": launches, "returns": result,
            "geometry": "one thread per iteration of each parallel loop; grid = ceil(count / block_size) "
                        "blocks (capped), each thread strides by the grid when the count exceeds it"}


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
