"""The race checker: every kernel below is valid Rust, and either could race on a GPU (and is rejected with
exactly the diagnostics listed, at the offending write or read) or provably cannot (and passes).

Expected positions are found in each case's own source text, so a case states only *what* is wrong and
*where*, never a line number copied from the checker's output.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass

import pytest

from rs2gpu import pipeline
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.diagnostics import CompileFailed

from tests.support.paths import CASES
from tests.support.source_positions import locate


@dataclass(frozen=True)
class Expected:
    code: str
    message: str  # a fragment of the diagnostic's message
    at: str  # the source text the diagnostic points at ...
    inside: str | None = None  # ... found inside this larger, unambiguous piece of the source


@dataclass(frozen=True)
class Racy:
    id: str
    source: str
    expected: tuple[Expected, ...]


RACY = [
    Racy("in_place_shift_reads_the_next_element", """
#[kernel]
pub fn shift(a: &mut [f64]) {
    for i in 0..a.len() - 1 {
        a[i] = a[i + 1];
    }
}
""", (Expected("RG0103", "reads an element of `a` that another iteration may write", "a[i + 1]"),)),

    Racy("constant_write_index", """
#[kernel]
pub fn first(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[0] = b[i];
    }
}
""", (Expected("RG0101", "every iteration writes the same element of `a`", "a[0] = b[i]"),)),

    Racy("index_divided_by_two", """
#[kernel]
pub fn halve(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i / 2] = b[i];
    }
}
""", (Expected("RG0102", "cannot prove that iterations of this loop write distinct elements of `a`", "a[i / 2]"),)),

    Racy("index_modulo_four", """
#[kernel]
pub fn wrap(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i % 4] = b[i];
    }
}
""", (Expected("RG0102", "write distinct elements of `a`", "a[i % 4]"),)),

    Racy("index_squared", """
#[kernel]
pub fn squares(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i * i] = b[i];
    }
}
""", (Expected("RG0102", "write distinct elements of `a`", "a[i * i]"),)),

    Racy("index_computed_from_another_slice", """
#[kernel]
pub fn halve_scatter(a: &mut [f64], idx: &[usize], b: &[f64]) {
    for i in 0..b.len() {
        a[idx[i] / 2] = b[i];
    }
}
""", (Expected("RG0102", "write distinct elements of `a`", "a[idx[i] / 2]"),)),

    Racy("index_list_written_by_the_same_loop", """
#[kernel]
pub fn scatter_and_clear(a: &mut [f64], idx: &mut [usize], b: &[f64]) {
    for i in 0..b.len() {
        a[idx[i]] = b[i];
        idx[i] = 0;
    }
}
""", (Expected("RG0102", "write distinct elements of `a`", "a[idx[i]] = b[i]"),)),

    Racy("scalar_carried_to_the_next_iteration", """
#[kernel]
pub fn delay(a: &mut [f64], b: &[f64]) {
    let mut prev = 0.0;
    for i in 0..a.len() {
        a[i] = prev;
        prev = b[i];
    }
}
""", (Expected("RG0104", "`prev` is assigned in a parallel loop but not as a reduction", "prev = b[i]"),)),

    Racy("writes_at_i_and_i_plus_one_overlap", """
#[kernel]
pub fn pairs(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() - 1 {
        a[i] = b[i];
        a[i + 1] = b[i];
    }
}
""", (Expected("RG0105", "iteration `i` and iteration `i + 1` write the same element of `a`", "a[i + 1] = b[i]"),)),

    Racy("writes_at_2i_and_2i_plus_two_overlap", """
#[kernel]
pub fn stride_two(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[2 * i] = b[i];
        a[2 * i + 2] = b[i];
    }
}
""", (Expected("RG0105", "iteration `i` and iteration `i + 1` write the same element of `a`", "a[2 * i + 2]"),)),

    Racy("read_of_the_written_slice_at_i_minus_one", """
