"""Ordinary Rust that rustc accepts is accepted in kernels, and what rustc rejects is still rejected:
coercions at call sites, `let`s with a type and returns; `use` declarations; the integer methods of std.
Each verdict is rustc's, checked on the same snippet (the values computed are checked on the device by
tests/gpu/test_ordinary_rust.py)."""
from __future__ import annotations

import struct

from rs2gpu.frontend import lower_text


def errors(source: str) -> list[str]:
    _, sink = lower_text(source)
    return [f"{d.span.line}:{d.span.col} {d.code} {d.message}" for d in sink.items]


def assert_both_accept(rustc, source: str) -> None:
    rustc.assert_accepts(source)
    assert errors(source) == []


# ---------------------------------------------------------------- coercions

REBORROW_AT_CALL = """
fn heat_point(s: &[f64], i: usize) -> f64 { s[i] * 0.5 }

#[kernel]
pub fn k(a: &mut [f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = heat_point(a, i % a.len());
    }
}
"""

REBORROW_IN_HELPER = """
fn first(s: &[f64]) -> f64 { s[0] }
fn bump_first(s: &mut [f64]) -> f64 { s[0] += 1.0; first(s) }
fn read_back(s: &mut [f64]) -> f64 { return first(s); }

#[kernel]
pub fn k(a: &mut [f64]) {
    let x = bump_first(a) + read_back(a);
    for i in 0..a.len() {
        a[i] = x;
    }
}
"""

SHARED_AS_MUT = """
fn bump(s: &mut [f64], i: usize) { s[i] += 1.0; }

#[kernel]
pub fn k(a: &[f64], out: &mut [f64]) {
    for i in 0..out.len() {
        bump(a, i);
    }
}
"""

UNSIZE_AT_CALL = """
fn total<T: Copy + std::ops::Add<Output = T>>(v: &[T], zero: T) -> T {
    let mut s = zero;
    for &x in v {
        s = s + x;
    }
    s
}

fn first(v: &[f32]) -> f32 { v[0] }

#[kernel]
pub fn k(out: &mut [f32], w: &[f32; 3], n: &[i32; 5]) {
    for i in 0..out.len() {
        out[i] = total(w, 0.0) + first(w) + total(n, 0) as f32;
    }
}
"""

ARRAY_AS_MUT_SLICE = """
fn clear(v: &mut [f32]) { v[0] = 0.0; }

#[kernel]
pub fn k(out: &mut [f32], w: &[f32; 3]) {
    for i in 0..out.len() {
        clear(w);
    }
}
"""


def test_a_mut_slice_is_reborrowed_where_a_helper_takes_a_shared_one(rustc):
    assert_both_accept(rustc, REBORROW_AT_CALL)


def test_a_helper_passes_and_returns_its_mut_slice_where_shared_one_is_expected(rustc):
    assert_both_accept(rustc, REBORROW_IN_HELPER)


def test_an_array_is_unsized_where_a_helper_takes_a_slice(rustc):
    assert_both_accept(rustc, UNSIZE_AT_CALL)
    crate, _ = lower_text(UNSIZE_AT_CALL)
    assert {f.name for f in crate.functions} == {"k", "total_f32_p0len3", "total_i32_p0len5", "first_p0len3"}


def test_a_shared_array_passed_as_a_mut_slice_is_still_a_mismatch(rustc):
    rustc.assert_rejects(ARRAY_AS_MUT_SLICE, "E0308")
    assert errors(ARRAY_AS_MUT_SLICE) == ["7:15 RG0005 mismatched types"]


def test_a_shared_slice_passed_as_mut_is_still_a_mismatch(rustc):
    rustc.assert_rejects(SHARED_AS_MUT, "E0308")
    assert errors(SHARED_AS_MUT) == ["7:14 RG0005 mismatched types"]




# ---------------------------------------------------------------- destructuring `let`

DESTRUCTURED = """
fn min_max(a: f64, b: f64) -> (f64, f64) { if a <= b { (a, b) } else { (b, a) } }

#[kernel]
pub fn k(lo: &mut [f64], hi: &mut [f64], n: &mut [u32]) {
    for i in 0..lo.len() {
        let (a, b) = min_max(lo[i], hi[i]);
        let (b, (a, mut c), _): (f64, (f64, u32), u8) = (a, (b, n[i]), 7);
        c += 1;
        lo[i] = b;
        hi[i] = a;
        n[i] = c;
    }
}
"""


def test_a_tuple_pattern_in_a_let_binds_each_name_to_its_element(rustc):
    assert_both_accept(rustc, DESTRUCTURED)


def test_a_tuple_pattern_of_another_arity_than_the_value_is_a_mismatch(rustc):
    source = DESTRUCTURED.replace("let (a, b) = min_max", "let (a, b, _) = min_max")
    rustc.assert_rejects(source, "E0308")
    assert errors(source) == ["7:13 RG0005 mismatched types"]


