"""Diagnostics of the frontend: each rejected construct gives one error, with its code, at its place.

Constructs the kernel language leaves out are valid Rust, so rustc must accept those snippets; errors
in the Rust itself must be rustc's errors too, and the test names rustc's code for each.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from rs2gpu.frontend import lower_text
from rs2gpu.ir.diagnostics import Diagnostic

from tests.support.source_positions import locate


def only_error(source: str) -> Diagnostic:
    _, sink = lower_text(source)
    assert len(sink.items) == 1, [f"{d.span.line}:{d.span.col} {d.code} {d.message}" for d in sink.items]
    diag = sink.items[0]
    assert diag.severity == "error"
    return diag


def assert_error(source: str, line: int, col: int, code: str, message_part: str) -> Diagnostic:
    diag = only_error(source)
    assert (diag.span.line, diag.span.col, diag.code) == (line, col, code), diag
    assert message_part in diag.message, diag.message
    return diag


# ---------------------------------------------------------------- valid Rust that kernels leave out

UNSUPPORTED = {
    "closure": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let double = |x: f64| x * 2.0;
    a[0] = double(a[0]);
}
""", 4, 18, "a closure"),
    "println_macro": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    println!("{}", a[0]);
}
""", 4, 5, "the macro `println!`"),
    "unsafe_block": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    unsafe { a[0] = 1.0; }
}
""", 4, 5, "an `unsafe` block"),
    "while_let": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let mut n = 0;
    while let 0..=9 = n {
        n += 1;
    }
    a[0] = n as f64;
}
""", 5, 11, "`while let`"),
    "if_let": ("""
#[kernel]
pub fn k(a: &mut [f64], n: usize) {
    if let 3 = n {
        a[0] = 1.0;
    }
}
""", 4, 8, "`if let`"),
    "sub_slice": ("""
#[kernel]
pub fn k(a: &mut [f64], b: &[f64]) {
    let tail = &b[1..];
    a[0] = tail[0];
}
""", 4, 19, "sub-slicing"),
    "reversed_iterator": ("""
#[kernel]
pub fn k(a: &mut [f64], b: &[f64]) {
    for (x, y) in a.iter_mut().zip(b.iter().rev()) {
        *x = *y;
    }
}
""", 4, 45, "the iterator method `.rev()`"),
    "iterator_of_a_closure": ("""
#[kernel]
pub fn k(a: &mut [f64], b: &[f64]) {
    for (x, y) in a.iter_mut().zip(b.iter().map(|v| v * 2.0)) {
        *x = y;
    }
}
""", 4, 45, "the iterator method `.map()`"),
    "taking_a_reference": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let r = &a[0];
    a[1] = *r;
}
""", 4, 13, "taking a reference"),
    "binding_pattern": ("""
#[kernel]
pub fn k(a: &mut [i32]) {
    a[0] = match a[1] {
        0 => 1,
        other => other * 2,
    };
}
""", 6, 9, "a binding pattern"),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_construct_is_named_at_its_position(name: str, rustc) -> None:
    source, line, col, what = UNSUPPORTED[name]
    rustc.assert_accepts(source)
    diag = assert_error(source, line, col, "RG0002", what)
    assert diag.message.endswith("is not supported in kernels")


def test_struct_without_repr_c_is_reported_at_its_name(rustc) -> None:
    source = """
#[derive(Clone, Copy)]
pub struct Point {
    x: f32,
    y: f32,
}

#[kernel]
pub fn k(a: &mut [f32], p: Point) {
    a[0] = p.x + p.y;
}
"""
    rustc.assert_accepts(source)
    diag = assert_error(source, 3, 12, "RG0009", "struct `Point` is not `#[repr(C)]`")
    assert "#[repr(C)]" in diag.help


def test_struct_without_repr_c_used_by_two_kernels_is_reported_once() -> None:
    assert_error("""
pub struct Pair {
    a: f64,
}

#[kernel]
pub fn first(out: &mut [f64], p: &Pair) {
    out[0] = p.a;
}

#[kernel]
pub fn second(out: &mut [f64], p: &Pair) {
    out[0] = p.a;
}
""", 2, 12, "RG0009", "`Pair`")