#[kernel]
pub fn prefix(a: &mut [f64], b: &[f64]) {
    for i in 1..a.len() {
        a[i] = a[i - 1] + b[i];
    }
}
""", (Expected("RG0103", "reads an element of `a` that another iteration may write", "a[i - 1]"),)),

    Racy("index_from_a_let_mut_that_changes", """
#[kernel]
pub fn clamp_negative(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        let mut j = i;
        if b[i] < 0.0 {
            j = 0;
        }
        a[j] = b[i];
    }
}
""", (Expected("RG0102", "write distinct elements of `a`", "a[j] = b[i]"),)),

    Racy("return_inside_a_parallel_loop", """
#[kernel]
pub fn until_negative(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        if b[i] < 0.0 {
            return;
        }
        a[i] = b[i];
    }
}
""", (Expected("RG0108", "`return` inside a parallel loop", "return"),)),

    Racy("break_out_of_a_parallel_loop", """
#[kernel]
pub fn stop_at_negative(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        if b[i] < 0.0 {
            break;
        }
        a[i] = b[i];
    }
}
""", (Expected("RG0108", "`break` out of a parallel loop", "break"),)),

    Racy("reduction_read_inside_its_loop", """
#[kernel]
pub fn running_sum(a: &[f64], out: &mut [f64]) -> f64 {
    let mut sum = 0.0;
    for i in 0..a.len() {
        sum += a[i];
        out[i] = sum;
    }
    sum
}
""", (Expected("RG0104", "`sum` is read inside the parallel loop that reduces it", "sum", "out[i] = sum"),)),

    Racy("plain_assignment_to_an_outer_variable_under_if", """
#[kernel]
pub fn last_positive(a: &[f64]) -> f64 {
    let mut last = 0.0;
    for i in 0..a.len() {
        if a[i] > 0.0 {
            last = a[i];
        }
    }
    last
}
""", (Expected("RG0104", "`last` is assigned in a parallel loop but not as a reduction", "last = a[i]"),)),

    Racy("reduction_combined_with_two_operations", """
#[kernel]
pub fn mixed_ops(a: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i];
        s *= 2.0;
    }
    s
}
""", (Expected("RG0104", "`s` is combined with both `+` and `*`", "s *= 2.0"),)),

    Racy("reduction_update_that_reads_the_accumulator", """
#[kernel]
pub fn compound(a: &[f64]) -> f64 {
    let mut s = 1.0;
    for i in 0..a.len() {
        s += s * a[i];
    }
    s
}
""", (Expected("RG0104", "the update of `s` reads `s` again", "s += s * a[i]"),)),

    Racy("reduction_used_by_a_later_parallel_loop", """
#[kernel]
pub fn normalize(a: &mut [f64], b: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..b.len() {
        total += b[i];
    }
    for j in 0..a.len() {
        a[j] = b[j] / total;
    }
    total
}
""", (Expected("RG0104", "`total` is used in a later parallel loop than the one that reduces it", "for j"),)),

    Racy("statement_outside_any_loop", """
#[kernel]
pub fn seed(a: &mut [f64], b: &[f64]) {
    a[0] = 1.0;
    for i in 1..a.len() {
        a[i] = b[i];
    }
}
""", (Expected("RG0107", "kernels run statements only inside parallel loops", "a[0] = 1.0"),)),

    Racy("loop_bound_read_from_slice_data", """
#[kernel]
pub fn first_n(a: &mut [f64], n: &[usize]) {
    for i in 0..n[0] {
        a[i] = 1.0;
    }
}
""", (Expected("RG0106", "the bounds of a parallel loop must be computable before the launch", "n[0]"),)),

    Racy("written_slice_passed_to_a_helper", """
fn next(a: &mut [f64], i: usize) -> f64 {
    a[(i + 1) % a.len()]
}

