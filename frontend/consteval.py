"""Evaluating constant expressions (array lengths, `const` items, match patterns) at translate time."""
from __future__ import annotations

import math
import struct

from rs2gpu.ir import nodes
from rs2gpu.ir.arith import FLOAT_OPERATORS, compare, float_binary, is_comparison, truncated_quotient
from rs2gpu.ir.types import PrimType


class NotConstant(Exception):
    pass


# Calls to `const fn`s evaluated one inside another at most: deeper is taken for recursion.
_CALL_DEPTH = 32


def evaluate(expr, crate_lowerer=None, params=None, depth: int = 0):
    """The value of a constant IR expression. Casts wrap integers as `as` does; arithmetic that overflows
    or divides by zero panics in Rust, and raises NotConstant here. `params` are the values of the
    parameters of the `const fn` whose body is being evaluated."""
    if isinstance(expr, nodes.Var) and params is not None and expr.binding in params:
        return params[expr.binding]
    if isinstance(expr, nodes.Call) and crate_lowerer is not None:
        return _call(expr, crate_lowerer, params, depth)
    if isinstance(expr, nodes.Lit):
        return round_float(expr.value, expr.ty) if isinstance(expr.value, float) else expr.value
    if isinstance(expr, nodes.ConstRef) and crate_lowerer is not None:
        return evaluate(crate_lowerer.consts[expr.name].value, crate_lowerer)
    if isinstance(expr, nodes.Unary):
        v = evaluate(expr.operand, crate_lowerer, params, depth)
        if expr.op == "-":
            return _checked(-v, expr.ty)
        return (not v) if isinstance(v, bool) else wrap(~v, expr.ty)
    if isinstance(expr, nodes.Cast):
        v = evaluate(expr.operand, crate_lowerer, params, depth)
        ty = expr.ty
        if isinstance(ty, PrimType) and ty.is_int:
            if isinstance(v, float):
                if math.isnan(v):
                    return 0
                lo, hi = int_range(ty)
                return max(lo, min(hi, int(v))) if math.isfinite(v) else (hi if v > 0 else lo)
            return wrap(int(v), ty)
        if isinstance(ty, PrimType) and ty.is_float:
            return round_float(float(v), ty)
        return v
    if isinstance(expr, nodes.Binary):
        a = evaluate(expr.lhs, crate_lowerer, params, depth)
        b = evaluate(expr.rhs, crate_lowerer, params, depth)
        return _binary(expr.op, a, b, expr.ty)
    raise NotConstant()


def _call(call, crate_lowerer, params, depth: int):
    """The value of a call to a helper whose body is one expression of its parameters, such as
    `const fn half(n: usize) -> usize { n / 2 }`, as rustc computes it for a `const` item."""
    fn = crate_lowerer.functions.get(call.func)
    if fn is None or fn.body.stmts or fn.body.tail is None or depth == _CALL_DEPTH:
        raise NotConstant()
    values = {p: evaluate(a, crate_lowerer, params, depth) for p, a in zip(fn.params, call.args)}
    return evaluate(fn.body.tail, crate_lowerer, values, depth + 1)


def _binary(op, a, b, ty):
    if is_comparison(op):
        return compare(op, a, b)
    if isinstance(a, float):
        if op not in FLOAT_OPERATORS:
            raise NotConstant()
        return round_float(float_binary(op, a, b), ty)
    if op in ("/", "%") and b == 0:
        raise NotConstant()  # rustc: "attempt to divide by zero", a panic
    if op in ("/", "%") and ty.is_signed and b == -1 and a == int_range(ty)[0]:
        raise NotConstant()  # MIN / -1 and MIN % -1 overflow and panic even in release builds
    if op in ("/", "%"):
        q = truncated_quotient(a, b)
        return wrap(q if op == "/" else a - b * q, ty)
    if op in ("<<", ">>"):
        if not 0 <= b < ty.bits:
            raise NotConstant()  # rustc: "attempt to shift left with overflow", an error in a constant
        return wrap(a << b, ty) if op == "<<" else a >> b
    value = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]
    return value if isinstance(value, bool) else _checked(value, ty)


def _checked(value, ty):
    """`value` if `ty` holds it: arithmetic that overflows in a constant is an error in rustc (E0080)."""
    if isinstance(value, int) and wrap(value, ty) != value:
        raise NotConstant()
    return value


def round_float(value: float, ty) -> float:
    """`value` rounded to the precision of `ty` (f32 arithmetic rounds every result to single precision)."""
    if isinstance(ty, PrimType) and ty.name == "f32" and math.isfinite(value):
        if abs(value) >= _F32_OVERFLOW:
            return math.copysign(math.inf, value)
        return struct.unpack("f", struct.pack("f", value))[0]
    return value


# The smallest magnitude that rounds to infinity in f32: halfway between f32::MAX and 2^128.
_F32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103


def int_range(ty: PrimType) -> tuple[int, int]:
    if ty.is_signed:
        return -(1 << (ty.bits - 1)), (1 << (ty.bits - 1)) - 1
    return 0, (1 << ty.bits) - 1


def wrap(value: int, ty) -> int:
    if not isinstance(ty, PrimType) or not ty.is_int:
        return value
    value &= (1 << ty.bits) - 1
    if ty.is_signed and value >= 1 << (ty.bits - 1):
        value -= 1 << ty.bits
    return value