def test_unknown_kernel_option_is_an_error() -> None:
    assert_error("""
#[kernel(fastest)]
pub fn k(a: &mut [f64]) {
    a[0] = 1.0;
}
""", 2, 1, "RG0002", "unknown kernel option `fastest`")


def test_instantiation_with_a_type_the_crate_lacks_names_the_type(rustc) -> None:
    source = """
#[kernel(types(String))]
pub fn copy<T: Copy>(out: &mut [T], x: &[T]) {
    for i in 0..out.len() {
        out[i] = x[i];
    }
}
"""
    rustc.assert_accepts(source)  # the attribute is rs2gpu's: rustc never instantiates the kernel
    assert_error(source, 2, 16, "RG0004", "cannot find type `String` in this crate")


def test_instantiation_named_like_another_kernel_is_a_name_clash(rustc) -> None:
    source = """
#[kernel(types(f32))]
pub fn copy<T: Copy>(out: &mut [T], x: &[T]) {
    for i in 0..out.len() {
        out[i] = x[i];
    }
}

#[kernel]
pub fn copy_f32(out: &mut [f32], x: &[f32]) {
    for i in 0..out.len() {
        out[i] = x[i] * 2.0;
    }
}
"""
    rustc.assert_accepts(source)
    diag = assert_error(source, 3, 8, "RG0010", "`copy::<f32>` and the fn `copy_f32` would have one name")
    assert diag.help == "rename the fn `copy_f32`"


# ---------------------------------------------------------------- errors in the Rust itself

RUST_ERRORS = {
    "method_on_ambiguous_float": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let x = 2.0;
    a[0] = x.sqrt();
}
""", 5, 14, "RG0006", "can't call method `sqrt` on ambiguous numeric type `{float}`", "E0689"),
    "mismatched_types": ("""
#[kernel]
pub fn k(a: &mut [f32]) {
    let x: f32 = 1.0f64;
    a[0] = x;
}
""", 4, 18, "RG0005", "mismatched types", "E0308"),
    "assignment_to_immutable": ("""
#[kernel]
pub fn k(a: &mut [i32]) {
    let x = 1;
    x = 2;
    a[0] = x;
}
""", 5, 5, "RG0008", "cannot assign twice to immutable variable `x`", "E0384"),
    "write_through_shared_slice": ("""
#[kernel]
pub fn k(a: &[f64]) {
    a[0] = 1.0;
}
""", 4, 5, "RG0008", "cannot assign through `&[f64]`", "E0594"),
    "compound_write_through_shared_slice": ("""
#[kernel]
pub fn k(a: &[f64]) {
    a[0] += 1.0;
}
""", 4, 5, "RG0008", "cannot assign through `&[f64]`", "E0594"),
    "tail_of_the_wrong_type_before_a_comment": ("""
