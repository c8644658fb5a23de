"""The encodings of the half-precision types, f16 (IEEE binary16) and bf16 (bfloat16): a value's bits and
back, for the constants the frontend reads, the literals the emitter writes and the scalars the runtime
passes. Rounding is to nearest, ties to even, once from the exact value (an int or a float), as the
support crate's `from_f64` rounds; a NaN becomes 0x7FFF, the NaN of every half operation."""
from __future__ import annotations

import math
import struct
from fractions import Fraction

# (exponent bits, fraction bits) of each half type
FORMATS = {"f16": (5, 10), "bf16": (8, 7)}
NAN_BITS = 0x7FFF


def half_bits(value: int | float | Fraction, name: str) -> int:
    """The bits of the `name` value nearest to `value`."""
    return rounded_bits(value, *FORMATS[name])


def f32_value(text: str) -> float:
    """The f32 nearest to the decimal `text` (rounded once, as rustc rounds an f32 literal)."""
    bits = rounded_bits(Fraction(text), 8, 23)
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def rounded_bits(value: int | float | Fraction, exp_bits: int, man_bits: int) -> int:
    """The bits of the binary float format with `exp_bits` exponent and `man_bits` fraction bits nearest to
    `value`; a NaN is NAN_BITS (for the half types)."""
    if isinstance(value, float) and math.isnan(value):
        return NAN_BITS
    negative = value < 0 or (isinstance(value, float) and math.copysign(1.0, value) < 0)
    sign = 1 << (exp_bits + man_bits) if negative else 0
    infinity = ((1 << exp_bits) - 1) << man_bits
    if isinstance(value, float) and math.isinf(value):
        return sign | infinity
    exact = abs(Fraction(value))
    if exact == 0:
        return sign
    bias = (1 << (exp_bits - 1)) - 1
    top = exact.numerator.bit_length() - exact.denominator.bit_length()
    if Fraction(2) ** top > exact:
        top -= 1  # now 2^top <= exact < 2^(top + 1)
    last = max(top, 1 - bias) - man_bits  # the exponent of the result's last place
    scaled = exact / Fraction(2) ** last
    r = math.floor(scaled)
    rest = scaled - r
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and r % 2 == 1):
        r += 1
    if r == 1 << (man_bits + 1):
        r, last = r >> 1, last + 1
    if r < 1 << man_bits:
        return sign | r
    field = last + man_bits + bias
    if field >= (1 << exp_bits) - 1:
        return sign | infinity
    return sign | field << man_bits | (r & ((1 << man_bits) - 1))


def half_value(bits: int, name: str) -> float:
    """The value of the `name` bits `bits` (every one is exact as a Python float)."""
    exp_bits, man_bits = FORMATS[name]
    sign = -1.0 if bits & 0x8000 else 1.0
    field = (bits >> man_bits) & ((1 << exp_bits) - 1)
    fraction = bits & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    if field == (1 << exp_bits) - 1:
        return math.nan if fraction else sign * math.inf
    if field == 0:
        return sign * math.ldexp(fraction, 1 - bias - man_bits)
    return sign * math.ldexp(fraction | 1 << man_bits, field - bias - man_bits)
