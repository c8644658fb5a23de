"""The IR validator: it accepts what the frontend builds and names each internal inconsistency."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rs2gpu.frontend import lower_path, lower_text
from rs2gpu.frontend.infer import InferVar
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import BOOL, F32, F64, I32, NEVER, U32, UNIT, USIZE, RefType, SliceType
from rs2gpu.ir.validate import is_concrete, validate_crate, validate_function

REPO = Path(__file__).resolve().parent.parent.parent
SPAN = ir.Span("src/lib.rs", 1, 1, 1, 2)
SLICE = RefType(SliceType(F64), True)


def param(name: str, ty) -> ir.Binding:
    return ir.Binding(name, ty, False, "param", SPAN)


def local(name: str, ty, mutable=False) -> ir.Binding:
    return ir.Binding(name, ty, mutable, "local", SPAN)


def var(b: ir.Binding) -> ir.Var:
    return ir.Var(b, SPAN)


def lit(value, ty) -> ir.Lit:
    return ir.Lit(value, str(value), ty, SPAN)


def function(stmts, tail=None, params=(), ret=UNIT) -> ir.Function:
    body = ir.Block(tuple(stmts), tail, tail.ty if tail is not None else UNIT, SPAN)
    return ir.Function("f", "f", (), tuple(params), ret, body, False, False, SPAN)


def one_error(fn: ir.Function) -> str:
    errors = validate_function(fn)
    assert len(errors) == 1, errors
    return errors[0]


def test_every_function_of_the_example_crate_is_valid() -> None:
    crate, sink = lower_path(REPO / "examples" / "rajaperf")
    assert not sink.has_errors
    assert validate_crate(crate) == []


def test_frontend_output_with_every_construct_is_valid() -> None:
    crate, sink = lower_text("""
#[repr(C)]
#[derive(Clone, Copy)]
pub struct P {
    x: f32,
    n: u32,
}

const K: u32 = 3;

fn sq<T: Copy + core::ops::Mul<Output = T>>(x: T) -> T {
    x * x
}

