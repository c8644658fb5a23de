"""Inputs the fuzz tests found that crashed rs2gpu or made it disagree with rustc, reduced by hand.

Each test states what rs2gpu answers now; where rustc is installed, the rustc verdict on the same
source is checked too, so that the expectation is rustc's and not just today's output.
"""
from __future__ import annotations

import shutil

import pytest

from rs2gpu.ir.diagnostics import CompileFailed, Diagnostic, render
from rs2gpu.pipeline import translate

from tests.support.fuzzing import FILE_NAME, assert_translates_or_diagnoses, check_diagnostic, rustc_errors

needs_rustc = pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")


def kernel(body: str, params: str = "out: &mut [f64], x: f64, n: i32") -> str:
    return f"#[kernel]\npub fn k({params}) {{\n    for i in 0..out.len() {{\n        {body}\n    }}\n}}\n"


def first_error(source: str) -> Diagnostic:
    result = assert_translates_or_diagnoses(source)
    assert isinstance(result, CompileFailed), "rs2gpu accepts the source"
    return next(d for d in result.diagnostics if d.severity == "error")


def assert_accepted(source: str) -> None:
    result = assert_translates_or_diagnoses(source)
    assert not isinstance(result, CompileFailed), str(result)


# ---------------------------------------------------------------- unary operators

def test_not_of_a_for_loop_is_a_type_error() -> None:
    """A token mutation of the corpus: `{!for ...}` made `!` apply to `()`, which the frontend let
    through to the IR (the validator caught it)."""
    source = "#[kernel]\npub fn k(a: &mut [f64]) {!for i in 0..a.len() { a[i] = 1.0; }}\n"
    d = first_error(source)
    assert (d.code, d.span.line, d.span.col) == ("RG0005", 2, 26)
    assert d.message == "cannot apply unary operator `!` to type `()`"


def test_not_of_unit_in_a_let() -> None:
    d = first_error(kernel("let y = !(); out[i] = 1.0;"))
    assert (d.code, d.message) == ("RG0005", "cannot apply unary operator `!` to type `()`")


def test_negating_a_variable_that_inference_makes_unsigned() -> None:
    """`z` is `{integer}` when `-z` is lowered; only `let w: u32` makes it u32 (rustc: E0277/E0600)."""
    d = first_error(kernel("let z = 5; let w: u32 = -z; out[i] = w as f64;"))
    assert (d.code, d.message) == ("RG0005", "cannot apply unary operator `-` to type `u32`")
    assert (d.span.line, d.span.col) == (4, 33)


# ---------------------------------------------------------------- array lengths

@pytest.mark.parametrize("length", ["1 / 0", "1 % 0", "1 - 2", "usize::MAX + 1", "1 << 64", "2 * (1 << 63)"])
def test_array_length_that_panics_or_overflows(length: str) -> None:
    """`[1.0; 1 / 0]` raised NotConstant out of the frontend (a traceback); `[1.0; 1 - 2]` wrapped to
    an array of 2^64 - 1 elements. rustc: E0080 for both."""
    d = first_error(kernel(f"out[i] = [1.0; {length}][0];"))
    assert (d.code, d.message) == ("RG0003", "this array length is not a constant integer")


def test_array_length_arithmetic_that_fits_is_fine() -> None:
    assert_accepted(kernel("out[i] = [1.0; (1u8 << 7) as usize - 120][6];"))


# ---------------------------------------------------------------- literals typed by a cast

CASTS = {
    # rustc gives an unsuffixed literal the type it is cast to, through (), -, ! and block tails...
    "300 as u8": "RG0012",
    "(-32768) as i8": "RG0012",
    "-1 as u32": "RG0005",
    "(-(5)) as u8": "RG0005",
    "{ let z = 1; 300 } as u8": "RG0012",
    "4000000000 as u64": None,
    "{ 3000000000 } as u64": None,
    "(!0xffffffffff) as u64": None,
    "1e40 as f32": "RG0012",
    # ...but not through operators, `if` or `match`: there the literal is i32 (or f64) as usual.
    "(if x > 1.0 { 300 } else { 1 }) as u8": None,
    "(match n { 0 => 300, _ => 1 }) as u8": None,
    "(1 << 31) as u64": None,
    "(300) as f32": None,
    "2.5 as u8": None,
}


@pytest.mark.parametrize("cast", list(CASTS))
def test_literal_typed_by_a_cast(cast: str) -> None:
    source = kernel(f"out[i] = ({cast}) as f64;")
    expected = CASTS[cast]
    if expected is None:
        assert_accepted(source)
    else:
        assert first_error(source).code == expected


@needs_rustc
def test_literals_typed_by_a_cast_agree_with_rustc(tmp_path) -> None:
    for cast, expected in CASTS.items():
        errors = rustc_errors(kernel(f"out[i] = ({cast}) as f64;"), tmp_path)
        assert (errors is None) == (expected is None), f"{cast}: {errors}"


