"""The transfer plan: which way each parameter's data travels for one call.

The rule being specified: data the GPU only reads goes host → device ("in"); data whose old contents can
matter comes back and must also go there first ("inout"); data the kernel provably overwrites entirely
before reading any of it is never uploaded ("out"); scalars and structs ride in the launch arguments
("value"). Getting "out" wrong loses the user's data, so every case where some element might survive the
call must be "inout".
"""
from __future__ import annotations

import pytest


def plan_of(check_source, source: str) -> dict[str, str]:
    plan = check_source(source).checked.kernels[0]
    return {p.binding.name: p.transfer for p in plan.params}


def test_shared_slice_is_uploaded_only(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn copy(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        a[i] = b[i];
    }
}
""")
    assert plan["b"] == "in"


def test_slice_overwritten_over_its_own_length_and_never_read_is_out(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn fill(a: &mut [f32], value: f32) {
    for i in 0..a.len() {
        a[i] = value;
    }
}
""")
    assert plan == {"a": "out", "value": "value"}


def test_out_is_decided_per_parameter(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn split(re: &mut [f64], im: &mut [f64], z: &[f64]) {
    for i in 0..re.len() {
        re[i] = z[2 * i];
        im[i] = z[2 * i + 1];
    }
}
""")
    # `re` is written over 0..re.len(); `im` over the same range, which need not be all of `im`.
    assert plan == {"re": "out", "im": "inout", "z": "in"}


def test_read_modify_write_is_inout(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn scale(a: &mut [f64], s: f64) {
    for i in 0..a.len() {
        a[i] = a[i] * s;
    }
}
""")
    assert plan["a"] == "inout"


def test_compound_assignment_is_inout(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn daxpy(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}
""")
    assert plan == {"y": "inout", "x": "in", "a": "value"}


def test_write_under_if_is_inout(check_source) -> None:
    # Elements where the condition is false keep their old values.
    plan = plan_of(check_source, """
#[kernel]
pub fn positive(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        if b[i] > 0.0 {
            a[i] = b[i];
        }
    }
}
""")
    assert plan["a"] == "inout"


def test_loop_over_another_slices_length_is_inout(check_source) -> None:
    # `a` may be longer than `b`: the elements past b.len() must survive the call.
    plan = plan_of(check_source, """
#[kernel]
pub fn copy(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i] = b[i];
    }
}
""")
    assert plan == {"a": "inout", "b": "in"}


def test_loop_not_starting_at_zero_is_inout(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn tail(a: &mut [f64]) {
    for i in 1..a.len() {
        a[i] = 0.0;
    }
}
""")
    assert plan["a"] == "inout"


def test_write_at_an_offset_is_inout(check_source) -> None:
    # a[0] is never written.
    plan = plan_of(check_source, """
#[kernel]
pub fn shift(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() - 1 {
        a[i + 1] = b[i];
    }
}
""")
    assert plan["a"] == "inout"


def test_write_skipped_by_continue_is_inout(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn sparse(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        if b[i] == 0.0 {
            continue;
        }
        a[i] = 1.0 / b[i];
    }
}
""")
    assert plan["a"] == "inout"


def test_write_inside_a_sequential_inner_loop_is_inout(check_source) -> None:
    # The inner loop may run zero times.
    plan = plan_of(check_source, """
#[kernel]
pub fn maybe(a: &mut [f64], b: &[f64], m: usize) {
    for i in 0..a.len() {
        let x = b[i];
        for _k in 0..m {
            a[i] = x;
        }
    }
}
""")
    assert plan["a"] == "inout"


def test_slice_read_before_a_later_launch_overwrites_it_is_inout(check_source) -> None:
    # The first launch needs a's old contents, so they must be uploaded even though the second overwrites them.
    plan = plan_of(check_source, """
#[kernel]
pub fn two_steps(a: &mut [f64], b: &mut [f64], c: &[f64]) {
    for j in 0..b.len() {
        b[j] = a[j] * 2.0;
    }
    for i in 0..a.len() {
        a[i] = c[i];
    }
}
""")
    assert plan == {"a": "inout", "b": "out", "c": "in"}


def test_mutable_slice_never_written_is_in(check_source) -> None:
    plan = plan_of(check_source, """
#[kernel]
pub fn sum(a: &mut [f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i];
    }
    s
}
""")
    assert plan == {"a": "in"}


@pytest.mark.parametrize("ty", ["f64", "f32", "i8", "u16", "i32", "u64", "usize", "bool"])
def test_scalars_travel_by_value(ty: str, check_source) -> None:
    plan = plan_of(check_source, f"""
#[kernel]
pub fn fill(a: &mut [{ty}], x: {ty}) {{
    for i in 0..a.len() {{
        a[i] = x;
    }}
}}
""")
    assert plan["x"] == "value"


def test_struct_by_value_travels_by_value_and_by_reference_and_arrays_go_in(check_source) -> None:
    plan = plan_of(check_source, """
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Affine {
    pub scale: f64,
    pub shift: f64,
}

#[kernel]
pub fn apply(out: &mut [f64], x: &[f64], by_value: Affine, by_ref: &Affine, weights: &[f64; 4]) {
    for i in 0..out.len() {
        out[i] = by_value.scale * x[i] + by_ref.shift + weights[i % 4];
    }
}
""")
    assert plan == {"out": "out", "x": "in", "by_value": "value", "by_ref": "in", "weights": "in"}


def test_written_parameters_are_marked_written(check_source) -> None:
    plan = check_source("""
#[kernel]
pub fn update(a: &mut [f64], b: &mut [f64], c: &mut [f64], x: &[f64]) {
    for i in 0..a.len() {
        a[i] = x[i];
        b[i] += x[i];
    }
}
""").checked.kernels[0]
    assert {p.binding.name: (p.transfer, p.written) for p in plan.params} == {
        "a": ("out", True), "b": ("inout", True), "c": ("in", False), "x": ("in", False)}