#[kernel]
pub fn rotate(a: &mut [f64]) {
    for i in 0..a.len() {
        a[i] = next(a, i);
    }
}
""", (Expected("RG0103", "`a` is passed to a helper function inside a parallel loop while it is written", "a",
               "next(a, i)"),)),

    Racy("mut_slice_passed_to_a_helper_that_may_write_it", """
fn touch(a: &mut [f64], i: usize) -> f64 {
    a[0] = a[i];
    a[0]
}

#[kernel]
pub fn spread(a: &mut [f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = touch(a, i);
    }
}
""", (Expected("RG0103", "`a` is passed to a helper function inside a parallel loop while it is written", "a",
               "touch(a, i)"),)),

    Racy("loop_variable_shadowed_by_a_constant", """
#[kernel]
pub fn shadowed(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        let i = 0;
        a[i] = b[i];
    }
}
""", (Expected("RG0101", "every iteration writes the same element of `a`", "a[i] = b[i]"),)),

    Racy("narrowing_cast_in_the_write_index", """
#[kernel]
pub fn bytes(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[(i as u8) as usize] = b[i];
    }
}
""", (Expected("RG0102", "write distinct elements of `a`", "a[(i as u8) as usize]"),)),

    Racy("struct_field_written_at_a_constant_index", """
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

#[kernel]
pub fn first_x(points: &mut [Point], b: &[f64]) {
    for i in 0..b.len() {
        points[0].x = b[i];
    }
}
""", (Expected("RG0101", "every iteration writes the same element of `points`", "points[0].x = b[i]"),)),

    Racy("signed_stencil_in_place", """
#[kernel]
pub fn smooth(a: &mut [f64]) {
    let n = a.len() as i64;
    for i in 1..n - 1 {
        a[i as usize] = a[(i - 1) as usize] + a[(i + 1) as usize];
    }
}
""", (Expected("RG0103", "reads an element of `a`", "a[(i - 1) as usize]"),
      Expected("RG0103", "reads an element of `a`", "a[(i + 1) as usize]"))),

    Racy("narrow_signed_arithmetic_before_the_cast", """
#[kernel]
pub fn ahead(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() as i32 {
        a[(i + 1) as usize] = b[i as usize];
    }
}
""", (Expected("RG0102", "write distinct elements of `a`", "a[(i + 1) as usize]"),)),

    Racy("iterator_item_written_to_one_element", """
#[kernel]
pub fn last(out: &mut [f64], a: &[f64]) {
    for x in a.iter() {
        out[0] = *x;
    }
}
""", (Expected("RG0101", "every iteration writes the same element of `out`", "out[0] = *x"),)),

    Racy("enumerate_counter_halved_in_the_write", """
#[kernel]
pub fn pairs(out: &mut [f64], a: &[f64]) {
    for (i, x) in a.iter().enumerate() {
        out[i / 2] = *x;
    }
}
""", (Expected("RG0102", "write distinct elements of `out`", "out[i / 2]"),)),

    # The sizes are symbolic, but the row `0..nx + 1` is longer than its stride `nx` whatever `nx` is:
    # iteration (j, nx) writes where (j + 1, 0) does.
    Racy("row_longer_than_its_stride", """
#[kernel]
pub fn rows(out: &mut [f64], nx: usize, ny: usize) {
    for j in 0..ny {
        for i in 0..nx + 1 {
            out[j * nx + i] = 1.0;
        }
    }
}
""", (Expected("RG0102", "iterations of this loop write the same element of `out`", "out[j * nx + i] = 1.0"),)),

    Racy("inclusive_row_longer_than_its_stride", """
#[kernel]
pub fn rows(out: &mut [f64], nx: usize, ny: usize) {
    for j in 0..ny {
        for i in 0..=nx {
            out[j * nx + i] = 1.0;
        }
    }
}
""", (Expected("RG0102", "iterations of this loop write the same element of `out`", "out[j * nx + i] = 1.0"),)),

    Racy("constant_row_longer_than_its_stride", """
