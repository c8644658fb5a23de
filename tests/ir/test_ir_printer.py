"""The IR printer: a Rust-like text that shows every type the syntax does not, deterministically."""
from __future__ import annotations

import math

from rs2gpu.frontend import lower_text
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.printer import format_crate, format_function
from rs2gpu.ir.types import BOOL, F32, F64, I32, UNIT, USIZE, RefType, SliceType

SPAN = ir.Span("src/lib.rs", 1, 1, 1, 2)


def lit(value, ty, text=None) -> ir.Lit:
    return ir.Lit(value, text if text is not None else str(value), ty, SPAN)


def local(name: str, ty=I32, mutable=False) -> ir.Binding:
    return ir.Binding(name, ty, mutable, "local", SPAN)


def function(stmts, tail=None, params=(), ret=UNIT, **kw) -> ir.Function:
    body = ir.Block(tuple(stmts), tail, tail.ty if tail is not None else UNIT, SPAN)
    return ir.Function(kw.get("name", "f"), kw.get("name", "f"), kw.get("type_args", ()), tuple(params), ret, body,
                       kw.get("is_kernel", False), kw.get("fast_math", False), SPAN)


def lines(fn: ir.Function) -> list[str]:
    return [line.strip() for line in format_function(fn).splitlines()]


def test_literals_carry_their_type_as_a_suffix() -> None:
    x = local("x", F32)
    fn = function([ir.Let(x, lit(1.5, F32, "1.5"), SPAN), ir.Let(local("b", BOOL), lit(True, BOOL, "true"), SPAN),
                   ir.Let(local("n", I32), lit(-3, I32), SPAN)])
    assert lines(fn)[1:4] == ["let x: f32 = 1.5f32;", "let b: bool = true;", "let n: i32 = -3i32;"]


def test_non_finite_constants_print_as_their_rust_names() -> None:
    fn = function([ir.Let(local("a", F64), lit(math.inf, F64, "inf"), SPAN),
                   ir.Let(local("b", F32), lit(-math.inf, F32, "-inf"), SPAN),
                   ir.Let(local("c", F64), lit(math.nan, F64, "nan"), SPAN)])
    assert lines(fn)[1:4] == ["let a: f64 = f64::INFINITY;", "let b: f32 = f32::NEG_INFINITY;",
                              "let c: f64 = f64::NAN;"]


def test_second_binding_of_a_name_gets_a_suffix() -> None:
    first, second, third = local("x"), local("x"), local("x")
    fn = function([ir.Let(first, lit(1, I32), SPAN), ir.Let(second, ir.Var(first, SPAN), SPAN),
                   ir.Let(third, ir.Var(second, SPAN), SPAN)], ir.Var(third, SPAN), ret=I32)
    assert lines(fn)[1:5] == ["let x: i32 = 1i32;", "let x#1: i32 = x;", "let x#2: i32 = x#1;", "x#2"]


def test_index_and_method_results_are_annotated_and_parenthesized_as_receivers() -> None:
    a = ir.Binding("a", RefType(SliceType(F64), False), False, "param", SPAN)
    i = ir.Binding("i", USIZE, False, "param", SPAN)
    elem = ir.Index(ir.Var(a, SPAN), ir.Var(i, SPAN), F64, SPAN)
    root = ir.Intrinsic("sqrt", (elem,), F64, SPAN)
    fn = function([], ir.Binary("+", root, lit(1.0, F64, "1.0"), F64, SPAN), params=(a, i), ret=F64)
    assert lines(fn)[0] == "fn f(a: &[f64], i: usize) -> f64 {"
    assert lines(fn)[1] == "((a[i]: f64).sqrt(): f64 + 1.0f64)"


def test_unary_operand_and_negative_literal_receivers_are_parenthesized() -> None:
    neg = ir.Intrinsic("abs", (lit(-2, I32),), I32, SPAN)
    x = local("x", F64)
    fn = function([ir.Let(x, lit(2.0, F64, "2.0"), SPAN),
                   ir.Let(local("y", F64), ir.Intrinsic("abs", (ir.Unary("-", ir.Var(x, SPAN), F64, SPAN),), F64,
                                                        SPAN), SPAN)], neg, ret=I32)
    assert lines(fn)[2:4] == ["let y: f64 = (-x).abs(): f64;", "(-2i32).abs(): i32"]


def test_block_like_statements_need_no_semicolon_and_a_non_unit_tail_shows_its_type() -> None:
    text = format_crate(lower_text("""
#[kernel]
pub fn k(a: &mut [i32], x: i32) -> i32 {
    if x > 0 { a[0] = 1 }
    if x > 1 { 2 } else { 3 }
}
""")[0])
    assert text.splitlines()[2:11] == [
        "    if (x > 0i32) {",
        "        a[0usize] = 1i32;",
        "    }",
        "    if (x > 1i32) {",
        "        2i32",
        "    } else {",
        "        3i32",
        "    }: i32",
        "}",
    ]


def test_kernel_attributes_and_generic_instances_are_shown() -> None:
    crate, _ = lower_text("""
fn twice<T: Copy + core::ops::Add<Output = T>>(x: T) -> T {
    x + x
}

#[kernel(fast_math)]
pub fn k(a: &mut [f32]) {
    a[0] = twice(a[1]);
}
""")
    text = format_crate(crate)
    assert text.startswith("// twice::<f32>\nfn twice_f32(x: f32) -> f32 {\n")
    assert "\n#[kernel(fast_math)]\nfn k(a: &mut [f32]) {\n" in text


def test_structs_show_their_layout_and_consts_their_value() -> None:
    crate, _ = lower_text("""
#[repr(C)]
#[derive(Clone, Copy)]
pub struct P {
    a: u8,
    b: f32,
}

const N: usize = 2;

#[kernel]
pub fn k(ps: &mut [P]) {
    ps[N].b = 1.0;
}
""")
    assert format_crate(crate).split("\n\n")[:2] == [
        "#[repr(C)] // size 8, align 4\nstruct P {\n    a: u8, // offset 0\n    b: f32, // offset 4\n}",
        "const N: usize = 2usize;",
    ]


def test_printing_is_deterministic_across_lowerings() -> None:
    source = """
#[kernel]
pub fn k(a: &mut [f64], x: f64) -> f64 {
    let x = x * 2.0;
    let mut s = 0.0;
    for i in 0..a.len() {
        let x = a[i] + x;
        s += x;
    }
    s
}
"""
    first, second = lower_text(source)[0], lower_text(source)[0]
    assert format_crate(first) == format_crate(second)
    assert format_function(first.functions[0]) == format_function(first.functions[0])
