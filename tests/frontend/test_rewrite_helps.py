"""A rejection of valid Rust that has one usual rewrite says it in the diagnostic's help line.

The snippets are the shapes of examples/corpus's rejected kernels; rustc accepts each of them.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rs2gpu import pipeline
from rs2gpu.ir.diagnostics import CompileFailed, Diagnostic

STRUCTS = """
#[repr(C)]
#[derive(Clone, Copy)]
pub struct P { pub x: f64, pub y: f64 }
impl P {
    pub fn norm2(self) -> f64 { self.x * self.x + self.y * self.y }
    pub const fn new(x: f64, y: f64) -> P { P { x, y } }
}
"""

# Case -> (kernel source, the code, a part of the help that is the rewrite).
CASES = {
    "closure": ("""
#[kernel]
pub fn k(out: &mut [f64], x: &[f64], a: f64) {
    let f = |v: f64| a * v;
    for i in 0..out.len() { out[i] = f(x[i]); }
}
""", "RG0002", "write a helper `fn` outside the kernel"),
    "if_let": ("""
#[kernel]
pub fn k(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() { out[i] = if let Some(v) = x.get(i + 1) { *v } else { 0.0 }; }
}
""", "RG0002", "`if i < x.len() { x[i] } else { ... }`"),
    "labelled_break": ("""
#[kernel]
pub fn k(out: &mut [u8], m: &[i32], cols: usize) {
    for r in 0..out.len() {
        let mut hit = 0;
        'scan: for c in 0..cols { for d in 0..c { if m[r * cols + c] == m[r * cols + d] { hit = 1; break 'scan; } } }
        out[r] = hit;
    }
}
""", "RG0002", "a `bool` variable that the inner loops test"),
    "struct_let": (STRUCTS + """
#[kernel]
pub fn k(out: &mut [f64], p: &[P]) {
    for i in 0..out.len() { let P { x, y } = p[i]; out[i] = x * y; }
}
""", "RG0002", "`let v = ...;`, then its fields `v.x`"),
    "impl_method": (STRUCTS + """
#[kernel]
pub fn k(out: &mut [f64], p: &[P]) {
    for i in 0..out.len() { out[i] = p[i].norm2(); }
}
""", "RG0007", "a helper function that takes the struct by value, `fn norm2(v: P, ...)`"),
    "associated_function": (STRUCTS + """
#[kernel]
pub fn k(out: &mut [P], p: &[P]) {
    for i in 0..out.len() { out[i] = P::new(p[i].y, p[i].x); }
}
""", "RG0002", "a struct literal `P { ... }`"),
    "iterator_chain": ("""
#[kernel]
pub fn k(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum()
}
""", "RG0007", "become the loop's body (`let mut s = 0.0; for x in a.iter() { s += x; }`)"),
    "is_multiple_of": ("""
#[kernel]
pub fn k(out: &mut [u32], x: &[u32]) {
    for i in 0..out.len() { out[i] = x[i].is_multiple_of(3) as u32; }
}
""", "RG0007", "`x % m == 0`"),
    "bool_reduction": ("""
#[kernel]
pub fn k(x: &[f32]) -> bool {
    let mut ok = true;
    for i in 0..x.len() { ok &= x[i].is_finite(); }
    ok
}
""", "RG0104", "`let mut ok = 1u32; ... ok &= c as u32;`, and return `ok != 0`"),
    "let_after_a_reduction": ("""
#[kernel]
pub fn k(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() { s += x[i]; }
    let mean = s / x.len() as f64;
    let mut v = 0.0;
    for i in 0..x.len() { v += (x[i] - mean) * (x[i] - mean); }
    v
}
""", "RG0107", "return the reduced value, and pass it to a second kernel call"),
}


def first_error(source: str, tmp_path: Path) -> Diagnostic:
    path = tmp_path / "lib.rs"
    path.write_text("use rs2gpu::kernel;\n" + source)
    with pytest.raises(CompileFailed) as failed:
        pipeline.translate(path)
    return failed.value.diagnostics[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejection_help_gives_the_rewrite(name: str, rustc, tmp_path: Path) -> None:
    source, code, rewrite = CASES[name]
    rustc.assert_accepts(source)
    diag = first_error(source, tmp_path)
    assert diag.code == code, diag
    assert rewrite in diag.help, diag.help
