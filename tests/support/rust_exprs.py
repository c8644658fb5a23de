"""A hypothesis strategy for well-typed Rust expressions over a kernel's parameters.

`kernels()` draws whole kernels: typed scalar, slice, array and struct parameters, and one expression
of a chosen type placed in a loop body, a reduction, an index or a loop bound. Every expression is
meant to be valid Rust (rustc accepts it once `#[kernel]` is stripped); `tests/fuzz` checks that on
a sample. Parentheses are placed where Rust's precedence needs them and, at random, elsewhere too.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st

SIGNED = ("i8", "i16", "i32", "i64", "isize")
UNSIGNED = ("u8", "u16", "u32", "u64", "usize")
INTS = SIGNED + UNSIGNED
FLOATS = ("f32", "f64")
NUMERIC = INTS + FLOATS
TYPES = NUMERIC + ("bool",)
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "isize": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
        "usize": 64}

# Operator precedence, loosest first, as in the Rust reference.
P_OR, P_AND, P_CMP, P_BITOR, P_XOR, P_BITAND, P_SHIFT, P_ADD, P_MUL, P_CAST, P_UNARY, P_POSTFIX = range(1, 13)
BINARY_PREC = {"||": P_OR, "&&": P_AND, "==": P_CMP, "!=": P_CMP, "<": P_CMP, "<=": P_CMP, ">": P_CMP,
               ">=": P_CMP, "|": P_BITOR, "^": P_XOR, "&": P_BITAND, "<<": P_SHIFT, ">>": P_SHIFT, "+": P_ADD,
               "-": P_ADD, "*": P_MUL, "/": P_MUL, "%": P_MUL}

# Methods of ir/intrinsics.py that rustc has for the receiver type: (name, operand types, result).
# "T" is the receiver's type. (`is_power_of_two` exists for unsigned integers only.)
FLOAT_METHODS = (
    [(m, (), "T") for m in "sqrt cbrt exp exp2 exp_m1 ln ln_1p log2 log10 abs floor ceil round trunc fract sin cos "
                            "tan asin acos atan sinh cosh tanh asinh acosh atanh recip signum to_degrees "
                            "to_radians".split()]
    + [(m, ("T",), "T") for m in "min max powf atan2 hypot copysign rem_euclid div_euclid".split()]
    + [("mul_add", ("T", "T"), "T"), ("clamp", ("T", "T"), "T"), ("powi", ("i32",), "T")]
    + [(m, (), "bool") for m in "is_nan is_finite is_infinite is_sign_negative is_sign_positive".split()])
INT_METHODS = (
    [(m, ("T",), "T") for m in "min max wrapping_add wrapping_sub wrapping_mul saturating_add saturating_sub "
                                "saturating_mul rem_euclid div_euclid".split()]
    + [("clamp", ("T", "T"), "T"), ("wrapping_neg", (), "T"), ("pow", ("u32",), "T"), ("wrapping_pow", ("u32",), "T"),
       ("wrapping_shl", ("u32",), "T"), ("wrapping_shr", ("u32",), "T"), ("rotate_left", ("u32",), "T"),
       ("rotate_right", ("u32",), "T")]
    + [(m, (), "u32") for m in "count_ones leading_zeros trailing_zeros".split()])
SIGNED_METHODS = [("abs", (), "T"), ("signum", (), "T")]
UNSIGNED_METHODS = [("is_power_of_two", (), "bool")]


def methods_of(ty: str) -> list[tuple[str, tuple[str, ...], str]]:
    if ty in FLOATS:
        return FLOAT_METHODS
    if ty in SIGNED:
        return INT_METHODS + SIGNED_METHODS
    if ty in UNSIGNED:
        return INT_METHODS + UNSIGNED_METHODS
    return []


@dataclass(frozen=True)
class Expr:
    """Printed Rust with what a parent needs to know to place it."""

    text: str
    prec: int
    typed: bool           # rustc knows its type without context (no bare literal decides it)
    ends_in_type: bool = False   # `x as u8`: a following `<` or `<<` would start generic arguments
    block_like: bool = False     # if / match / block: parenthesized where a statement could start
    literal: bool = False        # a number literal: `1.0.sqrt()` / `1.max(2)` need parentheses


def paren(e: Expr) -> Expr:
    return Expr(f"({e.text})", P_POSTFIX, e.typed)


# ---------------------------------------------------------------- the scope

@dataclass(frozen=True)
class Scope:
    scalars: tuple[tuple[str, str], ...]   # (name, type)
    slices: tuple[tuple[str, str], ...]    # (name, element type): `&[T]`
    arrays: tuple[tuple[str, str, int], ...]  # (name, element type, length): `&[T; N]`
    fields: tuple[tuple[str, str], ...]    # (`p.scale`, type): fields of struct parameters

    def names_of(self, ty: str) -> list[str]:
        return [n for n, t in self.scalars if t == ty] + [f for f, t in self.fields if t == ty]

    def with_local(self, name: str, ty: str) -> "Scope":
        return replace(self, scalars=tuple((n, t) for n, t in self.scalars if n != name) + ((name, ty),))


STRUCT = """#[repr(C)]
#[derive(Clone, Copy)]
pub struct Params {
    pub scale: f64,
    pub bias: f32,
    pub steps: i32,
    pub mask: u8,
}
"""
STRUCT_FIELDS = (("scale", "f64"), ("bias", "f32"), ("steps", "i32"), ("mask", "u8"))

SCALAR_PARAMS = tuple((f"v_{t}", t) for t in TYPES)
SLICE_PARAMS = tuple((f"s_{t}", t) for t in ("f64", "f32", "i32", "u32", "i64", "u8", "usize", "bool"))
ARRAY_PARAMS = (("tab", "f64", 4), ("lut", "i32", 3))


def base_scope() -> Scope:
    fields = tuple((f"p.{f}", t) for f, t in STRUCT_FIELDS) + tuple((f"q.{f}", t) for f, t in STRUCT_FIELDS)
    return Scope(SCALAR_PARAMS + (("i", "usize"),), SLICE_PARAMS, ARRAY_PARAMS, fields)


def signature() -> str:
    params = ["out: &mut [f64]"] + [f"{n}: {t}" for n, t in SCALAR_PARAMS] + \
             [f"{n}: &[{t}]" for n, t in SLICE_PARAMS] + [f"{n}: &[{t}; {k}]" for n, t, k in ARRAY_PARAMS] + \
             ["p: &Params", "q: Params"]
    return ", ".join(params)


# ---------------------------------------------------------------- literals

def _int_range(ty: str) -> tuple[int, int]:
    bits = BITS[ty]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ty in SIGNED else (0, (1 << bits) - 1)


@st.composite
def int_literal(draw, ty: str, typed: bool) -> Expr:
    lo, hi = _int_range(ty)
    value = draw(st.one_of(st.integers(0, 9), st.integers(0, min(hi, 300)), st.sampled_from([lo, hi, 0, 1]),
                           st.integers(lo, hi)))
    # A literal without a suffix must fit i32 too: a cast's operand gets no type from the cast.
    suffix = typed or not -(1 << 31) <= value < (1 << 31) or draw(st.booleans())
    digits = abs(value)
    style = draw(st.sampled_from(["dec", "dec", "dec", "under", "hex", "bin", "oct"]))
    if style == "hex":
        body = f"0x{digits:x}"
    elif style == "bin":
        body = f"0b{digits:b}"
    elif style == "oct":
        body = f"0o{digits:o}"
    elif style == "under" and digits >= 1000:
        body = f"{digits:_}"
    else:
        body = str(digits)
    if suffix:
        body += ("_" if style in ("hex", "bin", "oct") or draw(st.booleans()) else "") + ty
    text = "-" + body if value < 0 else body
    return Expr(text, P_UNARY if value < 0 else P_POSTFIX, suffix, literal=value >= 0)


@st.composite
def float_literal(draw, ty: str, typed: bool) -> Expr:
    text = draw(st.sampled_from(["0.0", "1.0", "0.5", "2.5", "1e3", "1.5e-3", "3.0e10", "100.0", "6.25", "1e-7",
                                 "0.1", "12.75", "3.4e38", "2e-40"]))
    if ty == "f32" and text in ("3.0e10",):
        text = "3.0e9"
    negative = draw(st.booleans())
    suffix = typed or draw(st.booleans())
    if suffix:
        text += ("_" if draw(st.booleans()) else "") + ty
    if negative:
        return Expr("-" + text, P_UNARY, suffix)
    return Expr(text, P_POSTFIX, suffix, literal=True)


def literal(ty: str, typed: bool):
    if ty == "bool":
        return st.sampled_from([Expr("true", P_POSTFIX, True), Expr("false", P_POSTFIX, True)])
    if ty in FLOATS:
        return float_literal(ty, typed)
    return int_literal(ty, typed)


def associated_const(ty: str):
    if ty in INTS:
        return st.sampled_from([Expr(f"{ty}::MAX", P_POSTFIX, True), Expr(f"{ty}::MIN", P_POSTFIX, True)])
    if ty in FLOATS:
        names = ["MAX", "MIN", "EPSILON", "MIN_POSITIVE", "INFINITY", "NAN", "consts::PI", "consts::E",
                 "consts::FRAC_PI_2", "consts::SQRT_2", "consts::LN_2"]
        return st.sampled_from([Expr(f"{'std::' if '::' in n else ''}{ty}::{n}", P_POSTFIX, True) for n in names])
    return st.nothing()


# ---------------------------------------------------------------- placing subexpressions

@st.composite
def operand(draw, e: Expr, min_prec: int, *, left: bool = False, before_lt: bool = False) -> Expr:
    """`e` as an operand that must bind at least as tightly as `min_prec`, parenthesized where needed
    (and now and then where not)."""
    needs = e.prec < min_prec or (left and e.block_like) or (before_lt and e.ends_in_type)
    if needs or draw(st.integers(0, 9)) == 0:
        return paren(e)
    return e


@st.composite
def receiver(draw, e: Expr) -> Expr:
    """`e` in front of `.method()` / `[index]`."""
    if e.prec < P_POSTFIX or e.block_like or e.literal and (not e.typed or draw(st.booleans())):
        return paren(e)
    return e


# ---------------------------------------------------------------- expressions

@st.composite
def expr(draw, ty: str, scope: Scope, depth: int, typed: bool = False) -> Expr:
    """An expression of type `ty`. `typed`: rustc must know the type without looking at the context
    (a method receiver); bare literals are then suffixed."""
    if depth <= 0 or draw(st.integers(0, 4)) == 0:
        return draw(leaf(ty, scope, typed))
    kinds = ["binary", "binary", "unary", "cast", "method", "if", "block", "index", "paren", "match", "ufcs",
             "cmp_min", "array", "loop"]
    if ty == "bool":
        kinds += ["compare", "compare", "logic", "logic", "predicate"]
    kind = draw(st.sampled_from(kinds))
    sub = depth - 1
    if kind == "binary" and ty != "bool":
        return draw(arithmetic(ty, scope, sub, typed))
    if kind == "binary" and ty == "bool":
        op = draw(st.sampled_from(["&", "|", "^", "==", "!="]))
        return draw(binary(op, ty, ty, scope, sub, typed))
    if kind == "compare" or kind == "logic":
        if kind == "logic":
            op = draw(st.sampled_from(["&&", "||"]))
            return draw(binary(op, "bool", "bool", scope, sub, typed))
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        return draw(binary(op, draw(st.sampled_from(NUMERIC)), "bool", scope, sub, False))
    if kind == "unary":
        if ty == "bool" or ty in INTS and draw(st.booleans()):
            if ty in FLOATS:
                return draw(leaf(ty, scope, typed))
            inner = draw(operand(draw(expr(ty, scope, sub, typed)), P_UNARY))
            return Expr(f"!{inner.text}", P_UNARY, inner.typed)
        if ty in SIGNED or ty in FLOATS:
            inner = draw(operand(draw(expr(ty, scope, sub, typed)), P_UNARY))
            space = " " if inner.text.startswith("-") else ""
            return Expr(f"-{space}{inner.text}", P_UNARY, inner.typed)
        return draw(leaf(ty, scope, typed))
    if kind == "cast":
        if ty == "bool":
            return draw(leaf(ty, scope, typed))
        source = draw(st.sampled_from(NUMERIC + ("bool",) if ty in INTS else NUMERIC))
        inner = draw(operand(draw(expr(source, scope, sub, False)), P_CAST, left=True))
        return Expr(f"{inner.text} as {ty}", P_CAST, True, ends_in_type=True)
    if kind == "method" or kind == "predicate":
        return draw(method_call(ty, scope, sub, typed))
    if kind == "ufcs" and ty in NUMERIC:
        name, operands, result = draw(st.sampled_from([m for m in methods_of(ty) if m[2] == "T"]))
        args = [draw(expr(ty, scope, sub))] + [draw(expr(ty if o == "T" else o, scope, sub)) for o in operands]
        return Expr(f"{ty}::{name}({', '.join(a.text for a in args)})", P_POSTFIX, True)
    if kind == "cmp_min" and ty in INTS:
        name = draw(st.sampled_from(["min", "max"]))
        a, b = draw(expr(ty, scope, sub, typed)), draw(expr(ty, scope, sub, False))
        return Expr(f"std::cmp::{name}({a.text}, {b.text})", P_POSTFIX, a.typed or b.typed)
    if kind == "if":
        cond = draw(expr("bool", scope, sub))
        then, other = draw(expr(ty, scope, sub, typed)), draw(expr(ty, scope, sub, typed))
        if draw(st.booleans()):
            nested = draw(expr("bool", scope, sub))
            other_text = f"if {nested.text} {{ {other.text} }} else {{ {draw(expr(ty, scope, sub, typed)).text} }}"
        else:
            other_text = f"{{ {other.text} }}"
        return Expr(f"if {cond.text} {{ {then.text} }} else {other_text}", P_POSTFIX, typed, block_like=True)
    if kind == "block":
        return draw(block(ty, scope, sub, typed))
    if kind == "loop":
        return draw(loop_block(ty, scope, sub, typed))
    if kind == "match" and ty in NUMERIC + ("bool",):
        return draw(match_expr(ty, scope, sub, typed))
    if kind == "index":
        return draw(index(ty, scope, sub, typed))
    if kind == "array":
        elems = [draw(expr(ty, scope, sub, typed)) for _ in range(draw(st.integers(1, 3)))]
        idx = draw(st.integers(0, len(elems) - 1))
        if draw(st.booleans()) and len(elems) == 1:
            return Expr(f"[{elems[0].text}; {idx + 2}][{idx}]", P_POSTFIX, elems[0].typed)
        return Expr(f"[{', '.join(e.text for e in elems)}][{idx}]", P_POSTFIX, any(e.typed for e in elems))
    if kind == "paren":
        return paren(draw(expr(ty, scope, sub, typed)))
    return draw(leaf(ty, scope, typed))


@st.composite
def leaf(draw, ty: str, scope: Scope, typed: bool) -> Expr:
    names = scope.names_of(ty)
    choices = ["literal", "const"]
    if names:
        choices += ["var"] * 4
    if ty == "usize":
        choices += ["len", "len"]
    kind = draw(st.sampled_from(choices))
    if kind == "var":
        return Expr(draw(st.sampled_from(names)), P_POSTFIX, True)
    if kind == "len":
        seq = draw(st.sampled_from([n for n, _ in scope.slices] + [n for n, _, _ in scope.arrays]))
        return Expr(f"{seq}.len()", P_POSTFIX, True)
    if kind == "const" and ty != "bool":
        return draw(associated_const(ty))
    return draw(literal(ty, typed))


@st.composite
def binary(draw, op: str, operand_ty: str, result_ty: str, scope: Scope, depth: int, typed: bool) -> Expr:
    prec = BINARY_PREC[op]
    lhs = draw(expr(operand_ty, scope, depth, typed))
    rhs = draw(expr(operand_ty, scope, depth, typed and not lhs.typed))
    # Comparisons do not chain: both sides bind tighter. Other operators associate to the left.
    lhs = draw(operand(lhs, prec + 1 if prec == P_CMP else prec, left=True, before_lt=op in ("<", "<<")))
    rhs = draw(operand(rhs, prec + 1))
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return Expr(f"{lhs.text} {op} {rhs.text}", prec, True)
    return Expr(f"{lhs.text} {op} {rhs.text}", prec, lhs.typed or rhs.typed, ends_in_type=rhs.ends_in_type)


@st.composite
def arithmetic(draw, ty: str, scope: Scope, depth: int, typed: bool) -> Expr:
    ops = ["+", "-", "*", "/", "%"]
    if ty in INTS:
        ops += ["&", "|", "^", "<<", ">>"]
    op = draw(st.sampled_from(ops))
    if op in ("<<", ">>"):
        # The amount may have any integer type; a literal one stays below the width (rustc denies more).
        lhs = draw(operand(draw(expr(ty, scope, depth, typed)), P_SHIFT, left=True, before_lt=op == "<<"))
        amount_ty = draw(st.sampled_from(INTS))
        if draw(st.booleans()):
            amount = Expr(str(draw(st.integers(0, BITS[ty] - 1))), P_POSTFIX, False)
        else:
            inner = draw(operand(draw(expr(amount_ty, scope, depth, False)), P_BITAND + 1, left=True))
            amount = Expr(f"({inner.text} & 7)", P_POSTFIX, inner.typed)
        amount = draw(operand(amount, P_SHIFT + 1))
        return Expr(f"{lhs.text} {op} {amount.text}", P_SHIFT, lhs.typed, ends_in_type=False)
    if op in ("/", "%") and ty in INTS:
        # A divisor rustc can see is zero is a deny-by-default lint: divide by a nonzero literal or
        # by something that is not a literal.
        lhs = draw(operand(draw(expr(ty, scope, depth, typed)), P_MUL, left=True))
        if draw(st.booleans()):
            divisor = Expr(str(draw(st.integers(1, 7))) + (ty if typed and not lhs.typed else ""), P_POSTFIX,
                           typed and not lhs.typed)
        else:
            divisor = Expr(draw(st.sampled_from(scope.names_of(ty) or [f"{ty}::MAX"])), P_POSTFIX, True)
        return Expr(f"{lhs.text} {op} {divisor.text}", P_MUL, lhs.typed or divisor.typed)
    return draw(binary(op, ty, ty, scope, depth, typed))


@st.composite
def method_call(draw, ty: str, scope: Scope, depth: int, typed: bool) -> Expr:
    """`recv.method(args)` whose result has type `ty`."""
    candidates = [(recv_ty, m) for recv_ty in NUMERIC for m in methods_of(recv_ty)
                  if (m[2] == "T" and recv_ty == ty) or m[2] == ty]
    if ty == "usize":
        candidates.append(("seq", ("len", (), "usize")))
    if not candidates:
        return draw(leaf(ty, scope, typed))
    recv_ty, (name, operands, _) = draw(st.sampled_from(candidates))
    if recv_ty == "seq":
        seq = draw(st.sampled_from([n for n, _ in scope.slices] + [n for n, _, _ in scope.arrays]))
        return Expr(f"{seq}.len()", P_POSTFIX, True)
    recv = draw(receiver(draw(expr(recv_ty, scope, depth, typed=True))))
    args = [draw(expr(recv_ty if o == "T" else o, scope, depth)) for o in operands]
    return Expr(f"{recv.text}.{name}({', '.join(a.text for a in args)})", P_POSTFIX, True)


@st.composite
def index(draw, ty: str, scope: Scope, depth: int, typed: bool) -> Expr:
    slices = [n for n, t in scope.slices if t == ty]
    arrays = [(n, k) for n, t, k in scope.arrays if t == ty]
    if not slices and not arrays:
        return draw(leaf(ty, scope, typed))
    if arrays and draw(st.booleans()):
        name, length = draw(st.sampled_from(arrays))
        # A constant index must be in bounds (rustc denies `tab[4]` on a `[f64; 4]`).
        at = draw(st.sampled_from([str(k) for k in range(length)] + [f"{name}.len() - 1"] +
                                  ([f"i % {length}"] if ("i", "usize") in scope.scalars else [])))
        return Expr(f"{name}[{at}]", P_POSTFIX, True)
    name = draw(st.sampled_from(slices))
    loop_var = ("i", "usize") in scope.scalars  # a block may shadow `i` with another type
    idx = draw(expr("usize", scope, depth)) if not loop_var or draw(st.booleans()) else Expr("i", P_POSTFIX, True)
    return Expr(f"{name}[{idx.text}]", P_POSTFIX, True)


LOCAL_NAMES = ("t", "w", "acc", "i", "v_f64", "v_u8", "x")  # some shadow parameters or the loop variable


@st.composite
def block(draw, ty: str, scope: Scope, depth: int, typed: bool) -> Expr:
    """`{ let name: T = e; ... tail }`, with the local in scope for the tail (possibly shadowing)."""
    local_ty = draw(st.sampled_from(TYPES))
    name = draw(st.sampled_from(LOCAL_NAMES))
    init = draw(expr(local_ty, scope, depth))
    annotate = draw(st.booleans()) or not init.typed
    mutable = draw(st.booleans())
    inner = scope.with_local(name, local_ty)
    stmts = [f"let {'mut ' if mutable else ''}{name}{': ' + local_ty if annotate else ''} = {init.text};"]
    if mutable and local_ty in NUMERIC:
        op = draw(st.sampled_from(["+=", "-=", "*=", "="] + (["&=", "|=", "^="] if local_ty in INTS else [])))
        value = draw(expr(local_ty, inner, depth))
        stmts.append(f"{name} {op} {value.text};")
    if mutable and draw(st.booleans()):
        cond = draw(expr("bool", inner, depth))
        value = draw(expr(local_ty, inner, depth))
        stmts.append(f"if {cond.text} {{ {name} = {value.text}; }}")
    tail = draw(expr(ty, inner, depth, typed))
    return Expr("{ " + " ".join(stmts) + f" {tail.text} }}", P_POSTFIX, tail.typed, block_like=True)


@st.composite
def loop_block(draw, ty: str, scope: Scope, depth: int, typed: bool) -> Expr:
    """A sequential loop inside the expression: `{ let mut acc: T = e; for j in 0..n { acc = ...; } acc }`."""
    if ty not in NUMERIC:
        return draw(leaf(ty, scope, typed))
    init = draw(expr(ty, scope, depth))
    inner = scope.with_local("acc", ty).with_local("j", "usize")
    count = draw(st.sampled_from(["3", "j_end", "s_f64.len()", "tab.len()"]))
    count = "(v_u8 as usize)" if count == "j_end" else count
    if ty in FLOATS:
        update = f"acc += {draw(expr(ty, inner, depth)).text};"
    else:
        update = f"acc = acc.wrapping_add({draw(expr(ty, inner, depth)).text});"
    kind = draw(st.sampled_from(["for", "while"]))
    if kind == "for":
        body = f"for j in 0..{count} {{ {update} }}"
    else:
        body = f"let mut j = 0usize; while j < {count} {{ {update} j += 1; }}"
    return Expr(f"{{ let mut acc: {ty} = {init.text}; {body} acc }}", P_POSTFIX, True, block_like=True)


@st.composite
def match_expr(draw, ty: str, scope: Scope, depth: int, typed: bool) -> Expr:
    scrutinee_ty = draw(st.sampled_from(INTS))
    scrutinee = draw(expr(scrutinee_ty, scope, depth, typed=True))
    lo, hi = _int_range(scrutinee_ty)
    values = sorted(set(draw(st.lists(st.integers(max(lo, -5), min(hi, 9)), min_size=1, max_size=3))))
    covered: set[int] = set()
    arms = []
    for v in values:
        if v in covered:
            continue
        pattern = str(v)
        if draw(st.booleans()) and v + 2 <= hi and not {v + 1, v + 2} & set(values):
            pattern = f"{v}..={v + 2}"
            covered |= {v + 1, v + 2}
        elif draw(st.integers(0, 3)) == 0 and v + 1 <= hi and v + 1 not in values:
            pattern = f"{v} | {v + 1}"
            covered.add(v + 1)
        arms.append(f"{pattern} => {draw(expr(ty, scope, depth, typed)).text},")
    arms.append(f"_ => {draw(expr(ty, scope, depth, typed)).text},")
    return Expr(f"match {scrutinee.text} {{ {' '.join(arms)} }}", P_POSTFIX, typed, block_like=True)


# ---------------------------------------------------------------- kernels

@dataclass(frozen=True)
class GeneratedKernel:
    source: str     # a whole crate: the struct, then the kernel
    expression: str
    ty: str
    context: str    # where the expression stands


def as_f64(e: Expr, ty: str) -> str:
    if ty == "bool":
        return f"if {e.text} {{ 1.0 }} else {{ 0.0 }}"
    if ty == "f64" and e.prec >= P_CAST and not e.block_like:
        return e.text
    inner = e if e.prec >= P_CAST and not e.block_like else paren(e)
    return f"{inner.text} as f64"


@st.composite
def kernels(draw, name: str = "fuzzed", max_depth: int = 4) -> GeneratedKernel:
    scope = base_scope()
    context = draw(st.sampled_from(["store", "store", "store", "let", "reduce", "minmax", "index", "bound", "write",
                                    "write2d", "helper"]))
    ty = "usize" if context in ("index", "bound", "write", "write2d") else draw(st.sampled_from(TYPES))
    if context == "bound":  # the loop variable is not in scope in its own bounds
        scope = replace(scope, scalars=tuple(s for s in scope.scalars if s[0] != "i"))
    if context == "write2d":
        scope = scope.with_local("j", "usize")
    e = draw(expr(ty, scope, draw(st.integers(1, max_depth))))
    header = f"#[kernel]\npub fn {name}({signature()})"
    value = as_f64(e, ty)
    helper = ""
    if context == "store":
        body = f"    for i in 0..out.len() {{\n        out[i] = {value};\n    }}\n"
    elif context == "let":
        annotation = f": {ty}" if draw(st.booleans()) or not e.typed else ""
        body = (f"    for i in 0..out.len() {{\n        let value{annotation} = {e.text};\n"
                f"        out[i] = {as_f64(Expr('value', P_POSTFIX, True), ty)};\n    }}\n")
    elif context == "reduce":
        header += " -> f64"
        body = (f"    let mut total = 0.0;\n    for i in 0..out.len() {{\n        total += {value};\n    }}\n"
                f"    total\n")
    elif context == "minmax":
        header += " -> f64"
        pick = draw(st.sampled_from(["min", "max"]))
        body = (f"    let mut m = f64::{'MAX' if pick == 'min' else 'MIN'};\n    for i in 0..out.len() {{\n"
                f"        m = m.{pick}({value});\n    }}\n    m\n")
    elif context in ("write", "write2d"):
        # Write indices the checker must prove distinct: random, or affine in the loop variables.
        at = draw(st.sampled_from(["random", "affine", "affine"]))
        if at == "affine":
            stride = draw(st.sampled_from(["1", "2", "3", "v_usize", "s_f64.len()", "(v_u8 as usize)"]))
            inner = "i" if context == "write" else f"j * {stride} + i"
            scale = "" if context == "write2d" else f"{stride} * "
            e = replace(e, text=f"{scale}{inner} + {paren(e).text if e.prec < P_MUL + 1 else e.text}")
        value = draw(st.sampled_from(["1.0", "s_f64[i]", "v_f64 * 2.0"]))
        store = f"out[{e.text}] = {value};"
        if context == "write":
            body = f"    for i in 0..out.len() {{\n        {store}\n    }}\n"
        else:
            body = (f"    for j in 0..v_usize {{\n        for i in 0..s_f64.len() {{\n            {store}\n"
                    f"        }}\n    }}\n")
    elif context == "index":
        body = f"    for i in 0..out.len() {{\n        out[i] = s_f64[{e.text}];\n    }}\n"
    elif context == "bound":
        bound = paren(e) if e.block_like else e
        body = f"    for i in 0..{bound.text} {{\n        out[i] = 1.0;\n    }}\n"
    else:  # in a helper fn, called from the loop
        helper_name = f"{name}_helper"
        helper = (f"fn {helper_name}({signature().replace('out: &mut [f64], ', '')}, i: usize) -> f64 {{\n"
                  f"    {value}\n}}\n\n")
        args = ", ".join([n for n, _ in SCALAR_PARAMS] + [n for n, _ in SLICE_PARAMS] + [n for n, _, _ in ARRAY_PARAMS]
                         + ["p", "q", "i"])
        body = f"    for i in 0..out.len() {{\n        out[i] = {helper_name}({args});\n    }}\n"
    source = f"{helper}{header} {{\n{body}}}\n"
    return GeneratedKernel(source, e.text, ty, context)


def crate_of(generated: list[GeneratedKernel]) -> str:
    return "use rs2gpu::kernel;\n\n" + STRUCT + "\n" + "\n".join(g.source for g in generated)