def test_float_literal_cast_to_f32_is_rounded_once() -> None:
    """`1.00000005960464477550 as f32` is an f32 literal in rustc (1.0000001); read as f64 first and
    then narrowed it became exactly 1.0 (double rounding). The emitted C++ keeps the decimal text."""
    from rs2gpu.checker import check_crate
    from rs2gpu.emit import emit_crate
    from rs2gpu.frontend import lower_text

    crate, sink = lower_text(kernel("out[i] = 1.00000005960464477550 as f32;", "out: &mut [f32]"))
    assert not sink.items
    checked, _ = check_crate(crate)
    text = emit_crate(checked, ("cuda",), "0").files["k.cu"]
    assert "1.00000005960464477550f" in text


# ---------------------------------------------------------------- files and rendering

def test_file_that_is_not_utf8(tmp_path) -> None:
    """A byte that is not UTF-8 raised UnicodeDecodeError out of `rs2gpu check` (an internal error)."""
    path = tmp_path / "lib.rs"
    path.write_bytes(b"#[kernel]\npub fn k(a: &mut [f64]) { // \xff\xfe\n}\n")
    with pytest.raises(CompileFailed) as failed:
        translate(path)
    [d] = failed.value.diagnostics
    assert (d.code, d.message, d.span.line, d.span.col) == ("RG0001", "the file is not valid UTF-8", 2, 30)
    assert "2 | pub fn k(a: &mut [f64]) { // \ufffd\ufffd" in check_diagnostic(d, failed.value.sources)


@pytest.mark.parametrize("separator", ["\x0c", "\r", "\u2028", "\x85", "\x1c"])
def test_excerpt_after_a_character_that_splitlines_breaks_at(separator: str) -> None:
    """The renderer split the source with `str.splitlines`, which also breaks at form feeds, lone CRs,
    U+2028 and others; tree-sitter and rustc count "\\n" only, so the excerpt showed another line."""
    source = (f"// {separator} a comment\n#[kernel]\npub fn k(a: &mut [f64]) {{\n"
              "    for i in 0..a.len() - 1 { a[i] = a[i + 1]; }\n}\n")
    d = first_error(source)
    assert (d.code, d.span.line) == ("RG0103", 4)
    assert "4 |     for i in 0..a.len() - 1 { a[i] = a[i + 1]; }" in render(d, {FILE_NAME: source})


def test_lone_carriage_return() -> None:
    d = first_error("\r0")
    assert (d.code, d.span.line, d.span.col) == ("RG0001", 1, 2)


def test_out_of_range_pattern_in_the_last_arm_of_an_exhaustive_match() -> None:
    """Found while reducing a disagreement: when the arms cover every value, the last arm becomes the
    catch-all and its patterns were dropped before the range check, so `256 =>` on a u8 passed."""
    source = kernel("out[i] = match n { 0..=255 => 1.0, 256 => 2.0 };", "out: &mut [f64], n: u8")
    d = first_error(source)
    assert (d.code, d.message, d.span.line) == ("RG0012", "literal out of range for `u8`", 4)


# ---------------------------------------------------------------- known disagreements with rustc

# Sources rs2gpu accepts and rustc rejects (or the reverse), found by the fuzz tests and kept here as a
# record: each test asserts rustc's verdict and is expected to fail until rs2gpu follows it.
KNOWN_DISAGREEMENTS = {
    # rustc's deny-by-default MIR lints (arithmetic_overflow, unconditional_panic): rs2gpu translates
    # these and the kernel panics at run time instead.
    "constant overflow": kernel("out[i] = (u8::MAX + 1) as f64;"),
    "negated MIN": kernel("out[i] = (-i32::MIN) as f64;"),
    "division by a literal zero": kernel("out[i] = (n / 0) as f64;"),
    "constant index past an array": kernel("out[i] = t[4];", "out: &mut [f64], t: &[f64; 4]"),
    # a `const` item whose arithmetic overflows (E0080): only array lengths and patterns are evaluated
    "overflowing const item": "const X: u8 = 200 + 100;\n" + kernel("out[i] = X as f64;"),
    # `is_power_of_two` exists for unsigned integers only (E0599)
    "is_power_of_two on i32": kernel("out[i] = n.is_power_of_two() as i32 as f64;"),
    # `min(a, b)` needs `use std::cmp::min;` (E0425)
    "min without use": kernel("out[i] = min(n, 3) as f64;"),
    # rustc reads `u8 <` as the start of generic arguments; tree-sitter reads a comparison
    "cast before <": kernel("out[i] = (x as u8 < 3) as i32 as f64;"),
}


@needs_rustc
@pytest.mark.xfail(reason="rs2gpu accepts what rustc rejects (see KNOWN_DISAGREEMENTS)", strict=False)
@pytest.mark.parametrize("case", list(KNOWN_DISAGREEMENTS))
def test_known_disagreement_rs2gpu_accepts(tmp_path, case: str) -> None:
    source = KNOWN_DISAGREEMENTS[case]
    assert rustc_errors(source, tmp_path) is not None, "rustc accepts it: not a disagreement any more"
    first_error(source)


@needs_rustc
@pytest.mark.xfail(reason="tree-sitter-rust does not parse an array literal as the end of a `for` range",
                   strict=False)
def test_known_disagreement_array_literal_in_a_for_range(tmp_path) -> None:
    source = kernel("out[i] = 1.0;", "out: &mut [f64], a: usize, b: usize").replace(
        "0..out.len()", "0..[a, b][0]")
    assert rustc_errors(source, tmp_path) is None
    assert_accepted(source)