#[kernel]
pub fn k(ps: &mut [P], a: &mut [f64], m: u8) -> (f64, i32) {
    let mut total = 0.0;
    for i in 0..ps.len() {
        let p = P { x: sq(ps[i].x), n: K };
        ps[i] = p;
        let mut j = 0;
        while j < 3 {
            j += 1;
            if j == 2 {
                continue;
            }
        }
        let v = loop {
            break j;
        };
        total += a[i] * v as f64 + [1.0, 2.0][1];
        let w = match m {
            0 => 1,
            1..=3 => { 2 }
            _ => return (0.0, -1),
        };
        a[i] = if w > 1 { -total } else { (w as f64).sqrt() };
        a[i] += (1u64 << K) as f64;
    }
    (total, 1)
}
""")
    assert not sink.items, [d.message for d in sink.items]
    for fn in crate.functions:
        assert validate_function(fn) == [], fn.name


def test_inference_variable_left_in_a_type_is_reported() -> None:
    leftover = local("x", InferVar("float"))
    message = one_error(function([ir.Let(leftover, None, SPAN)]))
    assert "binding `x` has the non-concrete type `{float}`" in message
    assert message.startswith("src/lib.rs:1:1: ")


def test_variable_used_outside_the_scope_of_its_binding_is_reported() -> None:
    inner = local("t", I32)
    block = ir.Block((ir.Let(inner, lit(1, I32), SPAN),), None, UNIT, SPAN)
    fn = function([ir.ExprStmt(ir.BlockExpr(block, SPAN), SPAN)], var(inner), ret=I32)
    assert "`t` is used outside the scope of its binding" in one_error(fn)


def test_variable_used_in_its_own_initializer_is_reported() -> None:
    x = local("x", I32)
    assert "`x` is used outside the scope" in one_error(function([ir.Let(x, var(x), SPAN)]))


def test_for_variable_is_in_scope_only_in_the_loop_body() -> None:
    i = ir.Binding("i", USIZE, False, "loop", SPAN)
    body = ir.Block((ir.ExprStmt(var(i), SPAN),), None, UNIT, SPAN)
    loop = ir.For(i, lit(0, USIZE), lit(4, USIZE), False, body, SPAN)
    assert validate_function(function([ir.ExprStmt(loop, SPAN)])) == []
    after = function([ir.ExprStmt(loop, SPAN), ir.ExprStmt(var(i), SPAN)])
    assert "`i` is used outside the scope" in one_error(after)


def test_binary_operands_of_different_types_are_reported() -> None:
    x = param("x", F32)
    fn = function([], ir.Binary("+", var(x), lit(1.0, F64), F32, SPAN), params=(x,), ret=F32)
    assert "`f32 + f64`: the operand types differ" in one_error(fn)


def test_shift_operands_may_differ() -> None:
    x = param("x", I32)
    fn = function([], ir.Binary("<<", var(x), lit(3, U32), I32, SPAN), params=(x,), ret=I32)
    assert validate_function(fn) == []


def test_comparison_must_be_bool() -> None:
    x = param("x", I32)
    fn = function([], ir.Binary("<", var(x), lit(3, I32), I32, SPAN), params=(x,), ret=I32)
    assert "has type `i32`, expected `bool`" in one_error(fn)


def test_index_must_be_usize() -> None:
    a, i = param("a", SLICE), param("i", I32)
    fn = function([], ir.Index(var(a), var(i), F64, SPAN), params=(a, i), ret=F64)
    assert "index has type `i32`, expected `usize`" in one_error(fn)


def test_index_type_must_be_the_element_type() -> None:
    a = param("a", SLICE)
    fn = function([], ir.Index(var(a), lit(0, USIZE), F32, SPAN), params=(a,), ret=F32)
    assert "element of `&mut [f64]` has type `f64`, not `f32`" in one_error(fn)


def test_missing_span_is_reported() -> None:
    x = param("x", I32)
    fn = function([], dataclasses.replace(var(x), span=None), params=(x,), ret=I32)
    assert "has no span" in one_error(fn)


def test_assignment_target_must_be_a_place() -> None:
    x = param("x", I32)
    fn = function([ir.Assign(ir.Binary("+", var(x), lit(1, I32), I32, SPAN), lit(2, I32), None, SPAN)],
                  params=(x,))
    assert "assignment target is not a place" in one_error(fn)


def test_assignment_through_index_and_field_chains_is_a_place() -> None:
    a = param("a", SLICE)
    fn = function([ir.Assign(ir.Index(var(a), lit(0, USIZE), F64, SPAN), lit(1.0, F64), "+", SPAN)], params=(a,))
    assert validate_function(fn) == []


def test_two_accesses_with_one_identity_are_reported() -> None:
    a = param("a", SLICE)
    first = ir.Index(var(a), lit(0, USIZE), F64, SPAN)
    second = dataclasses.replace(first, index=lit(1, USIZE))  # a copy keeps the identity: not a new access
    fn = function([ir.Assign(first, second, None, SPAN)], params=(a,))
    assert f"index has the identity of another node (node {first.node_id}, at src/lib.rs:1:1)" in one_error(fn)


def test_one_access_placed_twice_is_reported() -> None:
    a = param("a", SLICE)
    element = ir.Index(var(a), lit(0, USIZE), F64, SPAN)
    fn = function([ir.Assign(element, element, "+", SPAN)], params=(a,))
    assert f"index appears twice (node {element.node_id})" in one_error(fn)


def test_assignment_and_binding_identities_are_checked_too() -> None:
    x = local("x", F64, mutable=True)
    store = ir.Assign(var(x), lit(1.0, F64), None, SPAN)
    fn = function([ir.Let(x, None, SPAN), store, store])
    assert f"assignment appears twice (node {store.node_id})" in one_error(fn)
    twin = dataclasses.replace(x, name="y")
    fn = function([ir.Let(x, None, SPAN), ir.Let(twin, None, SPAN)])
    assert f"binding `y` has the identity of another node (node {x.node_id}" in one_error(fn)


def test_access_without_an_identity_is_reported() -> None:
    a = param("a", SLICE)
    element = dataclasses.replace(ir.Index(var(a), lit(0, USIZE), F64, SPAN), node_id=None)
    assert "index has no identity" in one_error(function([], element, params=(a,), ret=F64))


def test_functions_of_a_crate_sharing_an_identity_are_reported() -> None:
    a, b = param("a", SLICE), param("b", SLICE)
    element = ir.Index(var(a), lit(0, USIZE), F64, SPAN)
    f = function([], element, params=(a,), ret=F64)
    g = dataclasses.replace(function([], dataclasses.replace(element, base=var(b)), params=(b,), ret=F64), name="g")
    assert validate_function(f) == validate_function(g) == []
    crate = ir.Crate("c", "", (), (), (f, g), {})
    assert validate_crate(crate) == [f"src/lib.rs:1:1: index has the identity of another node (node "
                                     f"{element.node_id}, at src/lib.rs:1:1)"]


def test_let_initializer_must_have_the_binding_type() -> None:
    message = one_error(function([ir.Let(local("x", F32), lit(1.0, F64), SPAN)]))
    assert "`let x: f32` is initialized with a `f64`" in message


def test_diverging_initializer_fits_any_binding() -> None:
    ret = ir.Return(None, NEVER, SPAN)
    assert validate_function(function([ir.Let(local("x", F32), ret, SPAN)])) == []


def test_break_outside_a_loop_is_reported() -> None:
    fn = function([ir.ExprStmt(ir.Break(None, NEVER, SPAN), SPAN)])
    assert "`break` outside of a loop" in one_error(fn)


def test_if_condition_must_be_bool() -> None:
    then = ir.Block((), None, UNIT, SPAN)
    fn = function([ir.ExprStmt(ir.If(lit(1, I32), then, None, UNIT, SPAN), SPAN)])
    assert "`if` condition has type `i32`, expected `bool`" in one_error(fn)


def test_body_type_must_be_the_return_type() -> None:
    fn = function([], lit(True, BOOL), ret=I32)
    assert "the body has type `bool` but `f` returns `i32`" in one_error(fn)


@pytest.mark.parametrize("ty, concrete", [
    (F64, True), (RefType(SliceType(F32), False), True), (NEVER, True),
    (InferVar("int"), False), (RefType(SliceType(InferVar("any")), True), False), ("f64", False),
])
def test_concrete_types_are_ir_types_without_inference_variables(ty, concrete: bool) -> None:
    assert is_concrete(ty) is concrete