def test_a_name_bound_twice_in_one_pattern_is_an_error_as_in_rustc(rustc):
    source = DESTRUCTURED.replace("let (a, b) = min_max", "let (a, a) = min_max")
    rustc.assert_rejects(source, "E0416")
    assert errors(source)[0] == "7:17 RG0010 identifier `a` is bound more than once in the same pattern"


def test_a_rest_pattern_in_a_tuple_says_to_name_each_element(rustc):
    source = DESTRUCTURED.replace("let (a, b) = min_max", "let (a, ..) = min_max").replace("(a, (b, n[i]), 7)",
                                                                                         "(a, (a, n[i]), 7)")
    rustc.assert_accepts(source)
    _, sink = lower_text(source)
    [diagnostic] = sink.items
    assert (diagnostic.code, diagnostic.span.line, diagnostic.help) == (
        "RG0002", 7, "name each element, `_` for those not used")


def test_a_struct_pattern_in_a_let_says_to_bind_the_struct_and_read_its_fields(rustc):
    source = """
#[repr(C)]
#[derive(Clone, Copy)]
pub struct P { pub x: f64, pub y: f64 }

#[kernel]
pub fn k(out: &mut [f64], p: &[P]) {
    for i in 0..out.len() {
        let P { x, y } = p[i];
        out[i] = x * y;
    }
}
"""
    rustc.assert_accepts(source)
    _, sink = lower_text(source)
    [diagnostic] = sink.items
    assert (diagnostic.code, diagnostic.span.line) == ("RG0002", 9)
    assert "`let v = ...;`, then its fields `v.x`" in diagnostic.help

def test_a_helper_returning_a_slice_is_rejected_by_name(rustc):
    source = """
fn view(s: &[f64]) -> &[f64] { s }
fn first(s: &[f64]) -> f64 { s[0] }

#[kernel]
pub fn k(a: &mut [f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = first(view(a));
    }
}
"""
    rustc.assert_accepts(source)
    assert errors(source) == ["2:23 RG0002 a helper returning a slice is not supported in kernels"]

# ---------------------------------------------------------------- integer methods, stepped and reversed ranges

INTEGER_METHODS = """
#[kernel]
pub fn k(a: &mut [u32], b: &[i64]) {
    for i in 0..a.len().min(b.len()) {
        let s = a[i].saturating_add(3).saturating_sub(1).saturating_mul(2);
        let r = a[i].rotate_left(5).rotate_right(3);
        let c = a[i].checked_mul(s).unwrap_or(0) + if let Some(d) = r.checked_sub(s) { d } else { 1 };
        let big = b[i].checked_add(1).is_none() || b[i].checked_div(2).is_some();
        let fits = if let Some(_) = a[i].checked_add(s) { 1 } else { 0 };
        a[i] = c ^ big as u32 ^ fits;
    }
}
"""

STEPPED_AND_REVERSED = """
fn tail_sum(a: &[f64], from: usize) -> f64 {
    let mut s = 0.0;
    for j in (from..a.len()).rev() {
        s += a[j];
    }
    s
}

#[kernel]
pub fn k(out: &mut [f64], a: &[f64], step: usize) {
    for i in (0..out.len()).step_by(2) {
        let mut t = tail_sum(a, i);
        for j in (0..i).rev().step_by(step) {
            t -= a[j % a.len()];
        }
        for j in (0..=i).rev() {
            t += 0.5 * a[j % a.len()];
        }
        out[i] = t;
    }
}
"""


def test_saturating_rotating_and_checked_integer_methods_are_accepted(rustc):
    assert_both_accept(rustc, INTEGER_METHODS)


def test_stepped_and_reversed_ranges_are_accepted_in_kernel_and_helper_loops(rustc):
    assert_both_accept(rustc, STEPPED_AND_REVERSED)


def test_unwrap_of_a_checked_operation_names_the_forms_that_are_accepted(rustc):
    source = """
#[kernel]
pub fn k(a: &mut [u32]) {
    for i in 0..a.len() {
        a[i] = a[i].checked_add(1).unwrap();
    }
}
"""
    rustc.assert_accepts(source)
    _, sink = lower_text(source)
    [diag] = sink.items
    assert (diag.code, diag.span.line, diag.span.col) == ("RG0002", 5, 21)
    assert "`.unwrap_or(v)`" in diag.help and "if let Some(x)" in diag.help


def test_step_by_on_an_inclusive_range_says_what_to_write_instead(rustc):
    source = """
#[kernel]
pub fn k(a: &mut [f64], n: usize) {
    for i in (0..=n).step_by(2) {
        a[i] = 1.0;
    }
}
"""
    rustc.assert_accepts(source)
    assert errors(source) == ["4:15 RG0002 `.step_by()` on an inclusive range is not supported in kernels"]


