"""`const` items as C++ `constexpr` variables, usable from device code in both dialects.

A const's value is folded here whenever rustc's result is certain (integers wrap, `as` saturates, f64
arithmetic is IEEE's), because the prelude's helpers that give C++ Rust's semantics are device functions,
which a `constexpr` initializer cannot call.
"""
from __future__ import annotations

import math

from rs2gpu.emit.cxx_stmt import BodyEmitter
from rs2gpu.emit.cxx_types import cxx_type, float_literal, half_literal, int_literal
from rs2gpu.emit.names import LocalNames, cxx_name
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.half import f32_value, half_bits, half_value
from rs2gpu.ir.intrinsics import HALF_CONSTRUCTORS
from rs2gpu.ir.types import ArrayType, PrimType, RefType


def const_context(const: ir.ConstDef, crate: ir.Crate) -> dict:
    return {"name": cxx_name(const.name), "type": cxx_type(const.ty), "value": _value(const, crate)}


def _value(const: ir.ConstDef, crate: ir.Crate) -> str:
    """A literal where the value is known exactly here, else the expression itself."""
    value = _fold(const.value, {c.name: c for c in crate.consts})
    ty = const.ty
    if isinstance(ty, PrimType) and ty.is_half:
        bits = _half_bits(const.value, {c.name: c for c in crate.consts})
        if bits is not None:  # (a C++ constexpr can make a half value from its bits only)
            return half_literal(half_value(bits, ty.name), ty)
    if isinstance(ty, PrimType) and value is not None:
        if ty.is_bool:
            return "true" if value else "false"
        if ty.is_int:
            return int_literal(int(value), ty)
        if ty.name == "f64" and isinstance(value, float):
            return float_literal(value, repr(value), ty)
    emitter = BodyEmitter(LocalNames(), line_directives=False)
    return emitter.expr(const.value)


def integer_value(expr, consts: dict[str, ir.ConstDef]) -> int | None:
    """The value of an integer expression that is the same wherever it runs (literals, consts, the length of
    an array), or None."""
    value = _fold(expr, consts)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _fold(expr, consts):
    """Integer, bool and f64 constants folded exactly as rustc does; None when that is not certain here
    (f32 and half arithmetic, which are rendered as C++ operators instead, and anything that would panic)."""
    ty = getattr(expr, "ty", None)
    if not isinstance(ty, PrimType) or ty.name == "f32" or ty.is_half:
        return None
    if isinstance(expr, ir.Lit):
        return expr.value
    if isinstance(expr, ir.Intrinsic) and expr.name == "len":
        receiver = expr.args[0].ty
        receiver = receiver.target if isinstance(receiver, RefType) else receiver
        return receiver.length if isinstance(receiver, ArrayType) else None
    if isinstance(expr, ir.ConstRef):
        return _fold(consts[expr.name].value, consts)
    if isinstance(expr, ir.Unary):
        v = _fold(expr.operand, consts)
        if v is None:
            return None
        if expr.op == "-":
            return -v if isinstance(v, float) else _wrap(-v, ty)
        return (not v) if isinstance(v, bool) else _wrap(~v, ty)
    if isinstance(expr, ir.Cast):
        v = _fold(expr.operand, consts)
        if v is None:
            return None
        if ty.is_float:
            return float(v)
        if ty.is_bool:
            return v
        if isinstance(v, float):  # saturating, NaN to 0
            lo, hi = _range(ty)
            return 0 if math.isnan(v) else max(lo, min(hi, int(v))) if math.isfinite(v) else (hi if v > 0 else lo)
        return _wrap(int(v), ty)
    if isinstance(expr, ir.Binary):
        a, b = _fold(expr.lhs, consts), _fold(expr.rhs, consts)
        if a is None or b is None:
            return None
        return _binary(expr.op, a, b, expr.lhs.ty)
    return None


def _half_bits(expr, consts) -> int | None:
    """The bits of a half-typed const: one of the type's constants, another const, its negation, or
    `from_bits`, `from_f32` or `from_f64` of a literal, each rounded as the support crate rounds it."""
    if isinstance(expr, ir.Lit):
        return half_bits(float(expr.value), expr.ty.name)
    if isinstance(expr, ir.ConstRef):
        return _half_bits(consts[expr.name].value, consts)
    if isinstance(expr, ir.Unary) and expr.op == "-":
        bits = _half_bits(expr.operand, consts)
        return None if bits is None else bits ^ 0x8000
    if isinstance(expr, ir.Intrinsic) and expr.name in HALF_CONSTRUCTORS:
        arg = expr.args[0]
        if expr.name == "from_bits":
            value = _fold(arg, consts)
            return None if value is None else int(value)
        if isinstance(arg, ir.Lit) and arg.ty.name == "f32" and math.isfinite(arg.value):
            return half_bits(f32_value(arg.text), expr.ty.name)
        value = _fold(arg, consts)
        return None if value is None else half_bits(float(value), expr.ty.name)
    return None


def _binary(op: str, a, b, ty: PrimType):
    comparisons = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}
    if op in comparisons:
        return comparisons[op]
    if op in ("&&", "||"):
        return (a and b) if op == "&&" else (a or b)
    if ty.is_bool:
        return {"&": a and b, "|": a or b, "^": a != b}.get(op)
    if ty.is_float:
        if op in ("+", "-", "*") or (op == "/" and b != 0.0):
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op]
        return None  # division by zero and `%`: left to the C++ compiler
    if op in ("/", "%"):
        if b == 0 or (ty.is_signed and b == -1 and a == _range(ty)[0]):
            return None  # a panic in rustc's const evaluation
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q
        return _wrap(q if op == "/" else a - q * b, ty)
    if op in ("<<", ">>"):
        shift = b % ty.bits
        return _wrap(a << shift if op == "<<" else _wrap(a, ty) >> shift, ty)
    return _wrap({"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op], ty)


def _range(ty: PrimType) -> tuple[int, int]:
    if ty.is_signed:
        return -(1 << (ty.bits - 1)), (1 << (ty.bits - 1)) - 1
    return 0, (1 << ty.bits) - 1


def _wrap(value: int, ty: PrimType) -> int:
    value &= (1 << ty.bits) - 1
    if ty.is_signed and value >= 1 << (ty.bits - 1):
        value -= 1 << ty.bits
    return value
