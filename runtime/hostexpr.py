"""Evaluating the manifest's host expressions (loop bounds, reduction seeds, kernel results) with
Rust's semantics: integers wrap at their width, shifts are masked, float→int casts saturate.

The expression language is described in `emit/hostexpr.py`, which writes it.
"""
from __future__ import annotations

import math
import struct

from rs2gpu.ir.arith import compare, float_binary, is_comparison, truncated_quotient
from rs2gpu.ir.types import INT_BITS as _INT_BITS


class HostPanic(ArithmeticError):
    """A host-evaluated expression panicked the way the Rust code would (division by zero); `source` is
    the place Rust names (the operation's), where the expression records it."""

    def __init__(self, message: str, source: str = "") -> None:
        super().__init__(message)
        self.source = source


class Environment:
    """The values a host expression can name. A plain slotted class: one is made per kernel call."""

    __slots__ = ("params", "lengths", "locals", "reductions", "read_element")

    def __init__(self, params: dict | None = None, lengths: dict | None = None, locals: dict | None = None,
                 reductions: dict | None = None) -> None:
        self.params = params if params is not None else {}          # scalar parameter values
        self.lengths = lengths if lengths is not None else {}       # slice parameter lengths
        self.locals = locals if locals is not None else {}          # preamble values
        self.reductions = reductions if reductions is not None else {}  # reduced values
        self.read_element = None  # (slice name, index, location) -> the element, for `x[0]`-style seeds


def wrap(value: int, ty: str) -> int:
    bits = _INT_BITS[ty]
    value &= (1 << bits) - 1
    if ty.startswith("i") and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _round_f32(x: float) -> float:
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _to_type(value, ty: str):
    if ty in _INT_BITS:
        return wrap(int(value), ty)
    if ty == "f32":
        return _round_f32(float(value))
    if ty == "f64":
        return float(value)
    if ty == "bool":
        return bool(value)
    return value


def _literal(value, ty: str):
    if isinstance(value, str):  # non-finite floats travel as text: "inf", "-inf", "nan"
        value = float(value)
    return _to_type(value, ty)


def int_to_f32(value: int) -> float:
    """`value as f32`, rounded once to 24 significant bits (ties to even): going through a double first
    would round twice and can land on the other neighbour."""
    magnitude = abs(value)
    extra = magnitude.bit_length() - 24
    if extra > 0:
        kept, dropped = divmod(magnitude, 1 << extra)
        half = 1 << (extra - 1)
        if dropped > half or (dropped == half and kept & 1):
            kept += 1
        magnitude = kept << extra
    return _round_f32(math.copysign(float(magnitude), value))


def _cast(value, src: str, dst: str):
    if dst == "f32" and src in _INT_BITS:
        return int_to_f32(value)
    if dst in _INT_BITS and isinstance(value, float):
        if math.isnan(value):
            return 0
        bits = _INT_BITS[dst]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst.startswith("i") else (0, (1 << bits) - 1)
        if math.isinf(value):
            return hi if value > 0 else lo
        return max(lo, min(hi, math.trunc(value)))
    if dst in _INT_BITS:
        return wrap(int(value), dst)
    return _to_type(value, dst)


def _binary(op: str, a, b, ty: str):
    if is_comparison(op):
        return compare(op, a, b)
    if ty in _INT_BITS:
        if op in ("/", "%"):
            if b == 0:
                raise HostPanic("attempt to divide by zero" if op == "/" else
                                "attempt to calculate the remainder with a divisor of zero")
            if b == -1 and ty.startswith("i") and a == -(1 << (_INT_BITS[ty] - 1)):
                # the one quotient that does not fit: Rust panics here even in a release build
                raise HostPanic("attempt to divide with overflow" if op == "/" else
                                "attempt to calculate the remainder with overflow")
            q = truncated_quotient(a, b)
            return wrap(q, ty) if op == "/" else wrap(a - b * q, ty)
        if op in ("<<", ">>"):
            shift = b & (_INT_BITS[ty] - 1)
            return wrap(a << shift, ty) if op == "<<" else wrap(a >> shift, ty)
        return wrap({"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op], ty)
    if ty == "bool":
        return {"&": a and b, "|": a or b, "^": a != b}[op]
    return _to_type(float_binary(op, a, b), ty)


def _call(name: str, args: list, ty: str):
    if name in ("min", "max"):
        a, b = args
        if ty in ("f32", "f64"):  # Rust's float min/max ignore a NaN operand
            if math.isnan(a):
                return b
            if math.isnan(b):
                return a
        return min(a, b) if name == "min" else max(a, b)
    if name == "abs":
        return wrap(abs(args[0]), ty) if ty in _INT_BITS else abs(args[0])
    if name == "sqrt":
        return _to_type(math.sqrt(args[0]) if args[0] >= 0 else math.nan, ty)
    if name in ("floor", "ceil", "trunc", "round"):
        x = args[0]
        if not math.isfinite(x):
            return x
        if name == "round":  # Rust rounds half away from zero; x - trunc(x) is exact
            whole = float(math.trunc(x))
            value = whole + math.copysign(1.0, x) if abs(x - whole) >= 0.5 else whole
        else:
            value = float({"floor": math.floor, "ceil": math.ceil, "trunc": math.trunc}[name](x))
        return _to_type(math.copysign(value, x) if value == 0 else value, ty)
    if name.startswith("wrapping_"):
        return _binary({"wrapping_add": "+", "wrapping_sub": "-", "wrapping_mul": "*"}[name], args[0], args[1], ty)
    raise ValueError(f"unknown host function {name}")


def evaluate(expr: dict, env: Environment):
    if "lit" in expr:
        return _literal(expr["lit"], expr["type"])
    if "param" in expr:
        return env.params[expr["param"]]
    if "len" in expr:
        return env.lengths[expr["len"]]
    if "local" in expr:
        return env.locals[expr["local"]]
    if "reduction" in expr:
        return env.reductions[expr["reduction"]]
    if "cast" in expr:
        return _cast(evaluate(expr["cast"], env), expr["from"], expr["type"])
    if "element" in expr:
        if env.read_element is None:
            raise ValueError("this expression reads slice elements, which needs the call's arrays")
        return env.read_element(expr["element"], evaluate(expr["index"], env), expr.get("source", ""))
    if "field" in expr:
        return evaluate(expr["of"], env)[expr["field"]]
    if "tuple" in expr:
        return tuple(evaluate(e, env) for e in expr["tuple"])
    if "call" in expr:
        return _call(expr["call"], [evaluate(a, env) for a in expr["args"]], expr["type"])
    op, ty = expr["op"], expr["type"]
    args = expr["args"]
    if op == "neg":
        value = evaluate(args[0], env)
        return wrap(-value, ty) if ty in _INT_BITS else -value
    if op == "not":
        value = evaluate(args[0], env)
        return (not value) if ty == "bool" else wrap(~value, ty)
    if op in ("&&", "||"):
        left = evaluate(args[0], env)
        if (op == "&&" and not left) or (op == "||" and left):
            return left
        return evaluate(args[1], env)
    left, right = evaluate(args[0], env), evaluate(args[1], env)
    try:
        return _binary(op, left, right, ty)
    except HostPanic as panic:
        raise HostPanic(str(panic), panic.source or expr.get("source", "")) from None