def test_unknown_method_lists_exactly_the_methods_of_the_receiver_type():
    from rs2gpu.ir.intrinsics import INTRINSICS

    _, sink = lower_text("""
#[kernel]
pub fn k(a: &mut [u16]) {
    for i in 0..a.len() {
        a[i] = a[i].reverse_bits();
    }
}
""")
    [diag] = sink.items
    assert diag.code == "RG0007"
    listed = set(diag.help.split(" are ")[1].split("; and ")[0].replace("`", "").split(", "))
    assert listed == {name for kind, name in INTRINSICS if kind == "int"}
    assert "saturating_add" in listed and "rotate_left" in listed and "checked_add" not in listed


# ---------------------------------------------------------------- use declarations

USES = """
use std::f64::consts::PI;
use std::f64::consts;
use std::f64::consts::E as EULER;
use std::cmp::max as larger;

mod shapes {
    use super::*;
    use std::f32::consts::*;

    pub const K: f64 = 2.0;

    #[repr(C)]
    pub struct Point {
        pub x: f64,
        pub y: f64,
    }

    pub fn f(x: f64) -> f64 {
        x * SCALE + TAU as f64 + PI
    }

    pub fn g(p: &Point) -> f64 {
        p.x * p.y
    }
}

const SCALE: f64 = 3.0;

use crate::shapes::f;
use shapes::{g as area, Point as P, K};

#[kernel]
pub fn k(a: &mut [f64], p: &P, n: &[usize]) {
    for i in 0..a.len().min(n.len()) {
        a[i] = PI + consts::PI + EULER + f(K) + area(p) + larger(n[i], 3) as f64;
    }
}
"""


def test_use_of_std_constants_and_of_crate_items_resolves_as_in_rustc(rustc):
    assert_both_accept(rustc, USES)


def test_a_use_applies_only_to_the_module_it_is_written_in(rustc):
    source = """
mod inner {
    use std::f64::consts::PI;

    pub fn tau() -> f64 {
        2.0 * PI
    }
}

#[kernel]
pub fn k(a: &mut [f64]) {
    for i in 0..a.len() {
        a[i] = inner::tau() + PI;
    }
}
"""
    rustc.assert_rejects(source, "E0425")
    assert errors(source) == ["13:31 RG0004 cannot find value `PI` in this scope"]


def test_every_float_constant_has_rustcs_value(rustc):
    from rs2gpu.frontend.constants import _MATH, associated_constant

    program = "fn main() {\n" + "".join(
        f'    println!("{n} {{:?}} {{:?}}", std::f64::consts::{n}.to_bits(), std::f32::consts::{n}.to_bits());\n'
        for n in _MATH) + "}\n"
    for line in rustc.run(program).splitlines():
        name, bits64, bits32 = line.split()
        mine64, mine32 = associated_constant("f64", ["consts", name]), associated_constant("f32", ["consts", name])
        assert (struct.pack("<d", mine64), struct.pack("<f", mine32)) == \
            (int(bits64).to_bytes(8, "little"), int(bits32).to_bytes(4, "little")), name


# ---------------------------------------------------------------- diagnostics that say what to write instead

def only_diagnostic(rustc, source: str):
    """The one diagnostic of `source`, which rustc accepts: valid Rust that kernels leave out."""
    rustc.assert_accepts(source)
    _, sink = lower_text(source)
    assert len(sink.items) == 1, [f"{d.span.line}:{d.span.col} {d.code} {d.message}" for d in sink.items]
    return sink.items[0]


def test_vec_new_says_kernels_cannot_allocate_and_what_to_write(rustc):
    diag = only_diagnostic(rustc, """
#[kernel]
pub fn k(a: &mut [f64]) {
    for i in 0..a.len() {
        let mut v = Vec::new();
        v.push(1.0);
        a[i] = v[0];
    }
}
""")
    assert (diag.code, diag.span.line, diag.span.col) == ("RG0002", 5, 21)
    assert "heap" in diag.message and "cannot find" not in diag.message
    assert "`&mut [T]` parameter" in diag.help and "fixed-size array" in diag.help


def test_an_iterator_adapter_outside_a_for_loop_names_the_loops_that_are_accepted(rustc):
    diag = only_diagnostic(rustc, """
#[kernel]
pub fn k(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        let s: f64 = a.iter().map(|x| x * 2.0).sum();
        out[i] = s;
    }
}
""")
    assert (diag.code, diag.span.line, diag.span.col) == ("RG0007", 5, 24)
    assert "`for` loop" in diag.help and "`.iter()`" in diag.help and "`.zip(..)`" in diag.help


def test_a_mut_scalar_kernel_parameter_gives_one_diagnostic(rustc):
    diag = only_diagnostic(rustc, """
#[kernel]
pub fn k(a: &mut [f64], n: &mut u64) {
    for i in 0..a.len() {
        a[i] = 1.0;
    }
    *n += 1;
}
""")
    assert (diag.code, diag.span.line, diag.span.col) == ("RG0013", 3, 25)
    assert "return it (`-> u64`)" in diag.help