#[kernel]
pub fn k(a: &[f64]) -> f32 {
    a[0] // the first element
}
""", 4, 5, "RG0005", "mismatched types", "E0308"),
    "unknown_function": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    a[0] = missing(a[1]);
}
""", 4, 12, "RG0004", "cannot find function `missing`", "E0425"),
    "unknown_variable": ("""
#[kernel]
pub fn k(a: &mut [f64]) {
    a[0] = b;
}
""", 4, 12, "RG0004", "cannot find value `b`", "E0425"),
    "integer_literal_out_of_range": ("""
#[kernel]
pub fn k(a: &mut [u8]) {
    a[0] = 256;
}
""", 4, 12, "RG0012", "literal out of range for `u8`", "error"),
    "negated_unsigned_literal": ("""
#[kernel]
pub fn k(a: &mut [u32]) {
    a[0] = -1;
}
""", 4, 12, "RG0005", "cannot apply unary operator `-` to type `u32`", "E0600"),
    "float_literal_out_of_range": ("""
#[kernel]
pub fn k(a: &mut [f32]) {
    a[0] = 1e39;
}
""", 4, 12, "RG0012", "literal out of range for `f32`", "error"),
    "wrong_number_of_arguments": ("""
fn add(x: f64, y: f64) -> f64 {
    x + y
}

#[kernel]
pub fn k(a: &mut [f64]) {
    a[0] = add(a[0]);
}
""", 8, 12, "RG0011", "takes 2 argument(s) but 1 were supplied", "E0061"),
    "non_exhaustive_match": ("""
#[kernel]
pub fn k(a: &mut [i32]) {
    a[0] = match a[1] {
        0 => 1,
    };
}
""", 4, 18, "RG0005", "non-exhaustive patterns", "E0004"),
    "break_outside_loop": ("""
#[kernel]
pub fn k(a: &mut [i32]) {
    a[0] = 1;
    break;
}
""", 5, 5, "RG0005", "`break` outside of a loop", "E0268"),
    "const_cycle": ("""
const A: i32 = B;
const B: i32 = A + 1;

#[kernel]
pub fn k(a: &mut [i32]) {
    a[0] = A;
}
""", 2, 7, "RG0003", "cycle detected when evaluating constant `A`", "E0391"),
}


@pytest.mark.parametrize("name", sorted(RUST_ERRORS))
def test_rust_error_is_reported_like_rustc(name: str, rustc) -> None:
    source, line, col, code, message, rustc_code = RUST_ERRORS[name]
    rustc.assert_rejects(source, rustc_code)
    assert_error(source, line, col, code, message)


def test_mismatched_types_label_names_both_types() -> None:
    diag = only_error("""
#[kernel]
pub fn k(a: &mut [f32]) {
    a[0] = 1.0f64;
}
""")
    assert diag.code == "RG0005"
    assert diag.label == "expected `f32`, found `f64`"


UNPAIRED_DELIMITERS = {
    # name: (source, rustc's message, the delimiter rustc labels "unclosed delimiter", if one, inside a context)
    "closing_brace_missing_at_the_end": ("""
#[kernel]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], alpha: f64) {
    for i in 0..a.len() {
        a[i] = b[i] + alpha * c[i];

}

#[kernel]
pub fn other(a: &mut [f64]) {
    for i in 0..a.len() {
        a[i] = 1.0;
    }
}
""", "this file contains an unclosed delimiter", ("alpha: f64) {", "{")),
    "no_newline_at_the_end": ("pub fn f() -> i32 {\n    1", "this file contains an unclosed delimiter", ("i32 {", "{")),
    "blank_lines_at_the_end": ("pub fn f() -> i32 {\n    1\n\n\n", "this file contains an unclosed delimiter",
                               ("i32 {", "{")),
    "delimiters_in_strings_comments_and_characters": ("""
pub fn f(x: &'static str) -> usize {
    let c = b'{'; let e = '\\''; let r = r#"{"#; let s = "}\\"{";
    /* { /* } */ { */ // }
    'outer: loop { break 'outer; }
    c as usize + x.len() + r.len() + s.len() + e as usize
""", "this file contains an unclosed delimiter", ("usize {", "{")),
    "closing_brace_too_many": ("pub fn f() -> i32 {\n    1\n}\n}\n", "unexpected closing delimiter: `}`", None),
    "mismatched_bracket": ("pub fn f() -> i32 {\n    let a = (1, 2];\n    a.0\n}\n",
                           "mismatched closing delimiter: `]`", ("(1, 2]", "(")),
}