#[kernel]
pub fn rows(out: &mut [f64], ny: usize) {
    for j in 0..ny {
        for i in 0..5 {
            out[4 * j + i] = 1.0;
        }
    }
}
""", (Expected("RG0102", "iterations of this loop write the same element of `out`", "out[4 * j + i] = 1.0"),)),

    Racy("two_racy_writes_are_both_reported", """
#[kernel]
pub fn both(a: &mut [f64], c: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[0] = b[i];
        c[i / 3] = b[i];
    }
}
""", (Expected("RG0101", "every iteration writes the same element of `a`", "a[0] = b[i]"),
      Expected("RG0102", "write distinct elements of `c`", "c[i / 3]"))),
]


@pytest.mark.parametrize("case", RACY, ids=lambda case: case.id)
def test_racy_kernel_is_rejected_at_the_offending_access(case: Racy, check_source) -> None:
    with pytest.raises(CompileFailed) as failure:
        check_source(case.source)
    found = [(d.code, d.span.line, d.span.col) for d in failure.value.diagnostics]
    expected = [(e.code, *locate(case.source, e.inside or e.at, e.at if e.inside else None)) for e in case.expected]
    assert found == expected, str(failure.value)
    for diagnostic, e in zip(failure.value.diagnostics, case.expected):
        assert diagnostic.severity == "error"
        assert e.message in diagnostic.message, diagnostic.message
        assert diagnostic.span.file == "lib.rs"


def test_there_are_at_least_fifteen_distinct_racy_patterns() -> None:
    assert len({case.id for case in RACY}) == len(RACY) >= 15


def test_rows_longer_than_their_stride_name_the_stride_and_the_trip_count(check_source) -> None:
    source = next(case.source for case in RACY if case.id == "row_longer_than_its_stride")
    with pytest.raises(CompileFailed) as failure:
        check_source(source)
    [diagnostic] = failure.value.diagnostics
    assert diagnostic.notes[0].message == ("the row stride, the factor of `j`, is `nx`, and `i` takes `nx + 1` "
                                           "values, more than the stride")
    assert "`for i in 0..nx`" in diagnostic.help


# ---------------------------------------------------------------- accepted patterns

SAFE = {
    "own_element": """
#[kernel]
pub fn copy(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        a[i] = b[i];
    }
}
""",
    "constant_offset": """
#[kernel]
pub fn ahead(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() - 3 {
        a[i + 3] = b[i];
    }
}
""",
    "negative_offset_from_one": """
#[kernel]
pub fn behind(a: &mut [f64], b: &[f64]) {
    for i in 1..b.len() {
        a[i - 1] = b[i];
    }
}
""",
    "odd_elements": """
#[kernel]
pub fn odd(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() / 2 {
        a[2 * i + 1] = b[i];
    }
}
""",
    "even_and_odd_elements": """
#[kernel]
pub fn interleave(a: &mut [f64], re: &[f64], im: &[f64]) {
    for i in 0..re.len() {
        a[2 * i] = re[i];
        a[2 * i + 1] = im[i];
    }
}
""",
    "three_writes_at_stride_three": """
#[kernel]
pub fn rgb(out: &mut [u8], r: &[u8], g: &[u8], b: &[u8]) {
    for i in 0..r.len() {
        out[3 * i] = r[i];
        out[3 * i + 1] = g[i];
        out[3 * i + 2] = b[i];
    }
}
""",
    "reversed_index": """
#[kernel]
pub fn reverse(a: &mut [f64], b: &[f64]) {
    let n = a.len();
    for i in 0..n {
        a[n - 1 - i] = b[i];
    }
}
""",
    "read_at_the_written_index": """
#[kernel]
pub fn double(a: &mut [f64]) {
    for i in 0..a.len() {
        a[i] = a[i] * 2.0;
    }
}
""",
    "compound_assignment_at_the_written_index": """
