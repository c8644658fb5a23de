"""C++ spellings of Rust types, and the value-level facts the emitter needs about them."""
from __future__ import annotations

import math

from rs2gpu.ir.half import half_bits
from rs2gpu.ir.types import ArrayType, PrimType, RefType, SliceType, StructType, TupleType, Type


def tuple_struct_name(ty: TupleType) -> str:
    return "rs2gpu_tuple_" + "_".join(_token(t) for t in ty.elems)


def _token(ty: Type) -> str:
    if isinstance(ty, PrimType):
        return ty.name
    if isinstance(ty, StructType):
        return ty.name
    if isinstance(ty, ArrayType):
        return f"{_token(ty.elem)}x{ty.length}"
    if isinstance(ty, TupleType):
        return "t" + "_".join(_token(t) for t in ty.elems) + "_"
    raise TypeError(ty)


def cxx_type(ty: Type) -> str:
    from rs2gpu.emit.names import cxx_name

    if isinstance(ty, PrimType):
        return ty.name  # the prelude declares every primitive's Rust name as a typedef
    if isinstance(ty, StructType):
        return cxx_name(ty.name)
    if isinstance(ty, ArrayType):
        return f"rs2gpu_array<{cxx_type(ty.elem)}, {ty.length}>"
    if isinstance(ty, TupleType):
        return "void" if not ty.elems else tuple_struct_name(ty)
    if isinstance(ty, RefType):
        target = ty.target
        elem = target.elem if isinstance(target, (SliceType, ArrayType)) else target
        return f"{'' if ty.mutable else 'const '}{cxx_type(elem)}*"
    raise TypeError(f"no C++ spelling for {ty}")


def int_literal(value: int, ty: PrimType) -> str:
    """An integer constant of exactly type `ty` (INT_MIN-style values need the subtraction form)."""
    name = ty.name
    if ty.bits == 64:
        if ty.is_signed:
            if value == -(1 << 63):
                return "(-9223372036854775807LL - 1)"
            return f"{value}LL" if value >= 0 else f"({value}LL)"
        return f"{value}ULL"
    if ty.name == "i32":
        if value == -(1 << 31):
            return "(-2147483647 - 1)"
        return str(value) if value >= 0 else f"({value})"
    if ty.name == "u32":
        return f"{value}u"
    return f"(({name}){value})"


def float_literal(value: float, text: str, ty: PrimType) -> str:
    if math.isnan(value):
        return "rs2gpu_nan_f32()" if ty.name == "f32" else "rs2gpu_nan_f64()"
    if math.isinf(value):
        inf = "rs2gpu_inf_f32()" if ty.name == "f32" else "rs2gpu_inf_f64()"
        return inf if value > 0 else f"(-{inf})"
    if ty.name == "f32":
        # keep the decimal text: rounding it to f32 once, as rustc does, needs the C++ compiler's parser
        negative = text.startswith("-")
        digits = text.lstrip("-")
        if "." not in digits and "e" not in digits.lower():
            digits += ".0"
        return f"({'-' if negative else ''}{digits}f)" if negative else f"{digits}f"
    literal = repr(float(value))
    return f"({literal})" if value < 0 or literal.startswith("-") else literal


def half_literal(value: float, ty: PrimType) -> str:
    """A constant of a half type, by its bits (every constant is exact in the type)."""
    return f"{ty.name}::from_bits(0x{half_bits(value, ty.name):04X})"