def rustc_error(rustc, source: str) -> tuple[str, int, int, int | None]:
    """rustc's message for `source` (written as it is), the line and column it points at, and the line of
    its "unclosed delimiter" label."""
    path = rustc.folder / f"delimiters{len(source)}.rs"
    path.write_text(source, encoding="utf-8")
    result = subprocess.run([rustc.exe, "--edition", "2021", "--crate-type", "lib", "--emit=metadata",
                             "-o", str(path.with_suffix(".rmeta")), str(path)], capture_output=True, text=True)
    message = re.search(r"^error: (.*)$", result.stderr, re.M).group(1)
    line, col = map(int, re.search(r"--> .*:(\d+):(\d+)$", result.stderr, re.M).groups())
    lines = result.stderr.splitlines()
    label = next((k for k, text in enumerate(lines) if "|" in text and text.endswith("unclosed delimiter")), None)
    if label is None:
        return message, line, col, None
    while not re.match(r"^\s*\d+ \|", lines[label]):  # up from the label to the source line it marks
        label -= 1
    return message, line, col, int(lines[label].split("|")[0])


@pytest.mark.parametrize("name", sorted(UNPAIRED_DELIMITERS))
def test_delimiters_that_do_not_pair_are_reported_where_rustc_reports_them(name: str, rustc) -> None:
    source, message, unclosed = UNPAIRED_DELIMITERS[name]
    rustc_message, line, col, label_line = rustc_error(rustc, source)
    assert rustc_message == message
    diag = only_error(source)
    assert (diag.code, diag.message, diag.span.line, diag.span.col) == ("RG0001", message, line, col)
    if unclosed is None:
        assert label_line is None
        return
    at = locate(source, *unclosed)
    assert label_line == at[0]
    marked = [(diag.span.line, diag.span.col)] if diag.label == "unclosed delimiter" else []
    marked += [(n.span.line, n.span.col) for n in diag.notes if n.message == "unclosed delimiter"]
    assert marked == [at]


def test_syntax_error_is_reported_before_anything_else() -> None:
    diag = assert_error("""
#[kernel]
pub fn k(a: &mut [f64]) {
    a[0] = 1.0 +;
}
""", 4, 16, "RG0001", "syntax error")
    assert "valid Rust" in diag.help


def test_diagnostic_renders_like_rustc() -> None:
    source = "#[kernel]\npub fn k(a: &[f64]) {\n    a[0] = 1.0;\n}\n"
    _, sink = lower_text(source)
    rendered = sink.items[0].render({"src/lib.rs": source})
    assert rendered.splitlines()[:5] == [
        "error[RG0008]: cannot assign through `&[f64]`",
        " --> src/lib.rs:3:5",
        "  |",
        "3 |     a[0] = 1.0;",
        "  |     ^^^^ this data is behind a shared reference",
    ]


# ---------------------------------------------------------------- recursion: valid Rust, too deep for a GPU stack

RECURSIVE = {
    # name: (source, the call that closes the cycle, inside this unambiguous piece, the message)
    "direct": ("""
fn fact(n: u64) -> u64 {
    if n == 0 { 1 } else { n * fact(n - 1) }
}

#[kernel]
pub fn facts(a: &mut [u64]) {
    for i in 0..a.len() {
        a[i] = fact(i as u64);
    }
}
""", "fact(n - 1)", None, "recursive helper `fact` calls itself"),
    "mutual": ("""
fn is_even(n: u64) -> bool {
    if n == 0 { true } else { is_odd(n - 1) }
}

fn is_odd(n: u64) -> bool {
    if n == 0 { false } else { is_even(n - 1) }
}

#[kernel]
pub fn parity(a: &mut [bool]) {
    for i in 0..a.len() {
        a[i] = is_even(i as u64);
    }
}
""", "is_even(n - 1)", None, "recursive helpers `is_even` and `is_odd` call each other"),
    "through_three_helpers": ("""
fn a(n: u32) -> u32 {
    if n == 0 { 0 } else { b(n - 1) }
}

fn b(n: u32) -> u32 {
    c(n) + 1
}

fn c(n: u32) -> u32 {
    a(n)
}

#[kernel]
pub fn k(out: &mut [u32]) {
    for i in 0..out.len() {
        out[i] = b(i as u32);
    }
}
""", "b(n - 1)", None, "recursive helpers `b`, `c` and `a` call each other"),  # the kernel calls `b` first
    "generic": ("""
fn depth<T: Copy>(x: T, n: u32) -> u32 {
    if n == 0 { 0 } else { 1 + depth(x, n - 1) }
}

#[kernel]
pub fn depths(a: &mut [u32], b: &[f32]) {
    for i in 0..a.len() {
        a[i] = depth(b[i], i as u32);
    }
}
""", "depth(x, n - 1)", None, "recursive helper `depth` calls itself"),
}