#[kernel]
pub fn add_scalar(a: &mut [f64], x: f64) {
    for i in 0..a.len() {
        a[i] += x;
    }
}
""",
    "index_through_an_immutable_let": """
#[kernel]
pub fn shifted(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() - 1 {
        let j = i + 1;
        a[j] = b[i] + b[j];
    }
}
""",
    "writes_under_if": """
#[kernel]
pub fn relu(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        if b[i] > 0.0 {
            a[i] = b[i];
        } else {
            a[i] = 0.0;
        }
    }
}
""",
    "zip_of_an_output_and_an_input": """
#[kernel]
pub fn double(out: &mut [f64], inp: &[f64]) {
    for (o, x) in out.iter_mut().zip(inp) {
        *o = 2.0 * x;
    }
}
""",
    "enumerate_with_a_read_of_another_slice_at_the_counter": """
#[kernel]
pub fn weigh(out: &mut [f64], w: &[f64], x: &[f64]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = w[i] * x[i + 1];
    }
}
""",
    "signed_index_cast_to_usize": """
#[kernel]
pub fn copy(a: &mut [f64], b: &[f64], n: usize) {
    for i in 0..n as i32 {
        a[i as usize] = b[i as usize];
    }
}
""",
    "signed_stencil_into_another_slice": """
#[kernel]
pub fn smooth(out: &mut [f64], a: &[f64]) {
    let n = a.len() as i64;
    for i in 1..n - 1 {
        out[i as usize] = a[(i - 1) as usize] + a[(i + 1) as usize];
    }
}
""",
    "row_as_long_as_its_stride": """
#[kernel]
pub fn rows(out: &mut [f64], nx: usize, ny: usize) {
    for j in 0..ny {
        for i in 0..nx {
            out[j * nx + i] = 1.0;
        }
    }
}
""",
    "inner_loop_accumulates_into_a_private_local": """
#[kernel]
pub fn row_sums(out: &mut [f64], m: &[f64], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for k in 0..cols {
            s += m[i * cols + k];
        }
        let mut j = 0;
        while j < cols {
            s -= 0.5 * m[i * cols + j];
            j += 1;
        }
        out[i] = s;
    }
}
""",
    "mut_slice_reborrowed_by_a_reading_helper_in_a_loop_that_does_not_write_it": """
fn neighbours(s: &[f64], i: usize) -> f64 {
    s[(i + 1) % s.len()] + s[(i + s.len() - 1) % s.len()]
}

