"""The built-in operations a kernel may call, with their typing rules and effects.

One table, read by the frontend (which calls are allowed and what they return), the checker (all of
these are pure: they read only their arguments) and the emitter (how each is spelled per dialect).
Operand kinds: "self" is the receiver's type; "i32"/"u32" are fixed types.
Receivers: "float", "int", "signed" (signed ints and floats), "half" (f16, bf16), "seq" (slices and arrays),
and "checked":
`checked_op(a, b)`, whether Rust's `a.checked_op(b)` is `Some`, which is no method of its own (the
frontend makes it from the forms of frontend/checked.py).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IntrinsicSig:
    name: str
    receiver: str
    operands: tuple[str, ...]
    result: str  # "self" | "bool" | "usize" | "u32" | "u16" | "f32" | "f64"


def _sigs(receiver: str, names: str, operands: tuple[str, ...], result: str = "self") -> dict:
    return {(receiver, n): IntrinsicSig(n, receiver, operands, result) for n in names.split()}


INTRINSICS: dict[tuple[str, str], IntrinsicSig] = {
    **_sigs("float", "sqrt cbrt exp exp2 exp_m1 ln ln_1p log2 log10 abs floor ceil round trunc fract "
                     "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh recip signum "
                     "to_degrees to_radians", ()),
    **_sigs("float", "min max powf atan2 hypot copysign rem_euclid div_euclid", ("self",)),
    **_sigs("float", "mul_add clamp", ("self", "self")),
    **_sigs("float", "powi", ("i32",)),
    **_sigs("float", "is_nan is_finite is_infinite is_sign_negative is_sign_positive", (), "bool"),
    **_sigs("int", "min max wrapping_add wrapping_sub wrapping_mul rem_euclid div_euclid", ("self",)),
    **_sigs("int", "saturating_add saturating_sub saturating_mul", ("self",)),
    **_sigs("int", "clamp", ("self", "self")),
    **_sigs("int", "rotate_left rotate_right", ("u32",)),
    **_sigs("int", "wrapping_neg", ()),
    **_sigs("int", "pow wrapping_pow", ("u32",)),
    **_sigs("int", "wrapping_shl wrapping_shr", ("u32",)),
    **_sigs("int", "count_ones leading_zeros trailing_zeros", (), "u32"),
    **_sigs("int", "is_power_of_two", (), "bool"),
    **_sigs("signed", "abs signum", ()),
    **_sigs("half", "to_f32", (), "f32"),
    **_sigs("half", "to_f64", (), "f64"),
    **_sigs("half", "to_bits", (), "u16"),
    **_sigs("half", "sqrt abs", ()),
    **_sigs("half", "min max", ("self",)),
    **_sigs("half", "is_nan is_finite is_infinite is_sign_negative is_sign_positive", (), "bool"),
    **_sigs("seq", "len", (), "usize"),
    **_sigs("checked", "checked_add checked_sub checked_mul checked_div checked_rem", ("self",), "bool"),
}

# The associated functions that make a half value from another type (`f16::from_f32(x)`): name → the
# argument's type. The intrinsic's result is the half type.
HALF_CONSTRUCTORS = {"from_f32": "f32", "from_f64": "f64", "from_bits": "u16"}

# Free-function spellings of the same operations (`std::cmp::min(a, b)` is `a.min(b)`).
FREE_FUNCTIONS = {"min": "min", "max": "max"}


def method_names(receiver_kinds: tuple[str, ...]) -> list[str]:
    """The methods a kernel may call on a receiver of these kinds, sorted (the `checked` intrinsics are
    no methods: they are listed by the forms that make them)."""
    return sorted({name for kind, name in INTRINSICS if kind in receiver_kinds and kind != "checked"})


def lookup(receiver_kinds: tuple[str, ...], name: str) -> IntrinsicSig | None:
    for kind in receiver_kinds:
        sig = INTRINSICS.get((kind, name))
        if sig is not None:
            return sig
    return None