@pytest.mark.parametrize("name", sorted(RECURSIVE))
def test_recursive_helper_is_rejected_at_the_call_that_closes_the_cycle(name: str, rustc) -> None:
    source, at, inside, message = RECURSIVE[name]
    rustc.assert_accepts(source)
    diag = assert_error(source, *locate(source, inside or at, at if inside else None), "RG0016", message)
    assert "loop" in diag.help and "stack" in diag.help


def test_mutual_recursion_names_the_cycle_and_where_it_starts() -> None:
    source = RECURSIVE["mutual"][0]
    diag = only_error(source)
    assert diag.label == "this call closes the cycle `is_even` -> `is_odd` -> `is_even`"
    assert [(n.message, n.span.line, n.span.col) for n in diag.notes] == [
        ("`is_even` is defined here", *locate(source, "is_even")),
    ]


def test_recursive_helper_called_by_two_kernels_is_reported_once() -> None:
    source = RECURSIVE["direct"][0] + """
#[kernel]
pub fn more_facts(a: &mut [u64]) {
    for i in 0..a.len() {
        a[i] = fact(i as u64) + 1;
    }
}
"""
    assert only_error(source).code == "RG0016"


def test_a_helper_called_from_several_places_without_a_cycle_is_no_recursion(rustc) -> None:
    source = """
fn square(x: u64) -> u64 {
    x * x
}

fn fourth(x: u64) -> u64 {
    square(square(x))
}

fn fact(n: u64) -> u64 {
    let mut f = 1;
    for k in 1..=n {
        f *= k;
    }
    f
}

#[kernel]
pub fn k(a: &mut [u64]) {
    for i in 0..a.len() {
        a[i] = fourth(i as u64) + square(i as u64) + fact(i as u64);
    }
}
"""
    rustc.assert_accepts(source)
    _, sink = lower_text(source)
    assert sink.items == []


# ---------------------------------------------------------------- names

DUPLICATE_HELPERS = """
mod cpu {
    pub fn helper() -> i32 {
        1
    }
}

mod gpu {
    pub fn helper() -> i32 {
        2
    }
}

#[kernel]
pub fn k(a: &mut [i32]) {
    a[0] = BODY;
}
"""


def test_same_name_in_two_modules_is_fine_while_kernels_do_not_use_it(rustc) -> None:
    source = DUPLICATE_HELPERS.replace("BODY", "1")
    rustc.assert_accepts(source)
    _, sink = lower_text(source)
    assert sink.items == []


def test_same_name_in_two_modules_is_an_error_once_a_kernel_uses_it(rustc) -> None:
    source = DUPLICATE_HELPERS.replace("BODY", "gpu::helper()")
    rustc.assert_accepts(source)
    diag = assert_error(source, 9, 12, "RG0010", "the name `helper` is defined multiple times")
    assert [(n.message, n.span.line) for n in diag.notes] == [("previous definition here", 3)]


def test_let_without_initializer_may_be_assigned_once_later(rustc) -> None:
    source = """
#[kernel]
pub fn k(a: &mut [f64], c: bool) {
    let x;
    if c { x = 1.0; } else { x = 2.0; }
    a[0] = x;
}
"""
    rustc.assert_accepts(source)
    _, sink = lower_text(source)
    assert sink.items == []


def test_compound_assignment_to_immutable_variable_is_an_error(rustc) -> None:
    source = """
#[kernel]
pub fn k(a: &mut [f64]) {
    let x = 1.0;
    x += 2.0;
    a[0] = x;
}
"""
    rustc.assert_rejects(source, "E0384")
    assert_error(source, 5, 5, "RG0008", "cannot assign twice to immutable variable `x`")