#[kernel]
pub fn smooth(a: &mut [f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = neighbours(a, i);
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(SAFE))
def test_race_free_kernel_passes_without_diagnostics(name: str, check_source) -> None:
    result = check_source(SAFE[name])
    assert len(result.checked.kernels) == 1
    assert result.warnings == []


# ---------------------------------------------------------------- accepted with a check at launch
#
# Some writes are race-free only for some argument values. The checker accepts them and hands the runtime
# conditions `Σ coefficient · Π factors ≥ 0` to verify before launching. Whatever form they take, they
# must hold for arguments where the iterations cannot collide, and fail where they do collide.


def holds(checks, values: dict[str, int]) -> bool:
    """Whether every launch check holds for these argument values (factors named as in Rust)."""

    def factor(e) -> int:
        if isinstance(e, ir.Var):
            return values[e.binding.name]
        if isinstance(e, ir.Intrinsic) and e.name == "len":
            return values[f"{e.args[0].binding.name}.len()"]
        raise AssertionError(f"unexpected factor {e}")

    for check in checks:
        total = 0
        for coefficient, factors in check.terms:
            term = coefficient
            for f in factors:
                term *= factor(f)
            total += term
        if total < 0:
            return False
    return True


LAUNCH_CHECKED = {
    # A stride of 0 makes every iteration write a[0]; any stride >= 1 is injective.
    "symbolic_stride": ("""
#[kernel]
pub fn strided(a: &mut [f64], b: &[f64], w: usize) {
    for i in 0..b.len() {
        a[w * i] = b[i];
    }
}
""", "a[w * i]", [{"w": 1, "b.len()": 8}, {"w": 3, "b.len()": 8}], [{"w": 0, "b.len()": 8}]),
    # a[i + w] is another iteration's a[i'] when 0 < w < b.len(); an offset past the range is safe.
    "second_write_offset_by_a_parameter": ("""
#[kernel]
pub fn offset_pair(a: &mut [f64], b: &[f64], w: usize) {
    for i in 0..b.len() {
        a[i] = b[i];
        a[i + w] = b[i];
    }
}
""", "a[i + w]", [{"w": 8, "b.len()": 8}, {"w": 20, "b.len()": 8}], [{"w": 1, "b.len()": 8}, {"w": 7, "b.len()": 8}]),
    # Rows of `n` elements `w` apart overlap where the stride is shorter than a row: sizes decide.
    "row_of_a_length_unrelated_to_its_stride": ("""
#[kernel]
pub fn rows(out: &mut [f64], w: usize, n: usize, m: usize) {
    for j in 0..m {
        for i in 0..n {
            out[j * w + i] = 1.0;
        }
    }
}
""", "out[j * w + i]", [{"w": 5, "n": 5}, {"w": 6, "n": 5}, {"w": 0, "n": 0}], [{"w": 4, "n": 5}, {"w": 0, "n": 1}]),
    # Iteration i writes a[i] and a[i + 1], iteration i + 1 writes a[i + 1]: any two iterations collide. The
    # writes are in an inner loop, which the checker takes as a condition: the launch decides.
    "inner_loop_writes_overlap_the_next_iteration": ("""
#[kernel]
pub fn smear(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        let x = b[i];
        for k in 0..2 {
            a[i + k] = x;
        }
    }
}
""", "a[i + k]", [], [{"b.len()": 2}, {"b.len()": 100}]),
}


@pytest.mark.parametrize("name", sorted(LAUNCH_CHECKED))
def test_write_that_is_race_free_only_for_some_arguments_gets_a_launch_check(name: str, check_source) -> None:
    source, write, safe, racy = LAUNCH_CHECKED[name]
    [loop] = check_source(source).checked.kernels[0].loops
    assert loop.launch_checks
    assert all((c.span.line, c.span.col) == locate(source, write) for c in loop.launch_checks)
    for values in safe:
        assert holds(loop.launch_checks, values), values
    for values in racy:
        assert not holds(loop.launch_checks, values), values


def test_one_row_longer_than_its_stride_needs_no_check(check_source) -> None:
    # `j` takes one value, so rows of any length never meet
    source = """
#[kernel]
pub fn rows(out: &mut [f64], nx: usize) {
    for j in 0..1 {
        for i in 0..nx + 1 {
            out[j * nx + i] = 1.0;
        }
    }
}
"""
    [loop] = check_source(source).checked.kernels[0].loops
    assert loop.launch_checks == ()


def test_a_const_computed_from_another_const_proves_what_its_value_proves(check_source) -> None:
    # `HALF` is 4: the rows of 8 a head (stride 8) hold the 4 values `i` writes, so the head's stride needs no
    # check; only the token's stride `hidden` against the heads' 8 `heads` remains, for the host
    source = """
const WIDTH: usize = 8;
const HALF: usize = WIDTH / 2;

#[kernel]
pub fn halves(out: &mut [f64], hidden: usize, tokens: usize, heads: usize) {
    for t in 0..tokens {
        for h in 0..heads {
            for i in 0..HALF {
                out[t * hidden + h * WIDTH + i] = 1.0;
            }
        }
    }
}
"""
    [loop] = check_source(source).checked.kernels[0].loops
    [check] = loop.launch_checks
    for values in ({"hidden": 16, "tokens": 64, "heads": 2}, {"hidden": 12, "tokens": 64, "heads": 2}):
        assert holds([check], values), values  # rows of 12 hold 2 heads' writes: 8 + 4
    assert not holds([check], {"hidden": 11, "tokens": 64, "heads": 2})


def test_two_writes_half_a_row_apart_in_a_nest_of_half_rows_are_race_free(check_source) -> None:
    # out[at] and out[at + 4] with `i` in 0..4 fill each row of 8 once: `at + 4 * w` for w in 0..2 is the
    # row-major index of (t, h, w, i); the host compares the stride `hidden` with the heads' rows
    source = """
#[kernel]
pub fn halves(out: &mut [f64], hidden: usize, tokens: usize, heads: usize) {
    for t in 0..tokens {
        for h in 0..heads {
            for i in 0..4 {
                let at = t * hidden + h * 8 + i;
                out[at] = 1.0;
                out[at + 4] = 2.0;
            }
        }
    }
}
"""
    [loop] = check_source(source).checked.kernels[0].loops
    assert holds(loop.launch_checks, {"hidden": 16, "tokens": 3, "heads": 2})
    assert not holds(loop.launch_checks, {"hidden": 15, "tokens": 3, "heads": 2})


def test_two_writes_closer_than_a_row_are_refused_at_every_launch_that_runs_iterations(check_source) -> None:
    # out[at + 2] of i = 0 is out[at] of i = 2: no sizes make the pair of writes distinct, and the host's
    # checks say so before any launch (a RaceError), though the sizes keep them from being decided here
    source = """
#[kernel]
pub fn overlapping(out: &mut [f64], hidden: usize, tokens: usize, heads: usize) {
    for t in 0..tokens {
        for h in 0..heads {
            for i in 0..4 {
                let at = t * hidden + h * 8 + i;
                out[at] = 1.0;
                out[at + 2] = 2.0;
            }
        }
    }
}
"""
    [loop] = check_source(source).checked.kernels[0].loops
    for values in ({"hidden": 16, "tokens": 1, "heads": 1}, {"hidden": 16, "tokens": 3, "heads": 2},
                   {"hidden": 1000, "tokens": 2, "heads": 100}):
        assert not holds(loop.launch_checks, values), values


def test_write_through_an_index_list_is_checked_injective_at_launch(check_source) -> None:
    source = """
#[kernel]
pub fn scatter(a: &mut [f64], idx: &[usize], b: &[f64]) {
    for i in 0..b.len() {
        a[idx[i]] = b[i];
    }
}
"""
    [loop] = check_source(source).checked.kernels[0].loops
    assert loop.launch_checks == ()
    [check] = loop.index_lists
    assert (check.list_param.name, check.target.name, check.scale) == ("idx", "a", 1)
    assert (check.span.line, check.span.col) == locate(source, "a[idx[i]] = b[i]")



def test_a_slice_written_twice_through_one_list_value_is_verified_once(check_source) -> None:
    # both writes hit the element the iteration owns, so one distinctness verification covers them
    source = """
#[kernel]
pub fn twice(a: &mut [f64], idx: &[usize], b: &[f64]) {
    for i in 0..b.len() {
        let k = idx[i];
        a[k] = b[i];
        a[k] = a[k] * 2.0;
    }
}
"""
    [loop] = check_source(source).checked.kernels[0].loops
    [check] = loop.index_lists
    assert (check.list_param.name, check.target.name) == ("idx", "a")
    assert (check.span.line, check.span.col) == locate(source, "a[k] = b[i]")


# ---------------------------------------------------------------- reductions

REDUCTIONS = {
    "+": ("f64", "0.0", "s += a[i];"),
    "*": ("f64", "1.0", "s *= a[i];"),
    "min": ("f64", "f64::INFINITY", "s = s.min(a[i]);"),
    "max": ("f64", "f64::NEG_INFINITY", "s = s.max(a[i]);"),
    "&": ("u32", "!0", "s &= a[i];"),
    "|": ("u32", "0", "s |= a[i];"),
    "^": ("u64", "0", "s ^= a[i];"),
}


def _scalar_reduction(op: str) -> str:
    ty, init, update = REDUCTIONS[op]
    return f"""
#[kernel]
pub fn reduce(a: &[{ty}]) -> {ty} {{
    let mut s: {ty} = {init};
    for i in 0..a.len() {{
        {update}
    }}
    s
}}
"""


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reduction_returned_as_a_scalar(op: str, check_source) -> None:
    plan = check_source(_scalar_reduction(op)).checked.kernels[0]
    assert [(r.binding.name, r.op) for r in plan.loops[0].reductions] == [("s", op)]


def test_reductions_of_every_operation_returned_as_a_tuple() -> None:
    plan = next(k for k in pipeline.check(CASES / "semantics.rs").checked.kernels if k.name == "reduce_i32")
    assert [(r.binding.name, r.op) for r in plan.loops[0].reductions] == [
        ("sum", "+"), ("product", "*"), ("lowest", "min"), ("highest", "max"), ("all", "&"), ("any", "|"),
        ("parity", "^")]


LOCATION_REDUCTION = """
#[kernel]
pub fn extremes(a: &[f32]) -> (f32, usize, f32, usize) {
    let mut lowest = f32::INFINITY;
    let mut at_lowest = 0;
    let mut highest = f32::NEG_INFINITY;
    let mut at_highest = 0;
    for i in 0..a.len() {
        if lowest > a[i] {
            lowest = a[i];
            at_lowest = i;
        }
        if a[i] >= highest {
            at_highest = i;
            highest = a[i];
        }
    }
    (lowest, at_lowest, highest, at_highest)
}
"""


def test_location_reductions_in_either_statement_order(check_source) -> None:
    # `lowest > a[i]` is `a[i] < lowest`: strict, so ties keep the first position; `>=` keeps the last.
    plan = check_source(LOCATION_REDUCTION).checked.kernels[0]
    found = {(r.binding.name, r.op, r.location.name, r.first) for r in plan.loops[0].reductions}
    assert found == {("lowest", "minloc", "at_lowest", True), ("highest", "maxloc", "at_highest", False)}


def test_race_in_a_generic_kernel_is_reported_once_for_all_its_instantiations(check_source) -> None:
    source = """
#[kernel(types(f32, f64, i64))]
pub fn shift<T: Copy>(a: &mut [T]) {
    for i in 0..a.len() - 1 {
        a[i] = a[i + 1];
    }
}
"""
    with pytest.raises(CompileFailed) as failure:
        check_source(source)
    assert [(d.code, d.span.line, d.span.col) for d in failure.value.diagnostics] == [
        ("RG0103", *locate(source, "a[i + 1]"))]


# ---------------------------------------------------------------- the cases are Rust


def test_every_case_is_valid_rust(tmp_path) -> None:
    """rustc accepts every kernel above, so each rejection is rs2gpu's race proof, not a broken source."""
    sources = {f"racy_{case.id}": case.source for case in RACY}
    sources |= {f"safe_{name}": text for name, text in SAFE.items()}
    sources |= {f"checked_{name}": case[0] for name, case in LAUNCH_CHECKED.items()}
    sources |= {f"reduce_{i}": _scalar_reduction(op) for i, op in enumerate(sorted(REDUCTIONS))}
    sources["reduce_location"] = LOCATION_REDUCTION
    crate = "\n".join(f"pub mod {name} {{\n{text.replace('#[kernel]', '')}\n}}" for name, text in sources.items())
    (tmp_path / "lib.rs").write_text(crate)
    rustc = subprocess.run(["rustc", "--edition", "2021", "--crate-type", "lib", "--cap-lints", "allow",
                            "--out-dir", str(tmp_path), str(tmp_path / "lib.rs")], capture_output=True, text=True)
    assert rustc.returncode == 0, rustc.stderr
