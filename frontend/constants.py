"""Associated constants of the primitive types (`i32::MAX`, `f64::EPSILON`, `f64::consts::PI`), and of the
half types (`f16::MAX`, `bf16::PI`)."""
from __future__ import annotations

import math
import struct

from rs2gpu.frontend.consteval import int_range
from rs2gpu.ir.half import FORMATS, NAN_BITS, half_bits, half_value
from rs2gpu.ir.types import PrimType


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


_FLOAT_LIMITS = {
    "f64": {"MAX": 1.7976931348623157e308, "MIN": -1.7976931348623157e308, "EPSILON": 2.220446049250313e-16,
            "MIN_POSITIVE": 2.2250738585072014e-308},
    "f32": {"MAX": 3.4028234663852886e38, "MIN": -3.4028234663852886e38, "EPSILON": 1.1920928955078125e-07,
            "MIN_POSITIVE": 1.1754943508222875e-38},
}
_SPECIAL = {"INFINITY": math.inf, "NEG_INFINITY": -math.inf, "NAN": math.nan}
_MATH = {
    "PI": math.pi, "E": math.e, "TAU": math.tau, "SQRT_2": math.sqrt(2.0), "LN_2": math.log(2.0),
    "LN_10": math.log(10.0), "LOG2_E": math.log2(math.e), "LOG10_E": math.log10(math.e),
    "FRAC_PI_2": math.pi / 2, "FRAC_PI_4": math.pi / 4, "FRAC_PI_8": math.pi / 8, "FRAC_1_PI": 1 / math.pi,
    "FRAC_2_PI": 2 / math.pi, "FRAC_2_SQRT_PI": 2 / math.sqrt(math.pi),
    # Rust's decimal values, where computing them in f64 rounds to the neighbouring value
    "FRAC_PI_3": float("1.04719755119659774615421446109316763"),
    "FRAC_PI_6": float("0.52359877559829887307710723054658381"),
    "FRAC_1_SQRT_2": float("0.707106781186547524400844362104849039"),
    "LOG2_10": math.log2(10.0), "LOG10_2": math.log10(2.0),
}


def associated_constant(type_name: str, path: list[str]) -> int | float | None:
    """The value of `type_name::path` (e.g. ("f64", ["consts", "PI"])), or None if unknown."""
    ty = PrimType(type_name)
    if ty.is_int and len(path) == 1:
        lo, hi = int_range(ty)
        return {"MAX": hi, "MIN": lo, "BITS": ty.bits}.get(path[0])
    if not ty.is_float:
        return None
    if len(path) == 2 and path[0] == "consts":
        value = _MATH.get(path[1])
    elif len(path) == 1:
        value = _SPECIAL.get(path[0], _FLOAT_LIMITS[type_name].get(path[0]))
    else:
        value = None
    if value is None or type_name == "f64" or not math.isfinite(value):
        return value
    return _f32(value)


def half_constant(type_name: str, path: list[str]) -> float | None:
    """The value of the half type's constant `type_name::path` (`f16::MAX`; `f16::PI` is `f64::consts::PI`
    rounded once, as the support crate defines it), or None if unknown."""
    if len(path) != 1:
        return None
    exp_bits, man_bits = FORMATS[type_name]
    bias = (1 << (exp_bits - 1)) - 1
    infinity = ((1 << exp_bits) - 1) << man_bits
    bits = {"ZERO": 0, "NEG_ZERO": 0x8000, "ONE": bias << man_bits, "NEG_ONE": 0x8000 | bias << man_bits,
            "INFINITY": infinity, "NEG_INFINITY": 0x8000 | infinity, "NAN": NAN_BITS, "MAX": infinity - 1,
            "MIN": 0x8000 | (infinity - 1), "MIN_POSITIVE": 1 << man_bits, "MIN_POSITIVE_SUBNORMAL": 1,
            "MAX_SUBNORMAL": (1 << man_bits) - 1, "EPSILON": (bias - man_bits) << man_bits}.get(path[0])
    if bits is None and path[0] in _MATH:
        bits = half_bits(_MATH[path[0]], type_name)
    return half_value(bits, type_name) if bits is not None else None


def literal_text(value: int | float) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)
