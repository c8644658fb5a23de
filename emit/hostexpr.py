"""Serializing the expressions the host evaluates (loop bounds, reduction seeds, kernel results) into
the manifest's small JSON expression language, which the runtime interprets with Rust's semantics.

    {"lit": 0, "type": "usize"}          a literal
    {"param": "alpha"}                   a scalar parameter's value
    {"len": "a"}                         a slice parameter's length (an array's is a literal)
    {"local": "n"}                       a preamble `let`
    {"reduction": "sum"}                 a reduction's value after its launch
    {"op": "+", "args": [x, y], "type": "usize"}     + - * / % & | ^ << >> == != < <= > >= && || neg not
                                         (/ and % also carry their "source", the place of a panic)
    {"cast": x, "type": "f64"}
    {"call": "min", "args": [x, y], "type": "usize"} min max abs sqrt wrapping_add wrapping_sub wrapping_mul
    {"tuple": [x, y]}
    {"field": "n", "of": x}               a field of a struct parameter
    {"element": "x", "index": i, ...}     one element of a slice parameter, read before the launch
"""
from __future__ import annotations

import math

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import ArrayType, RefType


def host_expr(e, reductions: set = frozenset(), consts: dict | None = None) -> dict:
    if isinstance(e, ir.Lit):
        value = e.value
        if isinstance(value, float) and not math.isfinite(value):
            value = str(value)  # JSON has no inf or nan: they travel as "inf", "-inf", "nan"
        return {"lit": value, "type": str(e.ty)}
    if isinstance(e, ir.ConstRef):
        return host_expr(consts[e.name].value, reductions, consts)
    if isinstance(e, ir.Var):
        b = e.binding
        if b in reductions:
            return {"reduction": b.name}
        return {"param": b.name} if b.kind == "param" else {"local": b.name}
    if isinstance(e, ir.Unary):
        return {"op": "neg" if e.op == "-" else "not", "args": [host_expr(e.operand, reductions, consts)],
                "type": str(e.ty)}
    if isinstance(e, ir.Binary):
        out = {"op": e.op, "args": [host_expr(e.lhs, reductions, consts), host_expr(e.rhs, reductions, consts)],
               "type": str(e.lhs.ty)}
        if e.op in ("/", "%"):  # an integer one may panic, where Rust places the panic
            out["source"] = str(e.span)
        return out
    if isinstance(e, ir.Cast):
        return {"cast": host_expr(e.operand, reductions, consts), "from": str(e.operand.ty), "type": str(e.ty)}
    if isinstance(e, ir.Intrinsic):
        if e.name == "len":
            seq = e.args[0]
            target = seq.ty.target if isinstance(seq.ty, RefType) else seq.ty
            if isinstance(target, ArrayType):
                return {"lit": target.length, "type": "usize"}
            return {"len": seq.binding.name}
        return {"call": e.name, "args": [host_expr(a, reductions, consts) for a in e.args], "type": str(e.args[0].ty)}
    if isinstance(e, ir.Index):
        return {"element": e.base.binding.name, "index": host_expr(e.index, reductions, consts), "type": str(e.ty),
                "source": str(e.span)}
    if isinstance(e, ir.Field):
        return {"field": e.name, "of": host_expr(e.base, reductions, consts)}
    if isinstance(e, ir.TupleLit):
        return {"tuple": [host_expr(a, reductions, consts) for a in e.elems]}
    raise ValueError(f"not a host expression: {type(e).__name__}")
