"""`const` items as C++ `constexpr` variables, usable from device code in both dialects."""
from __future__ import annotations

from rs2gpu.emit.cxx_stmt import BodyEmitter
from rs2gpu.emit.cxx_types import cxx_type, float_literal, int_literal
from rs2gpu.emit.names import LocalNames, cxx_name
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import PrimType


def const_context(const: ir.ConstDef, crate: ir.Crate) -> dict:
    return {"name": cxx_name(const.name), "type": cxx_type(const.ty), "value": _value(const, crate)}


def _value(const: ir.ConstDef, crate: ir.Crate) -> str:
    """A literal where the value is known exactly here, else the expression itself."""
    value = _fold(const.value, {c.name: c for c in crate.consts})
    ty = const.ty
    if isinstance(ty, PrimType) and value is not None:
        if ty.is_bool:
            return "true" if value else "false"
        if ty.is_int:
            return int_literal(int(value), ty)
        if ty.name == "f64" and isinstance(value, float):
            return float_literal(value, repr(value), ty)
    emitter = BodyEmitter(LocalNames(), line_directives=False)
    return emitter.expr(const.value)


def _fold(expr, consts):
    """Integer and f64 constants folded exactly as rustc does; None when that is not certain here."""
    if isinstance(expr, ir.Lit):
        if isinstance(expr.value, float) and expr.ty == PrimType("f32"):
            return None
        return expr.value
    if isinstance(expr, ir.ConstRef):
        return _fold(consts[expr.name].value, consts)
    return None
