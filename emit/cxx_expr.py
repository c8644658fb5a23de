"""Rendering IR expressions as C++ with Rust's semantics.

Integer arithmetic wraps (signed types go through the prelude's `rs2gpu_wrapping_*`, which compute in
the unsigned type), shift amounts are masked, float→int casts saturate with NaN→0, and float `%` is
`fmod`. Expressions that C++ cannot write inline (an `if` with statements in its branches, a block,
a `loop` with `break value`) are hoisted into statements before the current one; `BodyEmitter` in
`cxx_stmt` owns the statement buffer they go to.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_types import cxx_type, float_literal, half_literal, int_literal, tuple_struct_name
from rs2gpu.emit.names import cxx_name
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.intrinsics import HALF_CONSTRUCTORS
from rs2gpu.ir.types import UNIT, ArrayType, NeverType, PrimType, RefType, SliceType, TupleType

WRAPPING_OPS = {"+": "add", "-": "sub", "*": "mul"}

# f64 spelling, f32 spelling; "{0}" is the receiver, "{1}", "{2}" the arguments.
FLOAT_INTRINSICS = {
    "sqrt": ("sqrt({0})", "sqrtf({0})"), "cbrt": ("cbrt({0})", "cbrtf({0})"),
    "exp": ("exp({0})", "expf({0})"), "exp2": ("exp2({0})", "exp2f({0})"), "exp_m1": ("expm1({0})", "expm1f({0})"),
    "ln": ("log({0})", "logf({0})"), "ln_1p": ("log1p({0})", "log1pf({0})"), "log2": ("log2({0})", "log2f({0})"),
    "log10": ("log10({0})", "log10f({0})"), "abs": ("fabs({0})", "fabsf({0})"),
    "floor": ("floor({0})", "floorf({0})"), "ceil": ("ceil({0})", "ceilf({0})"),
    "round": ("round({0})", "roundf({0})"), "trunc": ("trunc({0})", "truncf({0})"),
    "fract": ("rs2gpu_fract({0})", "rs2gpu_fract({0})"),
    "sin": ("sin({0})", "sinf({0})"), "cos": ("cos({0})", "cosf({0})"), "tan": ("tan({0})", "tanf({0})"),
    "asin": ("asin({0})", "asinf({0})"), "acos": ("acos({0})", "acosf({0})"), "atan": ("atan({0})", "atanf({0})"),
    "sinh": ("sinh({0})", "sinhf({0})"), "cosh": ("cosh({0})", "coshf({0})"), "tanh": ("tanh({0})", "tanhf({0})"),
    "asinh": ("asinh({0})", "asinhf({0})"), "acosh": ("acosh({0})", "acoshf({0})"),
    "atanh": ("atanh({0})", "atanhf({0})"),
    "recip": ("(1.0 / {0})", "(1.0f / {0})"), "signum": ("rs2gpu_signum({0})", "rs2gpu_signum({0})"),
    "to_degrees": ("rs2gpu_to_degrees({0})", "rs2gpu_to_degrees({0})"),
    "to_radians": ("rs2gpu_to_radians({0})", "rs2gpu_to_radians({0})"),
    "min": ("fmin({0}, {1})", "fminf({0}, {1})"), "max": ("fmax({0}, {1})", "fmaxf({0}, {1})"),
    "powf": ("pow({0}, {1})", "powf({0}, {1})"), "atan2": ("atan2({0}, {1})", "atan2f({0}, {1})"),
    "hypot": ("hypot({0}, {1})", "hypotf({0}, {1})"), "copysign": ("copysign({0}, {1})", "copysignf({0}, {1})"),
    "rem_euclid": ("rs2gpu_rem_euclid({0}, {1})", "rs2gpu_rem_euclid({0}, {1})"),
    "div_euclid": ("rs2gpu_div_euclid({0}, {1})", "rs2gpu_div_euclid({0}, {1})"),
    "mul_add": ("fma({0}, {1}, {2})", "fmaf({0}, {1}, {2})"),
    "clamp": ("rs2gpu_clamp({0}, {1}, {2})", "rs2gpu_clamp({0}, {1}, {2})"),
    "powi": ("rs2gpu_powi({0}, {1})", "rs2gpu_powi({0}, {1})"),
    "is_nan": ("({0} != {0})", "({0} != {0})"),
    "is_finite": ("rs2gpu_is_finite({0})", "rs2gpu_is_finite({0})"),
    "is_infinite": ("rs2gpu_is_infinite({0})", "rs2gpu_is_infinite({0})"),
    "is_sign_negative": ("signbit({0})", "signbit({0})"),
    "is_sign_positive": ("(!signbit({0}))", "(!signbit({0}))"),
}

INT_INTRINSICS = {
    "min": "rs2gpu_min({0}, {1})", "max": "rs2gpu_max({0}, {1})",
    "wrapping_add": "rs2gpu_wrapping_add({0}, {1})", "wrapping_sub": "rs2gpu_wrapping_sub({0}, {1})",
    "wrapping_mul": "rs2gpu_wrapping_mul({0}, {1})", "wrapping_neg": "rs2gpu_wrapping_neg({0})",
    "wrapping_shl": "rs2gpu_shl({0}, {1})", "wrapping_shr": "rs2gpu_shr({0}, {1})",
    "rem_euclid": "rs2gpu_rem_euclid({0}, {1})", "div_euclid": "rs2gpu_div_euclid({0}, {1})",
    "clamp": "rs2gpu_clamp({0}, {1}, {2})", "pow": "rs2gpu_pow({0}, {1})", "wrapping_pow": "rs2gpu_pow({0}, {1})",
    "abs": "rs2gpu_wrapping_abs({0})", "signum": "rs2gpu_signum({0})",
    "count_ones": "rs2gpu_count_ones({0})", "leading_zeros": "rs2gpu_leading_zeros({0})",
    "trailing_zeros": "rs2gpu_trailing_zeros({0})", "is_power_of_two": "rs2gpu_is_power_of_two({0})",
    "saturating_add": "rs2gpu_saturating_add({0}, {1})", "saturating_sub": "rs2gpu_saturating_sub({0}, {1})",
    "saturating_mul": "rs2gpu_saturating_mul({0}, {1})",
    "rotate_left": "rs2gpu_rotate_left({0}, {1})", "rotate_right": "rs2gpu_rotate_right({0}, {1})",
    "checked_add": "(!rs2gpu_add_overflows({0}, {1}))", "checked_sub": "(!rs2gpu_sub_overflows({0}, {1}))",
    "checked_mul": "(!rs2gpu_mul_overflows({0}, {1}))", "checked_div": "(!rs2gpu_div_fails({0}, {1}))",
    "checked_rem": "(!rs2gpu_div_fails({0}, {1}))",
}

# The half types' methods are the prelude's struct's members, of the same names as in Rust; its
# constructors are its static members (`f16::from_f32(x)`).
HALF_INTRINSICS = {
    **{name: f"({{0}}).{name}()" for name in ("to_f32", "to_f64", "to_bits", "sqrt", "abs", "is_nan", "is_finite",
                                              "is_infinite", "is_sign_negative", "is_sign_positive")},
    "min": "({0}).min({1})", "max": "({0}).max({1})",
}


def _may_change(e) -> bool:
    """Whether statements run after `e` is evaluated could give it another value: it reads a mutable
    variable or slice. Literals, consts and immutable bindings keep their values."""
    from rs2gpu.ir.walk import walk

    for node in walk(e):
        if isinstance(node, ir.Var) and node.binding.mutable and not isinstance(node.ty, RefType):
            return True
        if isinstance(node, ir.Index) and isinstance(node.base.ty, RefType) and node.base.ty.mutable:
            return True
    return False


def _needs_wrapping(ty) -> bool:
    """Plain C++ operators wrap only for unsigned types of at least `int`'s width."""
    return isinstance(ty, PrimType) and ty.is_int and (ty.is_signed or ty.bits < 32)


