"""Ordinary Rust that rustc accepts is accepted in kernels, and what rustc rejects is still rejected:
coercions at call sites, `let`s with a type and returns; `use` declarations; the integer methods of std.
Each verdict is rustc's, checked on the same snippet (the values computed are checked on the device by
tests/gpu/test_ordinary_rust.py)."""
from __future__ import annotations

import pytest

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


def test_a_mut_slice_is_reborrowed_where_a_helper_takes_a_shared_one(rustc):
    assert_both_accept(rustc, REBORROW_AT_CALL)


def test_a_helper_passes_and_returns_its_mut_slice_where_shared_one_is_expected(rustc):
    assert_both_accept(rustc, REBORROW_IN_HELPER)


def test_a_shared_slice_passed_as_mut_is_still_a_mismatch(rustc):
    rustc.assert_rejects(SHARED_AS_MUT, "E0308")
    assert errors(SHARED_AS_MUT) == ["7:14 RG0005 mismatched types"]


# ---------------------------------------------------------------- integer methods, stepped and reversed ranges

INTEGER_METHODS = """
#[kernel]
pub fn k(a: &mut [u32], b: &[i64]) {
    for i in 0..a.len().min(b.len()) {
        let s = a[i].saturating_add(3).saturating_sub(1).saturating_mul(2);
        let r = a[i].rotate_left(5).rotate_right(3);
        let c = a[i].checked_mul(s).unwrap_or(0) + if let Some(d) = r.checked_sub(s) { d } else { 1 };
        let big = b[i].checked_add(1).is_none() || b[i].checked_div(2).is_some();
        a[i] = c ^ big as u32;
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
