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
