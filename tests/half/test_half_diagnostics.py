"""What the frontend refuses of the half types, each with one error at its place: what rustc refuses too
(`as` on them, bit operations, a float literal where a half value is needed, the types without a `use`),
and the valid Rust the kernel language leaves out (a reduction into a half variable)."""
from __future__ import annotations

import pytest

from rs2gpu import pipeline
from rs2gpu.frontend import lower_text
from rs2gpu.ir.diagnostics import CompileFailed

HEADER = "use rs2gpu::{bf16, f16, kernel};\n"

CASES = {
    "as_from_half": ("""
#[kernel]
pub fn k(out: &mut [f32], a: &[f16]) {
    for i in 0..out.len() {
        out[i] = a[i] as f32;
    }
}
""", 5, 18, "RG0005", "casting `f16` as `f32` is invalid", "`.to_f32()`"),
    "as_to_half": ("""
#[kernel]
pub fn k(out: &mut [bf16], a: &[f32]) {
    for i in 0..out.len() {
        out[i] = a[i] as bf16;
    }
}
""", 5, 18, "RG0005", "casting `f32` as `bf16` is invalid", "`bf16::from_f32`"),
    "bit_operation": ("""
#[kernel]
pub fn k(out: &mut [f16], a: &[f16]) {
    for i in 0..out.len() {
        out[i] = a[i] & a[i];
    }
}
""", 5, 18, "RG0005", "no implementation for `f16 & f16`", ""),
    "unknown_constructor": ("""
#[kernel]
pub fn k(out: &mut [f16]) {
    for i in 0..out.len() {
        out[i] = f16::new();
    }
}
""", 5, 18, "RG0007", "no function `f16::new` in kernels", "`f16::from_f32`"),
}


@pytest.mark.parametrize("name", CASES)
def test_refused_with_one_error_at_its_place(name) -> None:
    source, line, col, code, message, help_part = CASES[name]
    _, sink = lower_text(HEADER + source)
    assert len(sink.items) == 1, [f"{d.span.line}:{d.span.col} {d.code} {d.message}" for d in sink.items]
    diag = sink.items[0]
    assert (diag.span.line - 1, diag.span.col, diag.code) == (line, col, code), diag
    assert message in diag.message and help_part in (diag.help or ""), diag


def test_without_a_use_of_a_crate_that_has_them_the_names_are_unknown() -> None:
    _, sink = lower_text("use rs2gpu::kernel;\n#[kernel]\npub fn k(a: &mut [f16]) {\n    a[0] = a[1];\n}\n")
    assert [(d.code, d.message) for d in sink.items] == [("RG0004", "cannot find type `f16` in this crate")]


def test_a_crate_struct_of_that_name_stays_the_struct() -> None:
    source = ("use rs2gpu::kernel;\n#[repr(C)]\n#[derive(Clone, Copy)]\npub struct f16 { bits: u16 }\n"
              "#[kernel]\npub fn k(a: &mut [f16]) {\n    for i in 0..a.len() {\n        a[i].bits = 1;\n    }\n}\n")
    crate, sink = lower_text(source)
    assert sink.items == []


def test_a_reduction_into_a_half_variable_is_refused(tmp_path) -> None:
    """The GPU would reassociate it, which changes a half sum's bits: accumulate in f32 instead."""
    path = tmp_path / "lib.rs"
    path.write_text(HEADER + """
#[kernel]
pub fn k(a: &[f16]) -> f16 {
    let mut s = f16::ZERO;
    for i in 0..a.len() {
        s += a[i];
    }
    s
}
""")
    with pytest.raises(CompileFailed) as failed:
        pipeline.check(path)
    diagnostics = failed.value.diagnostics
    assert [(d.code, d.span.line, d.span.col) for d in diagnostics] == [("RG0104", 7, 9)]
    assert "cannot reduce a `f16` with `+`" in diagnostics[0].message
