"""Rust's semantics of the binary operators on plain values, shared by the two evaluators that compute
Rust expressions in Python: constant evaluation at translate time (`frontend/consteval.py`, where an
overflow is an error) and the host expressions of a call (`runtime/hostexpr.py`, where integers wrap)."""
from __future__ import annotations

import math

_COMPARISONS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
                "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
                "&&": lambda a, b: a and b, "||": lambda a, b: a or b}

FLOAT_OPERATORS = frozenset({"+", "-", "*", "/", "%"})


def is_comparison(op: str) -> bool:
    """A comparison or a logical operator: its value is a bool whatever the operands' type."""
    return op in _COMPARISONS


def compare(op: str, a, b) -> bool:
    return _COMPARISONS[op](a, b)


def float_binary(op: str, a: float, b: float) -> float:
    """IEEE 754 arithmetic as the GPU and rustc do it: no exceptions, infinities and NaNs instead (a
    remainder takes the dividend's sign, as C's fmod)."""
    if op == "/" and b == 0.0:
        if a == 0.0 or math.isnan(a) or math.isnan(b):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    if op == "%":
        if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0.0:
            return math.nan
        return a if math.isinf(b) else math.fmod(a, b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b


def truncated_quotient(a: int, b: int) -> int:
    """`a / b` rounded toward zero, as Rust's integer division (b nonzero); `a - b * q` is then `a % b`."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q