class ExprRenderer:
    """Mixin of `BodyEmitter`: expects `self.names`, `self.hoist(line)`, `self.temp(ty)`,
    `self.emit_block_into(block, target)`, and for the checks `self.iteration` (the C++ value of the
    `rs2gpu_iteration` they record) from it."""

    def expr(self, e) -> str:
        method = getattr(self, "_" + type(e).__name__)
        return method(e)

    # ------------------------------------------------------------ leaves

    def _Lit(self, e: ir.Lit) -> str:
        ty = e.ty
        if isinstance(e.value, bool):
            return "true" if e.value else "false"
        if ty.is_float:
            return float_literal(float(e.value), e.text, ty)
        if ty.is_half:
            return half_literal(float(e.value), ty)
        return int_literal(int(e.value), ty)

    def _Var(self, e: ir.Var) -> str:
        return self.names.name(e.binding)

    def _ConstRef(self, e: ir.ConstRef) -> str:
        return cxx_name(e.name)

    # ------------------------------------------------------------ operators

    def _Unary(self, e: ir.Unary) -> str:
        operand = self.expr(e.operand)
        ty = e.ty
        if e.op == "-":
            return f"rs2gpu_wrapping_neg({operand})" if ty.is_int else f"(-{operand})"
        if ty.is_bool:
            return f"(!{operand})"
        return f"(({cxx_type(ty)})~{operand})"

    def operands(self, exprs) -> list[str]:
        """Render `exprs` in Rust's order, left to right. When one of them needs statements (a block, a
        `loop`), those run before the whole expression, so the values of the operands before it are
        first saved in temporaries: in `x + { x += 1; x }` the left `x` is the old value."""
        rendered: list[tuple[object, str]] = []
        for e in exprs:
            lines, text = self.capture(lambda: self.expr(e))
            if lines:
                rendered = [(p, self.temp(p.ty, t) if _may_change(p) else t) for p, t in rendered]
                for line in lines:
                    self.hoist_raw(line)
            rendered.append((e, text))
        return [t for _, t in rendered]

    def _Binary(self, e: ir.Binary) -> str:
        if e.op in ("&&", "||"):
            return self._short_circuit(e)
        lhs, rhs = self.operands((e.lhs, e.rhs))
        ty = e.lhs.ty
        if e.op in ("<<", ">>"):
            return f"rs2gpu_{'shl' if e.op == '<<' else 'shr'}({lhs}, {rhs})"
        if isinstance(ty, PrimType) and ty.is_float and e.op == "%":
            return f"{'fmodf' if ty.name == 'f32' else 'fmod'}({lhs}, {rhs})"
        if e.op in WRAPPING_OPS and _needs_wrapping(ty):
            return f"rs2gpu_wrapping_{WRAPPING_OPS[e.op]}({lhs}, {rhs})"
        if e.op in ("/", "%") and isinstance(ty, PrimType) and ty.is_int:
            return self.int_division(e.op, lhs, rhs, e.span, e.rhs, ty)
        if e.op in ("&", "|", "^") and isinstance(ty, PrimType) and ty.is_int and ty.bits < 32:
            return f"(({cxx_type(ty)})({lhs} {e.op} {rhs}))"
        return f"({lhs} {e.op} {rhs})"

    def _short_circuit(self, e: ir.Binary) -> str:
        lhs = self.expr(e.lhs)
        rhs_lines, rhs = self.capture(lambda: self.expr(e.rhs))
        if not rhs_lines:
            return f"({lhs} {e.op} {rhs})"
        # The right side needs statements: run them only when C++'s && / || would evaluate it.
        result = self.temp(e.ty, lhs)
        self.hoist(f"if ({'' if e.op == '&&' else '!'}{result}) {{")
        self.indent += 1
        for line in rhs_lines:
            self.hoist_raw(line)
        self.hoist(f"{result} = {rhs};")
        self.indent -= 1
        self.hoist_brace("}")
        return result

    def _Cast(self, e: ir.Cast) -> str:
        operand = self.expr(e.operand)
        src, dst = e.operand.ty, e.ty
        if src == dst:
            return operand
        if isinstance(src, PrimType) and src.is_float and dst.is_int:
            return f"rs2gpu_float_to_int<{cxx_type(dst)}>({operand})"
        return f"(({cxx_type(dst)}){operand})"

    # ------------------------------------------------------------ places and aggregates

    def int_division(self, op: str, lhs: str, rhs: str, span, divisor, ty: PrimType) -> str:
        """Integer `/` and `%` panic on a zero divisor and on MIN / -1, as in Rust; a literal divisor other
        than 0 (and -1 of a signed type) cannot make them panic."""
        kind = "div" if op == "/" else "rem"
        safe = isinstance(divisor, ir.Lit) and divisor.value not in (0, -1 if ty.is_signed else 0)
        if self.sites is None or safe:
            return f"(({cxx_type(ty)})({lhs} {op} {rhs}))"
        return f"rs2gpu_{kind}({lhs}, {rhs}, {self.site(kind, span)}, {self.iteration})"

    def site(self, kind: str, span, **about) -> int:
        """The number of a place that can panic, remembered in `used_sites`."""
        number = self.sites.site(kind, span, **about)
        self.used_sites.add(number)
        return number

    def _Index(self, e: ir.Index) -> str:
        base, index = self.expr(e.base), self.expr(e.index)
        if self.sites is None or e.node_id in self.hoisted:
            return f"{base}[{index}]"
        return f"{base}[rs2gpu_checked({index}, {self.length_of(e.base)}, {self.site('bounds', e.span)}, {self.iteration})]"

    def _Field(self, e: ir.Field) -> str:
        base_ty = e.base.ty
        base = self.expr(e.base)
        if isinstance(base_ty, TupleType):
            return f"{base}.f{e.name}"
        name = cxx_name(e.name)
        if isinstance(base_ty, RefType):
            return f"{base}->{name}"
        return f"{base}.{name}"

    def _StructLit(self, e: ir.StructLit) -> str:
        return f"{cxx_name(e.struct)}{{{', '.join(self.operands(v for _, v in e.fields))}}}"

    def _TupleLit(self, e: ir.TupleLit) -> str:
        if not e.elems:
            return "((void)0)"
        return f"{tuple_struct_name(e.ty)}{{{', '.join(self.operands(e.elems))}}}"

    def _ArrayLit(self, e: ir.ArrayLit) -> str:
        ty = cxx_type(e.ty)
        if e.repeat is not None:
            return f"rs2gpu_array_fill<{cxx_type(e.ty.elem)}, {e.repeat}>({self.expr(e.elems[0])})"
        return f"{ty}{{{{{', '.join(self.operands(e.elems))}}}}}"

    # ------------------------------------------------------------ calls

    def _Intrinsic(self, e: ir.Intrinsic) -> str:
        receiver = e.args[0]
        if e.name == "len":
            return self.length_of(receiver)
        args = self.operands(e.args)
        ty = receiver.ty
        if e.name in HALF_CONSTRUCTORS and e.ty.is_half:
            return f"{cxx_type(e.ty)}::{e.name}({args[0]})"
        if ty.is_half:
            return HALF_INTRINSICS[e.name].format(*args)
        if ty.is_float:
            f64_form, f32_form = FLOAT_INTRINSICS[e.name]
            return (f32_form if ty.name == "f32" else f64_form).format(*args)
        return INT_INTRINSICS[e.name].format(*args)

    def length_of(self, seq: ir.Expr) -> str:
        ty = seq.ty
        target = ty.target if isinstance(ty, RefType) else ty
        if isinstance(target, ArrayType):
            return int_literal(target.length, PrimType("usize"))
        if isinstance(seq, ir.Var) and isinstance(target, SliceType):
            return self.names.length_name(seq.binding)
        raise NotImplementedError(f"length of {seq}")

    def _Call(self, e: ir.Call) -> str:
        args = []
        for a, text in zip(e.args, self.operands(e.args)):
            args.append(text)
            if isinstance(a.ty, RefType) and isinstance(a.ty.target, SliceType):
                args.append(self.length_of(a))
        if self.sites is not None and e.func in self.sites.checked_helpers:
            args.append(self.iteration)  # the helper's checks record the caller's iteration
            self.passes_iteration = True
        return f"{cxx_name(e.func)}({', '.join(args)})"

    # ------------------------------------------------------------ expressions with statements inside

    def _If(self, e: ir.If) -> str:
        if e.orelse is not None and not e.then.stmts and not e.orelse.stmts \
                and e.then.tail is not None and e.orelse.tail is not None and e.ty != UNIT:
            cond_lines, cond = self.capture(lambda: self.expr(e.cond))
            then_lines, then = self.capture(lambda: self.expr(e.then.tail))
            else_lines, orelse = self.capture(lambda: self.expr(e.orelse.tail))
            if not cond_lines and not then_lines and not else_lines:
                return f"({cond} ? {then} : {orelse})"
        return self.hoist_value(e)

    def _Match(self, e) -> str:
        return self.hoist_value(e)

    def _BlockExpr(self, e: ir.BlockExpr) -> str:
        if not e.block.stmts and e.block.tail is not None:
            return self.expr(e.block.tail)
        return self.hoist_value(e)

    def _Loop(self, e) -> str:
        return self.hoist_value(e)

    _For = _While = _Break = _Continue = _Return = _Loop

    def hoist_value(self, e) -> str:
        """Emit `e` as statements; its value (if any) lands in a temporary named by the result."""
        if e.ty == UNIT or isinstance(e.ty, NeverType):
            self.statement_expr(e, None)
            return "((void)0)"
        result = self.temp(e.ty)
        self.statement_expr(e, result)
        return result
